// Execution of an UpdateExpression against one item.
#include <algorithm>

#include "expr/evaluate.h"
#include "expr/messages.h"
#include "expr/update.h"
#include "model/api_error.h"

namespace kumo::expr {
namespace {

[[noreturn]] void fail_update(std::string message) {
  throw ApiError::validation(std::move(message));
}

template <typename T>
std::vector<const T*> sorted_members(const std::vector<T>& set) {
  std::vector<const T*> sorted;
  sorted.reserve(set.size());
  for (const T& x : set) sorted.push_back(&x);
  std::ranges::sort(sorted, [](const T* a, const T* b) { return *a < *b; });
  return sorted;
}

template <typename T>
bool member_of(const std::vector<const T*>& sorted, const T& x) {
  return std::ranges::binary_search(sorted, &x, [](const T* a, const T* b) { return *a < *b; });
}

// Union keeps the stored members' order and appends the new ones.
template <typename T>
std::vector<T> set_union(const std::vector<T>& stored, const std::vector<T>& added) {
  const std::vector<const T*> sorted = sorted_members(stored);
  std::vector<T> result = stored;
  for (const T& x : added) {
    if (!member_of(sorted, x)) result.push_back(x);
  }
  return result;
}

template <typename T>
std::vector<T> set_difference(const std::vector<T>& stored, const std::vector<T>& removed) {
  const std::vector<const T*> sorted = sorted_members(removed);
  std::vector<T> result;
  for (const T& x : stored) {
    if (!member_of(sorted, x)) result.push_back(x);
  }
  return result;
}

bool is_set(AttrType t) {
  return t == AttrType::SS || t == AttrType::NS || t == AttrType::BS;
}

using Message = std::string (*)();

// The execution texts that depend on where the update comes from: an operand ADD, DELETE or
// list_append cannot take, a set whose type differs from the stored set's, a SET that makes
// the item too deep.
struct Messages {
  Message wrong_type;
  Message set_mismatch;
  Message too_deep;
};

Messages messages_for(UpdateSource source) {
  switch (source) {
    case UpdateSource::kAttributeUpdates:
      return {msg::update_set_type_mismatch, msg::update_set_type_mismatch, msg::nesting_too_deep};
    case UpdateSource::kPartiQL:
      return {msg::update_operand_type, msg::update_operand_type, msg::nesting_too_deep_bare};
    case UpdateSource::kExpression:
      break;
  }
  return {msg::update_operand_type, msg::update_set_type_mismatch, msg::nesting_too_deep};
}

// ADD on a stored value: number + number, or set ∪ set of the same type.
void add_to(AttributeValue& stored, const AttributeValue& operand, const Messages& messages) {
  if (stored.type() == AttrType::N && operand.type() == AttrType::N) {
    Decimal sum;
    if (Decimal::add(stored.as_number(), operand.as_number(), &sum) != Decimal::ParseError::kNone) {
      fail_update(msg::update_number_overflow());
    }
    stored = AttributeValue::number(std::move(sum));
    return;
  }
  if (!is_set(stored.type()) || !is_set(operand.type())) fail_update(messages.wrong_type());
  if (stored.type() != operand.type()) fail_update(messages.set_mismatch());
  switch (stored.type()) {
    case AttrType::SS:
      stored =
          AttributeValue::string_set(set_union(stored.as_string_set(), operand.as_string_set()));
      return;
    case AttrType::BS:
      stored =
          AttributeValue::binary_set(set_union(stored.as_string_set(), operand.as_string_set()));
      return;
    default:
      stored =
          AttributeValue::number_set(set_union(stored.as_number_set(), operand.as_number_set()));
      return;
  }
}

// DELETE on a stored value: set minus set of the same type. Returns true when the set is
// left empty: DynamoDB cannot store an empty set, so the attribute goes away.
bool delete_from(AttributeValue& stored, const AttributeValue& operand, const Messages& messages) {
  if (!is_set(stored.type())) fail_update(messages.wrong_type());
  if (stored.type() != operand.type()) fail_update(messages.set_mismatch());
  switch (stored.type()) {
    case AttrType::SS:
      stored = AttributeValue::string_set(
          set_difference(stored.as_string_set(), operand.as_string_set()));
      return stored.as_string_set().empty();
    case AttrType::BS:
      stored = AttributeValue::binary_set(
          set_difference(stored.as_string_set(), operand.as_string_set()));
      return stored.as_string_set().empty();
    default:
      stored = AttributeValue::number_set(
          set_difference(stored.as_number_set(), operand.as_number_set()));
      return stored.as_number_set().empty();
  }
}

std::size_t nesting_levels(const AttributeValue& v) {
  std::size_t deepest = 0;
  if (v.type() == AttrType::M) {
    for (const auto& [key, member] : v.as_map())
      deepest = std::max(deepest, nesting_levels(member));
  } else if (v.type() == AttrType::L) {
    for (const AttributeValue& element : v.as_list()) {
      deepest = std::max(deepest, nesting_levels(element));
    }
  } else {
    return 0;
  }
  return deepest + 1;
}

class Applier {
 public:
  Applier(const ParsedExpression& parsed, const Bindings& bindings, const PathTree& tree,
          UpdateSource source)
      : parsed_(parsed), bindings_(bindings), tree_(tree), messages_(messages_for(source)) {}

  void run(Item& item) {
    // Every operand reads the item as it was before the update, so compute all SET values
    // before writing anything.
    values_.resize(parsed_.actions.size());
    for (std::size_t i = 0; i < parsed_.actions.size(); ++i) {
      if (parsed_.actions[i].clause != UpdateClause::kSet) continue;
      AttributeValue scratch;
      const AttributeValue& v = value_of(parsed_.actions[i].value, item, scratch);
      values_[i] = &v == &scratch ? std::move(scratch) : v;
    }
    for (const auto& [name, index] : tree_.root().members) {
      apply_member(item, name, tree_.node(index));
    }
  }

 private:
  // One more path element for the lifetime of the object.
  struct Depth {
    explicit Depth(Applier& a) : applier(a) { ++applier.depth_; }
    ~Depth() { --applier.depth_; }
    Depth(const Depth&) = delete;
    Depth& operator=(const Depth&) = delete;
    Applier& applier;
  };

  const Node& node(NodeId id) const { return parsed_.nodes[id]; }
  const AttributeValue& constant(const UpdateAction& a) const {
    return bindings_.value(node(a.value).ref);
  }

  // The value of a SET operand; computed results are stored in `scratch`.
  const AttributeValue& value_of(NodeId id, const Item& item, AttributeValue& scratch) const {
    const Node& n = node(id);
    switch (n.type) {
      case NodeType::kPath: {
        const AttributeValue* v = find_path(item, parsed_.paths[n.ref], bindings_);
        if (v == nullptr) fail_update(msg::update_missing_operand());
        return *v;
      }
      case NodeType::kValue:
        return bindings_.value(n.ref);
      case NodeType::kPlus:
      case NodeType::kMinus: {
        AttributeValue s0, s1;
        const AttributeValue& a = value_of(n.args[0], item, s0);
        const AttributeValue& b = value_of(n.args[1], item, s1);
        if (a.type() != AttrType::N || b.type() != AttrType::N)
          fail_update(msg::update_operand_type());
        Decimal result;
        const Decimal::ParseError err =
            n.type == NodeType::kPlus ? Decimal::add(a.as_number(), b.as_number(), &result)
                                      : Decimal::subtract(a.as_number(), b.as_number(), &result);
        if (err != Decimal::ParseError::kNone) fail_update(msg::update_number_overflow());
        scratch = AttributeValue::number(std::move(result));
        return scratch;
      }
      case NodeType::kFunction:
        if (n.function == Function::kIfNotExists) {
          const Node& path = node(n.args[0]);
          if (const AttributeValue* v = find_path(item, parsed_.paths[path.ref], bindings_)) {
            return *v;
          }
          return value_of(n.args[1], item, scratch);
        } else {
          AttributeValue s0, s1;
          const AttributeValue& a = value_of(n.args[0], item, s0);
          const AttributeValue& b = value_of(n.args[1], item, s1);
          if (a.type() != AttrType::L || b.type() != AttrType::L)
            fail_update(messages_.wrong_type());
          AttributeList joined;
          joined.reserve(a.as_list().size() + b.as_list().size());
          joined.insert(joined.end(), a.as_list().begin(), a.as_list().end());
          joined.insert(joined.end(), b.as_list().begin(), b.as_list().end());
          scratch = AttributeValue::list(std::move(joined));
          return scratch;
        }
      default:
        fail_update(msg::update_operand_type());
    }
  }

  // The value SET by action `leaf` at the current depth; a nested SET may push a value past
  // DynamoDB's nesting limit.
  AttributeValue&& set_value(std::size_t leaf) {
    if (depth_ > 1 && depth_ - 1 + nesting_levels(values_[leaf]) > msg::kMaxNestingLevels) {
      fail_update(messages_.too_deep());
    }
    return std::move(values_[leaf]);
  }

  void apply_member(AttributeMap& map, std::string_view name, const PathTree::Node& child) {
    const Depth depth(*this);
    auto it = map.find(name);
    if (child.leaf < 0) {
      // Nested paths need their parent: a missing one is an error, not created.
      if (it == map.end()) fail_update(msg::update_invalid_path());
      descend(it->second, child);
    } else {
      const auto leaf = static_cast<std::size_t>(child.leaf);
      const UpdateAction& action = parsed_.actions[leaf];
      switch (action.clause) {
        case UpdateClause::kSet:
          if (it == map.end()) {
            map.emplace(std::string(name), set_value(leaf));
          } else {
            it->second = set_value(leaf);
          }
          break;
        case UpdateClause::kRemove:
          if (it != map.end()) map.erase(it);
          break;
        case UpdateClause::kAdd:
          // ADD to a missing attribute stores the operand (0 + n, or ∅ ∪ set).
          if (it == map.end()) {
            map.emplace(std::string(name), constant(action));
          } else {
            add_to(it->second, constant(action), messages_);
          }
          break;
        case UpdateClause::kDelete:
          if (it != map.end() && delete_from(it->second, constant(action), messages_)) {
            map.erase(it);
          }
          break;
      }
    }
  }

  void descend(AttributeValue& value, const PathTree::Node& node) {
    if (!node.members.empty()) {
      if (value.type() != AttrType::M) fail_update(msg::update_invalid_path());
      for (const auto& [name, index] : node.members) {
        apply_member(value.mutable_map(), name, tree_.node(index));
      }
    } else {
      if (value.type() != AttrType::L) fail_update(msg::update_invalid_path());
      apply_elements(value.mutable_list(), node);
    }
  }

  // All index actions on one list use the indexes of the list before the update: removing
  // [1] and [2] removes the two original elements, and writes beyond the end append in index
  // order. So the list is rebuilt once from its original elements.
  void apply_elements(AttributeList& list, const PathTree::Node& node) {
    AttributeList out;
    out.reserve(list.size() + node.elements.size());
    auto next = node.elements.begin();
    for (std::size_t i = 0; i < list.size(); ++i) {
      if (next == node.elements.end() || next->first != i) {
        out.push_back(std::move(list[i]));
        continue;
      }
      const PathTree::Node& child = tree_.node(next->second);
      ++next;
      const Depth depth(*this);
      if (child.leaf < 0) {
        descend(list[i], child);
        out.push_back(std::move(list[i]));
      } else {
        const auto leaf = static_cast<std::size_t>(child.leaf);
        const UpdateAction& action = parsed_.actions[leaf];
        switch (action.clause) {
          case UpdateClause::kSet:
            out.push_back(set_value(leaf));
            break;
          case UpdateClause::kRemove:
            break;
          case UpdateClause::kAdd:
            add_to(list[i], constant(action), messages_);
            out.push_back(std::move(list[i]));
            break;
          case UpdateClause::kDelete:
            if (!delete_from(list[i], constant(action), messages_)) {
              out.push_back(std::move(list[i]));
            }
            break;
        }
      }
    }
    for (; next != node.elements.end(); ++next) {
      const PathTree::Node& child = tree_.node(next->second);
      if (child.leaf < 0) fail_update(msg::update_invalid_path());
      const auto leaf = static_cast<std::size_t>(child.leaf);
      const UpdateAction& action = parsed_.actions[leaf];
      const Depth depth(*this);
      if (action.clause == UpdateClause::kSet) {
        out.push_back(set_value(leaf));
      } else if (action.clause == UpdateClause::kAdd) {
        out.push_back(constant(action));
      }
      // REMOVE or DELETE of an element beyond the end does nothing.
    }
    list = std::move(out);
  }

  const ParsedExpression& parsed_;
  const Bindings& bindings_;
  const PathTree& tree_;
  Messages messages_;
  std::vector<AttributeValue> values_;  // SET values by action index
  std::size_t depth_ = 0;               // path elements down to the current position
};

}  // namespace

void UpdateExpression::apply(Item& item) const {
  Applier(*parsed_, bindings_, tree_, source_).run(item);
}

}  // namespace kumo::expr
