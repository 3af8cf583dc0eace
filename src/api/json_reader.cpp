#include "api/json_reader.h"

#include <fmt/format.h>

#include "model/api_error.h"

namespace kumo::api {
namespace {

using simdjson::dom::element;
using simdjson::dom::element_type;

bool is_null(element e) {
  return e.type() == element_type::NULL_VALUE;
}

// "NUMBER_VALUE" / "DECIMAL_VALUE" / "TRUE_VALUE" / ... as Jackson names JSON tokens.
std::string_view token_name(element e) {
  switch (e.type()) {
    case element_type::INT64:
    case element_type::UINT64:
      return "NUMBER_VALUE";
    case element_type::DOUBLE:
      return "DECIMAL_VALUE";
    case element_type::BOOL:
      return e.get_bool().value() ? "TRUE_VALUE" : "FALSE_VALUE";
    case element_type::STRING:
      return "STRING_VALUE";
    default:
      return "VALUE";
  }
}

bool name_char_ok(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.' || c == '-';
}

}  // namespace

void throw_not_string(element value) {
  switch (value.type()) {
    case element_type::OBJECT:
      throw ApiError::serialization("Start of structure or map found where not expected");
    case element_type::ARRAY:
      throw ApiError::serialization("Unrecognized collection type class java.lang.String");
    default:
      throw ApiError::serialization(
          fmt::format("{} cannot be converted to String", token_name(value)));
  }
}

void throw_not_boolean(element value) {
  if (value.type() == element_type::OBJECT) {
    throw ApiError::serialization("Start of structure or map found where not expected");
  }
  throw ApiError::serialization("Unexpected token received from parser");
}

void throw_not_object(element value) {
  if (value.type() == element_type::ARRAY) {
    throw ApiError::serialization("Start of list found where not expected");
  }
  throw ApiError::serialization("Unexpected field type");
}

void throw_not_array(element value) {
  if (value.type() == element_type::OBJECT) {
    throw ApiError::serialization("Start of structure or map found where not expected");
  }
  throw ApiError::serialization("Unexpected field type");
}

std::optional<element> JsonObject::element(std::string_view key) const {
  simdjson::dom::element e;
  if (object_.at_key(key).get(e) != simdjson::SUCCESS || is_null(e)) return std::nullopt;
  return e;
}

std::optional<std::string_view> JsonObject::string(std::string_view key) const {
  auto e = element(key);
  if (!e) return std::nullopt;
  if (e->type() != element_type::STRING) throw_not_string(*e);
  return e->get_string().value();
}

std::optional<std::int64_t> JsonObject::integer(std::string_view key,
                                                std::string_view java_type) const {
  auto e = element(key);
  if (!e) return std::nullopt;
  switch (e->type()) {
    case element_type::INT64:
      return e->get_int64().value();
    case element_type::UINT64:
      // Larger than any int64: Jackson refuses it as out of range.
      throw ApiError::serialization(
          fmt::format("NUMBER_VALUE cannot be converted to {}", java_type));
    case element_type::DOUBLE: {
      double d = e->get_double().value();
      // Jackson truncates a fractional number given for an integer member.
      if (d >= -9.2e18 && d <= 9.2e18) return static_cast<std::int64_t>(d);
      throw ApiError::serialization(
          fmt::format("DECIMAL_VALUE cannot be converted to {}", java_type));
    }
    case element_type::OBJECT:
      throw ApiError::serialization("Start of structure or map found where not expected");
    case element_type::ARRAY:
      throw ApiError::serialization(
          fmt::format("Unrecognized collection type class java.lang.{}", java_type));
    default:
      throw ApiError::serialization(
          fmt::format("{} cannot be converted to {}", token_name(*e), java_type));
  }
}

std::optional<bool> JsonObject::boolean(std::string_view key) const {
  auto e = element(key);
  if (!e) return std::nullopt;
  if (e->type() == element_type::BOOL) return e->get_bool().value();
  if (e->type() == element_type::STRING) {
    std::string s(e->get_string().value());
    for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (s == "true" || s == "1" || s == "yes") return true;
    if (s == "false" || s == "0" || s == "no") return false;
  }
  throw_not_boolean(*e);
}

std::optional<JsonObject> JsonObject::object(std::string_view key) const {
  auto e = element(key);
  if (!e) return std::nullopt;
  if (e->type() != element_type::OBJECT) throw_not_object(*e);
  return JsonObject(e->get_object().value());
}

std::optional<JsonArray> JsonObject::array(std::string_view key) const {
  auto e = element(key);
  if (!e) return std::nullopt;
  if (e->type() != element_type::ARRAY) throw_not_array(*e);
  return JsonArray(e->get_array().value());
}

std::vector<std::optional<JsonObject>> JsonArray::objects() const {
  std::vector<std::optional<JsonObject>> out;
  for (simdjson::dom::element e : array_) {
    if (is_null(e)) {
      out.emplace_back();
    } else if (e.type() == element_type::OBJECT) {
      out.emplace_back(JsonObject(e.get_object().value()));
    } else {
      throw_not_object(e);
    }
  }
  return out;
}

std::vector<std::optional<std::string_view>> JsonArray::strings() const {
  std::vector<std::optional<std::string_view>> out;
  for (simdjson::dom::element e : array_) {
    if (is_null(e)) {
      out.emplace_back();
    } else if (e.type() == element_type::STRING) {
      out.emplace_back(e.get_string().value());
    } else {
      throw_not_string(e);
    }
  }
  return out;
}

void CoralErrors::add(std::optional<std::string_view> value, std::string_view path,
                      std::string_view constraint) {
  if (value) {
    errors_.push_back(fmt::format("Value '{}' at '{}' failed to satisfy constraint: {}", *value,
                                  path, constraint));
  } else {
    errors_.push_back(
        fmt::format("Value null at '{}' failed to satisfy constraint: {}", path, constraint));
  }
}

void CoralErrors::throw_if_any() const {
  if (errors_.empty()) return;
  std::string message = fmt::format("{} validation error{} detected: ", errors_.size(),
                                    errors_.size() == 1 ? "" : "s");
  for (std::size_t i = 0; i < errors_.size() && i < 10; ++i) {
    if (i) message += "; ";
    message += errors_[i];
  }
  throw ApiError::validation(std::move(message));
}

void CoralErrors::check_length(std::string_view value, std::string_view path, std::size_t min,
                               std::size_t max) {
  if (value.size() < min) {
    add(value, path, fmt::format("Member must have length greater than or equal to {}", min));
  }
  if (value.size() > max) {
    add(value, path, fmt::format("Member must have length less than or equal to {}", max));
  }
}

void CoralErrors::check_table_name(std::optional<std::string_view> name, std::string_view path,
                                   bool required) {
  if (!name) {
    if (required) require(false, path);
    return;
  }
  check_length(*name, path, 3, 255);
  for (char c : *name) {
    if (!name_char_ok(c)) {
      add(*name, path, "Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+");
      break;
    }
  }
}

void CoralErrors::check_enum(std::optional<std::string_view> value, std::string_view path,
                             std::initializer_list<std::string_view> allowed) {
  if (!value) return;
  for (auto a : allowed) {
    if (*value == a) return;
  }
  std::vector<std::string> names(allowed.begin(), allowed.end());
  add(*value, path, "Member must satisfy enum value set: " + render_list(names));
}

std::string render_list(const std::vector<std::string>& items) {
  std::string out = "[";
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i) out += ", ";
    out += items[i];
  }
  out += "]";
  return out;
}

}  // namespace kumo::api
