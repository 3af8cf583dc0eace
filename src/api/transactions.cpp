// TransactWriteItems and TransactGetItems.
#include <algorithm>
#include <functional>
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
#include "api/transaction_support.h"
#include "model/api_error.h"
#include "model/capacity.h"
#include "storage/storage.h"

namespace kumo::api {
namespace {

constexpr std::size_t kMaxTransactItems = 100;

// Binds each action to its table, in request order: `bind(i)` looks up action i's table,
// checks the action against it and returns the identity of its item (Engine::item_key), or
// nullopt when the action's Key does not match the table's schema. No two actions may
// address one item (ValidationException); a Key that does not match cancels the
// transaction, with the reason on the first such action.
template <typename Bind>
void bind_actions(std::size_t count, Bind bind) {
  std::set<std::string> keys;
  std::optional<std::size_t> invalid_key;
  for (std::size_t i = 0; i < count; ++i) {
    std::optional<std::string> key = bind(i);
    if (!key) {
      if (!invalid_key) invalid_key = i;
    } else if (!keys.insert(std::move(*key)).second) {
      throw ApiError::validation(kMultipleOperations);
    }
  }
  if (invalid_key) throw validation_cancellation(count, *invalid_key, kKeySchemaMismatch);
}

// TransactItems is required and holds 1 to 100 actions.
void check_transact_items(const std::optional<JsonArray>& list, CoralErrors& coral) {
  coral.require(list.has_value(), "transactItems");
  if (list && (list->size() < 1 || list->size() > kMaxTransactItems)) {
    coral.add(list->size() < 1 ? "[]" : "[...]", "transactItems",
              list->size() < 1 ? "Member must have length greater than or equal to 1"
                               : fmt::format("Member must have length less than or equal to {}",
                                             kMaxTransactItems));
  }
}

// A canonical rendering of JSON (object members sorted), so that two requests that differ
// only in member order have the same fingerprint under one ClientRequestToken.
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

// A TransactWriteItems request: its actions, each a single-item write, and the members
// that apply to all of them.
struct TransactWriteRequest {
  std::vector<ItemWrite> writes;
  std::optional<std::string_view> token;  // ClientRequestToken
  std::string_view capacity_mode = "NONE";
  bool collection_metrics = false;
};

// Reads the request: each action and its JSON types, then the model constraints of every
// member, in DynamoDB's order. Throws SerializationException or ValidationException.
TransactWriteRequest decode_transact_write(const JsonObject& request, Validation& validation) {
  static constexpr std::pair<std::string_view, WriteKind> kKinds[] = {
      {"ConditionCheck", WriteKind::kConditionCheck},
      {"Put", WriteKind::kPut},
      {"Update", WriteKind::kUpdate},
      {"Delete", WriteKind::kDelete}};
  TransactWriteRequest r;
  auto list = request.array("TransactItems");
  r.token = request.string("ClientRequestToken");
  r.capacity_mode = request.string("ReturnConsumedCapacity").value_or("NONE");
  r.collection_metrics = request.string("ReturnItemCollectionMetrics") == "SIZE";
  bool malformed = false;
  CoralErrors coral;
  if (list) {
    std::size_t i = 0;
    for (const auto& element : list->objects()) {
      ++i;
      int found = 0;
      for (const auto& [member, kind] : kKinds) {
        if (!element) break;
        auto spec = element->object(member);
        if (!spec) continue;
        ++found;
        ItemWrite& w = r.writes.emplace_back();
        auto table_name = spec->string("TableName");
        const std::string path =
            fmt::format("transactItems.{}.member.{}{}", i,
                        static_cast<char>(std::tolower(member[0])), member.substr(1));
        check_table_name_or_arn(coral, table_name, path + ".tableName");
        w.table_name = std::string(table_name.value_or(""));
        const bool item_given = read_write(*spec, kind, w, validation);
        coral.require(item_given, path + (kind == WriteKind::kPut ? ".item" : ".key"));
        if (kind == WriteKind::kConditionCheck) {
          coral.require(spec->has("ConditionExpression"), path + ".conditionExpression");
        }
        if (kind == WriteKind::kUpdate) {
          coral.require(spec->has("UpdateExpression"), path + ".updateExpression");
        }
        coral.check_enum(spec->string("ReturnValuesOnConditionCheckFailure"),
                         path + ".returnValuesOnConditionCheckFailure", {"ALL_OLD", "NONE"});
      }
      if (found != 1) malformed = true;
    }
  }
  check_transact_items(list, coral);
  if (r.token) coral.check_length(*r.token, "clientRequestToken", 1, 36);
  check_return_consumed_capacity(request, coral);
  check_return_item_collection_metrics(request, coral);
  coral.throw_if_any();
  if (malformed) {
    throw ApiError::validation(
        "TransactItems can only contain one of Check, Put, Update or Delete");
  }
  return r;
}

// Checks the actions' values and expressions and their total size, then each against its
// table; no two actions may address one item. Throws ValidationException or
// ResourceNotFoundException; a Key that does not match its table's schema cancels the
// transaction (TransactionCanceledException).
void validate_transact_write(const Context& ctx, TransactWriteRequest& r,
                             const Validation& validation) {
  validation.throw_if_failed();
  std::size_t bytes = 0;
  for (ItemWrite& w : r.writes) {
    compile_write(w);
    if (w.kind == WriteKind::kPut) check_put_size(w.item);
    bytes += item_size(w.item);  // a Put's item, any other action's Key
  }
  if (bytes > kMaxTransactionBytes) throw ApiError::validation(kTransactionTooLarge);
  bind_actions(r.writes.size(), [&](std::size_t i) -> std::optional<std::string> {
    ItemWrite& w = r.writes[i];
    engine::TablePtr table = data_table(ctx, w.table_name);
    if (w.kind != WriteKind::kPut && !key_matches_schema(*table, w.item)) return std::nullopt;
    bind_write(w, std::move(table));
    return ctx.engine.item_key(*w.table, w.item);
  });
}

// Applies every action or none. Returns the response, and in *replay the response a repeat
// of the request under its ClientRequestToken gets: it writes nothing, and reports the
// (transactional) read units of the items instead of the write units. `seal` gets the replay
// as known before the commit: the same, since the item collections come from the request.
std::string apply_transact_write(const Context& ctx, TransactWriteRequest& r, std::string* replay,
                                 const TokenSeal& seal) {
  // The item collections are counted from the request's items, before the writes.
  std::vector<ItemWrite*> writes;
  std::vector<ItemCollection> collections;
  for (ItemWrite& w : r.writes) {
    writes.push_back(&w);
    if (r.collection_metrics && w.kind != WriteKind::kConditionCheck) {
      add_item_collection(collections, w.table_name, *w.table, w.key());
    }
  }
  auto response = [&](const std::vector<ConsumedCapacity>& units) {
    JsonOut out;
    JsonWriter writer(out);
    writer.StartObject();
    write_consumed_capacity(writer, r.capacity_mode, units);
    write_item_collection_metrics(writer, collections);
    writer.EndObject();
    return json_text(out);
  };
  auto replay_capacity = [&](const std::vector<engine::WriteResult>& results) {
    std::vector<ConsumedCapacity> units;
    for (std::size_t i = 0; i < r.writes.size(); ++i) {
      const std::size_t size = std::max(results[i].old_size, results[i].new_size);
      add_capacity(units, {r.writes[i].table_name, 2 * read_capacity_units(size, true), {}});
    }
    return units;
  };
  engine::TransactionSeal sealed;
  if (seal) {
    sealed = [&](const std::vector<engine::WriteResult>& results, storage::WriteBatch* batch) {
      seal(response(replay_capacity(results)), batch);
    };
  }
  const std::vector<engine::WriteResult> results = apply_item_writes(
      ctx, writes, {.op = capacity::Operation::kTransactWriteItems, .factor = 2}, sealed);
  // A transaction costs twice the units of the same writes.
  std::vector<ConsumedCapacity> capacity;
  for (std::size_t i = 0; i < r.writes.size(); ++i) {
    const ItemWrite& w = r.writes[i];
    add_capacity(capacity, write_capacity(w.table_name, results[i], 2));
  }
  *replay = response(replay_capacity(results));
  return response(capacity);
}

}  // namespace

std::string_view error_code(const ApiError& e) {
  switch (e.code()) {
    case ApiError::Code::kConditionalCheckFailed:
      return "ConditionalCheckFailed";
    case ApiError::Code::kDuplicateItem:
      return "DuplicateItem";
    case ApiError::Code::kResourceNotFound:
      return "ResourceNotFound";
    case ApiError::Code::kItemCollectionSizeLimitExceeded:
      return "ItemCollectionSizeLimitExceeded";
    case ApiError::Code::kAccessDenied:
      return "AccessDenied";
    case ApiError::Code::kInternal:
      return "InternalServerError";
    case ApiError::Code::kTransactionConflict:
      return "TransactionConflict";
    case ApiError::Code::kProvisionedThroughputExceeded:
      return "ProvisionedThroughputExceeded";
    case ApiError::Code::kThrottling:
    case ApiError::Code::kRequestLimitExceeded:
      return "ThrottlingError";
    default:
      return "ValidationError";
  }
}

CancellationReason cancellation_reason(const std::exception_ptr& failure) {
  if (!failure) return {"None", std::nullopt, std::nullopt};
  try {
    std::rethrow_exception(failure);
  } catch (const ApiError& e) {
    if (e.throttle()) return {std::string(error_code(e)), e.cancellation_message(), std::nullopt};
    return {std::string(error_code(e)), e.message(), e.item()};
  }
}

std::vector<std::optional<Item>> transact_read(const Context& ctx,
                                               const std::vector<engine::TransactGet>& reads,
                                               const engine::Metering& metering) {
  std::vector<std::exception_ptr> failures;
  std::vector<std::optional<Item>> items =
      ctx.engine.transact_get(reads, kMaxTransactionBytes, metering, &failures);
  if (std::none_of(failures.begin(), failures.end(), [](const auto& f) { return f != nullptr; })) {
    return items;
  }
  std::vector<CancellationReason> reasons;
  for (const std::exception_ptr& failure : failures)
    reasons.push_back(cancellation_reason(failure));
  throw ApiError::transaction_canceled(std::move(reasons));
}

std::vector<engine::WriteResult> apply_item_writes(const Context& ctx,
                                                   const std::vector<ItemWrite*>& writes,
                                                   const engine::Metering& metering,
                                                   const engine::TransactionSeal& seal) {
  std::vector<engine::TransactWrite> actions;
  for (ItemWrite* w : writes) {
    engine::TransactWrite action;
    action.table = w->table.get();
    action.storage_key = ctx.engine.item_key(*w->table, w->key());
    action.check = [w](const std::optional<Item>& current) { check_write_condition(*w, current); };
    action.check_only = w->kind == WriteKind::kConditionCheck;
    if (!action.check_only) {
      action.mutation = [w](const std::optional<Item>& current) {
        return apply_write(*w, current);
      };
    }
    actions.push_back(std::move(action));
  }
  std::vector<engine::WriteResult> results;
  std::vector<std::exception_ptr> failures;
  if (ctx.engine.transact_write(actions, &results, &failures, metering, seal)) return results;
  // Why each action failed, in request order.
  std::vector<CancellationReason> reasons;
  for (const std::exception_ptr& failure : failures)
    reasons.push_back(cancellation_reason(failure));
  throw ApiError::transaction_canceled(std::move(reasons));
}

ApiError validation_cancellation(std::size_t actions, std::size_t failed, std::string message) {
  std::vector<CancellationReason> reasons(actions, {"None", std::nullopt, std::nullopt});
  reasons[failed] = {"ValidationError", std::move(message), std::nullopt};
  return ApiError::transaction_canceled(std::move(reasons));
}

std::string idempotent_transaction(
    const Context& ctx, const JsonObject& request, std::optional<std::string_view> token,
    const std::function<std::string(std::string* replay, const TokenSeal& seal)>& apply) {
  if (!token) {
    std::string replay;
    return apply(&replay, {});
  }
  // A repeat of a completed request with the same token answers as the first did.
  engine::TransactionTokens& tokens = ctx.engine.transaction_tokens();
  const std::string key(*token);
  JsonOut canonical_request;
  JsonWriter writer(canonical_request);
  canonical(request.raw(), writer);
  std::string previous;
  switch (tokens.begin(key, json_text(canonical_request), &previous)) {
    case engine::TransactionTokens::State::kNew:
      break;
    case engine::TransactionTokens::State::kCompleted:
      return previous;
    case engine::TransactionTokens::State::kInProgress:
      throw ApiError::transaction_in_progress();
    case engine::TransactionTokens::State::kMismatch:
      throw ApiError::idempotent_parameter_mismatch();
  }
  std::string replay, response;
  TokenSeal seal;
  if (tokens.seals()) {
    seal = [&tokens, &key](std::string sealed, storage::WriteBatch* batch) {
      tokens.seal(key, std::move(sealed), batch);
    };
  }
  try {
    response = apply(&replay, seal);
  } catch (const storage::StorageError&) {
    tokens.fail(key);
    throw;
  } catch (...) {
    tokens.abandon(key);
    throw;
  }
  tokens.complete(key, std::move(replay));
  return response;
}

std::string transact_write_items(const Context& ctx, const JsonObject& request) {
  Validation validation;
  TransactWriteRequest r = decode_transact_write(request, validation);
  validate_transact_write(ctx, r, validation);
  return idempotent_transaction(ctx, request, r.token,
                                [&](std::string* replay, const TokenSeal& seal) {
                                  return apply_transact_write(ctx, r, replay, seal);
                                });
}

namespace {

// One Get of a TransactGetItems request.
struct TransactGetAction {
  JsonObject spec;
  std::string table_name;
  Item key;
  // Kept at one address: the projection points into its own name map.
  std::unique_ptr<RequestExpressions> expressions = std::make_unique<RequestExpressions>();
  engine::TablePtr table = nullptr;
};

// Reads the Gets with their JSON types, then the model constraints and values, in
// DynamoDB's order, and compiles the projections. Throws SerializationException or
// ValidationException.
std::vector<TransactGetAction> decode_transact_get(const JsonObject& request) {
  auto list = request.array("TransactItems");
  std::vector<TransactGetAction> gets;
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
      TransactGetAction g{*spec, {}, {}};
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
  check_transact_items(list, coral);
  check_return_consumed_capacity(request, coral);
  coral.throw_if_any();
  validation.throw_if_failed();
  for (auto& g : gets) g.expressions->compile(g.spec, {.projection = true});
  return gets;
}

}  // namespace

std::string transact_get_items(const Context& ctx, const JsonObject& request) {
  std::vector<TransactGetAction> gets = decode_transact_get(request);
  bind_actions(gets.size(), [&](std::size_t i) -> std::optional<std::string> {
    TransactGetAction& g = gets[i];
    g.table = data_table(ctx, g.table_name);
    if (!key_matches_schema(*g.table, g.key)) return std::nullopt;
    check_key_parameter(*g.table, g.key);
    return ctx.engine.item_key(*g.table, g.key);
  });
  std::vector<engine::TransactGet> reads;
  for (auto& g : gets) reads.push_back({g.table.get(), g.key});
  // The items read are within the transaction size limit, or the transaction is cancelled
  // at the Get that passes it (the engine reads no further).
  std::vector<std::optional<Item>> items =
      transact_read(ctx, reads, {.op = capacity::Operation::kTransactGetItems, .factor = 2});
  std::vector<std::size_t> sizes;
  std::size_t total = 0;
  for (std::size_t i = 0; i < items.size(); ++i) {
    sizes.push_back(items[i] ? item_size(*items[i]) : 0);
    total += sizes.back();
    if (total > kMaxTransactionBytes) {
      throw validation_cancellation(gets.size(), i, kTransactionTooLarge);
    }
  }
  std::vector<ConsumedCapacity> capacity;
  JsonOut out;
  JsonWriter w(out);
  w.StartObject();
  write_key(w, "Responses");
  w.StartArray();
  for (std::size_t i = 0; i < gets.size(); ++i) {
    const std::optional<Item>& item = items[i];
    add_capacity(capacity, {gets[i].table_name, 2 * read_capacity_units(sizes[i], true), {}});
    w.StartObject();
    if (item) {
      write_key(w, "Item");
      write_item(w, gets[i].expressions->projects() ? gets[i].expressions->project(*item) : *item);
    }
    w.EndObject();
  }
  w.EndArray();
  write_consumed_capacity(w, request.string("ReturnConsumedCapacity").value_or("NONE"), capacity);
  w.EndObject();
  return json_text(out);
}

}  // namespace kumo::api
