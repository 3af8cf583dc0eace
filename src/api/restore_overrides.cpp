#include "api/restore_overrides.h"

#include <algorithm>
#include <set>
#include <string>

#include <fmt/format.h>

#include "model/api_error.h"

namespace kumo::api {
namespace {

// Whether an override describes `index`: the same key schema, element by element, and the
// same projection (non-key attributes in any order). Its name may differ.
bool override_matches(const IndexDefinition& index, const IndexRequest& request) {
  if (index.key_schema.size() != request.keys.size()) return false;
  for (std::size_t i = 0; i < request.keys.size(); ++i) {
    const auto& [name, type] = request.keys[i];
    const KeySchemaElement& k = index.key_schema[i];
    if (!name || !type || *name != k.name) return false;
    if (*type != (k.type == KeyType::HASH ? "HASH" : "RANGE")) return false;
  }
  if (!request.projection_type ||
      *request.projection_type != projection_type_name(index.projection.type)) {
    return false;
  }
  if (index.projection.type != ProjectionType::INCLUDE) return !request.non_key_attributes;
  if (!request.non_key_attributes) return false;
  const std::set<std::string> wanted(request.non_key_attributes->begin(),
                                     request.non_key_attributes->end());
  const std::set<std::string> recorded(index.projection.non_key_attributes.begin(),
                                       index.projection.non_key_attributes.end());
  return wanted == recorded && wanted.size() == request.non_key_attributes->size();
}

// The maxima of OnDemandThroughput as a request, when either is set.
std::optional<UnitsRequest> maxima_of(const CapacitySettings& settings) {
  if (!settings.max_read && !settings.max_write) return std::nullopt;
  return UnitsRequest{settings.max_read, settings.max_write};
}

// An index of the restored table, from the one the backup recorded: its state as a new
// index's (no backfill, fresh partitions and warm throughput), its throughput that of the
// restored billing mode.
IndexDefinition restored_index(const IndexDefinition& recorded, const IndexRequest* request,
                               BillingMode mode, const ProvisionedThroughput& table_throughput,
                               const ServiceOptions& options) {
  IndexDefinition index;
  index.name = request ? std::string(*request->name) : recorded.name;
  index.global = recorded.global;
  index.key_schema = recorded.key_schema;
  index.hash = recorded.hash;
  index.range = recorded.range;
  index.projection = recorded.projection;
  index.key_attributes = recorded.key_attributes;
  if (!index.global) return index;
  if (request && request->has_throughput && mode == BillingMode::PAY_PER_REQUEST) {
    throw ApiError::validation(fmt::format(
        "{}ProvisionedThroughput should not be specified for index: {} when BillingMode is "
        "PAY_PER_REQUEST",
        kInvalidParameters, index.name));
  }
  if (mode == BillingMode::PROVISIONED) {
    if (request && request->has_throughput) {
      check_provisioned_quota(request->read, request->write, {index.name}, options);
      index.throughput.read_capacity_units = request->read;
      index.throughput.write_capacity_units = request->write;
    } else if (recorded.throughput.read_capacity_units > 0) {
      // The throughput the index had when it was backed up.
      index.throughput.read_capacity_units = recorded.throughput.read_capacity_units;
      index.throughput.write_capacity_units = recorded.throughput.write_capacity_units;
    } else {
      // An index of an on-demand table restored as provisioned: the table's throughput.
      index.throughput.read_capacity_units = table_throughput.read_capacity_units;
      index.throughput.write_capacity_units = table_throughput.write_capacity_units;
    }
  }
  std::optional<UnitsRequest> maxima;
  if (mode == BillingMode::PAY_PER_REQUEST) maxima = maxima_of(recorded.capacity);
  if (request && request->on_demand && !request->on_demand->empty()) {
    check_on_demand(*request->on_demand, {index.name}, SettingsCall::kCreate, mode, options);
    const UnitsRequest& given = *request->on_demand;
    maxima = UnitsRequest{given.read ? given.read : recorded.capacity.max_read,
                          given.write ? given.write : recorded.capacity.max_write};
  }
  init_capacity(index.capacity, maxima, std::nullopt, mode, index.throughput, options);
  return index;
}

// The indexes of one kind the restored table has: all those recorded, or, with an override
// list, those it matches (renamed as it names them; none for an empty list).
std::vector<IndexDefinition> restored_indexes(const std::vector<IndexDefinition>& recorded,
                                              const std::optional<std::vector<IndexRequest>>& list,
                                              BillingMode mode,
                                              const ProvisionedThroughput& table_throughput,
                                              const ServiceOptions& options,
                                              std::set<std::string>& names) {
  std::vector<IndexDefinition> out;
  if (!list) {
    for (const IndexDefinition& index : recorded) {
      out.push_back(restored_index(index, nullptr, mode, table_throughput, options));
      names.insert(index.name);
    }
    return out;
  }
  std::vector<bool> used(recorded.size(), false);
  for (const IndexRequest& request : *list) {
    const std::string name(request.name.value_or(""));
    std::size_t found = recorded.size();
    for (std::size_t i = 0; i < recorded.size() && found == recorded.size(); ++i) {
      if (!used[i] && override_matches(recorded[i], request)) found = i;
    }
    if (found == recorded.size()) {
      throw ApiError::validation(fmt::format(
          "Index {} does not match a secondary index that existed in the source table and "
          "cannot be created during the restore operation",
          name));
    }
    if (!names.insert(name).second) {
      throw ApiError::validation(
          fmt::format("{}Duplicate index name: {}", kInvalidParameters, name));
    }
    used[found] = true;
    out.push_back(restored_index(recorded[found], &request, mode, table_throughput, options));
  }
  return out;
}

}  // namespace

TableDefinition restored_table(const TableDefinition& source, std::string_view name,
                               const RestoreOverrides& overrides, const ServiceOptions& options) {
  const BillingMode mode = overrides.billing_mode.value_or(source.billing_mode);
  if (overrides.throughput && mode != BillingMode::PROVISIONED) {
    throw ApiError::validation(
        "Cannot override ProvisionedThroughput unless BillingMode is PROVISIONED");
  }
  if (overrides.billing_mode == BillingMode::PROVISIONED && !overrides.throughput) {
    throw ApiError::validation(
        "Must override ProvisionedThroughput if BillingMode is overridden to PROVISIONED");
  }
  // An empty OnDemandThroughputOverride is taken as absent.
  const bool on_demand = overrides.on_demand && !overrides.on_demand->empty();
  if (on_demand) {
    for (const auto& [value, member] :
         {std::pair{overrides.on_demand->read, "MaxReadRequestUnits"},
          std::pair{overrides.on_demand->write, "MaxWriteRequestUnits"}}) {
      if (value && *value < 1) {
        throw ApiError::validation(
            fmt::format("Requested {} for OnDemandThroughput is outside of valid range", member));
      }
    }
    check_on_demand(*overrides.on_demand, {}, SettingsCall::kCreate, mode, options);
  }
  if (overrides.throughput) {
    check_provisioned_quota(*overrides.throughput->read, *overrides.throughput->write, {}, options);
  }

  TableDefinition t;
  t.name = std::string(name);
  t.key = source.key;
  t.billing_mode = mode;
  t.billing_mode_given = source.billing_mode_given || overrides.billing_mode.has_value();
  if (mode == BillingMode::PROVISIONED) {
    if (overrides.throughput) {
      t.throughput.read_capacity_units = *overrides.throughput->read;
      t.throughput.write_capacity_units = *overrides.throughput->write;
    } else {
      // The provisioned capacity the table had when it was backed up.
      t.throughput.read_capacity_units = source.throughput.read_capacity_units;
      t.throughput.write_capacity_units = source.throughput.write_capacity_units;
    }
  }
  std::optional<UnitsRequest> maxima;
  if (mode == BillingMode::PAY_PER_REQUEST) maxima = maxima_of(source.capacity);
  if (on_demand) {
    maxima = UnitsRequest{
        overrides.on_demand->read ? overrides.on_demand->read : source.capacity.max_read,
        overrides.on_demand->write ? overrides.on_demand->write : source.capacity.max_write};
  }
  init_capacity(t.capacity, maxima, std::nullopt, mode, t.throughput, options);

  std::set<std::string> names;
  t.local_indexes =
      restored_indexes(source.local_indexes, overrides.local, mode, t.throughput, options, names);
  t.global_indexes =
      restored_indexes(source.global_indexes, overrides.global, mode, t.throughput, options, names);
  for (auto* indexes : {&t.local_indexes, &t.global_indexes}) {
    for (IndexDefinition& index : *indexes) index.id = t.next_index_id++;
  }
  // The definitions of the attributes that the key and the indexes kept use.
  for (const AttributeDefinition& d : source.attribute_definitions) {
    bool used = d.name == t.key.hash.name || (t.key.range && d.name == t.key.range->name);
    for (const auto* indexes : {&t.local_indexes, &t.global_indexes}) {
      for (const IndexDefinition& index : *indexes) {
        for (const KeySchemaElement& k : index.key_schema) used = used || k.name == d.name;
      }
    }
    if (used) t.attribute_definitions.push_back(d);
  }
  // Server-side encryption as recorded, unless overridden. Stream, Time to Live, tags,
  // table class, deletion protection and Contributor Insights are not restored.
  t.sse_enabled = overrides.sse_enabled.value_or(source.sse_enabled);
  return t;
}

}  // namespace kumo::api
