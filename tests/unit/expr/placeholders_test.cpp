// Unused and undefined placeholders across the expressions of one request,
// and the cache of parsed expressions.
#include "expr/placeholders.h"

#include <gtest/gtest.h>

#include <thread>

#include "expr/cache.h"
#include "expr/condition.h"
#include "expr/projection.h"
#include "expr/update.h"
#include "expr_test_util.h"

namespace kumo::expr {
namespace {

using namespace test;
using Kind = ExpressionKind;

std::string check(std::initializer_list<const ParsedExpression*> expressions,
                  const AttributeNames& names, const AttributeValues& values) {
  return error_of([&] { check_placeholders(expressions, names, values); });
}

TEST(Placeholders, UnusedNames) {
  auto update = parse(Kind::kUpdate, "SET #a = :v");
  const AttributeValues values{{":v", S("x")}};
  EXPECT_EQ(check({update.get()}, {{"#a", "a"}, {"#count", "count"}}, values),
            "Value provided in ExpressionAttributeNames unused in expressions: keys: {#count}");
  EXPECT_EQ(check({update.get()}, {{"#a", "a"}, {"#z", "z"}, {"#b", "b"}}, values),
            "Value provided in ExpressionAttributeNames unused in expressions: keys: {#b, #z}");
  EXPECT_EQ(check({update.get()}, {{"#a", "a"}}, values), "<no error>");
}

TEST(Placeholders, UnusedValuesAfterUnusedNames) {
  auto condition = parse(Kind::kCondition, "#a = :v");
  EXPECT_EQ(check({condition.get()}, {{"#a", "a"}}, {{":v", S("x")}, {":x", S("y")}}),
            "Value provided in ExpressionAttributeValues unused in expressions: keys: {:x}");
  EXPECT_EQ(check({condition.get()}, {{"#a", "a"}, {"#b", "b"}}, {{":v", S("x")}, {":x", S("y")}}),
            "Value provided in ExpressionAttributeNames unused in expressions: keys: {#b}");
}

TEST(Placeholders, UsedByAnyExpressionOfTheRequest) {
  auto update = parse(Kind::kUpdate, "SET a = :v");
  auto condition = parse(Kind::kCondition, "attribute_exists(#c)");
  auto projection = parse(Kind::kProjection, "#p");
  const AttributeNames names{{"#c", "c"}, {"#p", "p"}};
  const AttributeValues values{{":v", S("x")}};
  EXPECT_EQ(check({update.get(), condition.get(), projection.get()}, names, values), "<no error>");
  EXPECT_EQ(check({update.get(), condition.get(), nullptr}, names, values),
            "Value provided in ExpressionAttributeNames unused in expressions: keys: {#p}");
  std::vector<const ParsedExpression*> list{update.get(), condition.get(), projection.get()};
  EXPECT_NO_THROW(check_placeholders(list, names, values));
}

TEST(Placeholders, UndefinedInExpressionOrder) {
  auto update = parse(Kind::kUpdate, "SET a = :v");
  auto condition = parse(Kind::kCondition, "#x = :w");
  EXPECT_EQ(check({update.get(), condition.get()}, {}, {{":w", S("y")}, {":unused", S("z")}}),
            "Invalid UpdateExpression: An expression attribute value used in expression is not "
            "defined; attribute value: :v");
  EXPECT_EQ(check({update.get(), condition.get()}, {}, {{":v", S("y")}, {":w", S("z")}}),
            "Invalid ConditionExpression: An expression attribute name used in the document path "
            "is not defined; attribute name: #x");
}

TEST(Placeholders, KeySyntax) {
  EXPECT_TRUE(is_valid_name_key("#a"));
  EXPECT_TRUE(is_valid_name_key("#A_9"));
  EXPECT_FALSE(is_valid_name_key("#"));
  EXPECT_FALSE(is_valid_name_key("a"));
  EXPECT_FALSE(is_valid_name_key("#a.b"));
  EXPECT_FALSE(is_valid_name_key(":a"));
  EXPECT_TRUE(is_valid_value_key(":v1"));
  EXPECT_FALSE(is_valid_value_key(":"));
  EXPECT_FALSE(is_valid_value_key("#v"));
  EXPECT_FALSE(is_valid_value_key(":v-1"));
}

TEST(Placeholders, CompiledExpressionsExposeTheirParse) {
  const AttributeNames names{{"#a", "a"}, {"#u", "u"}};
  const AttributeValues values{{":v", S("x")}};
  auto update = UpdateExpression::compile("SET #a = :v", names, values);
  auto projection = ProjectionExpression::compile("#a", names);
  EXPECT_EQ(check({&update.parsed(), &projection.parsed()}, names, values),
            "Value provided in ExpressionAttributeNames unused in expressions: keys: {#u}");
}

// --- cache ---

TEST(ExpressionCache, HitReturnsTheSameParse) {
  auto a = parse(Kind::kCondition, "cache_test_a = :v");
  auto b = parse(Kind::kCondition, "cache_test_a = :v");
  EXPECT_EQ(a.get(), b.get());
  auto c = parse(Kind::kFilter, "cache_test_a = :v");  // kind is part of the key
  EXPECT_NE(a.get(), c.get());
  EXPECT_EQ(c->kind, Kind::kFilter);
  // Compiled expressions share the cached parse.
  const AttributeValues values{{":v", S("x")}};
  auto compiled = ConditionExpression::compile(Kind::kCondition, "cache_test_a = :v", {}, values);
  EXPECT_EQ(&compiled.parsed(), a.get());
}

TEST(ExpressionCache, ErrorsAreNotCached) {
  ExpressionCache cache(64);
  EXPECT_THROW(cache.get(Kind::kCondition, "a ="), ApiError);
  EXPECT_EQ(cache.size(), 0u);
  EXPECT_THROW(cache.get(Kind::kCondition, ""), ApiError);
  EXPECT_THROW(cache.get(Kind::kCondition, std::string(5000, ' ')), ApiError);
  EXPECT_EQ(cache.size(), 0u);
}

TEST(ExpressionCache, StaysBounded) {
  ExpressionCache cache(32);
  for (int i = 0; i < 500; ++i) cache.get(Kind::kProjection, "a" + std::to_string(i));
  EXPECT_LE(cache.size(), 32u);
  EXPECT_GT(cache.size(), 0u);
  auto kept = cache.get(Kind::kProjection, "z");
  EXPECT_EQ(cache.get(Kind::kProjection, "z").get(), kept.get());
  cache.clear();
  EXPECT_EQ(cache.size(), 0u);
}

TEST(ExpressionCache, ConcurrentUse) {
  ExpressionCache cache(64);
  std::vector<std::thread> threads;
  std::vector<const ParsedExpression*> seen(8);
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&cache, &seen, t] {
      for (int i = 0; i < 200; ++i) {
        auto p = cache.get(Kind::kUpdate, "SET a" + std::to_string(i % 100) + " = :v");
        ASSERT_EQ(p->actions.size(), 1u);
      }
      seen[t] = cache.get(Kind::kUpdate, "SET common = :v").get();
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_LE(cache.size(), 64u);
  // Every thread ends up with an equivalent parse (the same one once it is cached).
  for (const ParsedExpression* p : seen) EXPECT_EQ(p->text, "SET common = :v");
}

}  // namespace
}  // namespace kumo::expr
