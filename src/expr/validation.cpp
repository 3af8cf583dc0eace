#include "expr/validation.h"

#include <algorithm>
#include <array>
#include <optional>
#include <string>

#include "expr/evaluate.h"
#include "expr/messages.h"
#include "model/api_error.h"

namespace kumo::expr {
namespace {

class OperandChecker {
 public:
  OperandChecker(const ParsedExpression& parsed, const Bindings& bindings)
      : parsed_(parsed), bindings_(bindings) {}

  void run() {
    switch (parsed_.kind) {
      case ExpressionKind::kProjection:
        break;
      case ExpressionKind::kUpdate:
        for (const UpdateAction& action : parsed_.actions) check_action(action);
        break;
      default:
        visit(parsed_.root);
        break;
    }
    if (!distinct_error_.empty()) throw error(distinct_error_);
    if (!type_error_.empty()) throw error(type_error_);
  }

 private:
  ApiError error(const std::string& detail) const {
    return ApiError::validation(msg::invalid(parsed_.kind, detail));
  }
  const Node& node(NodeId id) const { return parsed_.nodes[id]; }
  const AttributeValue* constant(NodeId id) const {
    const Node& n = node(id);
    return n.type == NodeType::kValue ? &bindings_.value(n.ref) : nullptr;
  }
  // The type an operand has whatever the item holds: a constant's, or N for size().
  std::optional<AttrType> static_type(NodeId id) const {
    const Node& n = node(id);
    if (n.type == NodeType::kValue) return bindings_.value(n.ref).type();
    if (n.type == NodeType::kFunction && n.function == Function::kSize) return AttrType::N;
    return std::nullopt;
  }
  void type_problem(std::string message) {
    if (type_error_.empty()) type_error_ = std::move(message);
  }

  bool same_path(NodeId a, NodeId b) const {
    if (node(a).type != NodeType::kPath || node(b).type != NodeType::kPath) return false;
    const auto& x = parsed_.paths[node(a).ref].elements;
    const auto& y = parsed_.paths[node(b).ref].elements;
    return std::ranges::equal(x, y, [this](const PathElement& p, const PathElement& q) {
      const bool p_index = p.kind == PathElement::Kind::kIndex;
      if (p_index != (q.kind == PathElement::Kind::kIndex)) return false;
      return p_index ? p.number == q.number : bindings_.name(p) == bindings_.name(q);
    });
  }

  // DynamoDB rejects an operator or function whose first operand is a path repeated among
  // the remaining operands (`a = a`, `contains(a, a)`): the result would be constant.
  void check_distinct(const Node& n, std::string_view op) {
    if (!distinct_error_.empty()) return;
    for (std::size_t i = 1; i < n.args.size(); ++i) {
      if (same_path(n.args[0], n.args[i])) {
        const ResolvedPath first = bindings_.resolve(parsed_.paths[node(n.args[0]).ref]);
        distinct_error_ = msg::not_distinct(op, render_path(first));
        return;
      }
    }
  }

  void visit(NodeId id) {
    const Node& n = node(id);
    switch (n.type) {
      case NodeType::kCompare:
        check_distinct(n, comparator_text(n.comparator));
        if (n.comparator != Comparator::kEq && n.comparator != Comparator::kNe) {
          check_orderable(n, comparator_text(n.comparator));
        }
        break;
      case NodeType::kBetween:
        check_distinct(n, "BETWEEN");
        check_between(n);
        check_orderable(n, "BETWEEN");
        break;
      case NodeType::kIn:
        check_distinct(n, "IN");
        break;
      case NodeType::kFunction:
        check_function(n);
        break;
      case NodeType::kPlus:
      case NodeType::kMinus:
        for (NodeId arg : n.args) {
          if (const AttributeValue* v = constant(arg); v && v->type() != AttrType::N) {
            type_problem(
                msg::operand_type(n.type == NodeType::kPlus ? "+" : "-", type_name(v->type())));
          }
        }
        break;
      default:
        break;
    }
    for (NodeId arg : n.args) visit(arg);
  }

  // <, <=, >, >= and BETWEEN order S, N and B values only: a constant of another type can
  // never compare, so it is refused before any item is read.
  void check_orderable(const Node& n, std::string_view op) {
    for (NodeId arg : n.args) {
      const AttributeValue* v = constant(arg);
      if (v && v->type() != AttrType::S && v->type() != AttrType::N && v->type() != AttrType::B) {
        type_problem(msg::operand_type(op, type_name(v->type())));
      }
    }
  }

  // Constant bounds are checked up front: same type, and lower <= upper.
  void check_between(const Node& n) {
    const AttributeValue* lower = constant(n.args[1]);
    const AttributeValue* upper = constant(n.args[2]);
    if (lower == nullptr || upper == nullptr) return;
    if (lower->type() != upper->type()) return type_problem(msg::between_types(*lower, *upper));
    std::optional<std::strong_ordering> order = compare_scalars(*lower, *upper);
    if (order && *order == std::strong_ordering::greater) {
      type_problem(msg::between_order(*lower, *upper));
    }
  }

  void check_function(const Node& n) {
    const std::string_view name = function_name(n.function);
    switch (n.function) {
      case Function::kAttributeType: {
        check_distinct(n, name);
        const std::optional<AttrType> type = static_type(n.args[1]);
        if (type && *type != AttrType::S) {
          return type_problem(msg::operand_type(name, type_name(*type)));
        }
        const AttributeValue* t = constant(n.args[1]);
        if (t == nullptr) return;
        static constexpr std::array<std::string_view, 10> kTypes{"S",  "SS",   "N",    "NS", "B",
                                                                 "BS", "BOOL", "NULL", "L",  "M"};
        if (std::ranges::find(kTypes, t->as_string()) == kTypes.end()) {
          type_problem(msg::invalid_attribute_type(t->as_string()));
        }
        return;
      }
      case Function::kBeginsWith:
        check_distinct(n, name);
        for (NodeId arg : n.args) {
          const AttributeValue* v = constant(arg);
          if (v && v->type() != AttrType::S && v->type() != AttrType::B) {
            type_problem(msg::operand_type(name, type_name(v->type())));
          }
        }
        return;
      case Function::kContains:
        check_distinct(n, name);
        return;
      case Function::kSize:
        if (const std::optional<AttrType> type = static_type(n.args[0]);
            type && (*type == AttrType::N || *type == AttrType::BOOL || *type == AttrType::NUL)) {
          type_problem(msg::operand_type(name, type_name(*type)));
        }
        return;
      case Function::kListAppend:
        for (NodeId arg : n.args) {
          if (const AttributeValue* v = constant(arg); v && v->type() != AttrType::L) {
            type_problem(msg::operand_type(name, type_name(v->type())));
          }
        }
        return;
      default:
        return;
    }
  }

  // ADD takes a number or a set, DELETE a set.
  void check_action(const UpdateAction& action) {
    switch (action.clause) {
      case UpdateClause::kSet:
        return visit(action.value);
      case UpdateClause::kRemove:
        return;
      case UpdateClause::kAdd: {
        const AttrType t = constant(action.value)->type();
        if (t != AttrType::N && t != AttrType::SS && t != AttrType::NS && t != AttrType::BS) {
          type_problem(msg::clause_operand_type("ADD", t));
        }
        return;
      }
      case UpdateClause::kDelete: {
        const AttrType t = constant(action.value)->type();
        if (t != AttrType::SS && t != AttrType::NS && t != AttrType::BS) {
          type_problem(msg::clause_operand_type("DELETE", t));
        }
        return;
      }
    }
  }

  const ParsedExpression& parsed_;
  const Bindings& bindings_;
  std::string distinct_error_;
  std::string type_error_;
};

}  // namespace

void check_operands(const ParsedExpression& parsed, const Bindings& bindings) {
  if (!parsed.deferred_error.empty()) {
    throw ApiError::validation(msg::invalid(parsed.kind, parsed.deferred_error));
  }
  OperandChecker(parsed, bindings).run();
}

}  // namespace kumo::expr
