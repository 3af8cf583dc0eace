#include "partiql/check.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <string>

#include "model/api_error.h"
#include "partiql/messages.h"

namespace kumo::partiql {
namespace {

[[noreturn]] void refuse(std::string message) {
  throw ApiError::validation(std::move(message));
}

std::string upper(std::string_view text) {
  std::string out(text);
  std::ranges::transform(out, out.begin(), [](char c) {
    return static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  });
  return out;
}

bool is_set(AttrType t) {
  return t == AttrType::SS || t == AttrType::NS || t == AttrType::BS;
}

class Checker {
 public:
  Checker(const Statement& s, std::span<const AttributeValue> parameters)
      : s_(s), parameters_(parameters) {}

  void run() {
    if (s_.parameter_count != parameters_.size()) refuse(std::string(msg::kParameterCount));
    if (s_.target.is_path && std::ranges::any_of(s_.target.names, &std::string::empty)) {
      refuse(std::string(msg::kEmptyPathComponent));
    }
    for_each_expression([this](NodeId id, NodeId) { operand_types(id); });
    check_target();
    check_projection();
    if (s_.kind == StatementKind::kDelete && s_.returning != Returning::kNone &&
        s_.returning != Returning::kAllOld) {
      refuse(msg::delete_returning(returning_text(s_.returning)));
    }
    for_each_expression([this](NodeId id, NodeId target) {
      if (target == kNoNode) {
        where(id);
      } else {
        update_value(id, target);
      }
    });
  }

 private:
  const Node& node(NodeId id) const { return s_.node(id); }
  std::string at(NodeId id) const { return s_.position(node(id).span); }

  // The first byte of the text an expression was written with.
  std::uint32_t begin_of(NodeId id) const {
    const Node& n = node(id);
    std::uint32_t begin = n.span.begin;
    for (NodeId arg : n.args) begin = std::min(begin, begin_of(arg));
    return begin;
  }

  // Calls f(expression, target) for the WHERE clause (target kNoNode) and every SET value
  // (target: its path), in text order: the SET values come together, before the WHERE in an
  // UPDATE, after it in the FROM-first form.
  template <typename F>
  void for_each_expression(const F& f) const {
    const auto first_set = std::ranges::find(s_.actions, ActionType::kSet, &Action::type);
    const bool where_first =
        s_.where != kNoNode &&
        (first_set == s_.actions.end() || begin_of(s_.where) < begin_of(first_set->value));
    if (where_first) f(s_.where, kNoNode);
    for (const Action& a : s_.actions) {
      if (a.type == ActionType::kSet) f(a.value, a.target);
    }
    if (s_.where != kNoNode && !where_first) f(s_.where, kNoNode);
  }

  // The type of a constant or bound parameter.
  std::optional<AttrType> value_type(NodeId id) const {
    const Node& n = node(id);
    if (n.type == NodeType::kLiteral) return s_.values[n.ref].type();
    if (n.type == NodeType::kParameter) return parameters_[n.ref].type();
    return std::nullopt;
  }

  bool is_condition(NodeId id) const {
    const Node& n = node(id);
    switch (n.type) {
      case NodeType::kCompare:
      case NodeType::kBetween:
      case NodeType::kIn:
      case NodeType::kIs:
      case NodeType::kAnd:
      case NodeType::kOr:
      case NodeType::kNot:
        return true;
      case NodeType::kFunction:
        return is_condition_function(n.function);
      default:
        return false;
    }
  }

  // --- 3. operand types ---
  void operand_types(NodeId id) const {
    const Node& n = node(id);
    const bool ordering = (n.type == NodeType::kCompare && n.comparator != expr::Comparator::kEq &&
                           n.comparator != expr::Comparator::kNe) ||
                          n.type == NodeType::kBetween;
    const bool arithmetic = n.type == NodeType::kPlus || n.type == NodeType::kMinus;
    if (ordering || arithmetic) {
      const std::string_view op = n.type == NodeType::kBetween ? "BETWEEN" : operator_text(n.op);
      for (NodeId arg : n.args) {
        const std::optional<AttrType> type = is_condition(arg) ? AttrType::BOOL : value_type(arg);
        if (!type) continue;
        const bool refused =
            arithmetic ? *type != AttrType::N
                       : *type != AttrType::S && *type != AttrType::N && *type != AttrType::B;
        if (refused) refuse(msg::operand_type(op, type_name(*type)));
      }
    }
    for (NodeId arg : n.args) operand_types(arg);
  }

  // --- 4. the table path ---
  void check_target() const {
    const Target& t = s_.target;
    switch (s_.kind) {
      case StatementKind::kSelect:
      case StatementKind::kExists:
        if (!t.is_path) refuse(std::string(msg::kSingleSource));
        if (t.names.size() > 2) refuse(std::string(msg::kFromComponents));
        return;
      case StatementKind::kInsert:
        if (!t.is_path || t.names.size() > 1) refuse(std::string(msg::kDmlSingleTable));
        return;
      case StatementKind::kUpdate:
      case StatementKind::kDelete:
        if (!t.is_path || t.names.size() > 1) refuse(std::string(msg::kNotOnIndex));
        return;
    }
  }

  // --- 5. projection ---
  void check_projection() const {
    for (const ProjectionItem& item : s_.projection) {
      if (node(item.node).type != NodeType::kPath)
        refuse(msg::unexpected_path_component(at(item.node)));
    }
    for (std::size_t i = 0; i < s_.projection.size(); ++i) {
      for (std::size_t j = 0; j < i; ++j) {
        if (s_.paths[node(s_.projection[i].node).ref] ==
            s_.paths[node(s_.projection[j].node).ref]) {
          refuse(msg::duplicate_projection(s_.projection[i].key));
        }
      }
    }
  }

  // --- 7. expressions ---
  void where(NodeId id) const {
    const Node& n = node(id);
    const std::optional<AttrType> type = value_type(id);
    if ((type && *type != AttrType::BOOL) || n.type == NodeType::kPlus ||
        n.type == NodeType::kMinus ||
        (n.type == NodeType::kFunction && n.function == Function::kSize)) {
      refuse(std::string(msg::kWhereBoolean));
    }
    condition(id);
  }

  // Anything in a WHERE clause: conditions and their operands alike, since a condition's
  // result is a value that can be compared.
  void condition(NodeId id) const {
    const Node& n = node(id);
    switch (n.type) {
      case NodeType::kLiteral:
      case NodeType::kParameter:
      case NodeType::kPath:
        return;
      case NodeType::kMissing:
        refuse(std::string(msg::kMissingValue));
      case NodeType::kIn:
        if (!n.list || n.args.size() < 2) refuse(std::string(msg::kInShape));
        if (n.args.size() - 1 > msg::kMaxInOperands) refuse(msg::in_operands(n.args.size() - 1));
        break;
      case NodeType::kIs:
        return is(n);
      case NodeType::kFunction:
        condition_function(n);
        break;
      case NodeType::kAggregate:
        refuse(msg::unrecognized_function(node_name(s_, id), at(id)));
      case NodeType::kPlus:
      case NodeType::kMinus:
      case NodeType::kOperator:
        refuse(msg::condition_operator(operator_text(n.op)));
      case NodeType::kList:
      case NodeType::kStatement:
        refuse(msg::condition_operator(node_name(s_, id)));
      default:
        break;
    }
    for (NodeId arg : n.args) condition(arg);
  }

  void is(const Node& n) const {
    const Node& operand = node(n.args[0]);
    if (operand.type != NodeType::kPath && operand.type != NodeType::kLiteral &&
        operand.type != NodeType::kMissing) {
      refuse(std::string(msg::kIsOperand));
    }
    if (n.is_type == IsType::kOther) {
      refuse(msg::is_type(upper(s_.source(n.span))));
    }
  }

  void arity(const Node& n, std::size_t expected) const {
    if (n.args.size() != expected) {
      refuse(msg::operand_count(to_lower(s_.source(n.span)), n.args.size()));
    }
  }

  void condition_function(const Node& n) const {
    const std::string name = to_lower(s_.source(n.span));
    switch (n.function) {
      case Function::kAttributeExists:
      case Function::kAttributeNotExists:
        arity(n, 1);
        if (node(n.args[0]).type != NodeType::kPath) refuse(msg::requires_path(name));
        return;
      case Function::kAttributeType:
        arity(n, 2);
        if (node(n.args[0]).type != NodeType::kPath) refuse(msg::requires_path(name));
        return attribute_type_name(n.args[1]);
      case Function::kBeginsWith:
      case Function::kContains:
        return arity(n, 2);
      case Function::kSize:
        return arity(n, 1);
      default:
        refuse(msg::unrecognized_function(name, s_.position(n.span)));
    }
  }

  // attribute_type's second operand: one of DynamoDB's type names, as a string.
  void attribute_type_name(NodeId id) const {
    const std::optional<AttrType> type = value_type(id);
    if (!type) return;
    if (*type != AttrType::S) refuse(msg::operand_type("attribute_type", type_name(*type)));
    const Node& n = node(id);
    const std::string& name = n.type == NodeType::kLiteral ? s_.values[n.ref].as_string()
                                                           : parameters_[n.ref].as_string();
    static constexpr std::string_view kNames[] = {"S",  "SS",   "N",    "NS", "B",
                                                  "BS", "BOOL", "NULL", "L",  "M"};
    if (std::ranges::find(kNames, name) == std::end(kNames)) {
      refuse(msg::invalid_attribute_type(name));
    }
  }

  // A SET value: constants, parameters, paths, + and -, list_append; or, as the whole value,
  // set_add or set_delete (an ADD or DELETE of a set, which has no place inside another
  // value).
  void update_value(NodeId id, NodeId target, bool whole = true) const {
    const Node& n = node(id);
    switch (n.type) {
      case NodeType::kLiteral:
      case NodeType::kParameter:
      case NodeType::kPath:
        return;
      case NodeType::kPlus:
      case NodeType::kMinus:
        break;
      case NodeType::kFunction:
        if ((n.function == Function::kSetAdd || n.function == Function::kSetDelete) && whole) {
          return set_function(n, target);
        }
        if (n.function != Function::kListAppend) {
          refuse(msg::unrecognized_function(node_name(s_, id), at(id)));
        }
        arity(n, 2);
        break;
      case NodeType::kIs:
        refuse(std::string(msg::kIsInUpdate));
      case NodeType::kMissing:
        refuse(std::string(msg::kMissingValue));
      case NodeType::kAggregate:
        refuse(msg::unrecognized_function(node_name(s_, id), at(id)));
      case NodeType::kList:
      case NodeType::kStatement:
        refuse(msg::update_operator(node_name(s_, id)));
      default:
        refuse(msg::update_operator(operator_text(n.op)));
    }
    for (NodeId arg : n.args) update_value(arg, target, false);
  }

  // SET x = set_add(x, <<...>>): the first argument is the assigned path, the second a set.
  void set_function(const Node& n, NodeId target) const {
    const std::string name = upper(s_.source(n.span));
    const std::string at_name = s_.position(n.span);
    if (n.args.size() != 2) refuse(msg::set_function_arity(name, at_name));
    const Node& first = node(n.args[0]);
    if (first.type != NodeType::kPath || s_.paths[first.ref] != s_.paths[node(target).ref]) {
      refuse(msg::set_function_first(name, at_name));
    }
    const std::optional<AttrType> type = value_type(n.args[1]);
    if (!type || !is_set(*type)) refuse(msg::set_function_second(name, s_.position(first.span)));
  }

  const Statement& s_;
  std::span<const AttributeValue> parameters_;
};

}  // namespace

void check_statement(const Statement& statement, std::span<const AttributeValue> parameters) {
  Checker(statement, parameters).run();
}

}  // namespace kumo::partiql
