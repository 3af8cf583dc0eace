// Typed reading of a request's JSON, the way DynamoDB's deserializer reads it: a member of
// the wrong JSON type is a SerializationException with the Java deserializer's text
// (dynamodb-contract.md §1.4); null members count as absent; unknown members are ignored.
// Model-constraint violations are collected in DynamoDB's "coral" format (§1.5).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <simdjson.h>

namespace kumo::api {

class JsonArray;

// A JSON object member view. All getters return nullopt when the member is absent or null
// and throw ApiError::serialization when it has the wrong JSON type.
class JsonObject {
 public:
  JsonObject() = default;
  explicit JsonObject(simdjson::dom::object object) : object_(object) {}

  std::optional<std::string_view> string(std::string_view key) const;
  // `java_type` names the model type in the error text ("Integer" or "Long").
  std::optional<std::int64_t> integer(std::string_view key,
                                      std::string_view java_type = "Integer") const;
  // Booleans; the strings true/false/1/0/yes/no (any case) are coerced as DynamoDB does.
  std::optional<bool> boolean(std::string_view key) const;
  std::optional<JsonObject> object(std::string_view key) const;
  std::optional<JsonArray> array(std::string_view key) const;
  // The raw element (for AttributeValue decoding); nullopt when absent or null.
  std::optional<simdjson::dom::element> element(std::string_view key) const;

  simdjson::dom::object raw() const { return object_; }
  bool has(std::string_view key) const { return element(key).has_value(); }

 private:
  simdjson::dom::object object_;
};

class JsonArray {
 public:
  explicit JsonArray(simdjson::dom::array array) : array_(array) {}
  std::size_t size() const { return array_.size(); }
  simdjson::dom::array raw() const { return array_; }
  // Elements as objects (list of structures); a non-object element throws
  // SerializationException. Null elements are returned as nullopt.
  std::vector<std::optional<JsonObject>> objects() const;
  // Elements as strings (list of strings); wrong types throw SerializationException.
  std::vector<std::optional<std::string_view>> strings() const;

 private:
  simdjson::dom::array array_;
};

// JSON type errors for a value expected to be a string / structure / boolean / list.
// Throw ApiError::serialization with DynamoDB's text.
[[noreturn]] void throw_not_string(simdjson::dom::element value);
[[noreturn]] void throw_not_object(simdjson::dom::element value);
[[noreturn]] void throw_not_boolean(simdjson::dom::element value);
[[noreturn]] void throw_not_array(simdjson::dom::element value);

// Collects model-constraint violations and reports them as one ValidationException:
// "N validation error(s) detected: Value '<v>' at '<path>' failed to satisfy constraint:
// <c>; ..." (at most 10 listed).
class CoralErrors {
 public:
  // `value` is the Java rendering of the offending value; nullopt renders `Value null`.
  void add(std::optional<std::string_view> value, std::string_view path,
           std::string_view constraint);
  bool empty() const { return errors_.empty(); }
  // Throws the ValidationException if any violation was added.
  void throw_if_any() const;

  // Common constraints.
  void require(bool present, std::string_view path) {
    if (!present) add(std::nullopt, path, "Member must not be null");
  }
  // Table or index name: 3–255 characters of [a-zA-Z0-9_.-].
  void check_table_name(std::optional<std::string_view> name, std::string_view path,
                        bool required = true);
  void check_length(std::string_view value, std::string_view path, std::size_t min,
                    std::size_t max);
  void check_enum(std::optional<std::string_view> value, std::string_view path,
                  std::initializer_list<std::string_view> allowed);

 private:
  std::vector<std::string> errors_;
};

// Java renderings used in coral messages: lists as "[a, b]".
std::string render_list(const std::vector<std::string>& items);

}  // namespace kumo::api
