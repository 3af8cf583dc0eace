// Evaluation of a PartiQL WHERE condition against one item. DynamoDB's PartiQL compares
// values as ConditionExpression does (expr/evaluate.h), with three differences: a
// comparison with an absent operand is false, `<>` included, while NOT negates whatever its
// operand gave; conditions are BOOL values that can themselves be compared
// (`attribute_exists(x) = false`); and IS tests presence (MISSING), NULL and types.
#pragma once

#include <span>

#include "model/attribute_value.h"
#include "partiql/ast.h"

namespace kumo::partiql {

// Whether `a <> b` holds when a or b is absent. DynamoDB answers false (so `<>` is not the
// complement of `=` on an absent attribute, while `NOT a = b` is).
inline constexpr bool kAbsentIsNotEqual = false;

// True when `item` (an empty map for an absent item) satisfies the condition rooted at
// `node` of `statement`, with `parameters` bound to its `?`s in order. Meant for statements
// that passed parse_statement and check_statement (check.h); on any other shape it returns
// false rather than fail. Never throws, and allocates nothing for comparisons, IN, BETWEEN,
// IS and the condition functions.
bool matches(const Statement& statement, NodeId node, std::span<const AttributeValue> parameters,
             const Item& item);

}  // namespace kumo::partiql
