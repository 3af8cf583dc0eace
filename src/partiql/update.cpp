#include "partiql/update.h"

#include <memory>
#include <optional>
#include <string>
#include <utility>

namespace kumo::partiql {
namespace {

class UpdateBuilder {
 public:
  explicit UpdateBuilder(const Statement& statement)
      : s_(statement), out_(std::make_shared<expr::ParsedExpression>()) {
    out_->kind = expr::ExpressionKind::kUpdate;
  }

  // The update, or null when an action has a shape DynamoDB refuses.
  std::shared_ptr<const expr::ParsedExpression> run() {
    out_->actions.reserve(s_.actions.size());
    for (const Action& a : s_.actions) {
      std::optional<expr::UpdateAction> action = build(a);
      if (!action) return nullptr;
      out_->actions.push_back(*action);
    }
    return std::move(out_);
  }

  std::vector<NodeId>& slots() { return slots_; }

 private:
  const Node& node(NodeId id) const { return s_.node(id); }

  expr::NodeId add(expr::Node n) {
    out_->nodes.push_back(std::move(n));
    return static_cast<expr::NodeId>(out_->nodes.size() - 1);
  }

  // The path of kPath node `id`, copied into the update.
  std::uint32_t path(NodeId id) {
    out_->paths.push_back(s_.paths[node(id).ref]);
    return static_cast<std::uint32_t>(out_->paths.size() - 1);
  }

  // A constant or parameter as the next value slot.
  expr::NodeId slot(NodeId id) {
    const auto number = static_cast<std::uint32_t>(slots_.size());
    slots_.push_back(id);
    out_->value_placeholders.push_back(":" + std::to_string(number));
    out_->placeholder_uses.push_back({.is_name = false, .slot = number});
    expr::Node n;
    n.type = expr::NodeType::kValue;
    n.ref = number;
    return add(std::move(n));
  }

  std::optional<expr::UpdateAction> build(const Action& a) {
    expr::UpdateAction action;
    action.path = path(a.target);
    if (a.type == ActionType::kRemove) {
      action.clause = expr::UpdateClause::kRemove;
      return action;
    }
    const Node& value = node(a.value);
    if (value.type == NodeType::kFunction &&
        (value.function == Function::kSetAdd || value.function == Function::kSetDelete)) {
      if (!set_operand(value, a.target)) return std::nullopt;
      action.clause = value.function == Function::kSetAdd ? expr::UpdateClause::kAdd
                                                          : expr::UpdateClause::kDelete;
      action.value = slot(value.args[1]);
      return action;
    }
    std::optional<expr::NodeId> operand = set_value(a.value);
    if (!operand) return std::nullopt;
    action.clause = expr::UpdateClause::kSet;
    action.value = *operand;
    return action;
  }

  // set_add(target, set), set_delete(target, set): the set is a literal or a parameter.
  bool set_operand(const Node& call, NodeId target) const {
    if (call.args.size() != 2) return false;
    const Node& first = node(call.args[0]);
    if (first.type != NodeType::kPath || s_.paths[first.ref] != s_.paths[node(target).ref]) {
      return false;
    }
    const Node& set = node(call.args[1]);
    if (set.type == NodeType::kParameter) return true;
    if (set.type != NodeType::kLiteral) return false;
    const AttrType type = s_.values[set.ref].type();
    return type == AttrType::SS || type == AttrType::NS || type == AttrType::BS;
  }

  // A SET value as an UpdateExpression's operand tree, or nullopt for another shape.
  std::optional<expr::NodeId> set_value(NodeId id) {
    const Node& n = node(id);
    expr::Node out;
    switch (n.type) {
      case NodeType::kLiteral:
      case NodeType::kParameter:
        return slot(id);
      case NodeType::kPath:
        out.type = expr::NodeType::kPath;
        out.ref = path(id);
        return add(std::move(out));
      case NodeType::kPlus:
        out.type = expr::NodeType::kPlus;
        break;
      case NodeType::kMinus:
        out.type = expr::NodeType::kMinus;
        break;
      case NodeType::kFunction:
        if (n.function != Function::kListAppend || n.args.size() != 2) return std::nullopt;
        out.type = expr::NodeType::kFunction;
        out.function = expr::Function::kListAppend;
        break;
      default:
        return std::nullopt;
    }
    for (NodeId arg : n.args) {
      std::optional<expr::NodeId> operand = set_value(arg);
      if (!operand) return std::nullopt;
      out.args.push_back(*operand);
    }
    return add(std::move(out));
  }

  const Statement& s_;
  std::shared_ptr<expr::ParsedExpression> out_;
  std::vector<NodeId> slots_;  // by value slot: the constant or parameter node
};

}  // namespace

void build_update(Statement& statement) {
  if (statement.kind != StatementKind::kUpdate) return;
  UpdateBuilder builder(statement);
  statement.update = builder.run();
  if (statement.update) statement.update_slots = std::move(builder.slots());
}

expr::AttributeValues update_values(const Statement& statement,
                                    std::span<const AttributeValue> parameters) {
  expr::AttributeValues values;
  for (std::size_t i = 0; i < statement.update_slots.size(); ++i) {
    const Node& n = statement.node(statement.update_slots[i]);
    values.emplace(statement.update->value_placeholders[i],
                   n.type == NodeType::kParameter ? parameters[n.ref] : statement.values[n.ref]);
  }
  return values;
}

}  // namespace kumo::partiql
