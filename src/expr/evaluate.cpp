#include "expr/evaluate.h"

#include <algorithm>

#include "expr/messages.h"

namespace kumo::expr {

std::optional<std::strong_ordering> compare_scalars(const AttributeValue& a,
                                                    const AttributeValue& b) {
  if (a.type() != b.type()) return std::nullopt;
  switch (a.type()) {
    case AttrType::N:
      return a.as_number() <=> b.as_number();
    case AttrType::S:
    case AttrType::B:
      // std::string compares as unsigned bytes (char_traits<char>::lt is unsigned).
      return a.as_string().compare(b.as_string()) <=> 0;
    default:
      return std::nullopt;
  }
}

const AttributeValue* find_path(const Item& item, const DocumentPath& path,
                                const Bindings& bindings) {
  const auto& elements = path.elements;
  auto top = item.find(bindings.name(elements[0]));
  if (top == item.end()) return nullptr;
  const AttributeValue* value = &top->second;
  for (std::size_t i = 1; i < elements.size(); ++i) {
    const PathElement& e = elements[i];
    if (e.kind == PathElement::Kind::kIndex) {
      if (value->type() != AttrType::L || e.number >= value->as_list().size()) return nullptr;
      value = &value->as_list()[e.number];
    } else {
      if (value->type() != AttrType::M) return nullptr;
      auto it = value->as_map().find(bindings.name(e));
      if (it == value->as_map().end()) return nullptr;
      value = &it->second;
    }
  }
  return value;
}

namespace {

// Number of code points in valid UTF-8: every byte that is not a continuation byte.
std::size_t utf8_characters(const std::string& s) {
  return static_cast<std::size_t>(std::ranges::count_if(
      s, [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

}  // namespace

std::optional<std::size_t> size_of(const AttributeValue& v) {
  switch (v.type()) {
    case AttrType::S:
      return msg::kStringSizeInBytes ? v.as_string().size() : utf8_characters(v.as_string());
    case AttrType::B:
      return v.as_string().size();
    case AttrType::SS:
    case AttrType::BS:
      return v.as_string_set().size();
    case AttrType::NS:
      return v.as_number_set().size();
    case AttrType::L:
      return v.as_list().size();
    case AttrType::M:
      return v.as_map().size();
    default:
      return std::nullopt;
  }
}

bool contains(const AttributeValue& a, const AttributeValue& b) {
  switch (a.type()) {
    case AttrType::S:
    case AttrType::B:
      return b.type() == a.type() && a.as_string().find(b.as_string()) != std::string::npos;
    case AttrType::SS:
      return b.type() == AttrType::S &&
             std::ranges::find(a.as_string_set(), b.as_string()) != a.as_string_set().end();
    case AttrType::BS:
      return b.type() == AttrType::B &&
             std::ranges::find(a.as_string_set(), b.as_string()) != a.as_string_set().end();
    case AttrType::NS:
      return b.type() == AttrType::N &&
             std::ranges::find(a.as_number_set(), b.as_number()) != a.as_number_set().end();
    case AttrType::L:
      return std::ranges::find(a.as_list(), b) != a.as_list().end();
    default:
      return false;
  }
}

bool begins_with(const AttributeValue& v, const AttributeValue& prefix) {
  return v.type() == prefix.type() && (v.type() == AttrType::S || v.type() == AttrType::B) &&
         v.as_string().starts_with(prefix.as_string());
}

bool compare_values(Comparator op, const AttributeValue& a, const AttributeValue& b) {
  switch (op) {
    case Comparator::kEq:
      return a == b;
    case Comparator::kNe:
      return !(a == b);
    default:
      break;
  }
  std::optional<std::strong_ordering> order = compare_scalars(a, b);
  if (!order) return false;
  switch (op) {
    case Comparator::kLt:
      return *order < 0;
    case Comparator::kLe:
      return *order <= 0;
    case Comparator::kGt:
      return *order > 0;
    case Comparator::kGe:
      return *order >= 0;
    default:
      return false;
  }
}

namespace {

class Evaluator {
 public:
  Evaluator(const ParsedExpression& parsed, const Bindings& bindings, const Item& item)
      : parsed_(parsed), bindings_(bindings), item_(item) {}

  bool condition(NodeId id) const {
    const Node& n = parsed_.nodes[id];
    switch (n.type) {
      case NodeType::kAnd:
        return condition(n.args[0]) && condition(n.args[1]);
      case NodeType::kOr:
        return condition(n.args[0]) || condition(n.args[1]);
      case NodeType::kNot:
        return !condition(n.args[0]);
      case NodeType::kCompare: {
        AttributeValue left_scratch, right_scratch;
        return compare(n.comparator, operand(n.args[0], left_scratch),
                       operand(n.args[1], right_scratch));
      }
      case NodeType::kBetween: {
        AttributeValue s0, s1, s2;
        const AttributeValue* v = operand(n.args[0], s0);
        const AttributeValue* lower = operand(n.args[1], s1);
        const AttributeValue* upper = operand(n.args[2], s2);
        return compare(Comparator::kGe, v, lower) && compare(Comparator::kLe, v, upper);
      }
      case NodeType::kIn: {
        AttributeValue scratch;
        const AttributeValue* v = operand(n.args[0], scratch);
        if (v == nullptr) return false;
        return std::any_of(n.args.begin() + 1, n.args.end(), [&](NodeId arg) {
          AttributeValue candidate_scratch;
          const AttributeValue* candidate = operand(arg, candidate_scratch);
          return candidate != nullptr && *candidate == *v;
        });
      }
      case NodeType::kFunction:
        return function(n);
      default:
        return false;
    }
  }

 private:
  // The operand's value, or nullptr when it does not exist. size() results live in scratch.
  const AttributeValue* operand(NodeId id, AttributeValue& scratch) const {
    const Node& n = parsed_.nodes[id];
    switch (n.type) {
      case NodeType::kPath:
        return find_path(item_, parsed_.paths[n.ref], bindings_);
      case NodeType::kValue:
        return &bindings_.value(n.ref);
      case NodeType::kFunction: {
        if (n.function != Function::kSize) return nullptr;
        AttributeValue arg_scratch;
        const AttributeValue* arg = operand(n.args[0], arg_scratch);
        if (arg == nullptr) return nullptr;
        std::optional<std::size_t> size = size_of(*arg);
        if (!size) return nullptr;
        scratch = AttributeValue::number(Decimal::from_int(static_cast<long long>(*size)));
        return &scratch;
      }
      default:
        return nullptr;
    }
  }

  // A missing operand makes every comparison false except <>, which is then true; so do
  // mismatched types.
  static bool compare(Comparator op, const AttributeValue* a, const AttributeValue* b) {
    if (a == nullptr || b == nullptr) return op == Comparator::kNe;
    return compare_values(op, *a, *b);
  }

  bool function(const Node& n) const {
    AttributeValue s0, s1;
    switch (n.function) {
      case Function::kAttributeExists:
        return operand(n.args[0], s0) != nullptr;
      case Function::kAttributeNotExists:
        return operand(n.args[0], s0) == nullptr;
      case Function::kAttributeType: {
        const AttributeValue* v = operand(n.args[0], s0);
        const AttributeValue* t = operand(n.args[1], s1);
        return v && t && t->type() == AttrType::S && type_name(v->type()) == t->as_string();
      }
      case Function::kBeginsWith: {
        const AttributeValue* v = operand(n.args[0], s0);
        const AttributeValue* prefix = operand(n.args[1], s1);
        return v && prefix && begins_with(*v, *prefix);
      }
      case Function::kContains: {
        const AttributeValue* v = operand(n.args[0], s0);
        const AttributeValue* item = operand(n.args[1], s1);
        return v && item && contains(*v, *item);
      }
      default:
        return false;
    }
  }

  const ParsedExpression& parsed_;
  const Bindings& bindings_;
  const Item& item_;
};

}  // namespace

bool evaluate_condition(const ParsedExpression& parsed, const Bindings& bindings,
                        const Item& item) {
  return Evaluator(parsed, bindings, item).condition(parsed.root);
}

}  // namespace kumo::expr
