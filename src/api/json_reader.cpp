#include "api/json_reader.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>
#include <rapidjson/memorystream.h>
#include <rapidjson/reader.h>

#include "model/api_error.h"

namespace kumo::api {
namespace {

// The parser's first memory chunk, kept between parses: most request bodies fit in it.
constexpr std::size_t kFirstChunkBytes = 16 * 1024;

// rapidjson reads without recursion, and UTF-8 strictly (kParseValidateEncodingFlag) when
// the text has any byte above 127: validating a character at a time costs more than the
// rest of the parse (4k instructions for a Query), and ASCII needs none.
constexpr unsigned kParseFlags = rapidjson::kParseIterativeFlag;
constexpr unsigned kValidatingParseFlags = kParseFlags | rapidjson::kParseValidateEncodingFlag;

bool is_ascii(std::string_view text) {
  std::uint64_t any = 0;
  std::size_t i = 0;
  for (; i + 8 <= text.size(); i += 8) {
    std::uint64_t word;
    std::memcpy(&word, text.data() + i, 8);
    any |= word;
  }
  for (; i < text.size(); ++i) any |= static_cast<unsigned char>(text[i]);
  return (any & 0x8080808080808080ULL) == 0;
}

// A lone \uD800-\uDFFF escape comes out of rapidjson encoded as a surrogate (ED A0..BF
// xx), which is not UTF-8; raw surrogate bytes are already refused by the validation.
bool has_surrogate(const char* text, std::size_t length) {
  const char* end = text + length;
  for (const char* p = text;; ++p) {
    p = static_cast<const char*>(std::memchr(p, '\xED', static_cast<std::size_t>(end - p)));
    if (p == nullptr || p + 1 >= end) return false;
    if ((static_cast<unsigned char>(p[1]) & 0xE0) == 0xA0) return true;
  }
}

// Builds the document from the reader's events, refusing surrogates and deep nesting.
class CheckedBuilder {
 public:
  explicit CheckedBuilder(rapidjson::Document& document) : document_(document) {}

  bool Null() { return document_.Null(); }
  bool Bool(bool b) { return document_.Bool(b); }
  bool Int(int i) { return document_.Int(i); }
  bool Uint(unsigned u) { return document_.Uint(u); }
  bool Int64(std::int64_t i) { return document_.Int64(i); }
  bool Uint64(std::uint64_t u) { return document_.Uint64(u); }
  bool Double(double d) { return document_.Double(d); }
  bool RawNumber(const char* text, rapidjson::SizeType length, bool copy) {
    return document_.RawNumber(text, length, copy);
  }
  bool String(const char* text, rapidjson::SizeType length, bool copy) {
    return !has_surrogate(text, length) && document_.String(text, length, copy);
  }
  bool Key(const char* text, rapidjson::SizeType length, bool copy) {
    return !has_surrogate(text, length) && document_.Key(text, length, copy);
  }
  bool StartObject() { return ++depth_ <= JsonDocument::kMaxDepth && document_.StartObject(); }
  bool EndObject(rapidjson::SizeType members) {
    --depth_;
    return document_.EndObject(members);
  }
  bool StartArray() { return ++depth_ <= JsonDocument::kMaxDepth && document_.StartArray(); }
  bool EndArray(rapidjson::SizeType elements) {
    --depth_;
    return document_.EndArray(elements);
  }

 private:
  rapidjson::Document& document_;
  int depth_ = 0;
};

// "NUMBER_VALUE" / "DECIMAL_VALUE" / "TRUE_VALUE" / ... as Jackson names JSON tokens.
std::string_view token_name(const JsonValue& e) {
  if (e.IsDouble()) return "DECIMAL_VALUE";
  if (e.IsNumber()) return "NUMBER_VALUE";
  if (e.IsBool()) return e.GetBool() ? "TRUE_VALUE" : "FALSE_VALUE";
  if (e.IsString()) return "STRING_VALUE";
  return "VALUE";
}

bool name_char_ok(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.' || c == '-';
}

const JsonValue& empty_object() {
  static const JsonValue empty(rapidjson::kObjectType);
  return empty;
}

}  // namespace

JsonDocument::JsonDocument()
    : first_chunk_(new char[kFirstChunkBytes]),
      pool_(first_chunk_.get(), kFirstChunkBytes),
      document_(&pool_) {}

bool JsonDocument::parse(std::string_view text) {
  clear();
  rapidjson::MemoryStream stream(text.data(), text.size());
  bool parsed = false;
  auto generate = [&](rapidjson::Document& document) {
    rapidjson::Reader reader;
    CheckedBuilder builder(document);
    const bool ok = is_ascii(text)
                        ? !reader.Parse<kParseFlags>(stream, builder).IsError()
                        : !reader.Parse<kValidatingParseFlags>(stream, builder).IsError();
    // A NUL byte ends rapidjson's input: what follows it must not be taken as accepted.
    parsed = ok && stream.Tell() == text.size();
    return parsed;
  };
  document_.Populate(generate);
  if (!parsed) document_.SetNull();
  return parsed;
}

void JsonDocument::clear() {
  document_.SetNull();
  pool_.Clear();
}

void throw_not_string(const JsonValue& value) {
  if (value.IsObject()) {
    throw ApiError::serialization("Start of structure or map found where not expected");
  }
  if (value.IsArray()) {
    throw ApiError::serialization("Unrecognized collection type class java.lang.String");
  }
  throw ApiError::serialization(fmt::format("{} cannot be converted to String", token_name(value)));
}

void throw_not_boolean(const JsonValue& value) {
  if (value.IsObject()) {
    throw ApiError::serialization("Start of structure or map found where not expected");
  }
  throw ApiError::serialization("Unexpected token received from parser");
}

void throw_not_object(const JsonValue& value) {
  if (value.IsArray()) {
    throw ApiError::serialization("Start of list found where not expected");
  }
  throw ApiError::serialization("Unexpected field type");
}

void throw_not_array(const JsonValue& value) {
  if (value.IsObject()) {
    throw ApiError::serialization("Start of structure or map found where not expected");
  }
  throw ApiError::serialization("Unexpected field type");
}

JsonObject::JsonObject() : object_(&empty_object()) {}

const JsonValue* JsonObject::element(std::string_view key) const {
  // A request looks up each of its operation's members, most of them absent: names of
  // another length are passed over without reading them.
  for (auto m = object_->MemberBegin(); m != object_->MemberEnd(); ++m) {
    if (m->name.GetStringLength() == key.size() &&
        std::memcmp(m->name.GetString(), key.data(), key.size()) == 0) {
      return m->value.IsNull() ? nullptr : &m->value;
    }
  }
  return nullptr;
}

std::optional<std::string_view> JsonObject::string(std::string_view key) const {
  const JsonValue* e = element(key);
  if (!e) return std::nullopt;
  if (!e->IsString()) throw_not_string(*e);
  return json_string(*e);
}

std::optional<std::int64_t> JsonObject::integer(std::string_view key,
                                                std::string_view java_type) const {
  const JsonValue* e = element(key);
  if (!e) return std::nullopt;
  if (e->IsInt64()) return e->GetInt64();
  if (e->IsUint64()) {
    // Larger than any int64: Jackson refuses it as out of range.
    throw ApiError::serialization(fmt::format("NUMBER_VALUE cannot be converted to {}", java_type));
  }
  if (e->IsDouble()) {
    const double d = e->GetDouble();
    // Jackson truncates a fractional number given for an integer member.
    if (d >= -9.2e18 && d <= 9.2e18) return static_cast<std::int64_t>(d);
    throw ApiError::serialization(
        fmt::format("DECIMAL_VALUE cannot be converted to {}", java_type));
  }
  if (e->IsObject()) {
    throw ApiError::serialization("Start of structure or map found where not expected");
  }
  if (e->IsArray()) {
    throw ApiError::serialization(
        fmt::format("Unrecognized collection type class java.lang.{}", java_type));
  }
  throw ApiError::serialization(
      fmt::format("{} cannot be converted to {}", token_name(*e), java_type));
}

bool as_boolean(const JsonValue& value) {
  if (value.IsBool()) return value.GetBool();
  if (value.IsString()) {
    std::string s(json_string(value));
    for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (s == "true" || s == "1" || s == "yes") return true;
    if (s == "false" || s == "0" || s == "no") return false;
  }
  throw_not_boolean(value);
}

std::optional<bool> JsonObject::boolean(std::string_view key) const {
  const JsonValue* e = element(key);
  if (!e) return std::nullopt;
  return as_boolean(*e);
}

std::optional<double> JsonObject::timestamp(std::string_view key) const {
  const JsonValue* e = element(key);
  if (!e) return std::nullopt;
  if (e->IsNumber()) return e->GetDouble();
  if (e->IsString()) {
    // Epoch seconds written as a string are read as the number.
    const std::string text(json_string(*e));
    char* end = nullptr;
    const double seconds = std::strtod(text.c_str(), &end);
    if (!text.empty() && *end == '\0') return seconds;
  }
  if (e->IsObject()) {
    throw ApiError::serialization("Start of structure or map found where not expected");
  }
  if (e->IsArray()) {
    throw ApiError::serialization("Unrecognized collection type class java.util.Date");
  }
  throw ApiError::serialization(fmt::format("{} cannot be converted to Date", token_name(*e)));
}

std::optional<JsonObject> JsonObject::object(std::string_view key) const {
  const JsonValue* e = element(key);
  if (!e) return std::nullopt;
  if (!e->IsObject()) throw_not_object(*e);
  return JsonObject(*e);
}

std::optional<JsonArray> JsonObject::array(std::string_view key) const {
  const JsonValue* e = element(key);
  if (!e) return std::nullopt;
  if (!e->IsArray()) throw_not_array(*e);
  return JsonArray(*e);
}

std::vector<std::optional<JsonObject>> JsonArray::objects() const {
  std::vector<std::optional<JsonObject>> out;
  for (const JsonValue& e : *this) {
    if (e.IsNull()) {
      out.emplace_back();
    } else if (e.IsObject()) {
      out.emplace_back(JsonObject(e));
    } else {
      throw_not_object(e);
    }
  }
  return out;
}

std::vector<std::optional<std::string_view>> JsonArray::strings() const {
  std::vector<std::optional<std::string_view>> out;
  for (const JsonValue& e : *this) {
    if (e.IsNull()) {
      out.emplace_back();
    } else if (e.IsString()) {
      out.emplace_back(json_string(e));
    } else {
      throw_not_string(e);
    }
  }
  return out;
}

void CoralErrors::add(std::optional<std::string_view> value, std::string_view path,
                      std::string_view constraint) {
  if (value) {
    errors_.push_back(fmt::format("Value '{}' at '{}{}' failed to satisfy constraint: {}", *value,
                                  prefix_, path, constraint));
  } else {
    errors_.push_back(fmt::format("Value null at '{}{}' failed to satisfy constraint: {}", prefix_,
                                  path, constraint));
  }
}

void CoralErrors::add_without_value(std::string_view path, std::string_view constraint) {
  errors_.push_back(
      fmt::format("Value at '{}{}' failed to satisfy constraint: {}", prefix_, path, constraint));
}

void CoralErrors::throw_if_any() const {
  if (errors_.empty()) return;
  std::string message = fmt::format("{} validation error{} detected: ", errors_.size(),
                                    errors_.size() == 1 ? "" : "s");
  for (std::size_t i = 0; i < errors_.size() && i < 10; ++i) {
    if (i) message += "; ";
    message += errors_[i];
  }
  throw ApiError::coral_validation(std::move(message));
}

// A length counts characters as Java does (UTF-16 code units), not UTF-8 bytes: 128 "א"
// are 128 characters.
void CoralErrors::check_length(std::string_view value, std::string_view path, std::size_t min,
                               std::size_t max) {
  const std::size_t length = java_length(value);
  if (length < min) {
    add(value, path, fmt::format("Member must have length greater than or equal to {}", min));
  }
  if (length > max) {
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

std::size_t java_length(std::string_view utf8) {
  std::size_t units = 0;
  for (const char c : utf8) {
    const auto byte = static_cast<unsigned char>(c);
    units += (byte & 0xC0) != 0x80;  // a character's first byte
    units += byte >= 0xF0;           // a character beyond U+FFFF is a surrogate pair
  }
  return units;
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
