// The expression parameters of one request: the names and values maps, each expression
// compiled against them, and the checks that span them all.
// Legacy parameters (Expected, AttributeUpdates, QueryFilter, ScanFilter) are translated into
// the same expressions, so one evaluator serves both.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "api/attribute_json.h"
#include "api/json_reader.h"
#include "expr/condition.h"
#include "expr/key_condition.h"
#include "expr/projection.h"
#include "expr/update.h"

namespace kumo::api {

// Which expression members an operation takes.
struct ExpressionMembers {
  bool condition = false;      // ConditionExpression (+ legacy Expected)
  bool update = false;         // UpdateExpression (+ legacy AttributeUpdates)
  bool projection = false;     // ProjectionExpression (+ legacy AttributesToGet)
  bool filter = false;         // FilterExpression (+ legacy QueryFilter / ScanFilter)
  bool key_condition = false;  // KeyConditionExpression (+ legacy KeyConditions)
  // Tail of "ExpressionAttributeValues can only be specified when using expressions: ...",
  // e.g. "ConditionExpression is null"; empty: the message ends at "expressions".
  std::string_view values_null_tail = {};
};

// Compiled expressions of one request. Expressions point into `names` and `values`, so the
// object stays where it was filled (no copy, no move).
class RequestExpressions {
 public:
  RequestExpressions() = default;
  RequestExpressions(const RequestExpressions&) = delete;
  RequestExpressions& operator=(const RequestExpressions&) = delete;

  // Reads the maps (ExpressionAttributeValues decoded into `validation`'s first failure) —
  // call during decoding, before coral checks are thrown.
  void read_maps(const JsonObject& request, Validation& validation);

  // Checks and compiles, in DynamoDB's order: the legacy/expression mixing rule, the maps,
  // each expression (Update, Condition, KeyCondition, Filter, Projection), then unused
  // placeholders. Throws ValidationException.
  void compile(const JsonObject& request, const ExpressionMembers& members);

  // Sets `update` to the built `parsed` with these values (kept here, so they outlive it).
  // They replace the request's values: call it on an object nothing else was compiled into.
  // Throws ValidationException as UpdateExpression::build does.
  void set_update(std::shared_ptr<const expr::ParsedExpression> parsed,
                  expr::AttributeValues values);

  std::optional<expr::ConditionExpression> condition;
  std::optional<expr::UpdateExpression> update;
  std::optional<expr::KeyConditionExpression> key_condition;
  std::optional<expr::ConditionExpression> filter;
  std::optional<expr::ProjectionExpression> projection;
  // Top-level names of AttributesToGet, when given instead of a ProjectionExpression.
  std::optional<std::vector<std::string>> attributes_to_get;

  // Item `item` as the request asked to see it (projection or AttributesToGet).
  Item project(const Item& item) const;
  bool projects() const { return projection || attributes_to_get; }

 private:
  // Whether the request gave ExpressionAttributeNames / ExpressionAttributeValues.
  bool names_given_ = false;
  bool values_given_ = false;
  expr::AttributeNames names_;
  expr::AttributeValues values_;
  std::optional<std::string> values_error_;  // the first invalid value, already worded
};

// AttributesToGet, when given, names at least one attribute: a model constraint, added to
// `coral` at `path`.
void check_attributes_to_get(const JsonObject& request, std::string_view path, CoralErrors& coral);

// Legacy translation (legacy.cpp): appends to `names`/`values` the generated placeholders
// and returns the expression text, or "" when the map is empty. Throws DynamoDB's legacy
// validation messages for condition maps and AttributeUpdates.
std::string translate_conditions(const JsonObject& conditions, std::string_view member,
                                 std::string_view conditional_operator, bool expected_form,
                                 expr::AttributeNames& names, expr::AttributeValues& values);
// KeyConditions (Query) → KeyConditionExpression text.
std::string translate_key_conditions(const JsonObject& conditions, expr::AttributeNames& names,
                                     expr::AttributeValues& values);
std::string translate_attribute_updates(const JsonObject& updates, expr::AttributeNames& names,
                                        expr::AttributeValues& values);

}  // namespace kumo::api
