#include "expr/messages.h"

#include <openssl/evp.h>

namespace kumo::expr::msg {
namespace {

std::string cat(std::initializer_list<std::string_view> parts) {
  std::string s;
  for (std::string_view p : parts) s.append(p);
  return s;
}

std::string base64(const std::string& bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3), '\0');
  int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(bytes.data()),
                          static_cast<int>(bytes.size()));
  out.resize(static_cast<std::size_t>(n));
  return out;
}

// DynamoDB renders constants Java-style inside braces: {S:a}, {N:1}, {SS:[a, b]}.
std::string render_body(const AttributeValue& v) {
  std::string s;
  auto join = [&s](const auto& items, auto&& one) {
    s.push_back('[');
    bool first = true;
    for (const auto& x : items) {
      if (!first) s.append(", ");
      first = false;
      one(x);
    }
    s.push_back(']');
  };
  switch (v.type()) {
    case AttrType::S:
      return v.as_string();
    case AttrType::N:
      return v.as_number().to_string();
    case AttrType::B:
      return base64(v.as_string());
    case AttrType::BOOL:
      return v.as_bool() ? "true" : "false";
    case AttrType::NUL:
      return "true";
    case AttrType::SS:
      join(v.as_string_set(), [&s](const std::string& x) { s.append(x); });
      return s;
    case AttrType::BS:
      join(v.as_string_set(), [&s](const std::string& x) { s.append(base64(x)); });
      return s;
    case AttrType::NS:
      join(v.as_number_set(), [&s](const Decimal& x) { s.append(x.to_string()); });
      return s;
    case AttrType::L:
      join(v.as_list(), [&s](const AttributeValue& x) { s.append(render_value(x)); });
      return s;
    case AttrType::M: {
      s.push_back('{');
      bool first = true;
      for (const auto& [k, x] : v.as_map()) {
        if (!first) s.append(", ");
        first = false;
        s.append(k).append("=").append(render_value(x));
      }
      s.push_back('}');
      return s;
    }
  }
  return s;
}

}  // namespace

std::string render_value(const AttributeValue& value) {
  return cat({"AttributeValue: {", type_name(value.type()), ":", render_body(value), "}"});
}

std::string invalid(ExpressionKind kind, std::string_view detail) {
  return cat({"Invalid ", kind_name(kind), ": ", detail});
}

std::string empty_expression() {
  return "The expression can not be empty;";
}
std::string expression_too_large(std::size_t bytes) {
  return cat({"Expression size has exceeded the maximum allowed size; expression size: ",
              std::to_string(bytes)});
}
std::string syntax_error(std::string_view token, std::string_view near) {
  return cat({"Syntax error; token: \"", token, "\", near: \"", near, "\""});
}
std::string redundant_parentheses() {
  return "The expression has redundant parentheses;";
}
std::string invalid_function(std::string_view name) {
  return cat({"Invalid function name; function: ", name});
}
std::string function_not_in_condition(std::string_view name) {
  return cat({"The function is not allowed in a condition expression; function: ", name});
}
std::string list_index_out_of_range(std::string_view digits) {
  return cat({"List index is not within the allowable range; index: [", digits, "]"});
}
std::string path_too_deep(std::size_t elements) {
  return cat({"The document path has too many nesting levels; nesting levels: ",
              std::to_string(elements)});
}
std::string misused_function(std::string_view name) {
  return cat(
      {"The function is not allowed to be used this way in an expression; function: ", name});
}
std::string reserved_keyword(std::string_view word) {
  return cat({"Attribute name is a reserved keyword; reserved keyword: ", word});
}
std::string clause_repeated(std::string_view clause) {
  return cat({"The \"", clause, "\" section can only be used once in an update expression;"});
}
std::string too_many_operators(std::size_t count) {
  return cat({"The expression contains too many operators; operator count: ", std::to_string(count),
              ", maximum allowed: ", std::to_string(kMaxOperators)});
}

std::string undefined_name(std::string_view placeholder) {
  return cat(
      {"An expression attribute name used in the document path is not defined; "
       "attribute name: ",
       placeholder});
}
std::string undefined_value(std::string_view placeholder) {
  return cat(
      {"An expression attribute value used in expression is not defined; "
       "attribute value: ",
       placeholder});
}
std::string operand_count(std::string_view function, std::size_t count) {
  return cat({"Incorrect number of operands for operator or function; operator or function: ",
              function, ", number of operands: ", std::to_string(count)});
}
std::string requires_path(std::string_view function) {
  return cat({"Operator or function requires a document path; operator or function: ", function});
}
std::string requires_value(std::string_view function) {
  return cat(
      {"Operator or function requires an expression attribute value; operator or "
       "function: ",
       function});
}
std::string not_distinct(std::string_view op, std::string_view rendered_path) {
  return cat(
      {"The first operand must be distinct from the remaining operands for this operator "
       "or function; operator: ",
       op, ", first operand: ", rendered_path});
}
std::string operand_type(std::string_view function, std::string_view type) {
  return cat({"Incorrect operand type for operator or function; operator or function: ", function,
              ", operand type: ", type});
}
std::string clause_operand_type(std::string_view clause, AttrType type) {
  std::string_view word;
  switch (type) {
    case AttrType::S:
      word = "STRING";
      break;
    case AttrType::N:
      word = "NUMBER";
      break;
    case AttrType::B:
      word = "BINARY";
      break;
    case AttrType::BOOL:
      word = "BOOLEAN";
      break;
    case AttrType::NUL:
      word = "NULL";
      break;
    case AttrType::L:
      word = "LIST";
      break;
    case AttrType::M:
      word = "MAP";
      break;
    case AttrType::SS:
      word = "STRING_SET";
      break;
    case AttrType::NS:
      word = "NUMBER_SET";
      break;
    case AttrType::BS:
      word = "BINARY_SET";
      break;
  }
  return cat({"Incorrect operand type for operator or function; operator: ", clause,
              ", operand type: ", word});
}
std::string invalid_attribute_type(std::string_view type) {
  return cat({"Invalid attribute type name found; type: ", type,
              ", valid types: {B,NULL,SS,BOOL,L,BS,N,NS,S,M}"});
}
std::string between_types(const AttributeValue& lower, const AttributeValue& upper) {
  return cat(
      {"The BETWEEN operator requires same data type for lower and upper bounds; lower "
       "bound operand: ",
       render_value(lower), ", upper bound operand: ", render_value(upper)});
}
std::string between_order(const AttributeValue& lower, const AttributeValue& upper) {
  return cat(
      {"The BETWEEN operator requires upper bound to be greater than or equal to lower "
       "bound; lower bound operand: ",
       render_value(lower), ", upper bound operand: ", render_value(upper)});
}
std::string paths_overlap(std::string_view one, std::string_view two) {
  return cat(
      {"Two document paths overlap with each other; must remove or rewrite one of these "
       "paths; path one: ",
       one, ", path two: ", two});
}
std::string paths_conflict(std::string_view one, std::string_view two) {
  return cat(
      {"Two document paths conflict with each other; must remove or rewrite one of these "
       "paths; path one: ",
       one, ", path two: ", two});
}

std::string key_invalid_operator(std::string_view op) {
  return cat({"Invalid operator used in KeyConditionExpression: ", op});
}
std::string key_nested_operation() {
  return "KeyConditionExpressions cannot contain nested operations";
}
std::string key_nested_attribute() {
  return "KeyConditionExpressions cannot have conditions on nested attributes";
}
std::string key_multiple_names() {
  return "Invalid condition in KeyConditionExpression: Multiple attribute names used in one "
         "condition";
}
std::string key_no_attribute() {
  return "Invalid condition in KeyConditionExpression: No key attribute specified";
}
std::string key_first_operand(std::string_view op) {
  return cat({"Invalid condition in KeyConditionExpression: ", op,
              " operator must have the key attribute as its first operand"});
}
std::string key_one_condition_per_key() {
  return "KeyConditionExpressions must only contain one condition per key";
}

std::string key_missed_element(std::string_view attribute) {
  return cat({"Query condition missed key schema element: ", attribute});
}
std::string key_condition_not_supported() {
  return "Query key condition not supported";
}
std::string key_too_many_conditions(std::size_t conditions, std::size_t key_attributes) {
  return cat({"The number of query conditions (", std::to_string(conditions),
              ") exceeds the number of key attributes defined in the schema (",
              std::to_string(key_attributes), ")"});
}
std::string key_type_mismatch() {
  return "One or more parameter values were invalid: Condition parameter type does not match "
         "schema type";
}
std::string key_hash_equality(std::string_view attribute) {
  return cat(
      {"HASH key attributes ", attribute, " must have equality conditions specified in the query"});
}
std::string key_range_equality(std::string_view attribute, std::string_view later) {
  return cat({"RANGE key attributes ", attribute,
              " must have equality conditions specified in the query because a condition is "
              "present on key attribute ",
              later});
}

std::string update_missing_operand() {
  return "The provided expression refers to an attribute that does not exist in the item";
}
std::string update_operand_type() {
  return "An operand in the update expression has an incorrect data type";
}
std::string update_set_type_mismatch() {
  return "Type mismatch for attribute to update";
}
std::string update_invalid_path() {
  return "The document path provided in the update expression is invalid for update";
}
std::string update_number_overflow() {
  return Decimal::error_message(Decimal::ParseError::kOverflow, {});
}
std::string update_key_attribute(std::string_view attribute) {
  return cat({"One or more parameter values were invalid: Cannot update attribute ", attribute,
              ". This attribute is part of the key"});
}
std::string update_nested_key(std::string_view attribute, bool index_key) {
  return cat(
      {"Key attributes must be scalars; list random access '[]' and map lookup '.' are "
       "not allowed: ",
       index_key ? "IndexKey: " : "Key: ", attribute});
}

std::string nesting_too_deep() {
  return "Nesting Levels have exceeded supported limits: Attributes in the item have nested "
         "levels beyond supported limit";
}
std::string nesting_too_deep_bare() {
  return "Nesting Levels have exceeded supported limits";
}

std::string unused_names(std::string_view keys) {
  return cat(
      {"Value provided in ExpressionAttributeNames unused in expressions: keys: {", keys, "}"});
}
std::string unused_values(std::string_view keys) {
  return cat(
      {"Value provided in ExpressionAttributeValues unused in expressions: keys: {", keys, "}"});
}
std::string filter_on_key(std::string_view attribute) {
  return cat(
      {"Filter Expression can only contain non-primary key attributes: Primary key "
       "attribute: ",
       attribute});
}

}  // namespace kumo::expr::msg
