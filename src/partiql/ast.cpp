#include "partiql/ast.h"

#include "partiql/messages.h"

namespace kumo::partiql {

std::string_view returning_text(Returning r) {
  switch (r) {
    case Returning::kAllOld:
      return "ALL OLD";
    case Returning::kModifiedOld:
      return "MODIFIED OLD";
    case Returning::kAllNew:
      return "ALL NEW";
    case Returning::kModifiedNew:
      return "MODIFIED NEW";
    case Returning::kNone:
      break;
  }
  return "";
}

std::string Statement::position(Span span) const {
  return msg::position(text, span.begin, span.end);
}

std::optional<expr::Comparator> comparator_of(Operator op) {
  switch (op) {
    case Operator::kEq:
      return expr::Comparator::kEq;
    case Operator::kNe:
      return expr::Comparator::kNe;
    case Operator::kLt:
      return expr::Comparator::kLt;
    case Operator::kLe:
      return expr::Comparator::kLe;
    case Operator::kGt:
      return expr::Comparator::kGt;
    case Operator::kGe:
      return expr::Comparator::kGe;
    default:
      return std::nullopt;
  }
}

std::string_view operator_text(Operator op) {
  switch (op) {
    case Operator::kEq:
      return "=";
    case Operator::kNe:
      return "<>";
    case Operator::kLt:
      return "<";
    case Operator::kLe:
      return "<=";
    case Operator::kGt:
      return ">";
    case Operator::kGe:
      return ">=";
    case Operator::kPlus:
      return "+";
    case Operator::kMinus:
      return "-";
    case Operator::kStar:
      return "*";
    case Operator::kSlash:
      return "/";
    case Operator::kPercent:
      return "%";
    case Operator::kConcat:
      return "||";
    case Operator::kAnd:
      return "AND";
    case Operator::kOr:
      return "OR";
    case Operator::kNot:
      return "NOT";
    case Operator::kIs:
      return "IS";
    case Operator::kIsNot:
      return "IS NOT";
    case Operator::kIn:
      return "IN";
    case Operator::kNotIn:
      return "NOT IN";
    case Operator::kBetween:
      return "BETWEEN";
    case Operator::kNotBetween:
      return "NOT BETWEEN";
    case Operator::kLike:
      return "LIKE";
    case Operator::kNotLike:
      return "NOT LIKE";
  }
  return "";
}

namespace {

std::string_view compare_name(expr::Comparator c) {
  switch (c) {
    case expr::Comparator::kEq:
      return "Eq";
    case expr::Comparator::kNe:
      return "Ne";
    case expr::Comparator::kLt:
      return "Lt";
    case expr::Comparator::kLe:
      return "Lte";
    case expr::Comparator::kGt:
      return "Gt";
    case expr::Comparator::kGe:
      return "Gte";
  }
  return "";
}

std::string_view operator_name(const Node& n) {
  switch (n.op) {
    case Operator::kStar:
      return "Times";
    case Operator::kSlash:
      return "Divide";
    case Operator::kPercent:
      return "Modulo";
    case Operator::kConcat:
      return "Concat";
    case Operator::kLike:
    case Operator::kNotLike:
      return "Like";
    case Operator::kMinus:
      return "Neg";
    case Operator::kPlus:
      return "Pos";
    default:
      return operator_text(n.op);
  }
}

}  // namespace

std::string node_name(const Statement& statement, NodeId id) {
  const Node& n = statement.node(id);
  switch (n.type) {
    case NodeType::kLiteral:
      return "Lit";
    case NodeType::kParameter:
      return "Parameter";
    case NodeType::kMissing:
      return "Missing";
    case NodeType::kPath:
      return statement.paths[n.ref].elements.size() == 1 ? "Id" : "Path";
    case NodeType::kList:
      return "List";
    case NodeType::kCompare:
      return std::string(compare_name(n.comparator));
    case NodeType::kBetween:
      return "Between";
    case NodeType::kIn:
      return "InCollection";
    case NodeType::kIs:
      return "IsType";
    case NodeType::kAnd:
      return "And";
    case NodeType::kOr:
      return "Or";
    case NodeType::kNot:
      return "Not";
    case NodeType::kPlus:
      return "Plus";
    case NodeType::kMinus:
      return "Minus";
    case NodeType::kOperator:
      return std::string(operator_name(n));
    case NodeType::kFunction:
    case NodeType::kAggregate:
      return to_lower(statement.source(n.span));
    case NodeType::kStatement:
      return "Select";
  }
  return "";
}

bool is_condition_function(Function f) {
  switch (f) {
    case Function::kAttributeExists:
    case Function::kAttributeNotExists:
    case Function::kAttributeType:
    case Function::kBeginsWith:
    case Function::kContains:
      return true;
    default:
      return false;
  }
}

}  // namespace kumo::partiql
