// What an operation reports of the capacity it consumed (ConsumedCapacity, as
// ReturnConsumedCapacity asks) and of the item collections its writes touched
// (ItemCollectionMetrics, as ReturnItemCollectionMetrics asks).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/attribute_json.h"
#include "api/json_reader.h"
#include "engine/engine.h"
#include "model/table.h"

namespace kumo::api {

// Checks the ReturnConsumedCapacity member: INDEXES, TOTAL or NONE.
void check_return_consumed_capacity(const JsonObject& request, CoralErrors& coral);
// Checks the ReturnItemCollectionMetrics member: SIZE or NONE.
void check_return_item_collection_metrics(const JsonObject& request, CoralErrors& coral);

// Capacity one operation consumed on one table and its indexes: read and write units as
// DynamoDB rounds them, per table and per index.
struct ConsumedCapacity {
  std::string table_name;  // as the request named it (name or ARN)
  double table = 0;
  std::vector<engine::WriteResult::IndexUnits> indexes;  // one entry per index
  // ExecuteTransaction rates its units as read or write units too: each level then carries
  // ReadCapacityUnits or WriteCapacityUnits beside CapacityUnits.
  enum class Rated : std::uint8_t { kCapacity, kRead, kWrite };
  Rated rated = Rated::kCapacity;

  // Adds `units` (times `factor`) to the index entries, summing per index.
  void add_indexes(const std::vector<engine::WriteResult::IndexUnits>& units, double factor = 1);
  double total() const;
};

// Adds `capacity` into the per-table list (one entry per table, in first-seen order).
void add_capacity(std::vector<ConsumedCapacity>& per_table, const ConsumedCapacity& capacity);

// Writes "ConsumedCapacity" per ReturnConsumedCapacity (NONE: nothing; TOTAL: the total;
// INDEXES: also the "Table" and per-index breakdown) — as one object for single-table
// operations, as a list for batches and transactions.
void write_consumed_capacity(JsonWriter& w, std::string_view mode,
                             const ConsumedCapacity& capacity);
void write_consumed_capacity(JsonWriter& w, std::string_view mode,
                             const std::vector<ConsumedCapacity>& per_table);

// An item collection a write touched: the partition key of an item in a table with local
// secondary indexes. Batch and transaction writes report them per table.
struct ItemCollection {
  std::string table_name;  // as the request named it
  std::string key_name;
  AttributeValue key_value;
};
// Appends the collection of `item` to `out` when its table has LSIs.
void add_item_collection(std::vector<ItemCollection>& out, std::string_view table_name,
                         const TableDefinition& table, const Item& item);
// Writes "ItemCollectionMetrics": {"<table>": [{"ItemCollectionKey", "SizeEstimateRangeGB"}]}
// when any collection was touched.
void write_item_collection_metrics(JsonWriter& w, const std::vector<ItemCollection>& collections);

// Writes one item collection's metrics: {"ItemCollectionKey", "SizeEstimateRangeGB"}.
void write_item_collection(JsonWriter& w, const ItemCollection& collection);

}  // namespace kumo::api
