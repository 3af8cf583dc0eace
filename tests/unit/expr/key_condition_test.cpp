// KeyConditionExpression: structure messages, table key validation and multi-attribute GSI
// keys.
#include "expr/key_condition.h"

#include <gtest/gtest.h>

#include "expr_test_util.h"

namespace kumo::expr {
namespace {

using namespace test;

class KeyConditionTest : public ::testing::Test {
 protected:
  KeyConditionExpression compile(std::string_view text) {
    return KeyConditionExpression::compile(text, names_, values_);
  }
  std::string compile_error(std::string_view text) {
    return error_of([&] { compile(text); });
  }
  // Error of resolving `text` against a table key pk (S) [+ sk (N)].
  std::string table_error(std::string_view text, bool with_range = true) {
    auto k = compile(text);
    return error_of([&] { k.resolve(with_range ? kTable : kHashOnly); });
  }

  AttributeNames names_;
  AttributeValues values_{{":s", S("a")}, {":t", S("b")}, {":n", N("1")},
                          {":m", N("5")}, {":b", B("x")}, {":l", L({})}};
  const KeySchema kTable{{"pk", ScalarType::S}, AttributeDefinition{"sk", ScalarType::N}};
  const KeySchema kHashOnly{{"pk", ScalarType::S}, std::nullopt};
};

TEST_F(KeyConditionTest, PartitionKeyOnly) {
  KeyCondition c = compile("pk = :s").resolve(kTable);
  ASSERT_EQ(c.hash.size(), 1u);
  EXPECT_EQ(c.hash[0].attribute, "pk");
  EXPECT_EQ(c.hash[0].op, KeyOperator::kEq);
  EXPECT_EQ(c.hash[0].value, S("a"));
  EXPECT_TRUE(c.range.empty());
  EXPECT_EQ(compile(":s = pk").resolve(kHashOnly).hash[0].value, S("a"));
}

TEST_F(KeyConditionTest, SortKeyConditions) {
  struct Case {
    std::string text;
    KeyOperator op;
  };
  for (const Case& c : std::vector<Case>{
           {"pk = :s AND sk = :n", KeyOperator::kEq},
           {"pk = :s AND sk < :n", KeyOperator::kLt},
           {"pk = :s AND sk <= :n", KeyOperator::kLe},
           {"pk = :s AND sk > :n", KeyOperator::kGt},
           {"pk = :s AND sk >= :n", KeyOperator::kGe},
           {"pk = :s AND :n > sk", KeyOperator::kLt},  // mirrored
           {"pk = :s AND :n <= sk", KeyOperator::kGe},
           {"sk BETWEEN :n AND :m AND pk = :s", KeyOperator::kBetween},
           {"(pk = :s) AND (sk >= :n)", KeyOperator::kGe},
           {"(pk = :s AND sk = :n)", KeyOperator::kEq},
       }) {
    KeyCondition k = compile(c.text).resolve(kTable);
    ASSERT_EQ(k.range.size(), 1u) << c.text;
    EXPECT_EQ(k.range[0].attribute, "sk");
    EXPECT_EQ(k.range[0].op, c.op) << c.text;
    EXPECT_EQ(k.range[0].value, N("1")) << c.text;
  }
  KeyCondition between = compile("pk = :s AND sk BETWEEN :n AND :m").resolve(kTable);
  EXPECT_EQ(between.range[0].upper, N("5"));
  const KeySchema string_sort{{"pk", ScalarType::S}, AttributeDefinition{"sk", ScalarType::S}};
  KeyCondition prefix = compile("begins_with(sk, :t) AND pk = :s").resolve(string_sort);
  EXPECT_EQ(prefix.range[0].op, KeyOperator::kBeginsWith);
  names_ = {{"#p", "pk"}, {"#s", "sk"}};
  EXPECT_EQ(compile("#p = :s AND #s > :n").resolve(kTable).range[0].attribute, "sk");
}

TEST_F(KeyConditionTest, StructureErrors) {
  auto invalid = [](std::string_view detail) {
    return "Invalid KeyConditionExpression: " + std::string(detail);
  };
  EXPECT_EQ(compile_error("pk = :s OR sk = :n"),
            invalid("Invalid operator used in KeyConditionExpression: OR"));
  EXPECT_EQ(compile_error("NOT pk = :s"),
            invalid("Invalid operator used in KeyConditionExpression: NOT"));
  EXPECT_EQ(compile_error("pk IN (:s, :t)"),
            invalid("Invalid operator used in KeyConditionExpression: IN"));
  EXPECT_EQ(compile_error("pk <> :s"),
            invalid("Invalid operator used in KeyConditionExpression: <>"));
  for (std::string_view f : {"attribute_exists", "attribute_not_exists"}) {
    EXPECT_EQ(compile_error("pk = :s AND " + std::string(f) + "(sk)"),
              invalid("Invalid operator used in KeyConditionExpression: " + std::string(f)));
  }
  EXPECT_EQ(compile_error("pk = :s AND contains(sk, :t)"),
            invalid("Invalid operator used in KeyConditionExpression: contains"));
  EXPECT_EQ(compile_error("pk = :s AND attribute_type(sk, :t)"),
            invalid("Invalid operator used in KeyConditionExpression: attribute_type"));
  EXPECT_EQ(compile_error("pk = :s AND size(sk) > :n"),
            invalid("KeyConditionExpressions cannot contain nested operations"));
  EXPECT_EQ(compile_error("pk.x = :s"),
            invalid("KeyConditionExpressions cannot have conditions on nested attributes"));
  EXPECT_EQ(compile_error("pk = :s AND sk[0] = :n"),
            invalid("KeyConditionExpressions cannot have conditions on nested attributes"));
  EXPECT_EQ(compile_error("pk = sk"),
            invalid("Invalid condition in KeyConditionExpression: Multiple attribute names used "
                    "in one condition"));
  EXPECT_EQ(compile_error("pk = :s AND sk BETWEEN :n AND other_attr"),
            invalid("Invalid condition in KeyConditionExpression: Multiple attribute names used "
                    "in one condition"));
  EXPECT_EQ(compile_error(":s = :t"),
            invalid("Invalid condition in KeyConditionExpression: No key attribute specified"));
  EXPECT_EQ(compile_error("pk = :s AND :n BETWEEN sk AND :m"),
            invalid("Invalid condition in KeyConditionExpression: BETWEEN operator must have the "
                    "key attribute as its first operand"));
  EXPECT_EQ(compile_error("pk = :s AND begins_with(:t, sk)"),
            invalid("Invalid condition in KeyConditionExpression: begins_with operator must have "
                    "the key attribute as its first operand"));
  EXPECT_EQ(compile_error("pk = :s AND pk = :t"),
            invalid("KeyConditionExpressions must only contain one condition per key"));
  names_ = {{"#a", "pk"}};
  EXPECT_EQ(compile_error("#a = :s AND pk > :t"),
            invalid("KeyConditionExpressions must only contain one condition per key"));
}

TEST_F(KeyConditionTest, GeneralErrorsStillApply) {
  EXPECT_EQ(compile_error("pk = :s AND BEGINS_WITH(sk, :t)"),
            "Invalid KeyConditionExpression: Invalid function name; function: BEGINS_WITH");
  EXPECT_EQ(compile_error("pk = :undefined"),
            "Invalid KeyConditionExpression: An expression attribute value used in expression is "
            "not defined; attribute value: :undefined");
  EXPECT_EQ(compile_error("pk = :s AND begins_with(sk, :n)"),
            "Invalid KeyConditionExpression: Incorrect operand type for operator or function; "
            "operator or function: begins_with, operand type: N");
  EXPECT_EQ(compile_error("pk = :s AND sk BETWEEN :m AND :n"),
            "Invalid KeyConditionExpression: The BETWEEN operator requires upper bound to be "
            "greater than or equal to lower bound; lower bound operand: AttributeValue: {N:5}, "
            "upper bound operand: AttributeValue: {N:1}");
  EXPECT_EQ(compile_error("pk = :s AND begins_with(sk)"),
            "Invalid KeyConditionExpression: Incorrect number of operands for operator or "
            "function; operator or function: begins_with, number of operands: 1");
  EXPECT_EQ(compile_error("Date = :s"),
            "Invalid KeyConditionExpression: Attribute name is a reserved keyword; reserved "
            "keyword: Date");
}

TEST_F(KeyConditionTest, TableSchemaErrors) {
  EXPECT_EQ(table_error("sk = :n"), "Query condition missed key schema element: pk");
  EXPECT_EQ(table_error("other_attr = :s"), "Query condition missed key schema element: pk");
  EXPECT_EQ(table_error("pk = :s AND other_attr = :n"),
            "Query condition missed key schema element: sk");
  EXPECT_EQ(table_error("pk = :s AND other_attr = :n", false),
            "The number of query conditions (2) exceeds the number of key attributes defined in "
            "the schema (1)");
  EXPECT_EQ(table_error("pk = :s AND sk = :n AND other_attr = :n"),
            "The number of query conditions (3) exceeds the number of key attributes defined in "
            "the schema (2)");
  EXPECT_EQ(table_error("pk > :s"), "Query key condition not supported");
  EXPECT_EQ(table_error("begins_with(pk, :s)"), "Query key condition not supported");
  EXPECT_EQ(table_error("pk BETWEEN :s AND :t AND sk = :n"), "Query key condition not supported");
  const std::string mismatch =
      "One or more parameter values were invalid: Condition parameter type does not match schema "
      "type";
  EXPECT_EQ(table_error("pk = :n"), mismatch);
  EXPECT_EQ(table_error("pk = :b"), mismatch);
  EXPECT_EQ(table_error("pk = :s AND sk = :s"), mismatch);
  EXPECT_EQ(compile_error("pk = :s AND sk BETWEEN :n AND :l"),
            "Invalid KeyConditionExpression: The BETWEEN operator requires same data type for "
            "lower and upper bounds; lower bound operand: AttributeValue: {N:1}, upper bound "
            "operand: AttributeValue: {L:[]}");
  EXPECT_EQ(table_error("pk = :s AND begins_with(sk, :t)"), mismatch);  // N sort key
  EXPECT_EQ(table_error("pk = :s AND sk = :n"), "<no error>");
}

TEST_F(KeyConditionTest, IndexWithoutSortKeyRefusesAnotherCondition) {
  const std::vector<AttributeDefinition> hash{{"pk", ScalarType::S}};
  const std::vector<AttributeDefinition> two{{"h1", ScalarType::S}, {"h2", ScalarType::N}};
  auto index_error = [&](std::string_view text, const std::vector<AttributeDefinition>& keys) {
    auto k = compile(text);
    return error_of([&] { k.resolve(keys, {}); });
  };
  EXPECT_EQ(index_error("pk = :s AND other_attr = :n", hash), "Query key condition not supported");
  EXPECT_EQ(index_error("pk = :s AND sk = :n", hash), "Query key condition not supported");
  EXPECT_EQ(index_error("h1 = :s AND h2 = :n AND x = :s", two),
            "Query key condition not supported");
  EXPECT_EQ(index_error("pk = :s", hash), "<no error>");
}

// Multi-attribute GSI key h1, h2 | r1, r2, r3, r4: every HASH component needs `=`, the
// constrained RANGE components form a prefix, and only the last one may use a range operator.
class MultiAttributeKeyTest : public KeyConditionTest {
 protected:
  std::string error(std::string_view text) {
    auto k = compile(text);
    return error_of([&] { k.resolve(hash_, range_); });
  }
  KeyCondition resolve(std::string_view text) { return compile(text).resolve(hash_, range_); }

  const std::vector<AttributeDefinition> hash_{{"h1", ScalarType::S}, {"h2", ScalarType::N}};
  const std::vector<AttributeDefinition> range_{
      {"r1", ScalarType::S}, {"r2", ScalarType::S}, {"r3", ScalarType::N}, {"r4", ScalarType::S}};
};

TEST_F(MultiAttributeKeyTest, ValidPrefixesInSchemaOrder) {
  KeyCondition k = resolve("r2 = :t AND h2 = :n AND r1 = :s AND h1 = :s AND r3 > :m");
  ASSERT_EQ(k.hash.size(), 2u);
  EXPECT_EQ(k.hash[0].attribute, "h1");
  EXPECT_EQ(k.hash[1].attribute, "h2");
  ASSERT_EQ(k.range.size(), 3u);
  EXPECT_EQ(k.range[0].attribute, "r1");
  EXPECT_EQ(k.range[1].attribute, "r2");
  EXPECT_EQ(k.range[2].attribute, "r3");
  EXPECT_EQ(k.range[2].op, KeyOperator::kGt);
  EXPECT_TRUE(resolve("h1 = :s AND h2 = :n").range.empty());
  EXPECT_EQ(resolve("h1 = :s AND h2 = :n AND begins_with(r1, :t)").range[0].op,
            KeyOperator::kBeginsWith);
  EXPECT_EQ(
      resolve("h1 = :s AND h2 = :n AND r1 = :s AND r2 = :s AND r3 = :n AND r4 <= :s").range.size(),
      4u);
}

TEST_F(MultiAttributeKeyTest, HashComponentsNeedEquality) {
  EXPECT_EQ(error("h1 = :s"),
            "HASH key attributes h2 must have equality conditions specified in the query");
  EXPECT_EQ(error("h1 = :s AND h2 > :n"),
            "HASH key attributes h2 must have equality conditions specified in the query");
  EXPECT_EQ(error("begins_with(h1, :s) AND h2 = :n"),
            "HASH key attributes h1 must have equality conditions specified in the query");
}

TEST_F(MultiAttributeKeyTest, RangeComponentsFormAnEqualityPrefix) {
  const std::string base = "h1 = :s AND h2 = :n AND ";
  EXPECT_EQ(error(base + "r1 = :s AND r3 = :n"),
            "RANGE key attributes r2 must have equality conditions specified in the query because "
            "a condition is present on key attribute r3");
  EXPECT_EQ(error(base + "r1 = :s AND r2 > :s AND r3 = :n"),
            "RANGE key attributes r2 must have equality conditions specified in the query because "
            "a condition is present on key attribute r3");
  EXPECT_EQ(error(base + "r2 = :s"),
            "RANGE key attributes r1 must have equality conditions specified in the query because "
            "a condition is present on key attribute r2");
  EXPECT_EQ(error(base + "r1 > :s AND r2 > :t"),
            "RANGE key attributes r1 must have equality conditions specified in the query because "
            "a condition is present on key attribute r2");
  EXPECT_EQ(error(base + "r4 = :s"),
            "RANGE key attributes r1 must have equality conditions specified in the query because "
            "a condition is present on key attribute r4");
}

TEST_F(MultiAttributeKeyTest, OtherSchemaErrors) {
  EXPECT_EQ(error("h1 = :s AND h2 = :n AND other_attr = :s"),
            "Query condition missed key schema element: r1");
  EXPECT_EQ(error("h1 = :s AND h2 = :s"),
            "One or more parameter values were invalid: Condition parameter type does not match "
            "schema type");
  EXPECT_EQ(error("h1 = :s AND h2 = :n AND r1 = :s AND r2 = :s AND r3 = :n AND r4 = :s AND "
                  "x = :s"),
            "The number of query conditions (7) exceeds the number of key attributes defined in "
            "the schema (6)");
}

TEST(KeyTerm, Matches) {
  auto term = [](KeyOperator op, AttributeValue v, AttributeValue upper = {}) {
    KeyTerm t;
    t.attribute = "k";
    t.op = op;
    t.value = std::move(v);
    t.upper = std::move(upper);
    return t;
  };
  EXPECT_TRUE(term(KeyOperator::kEq, N("1")).matches(N("1.0")));
  EXPECT_FALSE(term(KeyOperator::kEq, N("1")).matches(S("1")));
  EXPECT_TRUE(term(KeyOperator::kLt, N("10")).matches(N("9")));
  EXPECT_FALSE(term(KeyOperator::kLt, N("10")).matches(N("10")));
  EXPECT_TRUE(term(KeyOperator::kLe, S("b")).matches(S("b")));
  EXPECT_TRUE(term(KeyOperator::kGt, B("\x7f")).matches(B("\x80")));
  EXPECT_TRUE(term(KeyOperator::kGe, S("a")).matches(S("a")));
  EXPECT_FALSE(term(KeyOperator::kGe, S("a")).matches(N("5")));
  EXPECT_TRUE(term(KeyOperator::kBetween, N("1"), N("3")).matches(N("3")));
  EXPECT_FALSE(term(KeyOperator::kBetween, N("1"), N("3")).matches(N("0.5")));
  EXPECT_TRUE(term(KeyOperator::kBeginsWith, S("ab")).matches(S("abc")));
  EXPECT_FALSE(term(KeyOperator::kBeginsWith, S("ab")).matches(S("a")));
  EXPECT_TRUE(term(KeyOperator::kBeginsWith, B("\x01")).matches(B("\x01\x02")));
}

}  // namespace
}  // namespace kumo::expr
