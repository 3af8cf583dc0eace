// A month's cost of a table and its GSIs at the window's rate, from DynamoDB's list prices
// (prices.h): what `kumo report` prints as an estimate.
#pragma once

#include <optional>

#include "cli/report_model.h"

namespace kumo::cli {

struct CapacityUnits {
  double read = 0, write = 0;
};

struct CostEstimate {
  // On-demand: the window's average units per second, table and GSIs, for a month.
  double reads = 0, writes = 0;
  // Storage: table and index bytes (100 bytes per item or entry included) per GB-month.
  double storage = 0;
  // A provisioned table: its RCU and WCU and its GSIs' for a month.
  std::optional<CapacityUnits> provisioned;
  double provisioned_cost = 0;
  // For every table: the capacity that carries the window's busiest second at 70 %
  // utilisation, per table and GSI, rounded up; and its month.
  CapacityUnits peak;
  double peak_cost = 0;

  double on_demand() const { return reads + writes + storage; }
};

// The estimate for `table` over a window of `window_seconds`.
CostEstimate estimate_cost(const TableReport& table, double window_seconds);

}  // namespace kumo::cli
