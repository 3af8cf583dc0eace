// ProjectionExpression: nested projections, list compaction, overlap and conflict errors.
#include "expr/projection.h"

#include <gtest/gtest.h>

#include "expr_test_util.h"

namespace kumo::expr {
namespace {

using namespace test;

class ProjectionTest : public ::testing::Test {
 protected:
  Item project(std::string_view text, const Item& item) {
    return ProjectionExpression::compile(text, names_).apply(item);
  }
  std::string error(std::string_view text) {
    return error_of([&] { ProjectionExpression::compile(text, names_); });
  }

  AttributeNames names_;
  const Item item_{
      {"a", S("x")},
      {"n", N("1")},
      {"m", M({{"b", S("y")}, {"c", M({{"d", N("2")}, {"e", N("3")}})}, {"l", L({N("7")})}})},
      {"l", L({S("l0"), M({{"x", S("x1")}, {"y", S("y1")}}), S("l2"), L({S("n0"), S("n1")})})},
      {"a.b", S("dotted")},
  };
};

TEST_F(ProjectionTest, TopLevelAttributes) {
  EXPECT_EQ(project("a, n", item_), (Item{{"a", S("x")}, {"n", N("1")}}));
  EXPECT_EQ(project("n", item_), (Item{{"n", N("1")}}));
  EXPECT_EQ(project("absent", item_), Item{});
  EXPECT_EQ(project("a", Item{}), Item{});
}

TEST_F(ProjectionTest, NestedMapsKeepOnlyRequestedMembers) {
  EXPECT_EQ(project("m.b", item_), (Item{{"m", M({{"b", S("y")}})}}));
  EXPECT_EQ(project("m.c.e, m.b", item_),
            (Item{{"m", M({{"b", S("y")}, {"c", M({{"e", N("3")}})}})}}));
  EXPECT_EQ(project("m.c", item_), (Item{{"m", M({{"c", M({{"d", N("2")}, {"e", N("3")}})}})}}));
  EXPECT_EQ(project("m.l[0]", item_), (Item{{"m", M({{"l", L({N("7")})}})}}));
}

TEST_F(ProjectionTest, ListElementsAreCompactedInIndexOrder) {
  EXPECT_EQ(project("l[2], l[0]", item_), (Item{{"l", L({S("l0"), S("l2")})}}));
  EXPECT_EQ(project("l[1].y", item_), (Item{{"l", L({M({{"y", S("y1")}})})}}));
  EXPECT_EQ(project("l[3][1], l[1].x", item_),
            (Item{{"l", L({M({{"x", S("x1")}}), L({S("n1")})})}}));
  EXPECT_EQ(project("l[9], l[2]", item_), (Item{{"l", L({S("l2")})}}));
}

TEST_F(ProjectionTest, MissingOrMistypedPartsAreLeftOut) {
  EXPECT_EQ(project("m.absent", item_), Item{});
  EXPECT_EQ(project("l[9]", item_), Item{});
  EXPECT_EQ(project("a.b", item_), Item{});     // through a string
  EXPECT_EQ(project("m[0]", item_), Item{});    // index on a map
  EXPECT_EQ(project("l.x", item_), Item{});     // name on a list
  EXPECT_EQ(project("l[0].x", item_), Item{});  // through a string element
  EXPECT_EQ(project("m.absent, a", item_), (Item{{"a", S("x")}}));
}

TEST_F(ProjectionTest, PlaceholdersStandForOneElement) {
  names_ = {{"#ab", "a.b"}, {"#m", "m"}, {"#b", "b"}};
  EXPECT_EQ(project("#ab", item_), (Item{{"a.b", S("dotted")}}));
  EXPECT_EQ(project("#m.#b", item_), (Item{{"m", M({{"b", S("y")}})}}));
}

TEST_F(ProjectionTest, OverlappingPaths) {
  const std::string prefix =
      "Invalid ProjectionExpression: Two document paths overlap with each other; must remove or "
      "rewrite one of these paths; ";
  EXPECT_EQ(error("a, a.b"), prefix + "path one: [a], path two: [a, b]");
  EXPECT_EQ(error("a.b, a"), prefix + "path one: [a, b], path two: [a]");
  EXPECT_EQ(error("a, a"), prefix + "path one: [a], path two: [a]");
  EXPECT_EQ(error("x, l[1], l[1].c"), prefix + "path one: [l, [1]], path two: [l, [1], c]");
  EXPECT_EQ(error("m.c.d, m.c.e, m.c"), prefix + "path one: [m, c, d], path two: [m, c]");
  names_ = {{"#n", "a"}};
  EXPECT_EQ(error("#n, a"), prefix + "path one: [a], path two: [a]");
}

TEST_F(ProjectionTest, ConflictingPaths) {
  EXPECT_EQ(error("a.b, a[3]"),
            "Invalid ProjectionExpression: Two document paths conflict with each other; must "
            "remove or rewrite one of these paths; path one: [a, b], path two: [a, [3]]");
  EXPECT_EQ(error("l[0], l.x"),
            "Invalid ProjectionExpression: Two document paths conflict with each other; must "
            "remove or rewrite one of these paths; path one: [l, [0]], path two: [l, x]");
  EXPECT_EQ(error("a.b, a.c, a[1].d"), error("a.b, a[1].d"));
}

TEST_F(ProjectionTest, NamesMustBeDefinedAndNotReserved) {
  EXPECT_EQ(error("#x"),
            "Invalid ProjectionExpression: An expression attribute name used in the document "
            "path is not defined; attribute name: #x");
  EXPECT_EQ(error("a, Comment"),
            "Invalid ProjectionExpression: Attribute name is a reserved keyword; reserved "
            "keyword: Comment");
}

TEST_F(ProjectionTest, Accessors) {
  names_ = {{"#m", "m"}};
  auto p = ProjectionExpression::compile("#m.b, a, m.c, l[1]", names_);
  EXPECT_EQ(p.attribute_names(), (std::vector<std::string_view>{"m", "a", "l"}));
  ASSERT_EQ(p.paths().size(), 4u);
  EXPECT_EQ(render_path(p.paths()[3]), "[l, [1]]");
}

}  // namespace
}  // namespace kumo::expr
