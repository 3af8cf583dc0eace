#include "expr/placeholders.h"

#include <algorithm>
#include <string>

#include "expr/lexer.h"
#include "expr/messages.h"
#include "model/api_error.h"

namespace kumo::expr {
namespace {

bool used(std::span<const ParsedExpression* const> expressions, const std::string& key,
          bool is_name) {
  return std::ranges::any_of(expressions, [&](const ParsedExpression* e) {
    if (e == nullptr) return false;
    const auto& table = is_name ? e->name_placeholders : e->value_placeholders;
    return std::ranges::find(table, key) != table.end();
  });
}

// Keys of `map` no expression uses, rendered "a, b" (map order), or empty.
template <typename Map>
std::string unused_keys(std::span<const ParsedExpression* const> expressions, const Map& map,
                        bool is_name) {
  std::string keys;
  for (const auto& [key, value] : map) {
    if (used(expressions, key, is_name)) continue;
    if (!keys.empty()) keys.append(", ");
    keys.append(key);
  }
  return keys;
}

}  // namespace

void check_placeholders(std::span<const ParsedExpression* const> expressions,
                        const AttributeNames& names, const AttributeValues& values) {
  for (const ParsedExpression* e : expressions) {
    if (e == nullptr) continue;
    for (const PlaceholderUse& use : e->placeholder_uses) {
      if (use.is_name && !names.contains(e->name_placeholders[use.slot])) {
        throw ApiError::validation(
            msg::invalid(e->kind, msg::undefined_name(e->name_placeholders[use.slot])));
      }
      if (!use.is_name && !values.contains(e->value_placeholders[use.slot])) {
        throw ApiError::validation(
            msg::invalid(e->kind, msg::undefined_value(e->value_placeholders[use.slot])));
      }
    }
  }
  if (std::string keys = unused_keys(expressions, names, true); !keys.empty()) {
    throw ApiError::validation(msg::unused_names(keys));
  }
  if (std::string keys = unused_keys(expressions, values, false); !keys.empty()) {
    throw ApiError::validation(msg::unused_values(keys));
  }
}

void check_placeholders(std::initializer_list<const ParsedExpression*> expressions,
                        const AttributeNames& names, const AttributeValues& values) {
  check_placeholders(std::span(expressions.begin(), expressions.size()), names, values);
}

bool is_valid_name_key(std::string_view key) {
  return is_valid_placeholder(key, '#');
}
bool is_valid_value_key(std::string_view key) {
  return is_valid_placeholder(key, ':');
}

}  // namespace kumo::expr
