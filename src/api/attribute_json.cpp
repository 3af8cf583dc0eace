#include "api/attribute_json.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstring>
#include <set>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include <fmt/format.h>
#include <openssl/evp.h>

namespace kumo::api {
namespace {

// DynamoDB accepts a scalar wrapped in 31 levels of L/M and rejects 32.
constexpr int kMaxDepth = 32;

// What follows the backslash when a byte is written into a JSON string: 0 for a byte
// written as it is, 'u' for \u00XX.
constexpr std::array<char, 256> kEscapes = [] {
  std::array<char, 256> escapes{};
  for (int c = 0; c < 0x20; ++c) escapes[c] = 'u';
  escapes['\b'] = 'b';
  escapes['\t'] = 't';
  escapes['\n'] = 'n';
  escapes['\f'] = 'f';
  escapes['\r'] = 'r';
  escapes['"'] = '"';
  escapes['\\'] = '\\';
  return escapes;
}();

// The first byte of [p, end) that a JSON string cannot hold as it is, or `end`.
const char* find_escape(const char* p, const char* end) {
#ifdef __SSE2__
  const __m128i quote = _mm_set1_epi8('"');
  const __m128i backslash = _mm_set1_epi8('\\');
  const __m128i last_control = _mm_set1_epi8(0x1F);
  for (; end - p >= 16; p += 16) {
    const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    // A byte is a control character when min(byte, 0x1F) is the byte (unsigned).
    const __m128i control = _mm_cmpeq_epi8(_mm_min_epu8(bytes, last_control), bytes);
    const __m128i hits = _mm_or_si128(
        control, _mm_or_si128(_mm_cmpeq_epi8(bytes, quote), _mm_cmpeq_epi8(bytes, backslash)));
    if (const int mask = _mm_movemask_epi8(hits)) return p + __builtin_ctz(mask);
  }
#endif
  while (p != end && kEscapes[static_cast<unsigned char>(*p)] == 0) ++p;
  return p;
}

bool is_base64_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '+' || c == '/';
}

int base64_value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  return c == '+' ? 62 : 63;
}

}  // namespace

std::string base64_decode(std::string_view text) {
  if (text.size() % 4 != 0) {
    throw ApiError::serialization(fmt::format(
        "Base64 encoded length is expected a multiple of 4 bytes but found: {}", text.size()));
  }
  std::size_t pad = 0;
  while (pad < 2 && pad < text.size() && text[text.size() - 1 - pad] == '=') ++pad;
  const std::string_view body = text.substr(0, text.size() - pad);
  for (char c : body) {
    if (!is_base64_char(c)) {
      throw ApiError::serialization(
          fmt::format("Illegal character '{}' (code 0x{:x}) in base64 content", c,
                      static_cast<unsigned>(static_cast<unsigned char>(c))));
    }
  }
  // The bits of the last character that padding leaves unused must be zero.
  if (pad > 0) {
    int last = base64_value(body.back());
    if ((pad == 1 && (last & 0x3)) || (pad == 2 && (last & 0xF))) {
      throw ApiError::serialization("Invalid last non-pad Base64 character dectected");
    }
  }
  std::string out(text.size() / 4 * 3, '\0');
  if (!text.empty()) {
    int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                            reinterpret_cast<const unsigned char*>(text.data()),
                            static_cast<int>(text.size()));
    if (n < 0) throw ApiError::serialization("Invalid last non-pad Base64 character dectected");
  }
  out.resize(out.size() - pad);
  return out;
}

namespace {

std::string_view as_string(const JsonValue& e) {
  if (!e.IsString()) throw_not_string(e);
  return json_string(e);
}

JsonArray as_array(const JsonValue& e) {
  if (!e.IsArray()) throw_not_array(e);
  return JsonArray(e);
}

AttributeValue decode_at(const JsonValue& json, Validation& v, int depth);

// A string set with a repeat as the quoted wording renders it: the members before the first
// repeat sorted by bytes, then the repeat and the members after it as sent.
std::string render_repeated(const std::vector<std::string>& members) {
  std::set<std::string_view> before;
  std::size_t i = 0;
  while (i < members.size() && before.insert(members[i]).second) ++i;
  std::vector<std::string> quoted;
  for (std::string_view m : before) quoted.push_back(fmt::format("\"{}\"", m));
  for (; i < members.size(); ++i) quoted.push_back(fmt::format("\"{}\"", members[i]));
  return render_list(quoted);
}

AttributeValue decode_set(std::string_view type, const JsonValue& member, Validation& v) {
  const JsonArray array = as_array(member);
  if (type == "SS") {
    std::vector<std::string> members;
    for (const JsonValue& e : array) members.emplace_back(as_string(e));
    if (members.empty())
      v.fail(std::string(kInvalidParameters) + "An string set  may not be empty");
    std::vector<std::string> sorted(members);
    std::sort(sorted.begin(), sorted.end());
    if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) {
      v.fail(fmt::format("{}Input collection {} contains duplicates.", kInvalidParameters,
                         v.duplicates() == DuplicateWording::kQuoted ? render_repeated(members)
                                                                     : render_list(members)));
    }
    return AttributeValue::string_set(std::move(members));
  }
  if (type == "NS") {
    std::vector<Decimal> members;
    for (const JsonValue& e : array) {
      Decimal d;
      v.read_number(as_string(e), &d);
      members.push_back(std::move(d));
    }
    if (members.empty())
      v.fail(std::string(kInvalidParameters) + "An number set  may not be empty");
    std::vector<Decimal> sorted(members);
    std::sort(sorted.begin(), sorted.end());
    if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) {
      v.fail(v.duplicates() == DuplicateWording::kQuoted
                 ? std::string(kInvalidParameters) + "Input collection contains duplicates."
                 : "Input collection contains duplicates");
    }
    return AttributeValue::number_set(std::move(members));
  }
  std::vector<std::string> members, texts;
  for (const JsonValue& e : array) {
    std::string_view text = as_string(e);
    texts.emplace_back(text);
    members.push_back(base64_decode(text));
  }
  if (members.empty()) v.fail(std::string(kInvalidParameters) + "Binary sets should not be empty");
  std::vector<std::string> sorted(members);
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) {
    v.fail(fmt::format("{}Input collection {}of type BS contains duplicates.", kInvalidParameters,
                       render_list(texts)));
  }
  return AttributeValue::binary_set(std::move(members));
}

AttributeValue decode_at(const JsonValue& json, Validation& v, int depth) {
  if (!json.IsObject()) {
    if (json.IsArray()) {
      throw ApiError::serialization("Start of list found where not expected");
    }
    throw ApiError::serialization("Unexpected value type in payload");
  }
  if (depth >= kMaxDepth) {
    v.fail(
        "Nesting Levels have exceeded supported limits: Attributes in the item have nested "
        "levels beyond supported limit");
    return AttributeValue::null();
  }
  int types = 0;
  AttributeValue result;
  for (auto [key, member] : JsonObject(json)) {
    if (member.IsNull()) continue;
    if (key == "S") {
      result = AttributeValue::string(std::string(as_string(member)));
    } else if (key == "N") {
      Decimal d;
      v.read_number(as_string(member), &d);
      result = AttributeValue::number(std::move(d));
    } else if (key == "B") {
      result = AttributeValue::binary(base64_decode(as_string(member)));
    } else if (key == "BOOL") {
      result = AttributeValue::boolean(as_boolean(member));
    } else if (key == "NULL") {
      if (!as_boolean(member))
        v.fail(std::string(kInvalidParameters) +
               "Null attribute value types must have the value of true");
      result = AttributeValue::null();
    } else if (key == "M") {
      if (!member.IsObject()) throw_not_object(member);
      AttributeMap map;
      for (auto [name, value] : JsonObject(member)) {
        map.insert_or_assign(std::string(name), decode_at(value, v, depth + 1));
      }
      result = AttributeValue::map(std::move(map));
    } else if (key == "L") {
      AttributeList list;
      for (const JsonValue& e : as_array(member)) list.push_back(decode_at(e, v, depth + 1));
      result = AttributeValue::list(std::move(list));
    } else if (key == "SS" || key == "NS" || key == "BS") {
      result = decode_set(key, member, v);
    } else {
      continue;  // unknown members are ignored
    }
    ++types;
  }
  if (types == 0) {
    v.fail("Supplied AttributeValue is empty, must contain exactly one of the supported datatypes");
  } else if (types > 1) {
    v.fail(
        "Supplied AttributeValue has more than one datatypes set, must contain exactly one of "
        "the supported datatypes");
  }
  return result;
}

}  // namespace

std::string_view attribute_name_error(std::string_view name) {
  constexpr std::size_t kMaxAttributeNameBytes = 65535;
  if (name.empty()) return "Empty attribute name";
  if (name.size() > kMaxAttributeNameBytes) {
    return "Attribute name has exceeded the maximum allowed length of 65535 bytes";
  }
  return {};
}

void check_attribute_name(std::string_view name) {
  const std::string_view error = attribute_name_error(name);
  if (!error.empty()) throw ApiError::validation(fmt::format("{}{}", kInvalidParameters, error));
}

void Validation::read_number(std::string_view text, Decimal* out) {
  if (number_reader_) {
    number_reader_(text, out, *this);
    return;
  }
  const Decimal::ParseError err = Decimal::parse(text, out);
  if (err != Decimal::ParseError::kNone) fail(Decimal::error_message(err, text));
}

AttributeValue decode_value(const JsonValue& json, Validation& validation) {
  return decode_at(json, validation, 0);
}

Item decode_item(const JsonValue& json, Validation& validation) {
  if (!json.IsObject()) throw_not_object(json);
  Item item;
  for (auto [name, value] : JsonObject(json)) {
    if (value.IsNull()) continue;
    if (const std::string_view error = attribute_name_error(name); !error.empty()) {
      validation.fail(fmt::format("{}{}", kInvalidParameters, error));
    }
    item.insert_or_assign(std::string(name), decode_at(value, validation, 0));
  }
  return item;
}

std::string base64_encode(std::string_view bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3), '\0');
  if (!bytes.empty()) {
    EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                    reinterpret_cast<const unsigned char*>(bytes.data()),
                    static_cast<int>(bytes.size()));
  }
  return out;
}

void JsonWriter::write_quoted(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  const std::size_t most = 2 + 6 * text.size();  // every byte as \u00XX
  char* const start = os_->Push(most);
  char* out = start;
  *out++ = '"';
  const char* p = text.data();
  const char* const end = p + text.size();
  while (true) {
    const char* const next = find_escape(p, end);
    if (next != p) {
      std::memcpy(out, p, static_cast<std::size_t>(next - p));
      out += next - p;
    }
    if (next == end) break;
    const auto c = static_cast<unsigned char>(*next);
    *out++ = '\\';
    *out++ = kEscapes[c];
    if (kEscapes[c] == 'u') {
      *out++ = '0';
      *out++ = '0';
      *out++ = kHex[c >> 4];
      *out++ = kHex[c & 0xF];
    }
    p = next + 1;
  }
  *out++ = '"';
  os_->Pop(most - static_cast<std::size_t>(out - start));
}

void JsonValueWriter::scalar(AttrType type, std::string_view text) {
  w_.TaggedString(type_name(type),
                  type == AttrType::B ? std::string_view(base64_encode(text)) : text);
}

void JsonValueWriter::boolean(bool value) {
  w_.StartObject();
  write_key(w_, "BOOL");
  w_.Bool(value);
  w_.EndObject();
}

void JsonValueWriter::null() {
  w_.StartObject();
  write_key(w_, "NULL");
  w_.Bool(true);
  w_.EndObject();
}

void JsonValueWriter::begin(AttrType type, std::size_t) {
  w_.StartObject();
  write_key(w_, type_name(type));
  if (type == AttrType::M) {
    w_.StartObject();
  } else {
    w_.StartArray();
    binary_members_ = type == AttrType::BS;
  }
}

void JsonValueWriter::member(std::string_view text) {
  if (binary_members_) {
    write_string(w_, base64_encode(text));
  } else {
    write_string(w_, text);
  }
}

void JsonValueWriter::end(AttrType type) {
  if (type == AttrType::M) {
    w_.EndObject();
  } else {
    w_.EndArray();
  }
  w_.EndObject();
}

void write_value(JsonWriter& w, const AttributeValue& value) {
  JsonValueWriter writer(w);
  visit_value(value, writer);
}

void write_item(JsonWriter& w, const Item& item) {
  JsonValueWriter writer(w);
  w.StartObject();
  visit_item(item, writer);
  w.EndObject();
}

}  // namespace kumo::api
