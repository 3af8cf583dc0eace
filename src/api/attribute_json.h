// AttributeValue ⇄ JSON, with DynamoDB's validation of values (types, numbers, sets,
// nesting) as they arrive: JSON type errors throw SerializationException at once; invalid
// values are recorded in the Validation context so that the request reports the first one
// after every type error has had its chance (DynamoDB deserializes the whole request
// before it validates it).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "api/json_reader.h"
#include "model/api_error.h"
#include "model/attribute_value.h"
#include "model/value_visitor.h"

namespace kumo::api {

// How a string or number set with a repeated member is reported. PutItem, UpdateItem,
// DeleteItem, GetItem, BatchGetItem and Query quote a string set's members
// ("Input collection ["b", "c", "c", "a"] contains duplicates.") and word a number set
// "One or more parameter values were invalid: Input collection contains duplicates.";
// the other operations keep the older forms ("Input collection [b, c, c, a] contains
// duplicates.", "Input collection contains duplicates").
enum class DuplicateWording : std::uint8_t { kPlain, kQuoted };

// The first semantic validation failure seen while decoding a request.
class Validation {
 public:
  explicit Validation(DuplicateWording duplicates = DuplicateWording::kPlain)
      : duplicates_(duplicates) {}
  DuplicateWording duplicates() const { return duplicates_; }

  void fail(std::string message) {
    if (!first_) first_ = std::move(message);
  }
  bool failed() const { return first_.has_value(); }
  const std::optional<std::string>& message() const { return first_; }
  // Throws ValidationException with the first failure, if any.
  void throw_if_failed() const {
    if (first_) throw ApiError::validation(*first_);
  }

  // How N values (alone and in NS) are read: by Decimal::parse with DynamoDB's texts,
  // unless another reader is set (PartiQL reads its parameters as Java's BigDecimal does).
  using NumberReader = void (*)(std::string_view text, Decimal* out, Validation& v);
  void set_number_reader(NumberReader reader) { number_reader_ = reader; }
  void read_number(std::string_view text, Decimal* out);

 private:
  std::optional<std::string> first_;
  DuplicateWording duplicates_;
  NumberReader number_reader_ = nullptr;
};

// An attribute name is 1 to 65,535 bytes long: in an item or key, in ExpressionAttributeNames,
// AttributesToGet and AttributeUpdates. What is wrong with `name`, worded as DynamoDB does
// ("Empty attribute name", or a message naming the limit); empty when it is valid.
std::string_view attribute_name_error(std::string_view name);
// The same as a ValidationException "One or more parameter values were invalid: <error>".
void check_attribute_name(std::string_view name);

// Decodes one AttributeValue JSON object ({"S": "..."} etc.).
AttributeValue decode_value(const JsonValue& json, Validation& validation);
// Decodes an attribute map ({"name": {"S": ...}, ...}), whose names must be valid.
Item decode_item(const JsonValue& json, Validation& validation);

// A JSON document being written. rapidjson's own buffer, so that its Writer reserves room
// once per string.
using JsonOut = rapidjson::StringBuffer;

// A JsonOut's first capacity for a response that writes `item_bytes` of items (their size
// as DynamoDB counts it): JSON's quotes, type tags and braces about double small values.
// Grown from rapidjson's 256 bytes, a page of 10 items took 6 reallocations and copies.
inline std::size_t json_capacity(std::size_t item_bytes) {
  return 256 + 2 * item_bytes;
}

// rapidjson's Writer, with two changes:
// - Strings (values and member names) are written by write_quoted, which copies the runs
//   that need no escaping 16 bytes at a time. rapidjson 1.1.0 goes byte by byte unless
//   RAPIDJSON_SSE2 is defined, and its SSE2 scan lets 0x1A-0x1F through unescaped.
// - DynamoDB's most frequent value, an object of one string member ({"S":"text"}), is
//   written in one step, without the nesting bookkeeping the Writer spends on a one-member
//   object (14% of the instructions writing a page of items).
class JsonWriter : public rapidjson::Writer<JsonOut> {
 public:
  using rapidjson::Writer<JsonOut>::Writer;

  bool String(const char* text, rapidjson::SizeType length, bool /*copy*/ = false) {
    Prefix(rapidjson::kStringType);
    write_quoted({text, length});
    return EndValue(true);
  }
  bool Key(const char* text, rapidjson::SizeType length, bool /*copy*/ = false) {
    return String(text, length);
  }

  // Writes {"<tag>":"<text>"} as the next value. `tag` must need no escaping.
  void TaggedString(std::string_view tag, std::string_view text) {
    Prefix(rapidjson::kObjectType);
    rapidjson::PutReserve(*os_, tag.size() + 5);
    rapidjson::PutUnsafe(*os_, '{');
    rapidjson::PutUnsafe(*os_, '"');
    for (const char c : tag) rapidjson::PutUnsafe(*os_, c);
    rapidjson::PutUnsafe(*os_, '"');
    rapidjson::PutUnsafe(*os_, ':');
    write_quoted(text);
    os_->Put('}');
    EndValue(true);
  }

 private:
  // Writes `text` in quotes, as rapidjson's Writer does: '"', '\\' and the control
  // characters escaped (\n, \u001F...), every other byte as it is.
  void write_quoted(std::string_view text);
};
inline std::string json_text(const JsonOut& out) {
  return {out.GetString(), out.GetSize()};
}

// Writes what it visits as DynamoDB JSON: a value as {"S": "..."} and so on, a key as a
// member name. An item is its keys and values inside StartObject/EndObject.
class JsonValueWriter final : public ValueVisitor {
 public:
  explicit JsonValueWriter(JsonWriter& w) : w_(w) {}
  void key(std::string_view name) override {
    w_.Key(name.data(), static_cast<rapidjson::SizeType>(name.size()));
  }
  void scalar(AttrType type, std::string_view text) override;
  void boolean(bool value) override;
  void null() override;
  void begin(AttrType type, std::size_t count) override;
  void member(std::string_view text) override;
  void end(AttrType type) override;

 private:
  JsonWriter& w_;
  bool binary_members_ = false;
};

void write_value(JsonWriter& w, const AttributeValue& value);
void write_item(JsonWriter& w, const Item& item);
// Writes a string member name / value from a string_view.
inline void write_key(JsonWriter& w, std::string_view key) {
  w.Key(key.data(), static_cast<rapidjson::SizeType>(key.size()));
}
inline void write_string(JsonWriter& w, std::string_view s) {
  w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
}

std::string base64_encode(std::string_view bytes);
// Strict RFC 4648 decoding; malformed text is a SerializationException with the Java
// decoder's texts.
std::string base64_decode(std::string_view text);

}  // namespace kumo::api
