// Shorthands for building values and catching DynamoDB's error texts in expr/ tests.
#pragma once

#include <gtest/gtest.h>

#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "expr/ast.h"
#include "model/api_error.h"
#include "model/attribute_value.h"

namespace kumo::expr::test {

inline AttributeValue S(std::string s) {
  return AttributeValue::string(std::move(s));
}
inline Decimal D(std::string_view text) {
  Decimal d;
  EXPECT_EQ(Decimal::parse(text, &d), Decimal::ParseError::kNone) << text;
  return d;
}
inline AttributeValue N(std::string_view text) {
  return AttributeValue::number(D(text));
}
inline AttributeValue B(std::string bytes) {
  return AttributeValue::binary(std::move(bytes));
}
inline AttributeValue BOOL(bool b) {
  return AttributeValue::boolean(b);
}
inline AttributeValue NUL() {
  return AttributeValue::null();
}
inline AttributeValue L(std::initializer_list<AttributeValue> values) {
  return AttributeValue::list(AttributeList(values));
}
inline AttributeValue M(
    std::initializer_list<std::pair<const std::string, AttributeValue>> members) {
  return AttributeValue::map(AttributeMap(members));
}
inline AttributeValue SS(std::vector<std::string> members) {
  return AttributeValue::string_set(std::move(members));
}
inline AttributeValue BS(std::vector<std::string> members) {
  return AttributeValue::binary_set(std::move(members));
}
inline AttributeValue NS(std::initializer_list<std::string_view> members) {
  std::vector<Decimal> numbers;
  for (std::string_view m : members) numbers.push_back(D(m));
  return AttributeValue::number_set(std::move(numbers));
}

// The message of the ApiError `f` throws, or "<no error>".
template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const ApiError& e) {
    return e.message().value_or("<no message>");
  }
  return "<no error>";
}

}  // namespace kumo::expr::test
