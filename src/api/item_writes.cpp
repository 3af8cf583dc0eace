#include "api/item_writes.h"
#include "api/capacity.h"

#include <algorithm>
#include <vector>

#include "api/indexes.h"
#include "api/item_checks.h"
#include "model/api_error.h"
#include "model/capacity.h"
#include "partiql/evaluate.h"

namespace kumo::api {

Item ItemWrite::key() const {
  Item key;
  key.emplace(table->key.hash.name, item.at(table->key.hash.name));
  if (table->key.range) key.emplace(table->key.range->name, item.at(table->key.range->name));
  return key;
}

bool read_write(const JsonObject& spec, WriteKind kind, ItemWrite& w, Validation& validation) {
  w.kind = kind;
  w.spec = spec;
  const JsonValue* member = spec.element(kind == WriteKind::kPut ? "Item" : "Key");
  if (member) w.item = decode_item(*member, validation);
  w.expressions->read_maps(spec, validation);
  return member != nullptr;
}

void compile_write(ItemWrite& w, bool single_item) {
  if (w.kind == WriteKind::kUpdate) {
    w.expressions->compile(
        w.spec, {.condition = true,
                 .update = true,
                 .values_null_tail = "UpdateExpression and ConditionExpression are null"});
  } else {
    w.expressions->compile(
        w.spec,
        {.condition = true, .values_null_tail = single_item ? "" : "ConditionExpression is null"});
  }
  w.all_old_on_condition_failure =
      w.spec.string("ReturnValuesOnConditionCheckFailure") == "ALL_OLD";
}

ReturnValues read_return_values(const JsonObject& request, WriteKind kind) {
  const std::optional<std::string_view> text = request.string("ReturnValues");
  if (!text || *text == "NONE") return ReturnValues::kNone;
  if (*text == "ALL_OLD") return ReturnValues::kAllOld;
  if (kind != WriteKind::kUpdate) {
    throw ApiError::validation("ReturnValues can only be ALL_OLD or NONE");
  }
  // The member's enum is checked with the request's other members.
  if (*text == "UPDATED_OLD") return ReturnValues::kUpdatedOld;
  if (*text == "ALL_NEW") return ReturnValues::kAllNew;
  return ReturnValues::kUpdatedNew;
}

void check_put_size(const Item& item) {
  if (item_size(item) > kMaxItemSize) {
    throw ApiError::validation("Item size has exceeded the maximum allowed size");
  }
}

namespace {

// The names of a table's key attributes, and of every index's key attributes.
std::vector<std::string> table_key_names(const TableDefinition& table) {
  std::vector<std::string> names{table.key.hash.name};
  if (table.key.range) names.push_back(table.key.range->name);
  return names;
}

std::vector<std::string> index_key_names(const TableDefinition& table) {
  std::vector<std::string> names;
  for (const auto* indexes : {&table.local_indexes, &table.global_indexes}) {
    for (const auto& index : *indexes) {
      for (const auto& d : index.hash) names.push_back(d.name);
      for (const auto& d : index.range) names.push_back(d.name);
    }
  }
  return names;
}

}  // namespace

void bind_write(ItemWrite& w, engine::TablePtr table, KeyWording wording) {
  w.table = std::move(table);
  const TableDefinition& t = *w.table;
  if (w.kind != WriteKind::kPut) {
    check_key_parameter(t, w.item);
  } else {
    if (wording == KeyWording::kSchema) {
      for (const AttributeDefinition* d : {&t.key.hash, t.key.range ? &*t.key.range : nullptr}) {
        if (d == nullptr) continue;
        auto it = w.item.find(d->name);
        if (it == w.item.end() || it->second.type() != to_attr_type(d->type)) {
          throw ApiError::validation(kKeySchemaMismatch);
        }
      }
    }
    check_item_key(t, w.item);
    check_index_keys(t, w.item, false);
  }
  if (w.kind == WriteKind::kUpdate && w.expressions->update) {
    w.expressions->update->check_key_attributes(table_key_names(t), index_key_names(t));
  }
}

namespace {

void check_statement_condition(const ItemWrite& w, const std::optional<Item>& current) {
  const ItemWrite::Statement& s = *w.statement;
  if (w.kind == WriteKind::kPut) {
    if (current) throw ApiError::duplicate_item();
    return;
  }
  if (!current) {
    if (w.kind == WriteKind::kDelete) return;
    throw ApiError::conditional_check_failed();
  }
  if (s.where == partiql::kNoNode ||
      partiql::matches(*s.statement, s.where, s.parameters, *current)) {
    return;
  }
  throw ApiError::conditional_check_failed(w.all_old_on_condition_failure ? current : std::nullopt);
}

}  // namespace

void check_write_condition(const ItemWrite& w, const std::optional<Item>& current) {
  if (w.statement) {
    check_statement_condition(w, current);
    return;
  }
  if (!w.expressions->condition) return;
  static const Item kNoItem;
  if (w.expressions->condition->matches(current ? *current : kNoItem)) return;
  throw ApiError::conditional_check_failed(w.all_old_on_condition_failure ? current : std::nullopt);
}

std::optional<Item> apply_write(ItemWrite& w, const std::optional<Item>& current) {
  switch (w.kind) {
    case WriteKind::kPut:
      // A copy: a write that meets another front end's write of the item decides again.
      return w.item;
    case WriteKind::kDelete:
      return std::nullopt;
    case WriteKind::kConditionCheck:
      return current;
    case WriteKind::kUpdate:
      break;
  }
  // UpdateItem creates the item when absent: its key plus what the update sets. An update
  // that only removes creates nothing.
  const std::optional<expr::UpdateExpression>& update = w.expressions->update;
  if (!current && update && update->removes_only()) return std::nullopt;
  Item next = current ? *current : w.item;
  if (update) {
    update->apply(next);
    check_index_keys(*w.table, next, true);
  }
  if (item_size(next) > kMaxItemSize) {
    throw ApiError::validation("Item size to update has exceeded the maximum allowed size");
  }
  return next;
}

std::optional<Item> returned_attributes(const ItemWrite& w, const engine::WriteResult& result) {
  const std::optional<expr::UpdateExpression>& update = w.expressions->update;
  std::optional<Item> attributes;
  switch (w.return_values) {
    case ReturnValues::kNone:
      break;
    case ReturnValues::kAllOld:
      attributes = result.old_item;
      break;
    case ReturnValues::kAllNew:
      attributes = result.new_item;
      break;
    case ReturnValues::kUpdatedOld:
      if (result.old_item && update) attributes = update->updated_attributes(*result.old_item);
      break;
    case ReturnValues::kUpdatedNew:
      if (result.new_item && update) attributes = update->updated_attributes(*result.new_item);
      break;
  }
  if (attributes && attributes->empty()) attributes.reset();
  return attributes;
}

ConsumedCapacity write_capacity(std::string table_name, const engine::WriteResult& result,
                                double factor) {
  ConsumedCapacity capacity{
      std::move(table_name),
      factor * write_capacity_units(std::max(result.old_size, result.new_size)),
      {}};
  capacity.add_indexes(result.index_units, factor);
  return capacity;
}

}  // namespace kumo::api
