#include "api/throughput_settings.h"

#include <algorithm>
#include <tuple>

#include <fmt/format.h>

#include "api/table_requests.h"
#include "model/api_error.h"

namespace kumo::api {
namespace {

// DynamoDB's bound on a capacity value in a request.
constexpr std::int64_t kMaxCapacityValue = 1'000'000'000'000;
// OnDemandThroughput's value that removes a maximum (UpdateTable only).
constexpr std::int64_t kRemove = -1;
constexpr std::string_view kInitialThroughputPage =
    "https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/"
    "on-demand-capacity-mode.html#on-demand-capacity-mode-initial";

// The two members of a request, each with its name and the quota it is held to.
struct Member {
  std::optional<std::int64_t> value;
  std::string_view name;
  std::string_view quota_name;  // TableMaxReadCapacityUnits / TableMaxWriteCapacityUnits
  std::int64_t quota;
  std::int64_t floor;  // what a warm throughput may not go below
};

// How OnDemandThroughput texts name the resource: "table" or "index : <idx>".
std::string on_demand_target(Resource r) {
  return r.index.empty() ? "table" : fmt::format("index : {}", r.index);
}

// How WarmThroughput texts name the resource: "table" or "index <idx>".
std::string warm_target(Resource r) {
  return r.index.empty() ? "table" : fmt::format("index {}", r.index);
}

[[noreturn]] void quota_exceeded(std::string_view member, std::string_view structure,
                                 const std::string& target, std::string_view quota_name,
                                 const ServiceOptions& options) {
  throw ApiError::limit_exceeded(fmt::format(
      "Subscriber limit exceeded: Requested {} for {} for {} exceeds {} of the account in "
      "region {}",
      member, structure, target, quota_name, options.region));
}

std::optional<UnitsRequest> read_units(const JsonObject& json, std::string_view structure,
                                       std::string_view read, std::string_view write) {
  auto object = json.object(structure);
  if (!object) return std::nullopt;
  return UnitsRequest{object->integer(read, "Long"), object->integer(write, "Long")};
}

}  // namespace

std::optional<UnitsRequest> read_on_demand(const JsonObject& json) {
  return read_units(json, "OnDemandThroughput", "MaxReadRequestUnits", "MaxWriteRequestUnits");
}

std::optional<UnitsRequest> read_warm(const JsonObject& json) {
  return read_units(json, "WarmThroughput", "ReadUnitsPerSecond", "WriteUnitsPerSecond");
}

void check_provisioned_quota(std::int64_t read, std::int64_t write, Resource resource,
                             const ServiceOptions& options) {
  const capacity::CapacityOptions& c = options.capacity;
  const std::pair<std::string_view, std::int64_t> units[] = {{"ReadCapacityUnits", read},
                                                             {"WriteCapacityUnits", write}};
  for (const auto& [name, value] : units) {
    if (value > kMaxCapacityValue) {
      throw ApiError::validation(
          fmt::format("Given value {} for {} is out of bounds", value, name));
    }
  }
  const std::int64_t quotas[] = {c.table_quota_read, c.table_quota_write};
  for (int i = 0; i < 2; ++i) {
    const auto& [name, value] = units[i];
    if (value <= quotas[i]) continue;
    if (resource.index.empty()) {
      throw ApiError::limit_exceeded(fmt::format(
          "The requested {}, {}, is above the per table maximum for the account in {}. Per "
          "table maximum: {}. Refer to the Amazon DynamoDB Developer Guide for current limits "
          "and how to request higher limits.",
          name, value, options.region, quotas[i]));
    }
    throw ApiError::limit_exceeded(fmt::format(
        "The requested {} for index {}, {}, is above the per index maximum for the account in "
        "{}. Per index maximum: {}. Refer to the Amazon DynamoDB Developer Guide for current "
        "limits and how to request higher limits.",
        name, resource.index, value, options.region, quotas[i]));
  }
}

void check_on_demand(const UnitsRequest& request, Resource resource, SettingsCall call,
                     BillingMode mode, const ServiceOptions& options) {
  const capacity::CapacityOptions& c = options.capacity;
  const Member members[] = {
      {request.read, "MaxReadRequestUnits", "TableMaxReadCapacityUnits", c.table_quota_read, 0},
      {request.write, "MaxWriteRequestUnits", "TableMaxWriteCapacityUnits", c.table_quota_write,
       0}};
  const std::string target = on_demand_target(resource);
  // A maximum is at least 1 request unit; −1 removes one, which a new resource has not.
  for (const Member& m : members) {
    if (!m.value || *m.value >= 1 || (*m.value == kRemove && call == SettingsCall::kUpdate)) {
      continue;
    }
    throw ApiError::validation(
        fmt::format("{}Requested {} for OnDemandThroughput for {} is outside of valid range",
                    kInvalidParameters, m.name, target));
  }
  if (mode == BillingMode::PROVISIONED) {
    const Member& m = request.read ? members[0] : members[1];
    const std::string subject =
        resource.index.empty() ? std::string() : fmt::format(" for index : {}", resource.index);
    throw ApiError::validation(
        fmt::format("{}{} for OnDemandThroughput{} cannot be specified when {}", kInvalidParameters,
                    m.name, subject,
                    call == SettingsCall::kCreate ? "table BillingMode is PROVISIONED."
                                                  : "the table BillingMode is PROVISIONED"));
  }
  for (const Member& m : members) {
    if (m.value && *m.value > m.quota) {
      quota_exceeded(m.name, "OnDemandThroughput", target, m.quota_name, options);
    }
  }
}

void check_warm(const UnitsRequest& request, Resource resource, SettingsCall call, BillingMode mode,
                const ProvisionedThroughput& provisioned, const CapacitySettings& current,
                const ServiceOptions& options) {
  const capacity::CapacityOptions& c = options.capacity;
  std::string_view lower;  // what a value below the floor is lower than
  std::pair<std::int64_t, std::int64_t> floor;
  if (call == SettingsCall::kUpdate) {
    lower = "current WarmThroughput, decreasing WarmThroughput is not supported";
    floor = reported_warm(current, mode, provisioned, options);
  } else if (mode == BillingMode::PAY_PER_REQUEST) {
    floor = {c.on_demand_initial_read, c.on_demand_initial_write};
  } else {
    floor = {provisioned.read_capacity_units, provisioned.write_capacity_units};
  }
  const Member members[] = {{request.read, "ReadUnitsPerSecond", "TableMaxReadCapacityUnits",
                             c.table_quota_read, floor.first},
                            {request.write, "WriteUnitsPerSecond", "TableMaxWriteCapacityUnits",
                             c.table_quota_write, floor.second}};
  const std::string target = warm_target(resource);
  for (const Member& m : members) {
    if (!m.value || *m.value >= m.floor) continue;
    std::string than(lower);
    if (call == SettingsCall::kCreate) {
      than = mode == BillingMode::PAY_PER_REQUEST
                 ? fmt::format("initial throughput for OnDemand. See: {}", kInitialThroughputPage)
                 : fmt::format("{} of ProvisionedThroughput", m.name == "ReadUnitsPerSecond"
                                                                  ? "ReadCapacityUnits"
                                                                  : "WriteCapacityUnits");
    }
    throw ApiError::validation(
        fmt::format("{}Requested {} for WarmThroughput for {} is lower than {}", kInvalidParameters,
                    m.name, target, than));
  }
  for (const Member& m : members) {
    if (m.value && *m.value > m.quota) {
      quota_exceeded(m.name, "WarmThroughput", target, m.quota_name, options);
    }
  }
}

void init_capacity(CapacitySettings& settings, const std::optional<UnitsRequest>& on_demand,
                   const std::optional<UnitsRequest>& warm, BillingMode mode,
                   const ProvisionedThroughput& provisioned, const ServiceOptions& options) {
  if (on_demand && mode == BillingMode::PAY_PER_REQUEST) {
    settings.max_read = on_demand->read;
    settings.max_write = on_demand->write;
  }
  if (warm) {
    settings.warm_read = warm->read.value_or(0);
    settings.warm_write = warm->write.value_or(0);
  }
  std::tie(settings.warm_read, settings.warm_write) =
      reported_warm(settings, mode, provisioned, options);
}

void update_capacity(CapacitySettings& settings, const std::optional<UnitsRequest>& on_demand,
                     const std::optional<UnitsRequest>& warm) {
  if (on_demand) {
    auto merge = [](std::optional<std::int64_t>& max, std::optional<std::int64_t> requested) {
      if (!requested) return;
      max = *requested == kRemove ? std::nullopt : requested;
    };
    merge(settings.max_read, on_demand->read);
    merge(settings.max_write, on_demand->write);
  }
  if (warm) {
    settings.warm_read = std::max(settings.warm_read, warm->read.value_or(0));
    settings.warm_write = std::max(settings.warm_write, warm->write.value_or(0));
  }
}

void switch_capacity(CapacitySettings& settings, BillingMode to,
                     const ProvisionedThroughput& provisioned, const ServiceOptions& options) {
  // What the resource reached in its old mode stays its warm throughput; on demand it is
  // at least the initial throughput.
  const BillingMode from =
      to == BillingMode::PAY_PER_REQUEST ? BillingMode::PROVISIONED : BillingMode::PAY_PER_REQUEST;
  std::tie(settings.warm_read, settings.warm_write) =
      reported_warm(settings, from, provisioned, options);
  std::tie(settings.warm_read, settings.warm_write) =
      reported_warm(settings, to, ProvisionedThroughput{}, options);
  if (to == BillingMode::PROVISIONED) {
    settings.max_read.reset();
    settings.max_write.reset();
  }
}

void raise_warm_to(CapacitySettings& settings, const ProvisionedThroughput& provisioned) {
  settings.warm_read = std::max(settings.warm_read, provisioned.read_capacity_units);
  settings.warm_write = std::max(settings.warm_write, provisioned.write_capacity_units);
}

std::pair<std::int64_t, std::int64_t> reported_warm(const CapacitySettings& settings,
                                                    BillingMode mode,
                                                    const ProvisionedThroughput& provisioned,
                                                    const ServiceOptions& options) {
  std::int64_t read = std::max(settings.warm_read, 2 * settings.peak_read);
  std::int64_t write = std::max(settings.warm_write, 2 * settings.peak_write);
  if (mode == BillingMode::PAY_PER_REQUEST) {
    read = std::max(read, options.capacity.on_demand_initial_read);
    write = std::max(write, options.capacity.on_demand_initial_write);
  } else {
    read = std::max(read, provisioned.read_capacity_units);
    write = std::max(write, provisioned.write_capacity_units);
  }
  return {read, write};
}

void write_on_demand(JsonWriter& w, const CapacitySettings& settings) {
  if (!settings.max_read && !settings.max_write) return;
  write_key(w, "OnDemandThroughput");
  w.StartObject();
  if (settings.max_read) {
    write_key(w, "MaxReadRequestUnits");
    w.Int64(*settings.max_read);
  }
  if (settings.max_write) {
    write_key(w, "MaxWriteRequestUnits");
    w.Int64(*settings.max_write);
  }
  w.EndObject();
}

void write_warm(JsonWriter& w, std::pair<std::int64_t, std::int64_t> units,
                std::string_view status) {
  write_key(w, "WarmThroughput");
  w.StartObject();
  write_key(w, "ReadUnitsPerSecond");
  w.Int64(units.first);
  write_key(w, "WriteUnitsPerSecond");
  w.Int64(units.second);
  write_key(w, "Status");
  write_string(w, status);
  w.EndObject();
}

}  // namespace kumo::api
