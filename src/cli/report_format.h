// What the text and the HTML report share: numbers as they are printed, and the figures
// derived from the /report answer (partition averages and peaks, write amplification).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "cli/report_model.h"

namespace kumo::cli {

// The hottest and most throttled keys shown per resource.
inline constexpr std::size_t kTopKeys = 10;

// 1,234,567 (rounded to a whole number).
std::string grouped(double value);
// Units per second or per window: one decimal below 10 when not whole, else grouped.
std::string units(double value);
// 761.6 MiB; "-" when unknown.
std::string byte_size(std::optional<double> bytes);
// $4.91 below $1,000, else $4,862.
std::string money(double dollars);
// 2026-01-01 00:04:30 (UTC).
std::string utc_time(double epoch_seconds);
// "IndexWriteKeyRangeThroughputExceeded 17,634, ..." or "none".
std::string reason_list(const ReasonCounts& counts, const char* unit = "");

enum class Direction { kRead, kWrite };
const DirectionReport& direction(const ResourceReport& r, Direction d);

// When a partition came to be in the window: its split's time, else the window's start.
double partition_born(const Report& report, const ResourceReport& r, std::uint32_t id);
// A partition's average units per second over the part of the window it lived.
double partition_average(const Report& report, const ResourceReport& r, std::uint32_t id,
                         Direction d);
// Its busiest second of the last 60.
double partition_peak(const PartitionReport& p, Direction d);

// A partition's row: part, tokens, size, RCU/s avg, peak, WCU/s avg, peak, status,
// throttles.
inline constexpr const char* kPartitionColumns[] = {
    "part", "tokens", "size", "RCU/s avg", "peak", "WCU/s avg", "peak", "status", "throttles"};
std::vector<std::string> partition_row(const Report& report, const ResourceReport& r,
                                       const PartitionReport& p);
// `status="PENDING": 100% of this partition's writes, cannot split`; empty without a hot key.
std::string hot_key_text(const PartitionReport& p);

// A GSI's write amplification: its write events per base write and its write units per
// base write unit; nullopt when the table wrote nothing.
struct Amplification {
  double writes = 0, units = 0;
};
std::optional<Amplification> amplification(const TableReport& table, const ResourceReport& gsi);

// The limit a direction is held to, as words: "allowance 4,000", "provisioned 500",
// "maximum 100", "account quota 40,000".
std::string limit_text(const DirectionReport& d);

// A resource's figures on one line: its reads and writes (average, peak, limit), a GSI's
// amplification, its throttles by reason and would-be throttles; parts separated by two
// spaces.
std::string resource_summary(const Report& report, const TableReport& table,
                             const ResourceReport& r);

// The table's cost: a heading naming the prices' region, class and date, then one line per
// estimate ("on-demand", "$4,875", "writes $4,858, reads $16.39, storage $0.37").
struct CostLine {
  std::string label, amount, detail;
};
std::string cost_heading();
std::vector<CostLine> cost_lines(const Report& report, const TableReport& table);
inline constexpr const char* kNotCounted = "not counted: free tier, streams, backups, replication";

}  // namespace kumo::cli
