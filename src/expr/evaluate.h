// Evaluation of condition and filter expressions against one item, and DynamoDB's value
// comparisons.
#pragma once

#include <compare>
#include <optional>

#include "expr/ast.h"
#include "expr/binding.h"

namespace kumo::expr {

// Ordering of two S (UTF-8 bytes, unsigned), two N (numeric) or two B (unsigned bytes)
// values; nullopt for any other pairing, which <, <=, >, >= and BETWEEN treat as false.
std::optional<std::strong_ordering> compare_scalars(const AttributeValue& a,
                                                    const AttributeValue& b);

// The value of a document path in `item`, or nullptr when it does not exist. Resolves in
// place: nothing is copied.
const AttributeValue* find_path(const Item& item, const DocumentPath& path,
                                const Bindings& bindings);

// True when `item` (an empty map for a missing item) satisfies the condition rooted at
// `parsed.root`. Never throws: type mismatches make comparisons false, as in DynamoDB.
bool evaluate_condition(const ParsedExpression& parsed, const Bindings& bindings, const Item& item);

}  // namespace kumo::expr
