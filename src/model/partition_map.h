// Partitions as DynamoDB has them: every table and every global secondary index is split
// into partitions, each serving at most 3,000 read and 1,000 write units per second and
// holding about 10 GB. A partition here is a range of the 64-bit tokens items are stored
// by (the hash of the encoded partition key), so a partition is one contiguous range of
// storage and all items of one partition key fall into the same one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kumo {

enum class SplitCause : std::uint8_t { kInitial, kThroughput, kSize, kHeat };
std::string_view split_cause_name(SplitCause cause);  // "initial", "throughput", "size", "heat"
SplitCause split_cause_from(std::string_view name);

// One partition: the tokens from `first_token` up to the next range's first token (or 2^64).
// Ids are unique within a table (its GSIs included) and never reused.
struct PartitionRange {
  std::uint32_t id = 0;
  std::uint32_t parent = 0;  // 0: created with the resource
  std::uint64_t first_token = 0;
  SplitCause cause = SplitCause::kInitial;
  double created = 0;  // epoch seconds (engine clock)
  bool operator==(const PartitionRange&) const = default;
};

// The partitions of one table or GSI: ranges in ascending token order covering [0, 2^64)
// without gaps, the first starting at 0.
struct PartitionMap {
  std::vector<PartitionRange> ranges;

  // The index in `ranges` of the partition holding `token`.
  std::size_t find(std::uint64_t token) const;
  // Where partition i ends (exclusive); nullopt: at 2^64.
  std::optional<std::uint64_t> end_token(std::size_t i) const;
  std::size_t size() const { return ranges.size(); }
  bool operator==(const PartitionMap&) const = default;
};

// A record of one split, newest last in CapacitySettings::splits.
struct SplitRecord {
  double time = 0;
  std::uint32_t parent = 0, low = 0, high = 0;
  std::uint64_t token = 0;  // the high child's first token
  SplitCause cause = SplitCause::kInitial;
  bool operator==(const SplitRecord&) const = default;
};
constexpr std::size_t kSplitLog = 32;

// The limits partitions are sized by: a partition serves `read_units` and `write_units` per
// second (DynamoDB: 3,000 and 1,000).
struct PartitionLimits {
  std::int64_t read_units = 3000;
  std::int64_t write_units = 1000;
};

// How many partitions a table or GSI needs: at least one; for provisioned throughput
// ceil(RCU / 3,000 + WCU / 1,000) (DynamoDB's documented rule); and enough for its warm
// throughput, ceil(max(warm_read / 3,000, warm_write / 1,000)). An on-demand table's warm
// throughput is at least 12,000 reads and 4,000 writes, hence 4 partitions.
std::size_t partitions_needed(bool provisioned, std::int64_t rcu, std::int64_t wcu,
                              std::int64_t warm_read, std::int64_t warm_write,
                              const PartitionLimits& limits);

// `count` partitions of even token ranges: partition i starts at floor(i * 2^64 / count).
// Ids are taken from `next_id`, which advances.
PartitionMap even_partitions(std::size_t count, double now, std::uint32_t* next_id);
// Splits partition i at `token` (strictly inside its range) into two new partitions; the
// parent is retired. Returns the record of the split.
SplitRecord split_at(PartitionMap& map, std::size_t i, std::uint64_t token, SplitCause cause,
                     double now, std::uint32_t* next_id);
// Splits every partition at its token midpoint (DynamoDB doubles the partitions when
// throughput outgrows them), appending each split to `log`.
void doubled(PartitionMap& map, double now, std::uint32_t* next_id, std::vector<SplitRecord>* log);

// Contributor Insights as configured for a table or GSI; the status reported is derived
// from the state and the time since the change.
struct InsightsSettings {
  enum class State : std::uint8_t { kNever, kEnabled, kDisabled, kFailed };
  State state = State::kNever;
  std::string mode;                 // ACCESSED_AND_THROTTLED_KEYS | THROTTLED_KEYS
  double changed = 0;               // epoch seconds (engine clock) of the last change
  std::int64_t rule_suffix_ms = 0;  // the rule names' suffix: epoch ms of the enable
  // The last ENABLE found no room for its rules under the account's rule quota: its
  // FailureException is shown while FAILED and, after a DISABLE, until DISABLED.
  bool failed = false;
  bool operator==(const InsightsSettings&) const = default;
};

// What a table or GSI keeps about its capacity besides its provisioned throughput.
struct CapacitySettings {
  // OnDemandThroughput: the most request units per second an on-demand resource may serve;
  // absent: no maximum.
  std::optional<std::int64_t> max_read, max_write;
  // WarmThroughput as requested or reached (units per second).
  std::int64_t warm_read = 0, warm_write = 0;
  // On-demand: the previous peak (units per second) and when it was last raised.
  std::int64_t peak_read = 0, peak_write = 0;
  double peak_raised = 0;
  PartitionMap partitions;
  std::vector<SplitRecord> splits;  // the last kSplitLog
  InsightsSettings insights;
  bool operator==(const CapacitySettings&) const = default;
};

}  // namespace kumo
