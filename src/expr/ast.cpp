#include "expr/ast.h"

namespace kumo::expr {

std::string_view kind_name(ExpressionKind kind) {
  switch (kind) {
    case ExpressionKind::kCondition:
      return "ConditionExpression";
    case ExpressionKind::kFilter:
      return "FilterExpression";
    case ExpressionKind::kKeyCondition:
      return "KeyConditionExpression";
    case ExpressionKind::kProjection:
      return "ProjectionExpression";
    case ExpressionKind::kUpdate:
      return "UpdateExpression";
  }
  return "";
}

std::string_view comparator_text(Comparator op) {
  switch (op) {
    case Comparator::kEq:
      return "=";
    case Comparator::kNe:
      return "<>";
    case Comparator::kLt:
      return "<";
    case Comparator::kLe:
      return "<=";
    case Comparator::kGt:
      return ">";
    case Comparator::kGe:
      return ">=";
  }
  return "";
}

std::string_view function_name(Function f) {
  switch (f) {
    case Function::kAttributeExists:
      return "attribute_exists";
    case Function::kAttributeNotExists:
      return "attribute_not_exists";
    case Function::kAttributeType:
      return "attribute_type";
    case Function::kBeginsWith:
      return "begins_with";
    case Function::kContains:
      return "contains";
    case Function::kSize:
      return "size";
    case Function::kIfNotExists:
      return "if_not_exists";
    case Function::kListAppend:
      return "list_append";
  }
  return "";
}

}  // namespace kumo::expr
