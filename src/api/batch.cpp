// BatchGetItem and BatchWriteItem.
#include <map>
#include <memory>
#include <set>

#include <fmt/format.h>

#include "api/capacity.h"
#include "api/expressions.h"
#include "api/item_checks.h"
#include "api/item_writes.h"
#include "api/operations.h"
#include "api/table_names.h"
#include "model/api_error.h"
#include "model/capacity.h"

namespace kumo::api {
namespace {

constexpr std::size_t kMaxBatchWrites = 25;
constexpr std::size_t kMaxBatchGets = 100;
// BatchGetItem answers at most 16 MB; the rest goes back as UnprocessedKeys.
constexpr std::size_t kMaxBatchGetResponseBytes = 16u << 20;

// Coral checks on the RequestItems map: table-name keys and list lengths. An empty map is
// left to the caller, as the two operations word it differently.
void check_request_items(const std::optional<JsonObject>& items, std::string_view list_member,
                         std::size_t max_per_table, CoralErrors& coral) {
  coral.require(items.has_value(), "requestItems");
  if (!items) return;
  for (auto [table, value] : *items) {
    CoralErrors name_check;
    name_check.check_table_name(table, "requestItems");
    if (!name_check.empty() && table.substr(0, 4) != "arn:") {
      coral.add(fmt::format("{{{}=...}}", table), "requestItems",
                "Map keys must satisfy constraint: [Member must have length less than or equal "
                "to 255, Member must have length greater than or equal to 3, Member must satisfy "
                "regular expression pattern: [a-zA-Z0-9_.-]+]");
    }
    std::size_t count = 0;
    if (list_member.empty()) {
      if (value.IsArray()) count = value.Size();
    } else if (value.IsObject()) {
      const JsonValue* keys = JsonObject(value).element(list_member);
      if (keys && keys->IsArray()) count = keys->Size();
      check_attributes_to_get(JsonObject(value),
                              fmt::format("requestItems.{}.member.attributesToGet", table), coral);
    }
    if (count >= 1 && count <= max_per_table) continue;
    if (list_member.empty()) {
      coral.add(fmt::format("{{{}=[...]}}", table), "requestItems",
                fmt::format("Map value must satisfy constraint: [Member must have length less "
                            "than or equal to {}, Member must have length greater than or equal "
                            "to 1]",
                            max_per_table));
    } else {
      // BatchGetItem names the Keys member as the request does, without its value.
      coral.add_without_value(
          fmt::format("RequestItems.{}.member.{}", table, list_member),
          count < 1
              ? "Member must have length greater than or equal to 1"
              : fmt::format("Member must have length less than or equal to {}", max_per_table));
    }
  }
}

// The text a key attribute's value was written with in the request's `key` object: as
// decoding does, the last non-null member of each name counts.
std::string_view written_key_value(const JsonValue& key, const AttributeDefinition& d) {
  auto last = [](const JsonValue& object, std::string_view name) -> const JsonValue* {
    const JsonValue* found = nullptr;
    for (auto [member, value] : JsonObject(object)) {
      if (member == name && !value.IsNull()) found = &value;
    }
    return found;
  };
  const JsonValue* value = last(key, d.name);
  const JsonValue* text = value ? last(*value, scalar_type_name(d.type)) : nullptr;
  return text && text->IsString() ? json_string(*text) : std::string_view();
}

// UnprocessedItems: per table, in request order, each refused request as it was sent.
void write_unprocessed_items(JsonWriter& w, const std::vector<const ItemWrite*>& refused) {
  w.StartObject();
  std::vector<bool> written(refused.size(), false);
  for (std::size_t i = 0; i < refused.size(); ++i) {
    if (written[i]) continue;
    write_key(w, refused[i]->table_name);
    w.StartArray();
    for (std::size_t j = i; j < refused.size(); ++j) {
      if (written[j] || refused[j]->table_name != refused[i]->table_name) continue;
      written[j] = true;
      w.StartObject();
      write_key(w, refused[j]->kind == WriteKind::kPut ? "PutRequest" : "DeleteRequest");
      refused[j]->spec.raw().Accept(w);
      w.EndObject();
    }
    w.EndArray();
  }
  w.EndObject();
}

}  // namespace

std::string batch_write_item(const Context& ctx, const JsonObject& request) {
  auto items = request.object("RequestItems");
  auto capacity_mode = request.string("ReturnConsumedCapacity").value_or("NONE");
  std::vector<ItemWrite> writes;
  Validation validation;
  bool malformed_request = false;
  if (items) {
    for (auto [table, list] : *items) {
      if (list.IsNull()) continue;
      if (!list.IsArray()) throw_not_array(list);
      for (const auto& element : JsonArray(list).objects()) {
        std::optional<JsonObject> put, del;
        if (element) {
          put = element->object("PutRequest");
          del = element->object("DeleteRequest");
        }
        if (!!put == !!del) {
          malformed_request = true;
          continue;
        }
        // A batch's writes carry no expressions: only their item or key is read.
        ItemWrite& w = writes.emplace_back();
        w.kind = put ? WriteKind::kPut : WriteKind::kDelete;
        w.spec = put ? *put : *del;
        w.table_name = std::string(table);
        auto member = put ? put->element("Item") : del->element("Key");
        if (member) w.item = decode_item(*member, validation);
      }
    }
  }
  CoralErrors coral;
  check_request_items(items, "", kMaxBatchWrites, coral);
  check_return_consumed_capacity(request, coral);
  check_return_item_collection_metrics(request, coral);
  coral.throw_if_any();
  if (items->size() == 0) {
    throw ApiError::validation("The requestItems parameter is required for BatchWriteItem");
  }
  if (writes.size() > kMaxBatchWrites) {
    throw ApiError::validation("Too many items requested for the BatchWriteItem call");
  }
  if (malformed_request) {
    throw ApiError::validation(
        "Supplied AttributeValue has more than one datatypes set, must contain exactly one of "
        "the supported datatypes");
  }
  validation.throw_if_failed();
  // Everything is checked before anything is written: one bad request rejects the call.
  std::map<std::string, engine::TablePtr> tables;
  for (const auto& w : writes) {
    if (!tables.count(w.table_name)) tables[w.table_name] = data_table(ctx, w.table_name);
  }
  std::set<std::string> keys;
  for (auto& w : writes) {
    if (w.kind == WriteKind::kPut) check_put_size(w.item);
    // BatchWriteItem words a missing or mistyped key of a Put as a schema mismatch.
    bind_write(w, tables[w.table_name], KeyWording::kSchema);
    if (!keys.insert(ctx.engine.item_key(*w.table, w.item)).second) {
      throw ApiError::validation("Provided list of item keys contains duplicates");
    }
  }
  const bool metrics = request.string("ReturnItemCollectionMetrics") == "SIZE";
  std::vector<ItemCollection> collections;
  std::vector<ConsumedCapacity> capacity;
  // Requests a throttle refused, or whose item a transaction of another front end holds
  // (after the wait a single write makes), returned in UnprocessedItems as they were sent:
  // a batch is independent puts and deletes, the others written.
  std::vector<const ItemWrite*> refused;
  std::size_t throttled = 0;
  std::exception_ptr first_refusal;
  for (auto& w : writes) {
    // Before the write: the item collections are counted from the request's item.
    std::size_t collections_before = collections.size();
    if (metrics) add_item_collection(collections, w.table_name, *w.table, w.item);
    try {
      engine::WriteResult result = ctx.engine.write_item(
          *w.table, ctx.engine.item_key(*w.table, w.item),
          [&](const std::optional<Item>& current) { return apply_write(w, current); },
          {.op = kumo::capacity::Operation::kBatchWriteItem});
      // Each request is charged on its own, rounded separately.
      add_capacity(capacity, write_capacity(w.table_name, result));
    } catch (const ApiError& e) {
      const bool held = e.code() == ApiError::Code::kTransactionConflict;
      if (!e.throttle() && !held) throw;
      if (!held) {
        if (!first_refusal) first_refusal = std::current_exception();
        ++throttled;
      }
      refused.push_back(&w);
      collections.resize(collections_before);
    }
  }
  // When a throttle refused every request, the call fails with the first refusal.
  if (throttled > 0 && throttled == writes.size()) std::rethrow_exception(first_refusal);
  JsonOut out;
  JsonWriter writer(out);
  writer.StartObject();
  write_key(writer, "UnprocessedItems");
  write_unprocessed_items(writer, refused);
  write_consumed_capacity(writer, capacity_mode, capacity);
  write_item_collection_metrics(writer, collections);
  writer.EndObject();
  return json_text(out);
}

std::string batch_get_item(const Context& ctx, const JsonObject& request) {
  auto items = request.object("RequestItems");
  auto capacity_mode = request.string("ReturnConsumedCapacity").value_or("NONE");
  struct TableRead {
    std::string table_name;
    JsonObject spec;
    std::vector<Item> keys;
    std::vector<const JsonValue*> key_json;  // each key as the request wrote it
    bool consistent = false;
    std::unique_ptr<RequestExpressions> expressions = std::make_unique<RequestExpressions>();
  };
  std::vector<TableRead> reads;
  Validation validation(DuplicateWording::kQuoted);
  std::size_t total = 0;
  if (items) {
    for (auto [table, spec_json] : *items) {
      if (spec_json.IsNull()) continue;
      if (!spec_json.IsObject()) throw_not_object(spec_json);
      TableRead read{std::string(table), JsonObject(spec_json), {}, {}, false};
      read.consistent = read.spec.boolean("ConsistentRead").value_or(false);
      if (auto keys = read.spec.array("Keys")) {
        for (const JsonValue& key : *keys) {
          read.keys.push_back(decode_item(key, validation));
          read.key_json.push_back(&key);
        }
      }
      if (auto list = read.spec.array("AttributesToGet")) list->strings();
      read.expressions->read_maps(read.spec, validation);
      total += read.keys.size();
      reads.push_back(std::move(read));
    }
  }
  CoralErrors coral;
  if (items && items->size() == 0) {
    coral.add_without_value("RequestItems", "Member must have length greater than or equal to 1");
  }
  check_request_items(items, "Keys", kMaxBatchGets, coral);
  check_return_consumed_capacity(request, coral);
  coral.throw_if_any();
  if (total > kMaxBatchGets) {
    throw ApiError::validation("Too many items requested for the BatchGetItem call");
  }
  validation.throw_if_failed();
  std::map<std::string, engine::TablePtr> tables;
  for (auto& read : reads) {
    read.expressions->compile(read.spec, {.projection = true});
    tables[read.table_name] = data_table(ctx, read.table_name);
  }
  for (auto& read : reads) {
    const TableDefinition& table = *tables[read.table_name];
    // Duplicates are keys written alike: two spellings of one number (1000 and 1e3) are
    // accepted, and the item they both name is read and returned once.
    std::set<std::pair<std::string_view, std::string_view>> written;
    std::set<std::string> stored;
    std::vector<Item> distinct;
    for (std::size_t i = 0; i < read.keys.size(); ++i) {
      check_key_parameter(table, read.keys[i]);
      const JsonValue& json = *read.key_json[i];
      if (!written
               .emplace(written_key_value(json, table.key.hash),
                        table.key.range ? written_key_value(json, *table.key.range) : "")
               .second) {
        throw ApiError::validation("Provided list of item keys contains duplicates");
      }
      if (stored.insert(ctx.engine.item_key(table, read.keys[i])).second) {
        distinct.push_back(std::move(read.keys[i]));
      }
    }
    read.keys = std::move(distinct);
  }

  JsonOut out;
  JsonWriter w(out);
  std::vector<ConsumedCapacity> capacity;
  // Keys left for UnprocessedKeys once the response reaches its size cap.
  std::vector<std::pair<const TableRead*, std::vector<const Item*>>> unprocessed;
  std::size_t response_bytes = 0;
  std::size_t processed = 0;
  std::exception_ptr first_refusal;
  w.StartObject();
  write_key(w, "Responses");
  w.StartObject();
  for (const auto& read : reads) {
    const TableDefinition& table = *tables[read.table_name];
    write_key(w, read.table_name);
    w.StartArray();
    double units = 0;
    std::vector<const Item*> left;
    for (const auto& key : read.keys) {
      if (response_bytes >= kMaxBatchGetResponseBytes) {
        left.push_back(&key);
        continue;
      }
      std::optional<Item> item;
      try {
        item = ctx.engine.get_item(table, key, read.consistent,
                                   {.op = kumo::capacity::Operation::kBatchGetItem});
        ++processed;
      } catch (const ApiError& e) {
        // A refused key is left for UnprocessedKeys.
        if (!e.throttle()) throw;
        if (!first_refusal) first_refusal = std::current_exception();
        left.push_back(&key);
        continue;
      }
      const std::size_t size = item ? item_size(*item) : 0;
      units += read_capacity_units(size, read.consistent);
      if (!item) continue;
      engine::RequestScope::returned(1);
      response_bytes += size;
      write_item(w, read.expressions->projects() ? read.expressions->project(*item) : *item);
    }
    w.EndArray();
    capacity.push_back({read.table_name, units, {}});
    if (!left.empty()) unprocessed.emplace_back(&read, std::move(left));
  }
  // When every key was refused, the call fails with the first refusal.
  if (processed == 0 && first_refusal) std::rethrow_exception(first_refusal);
  w.EndObject();
  write_key(w, "UnprocessedKeys");
  w.StartObject();
  for (const auto& [read, keys] : unprocessed) {
    write_key(w, read->table_name);
    w.StartObject();
    write_key(w, "Keys");
    w.StartArray();
    for (const Item* key : keys) write_item(w, *key);
    w.EndArray();
    if (read->consistent) {
      write_key(w, "ConsistentRead");
      w.Bool(true);
    }
    for (std::string_view member : {"ProjectionExpression"}) {
      if (auto text = read->spec.string(member)) {
        write_key(w, member);
        write_string(w, *text);
      }
    }
    if (auto names = read->spec.object("ExpressionAttributeNames")) {
      write_key(w, "ExpressionAttributeNames");
      w.StartObject();
      for (auto [k, v] : *names) {
        if (!v.IsString()) continue;
        write_key(w, k);
        write_string(w, json_string(v));
      }
      w.EndObject();
    }
    if (auto list = read->spec.array("AttributesToGet")) {
      write_key(w, "AttributesToGet");
      w.StartArray();
      for (const auto& name : list->strings()) {
        if (name) write_string(w, *name);
      }
      w.EndArray();
    }
    w.EndObject();
  }
  w.EndObject();
  write_consumed_capacity(w, capacity_mode, capacity);
  w.EndObject();
  return json_text(out);
}

}  // namespace kumo::api
