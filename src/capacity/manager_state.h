// The manager's own state, shared by its source files.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "capacity/key_log.h"
#include "capacity/manager.h"
#include "capacity/meter_state.h"
#include "capacity/tally.h"

namespace kumo::capacity {

struct CapacityManager::State {
  mutable std::mutex mu;
  std::map<std::uint64_t, std::shared_ptr<TableMeters>> tables;  // attached, by serial
  std::uint64_t next_serial = 1;
  KeyLog keys;
  std::vector<SplitPlan> plans;
  std::vector<PeakRaise> raises;
  std::optional<std::int64_t> first_second, last_second;  // seconds ticked
  tally::Slot user_errors = tally::allocate(1);           // requests naming no table
  std::function<std::optional<std::int64_t>(std::uint32_t)> item_count;

  // The attached table named `name` (the latest attached), or null.
  TableMeters* find_table(std::string_view name) const {
    for (auto it = tables.rbegin(); it != tables.rend(); ++it) {
      if (it->second->name == name) return it->second.get();
    }
    return nullptr;
  }
};

// The resource of `meters` with `index_id` (0: the table), GSIs deleted since included.
ResourceMeter* any_resource(const TableMeters& meters, std::uint32_t index_id);
// The table's resource and its current GSIs, in the definition's order.
std::vector<ResourceMeter*> live_resources(const TableMeters& meters);

}  // namespace kumo::capacity
