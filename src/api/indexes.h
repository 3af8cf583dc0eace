// Secondary indexes at the API edge (CreateTable, UpdateTable, multi-attribute GSI keys):
// reading and validating index definitions, describing them, and the checks item writes
// owe them.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "api/attribute_json.h"
#include "api/json_reader.h"
#include "api/operations.h"
#include "api/throughput_settings.h"
#include "model/table.h"

namespace kumo::api {

// An index definition as a request wrote it, before semantic validation.
struct IndexRequest {
  std::optional<std::string_view> name;
  std::vector<std::pair<std::optional<std::string_view>, std::optional<std::string_view>>> keys;
  std::optional<std::string_view> projection_type;
  std::optional<std::vector<std::string>> non_key_attributes;
  bool has_throughput = false;
  std::int64_t read = 0, write = 0;
  std::optional<UnitsRequest> on_demand, warm;  // global indexes only
};

// Reads LocalSecondaryIndexes / GlobalSecondaryIndexes elements, adding model-constraint
// violations under `path` (e.g. "localSecondaryIndexes").
std::vector<IndexRequest> read_indexes(const JsonArray& list, std::string_view path, bool global,
                                       CoralErrors& coral);
// One index object (also used for UpdateTable's Create action).
IndexRequest read_index(const JsonObject& json, const std::string& path, bool global,
                        CoralErrors& coral);

// Validates the indexes of a CreateTable against the table's key and definitions, in
// DynamoDB's order, and fills `table.local_indexes` / `table.global_indexes`. Throws
// ValidationException or LimitExceededException. `definitions` are the request's
// AttributeDefinitions.
void build_indexes(const std::optional<std::vector<IndexRequest>>& lsis,
                   const std::optional<std::vector<IndexRequest>>& gsis,
                   const std::vector<AttributeDefinition>& definitions, bool pay_per_request,
                   const ServiceOptions& options, TableDefinition& table);
// One GSI validated on its own (UpdateTable Create): shape, definitions, projection,
// throughput and its settings.
IndexDefinition build_global_index(const IndexRequest& request,
                                   const std::vector<AttributeDefinition>& definitions,
                                   bool pay_per_request, const ServiceOptions& options,
                                   const TableDefinition& table);

// An Update action: new provisioned throughput, OnDemandThroughput, WarmThroughput.
struct IndexUpdate {
  std::string name;
  std::optional<std::pair<std::int64_t, std::int64_t>> throughput;
  std::optional<UnitsRequest> on_demand, warm;
};

// What UpdateTable's GlobalSecondaryIndexUpdates asks for, validated against the request.
struct GlobalIndexUpdates {
  std::optional<IndexRequest> create;
  std::optional<std::string> delete_name;
  std::vector<IndexUpdate> updates;
  std::vector<AttributeDefinition> definitions;  // the request's AttributeDefinitions
};
// Reads and checks the list's shape (one action per element, one action per index, at most
// one Create or Delete); the caller fills in `definitions`. Throws ValidationException /
// LimitExceededException.
GlobalIndexUpdates read_global_index_updates(const JsonArray& updates, CoralErrors& coral);
// Applies them to `table` (a copy being changed, its billing mode already the new one):
// returns the id of a created index (0 if none) and sets *dropped to the id of a deleted
// one (0 if none).
std::uint32_t apply_global_index_updates(const GlobalIndexUpdates& updates,
                                         const ServiceOptions& options, TableDefinition& table,
                                         std::uint32_t* dropped);

// Writes "LocalSecondaryIndexes" / "GlobalSecondaryIndexes" of a table description; each
// GSI's WarmThroughput when `warm`.
void write_index_descriptions(JsonWriter& w, const Context& ctx, const TableDefinition& table,
                              bool warm);

// Index key checks on an item about to be written: a component of the wrong type or an
// empty S/B component is rejected. `via_update` selects UpdateItem's wording.
void check_index_keys(const TableDefinition& table, const Item& item, bool via_update);

}  // namespace kumo::api
