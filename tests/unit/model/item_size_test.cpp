#include <gtest/gtest.h>

#include "model/attribute_value.h"
#include "values.h"

namespace kumo {
namespace {

using namespace kumo::test;

TEST(ValueSize, Scalars) {
  EXPECT_EQ(value_size(S("")), 0u);
  EXPECT_EQ(value_size(S("abc")), 3u);
  // UTF-8 bytes, not characters: é is 2 bytes, € 3, 😀 4.
  EXPECT_EQ(value_size(S("\xC3\xA9")), 2u);
  EXPECT_EQ(value_size(S("\xE2\x82\xAC")), 3u);
  EXPECT_EQ(value_size(S("a\xF0\x9F\x98\x80")), 5u);
  EXPECT_EQ(value_size(B("")), 0u);
  EXPECT_EQ(value_size(B(std::string("\x00\xFF\x01", 3))), 3u);
  EXPECT_EQ(value_size(N("0")), 1u);
  EXPECT_EQ(value_size(N("27")), 2u);
  EXPECT_EQ(value_size(N("-27")), 3u);
  EXPECT_EQ(value_size(N("3.14159")), 5u);
  EXPECT_EQ(value_size(AttributeValue::boolean(true)), 1u);
  EXPECT_EQ(value_size(AttributeValue::boolean(false)), 1u);
  EXPECT_EQ(value_size(AttributeValue::null()), 1u);
}

TEST(ValueSize, Sets) {
  EXPECT_EQ(value_size(AttributeValue::string_set({"a", "bc", "\xC3\xA9"})), 5u);
  EXPECT_EQ(value_size(AttributeValue::binary_set({std::string(1, '\0'), "xyz"})), 4u);
  EXPECT_EQ(value_size(AttributeValue::number_set({num("1"), num("-27"), num("123456")})),
            2u + 3u + 4u);
}

TEST(ValueSize, ListsAndMaps) {
  EXPECT_EQ(value_size(AttributeValue::list({})), 3u);
  EXPECT_EQ(value_size(AttributeValue::map({})), 3u);
  // 3 + (1 + 3) + (1 + 2)
  EXPECT_EQ(value_size(AttributeValue::list({S("abc"), N("27")})), 10u);
  // 3 + (1 + 1 + 3) + (1 + 2 + 1)
  EXPECT_EQ(value_size(AttributeValue::map({{"k", S("abc")}, {"kk", AttributeValue::null()}})),
            12u);
  // Nested: outer list 3 + (1 + inner), inner map 3 + (1 + 1 + 1).
  AttributeValue nested =
      AttributeValue::list({AttributeValue::map({{"x", AttributeValue::boolean(true)}})});
  EXPECT_EQ(value_size(nested), 3u + 1u + 6u);
}

TEST(ItemSize, SumsNamesAndValues) {
  EXPECT_EQ(item_size(Item{}), 0u);
  Item item{{"id", S("abc")},                                                // 2 + 3
            {"n", N("123")},                                                 // 1 + 3
            {"\xC3\xA9t\xC3\xA9", S("")},                                    // 5 + 0
            {"l", AttributeValue::list({AttributeValue::boolean(false)})}};  // 1 + 5
  EXPECT_EQ(item_size(item), 5u + 4u + 5u + 6u);
  EXPECT_EQ(kMaxItemSize, 409600u);
  Item big{{"a", S(std::string(kMaxItemSize - 1, 'x'))}};
  EXPECT_EQ(item_size(big), kMaxItemSize);
}

TEST(TypeName, AllTypes) {
  EXPECT_EQ(type_name(AttrType::S), "S");
  EXPECT_EQ(type_name(AttrType::N), "N");
  EXPECT_EQ(type_name(AttrType::B), "B");
  EXPECT_EQ(type_name(AttrType::BOOL), "BOOL");
  EXPECT_EQ(type_name(AttrType::NUL), "NULL");
  EXPECT_EQ(type_name(AttrType::M), "M");
  EXPECT_EQ(type_name(AttrType::L), "L");
  EXPECT_EQ(type_name(AttrType::SS), "SS");
  EXPECT_EQ(type_name(AttrType::NS), "NS");
  EXPECT_EQ(type_name(AttrType::BS), "BS");
}

TEST(AttributeValueEquality, TypeAndValue) {
  EXPECT_EQ(S("a"), S("a"));
  EXPECT_NE(S("a"), S("b"));
  // Same bytes, different type.
  EXPECT_NE(S("a"), B("a"));
  EXPECT_NE(AttributeValue::string_set({"a"}), AttributeValue::binary_set({"a"}));
  // Numbers compare numerically.
  EXPECT_EQ(N("1"), N("1.0"));
  EXPECT_EQ(N("1e3"), N("1000"));
  EXPECT_EQ(N("-0"), N("0"));
  EXPECT_NE(N("1"), N("-1"));
  EXPECT_NE(N("1"), S("1"));
  EXPECT_EQ(AttributeValue::boolean(true), AttributeValue::boolean(true));
  EXPECT_NE(AttributeValue::boolean(true), AttributeValue::boolean(false));
  EXPECT_EQ(AttributeValue::null(), AttributeValue::null());
  EXPECT_NE(AttributeValue::null(), AttributeValue::boolean(false));
}

TEST(AttributeValueEquality, SetsAreUnordered) {
  EXPECT_EQ(AttributeValue::string_set({"a", "b", "c"}),
            AttributeValue::string_set({"c", "a", "b"}));
  EXPECT_NE(AttributeValue::string_set({"a", "b"}), AttributeValue::string_set({"a", "b", "c"}));
  EXPECT_NE(AttributeValue::string_set({"a", "b"}), AttributeValue::string_set({"a", "c"}));
  EXPECT_EQ(AttributeValue::binary_set({"x", std::string(1, '\0')}),
            AttributeValue::binary_set({std::string(1, '\0'), "x"}));
  EXPECT_EQ(AttributeValue::number_set({num("1"), num("2.50")}),
            AttributeValue::number_set({num("2.5"), num("1.0")}));
  EXPECT_NE(AttributeValue::number_set({num("1")}), AttributeValue::number_set({num("2")}));
}

TEST(AttributeValueEquality, ListsAreOrderedMapsAreNot) {
  EXPECT_EQ(AttributeValue::list({S("a"), N("1")}), AttributeValue::list({S("a"), N("1.0")}));
  EXPECT_NE(AttributeValue::list({S("a"), N("1")}), AttributeValue::list({N("1"), S("a")}));
  EXPECT_NE(AttributeValue::list({}), AttributeValue::map({}));
  AttributeMap m1{{"a", N("1")}, {"b", AttributeValue::string_set({"x", "y"})}};
  AttributeMap m2{{"b", AttributeValue::string_set({"y", "x"})}, {"a", N("1.00")}};
  EXPECT_EQ(AttributeValue::map(m1), AttributeValue::map(m2));
  m2["c"] = AttributeValue::null();
  EXPECT_NE(AttributeValue::map(m1), AttributeValue::map(m2));
}

}  // namespace
}  // namespace kumo
