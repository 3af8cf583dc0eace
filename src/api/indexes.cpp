#include "api/indexes.h"
#include "api/item_checks.h"
#include "api/table_names.h"

#include <algorithm>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "model/api_error.h"

namespace kumo::api {
namespace {

constexpr std::size_t kMaxLocalIndexes = 5;
constexpr std::size_t kMaxGlobalIndexes = 20;
constexpr std::size_t kMaxComponents = 4;
constexpr std::size_t kMaxProjectedAttributes = 100;
constexpr std::size_t kMaxNonKeyAttributeLength = 255;

[[noreturn]] void invalid(const std::string& message) {
  throw ApiError::validation(std::string(kInvalidParameters) + message);
}

std::vector<std::string> names_of(const std::vector<AttributeDefinition>& defs) {
  std::vector<std::string> out;
  for (const auto& d : defs) out.push_back(d.name);
  return out;
}

const AttributeDefinition* definition(const std::vector<AttributeDefinition>& defs,
                                      std::string_view name) {
  for (const auto& d : defs) {
    if (d.name == name) return &d;
  }
  return nullptr;
}

// The definition of an attribute that the table's key or one of its indexes' keys uses,
// or null.
const AttributeDefinition* key_definition(const TableDefinition& table, std::string_view name) {
  if (table.key.hash.name == name) return &table.key.hash;
  if (table.key.range && table.key.range->name == name) return &*table.key.range;
  for (const auto* indexes : {&table.local_indexes, &table.global_indexes}) {
    for (const auto& index : *indexes) {
      for (const auto* components : {&index.hash, &index.range}) {
        if (const AttributeDefinition* d = definition(*components, name)) return d;
      }
    }
  }
  return nullptr;
}

void check_projection(const IndexRequest& index) {
  if (!index.projection_type) invalid("Unknown ProjectionType: null");
  const std::string_view type = *index.projection_type;
  if (type == "INCLUDE" && !index.non_key_attributes) {
    invalid("ProjectionType is INCLUDE, but NonKeyAttributes is not specified");
  }
  if (type != "INCLUDE" && index.non_key_attributes) {
    invalid(fmt::format("ProjectionType is {}, but NonKeyAttributes is specified", type));
  }
  if (index.non_key_attributes) {
    std::set<std::string_view> seen;
    for (const auto& a : *index.non_key_attributes) {
      if (!seen.insert(a).second) invalid("Duplicate element in NonKeyAttributes: " + a);
    }
  }
}

// Every component must be defined in AttributeDefinitions (CreateTable's wording for the
// table key, reused for indexes).
void check_defined(const IndexRequest& index, const std::vector<AttributeDefinition>& defs) {
  std::vector<std::string> keys;
  for (const auto& k : index.keys) keys.emplace_back(*k.first);
  for (const auto& k : keys) {
    if (!definition(defs, k)) {
      invalid(fmt::format(
          "Some index key attributes are not defined in AttributeDefinitions. Keys: {}, "
          "AttributeDefinitions: {}",
          render_list(keys), render_list(names_of(defs))));
    }
  }
}

IndexDefinition to_definition(const IndexRequest& request, bool global,
                              const std::vector<AttributeDefinition>& defs,
                              const TableDefinition& table) {
  IndexDefinition index;
  index.name = std::string(*request.name);
  index.global = global;
  for (const auto& [name, type] : request.keys) {
    KeyType key_type = *type == "HASH" ? KeyType::HASH : KeyType::RANGE;
    index.key_schema.push_back({std::string(*name), key_type});
    (key_type == KeyType::HASH ? index.hash : index.range).push_back(*definition(defs, *name));
  }
  const std::string_view type = *request.projection_type;
  index.projection.type = type == "ALL"         ? ProjectionType::ALL
                          : type == "KEYS_ONLY" ? ProjectionType::KEYS_ONLY
                                                : ProjectionType::INCLUDE;
  if (request.non_key_attributes) index.projection.non_key_attributes = *request.non_key_attributes;
  index.throughput.read_capacity_units = request.read;
  index.throughput.write_capacity_units = request.write;
  std::vector<std::string>& keys = index.key_attributes;
  auto add = [&](const std::string& name) {
    if (std::find(keys.begin(), keys.end(), name) == keys.end()) keys.push_back(name);
  };
  for (const auto& d : index.hash) add(d.name);
  for (const auto& d : index.range) add(d.name);
  add(table.key.hash.name);
  if (table.key.range) add(table.key.range->name);
  return index;
}

void check_local_index(const IndexRequest& index, const std::vector<AttributeDefinition>& defs,
                       const TableDefinition& table) {
  check_defined(index, defs);
  if (index.keys.size() == 2 && *index.keys[0].first == *index.keys[1].first) {
    throw ApiError::validation(
        "Both the Hash Key and the Range Key element in the KeySchema have the same name");
  }
  if (*index.keys[0].second != "HASH") {
    throw ApiError::validation(
        "Invalid KeySchema: The first KeySchemaElement is not a HASH key type");
  }
  if (index.keys.size() == 2 && *index.keys[1].second != "RANGE") {
    throw ApiError::validation(
        "Invalid KeySchema: The second KeySchemaElement is not a RANGE key type");
  }
  if (index.keys.size() < 2) {
    invalid("Index KeySchema does not have a range key for index: " + std::string(*index.name));
  }
  if (*index.keys[0].first != table.key.hash.name) {
    invalid(fmt::format(
        "Index KeySchema does not have the same leading hash key as table KeySchema for index: "
        "{}. index hash key: {}, table hash key: {}",
        *index.name, *index.keys[0].first, table.key.hash.name));
  }
  check_projection(index);
}

void check_global_shape(const IndexRequest& index, const std::vector<AttributeDefinition>& defs) {
  check_defined(index, defs);
  if (*index.keys[0].second != "HASH") {
    throw ApiError::validation(
        "Invalid KeySchema: The first KeySchemaElement is not a HASH key type");
  }
  std::size_t hash = 0, range = 0;
  bool seen_range = false;
  std::set<std::string_view> names;
  for (const auto& [name, type] : index.keys) {
    if (*type == "HASH") {
      if (seen_range)
        invalid("All HASH key attributes must precede RANGE key attributes in the KeySchema");
      ++hash;
    } else {
      seen_range = true;
      ++range;
    }
    if (!names.insert(*name).second) {
      throw ApiError::validation(
          index.keys.size() == 2
              ? "Both the Hash Key and the Range Key element in the KeySchema have the same name"
              : "The KeySchema contains multiple key attributes with the same name");
    }
  }
  if (hash > kMaxComponents) {
    invalid("The KeySchema exceeds the maximum allowed number of HASH key attributes");
  }
  if (range > kMaxComponents) {
    invalid("The KeySchema exceeds the maximum allowed number of RANGE key attributes");
  }
}

BillingMode billing_mode(bool pay_per_request) {
  return pay_per_request ? BillingMode::PAY_PER_REQUEST : BillingMode::PROVISIONED;
}

// A new GSI's provisioned throughput within the quota, its OnDemandThroughput and its
// WarmThroughput.
void check_index_settings(const IndexRequest& index, bool pay_per_request,
                          const ServiceOptions& options) {
  const Resource resource{*index.name};
  const BillingMode mode = billing_mode(pay_per_request);
  if (index.has_throughput) check_provisioned_quota(index.read, index.write, resource, options);
  if (index.on_demand) {
    check_on_demand(*index.on_demand, resource, SettingsCall::kCreate, mode, options);
  }
  if (index.warm) {
    check_warm(*index.warm, resource, SettingsCall::kCreate, mode, {index.read, index.write},
               CapacitySettings{}, options);
  }
}

// A GSI definition with its capacity settings.
IndexDefinition to_global_definition(const IndexRequest& request,
                                     const std::vector<AttributeDefinition>& defs,
                                     bool pay_per_request, const ServiceOptions& options,
                                     const TableDefinition& table) {
  IndexDefinition index = to_definition(request, true, defs, table);
  init_capacity(index.capacity, request.on_demand, request.warm, billing_mode(pay_per_request),
                index.throughput, options);
  return index;
}

// The ProvisionedThroughput of an index or of an Update action, {read, write}.
std::pair<std::int64_t, std::int64_t> read_index_throughput(const JsonObject& throughput,
                                                            const std::string& path,
                                                            CoralErrors& coral) {
  auto read = throughput.integer("ReadCapacityUnits", "Long");
  auto write = throughput.integer("WriteCapacityUnits", "Long");
  coral.require(read.has_value(), path + ".provisionedThroughput.readCapacityUnits");
  coral.require(write.has_value(), path + ".provisionedThroughput.writeCapacityUnits");
  if (read && *read < 1) {
    coral.add(std::to_string(*read), path + ".provisionedThroughput.readCapacityUnits",
              "Member must have value greater than or equal to 1");
  }
  if (write && *write < 1) {
    coral.add(std::to_string(*write), path + ".provisionedThroughput.writeCapacityUnits",
              "Member must have value greater than or equal to 1");
  }
  return {read.value_or(0), write.value_or(0)};
}

void check_global_throughput(const IndexRequest& index, bool pay_per_request,
                             const ServiceOptions& options) {
  if (pay_per_request && index.has_throughput) {
    invalid(fmt::format(
        "ProvisionedThroughput should not be specified for index: {} when BillingMode is "
        "PAY_PER_REQUEST",
        *index.name));
  }
  if (!pay_per_request && !index.has_throughput) {
    invalid("ProvisionedThroughput is not specified for index: " + std::string(*index.name));
  }
  check_index_settings(index, pay_per_request, options);
}

}  // namespace

IndexRequest read_index(const JsonObject& json, const std::string& path, bool global,
                        CoralErrors& coral) {
  IndexRequest index;
  index.name = json.string("IndexName");
  coral.check_table_name(index.name, path + ".indexName");
  auto keys = json.array("KeySchema");
  coral.require(keys.has_value(), path + ".keySchema");
  if (keys) {
    std::size_t i = 0;
    for (const auto& k : keys->objects()) {
      ++i;
      std::optional<std::string_view> name, type;
      if (k) {
        name = k->string("AttributeName");
        type = k->string("KeyType");
      }
      const std::string element = fmt::format("{}.keySchema.{}.member", path, i);
      coral.require(name.has_value(), element + ".attributeName");
      if (name) coral.check_length(*name, element + ".attributeName", 1, 255);
      coral.require(type.has_value(), element + ".keyType");
      coral.check_enum(type, element + ".keyType", {"HASH", "RANGE"});
      index.keys.emplace_back(name, type);
    }
    if (index.keys.empty()) {
      coral.add("[]", path + ".keySchema", "Member must have length greater than or equal to 1");
    } else if (!global && index.keys.size() > 2) {
      std::vector<std::string> rendered;
      for (const auto& [n, t] : index.keys) {
        rendered.push_back(fmt::format("KeySchemaElement(attributeName={}, keyType={})",
                                       n.value_or("null"), t.value_or("null")));
      }
      coral.add(render_list(rendered), path + ".keySchema",
                "Member must have length less than or equal to 2");
    }
  }
  auto projection = json.object("Projection");
  coral.require(projection.has_value(), path + ".projection");
  if (projection) {
    index.projection_type = projection->string("ProjectionType");
    coral.check_enum(index.projection_type, path + ".projection.projectionType",
                     {"ALL", "INCLUDE", "KEYS_ONLY"});
    if (auto non_key = projection->array("NonKeyAttributes")) {
      std::vector<std::string> names;
      for (const auto& n : non_key->strings()) {
        if (n) names.emplace_back(*n);
      }
      if (names.empty() || names.size() > 20) {
        coral.add(render_list(names), path + ".projection.nonKeyAttributes",
                  names.empty() ? "Member must have length greater than or equal to 1"
                                : "Member must have length less than or equal to 20");
      }
      // Each name has 1 to 255 characters.
      if (std::ranges::any_of(names, [](const std::string& n) {
            return java_length(n) < 1 || java_length(n) > kMaxNonKeyAttributeLength;
          })) {
        coral.add(render_list(names), path + ".projection.nonKeyAttributes",
                  fmt::format("Member must satisfy constraint: [Member must have length less "
                              "than or equal to {}, Member must have length greater than or "
                              "equal to 1]",
                              kMaxNonKeyAttributeLength));
      }
      index.non_key_attributes = std::move(names);
    }
  }
  if (auto throughput = json.object("ProvisionedThroughput")) {
    index.has_throughput = true;
    std::tie(index.read, index.write) = read_index_throughput(*throughput, path, coral);
  }
  if (global) {
    index.on_demand = read_on_demand(json);
    index.warm = read_warm(json);
  }
  return index;
}

std::vector<IndexRequest> read_indexes(const JsonArray& list, std::string_view path, bool global,
                                       CoralErrors& coral) {
  std::vector<IndexRequest> out;
  std::size_t i = 0;
  for (const auto& json : list.objects()) {
    ++i;
    const std::string element = fmt::format("{}.{}.member", path, i);
    out.push_back(json ? read_index(*json, element, global, coral) : IndexRequest{});
  }
  return out;
}

void build_indexes(const std::optional<std::vector<IndexRequest>>& lsis,
                   const std::optional<std::vector<IndexRequest>>& gsis,
                   const std::vector<AttributeDefinition>& definitions, bool pay_per_request,
                   const ServiceOptions& options, TableDefinition& table) {
  std::set<std::string_view> index_names;
  std::size_t projected = 0;
  if (lsis) {
    if (lsis->empty()) invalid("List of LocalSecondaryIndexes is empty");
    if (!table.key.range) {
      invalid(
          "Table KeySchema does not have a range key, which is required when specifying a "
          "LocalSecondaryIndex");
    }
    for (const auto& index : *lsis) {
      check_local_index(index, definitions, table);
      if (!index_names.insert(*index.name).second) {
        invalid("Duplicate index name: " + std::string(*index.name));
      }
      if (index.non_key_attributes) projected += index.non_key_attributes->size();
    }
    if (lsis->size() > kMaxLocalIndexes) {
      invalid("Number of LocalSecondaryIndexes exceeds per-table limit of 5");
    }
  }
  if (gsis) {
    if (gsis->empty()) invalid("List of GlobalSecondaryIndexes is empty");
    for (const auto& index : *gsis) {
      check_global_shape(index, definitions);
      check_projection(index);
      check_global_throughput(index, pay_per_request, options);
      if (!index_names.insert(*index.name).second) {
        invalid("Duplicate index name: " + std::string(*index.name));
      }
      if (index.non_key_attributes) projected += index.non_key_attributes->size();
    }
    if (gsis->size() > kMaxGlobalIndexes) {
      invalid("GlobalSecondaryIndex count exceeds the per-table limit of 20");
    }
  }
  if (projected > kMaxProjectedAttributes) {
    invalid(fmt::format(
        "The number of attributes in key schema and projection exceeds the limit of {} across "
        "all secondary indexes",
        kMaxProjectedAttributes));
  }
  // With indexes, every definition must be used by some key.
  std::vector<std::string> used{table.key.hash.name};
  if (table.key.range) used.push_back(table.key.range->name);
  for (const auto* list : {&lsis, &gsis}) {
    if (!*list) continue;
    for (const auto& index : **list) {
      for (const auto& k : index.keys) {
        if (std::find(used.begin(), used.end(), *k.first) == used.end())
          used.emplace_back(*k.first);
      }
    }
  }
  for (const auto& d : definitions) {
    if (std::find(used.begin(), used.end(), d.name) == used.end()) {
      invalid(fmt::format(
          "Some AttributeDefinitions are not used. AttributeDefinitions: {}, keys used: {}",
          render_list(names_of(definitions)), render_list(used)));
    }
  }
  if (lsis) {
    for (const auto& index : *lsis) {
      IndexDefinition d = to_definition(index, false, definitions, table);
      d.id = table.next_index_id++;
      table.local_indexes.push_back(std::move(d));
    }
  }
  if (gsis) {
    for (const auto& index : *gsis) {
      IndexDefinition d = to_global_definition(index, definitions, pay_per_request, options, table);
      d.id = table.next_index_id++;
      table.global_indexes.push_back(std::move(d));
    }
  }
}

IndexDefinition build_global_index(const IndexRequest& request,
                                   const std::vector<AttributeDefinition>& definitions,
                                   bool pay_per_request, const ServiceOptions& options,
                                   const TableDefinition& table) {
  for (const auto& k : request.keys) {
    if (!definition(definitions, *k.first)) {
      invalid("AttributeDefinitions is not specified for index: " + std::string(*request.name));
    }
  }
  check_global_shape(request, definitions);
  check_projection(request);
  if (!pay_per_request && !request.has_throughput) {
    invalid("ProvisionedThroughput must be specified for index: " + std::string(*request.name));
  }
  if (pay_per_request && request.has_throughput) {
    invalid(fmt::format(
        "ProvisionedThroughput should not be specified for index: {} when BillingMode is "
        "PAY_PER_REQUEST",
        *request.name));
  }
  check_index_settings(request, pay_per_request, options);
  return to_global_definition(request, definitions, pay_per_request, options, table);
}

namespace {

// The GSI an Update action names. An unknown name is ResourceNotFoundException, an LSI's
// ValidationException; DynamoDB fails on a WarmThroughput for an unknown index.
IndexDefinition& updated_index(const IndexUpdate& update, TableDefinition& table) {
  const std::string& name = update.name;
  auto it = std::find_if(table.global_indexes.begin(), table.global_indexes.end(),
                         [&](const IndexDefinition& i) { return i.name == name; });
  if (it != table.global_indexes.end()) return *it;
  if (table.find_index(name)) {
    throw ApiError::validation("Cannot update an index that is not a GlobalSecondaryIndex: " +
                               name);
  }
  if (update.warm) throw ApiError::internal_failure();
  throw ApiError::resource_not_found("Requested resource not found: Index: " + name + " not found");
}

// New provisioned throughput of a GSI: only on a provisioned table, within the quota, and
// a change; a decrease is counted.
void apply_index_throughput(const IndexUpdate& update, const ServiceOptions& options,
                            const TableDefinition& table, IndexDefinition& index) {
  const auto [read, write] = *update.throughput;
  if (table.billing_mode == BillingMode::PAY_PER_REQUEST) {
    throw ApiError::validation(fmt::format(
        "The only Updates for index: {} when TableThroughputMode is PAY_PER_REQUEST can be to "
        "OnDemandThroughput, WarmThroughput",
        update.name));
  }
  check_provisioned_quota(read, write, Resource{update.name}, options);
  ProvisionedThroughput& p = index.throughput;
  if (read == p.read_capacity_units && write == p.write_capacity_units) {
    throw ApiError::validation(fmt::format(
        "The provisioned throughput for the index {} will not change. The requested value "
        "equals the current value. Current ReadCapacityUnits provisioned for the index: {}. "
        "Requested ReadCapacityUnits: {}. Current WriteCapacityUnits provisioned for the "
        "index: {}. Requested WriteCapacityUnits: {}. Refer to the Amazon DynamoDB Developer "
        "Guide for current limits and how to request higher limits.",
        update.name, p.read_capacity_units, read, p.write_capacity_units, write));
  }
  if (read < p.read_capacity_units || write < p.write_capacity_units) {
    ++p.number_of_decreases_today;
  }
  p.read_capacity_units = read;
  p.write_capacity_units = write;
}

// One Update action: its values checked against the index as it is, then applied.
void apply_index_update(const IndexUpdate& update, const ServiceOptions& options,
                        TableDefinition& table) {
  IndexDefinition& index = updated_index(update, table);
  const Resource resource{update.name};
  if (update.on_demand) {
    check_on_demand(*update.on_demand, resource, SettingsCall::kUpdate, table.billing_mode,
                    options);
  }
  if (update.warm) {
    check_warm(*update.warm, resource, SettingsCall::kUpdate, table.billing_mode, index.throughput,
               index.capacity, options);
  }
  if (update.throughput) apply_index_throughput(update, options, table, index);
  update_capacity(index.capacity, update.on_demand, update.warm);
  raise_warm_to(index.capacity, index.throughput);
}

}  // namespace

GlobalIndexUpdates read_global_index_updates(const JsonArray& updates, CoralErrors& coral) {
  GlobalIndexUpdates out;
  struct Action {
    std::string kind, name;
  };
  std::vector<Action> actions;
  std::size_t i = 0;
  for (const auto& element : updates.objects()) {
    ++i;
    const std::string path = fmt::format("globalSecondaryIndexUpdates.{}.member", i);
    std::optional<JsonObject> create, update, del;
    if (element) {
      create = element->object("Create");
      update = element->object("Update");
      del = element->object("Delete");
    }
    const int count = !!create + !!update + !!del;
    if (count == 0) {
      coral.throw_if_any();
      invalid(
          "One of GlobalSecondaryIndexUpdate.Update, GlobalSecondaryIndexUpdate.Create, "
          "GlobalSecondaryIndexUpdate.Delete must not be null");
    }
    if (count > 1) {
      coral.throw_if_any();
      invalid(
          "Only one global secondary index action is allowed per GlobalSecondaryIndexUpdate "
          "object");
    }
    if (create) {
      out.create = read_index(*create, path + ".create", true, coral);
      actions.push_back({"create", std::string(out.create->name.value_or(""))});
    } else if (del) {
      auto name = del->string("IndexName");
      coral.check_table_name(name, path + ".delete.indexName");
      out.delete_name = std::string(name.value_or(""));
      actions.push_back({"delete", *out.delete_name});
    } else {
      auto name = update->string("IndexName");
      coral.check_table_name(name, path + ".update.indexName");
      IndexUpdate u{std::string(name.value_or("")), std::nullopt, read_on_demand(*update),
                    read_warm(*update)};
      auto throughput = update->object("ProvisionedThroughput");
      // An update changes the provisioned throughput, OnDemandThroughput or WarmThroughput.
      coral.require(throughput || u.on_demand || u.warm, path + ".update.provisionedThroughput");
      if (throughput) u.throughput = read_index_throughput(*throughput, path + ".update", coral);
      actions.push_back({"update", u.name});
      out.updates.push_back(std::move(u));
    }
  }
  coral.throw_if_any();
  // DynamoDB fails on an empty OnDemandThroughput or WarmThroughput of an update.
  for (const auto& u : out.updates) {
    if ((u.on_demand && u.on_demand->empty()) || (u.warm && u.warm->empty())) {
      throw ApiError::internal_failure();
    }
  }
  std::set<std::string_view> names;
  std::size_t online = 0;
  for (const auto& a : actions) {
    if (!names.insert(a.name).second) {
      invalid(
          "Only one global secondary index update per index is allowed simultaneously. Index: " +
          a.name);
    }
    online += a.kind != "update";
  }
  if (online > 1) {
    throw ApiError::limit_exceeded(
        "Subscriber limit exceeded: Only 1 online index can be created or deleted "
        "simultaneously per table");
  }
  return out;
}

std::uint32_t apply_global_index_updates(const GlobalIndexUpdates& updates,
                                         const ServiceOptions& options, TableDefinition& table,
                                         std::uint32_t* dropped) {
  *dropped = 0;
  // An attribute keeps its type while a key of the table or of an index uses it.
  for (const auto& d : updates.definitions) {
    const AttributeDefinition* existing = key_definition(table, d.name);
    if (existing && existing->type != d.type) {
      invalid(
          "Attributes cannot be redefined. Please check that your attribute has the same type "
          "as previously defined.");
    }
  }
  const bool pay_per_request = table.billing_mode == BillingMode::PAY_PER_REQUEST;
  for (const IndexUpdate& update : updates.updates) {
    apply_index_update(update, options, table);
  }
  if (updates.delete_name) {
    const std::string& name = *updates.delete_name;
    auto it = std::find_if(table.global_indexes.begin(), table.global_indexes.end(),
                           [&](const IndexDefinition& i) { return i.name == name; });
    if (it == table.global_indexes.end()) {
      if (table.find_index(name)) {
        throw ApiError::validation("Cannot delete an index that is not a GlobalSecondaryIndex: " +
                                   name);
      }
      throw ApiError::resource_not_found("Requested resource not found: Index: " + name +
                                         " not found");
    }
    *dropped = it->id;
    table.global_indexes.erase(it);
  }
  // The table's definitions are the attributes its keys use: a deleted index's own go.
  std::erase_if(table.attribute_definitions,
                [&](const AttributeDefinition& d) { return !key_definition(table, d.name); });
  if (!updates.create) return 0;
  const IndexRequest& request = *updates.create;
  if (table.find_index(*request.name)) {
    throw ApiError::validation("Attempting to create an index which already exists");
  }
  if (table.global_indexes.size() >= kMaxGlobalIndexes) {
    throw ApiError::limit_exceeded(
        "Subscriber limit exceeded: GlobalSecondaryIndex count exceeds the per-table limit of 20");
  }
  IndexDefinition index =
      build_global_index(request, updates.definitions, pay_per_request, options, table);
  // The table's definitions are the merged set: add the new components' types.
  for (const auto* components : {&index.hash, &index.range}) {
    for (const auto& d : *components) {
      if (!definition(table.attribute_definitions, d.name))
        table.attribute_definitions.push_back(d);
    }
  }
  index.id = table.next_index_id++;
  index.backfilling = true;
  table.global_indexes.push_back(std::move(index));
  return table.global_indexes.back().id;
}

void write_index_descriptions(JsonWriter& w, const Context& ctx, const TableDefinition& table,
                              bool warm) {
  auto write_list = [&](std::string_view member, const std::vector<IndexDefinition>& indexes) {
    if (indexes.empty()) return;
    write_key(w, member);
    w.StartArray();
    for (const auto& index : indexes) {
      w.StartObject();
      write_key(w, "IndexName");
      write_string(w, index.name);
      write_key(w, "KeySchema");
      write_key_schema(w, index.key_schema);
      write_key(w, "Projection");
      w.StartObject();
      write_key(w, "ProjectionType");
      write_string(w, projection_type_name(index.projection.type));
      if (index.projection.type == ProjectionType::INCLUDE) {
        write_key(w, "NonKeyAttributes");
        w.StartArray();
        for (const auto& a : index.projection.non_key_attributes) write_string(w, a);
        w.EndArray();
      }
      w.EndObject();
      // The GSIs of a table being restored are listed without a status.
      if (index.global && !table.restore) {
        write_key(w, "IndexStatus");
        write_string(w, index.backfilling ? "CREATING" : "ACTIVE");
        if (index.backfilling) {
          write_key(w, "Backfilling");
          w.Bool(true);
        }
      }
      if (index.global) {
        write_key(w, "ProvisionedThroughput");
        write_provisioned_throughput(w, index.throughput);
      }
      write_key(w, "IndexSizeBytes");
      w.Int64(ctx.engine.index_size_bytes(table, index));
      write_key(w, "ItemCount");
      w.Int64(ctx.engine.index_item_count(table, index));
      write_key(w, "IndexArn");
      write_string(w, table_arn(ctx, table.name) + "/index/" + index.name);
      if (index.global) {
        write_on_demand(w, index.capacity);
        if (warm) {
          write_warm(
              w, reported_warm(index.capacity, table.billing_mode, index.throughput, ctx.options),
              "ACTIVE");
        }
      }
      w.EndObject();
    }
    w.EndArray();
  };
  write_list("LocalSecondaryIndexes", table.local_indexes);
  write_list("GlobalSecondaryIndexes", table.global_indexes);
}

namespace {

// One index key component present in an item to be written: of its declared type and not
// an empty S or B. Returns its size.
std::size_t check_index_component(const IndexDefinition& index, const AttributeDefinition& d,
                                  const AttributeValue& v, bool via_update) {
  if (v.type() != to_attr_type(d.type)) {
    invalid(fmt::format("Type mismatch for Index Key {} Expected: {} Actual: {} IndexName: {}",
                        d.name, scalar_type_name(d.type), type_name(v.type()), index.name));
  }
  if (v.type() != AttrType::N && v.as_string().empty()) {
    const char* kind = v.type() == AttrType::S ? "string" : "binary";
    if (via_update) {
      throw ApiError::validation(fmt::format(
          "One or more parameter values are not valid. The update expression attempted to "
          "update a secondary index key to a value that is not supported. The "
          "AttributeValue for a key attribute cannot contain an empty {} value.",
          kind));
    }
    throw ApiError::validation(
        fmt::format("One or more parameter values are not valid. A value specified for a secondary "
                    "index key is not supported. The AttributeValue for a key attribute cannot "
                    "contain an empty {} value. IndexName: {}, IndexKey: {}",
                    kind, index.name, d.name));
  }
  return key_value_size(v);
}

}  // namespace

void check_index_keys(const TableDefinition& table, const Item& item, bool via_update) {
  for (const auto* indexes : {&table.local_indexes, &table.global_indexes}) {
    for (const auto& index : *indexes) {
      // Index keys have the table key's size limits: each HASH component alone, the RANGE
      // components together.
      std::size_t range_bytes = 0;
      for (const auto* components : {&index.hash, &index.range}) {
        for (const auto& d : *components) {
          auto it = item.find(d.name);
          if (it == item.end()) continue;
          const std::size_t bytes = check_index_component(index, d, it->second, via_update);
          if (components == &index.hash) {
            check_key_size(KeyType::HASH, bytes);
          } else {
            range_bytes += bytes;
          }
        }
      }
      check_key_size(KeyType::RANGE, range_bytes);
    }
  }
}

}  // namespace kumo::api
