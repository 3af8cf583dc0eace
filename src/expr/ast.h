// The parsed form of an expression, shared by all five kinds (condition, filter, key
// condition, projection, update). A ParsedExpression depends only on the expression text:
// placeholders stay unresolved, so one parse serves every request with the same text (see
// cache.h). It is immutable once built.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "expr/path.h"
#include "model/attribute_value.h"

namespace kumo::expr {

enum class ExpressionKind : std::uint8_t {
  kCondition,     // ConditionExpression
  kFilter,        // FilterExpression
  kKeyCondition,  // KeyConditionExpression
  kProjection,    // ProjectionExpression
  kUpdate,        // UpdateExpression
};
// DynamoDB's parameter name, e.g. "ConditionExpression".
std::string_view kind_name(ExpressionKind kind);

// The request's ExpressionAttributeNames / ExpressionAttributeValues, decoded by api/.
using AttributeNames = std::map<std::string, std::string>;
using AttributeValues = std::map<std::string, AttributeValue>;

enum class NodeType : std::uint8_t {
  kPath,      // operand: a document path (ref = index into paths)
  kValue,     // operand: a :value placeholder (ref = value slot)
  kFunction,  // function call; args are its operands
  kCompare,   // args[0] <comparator> args[1]
  kBetween,   // args[0] BETWEEN args[1] AND args[2]
  kIn,        // args[0] IN (args[1..])
  kAnd,       // args[0] AND args[1]
  kOr,        // args[0] OR args[1]
  kNot,       // NOT args[0]
  kPlus,      // update value: args[0] + args[1]
  kMinus,     // update value: args[0] - args[1]
};

enum class Comparator : std::uint8_t { kEq, kNe, kLt, kLe, kGt, kGe };
std::string_view comparator_text(Comparator op);  // "=", "<>", "<", ...

enum class Function : std::uint8_t {
  kAttributeExists,
  kAttributeNotExists,
  kAttributeType,
  kBeginsWith,
  kContains,
  kSize,
  kIfNotExists,
  kListAppend,
};
std::string_view function_name(Function f);  // as written in expressions, e.g. "begins_with"

using NodeId = std::uint32_t;

struct Node {
  NodeType type = NodeType::kPath;
  Comparator comparator = Comparator::kEq;  // kCompare
  Function function = Function::kSize;      // kFunction
  std::uint32_t ref = 0;                    // kPath: path index; kValue: value slot
  std::vector<NodeId> args;                 // operands in source order
};

enum class UpdateClause : std::uint8_t { kSet, kRemove, kAdd, kDelete };

struct UpdateAction {
  UpdateClause clause = UpdateClause::kSet;
  std::uint32_t path = 0;  // index into paths: the attribute the action writes
  NodeId value = 0;        // SET: the value expression; ADD/DELETE: the :value; REMOVE: unused
};

// First use of a placeholder, so undefined ones are reported in source order.
struct PlaceholderUse {
  bool is_name = false;
  std::uint32_t slot = 0;
};

struct ParsedExpression {
  ExpressionKind kind = ExpressionKind::kCondition;
  std::string text;
  std::vector<Node> nodes;
  std::vector<DocumentPath> paths;
  std::vector<std::string> name_placeholders;   // distinct "#x", indexed by name slot
  std::vector<std::string> value_placeholders;  // distinct ":x", indexed by value slot
  std::vector<PlaceholderUse> placeholder_uses;
  NodeId root = 0;                        // condition, filter, key condition
  std::vector<std::uint32_t> projection;  // projection: path indexes in source order
  std::vector<UpdateAction> actions;      // update: actions in source order
  // Operand-count and document-path errors are found while parsing but DynamoDB reports
  // them only after undefined placeholders; full message, empty when there is none.
  std::string deferred_error;
};

}  // namespace kumo::expr
