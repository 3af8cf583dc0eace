#include "capacity/key_json.h"

#include <cstdio>

#include "codec/key_codec.h"

namespace kumo::capacity {
namespace {

std::string base64(std::string_view bytes) {
  static constexpr char kDigits[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  std::size_t i = 0;
  auto at = [&](std::size_t k) { return static_cast<unsigned char>(bytes[k]); };
  for (; i + 3 <= bytes.size(); i += 3) {
    const unsigned v = (at(i) << 16) | (at(i + 1) << 8) | at(i + 2);
    for (int s = 18; s >= 0; s -= 6) out.push_back(kDigits[(v >> s) & 63]);
  }
  if (const std::size_t rest = bytes.size() - i; rest > 0) {
    const unsigned v = (at(i) << 16) | (rest == 2 ? at(i + 1) << 8 : 0);
    out.push_back(kDigits[(v >> 18) & 63]);
    out.push_back(kDigits[(v >> 12) & 63]);
    out.push_back(rest == 2 ? kDigits[(v >> 6) & 63] : '=');
    out.push_back('=');
  }
  return out;
}

std::string hex(std::string_view bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (char c : bytes) {
    out.push_back(kHex[(static_cast<unsigned char>(c) >> 4) & 15]);
    out.push_back(kHex[static_cast<unsigned char>(c) & 15]);
  }
  return out;
}

void write_string(JsonWriter& w, std::string_view s) {
  w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
}

void write_value(JsonWriter& w, const AttributeValue& v) {
  w.StartObject();
  switch (v.type()) {
    case AttrType::S:
      w.Key("S");
      write_string(w, v.as_string());
      break;
    case AttrType::N:
      w.Key("N");
      write_string(w, v.as_number().to_string());
      break;
    default:
      w.Key("B");
      write_string(w, base64(v.as_string()));
      break;
  }
  w.EndObject();
}

// Decodes every component; false when the bytes are not their encodings.
// Decodes every component; false when the bytes are not their encodings. A sort key may be
// followed by more (a GSI entry's table key).
bool decode(const std::vector<AttributeDefinition>& parts, std::string_view bytes, bool exact,
            std::vector<AttributeValue>* values) {
  for (const auto& part : parts) {
    AttributeValue v;
    if (!codec::read_key_value(&bytes, part.type, &v)) return false;
    values->push_back(std::move(v));
  }
  return !exact || bytes.empty();
}

void write_parts(JsonWriter& w, const std::vector<AttributeDefinition>& parts,
                 std::string_view bytes, bool exact, const char* fallback) {
  std::vector<AttributeValue> values;
  if (parts.empty() || !decode(parts, bytes, exact, &values)) {
    w.Key(fallback);
    write_string(w, hex(bytes));
    return;
  }
  for (std::size_t i = 0; i < parts.size(); ++i) {
    write_string(w, parts[i].name);
    write_value(w, values[i]);
  }
}

}  // namespace

void write_key(JsonWriter& w, const std::vector<AttributeDefinition>& hash,
               const std::vector<AttributeDefinition>& range, std::string_view partition_key,
               std::string_view sort_key) {
  w.StartObject();
  write_parts(w, hash, partition_key, true, "encoded_partition_key");
  if (!sort_key.empty()) write_parts(w, range, sort_key, false, "encoded_sort_key");
  w.EndObject();
}

std::string token_hex(std::uint64_t token) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(token));
  return buf;
}

}  // namespace kumo::capacity
