// The checks DynamoDB makes on a parsed statement and its bound parameters before it looks
// up the table: they depend on the text and the parameters only, so a refused statement never
// reaches the data (and a missing table is not reported). Run once per request, after the
// parameter values themselves are validated and the statement is parsed (parser.h).
#pragma once

#include <span>

#include "model/attribute_value.h"
#include "partiql/ast.h"

namespace kumo::partiql {

// Throws ApiError::validation with DynamoDB's bare message for the first problem, in this
// order:
//  1. the number of parameters differs from the number of `?`;
//  2. an empty name in the table path ("Path component cannot be an empty string");
//  3. operand types, in text order: an ordering comparison or BETWEEN with a BOOL, NULL, L,
//     M or set operand (a literal, a parameter or a condition), arithmetic on a non-number;
//  4. the table path: more than table and index for a read, an index on a write;
//  5. the projection: a function or anything but a path, a path named twice;
//  6. a DELETE's RETURNING other than ALL OLD *;
//  7. each expression, in text order: unknown functions and where they may stand (WHERE
//     takes the condition functions and size; a SET value takes list_append, and set_add or
//     set_delete only as the whole value),
//     operand counts, document-path operands, attribute_type's type name, set_add's and
//     set_delete's arguments, IN's shape and its 100 operands, IS operands and types,
//     MISSING outside IS, operators DynamoDB does not run, a WHERE that is no condition.
// What needs the table (keys, indexes, ORDER BY rules) or the operation (EXISTS only in
// transactions, RETURNING not in them) is the caller's.
void check_statement(const Statement& statement, std::span<const AttributeValue> parameters);

}  // namespace kumo::partiql
