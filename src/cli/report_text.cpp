// The text report, one block per table.
#include <fmt/format.h>

#include <algorithm>

#include "cli/report_format.h"
#include "cli/report_render.h"

namespace kumo::cli {
namespace {

std::string resource_line(const Report& report, const TableReport& table, const ResourceReport& r) {
  return fmt::format("  {:<11} {} partitions  {}\n", r.name(), r.partitions.size(),
                     resource_summary(report, table, r));
}

std::string partition_line(const std::vector<std::string>& cells) {
  return fmt::format("    {:<5} {:<34} {:>10} {:>10} {:>6} {:>10} {:>6}  {:<12} {}\n", cells[0],
                     cells[1], cells[2], cells[3], cells[4], cells[5], cells[6], cells[7],
                     cells[8]);
}

std::string partitions_block(const Report& report, const ResourceReport& r) {
  std::string text = partition_line({std::begin(kPartitionColumns), std::end(kPartitionColumns)});
  for (const PartitionReport& p : r.partitions) {
    text += partition_line(partition_row(report, r, p));
    if (p.hot_key) text += "          hot key " + hot_key_text(p) + "\n";
  }
  return text;
}

std::string keys_block(const char* title, const std::vector<TopKey>& keys, const char* unit) {
  if (keys.empty()) return "";
  std::string text = fmt::format("    {}\n", title);
  for (std::size_t i = 0; i < std::min(keys.size(), kTopKeys); ++i) {
    const TopKey& k = keys[i];
    text += fmt::format("      {:<32} {:>12} {}{}  partition {}{}\n", k.key, grouped(k.value), unit,
                        k.value == 1 ? "" : "s", k.partition, k.estimate ? "  estimate" : "");
  }
  return text;
}

std::string splits_block(const ResourceReport& r) {
  if (r.splits.empty()) return "    splits: none\n";
  std::string text = "    splits\n";
  for (const SplitReport& s : r.splits)
    text += fmt::format("      {}  {} -> {}, {} at {}  {}\n", utc_time(s.time), s.parent, s.low,
                        s.high, s.at, s.cause);
  return text;
}

std::string cost_block(const Report& report, const TableReport& table) {
  std::string text = "  " + cost_heading() + "\n";
  for (const CostLine& line : cost_lines(report, table))
    text += fmt::format("    {:<11} {}  ({})\n", line.label, line.amount, line.detail);
  return text + "    " + kNotCounted + "\n";
}

std::string table_block(const Report& report, const TableReport& table) {
  std::string text =
      fmt::format("{}  {}  {} items  {}  window {} s ({} clock)\n", table.name, table.billing_mode,
                  grouped(table.item_count), byte_size(table.size_bytes),
                  grouped(report.window_seconds), report.clock_mode);
  for (const ResourceReport& r : table.resources) {
    text += resource_line(report, table, r);
    text += partitions_block(report, r);
    text += keys_block("hottest partition keys (units in the window)", r.accessed_partition_keys,
                       "unit");
    text += keys_block("most throttled partition keys (events in the window)",
                       r.throttled_partition_keys, "event");
    text += keys_block("hottest keys (units in the window)", r.accessed, "unit");
    text += keys_block("most throttled keys (events in the window)", r.throttled, "event");
    text += splits_block(r);
  }
  return text + cost_block(report, table);
}

}  // namespace

std::string render_text(const Report& report) {
  std::string text = fmt::format(
      "kumo {} report: capacity {}, {} clock at {} UTC; partition peaks are the busiest second "
      "of the last 60\n",
      report.kumo_version, report.capacity_mode, report.clock_mode, utc_time(report.now));
  for (const TableReport& table : report.tables) text += "\n" + table_block(report, table);
  return text;
}

}  // namespace kumo::cli
