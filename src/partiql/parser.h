// The parser of DynamoDB's PartiQL dialect. It reports, in this order:
//  1. lexical errors (lexer.h): the envelope with an empty detail;
//  2. syntax errors, at the first token that does not fit: the envelope "Statement wasn't
//     well formed, can't be processed: " with PartiQL's detail ("Unexpected term",
//     "Unexpected keyword", "Missing right-hand side expression of infix operator", ...);
//  3. statements DynamoDB does not run although PartiQL parses them, bare: a bare expression
//     ("Unsupported operation: IsType"), an alias ("Aliasing is not supported"), several
//     FROM sources, the INSERT forms other than INSERT INTO t VALUE {...}, a RETURNING clause
//     that is not one "(ALL|MODIFIED) (OLD|NEW) *", '*' beside other projections;
//  4. literals that break DynamoDB's value rules, the first in text order: numbers out of
//     range ("... under root[1]"), sets (empty, mixed, duplicates), nesting beyond 31
//     levels, map keys, a parameter or other non-constant inside a literal, list indexes.
// The checks that need the parameters, and the rules on statement shape that DynamoDB
// applies before it looks up the table, are in check.h.
#pragma once

#include <memory>
#include <string_view>

#include "partiql/ast.h"

namespace kumo::partiql {

// Parses `text` without the cache. Throws ApiError::validation with DynamoDB's message.
std::shared_ptr<const Statement> parse_statement(std::string_view text);

}  // namespace kumo::partiql
