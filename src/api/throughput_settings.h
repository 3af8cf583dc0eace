// OnDemandThroughput and WarmThroughput, the stored capacity settings of a table and of
// each global secondary index: reading them from CreateTable and UpdateTable (and their
// index members), DynamoDB's rules on their values, the per-table quota on provisioned
// throughput, and what DescribeTable reports of them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "api/attribute_json.h"
#include "api/json_reader.h"
#include "api/service.h"
#include "model/table.h"

namespace kumo::api {

// An OnDemandThroughput (MaxReadRequestUnits, MaxWriteRequestUnits) or WarmThroughput
// (ReadUnitsPerSecond, WriteUnitsPerSecond) member as the request wrote it.
struct UnitsRequest {
  std::optional<std::int64_t> read, write;
  bool empty() const { return !read && !write; }
};

// Read with their JSON types checked (SerializationException otherwise).
std::optional<UnitsRequest> read_on_demand(const JsonObject& json);
std::optional<UnitsRequest> read_warm(const JsonObject& json);

// Which resource a check is about: the table (empty name) or a global secondary index.
struct Resource {
  std::string_view index;
};

// How a request changes a resource's throughput settings.
enum class SettingsCall : std::uint8_t { kCreate, kUpdate };

// A ProvisionedThroughput value DynamoDB accepts at all, then within the per-table
// (per-index) quota: ValidationException beyond 10^12, LimitExceededException above the
// quota.
void check_provisioned_quota(std::int64_t read, std::int64_t write, Resource resource,
                             const ServiceOptions& options);

// OnDemandThroughput: each member at least 1 (−1, removing a cap, only on UpdateTable),
// only on an on-demand table, at most the per-table quota.
void check_on_demand(const UnitsRequest& request, Resource resource, SettingsCall call,
                     BillingMode mode, const ServiceOptions& options);

// WarmThroughput never below what the resource has: on creation the on-demand initial
// throughput or the provisioned units, on update the current warm throughput; at most the
// per-table quota.
void check_warm(const UnitsRequest& request, Resource resource, SettingsCall call, BillingMode mode,
                const ProvisionedThroughput& provisioned, const CapacitySettings& current,
                const ServiceOptions& options);

// The settings of a resource being created, from its requested members (already checked).
void init_capacity(CapacitySettings& settings, const std::optional<UnitsRequest>& on_demand,
                   const std::optional<UnitsRequest>& warm, BillingMode mode,
                   const ProvisionedThroughput& provisioned, const ServiceOptions& options);

// Applies an UpdateTable's members (already checked): OnDemandThroughput merged member by
// member, −1 removing a cap; WarmThroughput raised.
void update_capacity(CapacitySettings& settings, const std::optional<UnitsRequest>& on_demand,
                     const std::optional<UnitsRequest>& warm);

// A change of billing mode: warm throughput keeps what the resource reached (on demand at
// least the initial throughput); provisioned resources have no OnDemandThroughput.
// `provisioned` is the resource's throughput before the change.
void switch_capacity(CapacitySettings& settings, BillingMode to,
                     const ProvisionedThroughput& provisioned, const ServiceOptions& options);

// New provisioned units raise the warm throughput to them (it never decreases).
void raise_warm_to(CapacitySettings& settings, const ProvisionedThroughput& provisioned);

// The warm throughput a resource reports, {read, write}: on demand the larger of its warm
// throughput, the initial throughput and twice its previous peak; provisioned the larger of
// its warm throughput, its units and twice a previous on-demand peak.
std::pair<std::int64_t, std::int64_t> reported_warm(const CapacitySettings& settings,
                                                    BillingMode mode,
                                                    const ProvisionedThroughput& provisioned,
                                                    const ServiceOptions& options);

// Writes "OnDemandThroughput" when a maximum is set.
void write_on_demand(JsonWriter& w, const CapacitySettings& settings);
// Writes "WarmThroughput": {ReadUnitsPerSecond, WriteUnitsPerSecond, Status}.
void write_warm(JsonWriter& w, std::pair<std::int64_t, std::int64_t> units,
                std::string_view status);

}  // namespace kumo::api
