// Typed reading of a request's JSON, the way DynamoDB's deserializer reads it: a member of
// the wrong JSON type is a SerializationException with the Java deserializer's text
// (e.g. "NUMBER_VALUE cannot be converted to String"); null members count as absent;
// unknown members are ignored. Model-constraint violations are collected into one message
// in DynamoDB's "coral" format: "N validation error(s) detected: ...".
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <rapidjson/document.h>

namespace kumo::api {

// A node of a parsed request body; it lives as long as the JsonDocument that parsed it.
using JsonValue = rapidjson::Value;

// The text of a JSON string (which may hold NUL characters).
inline std::string_view json_string(const JsonValue& value) {
  return {value.GetString(), value.GetStringLength()};
}

// A request body parsed into a tree. The parser is strict where DynamoDB's is: the body
// must be exactly one JSON value, in valid UTF-8, whose escapes name whole characters (a
// lone surrogate is refused); nesting past kMaxDepth is refused too, so that no walk of
// the tree can exhaust the stack. The document keeps its memory between parses.
class JsonDocument {
 public:
  static constexpr int kMaxDepth = 1024;

  JsonDocument();
  JsonDocument(const JsonDocument&) = delete;
  JsonDocument& operator=(const JsonDocument&) = delete;

  // Parses `text` in place of what the document held, which becomes invalid. False when
  // `text` is not such a JSON value; root() is then null.
  bool parse(std::string_view text);
  // Drops the tree and any memory a large body made the document take.
  void clear();
  const JsonValue& root() const { return document_; }

 private:
  std::unique_ptr<char[]> first_chunk_;
  rapidjson::MemoryPoolAllocator<> pool_;
  rapidjson::Document document_;
};

// One member of a JSON object: `for (auto [key, value] : object)`.
struct JsonMember {
  std::string_view key;
  const JsonValue& value;
};

class JsonArray;

// A JSON object member view. All getters return nullopt when the member is absent or null
// and throw ApiError::serialization when it has the wrong JSON type.
class JsonObject {
 public:
  class iterator {
   public:
    explicit iterator(JsonValue::ConstMemberIterator at) : at_(at) {}
    JsonMember operator*() const { return {json_string(at_->name), at_->value}; }
    iterator& operator++() {
      ++at_;
      return *this;
    }
    bool operator!=(const iterator& other) const { return at_ != other.at_; }

   private:
    JsonValue::ConstMemberIterator at_;
  };

  // An empty object.
  JsonObject();
  // `object` must be a JSON object.
  explicit JsonObject(const JsonValue& object) : object_(&object) {}

  std::optional<std::string_view> string(std::string_view key) const;
  // `java_type` names the model type in the error text ("Integer" or "Long").
  std::optional<std::int64_t> integer(std::string_view key,
                                      std::string_view java_type = "Integer") const;
  // Booleans; the strings true/false/1/0/yes/no (any case) are coerced as DynamoDB does.
  std::optional<bool> boolean(std::string_view key) const;
  // A timestamp: epoch seconds, a JSON number (or a string holding one).
  std::optional<double> timestamp(std::string_view key) const;
  std::optional<JsonObject> object(std::string_view key) const;
  std::optional<JsonArray> array(std::string_view key) const;
  // The raw member (for AttributeValue decoding); null when absent or JSON null.
  const JsonValue* element(std::string_view key) const;

  const JsonValue& raw() const { return *object_; }
  bool has(std::string_view key) const { return element(key) != nullptr; }
  std::size_t size() const { return object_->MemberCount(); }
  // Members in the order the request gave them.
  iterator begin() const { return iterator(object_->MemberBegin()); }
  iterator end() const { return iterator(object_->MemberEnd()); }

 private:
  const JsonValue* object_;
};

class JsonArray {
 public:
  // `array` must be a JSON array.
  explicit JsonArray(const JsonValue& array) : array_(&array) {}
  std::size_t size() const { return array_->Size(); }
  const JsonValue* begin() const { return array_->Begin(); }
  const JsonValue* end() const { return array_->End(); }
  // Elements as objects (list of structures); a non-object element throws
  // SerializationException. Null elements are returned as nullopt.
  std::vector<std::optional<JsonObject>> objects() const;
  // Elements as strings (list of strings); wrong types throw SerializationException.
  std::vector<std::optional<std::string_view>> strings() const;

 private:
  const JsonValue* array_;
};

// JSON type errors for a value expected to be a string / structure / boolean / list.
// Throw ApiError::serialization with DynamoDB's text.
[[noreturn]] void throw_not_string(const JsonValue& value);
[[noreturn]] void throw_not_object(const JsonValue& value);
[[noreturn]] void throw_not_boolean(const JsonValue& value);
[[noreturn]] void throw_not_array(const JsonValue& value);

// A value read as a boolean: true or false, or one of the strings true/false/1/0/yes/no in
// any case, which DynamoDB's deserializer coerces; anything else throws throw_not_boolean.
bool as_boolean(const JsonValue& value);

// Collects model-constraint violations and reports them as one ValidationException:
// "N validation error(s) detected: Value '<v>' at '<path>' failed to satisfy constraint:
// <c>; ..." (at most 10 listed).
class CoralErrors {
 public:
  // `value` is the Java rendering of the offending value; nullopt renders `Value null`.
  void add(std::optional<std::string_view> value, std::string_view path,
           std::string_view constraint);
  // The form DynamoDB adopted for some members in 2026, which names no value:
  // "Value at '<path>' failed to satisfy constraint: <c>".
  void add_without_value(std::string_view path, std::string_view constraint);
  bool empty() const { return errors_.empty(); }
  // Prefixes the paths of the violations added from now on: "tableCreationParameters." for
  // the members of ImportTable's TableCreationParameters, which CreateTable's checks read.
  void set_path_prefix(std::string prefix) { prefix_ = std::move(prefix); }
  // Throws the ValidationException if any violation was added.
  void throw_if_any() const;

  // Common constraints.
  void require(bool present, std::string_view path) {
    if (!present) add(std::nullopt, path, "Member must not be null");
  }
  // Table or index name: 3–255 characters of [a-zA-Z0-9_.-].
  void check_table_name(std::optional<std::string_view> name, std::string_view path,
                        bool required = true);
  // Length in characters (UTF-16 code units, see java_length) between min and max.
  void check_length(std::string_view value, std::string_view path, std::size_t min,
                    std::size_t max);
  void check_enum(std::optional<std::string_view> value, std::string_view path,
                  std::initializer_list<std::string_view> allowed);

 private:
  std::vector<std::string> errors_;
  std::string prefix_;
};

// The length of UTF-8 text as DynamoDB's model constraints count it, in UTF-16 code units:
// one per character, two for a character beyond U+FFFF.
std::size_t java_length(std::string_view utf8);

// Java renderings used in coral messages: lists as "[a, b]".
std::string render_list(const std::vector<std::string>& items);

}  // namespace kumo::api
