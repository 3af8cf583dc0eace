#include "cli/report_format.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <ctime>

#include "cli/prices.h"
#include "cli/report_cost.h"

namespace kumo::cli {

std::string grouped(double value) {
  if (!(std::abs(value) < 1e18)) return fmt::format("{:.3g}", value);
  const long long whole = std::llround(value);
  std::string digits = std::to_string(whole < 0 ? -whole : whole);
  for (int i = static_cast<int>(digits.size()) - 3; i > 0; i -= 3) digits.insert(i, ",");
  return whole < 0 ? "-" + digits : digits;
}

std::string units(double value) {
  if (std::abs(value) < 10 && value != std::floor(value)) return fmt::format("{:.1f}", value);
  return grouped(value);
}

std::string byte_size(std::optional<double> bytes) {
  if (!bytes) return "-";
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = *bytes;
  int unit = 0;
  while (value >= 1024 && unit < 4) {
    value /= 1024;
    ++unit;
  }
  if (unit == 0) return fmt::format("{} B", grouped(value));
  return value >= 100 ? fmt::format("{} {}", grouped(value), kUnits[unit])
                      : fmt::format("{:.1f} {}", value, kUnits[unit]);
}

std::string money(double dollars) {
  if (dollars >= 1000) return "$" + grouped(dollars);
  return fmt::format("${:.2f}", dollars);
}

std::string utc_time(double epoch_seconds) {
  if (!(std::abs(epoch_seconds) < 1e11)) return "(time out of range)";
  const std::time_t t = static_cast<std::time_t>(std::floor(epoch_seconds));
  std::tm tm{};
  gmtime_r(&t, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S", &tm);
  return text;
}

std::string reason_list(const ReasonCounts& counts, const char* unit) {
  std::string text;
  for (const auto& [reason, count] : counts) {
    if (count == 0) continue;
    if (!text.empty()) text += ", ";
    text += fmt::format("{} {}{}", reason, grouped(count), unit);
  }
  return text.empty() ? "none" : text;
}

const DirectionReport& direction(const ResourceReport& r, Direction d) {
  return d == Direction::kRead ? r.read : r.write;
}

double partition_born(const Report& report, const ResourceReport& r, std::uint32_t id) {
  for (const SplitReport& s : r.splits)
    if ((s.low == id || s.high == id) && s.time > report.window_start) return s.time;
  return report.window_start;
}

double partition_average(const Report& report, const ResourceReport& r, std::uint32_t id,
                         Direction d) {
  double sum = 0;
  for (const MinuteReport& m : r.history)
    for (const PartitionMinute& p : m.partitions)
      if (p.id == id) sum += d == Direction::kRead ? p.read : p.write;
  const double lived = report.window_start + report.window_seconds - partition_born(report, r, id);
  return lived > 0 ? sum / lived : 0;
}

double partition_peak(const PartitionReport& p, Direction d) {
  const auto& seconds = d == Direction::kRead ? p.read_per_second : p.write_per_second;
  return seconds.empty() ? 0 : *std::max_element(seconds.begin(), seconds.end());
}

std::vector<std::string> partition_row(const Report& report, const ResourceReport& r,
                                       const PartitionReport& p) {
  return {std::to_string(p.id),
          p.first_token + "-" + p.end_token,
          byte_size(p.bytes),
          units(partition_average(report, r, p.id, Direction::kRead)),
          units(partition_peak(p, Direction::kRead)),
          units(partition_average(report, r, p.id, Direction::kWrite)),
          units(partition_peak(p, Direction::kWrite)),
          p.status,
          reason_list(p.throttle_events)};
}

std::string hot_key_text(const PartitionReport& p) {
  if (!p.hot_key) return "";
  // A partition split on its traffic would leave the key's load whole in one child.
  const char* outcome = p.status == "split-limit" ? "at the partition limit" : "cannot split";
  return fmt::format("{}: {:.0f}% of this partition's {}s, {}", p.hot_key->key,
                     p.hot_key->share * 100, p.hot_key->dir, outcome);
}

std::optional<Amplification> amplification(const TableReport& table, const ResourceReport& gsi) {
  const ResourceReport& base = table.resources.front();
  const double base_writes = base.write_events.value_or(0);
  if (base_writes <= 0 || base.write.consumed <= 0) return std::nullopt;
  const double index_writes = gsi.index_write_events.value_or(gsi.write_events.value_or(0));
  return Amplification{index_writes / base_writes, gsi.write.consumed / base.write.consumed};
}

std::string limit_text(const DirectionReport& d) {
  if (d.binding == "Provisioned") return "provisioned " + grouped(d.provisioned.value_or(d.rate));
  if (d.binding == "MaxOnDemand") return "maximum " + grouped(d.rate);
  if (d.binding == "Account") return "account quota " + grouped(d.rate);
  return "allowance " + grouped(d.rate);
}

namespace {

std::string direction_summary(const char* name, const DirectionReport& d, double window_seconds) {
  const double average = window_seconds > 0 ? d.consumed / window_seconds : 0;
  return fmt::format("{} {}/s avg, {} peak ({})", name, units(average), units(d.peak_second),
                     limit_text(d));
}

}  // namespace

std::string resource_summary(const Report& report, const TableReport& table,
                             const ResourceReport& r) {
  std::vector<std::string> parts;
  // Reads and writes that happened or are provisioned.
  if (r.read.consumed > 0 || r.read.provisioned)
    parts.push_back(direction_summary("read", r.read, report.window_seconds));
  if (r.write.consumed > 0 || r.write.provisioned)
    parts.push_back(direction_summary("write", r.write, report.window_seconds));
  if (parts.empty()) parts.emplace_back("idle");
  if (r.index) {
    const auto amp = amplification(table, r);
    parts.push_back(
        amp ? fmt::format("amplification {:.2f} writes, {:.2f} units", amp->writes, amp->units)
            : std::string("amplification -"));
  }
  parts.push_back("throttles: " + reason_list(r.throttle_events));
  if (total(r.would_throttle_seconds) > 0)
    parts.push_back("would throttle: " + reason_list(r.would_throttle_seconds, " s"));
  return fmt::format("{}", fmt::join(parts, "  "));
}

std::string cost_heading() {
  return fmt::format("cost/month ({}, {}, prices of {}; estimate)", prices::kRegion,
                     prices::kTableClass, prices::kDate);
}

std::vector<CostLine> cost_lines(const Report& report, const TableReport& table) {
  const CostEstimate cost = estimate_cost(table, report.window_seconds);
  const std::string storage = "storage " + money(cost.storage);
  std::vector<CostLine> lines;
  lines.push_back(
      {"on-demand", money(cost.on_demand()),
       fmt::format("writes {}, reads {}, {}", money(cost.writes), money(cost.reads), storage)});
  if (cost.provisioned)
    lines.push_back(
        {"provisioned", money(cost.provisioned_cost),
         fmt::format("as provisioned: {} WCU, {} RCU; {}", grouped(cost.provisioned->write),
                     grouped(cost.provisioned->read), storage)});
  lines.push_back({"provisioned", money(cost.peak_cost),
                   fmt::format("for the peak second at {:.0f} % utilisation: {} WCU, {} RCU; {}",
                               prices::kTargetUtilisation * 100, grouped(cost.peak.write),
                               grouped(cost.peak.read), storage)});
  return lines;
}

}  // namespace kumo::cli
