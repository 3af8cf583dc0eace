#include "model/partition_map.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace kumo {

std::string_view split_cause_name(SplitCause cause) {
  switch (cause) {
    case SplitCause::kInitial:
      return "initial";
    case SplitCause::kThroughput:
      return "throughput";
    case SplitCause::kSize:
      return "size";
    case SplitCause::kHeat:
      return "heat";
  }
  return "initial";
}

SplitCause split_cause_from(std::string_view name) {
  if (name == "throughput") return SplitCause::kThroughput;
  if (name == "size") return SplitCause::kSize;
  if (name == "heat") return SplitCause::kHeat;
  return SplitCause::kInitial;
}

std::size_t PartitionMap::find(std::uint64_t token) const {
  // The last range whose first token is <= token.
  auto it =
      std::upper_bound(ranges.begin(), ranges.end(), token,
                       [](std::uint64_t t, const PartitionRange& r) { return t < r.first_token; });
  return it == ranges.begin() ? 0 : static_cast<std::size_t>(it - ranges.begin()) - 1;
}

std::optional<std::uint64_t> PartitionMap::end_token(std::size_t i) const {
  if (i + 1 >= ranges.size()) return std::nullopt;
  return ranges[i + 1].first_token;
}

std::size_t partitions_needed(bool provisioned, std::int64_t rcu, std::int64_t wcu,
                              std::int64_t warm_read, std::int64_t warm_write,
                              const PartitionLimits& limits) {
  const double r = static_cast<double>(std::max<std::int64_t>(1, limits.read_units));
  const double w = static_cast<double>(std::max<std::int64_t>(1, limits.write_units));
  double needed = 1;
  if (provisioned) {
    needed =
        std::max(needed, std::ceil(static_cast<double>(rcu) / r + static_cast<double>(wcu) / w));
  }
  needed = std::max(needed, std::ceil(std::max(static_cast<double>(warm_read) / r,
                                               static_cast<double>(warm_write) / w)));
  return static_cast<std::size_t>(needed);
}

PartitionMap even_partitions(std::size_t count, double now, std::uint32_t* next_id) {
  if (count == 0) count = 1;
  PartitionMap map;
  map.ranges.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    // floor(i * 2^64 / count), in 128-bit arithmetic.
    const auto first =
        static_cast<std::uint64_t>((static_cast<unsigned __int128>(i) << 64) / count);
    map.ranges.push_back({(*next_id)++, 0, first, SplitCause::kInitial, now});
  }
  return map;
}

SplitRecord split_at(PartitionMap& map, std::size_t i, std::uint64_t token, SplitCause cause,
                     double now, std::uint32_t* next_id) {
  if (i >= map.ranges.size()) throw std::out_of_range("split_at: no such partition");
  const PartitionRange parent = map.ranges[i];
  const std::optional<std::uint64_t> end = map.end_token(i);
  if (token <= parent.first_token || (end && token >= *end)) {
    throw std::invalid_argument("split_at: token outside the partition");
  }
  PartitionRange low{(*next_id)++, parent.id, parent.first_token, cause, now};
  PartitionRange high{(*next_id)++, parent.id, token, cause, now};
  map.ranges[i] = low;
  map.ranges.insert(map.ranges.begin() + static_cast<std::ptrdiff_t>(i) + 1, high);
  return {now, parent.id, low.id, high.id, token, cause};
}

void doubled(PartitionMap& map, double now, std::uint32_t* next_id, std::vector<SplitRecord>* log) {
  const std::size_t count = map.ranges.size();
  // From the last partition down, so that the indexes of those not yet split stay valid.
  for (std::size_t n = count; n-- > 0;) {
    const std::uint64_t first = map.ranges[n].first_token;
    const std::optional<std::uint64_t> end = map.end_token(n);
    const unsigned __int128 stop = end ? *end : (static_cast<unsigned __int128>(1) << 64);
    const auto mid = static_cast<std::uint64_t>(first + (stop - first) / 2);
    if (mid <= first) continue;  // a single token cannot split
    SplitRecord record = split_at(map, n, mid, SplitCause::kThroughput, now, next_id);
    if (log) {
      log->push_back(record);
      if (log->size() > kSplitLog) log->erase(log->begin());
    }
  }
}

}  // namespace kumo
