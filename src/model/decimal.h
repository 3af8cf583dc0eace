// Decimal: DynamoDB's Number type, an exact decimal of at most 38 significant digits with
// magnitude in [1E-130, 9.99...E+125] or zero. Never goes through binary floating point.
#pragma once

#include <compare>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace kumo {

class Decimal {
 public:
  enum class ParseError { kNone, kEmpty, kNotANumber, kTooManyDigits, kOverflow, kUnderflow };

  // Zero.
  Decimal() = default;

  // Parses DynamoDB's number syntax (sign, digits, optional fraction and exponent).
  // Returns kNone and sets *out on success; leaves *out untouched otherwise.
  static ParseError parse(std::string_view text, Decimal* out);
  // DynamoDB's message for a parse error of `text` (e.g. "Number overflow. ...").
  static std::string error_message(ParseError error, std::string_view text);

  static Decimal from_int(long long value);

  // Exact a + b and a - b. Returns kOverflow when the exact result needs more than 38
  // significant digits or leaves the supported range (DynamoDB reports both as overflow).
  static ParseError add(const Decimal& a, const Decimal& b, Decimal* out);
  static ParseError subtract(const Decimal& a, const Decimal& b, Decimal* out);

  bool is_zero() const { return digits_.empty(); }
  bool negative() const { return negative_; }
  // Significant digits ('0'-'9', no leading or trailing zeros); empty for zero.
  const std::string& digits() const { return digits_; }
  // The value is 0.<digits> x 10^exponent (meaningless for zero).
  int exponent() const { return exponent_; }

  // Canonical text: plain decimal, no exponent, no leading zeros, no trailing fraction
  // zeros, no '+', and "0" for zero (DynamoDB's output form).
  std::string to_string() const;
  // Bytes DynamoDB counts for this number in an item's size: 1, plus 1 per base-100 digit
  // pair aligned on the decimal point, plus 1 if negative.
  std::size_t size_bytes() const;
  // size_bytes() of the number whose canonical text (to_string) is `text`, counted on the
  // text without building the number, as stored items are measured; nullopt for any text
  // that is not a canonical number in range, which only parse can judge.
  static std::optional<std::size_t> canonical_size_bytes(std::string_view text);

  std::strong_ordering operator<=>(const Decimal& other) const;
  bool operator==(const Decimal& other) const = default;

 private:
  bool negative_ = false;
  std::string digits_;
  int exponent_ = 0;
};

}  // namespace kumo
