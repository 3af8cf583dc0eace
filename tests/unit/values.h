// Attribute values written briefly, for the unit tests: N("1.5"), S("x"), B("\x01").
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "model/attribute_value.h"

namespace kumo::test {

// The number `text`, which must parse.
inline Decimal num(std::string_view text) {
  Decimal d;
  EXPECT_EQ(Decimal::parse(text, &d), Decimal::ParseError::kNone) << text;
  return d;
}

inline AttributeValue S(std::string s) {
  return AttributeValue::string(std::move(s));
}
inline AttributeValue N(std::string_view text) {
  return AttributeValue::number(num(text));
}
inline AttributeValue N(long long v) {
  return AttributeValue::number(Decimal::from_int(v));
}
inline AttributeValue B(std::string bytes) {
  return AttributeValue::binary(std::move(bytes));
}

}  // namespace kumo::test
