// The answer of the admin listener's GET /report as `kumo report` reads it: per table and
// per resource (the table, each GSI) the limits, the window's consumption and throttles,
// the partitions, the split log, the minutes of history and the top keys. The shape is the
// one docs/capacity.md gives; tests/e2e/data/report.json is an example. As read here:
// - `GET /report?minutes=N` asks for the last N minutes; without it, all history kept.
// - Units are capacity units; times epoch seconds of the engine clock; `window.seconds`
//   the span averages are taken over.
// - `partition_limits: {"read":3000,"write":1000}`, the partition ceilings, may be absent.
// - A table's `size_bytes` and a partition's `bytes` count 100 bytes per item or entry, as
//   TableSizeBytes does; `bytes` is null until counted.
// - The table resource's `write_events` counts base writes; a GSI's `index_write_events`
//   its index writes (a key change is two), either null where it does not apply.
// - `end_token` is the last token a partition holds (inclusive); `hot_key` is null or
//   {"key": <DynamoDB JSON>, "dir": "read"|"write", "share": 0..1}; `read_per_second` and
//   `write_per_second` are the last 60 seconds, oldest first.
// - A history minute's `partitions` maps an id to [read units, write units] and,
//   optionally, a third number: that minute's throttle events in the partition.
// - Top keys: {"key", "partition", "units" (accessed) or "events" (throttled), "estimate"},
//   under "accessed" and "throttled" (items) and, for a resource with a sort key,
//   "accessed_partition_keys" and "throttled_partition_keys".
// Members that are missing or null read as absent (zero, empty); a member of the wrong
// type is an error.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kumo::cli {

// A /report body that is not the expected JSON.
class ReportError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Counts by DynamoDB's reason name ("IndexWriteKeyRangeThroughputExceeded"), in the JSON's
// order.
using ReasonCounts = std::vector<std::pair<std::string, double>>;
double total(const ReasonCounts& counts);

// One direction (read or write) of a table or GSI. Units are capacity units.
struct DirectionReport {
  double rate = 0;      // the units per second it may serve now
  std::string binding;  // what sets the rate: Provisioned, KeyRange, MaxOnDemand, Account
  std::optional<double> provisioned, max_on_demand;
  double warm = 0, peak = 0, level = 0;
  double consumed = 0;     // units in the window
  double peak_second = 0;  // the window's busiest second
};

// A partition key that carries most of a partition's traffic.
struct HotKey {
  std::string key;  // rendered: status="PENDING"
  std::string dir;  // "read" or "write"
  double share = 0;
};

struct PartitionReport {
  std::uint32_t id = 0;
  std::string first_token, end_token;  // 16 hex digits; the end is the last token held
  std::optional<double> bytes;         // null until the start-up walk has counted them
  std::string status;                  // ok, hot-key, unsplittable, split-limit
  std::optional<HotKey> hot_key;
  std::vector<double> read_per_second, write_per_second;  // the last 60 seconds, oldest first
  ReasonCounts throttle_events;
};

struct SplitReport {
  double time = 0;
  std::uint32_t parent = 0, low = 0, high = 0;
  std::string cause, at;  // at: the high child's first token
};

struct PartitionMinute {
  std::uint32_t id = 0;
  double read = 0, write = 0, throttles = 0;
};

struct MinuteReport {
  double minute = 0;  // epoch seconds of its start
  double read = 0, write = 0, peak_read_second = 0, peak_write_second = 0;
  double read_limit = 0, write_limit = 0;
  ReasonCounts throttle_events, would_throttle_seconds;
  std::vector<PartitionMinute> partitions;
};

struct TopKey {
  std::string key;  // rendered
  std::uint32_t partition = 0;
  double value = 0;  // units (accessed) or events (throttled)
  bool estimate = false;
};

struct ResourceReport {
  std::optional<std::string> index;  // nullopt: the table itself
  DirectionReport read, write;
  // Base writes (the table) and index writes (a GSI) in the window.
  std::optional<double> write_events, index_write_events;
  ReasonCounts throttle_events, would_throttle_seconds;
  std::vector<PartitionReport> partitions;  // in token order
  std::vector<SplitReport> splits;          // oldest first
  std::vector<MinuteReport> history;        // oldest first
  std::vector<TopKey> accessed, throttled;  // items, hottest first
  // With a sort key: the same by partition key, each the sum of its items (else empty).
  std::vector<TopKey> accessed_partition_keys, throttled_partition_keys;
  std::string name() const { return index ? *index : "table"; }
};

struct TableReport {
  std::string name, billing_mode;
  double item_count = 0;
  std::optional<double> size_bytes;       // counts 100 bytes per item, as TableSizeBytes does
  std::vector<ResourceReport> resources;  // the table first, then its GSIs
  bool provisioned() const { return billing_mode == "PROVISIONED"; }
};

struct Report {
  std::string kumo_version, capacity_mode, clock_mode;
  double now = 0, window_start = 0, window_seconds = 0;
  // A partition's ceilings (units per second); DynamoDB's 3,000 and 1,000 when absent.
  double partition_read_units = 3000, partition_write_units = 1000;
  std::vector<TableReport> tables;
  const TableReport* find(std::string_view name) const;
};

// Reads a /report body; throws ReportError when it is not one.
Report parse_report(std::string_view json);

}  // namespace kumo::cli
