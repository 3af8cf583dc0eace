// PutItem, GetItem, UpdateItem, DeleteItem.
#include "api/capacity.h"
#include "api/expressions.h"
#include "api/item_checks.h"
#include "api/item_writes.h"
#include "api/operations.h"
#include "api/stored_item_json.h"
#include "api/table_names.h"
#include "model/api_error.h"
#include "model/capacity.h"

namespace kumo::api {
namespace {

// A single-item write's request, decoded and checked in DynamoDB's order: JSON types while
// decoding, then model constraints; values and expressions are checked by the caller
// inside the write envelope.
void read_single_write(const JsonObject& request, WriteKind kind, ItemWrite& w,
                       Validation& validation) {
  const std::optional<std::string_view> table_name = request.string("TableName");
  w.table_name = std::string(table_name.value_or(""));
  const bool item_given = read_write(request, kind, w, validation);
  CoralErrors coral;
  check_item_table_name(coral, table_name, "tableName");
  coral.require(item_given, kind == WriteKind::kPut ? "item" : "key");
  check_return_consumed_capacity(request, coral);
  coral.check_enum(request.string("ReturnValues"), "returnValues",
                   {"ALL_NEW", "UPDATED_OLD", "ALL_OLD", "NONE", "UPDATED_NEW"});
  check_return_item_collection_metrics(request, coral);
  coral.check_enum(request.string("ReturnValuesOnConditionCheckFailure"),
                   "returnValuesOnConditionCheckFailure", {"ALL_OLD", "NONE"});
  coral.throw_if_any();
}

// Decodes and checks a single-item write up to its table: everything but the item's key.
ItemWrite decode_single_write(const JsonObject& request, WriteKind kind) {
  ItemWrite w;
  Validation validation(DuplicateWording::kQuoted);
  read_single_write(request, kind, w, validation);
  with_write_envelope([&] {
    validation.throw_if_failed();
    compile_write(w, true);
    w.return_values = read_return_values(request, kind);
  });
  return w;
}

// Applies the write to its item under the item's lock (condition first) and answers it.
std::string apply_single_write(const Context& ctx, const JsonObject& request, ItemWrite& w,
                               capacity::Operation op) {
  // Before the write: the item collections are counted from the request's item. Item collections
  // exist only on tables with local secondary indexes.
  const std::string storage_key = ctx.engine.item_key(*w.table, w.item);
  std::vector<ItemCollection> collections;
  add_item_collection(collections, w.table_name, *w.table, w.item);
  engine::WriteResult result = ctx.engine.write_item(*w.table, storage_key,
                                                     [&](const std::optional<Item>& current) {
                                                       check_write_condition(w, current);
                                                       return apply_write(w, current);
                                                     },
                                                     {.op = op});
  const std::optional<Item> attributes = returned_attributes(w, result);
  JsonOut out;
  JsonWriter writer(out);
  writer.StartObject();
  if (attributes) {
    write_key(writer, "Attributes");
    write_item(writer, *attributes);
  }
  write_consumed_capacity(writer, request.string("ReturnConsumedCapacity").value_or("NONE"),
                          write_capacity(w.table_name, result));
  if (request.string("ReturnItemCollectionMetrics") == "SIZE" && !collections.empty()) {
    write_key(writer, "ItemCollectionMetrics");
    write_item_collection(writer, collections.front());
  }
  writer.EndObject();
  return json_text(out);
}

}  // namespace

std::string put_item(const Context& ctx, const JsonObject& request) {
  ItemWrite w = decode_single_write(request, WriteKind::kPut);
  check_put_size(w.item);
  bind_write(w, data_table(ctx, w.table_name));
  return apply_single_write(ctx, request, w, capacity::Operation::kPutItem);
}

std::string update_item(const Context& ctx, const JsonObject& request) {
  ItemWrite w = decode_single_write(request, WriteKind::kUpdate);
  bind_write(w, data_table(ctx, w.table_name));
  return apply_single_write(ctx, request, w, capacity::Operation::kUpdateItem);
}

std::string delete_item(const Context& ctx, const JsonObject& request) {
  ItemWrite w = decode_single_write(request, WriteKind::kDelete);
  bind_write(w, data_table(ctx, w.table_name));
  return apply_single_write(ctx, request, w, capacity::Operation::kDeleteItem);
}

std::string get_item(const Context& ctx, const JsonObject& request) {
  auto table_name = request.string("TableName");
  auto key_json = request.element("Key");
  auto consistent = request.boolean("ConsistentRead").value_or(false);
  auto capacity_mode = request.string("ReturnConsumedCapacity").value_or("NONE");
  auto attributes_json = request.array("AttributesToGet");
  if (attributes_json) attributes_json->strings();  // JSON types are checked before validation
  Validation validation(DuplicateWording::kQuoted);
  Item key;
  if (key_json) key = decode_item(*key_json, validation);
  RequestExpressions expressions;
  expressions.read_maps(request, validation);

  CoralErrors coral;
  check_item_table_name(coral, table_name, "tableName");
  coral.require(key_json != nullptr, "key");
  check_attributes_to_get(request, "attributesToGet", coral);
  check_return_consumed_capacity(request, coral);
  coral.throw_if_any();

  validation.throw_if_failed();
  expressions.compile(request, {.projection = true});
  engine::TablePtr table = data_table(ctx, *table_name);
  check_key_parameter(*table, key);

  // Written as stored unless a projection must look into it.
  std::optional<engine::StoredItem> item =
      ctx.engine.get_stored(*table, key, consistent, {.op = capacity::Operation::kGetItem});
  const double units = read_capacity_units(item ? item->size() : 0, consistent);
  JsonOut out(nullptr, json_capacity(item ? item->size() : 0));
  JsonWriter w(out);
  w.StartObject();
  if (item) {
    engine::RequestScope::returned(1);
    write_key(w, "Item");
    if (expressions.projects()) {
      write_item(w, expressions.project(item->decode()));
    } else {
      write_item(w, *item);
    }
  }
  write_consumed_capacity(w, capacity_mode, ConsumedCapacity{std::string(*table_name), units, {}});
  w.EndObject();
  return json_text(out);
}

}  // namespace kumo::api
