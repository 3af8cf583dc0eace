// The limits of a table's or GSI's resource bucket, per direction, as DynamoDB sets them:
// provisioned throughput with burst, or for on-demand resources the least of the
// OnDemandThroughput maximum, the per-table quota and the allowance max(warm, 2 x peak).
#pragma once

#include <cstdint>
#include <optional>

#include "capacity/meters.h"
#include "capacity/options.h"

namespace kumo::capacity {

struct ResourceLimit {
  double rate = 0;  // units per second; 0: unlimited
  Limit binding = Limit::kProvisioned;
  double capacity_seconds = 1;  // the bucket holds rate x this
  Milli start_level = 0;        // what a new bucket holds
  std::int64_t warm = 0;        // the warm throughput in effect
  std::int64_t allowance = 0;   // on-demand: max(warm, 2 x peak)
};

// What one direction of a resource is configured with.
struct ResourceSettings {
  bool on_demand = false;
  std::int64_t provisioned = 0;  // RCU or WCU
  std::optional<std::int64_t> max;
  std::int64_t warm = 0;  // WarmThroughput as stored
  std::int64_t peak = 0;  // the previous on-demand peak
};

ResourceLimit resource_limit(const CapacityOptions& options, Dir dir, const ResourceSettings& s);

// A partition's ceiling in units per second.
inline std::int64_t partition_ceiling(const CapacityOptions& options, Dir dir) {
  return dir == Dir::kRead ? options.partition.read_units : options.partition.write_units;
}

// The resource's name of a limit in the admin's views: "Provisioned", "KeyRange",
// "AccountLimit", "MaxOnDemand".
std::string_view limit_name(Limit limit);

}  // namespace kumo::capacity
