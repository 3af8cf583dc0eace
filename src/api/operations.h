// The operations the service answers, one function each, grouped by family in their own
// files (tables.cpp, tags.cpp, items.cpp), and what those files share.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "api/attribute_json.h"
#include "api/json_reader.h"
#include "api/service.h"
#include "engine/engine.h"

namespace kumo::api {

struct Context {
  engine::Engine& engine;
  const ServiceOptions& options;
};

// Each takes the request object and returns the response body (compact JSON).
using Operation = std::string (*)(const Context&, const JsonObject&);

std::string create_table(const Context&, const JsonObject&);
std::string describe_table(const Context&, const JsonObject&);
std::string update_table(const Context&, const JsonObject&);
std::string delete_table(const Context&, const JsonObject&);
std::string list_tables(const Context&, const JsonObject&);
std::string describe_limits(const Context&, const JsonObject&);
std::string describe_endpoints(const Context&, const JsonObject&);
std::string tag_resource(const Context&, const JsonObject&);
std::string untag_resource(const Context&, const JsonObject&);
std::string list_tags_of_resource(const Context&, const JsonObject&);
std::string put_item(const Context&, const JsonObject&);
std::string get_item(const Context&, const JsonObject&);
std::string delete_item(const Context&, const JsonObject&);
std::string update_item(const Context&, const JsonObject&);
std::string query(const Context&, const JsonObject&);
std::string batch_get_item(const Context&, const JsonObject&);
std::string batch_write_item(const Context&, const JsonObject&);
std::string transact_get_items(const Context&, const JsonObject&);
std::string transact_write_items(const Context&, const JsonObject&);
std::string scan(const Context&, const JsonObject&);
std::string update_time_to_live(const Context&, const JsonObject&);
std::string describe_time_to_live(const Context&, const JsonObject&);
// DynamoDB Streams (DynamoDBStreams_20120810.*).
std::string list_streams(const Context&, const JsonObject&);
std::string describe_stream(const Context&, const JsonObject&);
std::string get_shard_iterator(const Context&, const JsonObject&);
std::string get_records(const Context&, const JsonObject&);

// "arn:aws:dynamodb:<region>:<account>:table/<name>/stream/<label>".
std::string stream_arn(const Context& ctx, std::string_view table_name, std::string_view label);

// "arn:aws:dynamodb:<region>:<account>:table/<name>".
std::string table_arn(const Context& ctx, std::string_view table_name);

// The table name a TableName member designates: the name itself, or the name inside a
// table ARN. Throws ValidationException for a malformed ARN.
std::string table_name_of(std::string_view name_or_arn);

// Checks a TableName member that may be a name or an ARN (coral rules at `path`).
void check_table_name_or_arn(CoralErrors& coral, std::optional<std::string_view> value,
                             std::string_view path);

// The table for a data-plane operation; ResourceNotFoundException "Requested resource not
// found" when absent.
engine::TablePtr data_table(const Context& ctx, std::string_view name_or_arn);

// The table for a control-plane operation; ResourceNotFoundException "Requested resource
// not found: Table: <name> not found" when absent.
engine::TablePtr control_table(const Context& ctx, std::string_view name_or_arn);

// Writes an item as storage holds it, without building it (as write_item would write it).
inline void write_item(JsonWriter& w, const engine::StoredItem& item) {
  JsonValueWriter writer(w);
  w.StartObject();
  item.visit(writer);
  w.EndObject();
}

// Writes a KeySchema list: [{"AttributeName", "KeyType"}, ...] in schema order.
void write_key_schema(JsonWriter& w, const std::vector<KeySchemaElement>& schema);

// Capacity one operation consumed on one table and its indexes (§9.2–9.4).
struct ConsumedCapacity {
  std::string table_name;  // as the request named it (name or ARN)
  double table = 0;
  std::vector<engine::WriteResult::IndexUnits> indexes;  // one entry per index

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

// An item collection a write touched: the partition key of an item in a table with LSIs
// (§9.4). Batch and transaction writes report them per table.
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

}  // namespace kumo::api
