#include "capacity/limits.h"

#include <algorithm>

namespace kumo::capacity {

ResourceLimit resource_limit(const CapacityOptions& options, Dir dir, const ResourceSettings& s) {
  ResourceLimit limit;
  if (!s.on_demand) {
    // Provisioned: the RCU or WCU, with up to --burst-seconds of unused capacity kept; a new
    // bucket holds one second's worth.
    limit.rate = static_cast<double>(std::max<std::int64_t>(0, s.provisioned));
    limit.binding = Limit::kProvisioned;
    limit.capacity_seconds = std::max(1.0, options.burst_seconds);
    limit.start_level = static_cast<Milli>(limit.rate * 1000);
    limit.warm = std::max(s.warm, s.provisioned);
    return limit;
  }
  // On-demand: the allowance is max(warm, 2 x previous peak), the warm throughput at least
  // the initial on-demand throughput; the maximum and the per-table quota cap it. The binding
  // term names the refusal; ties go to the maximum, then the quota.
  const bool read = dir == Dir::kRead;
  limit.warm =
      std::max(s.warm, read ? options.on_demand_initial_read : options.on_demand_initial_write);
  limit.allowance = std::max(limit.warm, 2 * s.peak);
  const std::int64_t quota = read ? options.table_quota_read : options.table_quota_write;
  std::int64_t rate = limit.allowance;
  limit.binding = Limit::kKeyRange;
  if (quota <= rate) {
    rate = quota;
    limit.binding = Limit::kAccount;
  }
  if (s.max && *s.max > 0 && *s.max <= rate) {
    rate = *s.max;
    limit.binding = Limit::kMaxOnDemand;
  }
  limit.rate = static_cast<double>(std::max<std::int64_t>(0, rate));
  limit.capacity_seconds = 1;
  limit.start_level = static_cast<Milli>(limit.rate * 1000);
  return limit;
}

std::string_view limit_name(Limit limit) {
  switch (limit) {
    case Limit::kProvisioned:
      return "Provisioned";
    case Limit::kKeyRange:
      return "KeyRange";
    case Limit::kAccount:
      return "AccountLimit";
    case Limit::kMaxOnDemand:
      return "MaxOnDemand";
  }
  return "Provisioned";
}

}  // namespace kumo::capacity
