#include "capacity/manager.h"

namespace kumo::capacity {

class ResourceMeter {};
class TableMeters {
 public:
  ResourceMeter table;
};

CapacityManager::CapacityManager(CapacityOptions options, const Clock& clock)
    : options_(std::move(options)), clock_(clock) {}
CapacityManager::~CapacityManager() = default;

std::shared_ptr<TableMeters> CapacityManager::attach(const TableDefinition&) {
  return std::make_shared<TableMeters>();
}
void CapacityManager::configure(TableMeters&, const TableDefinition&) {}
void CapacityManager::detach(TableMeters&) {}
ResourceMeter* CapacityManager::resource(TableMeters& meters, std::uint32_t index_id) {
  return index_id == 0 ? &meters.table : nullptr;
}
void CapacityManager::admit(const Access&, Operation, bool) {}
void CapacityManager::charge(const Access&, Milli, Operation, bool) {}
void CapacityManager::charge_page(ResourceMeter&, Dir, std::span<const TokenBytes>, Milli,
                                  Operation) {}
void CapacityManager::add_bytes(ResourceMeter&, std::uint64_t, std::int64_t) {}
void CapacityManager::record_request(TableMeters*, const RequestOutcome&) {}
void CapacityManager::tick(std::int64_t) {}
std::vector<SplitPlan> CapacityManager::take_split_plans() {
  return {};
}
std::vector<PeakRaise> CapacityManager::take_peak_raises() {
  return {};
}

}  // namespace kumo::capacity
