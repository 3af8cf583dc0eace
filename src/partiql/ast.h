// The parsed form of one PartiQL statement: SELECT, INSERT, UPDATE (both forms), DELETE, or
// EXISTS(SELECT ...) for ExecuteTransaction. A Statement depends only on the statement text:
// `?` parameters stay unbound (Node::ref numbers them), so one parse serves every request
// with the same text (cache.h). It is immutable once built.
//
// Expressions are nodes in one table (`nodes`), each naming its operands by index. Document
// paths are expr::DocumentPath (only name and index elements), and every constant — a
// scalar, or a list, map or set literal holding no parameter — is one AttributeValue in
// `values`, already converted with DynamoDB's Number rules.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "expr/ast.h"
#include "expr/path.h"
#include "model/attribute_value.h"
#include "partiql/lexer.h"

namespace kumo::partiql {

using NodeId = std::uint32_t;
constexpr NodeId kNoNode = ~NodeId{0};

// Bytes [begin, end) of the statement text: where a node was written, for the messages that
// name a position (Statement::position).
struct Span {
  std::uint32_t begin = 0;
  std::uint32_t end = 0;
};

enum class StatementKind : std::uint8_t { kSelect, kInsert, kUpdate, kDelete, kExists };

enum class NodeType : std::uint8_t {
  kLiteral,    // a constant: values[ref]
  kParameter,  // `?`: the ref-th parameter, counted from 0 in text order
  kMissing,    // MISSING
  kPath,       // a document path: paths[ref]
  kList,       // (a, b), or a list, map or set literal that holds a non-constant (refused)
  kCompare,    // args[0] <comparator> args[1]
  kBetween,    // args[0] [NOT] BETWEEN args[1] AND args[2]
  kIn,         // args[0] [NOT] IN (args[1..]); see Node::list
  kIs,         // args[0] IS [NOT] <is_type>
  kAnd,        // args[0] AND args[1]
  kOr,         // args[0] OR args[1]
  kNot,        // NOT args[0]
  kPlus,       // args[0] + args[1]
  kMinus,      // args[0] - args[1]
  kOperator,   // any other operator PartiQL parses (`op`): * / % || LIKE, or a sign before
               // something other than a number (one operand)
  kFunction,   // a call of `function` with args
  kAggregate,  // COUNT, SUM, AVG, MIN, MAX (Node::star for COUNT(*))
  kStatement,  // a statement as a term: the root, and the SELECT inside EXISTS; refused elsewhere
};

// The functions DynamoDB's PartiQL knows, and kOther for any other name (the node's span is
// the name as written).
enum class Function : std::uint8_t {
  kOther,
  kAttributeExists,
  kAttributeNotExists,
  kAttributeType,
  kBeginsWith,
  kContains,
  kSize,
  kListAppend,
  kSetAdd,
  kSetDelete,
  kExists,
  kCount,
  kSum,
  kAvg,
  kMin,
  kMax,
};

// The type of an IS test. DynamoDB supports the first eight; every other type name PartiQL
// parses is kOther.
enum class IsType : std::uint8_t {
  kMissing,
  kNull,
  kBoolean,  // BOOL, BOOLEAN
  kString,
  kNumeric,
  kBlob,
  kStruct,  // STRUCT, TUPLE
  kList,
  kOther,
};

struct Node {
  NodeType type = NodeType::kLiteral;
  Operator op = Operator::kEq;  // the operator as written (comparisons, IN, IS, arithmetic...)
  expr::Comparator comparator = expr::Comparator::kEq;  // kCompare
  Function function = Function::kOther;                 // kFunction, kAggregate
  IsType is_type = IsType::kNull;                       // kIs
  bool negated = false;                                 // NOT IN, NOT BETWEEN, IS NOT
  bool list = false;      // kIn: the right side was a list, flattened into args[1..]
  bool star = false;      // kAggregate: COUNT(*)
  std::uint32_t ref = 0;  // kLiteral: values index; kParameter: number; kPath: paths index
  // kLiteral: the literal (for a number, its digits without a sign); kPath: the whole path;
  // kFunction, kAggregate: the name; kIs: the type name; operators: the operator.
  Span span;
  std::vector<NodeId> args;
};

// The table a statement reads or writes: FROM, INTO, or UPDATE's target.
struct Target {
  std::vector<std::string> names;  // the path's components, quotes removed: table[, index...]
  bool is_path = true;             // false when the source is not a path of names
  Span span;

  const std::string& table() const { return names.front(); }
  std::optional<std::string_view> index() const {
    if (names.size() < 2) return std::nullopt;
    return names[1];
  }
};

// One projected path of a SELECT and the attribute its value is returned under: the path's
// last name with the indexes that follow it (`m.k[0]` → "k[0]", `l[-0]` → "l[0]").
struct ProjectionItem {
  NodeId node = kNoNode;  // a kPath, unless the statement is refused (check.h)
  std::string key;
};

struct OrderKey {
  NodeId node = kNoNode;
  bool descending = false;
};

// One attribute of an INSERT's item: its value is a kLiteral or a kParameter.
struct InsertAttribute {
  std::string name;
  NodeId value = kNoNode;
  Span span;  // the name
};

enum class ActionType : std::uint8_t { kSet, kRemove };

// One action of an UPDATE, in text order: SET target = value, or REMOVE target.
struct Action {
  ActionType type = ActionType::kSet;
  NodeId target = kNoNode;  // a kPath
  NodeId value = kNoNode;   // kSet only
};

enum class Returning : std::uint8_t { kNone, kAllOld, kModifiedOld, kAllNew, kModifiedNew };
// "ALL OLD", "MODIFIED NEW", ... as DynamoDB names a variant in messages.
std::string_view returning_text(Returning r);

// What one statement says. For kExists these are the clauses of the SELECT inside it.
struct Clauses {
  StatementKind kind = StatementKind::kSelect;
  Target target;
  bool select_all = false;                 // SELECT *
  std::vector<ProjectionItem> projection;  // SELECT a, b.c
  NodeId where = kNoNode;
  std::vector<OrderKey> order_by;
  std::vector<InsertAttribute> item;  // INSERT ... VALUE {...}
  std::vector<Action> actions;        // UPDATE's SET and REMOVE
  Returning returning = Returning::kNone;
};

struct Statement : Clauses {
  std::string text;
  std::vector<Node> nodes;
  std::vector<expr::DocumentPath> paths;
  std::vector<AttributeValue> values;
  std::uint32_t parameter_count = 0;
  // kUpdate: the actions as UpdateItem's update (value slot i is update_slots[i], a kLiteral
  // or kParameter node); null when a SET value is of a form no update holds, which
  // check_statement refuses (partiql/update.h).
  std::shared_ptr<const expr::ParsedExpression> update;
  std::vector<NodeId> update_slots;

  const Node& node(NodeId id) const { return nodes[id]; }
  std::string_view source(Span span) const {
    return std::string_view(text).substr(span.begin, span.end - span.begin);
  }
  // "<line>:<column>:<length>" of `span`, as messages end.
  std::string position(Span span) const;
};

// DynamoDB's name for the kind of expression a node is, as in "Unsupported operation: IsType"
// (a statement that is a bare expression) and "Unsupported data type: Parameter under key
// root[0]" (a non-constant inside a literal); calls are named by their function.
std::string node_name(const Statement& statement, NodeId id);

// Whether a function's result is a condition (true or false): attribute_exists,
// attribute_not_exists, attribute_type, begins_with, contains.
bool is_condition_function(Function f);

// The comparator of a comparison operator, or nullopt for other operators.
std::optional<expr::Comparator> comparator_of(Operator op);
// An operator as DynamoDB's messages write it: "=", "<>", "BETWEEN", "+", ...
std::string_view operator_text(Operator op);

}  // namespace kumo::partiql
