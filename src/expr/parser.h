// The parser of all five expression kinds. It reports the errors that depend on the text
// alone, in DynamoDB's order: empty expression, size, syntax error, operator count, then
// (first occurrence of each, in this order) a document path too deep or a list index out of
// range, a repeated update clause, redundant parentheses, an unknown function (or an update
// function in a condition), a misused function, a reserved word and, for
// KeyConditionExpression, a structure DynamoDB does not accept as a key condition. Errors
// that need the placeholder maps come later (binding.h, validation.h).
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>

#include "expr/ast.h"

namespace kumo::expr {

// Parses `text` as `kind` without the cache. Throws ApiError::validation with DynamoDB's
// "Invalid <Kind>: ..." message.
std::shared_ptr<const ParsedExpression> parse_expression(ExpressionKind kind,
                                                         std::string_view text);

// Whether DynamoDB's limits on an expression's text (its size and operator count) apply:
// they do to the expressions a client writes, not to the text Kumo generates from legacy
// parameters, which DynamoDB never sees as an expression.
enum class TextLimits : std::uint8_t { kApply, kIgnore };

// Parses non-empty text Kumo generated as `kind`, without the text limits.
std::shared_ptr<const ParsedExpression> parse_generated_expression(ExpressionKind kind,
                                                                   std::string_view text);

}  // namespace kumo::expr
