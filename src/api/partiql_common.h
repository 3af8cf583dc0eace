// What the three PartiQL operations (ExecuteStatement, BatchExecuteStatement,
// ExecuteTransaction) share: reading a statement and its parameters, the rules that tie a
// statement to one item's key, and turning an INSERT, UPDATE, DELETE or EXISTS into the
// single-item write of item_writes.h, so that it is exactly PutItem's, UpdateItem's or
// DeleteItem's mutation.
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "api/attribute_json.h"
#include "api/capacity.h"
#include "api/item_writes.h"
#include "api/json_reader.h"
#include "api/operations.h"
#include "partiql/ast.h"

namespace kumo::api {

// One statement of a request: its text parsed (through the statement cache) and its
// parameters, which outlive every write built from it.
struct BoundStatement {
  std::shared_ptr<const partiql::Statement> statement;
  std::vector<AttributeValue> parameters;

  const partiql::Statement& operator*() const { return *statement; }
  const partiql::Statement* operator->() const { return statement.get(); }
};

// The members of one statement as a request states it (ExecuteStatement's request, one
// element of Statements or TransactStatements), decoded and checked in DynamoDB's order:
// JSON types while decoding; `Statement` (required, 1 to 8,192 characters) and `Parameters`
// (at least one when present) as coral constraints at `path` ("statement" or
// "statements.1.member.statement"); parameter values into `validation`, their numbers read
// as Java's BigDecimal reads them.
struct StatementSpec {
  std::optional<std::string_view> text;
  std::vector<AttributeValue> parameters;
};
StatementSpec read_statement_spec(const JsonObject& spec, std::string_view path, CoralErrors& coral,
                                  Validation& validation);

// Parses the text (the cache) and makes every check that needs neither the table nor the
// operation. Throws ValidationException. With `ctx`, a statement on an index whose key has
// several HASH or RANGE attributes is refused for that before any of these checks.
BoundStatement prepare_statement(std::string_view text, std::vector<AttributeValue> parameters,
                                 const Context* ctx = nullptr);

// PartiQL runs on no index whose key has several HASH or RANGE attributes: throws
// ValidationException when `statement` names one.
void refuse_multi_attribute_index(const Context& ctx, const partiql::Statement& statement);

// The value a literal or `?` node stands for; nullptr for any other node.
const AttributeValue* constant_value(const partiql::Statement& statement, partiql::NodeId node,
                                     std::span<const AttributeValue> parameters);
// The attribute a path node of one name names; empty for any other node.
std::string_view top_attribute(const partiql::Statement& statement, partiql::NodeId node);

// Calls `visit` with each conjunct of the top-level conjunction of `node` (the node itself
// when it is no AND), in text order.
template <typename Visit>
void for_each_conjunct(const partiql::Statement& statement, partiql::NodeId node, Visit&& visit) {
  if (node == partiql::kNoNode) return;
  const partiql::Node& n = statement.node(node);
  if (n.type == partiql::NodeType::kAnd) {
    for_each_conjunct(statement, n.args[0], visit);
    for_each_conjunct(statement, n.args[1], visit);
  } else {
    visit(node);
  }
}

// What pins one item: a key attribute compared by `=` (or, where `in_counts`, IN with one
// value) with a constant, in WHERE's top-level conjunction.
struct ItemKeyMatch {
  enum class Problem : std::uint8_t {
    kNone,
    kMissing,   // a key attribute has no equality
    kMultiple,  // one key attribute equal to two different values
    kType,      // a key value of the wrong type
  };
  Item key;
  Problem problem = Problem::kNone;
  std::string attribute;  // the attribute the problem is about
  bool only_key = true;   // WHERE has no conjunct besides the key equalities
};
ItemKeyMatch match_item_key(const TableDefinition& table, const BoundStatement& s, bool in_counts);

// ExecuteStatement's texts for a key problem of an UPDATE or DELETE. Throws.
[[noreturn]] void throw_key_problem(const ItemKeyMatch& match);

// The write an INSERT, UPDATE, DELETE or EXISTS makes on `table`, with the key rules already
// met (`key`: the item's key; unused for INSERT). Throws ValidationException for the item
// and update rules (PutItem's and UpdateItem's texts).
ItemWrite statement_write(const BoundStatement& s, engine::TablePtr table, Item key,
                          bool all_old_on_condition_failure);

// Applies `w` to its item under the item's lock, as PutItem, UpdateItem and DeleteItem do.
engine::WriteResult apply_statement_write(const Context& ctx, ItemWrite& w,
                                          const engine::Metering& metering = {});

}  // namespace kumo::api
