// Per-key counts kept by the tick: units read and written and throttle events per encoded
// key, in a Space-Saving summary: exact while it holds fewer distinct keys than its
// capacity; beyond, a new key replaces the one with the least weight and inherits that
// weight as its possible overcount.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "capacity/meters.h"

namespace kumo::capacity {

struct KeyCounts {
  std::uint64_t token = 0;
  std::uint32_t partition = 0;  // partition id last seen
  Milli read = 0, write = 0;    // units of accesses logged one by one
  Milli sampled = 0;            // units of sampled accesses, scaled by the sampling rate
  std::int64_t throttled = 0;   // throttle events
  bool estimate = false;        // sampled units, or an evicted key's share
  Milli units() const { return read + write + sampled; }
};

// An encoded key as summaries store it: the partition key's size (2 bytes), the partition
// key, the sort key.
std::string summary_key(std::string_view partition_key, std::string_view sort_key);
std::string_view summary_partition_key(std::string_view key);
std::string_view summary_sort_key(std::string_view key);

class KeySummary {
 public:
  // Weights entries by units (accessed) or by throttle events (throttled).
  enum class By : std::uint8_t { kUnits, kThrottles, kInsightsUnits };
  explicit KeySummary(std::size_t capacity = 256, By by = By::kUnits)
      : capacity_(capacity), by_(by) {}

  void add(std::string_view key, const KeyCounts& counts);
  void merge(const KeySummary& other);
  bool empty() const { return entries_.empty(); }
  void clear() { entries_.clear(); }
  const std::unordered_map<std::string, KeyCounts>& entries() const { return entries_; }
  // The `n` heaviest, heaviest first (ties by key).
  std::vector<std::pair<std::string, KeyCounts>> top(std::size_t n) const;
  std::int64_t weight(const KeyCounts& c) const;

 private:
  std::size_t capacity_;
  By by_;
  std::unordered_map<std::string, KeyCounts> entries_;
};

}  // namespace kumo::capacity
