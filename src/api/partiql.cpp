// ExecuteStatement, BatchExecuteStatement and ExecuteTransaction: DynamoDB's PartiQL.
// A statement is parsed and checked (partiql_common.h), then a SELECT runs as single-item
// reads, Queries or a Scan (partiql_select.h) and an INSERT, UPDATE or DELETE as the
// single-item write PutItem, UpdateItem or DeleteItem makes.
#include <set>

#include <fmt/format.h>

#include "api/capacity.h"
#include "api/item_checks.h"
#include "api/operations.h"
#include "api/partiql_common.h"
#include "api/partiql_select.h"
#include "api/table_names.h"
#include "api/transaction_support.h"
#include "model/api_error.h"
#include "model/capacity.h"

namespace kumo::api {
namespace {

using partiql::StatementKind;

constexpr std::size_t kMaxBatchStatements = 25;
constexpr std::size_t kMaxTransactStatements = 100;
constexpr std::size_t kMaxNextTokenLength = 32768;

bool is_write(StatementKind kind) {
  return kind != StatementKind::kSelect;
}

// A list member holds `min` to `max` elements: a coral constraint at `path`.
void check_list_length(const std::optional<JsonArray>& list, std::string_view path, std::size_t max,
                       CoralErrors& coral) {
  coral.require(list.has_value(), path);
  if (!list) return;
  if (list->size() < 1) {
    coral.add("[]", path, "Member must have length greater than or equal to 1");
  } else if (list->size() > max) {
    coral.add("[...]", path, fmt::format("Member must have length less than or equal to {}", max));
  }
}

// The write an INSERT, UPDATE or DELETE makes, with ExecuteStatement's key rules.
ItemWrite single_write(const BoundStatement& s, engine::TablePtr table, bool all_old) {
  Item key;
  if (s->kind != StatementKind::kInsert) {
    ItemKeyMatch match = match_item_key(*table, s, false);
    if (match.problem != ItemKeyMatch::Problem::kNone) throw_key_problem(match);
    key = std::move(match.key);
  }
  return statement_write(s, std::move(table), std::move(key), all_old);
}

// What a write returns: its RETURNING row, if any.
std::optional<Item> returning_row(const ItemWrite& w, const engine::WriteResult& result) {
  return returned_attributes(w, result);
}

// A SELECT of BatchExecuteStatement or ExecuteTransaction reads one item by its whole table
// key, with nothing else in WHERE: the key, or nullopt when the statement is not such a read.
std::optional<Item> single_read_key(const BoundStatement& s, const TableDefinition& table) {
  if (s->target.index()) return std::nullopt;
  ItemKeyMatch match = match_item_key(table, s, true);
  if (match.problem != ItemKeyMatch::Problem::kNone || !match.only_key) return std::nullopt;
  return std::move(match.key);
}

}  // namespace

std::string execute_statement(const Context& ctx, const JsonObject& request) {
  CoralErrors coral;
  Validation validation;
  StatementSpec spec = read_statement_spec(request, "", coral, validation);
  SelectOptions options;
  options.consistent = request.boolean("ConsistentRead").value_or(false);
  options.next_token = request.string("NextToken");
  options.limit = request.integer("Limit");
  options.capacity_mode = request.string("ReturnConsumedCapacity").value_or("NONE");
  if (options.next_token) {
    coral.check_length(*options.next_token, "nextToken", 1, kMaxNextTokenLength);
  }
  if (options.limit && *options.limit < 1) {
    coral.add(std::to_string(*options.limit), "limit",
              "Member must have value greater than or equal to 1");
  }
  check_return_consumed_capacity(request, coral);
  coral.check_enum(request.string("ReturnValuesOnConditionCheckFailure"),
                   "returnValuesOnConditionCheckFailure", {"ALL_OLD", "NONE"});
  coral.throw_if_any();
  validation.throw_if_failed();

  BoundStatement s = prepare_statement(*spec.text, std::move(spec.parameters), &ctx);
  if (s->kind == StatementKind::kExists) {
    throw ApiError::validation("EXISTS can only be used in ExecuteTransaction write requests.");
  }
  engine::TablePtr table = data_table(ctx, s->target.table());
  if (s->kind == StatementKind::kSelect) return execute_select(ctx, s, std::move(table), options);

  ItemWrite w = single_write(s, std::move(table),
                             request.string("ReturnValuesOnConditionCheckFailure") == "ALL_OLD");
  const engine::WriteResult result = apply_statement_write(
      ctx, w, {.op = capacity::Operation::kExecuteStatement, .factor = 1, .insights = false});
  const std::optional<Item> row = returning_row(w, result);
  JsonOut out;
  JsonWriter writer(out);
  writer.StartObject();
  write_key(writer, "Items");
  writer.StartArray();
  if (row) write_item(writer, *row);
  writer.EndArray();
  write_consumed_capacity(writer, options.capacity_mode, write_capacity(w.table_name, result));
  writer.EndObject();
  return json_text(out);
}

namespace {

// One member of a BatchExecuteStatement request and what became of it.
struct BatchMember {
  std::optional<std::string_view> text;
  std::vector<AttributeValue> parameters;
  bool consistent = false;
  std::optional<std::string> parameter_error;  // the first invalid parameter value
  std::optional<BoundStatement> statement;     // once parsed and checked
  std::optional<ApiError> error;               // why it did not run
  engine::TablePtr table;                      // once its table was found
  std::optional<Item> item;                    // the row read or returned
};

// The item a parsed member names by its key, for the batch's duplicate rule: a table, and
// key attributes read off the text.
std::optional<std::string> member_item(const Context& ctx, const BatchMember& m) {
  if (!m.statement || (*m.statement)->kind == StatementKind::kInsert) return std::nullopt;
  engine::TablePtr table = ctx.engine.find_table((*m.statement)->target.table());
  if (!table || (*m.statement)->target.index()) return std::nullopt;
  ItemKeyMatch match = match_item_key(*table, *m.statement, true);
  if (match.problem != ItemKeyMatch::Problem::kNone) return std::nullopt;
  return table->name + '\0' + ctx.engine.item_key(*table, match.key);
}

// PartiQL is metered, but Contributor Insights does not see it.
constexpr engine::Metering kBatchMetering{
    .op = capacity::Operation::kBatchExecuteStatement, .factor = 1, .insights = false};

void run_batch_member(const Context& ctx, BatchMember& m, std::vector<ConsumedCapacity>& capacity) {
  const BoundStatement& s = *m.statement;
  if (s->kind == StatementKind::kExists) {
    throw ApiError::validation("EXISTS can only be used in ExecuteTransaction write requests.");
  }
  if (s->kind == StatementKind::kSelect) {
    engine::TablePtr table = data_table(ctx, s->target.table());
    refuse_multi_attribute_index(ctx, *s);
    if (!s->target.index()) check_key_reads(s, *table, true);
    std::optional<Item> key = single_read_key(s, *table);
    if (!key) {
      throw ApiError::validation(
          "Select statements within BatchExecuteStatement must specify the primary key in the "
          "where clause.");
    }
    m.table = table;
    std::optional<Item> item = ctx.engine.get_item(*table, *key, m.consistent, kBatchMetering);
    add_capacity(
        capacity,
        {s->target.table(), read_capacity_units(item ? item_size(*item) : 0, m.consistent), {}});
    if (item) m.item = select_row(*s, *item);
    return;
  }
  m.table = data_table(ctx, s->target.table());
  ItemWrite w = single_write(s, m.table, false);
  const engine::WriteResult result = apply_statement_write(ctx, w, kBatchMetering);
  add_capacity(capacity, write_capacity(w.table_name, result));
  m.item = returning_row(w, result);
}

}  // namespace

std::string batch_execute_statement(const Context& ctx, const JsonObject& request) {
  const std::optional<JsonArray> list = request.array("Statements");
  std::vector<BatchMember> members;
  CoralErrors coral;
  if (list) {
    std::size_t i = 0;
    for (const auto& element : list->objects()) {
      ++i;
      const std::string path = fmt::format("statements.{}.member.", i);
      BatchMember& m = members.emplace_back();
      if (!element) {
        coral.require(false, path + "statement");
        continue;
      }
      Validation validation;
      StatementSpec spec = read_statement_spec(*element, path, coral, validation);
      m.text = spec.text;
      m.parameters = std::move(spec.parameters);
      m.parameter_error = validation.message();
      m.consistent = element->boolean("ConsistentRead").value_or(false);
      coral.check_enum(element->string("ReturnValuesOnConditionCheckFailure"),
                       path + "returnValuesOnConditionCheckFailure", {"ALL_OLD", "NONE"});
    }
  }
  check_list_length(list, "statements", kMaxBatchStatements, coral);
  check_return_consumed_capacity(request, coral);
  coral.throw_if_any();

  // Parse every member; one that does not parse takes no part in the batch-wide rules.
  bool reads = false, writes = false;
  for (BatchMember& m : members) {
    try {
      if (m.parameter_error) throw ApiError::validation(*m.parameter_error);
      m.statement = prepare_statement(*m.text, std::move(m.parameters), &ctx);
      (is_write((*m.statement)->kind) ? writes : reads) = true;
    } catch (const ApiError& e) {
      m.error = e;
    }
  }
  if (reads && writes) {
    throw ApiError::validation(
        "Read and write requests together in the same batch is not supported.");
  }
  std::set<std::string> items;
  for (const BatchMember& m : members) {
    std::optional<std::string> item = member_item(ctx, m);
    if (item && !items.insert(std::move(*item)).second) {
      throw ApiError::validation("Provided list of item keys contains duplicates");
    }
  }

  std::vector<ConsumedCapacity> capacity;
  for (BatchMember& m : members) {
    if (m.error) continue;
    try {
      run_batch_member(ctx, m, capacity);
    } catch (const ApiError& e) {
      m.error = e;
    }
  }
  JsonOut out;
  JsonWriter w(out);
  w.StartObject();
  write_key(w, "Responses");
  w.StartArray();
  for (const BatchMember& m : members) {
    w.StartObject();
    if (m.error) {
      write_key(w, "Error");
      w.StartObject();
      write_key(w, "Code");
      write_string(w, error_code(*m.error));
      write_key(w, "Message");
      write_string(w, m.error->message().value_or(""));
      w.EndObject();
    }
    if (m.table) {
      write_key(w, "TableName");
      write_string(w, (*m.statement)->target.table());
    }
    if (m.item && !m.error) {
      write_key(w, "Item");
      write_item(w, *m.item);
    }
    w.EndObject();
  }
  w.EndArray();
  if (!capacity.empty()) {
    write_consumed_capacity(w, request.string("ReturnConsumedCapacity").value_or("NONE"), capacity);
  }
  w.EndObject();
  return json_text(out);
}

namespace {

// One statement of an ExecuteTransaction request.
struct TransactMember {
  BoundStatement statement;
  engine::TablePtr table;
  std::optional<ItemWrite> write;  // writes and EXISTS checks
  Item key;                        // reads
  bool all_old = false;
};

// A statement refused before anything runs: "Validation failed in TransactStatements[<i>]: ".
[[noreturn]] void refuse_statement(std::size_t i, std::string_view message) {
  throw ApiError::validation(
      fmt::format("Validation failed in TransactStatements[{}]: {}", i, message));
}

// The rules each statement of a transaction meets on its own, before any table is read.
void check_transact_statement(const Context& ctx, std::size_t i, const BoundStatement& s) {
  // A statement on a missing table is cancelled for that, whatever else it carries.
  engine::TablePtr table = ctx.engine.find_table(s->target.table());
  if (!table) return;
  if (s->returning != partiql::Returning::kNone) {
    refuse_statement(i, "RETURNING clause is not supported in ExecuteTransaction.");
  }
  if (s->target.index()) {
    refuse_statement(i, s->kind == StatementKind::kSelect
                            ? "Reads on indices are not supported within transactions."
                            : "This operation is not supported on an index");
  }
  if (s->kind == StatementKind::kInsert) return;
  try {
    check_key_reads(s, *table, false);
  } catch (const ApiError& e) {
    refuse_statement(i, e.message().value_or(""));
  }
  ItemKeyMatch match = match_item_key(*table, s, s->kind == StatementKind::kSelect);
  if (s->kind == StatementKind::kSelect &&
      (match.problem == ItemKeyMatch::Problem::kMissing ||
       match.problem == ItemKeyMatch::Problem::kMultiple || !match.only_key)) {
    refuse_statement(i,
                     "Select statements within ExecuteTransaction must specify the primary key "
                     "in the where clause.");
  }
  // EXISTS reads one item by key equalities and checks a further condition on it.
  if (s->kind == StatementKind::kExists &&
      (match.problem == ItemKeyMatch::Problem::kMissing ||
       (match.problem == ItemKeyMatch::Problem::kNone && match.only_key))) {
    refuse_statement(i, "EXISTS() must contain a single item read with additional condition");
  }
}

// Binds each statement to its table and item; what cannot be bound cancels the transaction,
// with the reason on its statement.
void bind_transact_members(const Context& ctx, std::vector<TransactMember>& members) {
  std::vector<CancellationReason> reasons(members.size(), {"None", std::nullopt, std::nullopt});
  bool cancelled = false;
  for (std::size_t i = 0; i < members.size(); ++i) {
    TransactMember& m = members[i];
    const BoundStatement& s = m.statement;
    try {
      m.table = data_table(ctx, s->target.table());
      Item key;
      if (s->kind != StatementKind::kInsert) {
        ItemKeyMatch match = match_item_key(*m.table, s, s->kind == StatementKind::kSelect);
        // An EXISTS that gives one key attribute two values reads the item of the first and
        // fails its condition.
        const bool first_value = s->kind == StatementKind::kExists &&
                                 match.problem == ItemKeyMatch::Problem::kMultiple &&
                                 match.key.size() == (m.table->key.range ? 2u : 1u);
        if (match.problem != ItemKeyMatch::Problem::kNone && !first_value) {
          throw ApiError::validation(kKeySchemaMismatch);
        }
        key = std::move(match.key);
      }
      if (s->kind == StatementKind::kSelect) {
        m.key = std::move(key);
      } else {
        m.write = statement_write(s, m.table, std::move(key), m.all_old);
      }
    } catch (const ApiError& e) {
      reasons[i] = {std::string(error_code(e)), e.message(), std::nullopt};
      cancelled = true;
    }
  }
  if (cancelled) throw ApiError::transaction_canceled(std::move(reasons));
  // The items written (an INSERT's item, any other write's key) total at most 4 MB.
  std::size_t bytes = 0;
  for (const TransactMember& m : members) bytes += m.write ? item_size(m.write->item) : 0;
  if (bytes > kMaxTransactionBytes) throw ApiError::validation(kTransactionTooLarge);
  std::set<std::string> items;
  for (const TransactMember& m : members) {
    const std::string item =
        m.table->name + '\0' + ctx.engine.item_key(*m.table, m.write ? m.write->item : m.key);
    if (!items.insert(item).second) throw ApiError::validation(kMultipleOperations);
  }
}

std::string transaction_response(std::string_view mode,
                                 const std::vector<ConsumedCapacity>& capacity,
                                 const std::vector<std::optional<Item>>* rows) {
  JsonOut out;
  JsonWriter w(out);
  w.StartObject();
  write_key(w, "Responses");
  w.StartArray();
  if (rows) {
    for (const std::optional<Item>& row : *rows) {
      w.StartObject();
      if (row) {
        write_key(w, "Item");
        write_item(w, *row);
      }
      w.EndObject();
    }
  }
  w.EndArray();
  write_consumed_capacity(w, mode, capacity);
  w.EndObject();
  return json_text(out);
}

std::string apply_transact_writes(const Context& ctx, std::vector<TransactMember>& members,
                                  std::string_view mode, std::string* replay,
                                  const TokenSeal& seal) {
  std::vector<ItemWrite*> writes;
  for (TransactMember& m : members) writes.push_back(&*m.write);
  // Its repeat reads the items.
  auto replay_of = [&](const std::vector<engine::WriteResult>& results) {
    std::vector<ConsumedCapacity> units;
    for (std::size_t i = 0; i < members.size(); ++i) {
      const std::size_t size = std::max(results[i].old_size, results[i].new_size);
      add_capacity(units, {members[i].write->table_name,
                           2 * read_capacity_units(size, true),
                           {},
                           ConsumedCapacity::Rated::kRead});
    }
    return transaction_response(mode, units, nullptr);
  };
  engine::TransactionSeal sealed;
  if (seal) {
    sealed = [&](const std::vector<engine::WriteResult>& results, storage::WriteBatch* batch) {
      seal(replay_of(results), batch);
    };
  }
  // The table's units are doubled, each index's not.
  const std::vector<engine::WriteResult> results =
      apply_item_writes(ctx, writes,
                        {.op = capacity::Operation::kExecuteTransaction,
                         .factor = 2,
                         .insights = false,
                         .index_factor = 1},
                        sealed);
  // A transaction costs twice the table's units of the same writes, and once each index's.
  std::vector<ConsumedCapacity> capacity;
  for (std::size_t i = 0; i < members.size(); ++i) {
    const ItemWrite& w = *members[i].write;
    ConsumedCapacity units = write_capacity(w.table_name, results[i]);
    units.table *= 2;
    units.rated = ConsumedCapacity::Rated::kWrite;
    add_capacity(capacity, units);
  }
  *replay = replay_of(results);
  return transaction_response(mode, capacity, nullptr);
}

std::string apply_transact_reads(const Context& ctx, const std::vector<TransactMember>& members,
                                 std::string_view mode) {
  std::vector<engine::TransactGet> gets;
  for (const TransactMember& m : members) gets.push_back({m.table.get(), m.key});
  // The items read are within the transaction size limit, or the transaction is cancelled
  // at the statement that passes it (the engine reads no further).
  std::vector<std::optional<Item>> items = transact_read(
      ctx, gets, {.op = capacity::Operation::kExecuteTransaction, .factor = 2, .insights = false});
  std::size_t total = 0;
  for (std::size_t i = 0; i < items.size(); ++i) {
    total += items[i] ? item_size(*items[i]) : 0;
    if (total > kMaxTransactionBytes) {
      throw validation_cancellation(members.size(), i, kTransactionTooLarge);
    }
  }
  std::vector<ConsumedCapacity> capacity;
  std::vector<std::optional<Item>> rows;
  for (std::size_t i = 0; i < members.size(); ++i) {
    const std::size_t size = i < items.size() && items[i] ? item_size(*items[i]) : 0;
    add_capacity(capacity, {members[i].statement->target.table(),
                            2 * read_capacity_units(size, true),
                            {},
                            ConsumedCapacity::Rated::kRead});
    if (i < items.size() && items[i]) {
      rows.push_back(select_row(*members[i].statement, *items[i]));
    } else {
      rows.emplace_back();
    }
  }
  return transaction_response(mode, capacity, &rows);
}

}  // namespace

std::string execute_transaction(const Context& ctx, const JsonObject& request) {
  const std::optional<JsonArray> list = request.array("TransactStatements");
  const std::optional<std::string_view> token = request.string("ClientRequestToken");
  const std::string_view mode = request.string("ReturnConsumedCapacity").value_or("NONE");
  std::vector<StatementSpec> specs;
  std::vector<bool> all_old;
  Validation validation;
  CoralErrors coral;
  if (list) {
    std::size_t i = 0;
    for (const auto& element : list->objects()) {
      ++i;
      const std::string path = fmt::format("transactStatements.{}.member.", i);
      if (!element) {
        coral.require(false, path + "statement");
        continue;
      }
      specs.push_back(read_statement_spec(*element, path, coral, validation));
      all_old.push_back(element->string("ReturnValuesOnConditionCheckFailure") == "ALL_OLD");
      coral.check_enum(element->string("ReturnValuesOnConditionCheckFailure"),
                       path + "returnValuesOnConditionCheckFailure", {"ALL_OLD", "NONE"});
    }
  }
  check_list_length(list, "transactStatements", kMaxTransactStatements, coral);
  if (token) coral.check_length(*token, "clientRequestToken", 1, 36);
  check_return_consumed_capacity(request, coral);
  coral.throw_if_any();
  validation.throw_if_failed();

  std::vector<TransactMember> members;
  bool reads = false, writes = false;
  for (std::size_t i = 0; i < specs.size(); ++i) {
    try {
      members.push_back({prepare_statement(*specs[i].text, std::move(specs[i].parameters)),
                         {},
                         std::nullopt,
                         {},
                         all_old[i]});
    } catch (const ApiError& e) {
      if (e.code() != ApiError::Code::kValidation) throw;
      refuse_statement(i, e.message().value_or(""));
    }
    check_transact_statement(ctx, i, members.back().statement);
    (is_write(members.back().statement->kind) ? writes : reads) = true;
  }
  if (reads && writes) {
    throw ApiError::validation(
        "ExecuteTransaction API does not support both read and write operations in the same "
        "request.");
  }
  bind_transact_members(ctx, members);
  if (reads) return apply_transact_reads(ctx, members, mode);
  return idempotent_transaction(ctx, request, token,
                                [&](std::string* replay, const TokenSeal& seal) {
                                  return apply_transact_writes(ctx, members, mode, replay, seal);
                                });
}

}  // namespace kumo::api
