// TransactWriteItems and TransactGetItems (dynamodb-contract.md §7.6, §7.7, §9.2).
#include <algorithm>
#include <map>
#include <memory>
#include <set>

#include <fmt/format.h>

#include "api/expressions.h"
#include "api/indexes.h"
#include "api/item_checks.h"
#include "api/operations.h"
#include "codec/key_codec.h"
#include "model/api_error.h"
#include "model/capacity.h"

namespace kumo::api {
namespace {

constexpr std::size_t kMaxTransactItems = 100;

// A canonical rendering of JSON (object members sorted), so that two requests that differ
// only in member order have the same fingerprint (§7.6 idempotency).
void canonical(const JsonValue& e, JsonWriter& w) {
  if (e.IsObject()) {
    std::vector<std::pair<std::string_view, const JsonValue*>> members;
    for (auto [key, value] : JsonObject(e)) members.emplace_back(key, &value);
    std::sort(members.begin(), members.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    w.StartObject();
    for (const auto& [key, value] : members) {
      write_key(w, key);
      canonical(*value, w);
    }
    w.EndObject();
  } else if (e.IsArray()) {
    w.StartArray();
    for (const JsonValue& v : JsonArray(e)) canonical(v, w);
    w.EndArray();
  } else {
    e.Accept(w);
  }
}

std::string storage_key(const TableDefinition& table, const Item& item) {
  const AttributeValue* sort = table.key.range ? &item.at(table.key.range->name) : nullptr;
  return codec::item_key(table.id, item.at(table.key.hash.name), sort);
}

struct Action {
  enum class Kind { kConditionCheck, kPut, kUpdate, kDelete } kind;
  JsonObject spec;
  std::string table_name;
  Item item;  // Put: the item; others: the key
  std::unique_ptr<RequestExpressions> expressions = std::make_unique<RequestExpressions>();
  engine::TablePtr table = nullptr;
};

}  // namespace

std::string transact_write_items(const Context& ctx, const JsonObject& request) {
  auto list = request.array("TransactItems");
  auto token = request.string("ClientRequestToken");
  auto capacity_mode = request.string("ReturnConsumedCapacity").value_or("NONE");
  Validation validation;
  std::vector<Action> actions;
  bool malformed = false;
  CoralErrors coral;
  if (list) {
    std::size_t i = 0;
    for (const auto& element : list->objects()) {
      ++i;
      static constexpr std::pair<std::string_view, Action::Kind> kKinds[] = {
          {"ConditionCheck", Action::Kind::kConditionCheck},
          {"Put", Action::Kind::kPut},
          {"Update", Action::Kind::kUpdate},
          {"Delete", Action::Kind::kDelete}};
      int found = 0;
      for (const auto& [member, kind] : kKinds) {
        if (!element) break;
        auto spec = element->object(member);
        if (!spec) continue;
        ++found;
        Action action{kind, *spec, {}, {}};
        auto table_name = spec->string("TableName");
        const std::string path =
            fmt::format("transactItems.{}.member.{}{}", i,
                        static_cast<char>(std::tolower(member[0])), member.substr(1));
        check_table_name_or_arn(coral, table_name, path + ".tableName");
        action.table_name = std::string(table_name.value_or(""));
        auto item_json = spec->element(kind == Action::Kind::kPut ? "Item" : "Key");
        coral.require(item_json != nullptr, path + (kind == Action::Kind::kPut ? ".item" : ".key"));
        if (item_json) action.item = decode_item(*item_json, validation);
        if (kind == Action::Kind::kConditionCheck) {
          coral.require(spec->has("ConditionExpression"), path + ".conditionExpression");
        }
        if (kind == Action::Kind::kUpdate) {
          coral.require(spec->has("UpdateExpression"), path + ".updateExpression");
        }
        coral.check_enum(spec->string("ReturnValuesOnConditionCheckFailure"),
                         path + ".returnValuesOnConditionCheckFailure", {"ALL_OLD", "NONE"});
        action.expressions->read_maps(*spec, validation);
        actions.push_back(std::move(action));
      }
      if (found != 1) malformed = true;
    }
  }
  coral.require(list.has_value(), "transactItems");
  if (list && (list->size() < 1 || list->size() > kMaxTransactItems)) {
    coral.add("[...]", "transactItems",
              list->size() < 1 ? "Member must have length greater than or equal to 1"
                               : fmt::format("Member must have length less than or equal to {}",
                                             kMaxTransactItems));
  }
  if (token) coral.check_length(*token, "clientRequestToken", 1, 36);
  coral.check_enum(request.string("ReturnConsumedCapacity"), "returnConsumedCapacity",
                   {"INDEXES", "TOTAL", "NONE"});
  coral.check_enum(request.string("ReturnItemCollectionMetrics"), "returnItemCollectionMetrics",
                   {"SIZE", "NONE"});
  coral.throw_if_any();
  if (malformed) {
    throw ApiError::validation(
        "TransactItems can only contain one of Check, Put, Update or Delete");
  }
  validation.throw_if_failed();
  for (auto& action : actions) {
    switch (action.kind) {
      case Action::Kind::kUpdate:
        action.expressions->compile(
            action.spec, {.condition = true,
                          .update = true,
                          .values_null_tail = "UpdateExpression and ConditionExpression are null"});
        break;
      default:
        action.expressions->compile(
            action.spec, {.condition = true, .values_null_tail = "ConditionExpression is null"});
    }
    if (action.kind == Action::Kind::kPut && item_size(action.item) > kMaxItemSize) {
      throw ApiError::validation("Item size has exceeded the maximum allowed size");
    }
  }
  std::set<std::string> keys;
  for (auto& action : actions) {
    action.table = data_table(ctx, action.table_name);
    const TableDefinition& table = *action.table;
    if (action.kind == Action::Kind::kPut) {
      check_item_key(table, action.item);
      check_index_keys(table, action.item, false);
    } else {
      check_key_parameter(table, action.item);
    }
    if (action.kind == Action::Kind::kUpdate && action.expressions->update) {
      std::vector<std::string> key_names{table.key.hash.name};
      if (table.key.range) key_names.push_back(table.key.range->name);
      action.expressions->update->check_key_attributes(key_names);
    }
    if (!keys.insert(storage_key(table, action.item)).second) {
      throw ApiError::validation(
          "Transaction request cannot include multiple operations on one item");
    }
  }

  engine::TransactionTokens& tokens = ctx.engine.transaction_tokens();
  std::string token_key;
  if (token) {
    token_key = std::string(*token);
    JsonOut canonical_request;
    JsonWriter writer(canonical_request);
    canonical(request.raw(), writer);
    const std::string fingerprint = json_text(canonical_request);
    std::string previous;
    switch (tokens.begin(token_key, fingerprint, &previous)) {
      case engine::TransactionTokens::State::kNew:
        break;
      case engine::TransactionTokens::State::kCompleted:
        return previous;
      case engine::TransactionTokens::State::kInProgress:
        throw ApiError::transaction_in_progress();
      case engine::TransactionTokens::State::kMismatch:
        throw ApiError::idempotent_parameter_mismatch();
    }
  }
  try {
    std::vector<engine::TransactWrite> writes;
    for (auto& action : actions) {
      engine::TransactWrite w;
      w.table = action.table.get();
      w.key = action.item;
      if (action.kind != Action::Kind::kPut) {
        // Key only: drop nothing, the key is exactly the table's key here.
      } else {
        Item key;
        key.emplace(w.table->key.hash.name, action.item.at(w.table->key.hash.name));
        if (w.table->key.range) {
          key.emplace(w.table->key.range->name, action.item.at(w.table->key.range->name));
        }
        w.key = std::move(key);
      }
      const Action* a = &action;
      w.check = [a](const std::optional<Item>& current) {
        check_condition(*a->expressions, a->spec, current);
      };
      switch (action.kind) {
        case Action::Kind::kConditionCheck:
          w.check_only = true;
          break;
        case Action::Kind::kPut:
          w.mutation = [a](const std::optional<Item>&) { return std::optional<Item>(a->item); };
          break;
        case Action::Kind::kDelete:
          w.mutation = [](const std::optional<Item>&) { return std::optional<Item>(); };
          break;
        case Action::Kind::kUpdate:
          w.mutation = [a](const std::optional<Item>& current) {
            Item next = current ? *current : a->item;
            if (a->expressions->update) {
              a->expressions->update->apply(next);
              check_index_keys(*a->table, next, true);
            }
            if (item_size(next) > kMaxItemSize) {
              throw ApiError::validation(
                  "Item size to update has exceeded the maximum allowed size");
            }
            return std::optional<Item>(std::move(next));
          };
          break;
      }
      writes.push_back(std::move(w));
    }
    std::vector<engine::WriteResult> results;
    std::vector<std::exception_ptr> failures;
    if (!ctx.engine.transact_write(writes, &results, &failures)) {
      std::vector<CancellationReason> reasons;
      for (const auto& failure : failures) {
        if (!failure) {
          reasons.push_back({"None", std::nullopt, std::nullopt});
          continue;
        }
        try {
          std::rethrow_exception(failure);
        } catch (const ApiError& e) {
          if (e.type().ends_with("#ConditionalCheckFailedException")) {
            reasons.push_back({"ConditionalCheckFailed", *e.message(), e.item()});
          } else {
            reasons.push_back({"ValidationError", e.message(), std::nullopt});
          }
        }
      }
      throw ApiError::transaction_canceled(std::move(reasons));
    }
    // Transactions cost twice the units of the same writes; a replay of a completed
    // request under its ClientRequestToken writes nothing and reports the (transactional)
    // read units of the items instead (§7.6, §9.2).
    std::vector<ConsumedCapacity> capacity, replay_capacity;
    for (std::size_t i = 0; i < actions.size(); ++i) {
      const std::size_t size = std::max(results[i].old_size, results[i].new_size);
      ConsumedCapacity c{actions[i].table_name, 2 * write_capacity_units(size), {}};
      c.add_indexes(results[i].index_units, 2);
      add_capacity(capacity, c);
      add_capacity(replay_capacity,
                   {actions[i].table_name, 2 * read_capacity_units(size, true), {}});
    }
    std::vector<ItemCollection> collections;
    if (request.string("ReturnItemCollectionMetrics") == "SIZE") {
      for (const auto& action : actions) {
        if (action.kind == Action::Kind::kConditionCheck) continue;
        add_item_collection(collections, action.table_name, *action.table, action.item);
      }
    }
    auto response = [&](const std::vector<ConsumedCapacity>& units) {
      JsonOut out;
      JsonWriter w(out);
      w.StartObject();
      write_consumed_capacity(w, capacity_mode, units);
      write_item_collection_metrics(w, collections);
      w.EndObject();
      return json_text(out);
    };
    if (token) tokens.complete(token_key, response(replay_capacity));
    return response(capacity);
  } catch (...) {
    if (token) tokens.abandon(token_key);
    throw;
  }
}

std::string transact_get_items(const Context& ctx, const JsonObject& request) {
  auto list = request.array("TransactItems");
  auto capacity_mode = request.string("ReturnConsumedCapacity").value_or("NONE");
  struct Get {
    JsonObject spec;
    std::string table_name;
    Item key;
    std::unique_ptr<RequestExpressions> expressions = std::make_unique<RequestExpressions>();
    engine::TablePtr table = nullptr;
  };
  std::vector<Get> gets;
  Validation validation;
  CoralErrors coral;
  if (list) {
    std::size_t i = 0;
    for (const auto& element : list->objects()) {
      ++i;
      const std::string path = fmt::format("transactItems.{}.member.get", i);
      std::optional<JsonObject> spec;
      if (element) spec = element->object("Get");
      coral.require(spec.has_value(), path);
      if (!spec) continue;
      Get g{*spec, {}, {}};
      auto table_name = spec->string("TableName");
      check_table_name_or_arn(coral, table_name, path + ".tableName");
      g.table_name = std::string(table_name.value_or(""));
      auto key_json = spec->element("Key");
      coral.require(key_json != nullptr, path + ".key");
      if (key_json) g.key = decode_item(*key_json, validation);
      g.expressions->read_maps(*spec, validation);
      gets.push_back(std::move(g));
    }
  }
  coral.require(list.has_value(), "transactItems");
  if (list && (list->size() < 1 || list->size() > kMaxTransactItems)) {
    coral.add("[...]", "transactItems",
              list->size() < 1 ? "Member must have length greater than or equal to 1"
                               : fmt::format("Member must have length less than or equal to {}",
                                             kMaxTransactItems));
  }
  coral.check_enum(request.string("ReturnConsumedCapacity"), "returnConsumedCapacity",
                   {"INDEXES", "TOTAL", "NONE"});
  coral.throw_if_any();
  validation.throw_if_failed();
  for (auto& g : gets) g.expressions->compile(g.spec, {.projection = true});
  std::vector<engine::TransactGet> reads;
  for (auto& g : gets) {
    g.table = data_table(ctx, g.table_name);
    check_key_parameter(*g.table, g.key);
    reads.push_back({g.table.get(), g.key});
  }
  std::vector<std::optional<Item>> items = ctx.engine.transact_get(reads);
  std::vector<ConsumedCapacity> capacity;
  JsonOut out;
  JsonWriter w(out);
  w.StartObject();
  write_key(w, "Responses");
  w.StartArray();
  for (std::size_t i = 0; i < gets.size(); ++i) {
    const std::optional<Item>& item = items[i];
    add_capacity(
        capacity,
        {gets[i].table_name, 2 * read_capacity_units(item ? item_size(*item) : 0, true), {}});
    w.StartObject();
    if (item) {
      write_key(w, "Item");
      write_item(w, gets[i].expressions->projects() ? gets[i].expressions->project(*item) : *item);
    }
    w.EndObject();
  }
  w.EndArray();
  write_consumed_capacity(w, capacity_mode, capacity);
  w.EndObject();
  return json_text(out);
}

}  // namespace kumo::api
