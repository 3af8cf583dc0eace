#include "api/capacity.h"

#include <algorithm>

namespace kumo::api {

void check_return_consumed_capacity(const JsonObject& request, CoralErrors& coral) {
  coral.check_enum(request.string("ReturnConsumedCapacity"), "returnConsumedCapacity",
                   {"INDEXES", "TOTAL", "NONE"});
}

void check_return_item_collection_metrics(const JsonObject& request, CoralErrors& coral) {
  coral.check_enum(request.string("ReturnItemCollectionMetrics"), "returnItemCollectionMetrics",
                   {"SIZE", "NONE"});
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

// "CapacityUnits" and, for rated units, "ReadCapacityUnits" or "WriteCapacityUnits".
void write_units(JsonWriter& w, ConsumedCapacity::Rated rated, double units) {
  write_key(w, "CapacityUnits");
  w.Double(units);
  if (rated == ConsumedCapacity::Rated::kCapacity) return;
  write_key(w,
            rated == ConsumedCapacity::Rated::kRead ? "ReadCapacityUnits" : "WriteCapacityUnits");
  w.Double(units);
}

void write_capacity_object(JsonWriter& w, std::string_view mode, const ConsumedCapacity& c) {
  w.StartObject();
  write_key(w, "TableName");
  write_string(w, c.table_name);
  write_units(w, c.rated, c.total());
  if (mode == "INDEXES") {
    write_key(w, "Table");
    w.StartObject();
    write_units(w, c.rated, c.table);
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
        write_units(w, c.rated, i.units);
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
      if (c.table_name == table) write_item_collection(w, c);
    }
    w.EndArray();
  }
  w.EndObject();
}

void write_item_collection(JsonWriter& w, const ItemCollection& collection) {
  w.StartObject();
  write_key(w, "ItemCollectionKey");
  w.StartObject();
  write_key(w, collection.key_name);
  write_value(w, collection.key_value);
  w.EndObject();
  // Kumo's estimate is the smallest range DynamoDB reports.
  write_key(w, "SizeEstimateRangeGB");
  w.StartArray();
  w.Double(0.0);
  w.Double(1.0);
  w.EndArray();
  w.EndObject();
}

}  // namespace kumo::api
