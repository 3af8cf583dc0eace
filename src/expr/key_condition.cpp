#include "expr/key_condition.h"

#include <algorithm>
#include <cassert>

#include "expr/cache.h"
#include "expr/evaluate.h"
#include "expr/messages.h"
#include "expr/validation.h"
#include "model/api_error.h"

namespace kumo::expr {
namespace {

KeyOperator key_operator(Comparator op, bool mirrored) {
  switch (op) {
    case Comparator::kLt:
      return mirrored ? KeyOperator::kGt : KeyOperator::kLt;
    case Comparator::kLe:
      return mirrored ? KeyOperator::kGe : KeyOperator::kLe;
    case Comparator::kGt:
      return mirrored ? KeyOperator::kLt : KeyOperator::kGt;
    case Comparator::kGe:
      return mirrored ? KeyOperator::kLe : KeyOperator::kGe;
    default:
      return KeyOperator::kEq;
  }
}

// Collects the leaf conditions of the AND tree (the parser admits nothing else here).
void collect(const ParsedExpression& parsed, const Bindings& bindings, NodeId id,
             std::vector<KeyTerm>& terms) {
  const Node& n = parsed.nodes[id];
  if (n.type == NodeType::kAnd) {
    collect(parsed, bindings, n.args[0], terms);
    collect(parsed, bindings, n.args[1], terms);
    return;
  }
  auto name_of = [&](NodeId arg) {
    return std::string(bindings.name(parsed.paths[parsed.nodes[arg].ref].elements[0]));
  };
  auto value_of = [&](NodeId arg) { return bindings.value(parsed.nodes[arg].ref); };
  KeyTerm term;
  if (n.type == NodeType::kCompare) {
    const bool mirrored = parsed.nodes[n.args[0]].type != NodeType::kPath;
    term.attribute = name_of(n.args[mirrored ? 1 : 0]);
    term.op = key_operator(n.comparator, mirrored);
    term.value = value_of(n.args[mirrored ? 0 : 1]);
  } else if (n.type == NodeType::kBetween) {
    term.attribute = name_of(n.args[0]);
    term.op = KeyOperator::kBetween;
    term.value = value_of(n.args[1]);
    term.upper = value_of(n.args[2]);
  } else {
    term.attribute = name_of(n.args[0]);
    term.op = KeyOperator::kBeginsWith;
    term.value = value_of(n.args[1]);
  }
  terms.push_back(std::move(term));
}

[[noreturn]] void fail(std::string message) {
  throw ApiError::validation(std::move(message));
}

const KeyTerm* term_for(const std::vector<KeyTerm>& terms, std::string_view attribute) {
  auto it = std::ranges::find(terms, attribute, &KeyTerm::attribute);
  return it == terms.end() ? nullptr : &*it;
}

void check_type(const KeyTerm& term, const AttributeDefinition& key) {
  const AttrType type = to_attr_type(key.type);
  if (term.value.type() != type ||
      (term.op == KeyOperator::kBetween && term.upper.type() != type)) {
    fail(msg::key_type_mismatch());
  }
}

// Multi-attribute keys: every HASH component with `=`; RANGE components constrained as a
// prefix, all `=` except the last.
void check_multi_attribute(const std::vector<KeyTerm>& terms,
                           std::span<const AttributeDefinition> hash,
                           std::span<const AttributeDefinition> range) {
  for (const AttributeDefinition& key : hash) {
    const KeyTerm* term = term_for(terms, key.name);
    if (term == nullptr || term->op != KeyOperator::kEq) fail(msg::key_hash_equality(key.name));
  }
  std::size_t last = range.size();
  for (std::size_t i = 0; i < range.size(); ++i) {
    if (term_for(terms, range[i].name) != nullptr) last = i;
  }
  if (last == range.size()) return;
  for (std::size_t i = 0; i < last; ++i) {
    const KeyTerm* term = term_for(terms, range[i].name);
    if (term != nullptr && term->op == KeyOperator::kEq) continue;
    std::size_t later = i + 1;
    while (term_for(terms, range[later].name) == nullptr) ++later;
    fail(msg::key_range_equality(range[i].name, range[later].name));
  }
}

}  // namespace

bool KeyTerm::matches(const AttributeValue& v) const {
  if (op == KeyOperator::kEq) return v == value;
  if (op == KeyOperator::kBeginsWith) {
    return v.type() == value.type() && (v.type() == AttrType::S || v.type() == AttrType::B) &&
           v.as_string().starts_with(value.as_string());
  }
  std::optional<std::strong_ordering> order = compare_scalars(v, value);
  if (!order) return false;
  switch (op) {
    case KeyOperator::kLt:
      return *order < 0;
    case KeyOperator::kLe:
      return *order <= 0;
    case KeyOperator::kGt:
      return *order > 0;
    case KeyOperator::kGe:
      return *order >= 0;
    case KeyOperator::kBetween: {
      std::optional<std::strong_ordering> upper_order = compare_scalars(v, upper);
      return *order >= 0 && upper_order && *upper_order <= 0;
    }
    default:
      return false;
  }
}

KeyConditionExpression KeyConditionExpression::compile(std::string_view text,
                                                       const AttributeNames& names,
                                                       const AttributeValues& values) {
  KeyConditionExpression k;
  k.parsed_ = parse(ExpressionKind::kKeyCondition, text);
  k.bindings_ = Bindings(*k.parsed_, names, values);
  check_operands(*k.parsed_, k.bindings_);
  collect(*k.parsed_, k.bindings_, k.parsed_->root, k.terms_);
  for (std::size_t i = 0; i < k.terms_.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      if (k.terms_[i].attribute == k.terms_[j].attribute) {
        fail(msg::invalid(ExpressionKind::kKeyCondition, msg::key_one_condition_per_key()));
      }
    }
  }
  return k;
}

KeyCondition KeyConditionExpression::resolve(std::span<const AttributeDefinition> hash,
                                             std::span<const AttributeDefinition> range) const {
  assert(!hash.empty());
  const std::size_t key_count = hash.size() + range.size();
  if (terms_.size() > key_count) {
    // Only an index lacks a sort key here (a table's key goes through the other overload):
    // a global secondary index refuses the extra condition as unsupported.
    fail(range.empty() ? msg::key_condition_not_supported()
                       : msg::key_too_many_conditions(terms_.size(), key_count));
  }
  auto is_key = [&](const KeyTerm& term) {
    auto named = [&](const AttributeDefinition& d) { return d.name == term.attribute; };
    return std::ranges::any_of(hash, named) || std::ranges::any_of(range, named);
  };
  if (hash.size() == 1 && range.size() <= 1) {
    // A table, an LSI or a single-attribute GSI: the classic texts.
    if (term_for(terms_, hash[0].name) == nullptr) fail(msg::key_missed_element(hash[0].name));
    for (const KeyTerm& term : terms_) {
      if (!is_key(term))
        fail(msg::key_missed_element(range.empty() ? hash[0].name : range[0].name));
    }
    if (term_for(terms_, hash[0].name)->op != KeyOperator::kEq) {
      fail(msg::key_condition_not_supported());
    }
  } else {
    for (const KeyTerm& term : terms_) {
      if (is_key(term)) continue;
      // Some key attribute has no term: name the first one, as the classic text does.
      for (const auto& key : hash) {
        if (term_for(terms_, key.name) == nullptr) fail(msg::key_missed_element(key.name));
      }
      for (const auto& key : range) {
        if (term_for(terms_, key.name) == nullptr) fail(msg::key_missed_element(key.name));
      }
    }
    check_multi_attribute(terms_, hash, range);
  }
  KeyCondition result;
  for (const AttributeDefinition& key : hash) {
    const KeyTerm* term = term_for(terms_, key.name);
    check_type(*term, key);
    result.hash.push_back(*term);
  }
  for (const AttributeDefinition& key : range) {
    const KeyTerm* term = term_for(terms_, key.name);
    if (term == nullptr) break;
    check_type(*term, key);
    result.range.push_back(*term);
  }
  return result;
}

KeyCondition KeyConditionExpression::resolve(const KeySchema& key) const {
  // A table counts the conditions against its key attributes.
  const std::size_t key_count = key.range ? 2 : 1;
  if (terms_.size() > key_count) fail(msg::key_too_many_conditions(terms_.size(), key_count));
  return resolve(std::span(&key.hash, 1),
                 key.range ? std::span(&*key.range, 1) : std::span<const AttributeDefinition>());
}

}  // namespace kumo::expr
