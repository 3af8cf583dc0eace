#include "partiql/number.h"

#include <limits>
#include <optional>
#include <string>

namespace kumo::partiql {
namespace {

constexpr std::size_t kMaxDigits = 38;
// 0.d x 10^e is within DynamoDB's range for -129 <= e <= 126.
constexpr std::int64_t kMinMagnitude = -129;
constexpr std::int64_t kMaxMagnitude = 126;
constexpr std::int64_t kIntMin = std::numeric_limits<std::int32_t>::min();
constexpr std::int64_t kIntMax = std::numeric_limits<std::int32_t>::max();

bool is_ascii_digit(char c) {
  return c >= '0' && c <= '9';
}

// A number as BigDecimal holds it: sign, unscaled digits (no leading zeros; empty for zero)
// and scale (the value is unscaled x 10^-scale).
struct BigDecimal {
  bool negative = false;
  std::string unscaled;
  std::int64_t scale = 0;
};

std::optional<BigDecimal> read_big_decimal(std::string_view text) {
  BigDecimal d;
  std::size_t i = 0;
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) d.negative = text[i++] == '-';
  std::size_t digits = 0, fraction = 0;
  for (; i < text.size() && is_ascii_digit(text[i]); ++i, ++digits) d.unscaled.push_back(text[i]);
  if (i < text.size() && text[i] == '.') {
    for (++i; i < text.size() && is_ascii_digit(text[i]); ++i, ++fraction)
      d.unscaled.push_back(text[i]);
  }
  if (digits + fraction == 0) return std::nullopt;
  std::int64_t exponent = 0;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    bool negative = false;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) negative = text[i++] == '-';
    const std::size_t start = i;
    for (; i < text.size() && is_ascii_digit(text[i]); ++i) {
      // Saturate just outside the 32-bit range: anything beyond is refused alike.
      if (exponent <= kIntMax + 1) exponent = exponent * 10 + (text[i] - '0');
    }
    if (i == start) return std::nullopt;
    if (negative) exponent = -exponent;
  }
  if (i != text.size() || exponent < kIntMin || exponent > kIntMax) return std::nullopt;
  d.scale = static_cast<std::int64_t>(fraction) - exponent;
  if (d.scale < kIntMin || d.scale > kIntMax) return std::nullopt;
  d.unscaled.erase(0, d.unscaled.find_first_not_of('0'));
  if (d.unscaled.empty()) d.negative = false;
  return d;
}

}  // namespace

NumberError read_number(std::string_view text, Decimal* out) {
  std::optional<BigDecimal> d = read_big_decimal(text);
  if (!d) return NumberError::kNotConvertible;
  if (d->unscaled.empty()) {
    *out = Decimal();
    return NumberError::kNone;
  }
  const std::string_view significant =
      std::string_view(d->unscaled).substr(0, d->unscaled.find_last_not_of('0') + 1);
  if (significant.size() > kMaxDigits) return NumberError::kTooManyDigits;
  // precision - scale, wrapped to 32 bits as DynamoDB's check computes it.
  const auto magnitude = static_cast<std::int64_t>(static_cast<std::int32_t>(
      static_cast<std::uint32_t>(static_cast<std::int64_t>(d->unscaled.size()) - d->scale)));
  if (magnitude > kMaxMagnitude) return NumberError::kOverflow;
  if (magnitude < kMinMagnitude) return NumberError::kUnderflow;
  const std::string canonical =
      std::string(d->negative ? "-" : "") + std::string(significant) + "E" +
      std::to_string(magnitude - static_cast<std::int64_t>(significant.size()));
  return Decimal::parse(canonical, out) == Decimal::ParseError::kNone ? NumberError::kNone
                                                                      : NumberError::kOverflow;
}

std::string number_message(NumberError error) {
  switch (error) {
    case NumberError::kTooManyDigits:
      return Decimal::error_message(Decimal::ParseError::kTooManyDigits, {});
    case NumberError::kOverflow:
      return Decimal::error_message(Decimal::ParseError::kOverflow, {});
    case NumberError::kUnderflow:
      return Decimal::error_message(Decimal::ParseError::kUnderflow, {});
    default:
      return {};
  }
}

bool same_representation(std::string_view a, std::string_view b) {
  std::optional<BigDecimal> x = read_big_decimal(a);
  std::optional<BigDecimal> y = read_big_decimal(b);
  return x && y && x->negative == y->negative && x->unscaled == y->unscaled && x->scale == y->scale;
}

}  // namespace kumo::partiql
