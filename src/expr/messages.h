// Every user-visible text of the expression language, in one place so that a wording change
// in DynamoDB is a one-line edit here. Functions return the text only; callers add the
// "Invalid <Kind>: " prefix where DynamoDB does (see `invalid`).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "expr/ast.h"

namespace kumo::expr::msg {

// Limits DynamoDB documents for every expression: 4 KB of text, 300 operators and
// functions, 100 IN operands.
constexpr std::size_t kMaxExpressionBytes = 4096;
constexpr std::size_t kMaxOperators = 300;
constexpr std::size_t kMaxInOperands = 100;
// A document path has at most 32 elements, and a list index is at most 2^31 - 1.
constexpr std::size_t kMaxPathElements = 32;
constexpr std::uint32_t kMaxListIndex = 2147483647;

// [open] Whether size() of a string counts UTF-8 bytes (true) or code points (false).
constexpr bool kStringSizeInBytes = true;

// "Invalid <Kind>: <detail>" — the shape of every parse/validation error of one expression.
std::string invalid(ExpressionKind kind, std::string_view detail);

// --- Parse phase (prefixed) ---
std::string empty_expression();
std::string expression_too_large(std::size_t bytes);
std::string syntax_error(std::string_view token, std::string_view near);
std::string redundant_parentheses();
std::string invalid_function(std::string_view name);
// An update function (if_not_exists, list_append) in a condition, filter or key condition.
std::string function_not_in_condition(std::string_view name);
std::string list_index_out_of_range(std::string_view digits);
std::string path_too_deep(std::size_t elements);
std::string misused_function(std::string_view name);
std::string reserved_keyword(std::string_view word);
std::string clause_repeated(std::string_view clause);
std::string too_many_operators(std::size_t count);  // [open]

// --- Operand checks once placeholders are known (prefixed) ---
std::string undefined_name(std::string_view placeholder);
std::string undefined_value(std::string_view placeholder);
std::string operand_count(std::string_view function, std::size_t count);
std::string requires_path(std::string_view function);
std::string requires_value(std::string_view function);  // [open] exact wording
std::string not_distinct(std::string_view op, std::string_view rendered_path);
std::string operand_type(std::string_view function, std::string_view type);
// ADD and DELETE name their operand types in long form (STRING, NUMBER, ...).
std::string clause_operand_type(std::string_view clause, AttrType type);
std::string invalid_attribute_type(std::string_view type);
std::string between_types(const AttributeValue& lower, const AttributeValue& upper);
std::string between_order(const AttributeValue& lower, const AttributeValue& upper);
std::string paths_overlap(std::string_view one, std::string_view two);
std::string paths_conflict(std::string_view one, std::string_view two);

// --- KeyConditionExpression structure (prefixed) ---
std::string key_invalid_operator(std::string_view op);
std::string key_nested_operation();
std::string key_nested_attribute();
std::string key_multiple_names();
std::string key_no_attribute();
std::string key_first_operand(std::string_view op);
std::string key_one_condition_per_key();

// --- KeyConditionExpression against the key schema (not prefixed) ---
std::string key_missed_element(std::string_view attribute);
std::string key_condition_not_supported();
std::string key_too_many_conditions(std::size_t conditions, std::size_t key_attributes);
std::string key_type_mismatch();
std::string key_hash_equality(std::string_view attribute);  // [open] exact wording
std::string key_range_equality(std::string_view attribute, std::string_view later);

// --- UpdateExpression execution (not prefixed) ---
std::string update_missing_operand();
std::string update_operand_type();
std::string update_set_type_mismatch();
std::string update_invalid_path();
std::string update_number_overflow();
std::string update_key_attribute(std::string_view attribute);
std::string update_nested_key(std::string_view attribute, bool index_key);
std::string nesting_too_deep();
// The same as a PartiQL UPDATE words it, without the detail.
std::string nesting_too_deep_bare();
// L/M levels a value may have: a scalar wrapped in 31 levels is accepted, 32 rejected.
constexpr std::size_t kMaxNestingLevels = 31;

// --- Across the expressions of one request (not prefixed) ---
std::string unused_names(std::string_view keys);
std::string unused_values(std::string_view keys);
std::string filter_on_key(std::string_view attribute);

// DynamoDB's rendering of a constant inside messages, e.g. "AttributeValue: {N:1}".
std::string render_value(const AttributeValue& value);

}  // namespace kumo::expr::msg
