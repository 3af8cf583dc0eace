// Evaluation of condition and filter expressions against one item, and DynamoDB's value
// comparisons.
#pragma once

#include <compare>
#include <cstddef>
#include <optional>

#include "expr/ast.h"
#include "expr/binding.h"

namespace kumo::expr {

// Ordering of two S (UTF-8 bytes, unsigned), two N (numeric) or two B (unsigned bytes)
// values; nullopt for any other pairing, which <, <=, >, >= and BETWEEN treat as false.
std::optional<std::strong_ordering> compare_scalars(const AttributeValue& a,
                                                    const AttributeValue& b);

// `a op b` for two present values: = and <> by AttributeValue equality (numbers by value,
// sets in any order, no coercion between types); <, <=, >, >= by compare_scalars, false
// where it has no ordering.
bool compare_values(Comparator op, const AttributeValue& a, const AttributeValue& b);

// size(): the length of an S (in UTF-8 bytes, as msg::kStringSizeInBytes says) or a B, the
// number of members of a set, L or M; nullopt for N, BOOL and NULL, which have no size.
std::optional<std::size_t> size_of(const AttributeValue& v);

// contains(a, b): b is a substring of an S or a B of its own type, a member of a set of b's
// type, or an element of a list (by equality). False for any other pairing.
bool contains(const AttributeValue& a, const AttributeValue& b);

// begins_with(v, prefix): v and prefix are both S or both B, and v starts with prefix.
bool begins_with(const AttributeValue& v, const AttributeValue& prefix);

// The value of a document path in `item`, or nullptr when it does not exist. Resolves in
// place: nothing is copied.
const AttributeValue* find_path(const Item& item, const DocumentPath& path,
                                const Bindings& bindings);

// True when `item` (an empty map for a missing item) satisfies the condition rooted at
// `parsed.root`. Never throws: type mismatches make comparisons false, as in DynamoDB.
bool evaluate_condition(const ParsedExpression& parsed, const Bindings& bindings, const Item& item);

}  // namespace kumo::expr
