#include "codec/key_codec.h"

#include <bit>
#include <cstring>
#include <stdexcept>

#include <xxhash.h>

namespace kumo::codec {
namespace {

// S and B: 0x00 inside the value becomes 0x00 0xFF and the value ends with 0x00 0x01, so a
// value sorts before every longer value it prefixes and an embedded zero sorts above the
// end of the value.
constexpr char kEscape = '\x00';
constexpr char kEscapedZero = '\xFF';
constexpr char kTerminator = '\x01';

// N: the marker orders negatives < zero < positives. A positive 0.d1d2...dn x 10^e is
// [e + kExponentBias][d1 + kDigitBase]...[dn + kDigitBase][0x00]: the fixed-width exponent
// compares magnitude first, then digits compare lexicographically and the 0x00 end makes a
// shorter digit string (a smaller number) sort first. Negatives complement those bytes so
// larger magnitudes sort first.
constexpr unsigned char kNegative = 0x01;
constexpr unsigned char kZero = 0x02;
constexpr unsigned char kPositive = 0x03;
// Decimal::exponent() lies in [-129, 126], which this bias maps onto [0, 255].
constexpr int kExponentBias = 129;
constexpr unsigned char kDigitBase = 0x10;
constexpr unsigned char kNumberEnd = 0x00;

void append_escaped(std::string* out, std::string_view bytes) {
  for (char c : bytes) {
    out->push_back(c);
    if (c == kEscape) out->push_back(kEscapedZero);
  }
  out->push_back(kEscape);
  out->push_back(kTerminator);
}

bool read_escaped(std::string_view* in, std::string* out) {
  out->clear();
  std::size_t i = 0;
  const std::string_view s = *in;
  while (i < s.size()) {
    char c = s[i++];
    if (c != kEscape) {
      out->push_back(c);
      continue;
    }
    if (i >= s.size()) return false;
    char next = s[i++];
    if (next == kTerminator) {
      in->remove_prefix(i);
      return true;
    }
    if (next != kEscapedZero) return false;
    out->push_back(kEscape);
  }
  return false;
}

void append_number(std::string* out, const Decimal& d) {
  if (d.is_zero()) {
    out->push_back(static_cast<char>(kZero));
    return;
  }
  const unsigned char flip = d.negative() ? 0xFF : 0x00;
  out->push_back(static_cast<char>(d.negative() ? kNegative : kPositive));
  out->push_back(static_cast<char>((d.exponent() + kExponentBias) ^ flip));
  for (char digit : d.digits()) {
    out->push_back(static_cast<char>((kDigitBase + (digit - '0')) ^ flip));
  }
  out->push_back(static_cast<char>(kNumberEnd ^ flip));
}

bool read_key_number(std::string_view* in, Decimal* out) {
  const std::string_view s = *in;
  if (s.empty()) return false;
  const auto marker = static_cast<unsigned char>(s[0]);
  if (marker == kZero) {
    *out = Decimal();
    in->remove_prefix(1);
    return true;
  }
  if (marker != kNegative && marker != kPositive) return false;
  const unsigned char flip = marker == kNegative ? 0xFF : 0x00;
  if (s.size() < 2) return false;
  const int exponent = (static_cast<unsigned char>(s[1]) ^ flip) - kExponentBias;
  std::string text = marker == kNegative ? "-0." : "0.";
  std::size_t i = 2;
  for (;; ++i) {
    if (i >= s.size()) return false;
    const unsigned char b = static_cast<unsigned char>(s[i]) ^ flip;
    if (b == kNumberEnd) break;
    if (b < kDigitBase || b > kDigitBase + 9) return false;
    text.push_back(static_cast<char>('0' + (b - kDigitBase)));
  }
  const std::size_t digit_count = i - 2;
  // Only the canonical form is valid: at least one digit, none leading or trailing zero.
  if (digit_count == 0 || text[text.size() - digit_count] == '0' || text.back() == '0') {
    return false;
  }
  text += 'E';
  text += std::to_string(exponent);
  Decimal d;
  if (Decimal::parse(text, &d) != Decimal::ParseError::kNone) return false;
  *out = std::move(d);
  in->remove_prefix(i + 1);
  return true;
}

}  // namespace

void append_key_value(std::string* out, const AttributeValue& value) {
  switch (value.type()) {
    case AttrType::S:
    case AttrType::B:
      append_escaped(out, value.as_string());
      return;
    case AttrType::N:
      append_number(out, value.as_number());
      return;
    default:
      // Key attributes are S, N or B; the api layer rejects anything else before here.
      throw std::invalid_argument("append_key_value: not a key type");
  }
}

bool read_key_value(std::string_view* in, ScalarType type, AttributeValue* out) {
  switch (type) {
    case ScalarType::S:
    case ScalarType::B: {
      std::string bytes;
      std::string_view rest = *in;
      if (!read_escaped(&rest, &bytes)) return false;
      *out = type == ScalarType::S ? AttributeValue::string(std::move(bytes))
                                   : AttributeValue::binary(std::move(bytes));
      *in = rest;
      return true;
    }
    case ScalarType::N: {
      Decimal d;
      std::string_view rest = *in;
      if (!read_key_number(&rest, &d)) return false;
      *out = AttributeValue::number(std::move(d));
      *in = rest;
      return true;
    }
  }
  return false;
}

std::uint64_t token(std::string_view encoded_partition_key) {
  return XXH3_64bits(encoded_partition_key.data(), encoded_partition_key.size());
}

void append_u32(std::string* out, std::uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out->push_back(static_cast<char>(v >> shift));
}

void append_u64(std::string* out, std::uint64_t v) {
  for (int shift = 56; shift >= 0; shift -= 8) out->push_back(static_cast<char>(v >> shift));
}

std::uint64_t read_u64(std::string_view in) {
  std::uint64_t v = 0;
  std::memcpy(&v, in.data(), sizeof v);
  if constexpr (std::endian::native == std::endian::little) v = __builtin_bswap64(v);
  return v;
}

std::string table_prefix(std::uint32_t table_id) {
  std::string out;
  append_u32(&out, table_id);
  return out;
}

std::string space_prefix(std::uint32_t table_id, Space space) {
  std::string out = table_prefix(table_id);
  out.push_back(static_cast<char>(space));
  return out;
}

std::string prefix_end(std::string_view prefix) {
  std::string out(prefix);
  while (!out.empty() && static_cast<unsigned char>(out.back()) == 0xFF) out.pop_back();
  if (!out.empty()) out.back() = static_cast<char>(static_cast<unsigned char>(out.back()) + 1);
  return out;
}

std::string item_key(std::uint32_t table_id, const AttributeValue& partition,
                     const AttributeValue* sort) {
  std::string pk;
  append_key_value(&pk, partition);
  std::string out = space_prefix(table_id, Space::kItems);
  out.reserve(out.size() + 8 + pk.size() + (sort ? 16 : 0));
  append_u64(&out, token(pk));
  out += pk;
  if (sort != nullptr) append_key_value(&out, *sort);
  return out;
}

}  // namespace kumo::codec
