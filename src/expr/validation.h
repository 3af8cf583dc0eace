// Checks of one expression that need its resolved placeholders, run after Bindings and in
// DynamoDB's order: operand counts and document-path operands (found while parsing), then
// "first operand must be distinct", then operand types known before any item is read
// (constants ordered by <, <=, >, >= or BETWEEN, function arguments, size() as an argument,
// BETWEEN bounds, arithmetic, ADD and DELETE values).
#pragma once

#include "expr/ast.h"
#include "expr/binding.h"

namespace kumo::expr {

// Throws ApiError::validation with the "Invalid <Kind>: ..." message of the first problem.
void check_operands(const ParsedExpression& parsed, const Bindings& bindings);

}  // namespace kumo::expr
