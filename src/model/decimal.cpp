#include "model/decimal.h"

#include <algorithm>

#include <boost/multiprecision/cpp_int.hpp>

namespace kumo {
namespace {

constexpr std::size_t kMaxDigits = 38;
// 0.d x 10^e: |x| >= 1E-130 means e >= -129; |x| < 1E126 means e <= 126.
constexpr int kMinExponent = -129;
constexpr int kMaxExponent = 126;

int floor_div2(int v) {
  return v >= 0 ? v / 2 : -((-v + 1) / 2);
}

// Builds a normalized decimal from a digit string (may have leading/trailing zeros) whose
// last digit has weight 10^low_power.
Decimal::ParseError normalize(bool negative, std::string_view raw, long long low_power,
                              bool* out_negative, std::string* out_digits, int* out_exponent) {
  std::size_t first = raw.find_first_not_of('0');
  if (first == std::string_view::npos) {
    // DynamoDB judges a zero's range by the exponent it is written with, as if its last
    // digit were significant: 0e126 overflows, 0.0e126 does not.
    if (low_power + 1 > kMaxExponent) return Decimal::ParseError::kOverflow;
    *out_negative = false;
    out_digits->clear();
    *out_exponent = 0;
    return Decimal::ParseError::kNone;
  }
  std::size_t last = raw.find_last_not_of('0');
  // Weight of the first significant digit is 10^(low_power + (raw.size()-1-first)).
  long long exponent = low_power + static_cast<long long>(raw.size() - first);
  std::string_view digits = raw.substr(first, last - first + 1);
  if (digits.size() > kMaxDigits) return Decimal::ParseError::kTooManyDigits;
  if (exponent > kMaxExponent) return Decimal::ParseError::kOverflow;
  if (exponent < kMinExponent) return Decimal::ParseError::kUnderflow;
  *out_negative = negative;
  out_digits->assign(digits);
  *out_exponent = static_cast<int>(exponent);
  return Decimal::ParseError::kNone;
}

}  // namespace

Decimal::ParseError Decimal::parse(std::string_view text, Decimal* out) {
  if (text.empty()) return ParseError::kEmpty;
  std::size_t i = 0;
  bool negative = false;
  if (text[i] == '+' || text[i] == '-') negative = text[i++] == '-';
  std::string mantissa;
  std::size_t int_digits = 0, frac_digits = 0;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
    mantissa.push_back(text[i++]);
    ++int_digits;
  }
  if (i < text.size() && text[i] == '.') {
    ++i;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
      mantissa.push_back(text[i++]);
      ++frac_digits;
    }
  }
  if (int_digits + frac_digits == 0) return ParseError::kNotANumber;
  long long exponent = 0;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    bool exp_negative = false;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) exp_negative = text[i++] == '-';
    std::size_t exp_start = i;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
      // Saturate: anything this large is out of range whatever the mantissa.
      if (exponent < 1'000'000'000) exponent = exponent * 10 + (text[i] - '0');
      ++i;
    }
    if (i == exp_start) return ParseError::kNotANumber;
    if (exp_negative) exponent = -exponent;
  }
  if (i != text.size()) return ParseError::kNotANumber;
  Decimal result;
  ParseError err = normalize(negative, mantissa, exponent - static_cast<long long>(frac_digits),
                             &result.negative_, &result.digits_, &result.exponent_);
  if (err == ParseError::kNone) *out = std::move(result);
  return err;
}

std::string Decimal::error_message(ParseError error, std::string_view text) {
  switch (error) {
    case ParseError::kNone:
      return {};
    case ParseError::kEmpty:
      return "The parameter cannot be converted to a numeric value";
    case ParseError::kNotANumber:
      return "The parameter cannot be converted to a numeric value: " + std::string(text);
    case ParseError::kTooManyDigits:
      return "Attempting to store more than 38 significant digits in a Number";
    case ParseError::kOverflow:
      return "Number overflow. Attempting to store a number with magnitude larger than "
             "supported range";
    case ParseError::kUnderflow:
      return "Number underflow. Attempting to store a number with magnitude smaller than "
             "supported range";
  }
  return {};
}

Decimal Decimal::from_int(long long value) {
  Decimal d;
  parse(std::to_string(value), &d);
  return d;
}

namespace {
using boost::multiprecision::cpp_int;

// Exact signed sum of a and (b_negated ? -b : b).
Decimal::ParseError add_signed(const Decimal& a, const Decimal& b, bool negate_b, Decimal* out) {
  if (b.is_zero()) {
    *out = a;
    return Decimal::ParseError::kNone;
  }
  // Weight of each operand's last digit.
  auto low = [](const Decimal& d) {
    return d.is_zero()
               ? 0LL
               : static_cast<long long>(d.exponent()) - static_cast<long long>(d.digits().size());
  };
  long long low_power = std::min(a.is_zero() ? low(b) : low(a), low(b));
  auto scaled = [&](const Decimal& d, bool negate) {
    if (d.is_zero()) return cpp_int(0);
    cpp_int v(d.digits());
    v *= boost::multiprecision::pow(cpp_int(10), static_cast<unsigned>(low(d) - low_power));
    return (d.negative() != negate) ? cpp_int(-v) : v;
  };
  cpp_int sum = scaled(a, false) + scaled(b, negate_b);
  bool negative = sum < 0;
  std::string digits = (negative ? cpp_int(-sum) : sum).str();
  Decimal result;
  Decimal::ParseError err = Decimal::parse(
      std::string(negative ? "-" : "") + digits + "E" + std::to_string(low_power), &result);
  // An exact result that needs more than 38 digits or leaves the range is reported as
  // overflow, as DynamoDB does for arithmetic.
  if (err != Decimal::ParseError::kNone) return Decimal::ParseError::kOverflow;
  *out = std::move(result);
  return err;
}
}  // namespace

Decimal::ParseError Decimal::add(const Decimal& a, const Decimal& b, Decimal* out) {
  return add_signed(a, b, false, out);
}

Decimal::ParseError Decimal::subtract(const Decimal& a, const Decimal& b, Decimal* out) {
  return add_signed(a, b, true, out);
}

std::string Decimal::to_string() const {
  if (is_zero()) return "0";
  std::string s;
  s.reserve(digits_.size() + 4 + std::max(0, std::abs(exponent_)));
  if (negative_) s.push_back('-');
  const int n = static_cast<int>(digits_.size());
  if (exponent_ <= 0) {
    s.append("0.");
    s.append(static_cast<std::size_t>(-exponent_), '0');
    s.append(digits_);
  } else if (exponent_ < n) {
    s.append(digits_, 0, static_cast<std::size_t>(exponent_));
    s.push_back('.');
    s.append(digits_, static_cast<std::size_t>(exponent_));
  } else {
    s.append(digits_);
    s.append(static_cast<std::size_t>(exponent_ - n), '0');
  }
  return s;
}

std::size_t Decimal::size_bytes() const {
  if (is_zero()) return 1;
  // Base-100 digit pairs aligned on the decimal point: the digit of weight 10^k belongs to
  // pair floor(k/2). Digits span weights exponent-1 down to exponent-n.
  const int n = static_cast<int>(digits_.size());
  const int pairs = floor_div2(exponent_ - 1) - floor_div2(exponent_ - n) + 1;
  return 1 + static_cast<std::size_t>(pairs) + (negative_ ? 1 : 0);
}

std::optional<std::size_t> Decimal::canonical_size_bytes(std::string_view text) {
  const bool negative = !text.empty() && text.front() == '-';
  if (negative) text.remove_prefix(1);
  if (text == "0") return negative ? std::nullopt : std::optional<std::size_t>(1);
  const std::size_t point = text.find('.');
  const std::string_view whole = text.substr(0, point);
  const std::string_view fraction =
      point == std::string_view::npos ? std::string_view() : text.substr(point + 1);
  const auto digits = [](std::string_view part) {
    return std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  // Canonical: no leading zero but the one before a fraction, a fraction ending in a
  // non-zero digit; longer text is out of range anyway (and keeps the weights small).
  if (whole.empty() || whole.size() > 200 || fraction.size() > 200 || !digits(whole) ||
      !digits(fraction) || (point != std::string_view::npos && fraction.empty()) ||
      (!fraction.empty() && fraction.back() == '0') || (whole.front() == '0' && whole != "0")) {
    return std::nullopt;
  }
  // Weights of the first and last significant digits.
  int high = 0, low = 0;
  if (whole == "0") {
    high = -static_cast<int>(fraction.find_first_not_of('0')) - 1;
  } else {
    high = static_cast<int>(whole.size()) - 1;
  }
  if (!fraction.empty()) {
    low = -static_cast<int>(fraction.size());
  } else {
    low = static_cast<int>(whole.size() - 1 - whole.find_last_not_of('0'));
  }
  if (high - low + 1 > static_cast<int>(kMaxDigits) || high + 1 > kMaxExponent ||
      high + 1 < kMinExponent) {
    return std::nullopt;
  }
  const int pairs = floor_div2(high) - floor_div2(low) + 1;
  return 1 + static_cast<std::size_t>(pairs) + (negative ? 1 : 0);
}

std::strong_ordering Decimal::operator<=>(const Decimal& other) const {
  auto sign = [](const Decimal& d) { return d.is_zero() ? 0 : (d.negative_ ? -1 : 1); };
  int sa = sign(*this), sb = sign(other);
  if (sa != sb) return sa <=> sb;
  if (sa == 0) return std::strong_ordering::equal;
  std::strong_ordering magnitude = exponent_ <=> other.exponent_;
  if (magnitude == std::strong_ordering::equal) {
    int c = digits_.compare(other.digits_);
    magnitude = c <=> 0;
  }
  if (sa > 0) return magnitude;
  return 0 <=> magnitude;
}

}  // namespace kumo
