// A PartiQL UPDATE's SET and REMOVE actions as UpdateItem's update (expr/update.h), built once
// per statement so that every request runs UpdateItem's own checks and mutation. SET path =
// value takes what an UpdateExpression's SET takes: a constant, a parameter, a path, + and -,
// list_append. SET x = set_add(x, set) is an ADD of the set at x, SET x = set_delete(x, set) a
// DELETE of it; REMOVE path is a REMOVE. Constants and parameters are the value slots ":0",
// ":1", ... in text order. Clauses may repeat (SET a = 1 SET b = 2), which an
// UpdateExpression's text may not.
#pragma once

#include <span>

#include "expr/ast.h"
#include "model/attribute_value.h"
#include "partiql/ast.h"

namespace kumo::partiql {

// Fills `statement.update` and `statement.update_slots` from the actions of an UPDATE; leaves
// them empty when a SET value is of a form no update holds, which check_statement refuses.
void build_update(Statement& statement);

// The ExpressionAttributeValues of `statement`'s update with `parameters` bound: each slot's
// constant, or the parameter it stands for. `parameters` must be as many as the statement's
// `?` (check_statement).
expr::AttributeValues update_values(const Statement& statement,
                                    std::span<const AttributeValue> parameters);

}  // namespace kumo::partiql
