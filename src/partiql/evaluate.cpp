#include "partiql/evaluate.h"

#include <algorithm>
#include <cstddef>
#include <optional>

#include "expr/binding.h"
#include "expr/evaluate.h"

namespace kumo::partiql {
namespace {

// PartiQL paths hold names and indexes only, so they resolve without placeholders.
const expr::Bindings& no_bindings() {
  static const expr::Bindings bindings;
  return bindings;
}

// The operand counts the evaluator relies on; check_statement guarantees them.
bool well_formed(const Node& n) {
  switch (n.type) {
    case NodeType::kCompare:
    case NodeType::kAnd:
    case NodeType::kOr:
      return n.args.size() == 2;
    case NodeType::kNot:
    case NodeType::kIs:
      return n.args.size() == 1;
    case NodeType::kBetween:
      return n.args.size() == 3;
    case NodeType::kIn:
      return n.list && n.args.size() >= 2;
    case NodeType::kFunction:
      return n.args.size() == (n.function == Function::kAttributeExists ||
                                       n.function == Function::kAttributeNotExists ||
                                       n.function == Function::kSize
                                   ? 1u
                                   : 2u);
    default:
      return true;
  }
}

class Evaluator {
 public:
  Evaluator(const Statement& statement, std::span<const AttributeValue> parameters,
            const Item& item)
      : s_(statement), parameters_(parameters), item_(item) {}

  // Whether the expression at `id` holds: a condition that is true, or a value that is the
  // BOOL true.
  bool holds(NodeId id) const {
    const Node& n = s_.node(id);
    if (!well_formed(n)) return false;
    switch (n.type) {
      case NodeType::kAnd:
        return holds(n.args[0]) && holds(n.args[1]);
      case NodeType::kOr:
        return holds(n.args[0]) || holds(n.args[1]);
      case NodeType::kNot:
        return !holds(n.args[0]);
      case NodeType::kCompare:
        return compare(n);
      case NodeType::kBetween:
        return between(n) != n.negated;
      case NodeType::kIn:
        return in(n) != n.negated;
      case NodeType::kIs:
        return is(n) != n.negated;
      case NodeType::kFunction:
        if (is_condition_function(n.function)) return function(n);
        break;
      default:
        break;
    }
    AttributeValue scratch;
    const AttributeValue* v = value(id, scratch);
    return v != nullptr && v->type() == AttrType::BOOL && v->as_bool();
  }

 private:
  // The value of the expression at `id`, or nullptr when it has none (an absent attribute,
  // MISSING). A condition's value is a BOOL, and size()'s a number; both live in `scratch`.
  const AttributeValue* value(NodeId id, AttributeValue& scratch) const {
    const Node& n = s_.node(id);
    switch (n.type) {
      case NodeType::kLiteral:
        return &s_.values[n.ref];
      case NodeType::kParameter:
        return n.ref < parameters_.size() ? &parameters_[n.ref] : nullptr;
      case NodeType::kPath:
        return expr::find_path(item_, s_.paths[n.ref], no_bindings());
      case NodeType::kFunction:
        if (n.function == Function::kSize) return size(n, scratch);
        if (!is_condition_function(n.function)) return nullptr;
        break;
      case NodeType::kCompare:
      case NodeType::kBetween:
      case NodeType::kIn:
      case NodeType::kIs:
      case NodeType::kAnd:
      case NodeType::kOr:
      case NodeType::kNot:
        break;
      default:
        return nullptr;
    }
    scratch = AttributeValue::boolean(holds(id));
    return &scratch;
  }

  const AttributeValue* size(const Node& n, AttributeValue& scratch) const {
    if (!well_formed(n)) return nullptr;
    const AttributeValue* v = value(n.args[0], scratch);
    const std::optional<std::size_t> size = v ? expr::size_of(*v) : std::nullopt;
    if (!size) return nullptr;
    scratch = AttributeValue::number(Decimal::from_int(static_cast<long long>(*size)));
    return &scratch;
  }

  // A comparison with an absent operand is false (`<>` as kAbsentIsNotEqual says).
  bool compare(const Node& n) const {
    AttributeValue s0, s1;
    const AttributeValue* a = value(n.args[0], s0);
    const AttributeValue* b = value(n.args[1], s1);
    if (a == nullptr || b == nullptr) {
      return n.comparator == expr::Comparator::kNe && kAbsentIsNotEqual;
    }
    return expr::compare_values(n.comparator, *a, *b);
  }

  // x BETWEEN lower AND upper, bounds included.
  bool between(const Node& n) const {
    AttributeValue s0, s1, s2;
    const AttributeValue* v = value(n.args[0], s0);
    const AttributeValue* lower = value(n.args[1], s1);
    const AttributeValue* upper = value(n.args[2], s2);
    return v && lower && upper && expr::compare_values(expr::Comparator::kGe, *v, *lower) &&
           expr::compare_values(expr::Comparator::kLe, *v, *upper);
  }

  // x IN (a, b, ...): x equals one of the values.
  bool in(const Node& n) const {
    AttributeValue scratch;
    const AttributeValue* v = value(n.args[0], scratch);
    if (v == nullptr) return false;
    return std::any_of(n.args.begin() + 1, n.args.end(), [&](NodeId arg) {
      AttributeValue candidate_scratch;
      const AttributeValue* candidate = value(arg, candidate_scratch);
      return candidate != nullptr && *candidate == *v;
    });
  }

  // x IS <type>, before IS NOT's negation: MISSING is absence, NULL a NULL value, the other
  // types the value's type (sets are none of them).
  bool is(const Node& n) const {
    AttributeValue scratch;
    const AttributeValue* v = value(n.args[0], scratch);
    if (n.is_type == IsType::kMissing) return v == nullptr;
    if (v == nullptr) return false;
    switch (n.is_type) {
      case IsType::kNull:
        return v->type() == AttrType::NUL;
      case IsType::kBoolean:
        return v->type() == AttrType::BOOL;
      case IsType::kString:
        return v->type() == AttrType::S;
      case IsType::kNumeric:
        return v->type() == AttrType::N;
      case IsType::kBlob:
        return v->type() == AttrType::B;
      case IsType::kStruct:
        return v->type() == AttrType::M;
      case IsType::kList:
        return v->type() == AttrType::L;
      default:
        return false;
    }
  }

  // The condition functions; any of them on an absent operand is false, except
  // attribute_not_exists, which tests for that.
  bool function(const Node& n) const {
    AttributeValue s0, s1;
    const AttributeValue* v = value(n.args[0], s0);
    if (n.function == Function::kAttributeNotExists) return v == nullptr;
    if (v == nullptr) return false;
    if (n.function == Function::kAttributeExists) return true;
    const AttributeValue* operand = value(n.args[1], s1);
    if (operand == nullptr) return false;
    switch (n.function) {
      case Function::kAttributeType:
        return operand->type() == AttrType::S && type_name(v->type()) == operand->as_string();
      case Function::kBeginsWith:
        return expr::begins_with(*v, *operand);
      case Function::kContains:
        return expr::contains(*v, *operand);
      default:
        return false;
    }
  }

  const Statement& s_;
  std::span<const AttributeValue> parameters_;
  const Item& item_;
};

}  // namespace

bool matches(const Statement& statement, NodeId node, std::span<const AttributeValue> parameters,
             const Item& item) {
  if (node >= statement.nodes.size()) return false;
  return Evaluator(statement, parameters, item).holds(node);
}

}  // namespace kumo::partiql
