// PutItem, GetItem, DeleteItem (dynamodb-contract.md §6.1, §7.1–7.4, §9).
#include <set>

#include <fmt/format.h>

#include "api/expressions.h"
#include "api/indexes.h"
#include "api/item_checks.h"
#include "api/operations.h"
#include "model/api_error.h"
#include "model/capacity.h"

namespace kumo::api {
namespace {

constexpr std::string_view kInvalid = "One or more parameter values were invalid: ";
constexpr std::size_t kMaxPartitionKeyBytes = 2048;
constexpr std::size_t kMaxSortKeyBytes = 1024;

// On PutItem, UpdateItem and DeleteItem DynamoDB wraps request-validation errors that are
// not already in coral form in "1 validation error detected: " (§1.5, the 2026 write
// envelope). Errors that depend on the table or the stored item stay bare.
template <typename F>
auto with_write_envelope(F&& decode) {
  try {
    return decode();
  } catch (const ApiError& e) {
    if (e.type() == "com.amazon.coral.validate#ValidationException" && e.message() &&
        e.message()->find(" validation error") == std::string::npos) {
      throw ApiError::validation("1 validation error detected: " + *e.message());
    }
    throw;
  }
}

void check_common_enums(const JsonObject& request, CoralErrors& coral) {
  coral.check_enum(request.string("ReturnConsumedCapacity"), "returnConsumedCapacity",
                   {"INDEXES", "TOTAL", "NONE"});
}

}  // namespace

std::size_t key_value_size(const AttributeValue& v) {
  return v.type() == AttrType::N ? v.as_number().size_bytes() : v.as_string().size();
}

// An item written by PutItem must carry the table's key with the right types, non-empty
// and within the size limits (§7.1, §2.5).
void check_item_key(const TableDefinition& t, const Item& item) {
  std::vector<const AttributeDefinition*> keys{&t.key.hash};
  if (t.key.range) keys.push_back(&*t.key.range);
  for (const auto* k : keys) {
    if (!item.count(k->name)) {
      throw ApiError::validation(
          fmt::format("{}Missing the key {} in the item", kInvalid, k->name));
    }
  }
  for (const auto* k : keys) {
    const AttributeValue& v = item.find(k->name)->second;
    if (v.type() != to_attr_type(k->type)) {
      throw ApiError::validation(fmt::format("{}Type mismatch for key {} expected: {} actual: {}",
                                             kInvalid, k->name, scalar_type_name(k->type),
                                             type_name(v.type())));
    }
  }
  for (const auto* k : keys) {
    const AttributeValue& v = item.find(k->name)->second;
    if (v.type() != AttrType::N && v.as_string().empty()) {
      throw ApiError::validation(fmt::format(
          "One or more parameter values are not valid. The AttributeValue for a key attribute "
          "cannot contain an empty {} value. Key: {}",
          v.type() == AttrType::S ? "string" : "binary", k->name));
    }
  }
  if (key_value_size(item.find(t.key.hash.name)->second) > kMaxPartitionKeyBytes) {
    throw ApiError::validation(std::string(kInvalid) +
                               "Size of hashkey has exceeded the maximum size limit of2048 bytes");
  }
  if (t.key.range && key_value_size(item.find(t.key.range->name)->second) > kMaxSortKeyBytes) {
    throw ApiError::validation(std::string(kInvalid) +
                               "Aggregated size of all range keys has exceeded the size limit "
                               "of 1024 bytes");
  }
}

// A Key parameter must be exactly the table's key attributes with their types (§6.1).
void check_key_parameter(const TableDefinition& t, const Item& key) {
  const std::size_t expected = t.key.range ? 2 : 1;
  auto matches = [&](const AttributeDefinition& d) {
    auto it = key.find(d.name);
    return it != key.end() && it->second.type() == to_attr_type(d.type);
  };
  if (key.size() != expected || !matches(t.key.hash) || (t.key.range && !matches(*t.key.range))) {
    throw ApiError::validation("The provided key element does not match the schema");
  }
  for (const auto& [name, v] : key) {
    if (v.type() != AttrType::N && v.as_string().empty()) {
      throw ApiError::validation(fmt::format(
          "{}The AttributeValue for a key attribute cannot contain an empty {} value. Key: {}",
          kInvalid, v.type() == AttrType::S ? "string" : "binary", name));
    }
  }
  if (key_value_size(key.find(t.key.hash.name)->second) > kMaxPartitionKeyBytes) {
    throw ApiError::validation(std::string(kInvalid) +
                               "Size of hashkey has exceeded the maximum size limit of2048 bytes");
  }
  if (t.key.range && key_value_size(key.find(t.key.range->name)->second) > kMaxSortKeyBytes) {
    throw ApiError::validation(std::string(kInvalid) +
                               "Aggregated size of all range keys has exceeded the size limit "
                               "of 1024 bytes");
  }
}

namespace {

// ReturnValues for PutItem and DeleteItem: NONE or ALL_OLD (§7.2).
bool read_return_all_old(std::optional<std::string_view> return_values) {
  if (!return_values || *return_values == "NONE") return false;
  if (*return_values == "ALL_OLD") return true;
  throw ApiError::validation("ReturnValues can only be ALL_OLD or NONE");
}

void check_write_enums(const JsonObject& request, CoralErrors& coral) {
  check_common_enums(request, coral);
  coral.check_enum(request.string("ReturnValues"), "returnValues",
                   {"ALL_NEW", "UPDATED_OLD", "ALL_OLD", "NONE", "UPDATED_NEW"});
  coral.check_enum(request.string("ReturnItemCollectionMetrics"), "returnItemCollectionMetrics",
                   {"SIZE", "NONE"});
  coral.check_enum(request.string("ReturnValuesOnConditionCheckFailure"),
                   "returnValuesOnConditionCheckFailure", {"ALL_OLD", "NONE"});
}

std::string write_response(const JsonObject& request, std::string_view table_name,
                           const TableDefinition& table, const Item& key,
                           const std::optional<Item>& attributes,
                           const engine::WriteResult& result) {
  // A write costs the larger of the old and new item (§9.2), plus its index writes (§9.3).
  ConsumedCapacity capacity{std::string(table_name),
                            write_capacity_units(std::max(result.old_size, result.new_size)),
                            {}};
  capacity.add_indexes(result.index_units);
  JsonOut out;
  JsonWriter w(out);
  w.StartObject();
  if (attributes) {
    write_key(w, "Attributes");
    write_item(w, *attributes);
  }
  write_consumed_capacity(w, request.string("ReturnConsumedCapacity").value_or("NONE"), capacity);
  // Item collections exist only on tables with LSIs (§9.4); Kumo's estimate is the
  // smallest range DynamoDB reports.
  if (request.string("ReturnItemCollectionMetrics") == "SIZE" && !table.local_indexes.empty()) {
    write_key(w, "ItemCollectionMetrics");
    w.StartObject();
    write_key(w, "ItemCollectionKey");
    w.StartObject();
    write_key(w, table.key.hash.name);
    write_value(w, key.at(table.key.hash.name));
    w.EndObject();
    write_key(w, "SizeEstimateRangeGB");
    w.StartArray();
    w.Double(0.0);
    w.Double(1.0);
    w.EndArray();
    w.EndObject();
  }
  w.EndObject();
  return json_text(out);
}

}  // namespace

// The condition of a write, evaluated under the item's lock: on failure nothing is written and
// the client gets ConditionalCheckFailedException, with the current item when it asked for
// ALL_OLD (§7.3).
void check_condition(const RequestExpressions& expressions, const JsonObject& request,
                     const std::optional<Item>& current) {
  if (!expressions.condition) return;
  static const Item kNoItem;
  if (expressions.condition->matches(current ? *current : kNoItem)) return;
  const bool all_old = request.string("ReturnValuesOnConditionCheckFailure") == "ALL_OLD";
  throw ApiError::conditional_check_failed(all_old ? current : std::nullopt);
}

// What every single-item write decodes and checks first, in DynamoDB's order: JSON types
// while decoding, then model constraints (thrown here); values and expressions are checked
// by the caller inside the write envelope.
struct WriteRequest {
  std::optional<std::string_view> table_name;
  Item item;  // the Item of a PutItem, the Key of the others
  Validation validation;
  RequestExpressions expressions;
};

void read_write_request(const JsonObject& request, std::string_view item_member,
                        WriteRequest& out) {
  out.table_name = request.string("TableName");
  auto item_json = request.element(item_member);
  if (item_json) out.item = decode_item(*item_json, out.validation);
  out.expressions.read_maps(request, out.validation);
  CoralErrors coral;
  check_table_name_or_arn(coral, out.table_name, "tableName");
  coral.require(item_json != nullptr, item_member == "Item" ? "item" : "key");
  check_write_enums(request, coral);
  coral.throw_if_any();
}

std::string put_item(const Context& ctx, const JsonObject& request) {
  WriteRequest w;
  read_write_request(request, "Item", w);
  const auto& table_name = w.table_name;
  Item& item = w.item;
  RequestExpressions& expressions = w.expressions;
  const bool all_old = with_write_envelope([&] {
    w.validation.throw_if_failed();
    expressions.compile(request,
                        {.condition = true, .values_null_tail = "ConditionExpression is null"});
    return read_return_all_old(request.string("ReturnValues"));
  });
  if (item_size(item) > kMaxItemSize) {
    throw ApiError::validation("Item size has exceeded the maximum allowed size");
  }
  engine::TablePtr table = data_table(ctx, *table_name);
  check_item_key(*table, item);
  check_index_keys(*table, item, false);

  engine::WriteResult result =
      ctx.engine.write_item(*table, item, [&](const std::optional<Item>& current) {
        check_condition(expressions, request, current);
        return std::move(item);
      });
  return write_response(request, *table_name, *table, *result.new_item,
                        all_old ? result.old_item : std::nullopt, result);
}

std::string get_item(const Context& ctx, const JsonObject& request) {
  auto table_name = request.string("TableName");
  auto key_json = request.element("Key");
  auto consistent = request.boolean("ConsistentRead").value_or(false);
  auto capacity_mode = request.string("ReturnConsumedCapacity").value_or("NONE");
  auto attributes_json = request.array("AttributesToGet");
  if (attributes_json) attributes_json->strings();  // JSON types are checked before validation
  Validation validation;
  Item key;
  if (key_json) key = decode_item(*key_json, validation);
  RequestExpressions expressions;
  expressions.read_maps(request, validation);

  CoralErrors coral;
  check_table_name_or_arn(coral, table_name, "tableName");
  coral.require(key_json != nullptr, "key");
  if (attributes_json && attributes_json->size() == 0) {
    coral.add("[]", "attributesToGet", "Member must have length greater than or equal to 1");
  }
  check_common_enums(request, coral);
  coral.throw_if_any();

  validation.throw_if_failed();
  expressions.compile(request, {.projection = true});
  engine::TablePtr table = data_table(ctx, *table_name);
  check_key_parameter(*table, key);

  // Written as stored unless a projection must look into it.
  std::optional<engine::StoredItem> item = ctx.engine.get_stored(*table, key);
  const double units = read_capacity_units(item ? item->size() : 0, consistent);
  JsonOut out(nullptr, json_capacity(item ? item->size() : 0));
  JsonWriter w(out);
  w.StartObject();
  if (item) {
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

std::string delete_item(const Context& ctx, const JsonObject& request) {
  WriteRequest w;
  read_write_request(request, "Key", w);
  const auto& table_name = w.table_name;
  const Item& key = w.item;
  RequestExpressions& expressions = w.expressions;
  const bool all_old = with_write_envelope([&] {
    w.validation.throw_if_failed();
    expressions.compile(request,
                        {.condition = true, .values_null_tail = "ConditionExpression is null"});
    return read_return_all_old(request.string("ReturnValues"));
  });
  engine::TablePtr table = data_table(ctx, *table_name);
  check_key_parameter(*table, key);

  engine::WriteResult result =
      ctx.engine.write_item(*table, key, [&](const std::optional<Item>& current) {
        check_condition(expressions, request, current);
        return std::optional<Item>();
      });
  return write_response(request, *table_name, *table, key, all_old ? result.old_item : std::nullopt,
                        result);
}

std::string update_item(const Context& ctx, const JsonObject& request) {
  WriteRequest w;
  read_write_request(request, "Key", w);
  const auto& table_name = w.table_name;
  const Item& key = w.item;
  RequestExpressions& expressions = w.expressions;
  const auto return_values = request.string("ReturnValues").value_or("NONE");
  with_write_envelope([&] {
    w.validation.throw_if_failed();
    expressions.compile(request,
                        {.condition = true,
                         .update = true,
                         .values_null_tail = "UpdateExpression and ConditionExpression are null"});
  });
  engine::TablePtr table = data_table(ctx, *table_name);
  check_key_parameter(*table, key);
  if (expressions.update) {
    std::vector<std::string> key_names{table->key.hash.name};
    if (table->key.range) key_names.push_back(table->key.range->name);
    std::vector<std::string> index_keys;
    for (const auto* indexes : {&table->local_indexes, &table->global_indexes}) {
      for (const auto& index : *indexes) {
        for (const auto& d : index.hash) index_keys.push_back(d.name);
        for (const auto& d : index.range) index_keys.push_back(d.name);
      }
    }
    expressions.update->check_key_attributes(key_names, index_keys);
  }

  expr::UpdatedPaths updated;
  engine::WriteResult result =
      ctx.engine.write_item(*table, key, [&](const std::optional<Item>& current) {
        check_condition(expressions, request, current);
        // UpdateItem creates the item when absent: its key plus what the update sets (§7.4).
        Item next = current ? *current : key;
        if (expressions.update) {
          expressions.update->apply(next, &updated);
          check_index_keys(*table, next, true);
        }
        if (item_size(next) > kMaxItemSize) {
          throw ApiError::validation("Item size to update has exceeded the maximum allowed size");
        }
        return next;
      });

  std::optional<Item> attributes;
  if (return_values == "ALL_OLD") {
    attributes = result.old_item;
  } else if (return_values == "ALL_NEW") {
    attributes = result.new_item;
  } else if (return_values == "UPDATED_OLD" && result.old_item) {
    attributes = expr::updated_old(*result.old_item, updated);
  } else if (return_values == "UPDATED_NEW" && result.new_item) {
    attributes = expr::updated_new(*result.new_item, updated);
  }
  if (attributes && attributes->empty()) attributes.reset();
  return write_response(request, *table_name, *table, key, attributes, result);
}

}  // namespace kumo::api
