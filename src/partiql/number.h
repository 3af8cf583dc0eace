// Numbers as DynamoDB's PartiQL reads them, in literals and in N parameters alike: the text
// is read as Java's BigDecimal reads a string, then checked against DynamoDB's Number rules.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "model/decimal.h"

namespace kumo::partiql {

enum class NumberError : std::uint8_t {
  kNone,
  kNotConvertible,  // not a number, or an exponent or scale outside a signed 32-bit integer
  kTooManyDigits,   // more than 38 significant digits
  kOverflow,        // magnitude above 9.99...E+125
  kUnderflow,       // magnitude below 1E-130
};

// Reads `text`: an optional sign, digits with an optional point (at least one digit), an
// optional exponent `e`/`E` with an optional sign. The exponent, and the scale it leaves
// (digits after the point minus the exponent), must each fit a signed 32-bit integer, or
// the text cannot be converted. The magnitude is then taken as precision minus scale in
// 32-bit arithmetic, as DynamoDB computes it, so 1e2147483647 wraps round and is too small.
// Sets *out on kNone only.
NumberError read_number(std::string_view text, Decimal* out);

// DynamoDB's text for a number that converts but breaks the Number rules (kTooManyDigits,
// kOverflow, kUnderflow), without any path.
std::string number_message(NumberError error);

// True when BigDecimal would hold `a` and `b` as the same value and scale: 2 and 2.0 differ,
// 2 and 2e0 do not. Both must be convertible (read_number is not kNotConvertible).
bool same_representation(std::string_view a, std::string_view b);

}  // namespace kumo::partiql
