// How Kumo meters and limits throughput: `kumo serve --capacity off|report|enforce` and the
// figures DynamoDB's limits are made of. One struct, defaults as DynamoDB has them.
#pragma once

#include <cstdint>
#include <string>

#include "model/partition_map.h"

namespace kumo::capacity {

enum class Mode : std::uint8_t {
  kOff,      // no meters: ConsumedCapacity only
  kReport,   // every unit metered and shown; nothing is ever throttled
  kEnforce,  // throttled as DynamoDB throttles
};

struct CapacityOptions {
  Mode mode = Mode::kReport;
  // Seconds of unused provisioned throughput a table or GSI keeps for bursts (DynamoDB:
  // 300); 0 keeps one second's worth.
  double burst_seconds = 300;
  // What one partition serves per second, and the size at which it splits.
  PartitionLimits partition;
  std::uint64_t partition_size_mb = 10240;
  // A partition whose consumption stays at or above this share of its ceiling for
  // split_heat_seconds splits in two (unless one partition key carries most of it).
  double split_heat_fraction = 0.8;
  double split_heat_seconds = 60;
  bool splits = true;
  std::size_t max_partitions = 4096;
  // On-demand: what a new table serves at once (DynamoDB: 12,000 reads, 4,000 writes per
  // second), how long after a peak raise the next one may come, and how long a level must
  // last to count as a peak.
  std::int64_t on_demand_initial_read = 12000;
  std::int64_t on_demand_initial_write = 4000;
  double on_demand_peak_window = 1800;
  double on_demand_sustain = 60;
  // Account quotas: per table (and per GSI), and for the account (DynamoDB's defaults).
  std::int64_t table_quota_read = 40000, table_quota_write = 40000;
  std::int64_t account_quota_read = 80000, account_quota_write = 80000;
  // Answer an account-limit throttle with RequestLimitExceeded instead of ThrottlingException.
  bool account_limit_request_limit_exceeded = false;
  // One request in key_sample is recorded for the top-keys lists; minutes of per-minute
  // history kept.
  std::uint32_t key_sample = 64;
  std::uint32_t history_minutes = 60;
  // Contributor Insights: seconds ENABLING/DISABLING last, the account's rule quota, and
  // minutes of per-minute lists kept.
  double insights_delay = 0;
  std::uint32_t insights_rule_quota = 100;
  std::uint32_t insights_minutes = 60;
  // The server's version, reported by /report.
  std::string server_version;
  // What ARNs name.
  std::string region = "us-east-1";
  std::string account_id = "000000000000";
};

}  // namespace kumo::capacity
