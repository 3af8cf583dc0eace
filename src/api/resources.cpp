// Table names and ARNs as request members name them (dynamodb-contract.md §1.1, §3.1).
#include <algorithm>

#include <fmt/format.h>

#include "api/operations.h"
#include "model/api_error.h"

namespace kumo::api {

std::string table_arn(const Context& ctx, std::string_view table_name) {
  return fmt::format("arn:aws:dynamodb:{}:{}:table/{}", ctx.options.region, ctx.options.account_id,
                     table_name);
}

std::string stream_arn(const Context& ctx, std::string_view table_name, std::string_view label) {
  return fmt::format("{}/stream/{}", table_arn(ctx, table_name), label);
}

std::string table_name_of(std::string_view name_or_arn) {
  if (name_or_arn.substr(0, 4) != "arn:") return std::string(name_or_arn);
  // arn:<partition>:dynamodb:<region>:<account>:table/<name>. Tables are shared across
  // regions and accounts, so those parts are not compared.
  std::size_t colons = 0, pos = 0;
  for (; pos < name_or_arn.size() && colons < 5; ++pos) {
    if (name_or_arn[pos] == ':') ++colons;
  }
  std::string_view resource = name_or_arn.substr(pos);
  if (colons == 5 && resource.substr(0, 6) == "table/" && resource.size() > 6 &&
      resource.find('/', 6) == std::string_view::npos &&
      name_or_arn.substr(0, pos).find(":dynamodb:") != std::string_view::npos) {
    return std::string(resource.substr(6));
  }
  throw ApiError::validation(
      fmt::format("Invalid TableArn: Invalid ResourceArn provided as input {}", name_or_arn));
}

void check_table_name_or_arn(CoralErrors& coral, std::optional<std::string_view> value,
                             std::string_view path) {
  if (value && value->substr(0, 4) == "arn:") {
    coral.check_length(*value, path, 1, 1024);
    return;
  }
  coral.check_table_name(value, path);
}

engine::TablePtr data_table(const Context& ctx, std::string_view name_or_arn) {
  engine::TablePtr table = ctx.engine.catalog().find(table_name_of(name_or_arn));
  if (!table) throw ApiError::resource_not_found();
  return table;
}

engine::TablePtr control_table(const Context& ctx, std::string_view name_or_arn) {
  std::string name = table_name_of(name_or_arn);
  engine::TablePtr table = ctx.engine.catalog().find(name);
  if (!table) {
    throw ApiError::resource_not_found("Requested resource not found: Table: " + name +
                                       " not found");
  }
  return table;
}

void write_key_schema(JsonWriter& w, const std::vector<KeySchemaElement>& schema) {
  w.StartArray();
  for (const auto& k : schema) {
    w.StartObject();
    write_key(w, "AttributeName");
    write_string(w, k.name);
    write_key(w, "KeyType");
    write_string(w, k.type == KeyType::HASH ? "HASH" : "RANGE");
    w.EndObject();
  }
  w.EndArray();
}

void ConsumedCapacity::add_indexes(const std::vector<engine::WriteResult::IndexUnits>& units,
                                   double factor) {
  for (const auto& u : units) {
    auto it = std::find_if(indexes.begin(), indexes.end(),
                           [&](const auto& i) { return i.name == u.name; });
    if (it == indexes.end()) {
      indexes.push_back({u.name, u.global, u.units * factor});
    } else {
      it->units += u.units * factor;
    }
  }
}

double ConsumedCapacity::total() const {
  double sum = table;
  for (const auto& i : indexes) sum += i.units;
  return sum;
}

void add_capacity(std::vector<ConsumedCapacity>& per_table, const ConsumedCapacity& capacity) {
  auto it = std::find_if(per_table.begin(), per_table.end(),
                         [&](const auto& c) { return c.table_name == capacity.table_name; });
  if (it == per_table.end()) {
    per_table.push_back(capacity);
    return;
  }
  it->table += capacity.table;
  it->add_indexes(capacity.indexes);
}

namespace {

void write_capacity_object(JsonWriter& w, std::string_view mode, const ConsumedCapacity& c) {
  w.StartObject();
  write_key(w, "TableName");
  write_string(w, c.table_name);
  write_key(w, "CapacityUnits");
  w.Double(c.total());
  if (mode == "INDEXES") {
    write_key(w, "Table");
    w.StartObject();
    write_key(w, "CapacityUnits");
    w.Double(c.table);
    w.EndObject();
    for (bool global : {true, false}) {
      bool any = false;
      for (const auto& i : c.indexes) any |= i.global == global;
      if (!any) continue;
      write_key(w, global ? "GlobalSecondaryIndexes" : "LocalSecondaryIndexes");
      w.StartObject();
      for (const auto& i : c.indexes) {
        if (i.global != global) continue;
        write_key(w, i.name);
        w.StartObject();
        write_key(w, "CapacityUnits");
        w.Double(i.units);
        w.EndObject();
      }
      w.EndObject();
    }
  }
  w.EndObject();
}

}  // namespace

void write_consumed_capacity(JsonWriter& w, std::string_view mode,
                             const ConsumedCapacity& capacity) {
  if (mode != "TOTAL" && mode != "INDEXES") return;
  write_key(w, "ConsumedCapacity");
  write_capacity_object(w, mode, capacity);
}

void write_consumed_capacity(JsonWriter& w, std::string_view mode,
                             const std::vector<ConsumedCapacity>& per_table) {
  if (mode != "TOTAL" && mode != "INDEXES") return;
  write_key(w, "ConsumedCapacity");
  w.StartArray();
  for (const auto& c : per_table) write_capacity_object(w, mode, c);
  w.EndArray();
}

void add_item_collection(std::vector<ItemCollection>& out, std::string_view table_name,
                         const TableDefinition& table, const Item& item) {
  if (table.local_indexes.empty()) return;
  out.push_back({std::string(table_name), table.key.hash.name, item.at(table.key.hash.name)});
}

void write_item_collection_metrics(JsonWriter& w, const std::vector<ItemCollection>& collections) {
  if (collections.empty()) return;
  std::vector<std::string_view> tables;
  for (const auto& c : collections) {
    if (std::find(tables.begin(), tables.end(), c.table_name) == tables.end()) {
      tables.push_back(c.table_name);
    }
  }
  write_key(w, "ItemCollectionMetrics");
  w.StartObject();
  for (std::string_view table : tables) {
    write_key(w, table);
    w.StartArray();
    for (const auto& c : collections) {
      if (c.table_name != table) continue;
      w.StartObject();
      write_key(w, "ItemCollectionKey");
      w.StartObject();
      write_key(w, c.key_name);
      write_value(w, c.key_value);
      w.EndObject();
      // Kumo's estimate is the smallest range DynamoDB reports.
      write_key(w, "SizeEstimateRangeGB");
      w.StartArray();
      w.Double(0.0);
      w.Double(1.0);
      w.EndArray();
      w.EndObject();
    }
    w.EndArray();
  }
  w.EndObject();
}

}  // namespace kumo::api
