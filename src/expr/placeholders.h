// ExpressionAttributeNames / ExpressionAttributeValues checks that span all expressions of
// one request: every placeholder used must be defined, and every one given must be used.
#pragma once

#include <initializer_list>
#include <span>
#include <string_view>

#include "expr/ast.h"

namespace kumo::expr {

// Throws ApiError::validation, in DynamoDB's order: a placeholder some expression uses that
// the maps do not define ("Invalid <Kind>: An expression attribute name used in the document
// path is not defined; attribute name: #x", expressions in the order given), then names no
// expression uses ("Value provided in ExpressionAttributeNames unused in expressions: keys:
// {#a, #b}"), then unused values. Null entries (absent expressions) are skipped. Pass the
// expressions in DynamoDB's parse order: Update, Condition, KeyCondition, Filter, Projection.
void check_placeholders(std::span<const ParsedExpression* const> expressions,
                        const AttributeNames& names, const AttributeValues& values);
void check_placeholders(std::initializer_list<const ParsedExpression*> expressions,
                        const AttributeNames& names, const AttributeValues& values);

// Keys DynamoDB accepts: '#' or ':' followed by one or more of [A-Za-z0-9_]. Others are
// "ExpressionAttributeNames contains invalid key: Syntax error; key: \"<key>\"" (api/).
bool is_valid_name_key(std::string_view key);
bool is_valid_value_key(std::string_view key);

}  // namespace kumo::expr
