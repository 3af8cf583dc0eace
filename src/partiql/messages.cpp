#include "partiql/messages.h"

#include <fmt/format.h>

namespace kumo::partiql::msg {

std::string malformed(std::string_view detail) {
  return fmt::format("Statement wasn't well formed, can't be processed: {}", detail);
}

std::string expected_token(std::string_view token) {
  return fmt::format("Expected {}", token);
}

std::string unsupported_operation(std::string_view node) {
  return fmt::format("Unsupported operation: {}", node);
}

std::string number_error(std::string_view number_message, std::string_view path) {
  return fmt::format("{} under {}", number_message, path);
}

std::string bag_duplicates(std::string_view members) {
  return fmt::format(
      "One or more parameter values were invalid: Input collection [{}] contains duplicates.",
      members);
}

std::string bag_number_duplicates(std::string_view members, std::string_view path) {
  return fmt::format(
      "One or more parameter values were invalid: Input collection [{}] contains duplicates! "
      "under {}",
      members, path);
}

std::string unsupported_data_type(std::string_view what, std::string_view path,
                                  std::string_view at) {
  return fmt::format("Unsupported data type: {} under key {} at {}", what, path, at);
}

std::string nesting(std::string_view path) {
  return fmt::format("Nesting Levels have exceeded supported limits under {}", path);
}

std::string duplicate_key(std::string_view key, std::string_view path) {
  return fmt::format("Duplicate keys in tuple. Key: {} under {}", key, path);
}

std::string key_type(std::string_view type, std::string_view path) {
  return fmt::format("Tuple keys must be of type String. Actual type: {} under {}", type, path);
}

std::string ion_literal(std::string_view literal, std::string_view path) {
  return fmt::format("Ion Literals are not supported: {} under key {}", literal, path);
}

std::string list_index(std::string_view index, std::string_view at) {
  return fmt::format("List index is not within the allowable range; index: [{}] at {}", index, at);
}

std::string unexpected_path_component(std::string_view at) {
  return fmt::format("Unexpected path component at {}", at);
}

std::string duplicate_projection(std::string_view name) {
  return fmt::format("Duplicate identifiers in select clause: {}", name);
}

std::string delete_returning(std::string_view variant) {
  return fmt::format(
      "Invalid returning clause: RETURNING {} *. Only RETURNING ALL OLD * is allowed in DELETE "
      "statements.",
      variant);
}

std::string operand_type(std::string_view op, std::string_view type) {
  return fmt::format(
      "Incorrect operand type for operator or function; operator or function: {}, operand "
      "type: {}",
      op, type);
}

std::string requires_path(std::string_view function) {
  return fmt::format("Operator or function requires a document path; operator or function: {}",
                     function);
}

std::string operand_count(std::string_view function, std::size_t count) {
  return fmt::format(
      "Incorrect number of operands for operator or function; operator or function: {}, number "
      "of operands: {}",
      function, count);
}

std::string invalid_attribute_type(std::string_view type) {
  return fmt::format(
      "Invalid attribute type name found; type: {}, valid types: {{N,BS,L,B,NULL,M,S,SS,NS,BOOL}}",
      type);
}

std::string unrecognized_function(std::string_view name, std::string_view at) {
  return fmt::format("Unrecognized function: {} at {}", name, at);
}

std::string set_function_first(std::string_view function, std::string_view at) {
  return fmt::format("The first argument to {} must equal the assignment value at {}", function,
                     at);
}

std::string set_function_second(std::string_view function, std::string_view at) {
  return fmt::format("The second argument to {} must be a value with type SET at {}", function, at);
}

std::string set_function_arity(std::string_view function, std::string_view at) {
  return fmt::format("{} must have exactly two arguments at {}", function, at);
}

std::string in_operands(std::size_t count) {
  return fmt::format("The IN operator is provided with too many operands; number of operands: {}",
                     count);
}

std::string is_type(std::string_view type) {
  return fmt::format(
      "Unsupported data type for IS operator: {}. Supported data types are [MISSING, NULL, "
      "BOOLEAN, BLOB, STRING, NUMERIC, STRUCT, TUPLE, LIST]",
      type);
}

std::string update_operator(std::string_view op) {
  return fmt::format("Unsupported operator in Update Expression. Operator: {}", op);
}

std::string condition_operator(std::string_view op) {
  return fmt::format("Unsupported operator in Condition Expression. Operator: {}", op);
}

std::string position(std::string_view text, std::uint32_t begin, std::uint32_t end) {
  // A character is counted at its first byte; continuation bytes are 10xxxxxx.
  auto is_lead = [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; };
  std::size_t line = 1, column = 1, length = 0;
  for (std::uint32_t i = 0; i < begin && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else if (is_lead(text[i])) {
      ++column;
    }
  }
  for (std::uint32_t i = begin; i < end && i < text.size(); ++i) length += is_lead(text[i]);
  return fmt::format("{}:{}:{}", line, column, length);
}

}  // namespace kumo::partiql::msg
