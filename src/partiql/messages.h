// Every user-visible text of the PartiQL dialect, in one place so that a wording change in
// DynamoDB is a one-line edit here. Syntax errors are wrapped in the envelope
// "Statement wasn't well formed, can't be processed: <detail>" (malformed()); every other
// text stands alone. Texts marked [open] are not known from DynamoDB itself: they follow
// PartiQL's reference parser or DynamoDB Local, and are kept here so that they can change.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "model/attribute_value.h"

namespace kumo::partiql::msg {

// Limits on what one statement may hold.
constexpr std::size_t kMaxInOperands = 100;    // IN operands
constexpr std::size_t kMaxNestingLevels = 31;  // maps and lists inside a literal
constexpr std::size_t kMaxIndex = 2147483647;  // a list index fits a signed 32-bit integer

// The envelope of every syntax error; `detail` may be empty (lexical errors).
std::string malformed(std::string_view detail);

// --- syntax details (inside the envelope) ---
inline constexpr std::string_view kUnexpectedTokenAfterExpression =
    "Unexpected token after expression";
inline constexpr std::string_view kExpectedDataManipulation = "Expected data manipulation";
inline constexpr std::string_view kUnexpectedTerm = "Unexpected term";
inline constexpr std::string_view kMissingRightHandSide =
    "Missing right-hand side expression of infix operator";
inline constexpr std::string_view kUnexpectedKeyword = "Unexpected keyword";
inline constexpr std::string_view kUnexpectedOperator = "Unexpected operator";
inline constexpr std::string_view kExpectedTypeName = "Expected type name";
inline constexpr std::string_view kExpectedSimplePath = "Expected identifier for simple path";
inline constexpr std::string_view kInvalidPathDotComponent = "Invalid path dot component";
// [open] Missing tokens, worded as PartiQL's reference parser words them.
std::string expected_token(std::string_view token);  // "Expected <token>"
inline constexpr std::string_view kExpectedFrom = "Expected FROM after SELECT list";
inline constexpr std::string_view kExpectedFromAfterDelete = "Expected FROM after DELETE";
inline constexpr std::string_view kExpectedReturningMapping =
    "Expected ( MODIFIED | ALL ) ( NEW | OLD ) in each returning element.";

// --- statement form (bare) ---
std::string unsupported_operation(std::string_view node);  // "Unsupported operation: <node>"
inline constexpr std::string_view kAliasing = "Aliasing is not supported";
inline constexpr std::string_view kOneOperation = "Only one operation is allowed in a statement.";
inline constexpr std::string_view kSingleSource =
    "Only select from a single table or index is supported.";
inline constexpr std::string_view kInsertBag =
    "Unsupported operation: Inserting multiple items in a single statement is not supported, "
    "use \"INSERT INTO tableName VALUE item\" instead";
inline constexpr std::string_view kInsertFormat =
    "Unsupported format in item expression. Please use struct format {...} to express item "
    "values for insert statement.";
inline constexpr std::string_view kInsertAt = "AT is not supported in insert statements.";
inline constexpr std::string_view kInsertReturning = "RETURNING is not supported in INSERT";
inline constexpr std::string_view kReturningStar =
    "Expected '*' after ( MODIFIED | ALL ) ( NEW | OLD ) in RETURNING clause";
inline constexpr std::string_view kReturningElements =
    "Invalid syntax with multiple returning elements in RETURNING clause";

// --- literals (bare); `path` is "root", "root.x", "root[1]", ... ---
std::string number_error(std::string_view number_message, std::string_view path);
inline constexpr std::string_view kEmptyBag = "Empty bags are not supported";
inline constexpr std::string_view kBagType =
    "Unsupported data type in Bag. DynamoDB only supports either numbers or strings in bags";
std::string bag_duplicates(std::string_view members);  // members: "a, a"
std::string bag_number_duplicates(std::string_view members, std::string_view path);
std::string unsupported_data_type(std::string_view what, std::string_view path,
                                  std::string_view at);
std::string nesting(std::string_view path);
std::string duplicate_key(std::string_view key, std::string_view path);
std::string key_type(std::string_view type, std::string_view path);
std::string ion_literal(std::string_view literal, std::string_view path);
std::string list_index(std::string_view index, std::string_view at);

// --- checks on the parsed statement (bare) ---
inline constexpr std::string_view kParameterCount =
    "Number of parameters in request and statement don't match.";
inline constexpr std::string_view kEmptyPathComponent = "Path component cannot be an empty string";
inline constexpr std::string_view kFromComponents =
    "A path may contain at most 2 components in the FROM clause";
inline constexpr std::string_view kDmlSingleTable =
    "FROM clause may only contain a single table name in data manipulation statements";
inline constexpr std::string_view kNotOnIndex = "This operation is not supported on an index";
std::string unexpected_path_component(std::string_view at);
inline constexpr std::string_view kStarWithOthers =
    "Other attributes should not be present in the projection when '*' is used.";
std::string duplicate_projection(std::string_view name);
std::string delete_returning(std::string_view variant);  // variant: "ALL NEW"
std::string operand_type(std::string_view op, std::string_view type);
std::string requires_path(std::string_view function);
std::string operand_count(std::string_view function, std::size_t count);
std::string invalid_attribute_type(std::string_view type);
std::string unrecognized_function(std::string_view name, std::string_view at);
std::string set_function_first(std::string_view function, std::string_view at);
std::string set_function_second(std::string_view function, std::string_view at);
std::string set_function_arity(std::string_view function, std::string_view at);
std::string in_operands(std::size_t count);
inline constexpr std::string_view kInShape =
    "IN operator must have a left hand argument of type Variable Reference and right hand "
    "argument of type Seq with at least one member";
inline constexpr std::string_view kIsOperand =
    "The left hand side argument to IS must be a Variable Reference, Literal, or Path";
std::string is_type(std::string_view type);
inline constexpr std::string_view kMissingValue = "MISSING must be compared using IS operator";
inline constexpr std::string_view kIsInUpdate =
    "IS operator is not supported in update expressions";
std::string update_operator(std::string_view op);
std::string condition_operator(std::string_view op);
inline constexpr std::string_view kWhereBoolean =
    "WHERE clause must contain an expression that resolves to a boolean";

// "<line>:<column>:<length>" for the bytes [begin, end) of `text`: 1-based line and column,
// columns and length counted in characters, a newline starting a new line. Messages that
// name a place in the statement end in " at " and this.
std::string position(std::string_view text, std::uint32_t begin, std::uint32_t end);

}  // namespace kumo::partiql::msg
