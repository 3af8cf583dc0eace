// The text report, one block per table.
#include <fmt/format.h>

#include <algorithm>

#include "cli/report_format.h"
#include "cli/report_render.h"

namespace kumo::cli {
namespace {

constexpr std::size_t kTopKeys = 10;

std::string resource_line(const Report& report, const TableReport& table, const ResourceReport& r) {
  return fmt::format("  {:<12}{} partitions  {}\n", r.name(), r.partitions.size(),
                     resource_summary(report, table, r));
}

std::string hot_key_line(const PartitionReport& p) {
  if (!p.hot_key) return "";
  const char* outcome = p.status == "split-limit" ? "at the partition limit" : "cannot split";
  return fmt::format("          hot key {}: {:.0f}% of this partition's {}s, {}\n", p.hot_key->key,
                     p.hot_key->share * 100, p.hot_key->dir, outcome);
}

std::string partitions_block(const Report& report, const ResourceReport& r) {
  std::string text = fmt::format("    {:<5} {:<34} {:>10} {:>10} {:>6} {:>10} {:>6}  {:<12} {}\n",
                                 "part", "tokens", "size", "RCU/s avg", "peak", "WCU/s avg", "peak",
                                 "status", "throttles");
  for (const PartitionReport& p : r.partitions) {
    text += fmt::format("    {:<5} {:<34} {:>10} {:>10} {:>6} {:>10} {:>6}  {:<12} {}\n", p.id,
                        p.first_token + "-" + p.end_token, byte_size(p.bytes),
                        units(partition_average(report, r, p.id, Direction::kRead)),
                        units(partition_peak(p, Direction::kRead)),
                        units(partition_average(report, r, p.id, Direction::kWrite)),
                        units(partition_peak(p, Direction::kWrite)), p.status,
                        reason_list(p.throttle_events));
    text += hot_key_line(p);
  }
  return text;
}

std::string keys_block(const char* title, const std::vector<TopKey>& keys, const char* unit) {
  if (keys.empty()) return "";
  std::string text = fmt::format("    {}\n", title);
  for (std::size_t i = 0; i < std::min(keys.size(), kTopKeys); ++i) {
    const TopKey& k = keys[i];
    text += fmt::format("      {:<32} {:>12} {}  partition {}{}\n", k.key, grouped(k.value), unit,
                        k.partition, k.estimate ? "  estimate" : "");
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
    text += keys_block("hottest keys (units in the window)", r.accessed, "units");
    text += keys_block("most throttled keys (events in the window)", r.throttled, "events");
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
