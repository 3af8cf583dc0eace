#include "cli/report_cost.h"

#include <cmath>

#include "cli/prices.h"

namespace kumo::cli {
namespace {

double month_of_units(double units, double window_seconds, double unit_price) {
  if (window_seconds <= 0) return 0;
  return units / window_seconds * prices::kSecondsPerMonth * unit_price;
}

double month_of_capacity(const CapacityUnits& units) {
  return (units.read * prices::kRcuHour + units.write * prices::kWcuHour) * prices::kHoursPerMonth;
}

// Provisioned capacity sized so that `peak_second` is the target utilisation of it.
double sized_for(double peak_second) {
  // The division is rounded to a millionth first, so that an exact multiple of 70 % of a
  // unit does not round up for the float error.
  return std::ceil(std::round(peak_second / prices::kTargetUtilisation * 1e6) / 1e6);
}

// A GSI's bytes are its partitions' (the table's are its size); null sizes count nothing.
double resource_bytes(const TableReport& table, const ResourceReport& resource) {
  if (!resource.index) return table.size_bytes.value_or(0);
  double bytes = 0;
  for (const PartitionReport& p : resource.partitions) bytes += p.bytes.value_or(0);
  return bytes;
}

}  // namespace

CostEstimate estimate_cost(const TableReport& table, double window_seconds) {
  CostEstimate cost;
  CapacityUnits provisioned;
  double bytes = 0;
  for (const ResourceReport& r : table.resources) {
    cost.reads += month_of_units(r.read.consumed, window_seconds, prices::kReadRequestUnit);
    cost.writes += month_of_units(r.write.consumed, window_seconds, prices::kWriteRequestUnit);
    bytes += resource_bytes(table, r);
    provisioned.read += r.read.provisioned.value_or(0);
    provisioned.write += r.write.provisioned.value_or(0);
    cost.peak.read += sized_for(r.read.peak_second);
    cost.peak.write += sized_for(r.write.peak_second);
  }
  cost.storage = bytes / prices::kGb * prices::kGbMonth;
  if (table.provisioned()) {
    cost.provisioned = provisioned;
    cost.provisioned_cost = month_of_capacity(provisioned) + cost.storage;
  }
  cost.peak_cost = month_of_capacity(cost.peak) + cost.storage;
  return cost;
}

}  // namespace kumo::cli
