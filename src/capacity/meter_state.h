// What the manager keeps per table, GSI and partition. The request path reads only atomics
// (buckets, the live map, flags) and writes only tallies and buckets; everything else is
// the tick's and the admin's, under the manager's lock.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "capacity/bucket.h"
#include "capacity/key_summary.h"
#include "capacity/limits.h"
#include "capacity/manager.h"
#include "capacity/meters.h"
#include "capacity/tally.h"
#include "model/partition_map.h"
#include "model/table.h"

namespace kumo::capacity {

constexpr int kLimitCount = 4;
constexpr int kDirs = 2;
inline int dir_index(Dir d) {
  return d == Dir::kWrite ? 1 : 0;
}
inline Dir dir_at(int i) {
  return i == 1 ? Dir::kWrite : Dir::kRead;
}

// a / b rounded down.
inline std::int64_t floor_div(std::int64_t a, std::int64_t b) {
  return a / b - ((a % b != 0) && ((a < 0) != (b < 0)) ? 1 : 0);
}
// The start of the minute holding `second` (epoch seconds).
inline std::int64_t minute_start(std::int64_t second) {
  return floor_div(second, 60) * 60;
}

// Throttle or would-be-throttle counts by reason (reason_index).
using ReasonCounts = std::array<std::int64_t, kReasonCount>;

// The seconds of one partition's keys: units and throttles per key.
struct SecondKeys {
  std::int64_t second = 0;
  KeySummary accessed{256, KeySummary::By::kUnits};
  KeySummary throttled{256, KeySummary::By::kThrottles};
};

enum class PartitionStatus : std::uint8_t { kOk, kHotKey, kUnsplittable, kSplitLimit };
std::string_view partition_status_name(PartitionStatus status);

class PartitionMeter {
 public:
  // Tally slots: per direction consumed units and throttle events by limit, then bytes.
  static constexpr int kPerDir = 1 + kLimitCount;
  static constexpr int kSlots = kDirs * kPerDir + 1;
  static tally::Slot consumed(tally::Slot base, Dir d) { return base + dir_index(d) * kPerDir; }
  static tally::Slot throttles(tally::Slot base, Dir d, Limit l) {
    return base + dir_index(d) * kPerDir + 1 + static_cast<int>(l);
  }
  static tally::Slot bytes(tally::Slot base) { return base + kDirs * kPerDir; }

  PartitionRange range;
  std::optional<std::uint64_t> end;
  tally::Slot slots = 0;
  std::array<Bucket, kDirs> buckets;
  // The partition used half its ceiling or more in the last second: every key is logged.
  std::atomic<bool> warm{false};

  // The tick's.
  std::array<std::int64_t, kSlots> last{};  // tallies at the last tick
  std::array<std::deque<Milli>, kDirs> seconds;
  std::array<int, kDirs> hot_seconds{};
  std::int64_t cool_seconds = 0;
  PartitionStatus status = PartitionStatus::kOk;
  std::string hot_key;        // summary_key of the key carrying most of the traffic
  Dir hot_dir = Dir::kWrite;  // of reads or of writes
  double hot_share = 0;       // its share of the partition's traffic in the window
  std::int64_t planned = -1;  // the second a split was planned; -1: none
  std::int64_t would_throttle_seconds = 0;
  KeySummary pending_accessed{256, KeySummary::By::kUnits};
  KeySummary pending_throttled{256, KeySummary::By::kThrottles};
  std::deque<SecondKeys> keys;  // the seconds with keys, oldest first
};

// The live partition map with a meter per partition, replaced whole by a split.
struct LiveMap {
  PartitionMap map;
  std::vector<PartitionMeter*> parts;
  // The partitions' first tokens, in order: what the request path searches (a few cache
  // lines, where the ranges themselves are much larger).
  std::vector<std::uint64_t> firsts;
  PartitionMeter* find(std::uint64_t token) const {
    if (parts.size() <= 1) return parts.empty() ? nullptr : parts[0];
    // The last partition whose first token is <= token.
    const auto it = std::upper_bound(firsts.begin() + 1, firsts.end(), token);
    return parts[static_cast<std::size_t>(it - firsts.begin()) - 1];
  }
};

// One minute of a resource, for the history.
struct MinuteStats {
  std::int64_t minute = -1;  // epoch seconds of its start
  std::array<Milli, kDirs> units{}, peak_second{};
  std::int64_t write_events = 0;
  std::array<double, kDirs> limit{};
  ReasonCounts throttles{}, would_throttle{};
  // By partition id: read units, write units, throttle events.
  std::map<std::uint32_t, std::array<std::int64_t, 3>> partitions;
};

// Contributor Insights' lists of one minute: partition keys and partition + sort keys, most
// accessed by 3 x write + read units and most throttled.
struct InsightsMinute {
  std::int64_t minute = 0;
  std::vector<std::pair<std::string, std::int64_t>> pkc, pkt, skc, skt;  // value: milli or count
};
struct InsightsAccum {
  std::int64_t minute = -1;
  bool active = false;  // insights were on during the minute
  KeySummary pkc{1024, KeySummary::By::kInsightsUnits}, pkt{1024, KeySummary::By::kThrottles};
  KeySummary skc{1024, KeySummary::By::kInsightsUnits}, skt{1024, KeySummary::By::kThrottles};
};

class ResourceMeter {
 public:
  // Tally slots per direction: consumed units, write events, throttle events by limit.
  static constexpr int kPerDir = 2 + kLimitCount;
  static constexpr int kSlots = kDirs * kPerDir;
  tally::Slot consumed(Dir d) const { return slots + dir_index(d) * kPerDir; }
  tally::Slot events(Dir d) const { return slots + dir_index(d) * kPerDir + 1; }
  tally::Slot throttles(Dir d, Limit l) const {
    return slots + dir_index(d) * kPerDir + 2 + static_cast<int>(l);
  }

  struct Direction {
    Bucket bucket;
    std::atomic<Limit> binding{Limit::kProvisioned};
    ResourceSettings settings;
    ResourceLimit limit;
    // The tick's.
    std::deque<Milli> seconds;  // per-second units, newest last
    Milli would_throttle_units = 0;
  };

  TableMeters* table = nullptr;
  std::uint32_t index_id = 0;  // 0: the table
  std::string index_name;
  bool gsi = false;
  tally::Slot slots = 0;
  std::array<Direction, kDirs> dirs;
  std::atomic<const LiveMap*> live{nullptr};
  std::atomic<bool> insights_on{false};  // keys are logged for Contributor Insights

  // Under the manager's lock.
  std::vector<AttributeDefinition> hash, range;  // key components, to decode keys
  InsightsSettings insights;
  std::vector<std::unique_ptr<LiveMap>> maps;  // every map installed, the live one last
  std::vector<std::unique_ptr<PartitionMeter>> partitions;
  std::unordered_map<std::uint32_t, PartitionMeter*> by_id;
  double peak_anchor = 0;                // when the on-demand peak was last raised (or created)
  std::array<std::int64_t, 4> splits{};  // by SplitCause
  std::array<std::int64_t, kSlots> last{};
  std::int64_t observed_seconds = 0;
  ReasonCounts would_throttle{};
  MinuteStats minute;
  std::deque<MinuteStats> history;
  InsightsAccum insights_accum;
  std::deque<InsightsMinute> insights_minutes;

  bool on_demand() const { return dirs[0].settings.on_demand; }
  const LiveMap* live_map() const { return live.load(std::memory_order_acquire); }
};

class TableMeters {
 public:
  // Request counters per operation: throttled requests, successful requests, their latency
  // (ns), returned items, conditional check failures, user errors, system errors, and the
  // latency histogram's buckets.
  static constexpr int kLatencyBuckets = 13;  // the last is +Inf
  static constexpr int kPerOp = 7 + kLatencyBuckets;
  static constexpr int kOps = static_cast<int>(Operation::kCount);
  enum Counter {
    kThrottled,
    kRequests,
    kLatencyNs,
    kReturned,
    kConditional,
    kUser,
    kSystem,
    kHistogram
  };
  tally::Slot counter(Operation op, int c) const {
    return requests + static_cast<int>(op) * kPerOp + c;
  }

  std::uint64_t serial = 0;
  std::uint32_t table_id = 0;
  std::string name;
  std::atomic<bool> provisioned{true};
  tally::Slot requests = 0;
  ResourceMeter* table = nullptr;
  std::atomic<const std::vector<ResourceMeter*>*> gsis{nullptr};

  // Under the manager's lock.
  std::vector<std::unique_ptr<ResourceMeter>> resources;  // the table first, then every GSI ever
  std::vector<std::unique_ptr<std::vector<ResourceMeter*>>> gsi_lists;
  TableDefinition definition;  // as last configured, without `meters`
  bool detached = false;
};

// Latency buckets' upper bounds in seconds.
inline constexpr std::array<double, TableMeters::kLatencyBuckets - 1> kLatencyBounds = {
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5};
// The same bounds in nanoseconds, for the request path.
inline constexpr auto kLatencyBoundsNs = [] {
  std::array<std::int64_t, kLatencyBounds.size()> ns{};
  for (std::size_t i = 0; i < ns.size(); ++i) {
    ns[i] = static_cast<std::int64_t>(kLatencyBounds[i] * 1e9 + 0.5);
  }
  return ns;
}();

}  // namespace kumo::capacity
