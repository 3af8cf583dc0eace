// Condition and filter expressions: placeholder binding, operand checks and evaluation.
#include "expr/condition.h"

#include <gtest/gtest.h>

#include "expr_test_util.h"

namespace kumo::expr {
namespace {

using namespace test;
using Kind = ExpressionKind;

// Evaluates `text` on `item` with `values` bound to :a, :b, ... in order and `names`.
class ConditionTest : public ::testing::Test {
 protected:
  bool eval(std::string_view text, const Item& item) {
    return ConditionExpression::compile(Kind::kCondition, text, names_, values_).matches(item);
  }
  std::string error(std::string_view text, Kind kind = Kind::kCondition) {
    return error_of([&] { ConditionExpression::compile(kind, text, names_, values_); });
  }
  AttributeNames names_;
  AttributeValues values_;
};

// --- binding and operand checks ---

TEST_F(ConditionTest, UndefinedPlaceholdersInSourceOrder) {
  EXPECT_EQ(error("#x = :v"),
            "Invalid ConditionExpression: An expression attribute name used in the document path "
            "is not defined; attribute name: #x");
  EXPECT_EQ(error(":v = #x", Kind::kFilter),
            "Invalid FilterExpression: An expression attribute value used in expression is not "
            "defined; attribute value: :v");
  names_["#x"] = "x";
  EXPECT_EQ(error("#x = :v"),
            "Invalid ConditionExpression: An expression attribute value used in expression is not "
            "defined; attribute value: :v");
}

TEST_F(ConditionTest, UndefinedComesBeforeOperandCount) {
  EXPECT_EQ(error("attribute_exists(#x, b)"),
            "Invalid ConditionExpression: An expression attribute name used in the document path "
            "is not defined; attribute name: #x");
  EXPECT_EQ(error("attribute_exists(a, b)"),
            "Invalid ConditionExpression: Incorrect number of operands for operator or function; "
            "operator or function: attribute_exists, number of operands: 2");
  values_[":p"] = S("x");
  EXPECT_EQ(error("begins_with(a)"),
            "Invalid ConditionExpression: Incorrect number of operands for operator or function; "
            "operator or function: begins_with, number of operands: 1");
  EXPECT_EQ(error("size(a, b) = :p"),
            "Invalid ConditionExpression: Incorrect number of operands for operator or function; "
            "operator or function: size, number of operands: 2");
  EXPECT_EQ(error("attribute_type(a)"),
            "Invalid ConditionExpression: Incorrect number of operands for operator or function; "
            "operator or function: attribute_type, number of operands: 1");
  EXPECT_EQ(error("contains(a, b, c)"),
            "Invalid ConditionExpression: Incorrect number of operands for operator or function; "
            "operator or function: contains, number of operands: 3");
}

TEST_F(ConditionTest, FunctionsNeedingADocumentPath) {
  values_[":v"] = S("x");
  EXPECT_EQ(error("attribute_exists(:v)"),
            "Invalid ConditionExpression: Operator or function requires a document path; "
            "operator or function: attribute_exists");
  EXPECT_EQ(error("attribute_not_exists(size(a))"),
            "Invalid ConditionExpression: Operator or function requires a document path; "
            "operator or function: attribute_not_exists");
}

TEST_F(ConditionTest, AttributeTypeNamesTheTypeWithAValue) {
  values_ = {{":v", L({})}, {":t", S("L")}, {":s", S("S")}};
  EXPECT_TRUE(eval("attribute_type(:v, :t)", {}));
  EXPECT_FALSE(eval("attribute_type(:v, :s)", {}));
  EXPECT_EQ(error("attribute_type(a, b)"),
            "Invalid ConditionExpression: Operator or function requires an expression attribute "
            "value; operator or function: attribute_type");
  EXPECT_EQ(error("attribute_type(a, b.c[1])", Kind::kFilter),
            "Invalid FilterExpression: Operator or function requires an expression attribute "
            "value; operator or function: attribute_type");
  EXPECT_EQ(error("attribute_type(a, size(b))"),
            "Invalid ConditionExpression: Incorrect operand type for operator or function; "
            "operator or function: attribute_type, operand type: N");
}

TEST_F(ConditionTest, SizeOfSizeIsSizeOfANumber) {
  values_ = {{":n", N("1")}};
  EXPECT_EQ(error("size(size(a)) = :n"),
            "Invalid ConditionExpression: Incorrect operand type for operator or function; "
            "operator or function: size, operand type: N");
  EXPECT_EQ(error("size(a) = :n AND size(size(b)) > :n", Kind::kFilter),
            "Invalid FilterExpression: Incorrect operand type for operator or function; "
            "operator or function: size, operand type: N");
}

TEST_F(ConditionTest, FirstOperandMustBeDistinct) {
  auto distinct = [](std::string_view op, std::string_view path) {
    return "Invalid ConditionExpression: The first operand must be distinct from the remaining "
           "operands for this operator or function; operator: " +
           std::string(op) + ", first operand: " + std::string(path);
  };
  values_[":v"] = S("x");
  EXPECT_EQ(error("a = a"), distinct("=", "[a]"));
  EXPECT_EQ(error("a.b <> a.b"), distinct("<>", "[a, b]"));
  EXPECT_EQ(error("a[1] >= a[1]"), distinct(">=", "[a, [1]]"));
  EXPECT_EQ(error("contains(a.b, a.b)"), distinct("contains", "[a, b]"));
  EXPECT_EQ(error("begins_with(a, a)"), distinct("begins_with", "[a]"));
  EXPECT_EQ(error("a BETWEEN :v AND a"), distinct("BETWEEN", "[a]"));
  EXPECT_EQ(error("a IN (:v, a)"), distinct("IN", "[a]"));
  names_ = {{"#a", "x.y"}, {"#b", "x.y"}};
  EXPECT_EQ(error("#a = #b"), distinct("=", "[x.y]"));
  // Different paths, or a path and a different nested one, are fine.
  EXPECT_EQ(error("#a = x.y"), "<no error>");
  EXPECT_EQ(error("a = a.b"), "<no error>");
  EXPECT_EQ(error("a[1] = a[2]"), "<no error>");
}

TEST_F(ConditionTest, ConstantOperandTypes) {
  values_ = {{":n", N("1")},        {":s", S("a")},   {":b", B("x")},
             {":bool", BOOL(true)}, {":null", NUL()}, {":bad", S("X")},
             {":two", N("2")},      {":l", L({})},    {":ss", SS({"a"})}};
  const std::string prefix = "Invalid ConditionExpression: ";
  EXPECT_EQ(error("begins_with(a, :n)"),
            prefix +
                "Incorrect operand type for operator or function; operator or function: "
                "begins_with, operand type: N");
  EXPECT_EQ(error("begins_with(:l, a)"),
            prefix +
                "Incorrect operand type for operator or function; operator or function: "
                "begins_with, operand type: L");
  EXPECT_EQ(error("begins_with(a, :s) AND begins_with(a, :b)"), "<no error>");
  EXPECT_EQ(error("attribute_type(a, :n)"),
            prefix +
                "Incorrect operand type for operator or function; operator or function: "
                "attribute_type, operand type: N");
  EXPECT_EQ(error("attribute_type(a, :bad)"),
            prefix +
                "Invalid attribute type name found; type: X, valid types: "
                "{B,NULL,SS,BOOL,L,BS,N,NS,S,M}");
  for (std::string_view t : {":n", ":bool", ":null"}) {
    EXPECT_EQ(error("size(" + std::string(t) + ") > :n"),
              prefix +
                  "Incorrect operand type for operator or function; operator or function: "
                  "size, operand type: " +
                  std::string(type_name(values_[std::string(t)].type())));
  }
  EXPECT_EQ(error("size(:s) > :n AND size(:ss) > :n AND size(:l) > :n"), "<no error>");
  EXPECT_EQ(error("a BETWEEN :n AND :s"),
            prefix +
                "The BETWEEN operator requires same data type for lower and upper bounds; "
                "lower bound operand: AttributeValue: {N:1}, upper bound operand: "
                "AttributeValue: {S:a}");
  EXPECT_EQ(error("a BETWEEN :two AND :n"),
            prefix +
                "The BETWEEN operator requires upper bound to be greater than or equal to "
                "lower bound; lower bound operand: AttributeValue: {N:2}, upper bound "
                "operand: AttributeValue: {N:1}");
  EXPECT_EQ(error("a BETWEEN :n AND :n"), "<no error>");
  // Distinct operands are reported before operand types.
  EXPECT_EQ(error("begins_with(a, :n) AND b = b"),
            prefix +
                "The first operand must be distinct from the remaining operands for this "
                "operator or function; operator: =, first operand: [b]");
}

TEST_F(ConditionTest, AttributeNamesAndKeyCheck) {
  names_ = {{"#k", "pk"}};
  values_ = {{":v", S("x")}};
  auto c = ConditionExpression::compile(
      Kind::kFilter, "a.b = :v AND #k = :v OR a[1] = :v AND c = :v", names_, values_);
  EXPECT_EQ(c.attribute_names(), (std::vector<std::string_view>{"a", "pk", "c"}));
  const std::vector<std::string> keys{"sk", "pk"};
  EXPECT_EQ(error_of([&] { c.check_no_key_attributes(keys); }),
            "Filter Expression can only contain non-primary key attributes: Primary key "
            "attribute: pk");
  const std::vector<std::string> nothere{"x"};
  EXPECT_EQ(error_of([&] { c.check_no_key_attributes(nothere); }), "<no error>");
}

// --- evaluation ---

// One sample per type, and a second, greater one for S, N and B (rank 0 < rank 1). All
// samples differ from each nothere.
struct Sample {
  AttributeValue value;
  int rank;
};
std::vector<Sample> samples() {
  return {{S("a"), 0},         {S("b"), 1},         {N("1"), 0},
          {N("2"), 1},         {B("\x01"), 0},      {B("\x02"), 1},
          {BOOL(false), 0},    {BOOL(true), 0},     {NUL(), 0},
          {SS({"a", "b"}), 0}, {NS({"1", "2"}), 0}, {BS({"\x01"}), 0},
          {L({S("a")}), 0},    {L({N("1")}), 0},    {M({{"k", S("a")}}), 0},
          {M({}), 0}};
}

TEST_F(ConditionTest, ComparatorsAcrossEveryTypePairing) {
  const std::vector<Sample> all = samples();
  for (std::size_t i = 0; i < all.size(); ++i) {
    for (std::size_t j = 0; j < all.size(); ++j) {
      const AttributeValue& x = all[i].value;
      const AttributeValue& y = all[j].value;
      values_ = {{":y", y}};
      const Item item{{"x", x}, {"y", y}};
      const bool same = i == j;
      const bool orderable =
          y.type() == AttrType::S || y.type() == AttrType::N || y.type() == AttrType::B;
      const bool ordered = x.type() == y.type() && orderable;
      const int cmp = all[i].rank - all[j].rank;
      const std::string pair = std::string(type_name(x.type())) + "/" +
                               std::string(type_name(y.type())) + " " + std::to_string(i) + "," +
                               std::to_string(j);
      EXPECT_EQ(eval("x = :y", item), same) << pair;
      EXPECT_EQ(eval("x <> :y", item), !same) << pair;
      EXPECT_EQ(eval("x IN (:y)", item), same) << pair;
      // Values from the item that cannot be ordered just compare false.
      EXPECT_EQ(eval("x < y", item), ordered && cmp < 0) << pair;
      EXPECT_EQ(eval("x <= y", item), ordered && cmp <= 0) << pair;
      EXPECT_EQ(eval("x > y", item), ordered && cmp > 0) << pair;
      EXPECT_EQ(eval("x >= y", item), ordered && cmp >= 0) << pair;
      EXPECT_EQ(eval("x BETWEEN y AND y", item), ordered && cmp == 0) << pair;
      if (!orderable) continue;  // a constant that cannot be ordered: UnorderableConstants
      EXPECT_EQ(eval("x < :y", item), ordered && cmp < 0) << pair;
      EXPECT_EQ(eval("x <= :y", item), ordered && cmp <= 0) << pair;
      EXPECT_EQ(eval("x > :y", item), ordered && cmp > 0) << pair;
      EXPECT_EQ(eval("x >= :y", item), ordered && cmp >= 0) << pair;
      EXPECT_EQ(eval("x BETWEEN :y AND :y", item), ordered && cmp == 0) << pair;
    }
  }
}

TEST_F(ConditionTest, UnorderableConstants) {
  auto type_error = [](std::string_view kind, std::string_view op, std::string_view type) {
    return "Invalid " + std::string(kind) +
           ": Incorrect operand type for operator or function; operator or function: " +
           std::string(op) + ", operand type: " + std::string(type);
  };
  for (const Sample& s : samples()) {
    const AttrType t = s.value.type();
    if (t == AttrType::S || t == AttrType::N || t == AttrType::B) continue;
    values_ = {{":v", s.value}, {":n", N("1")}};
    const std::string_view type = type_name(t);
    EXPECT_EQ(error("a < :v"), type_error("ConditionExpression", "<", type));
    EXPECT_EQ(error(":v <= a"), type_error("ConditionExpression", "<=", type));
    EXPECT_EQ(error("size(a) > :v", Kind::kFilter), type_error("FilterExpression", ">", type));
    EXPECT_EQ(error("a >= :v"), type_error("ConditionExpression", ">=", type));
    EXPECT_EQ(error("a BETWEEN :v AND :v"), type_error("ConditionExpression", "BETWEEN", type));
    EXPECT_EQ(error(":v BETWEEN a AND b"), type_error("ConditionExpression", "BETWEEN", type));
    EXPECT_EQ(error("a = :n OR NOT a < :v"), type_error("ConditionExpression", "<", type));
    EXPECT_EQ(error("a = :v AND a <> :v AND a IN (:v)"), "<no error>");
  }
}

TEST_F(ConditionTest, EqualityRules) {
  values_ = {{":n", N("1.0")},
             {":ss", SS({"b", "a"})},
             {":ns", NS({"2", "1.00"})},
             {":l", L({N("1"), S("x")})},
             {":m", M({{"a", N("1")}, {"b", L({BOOL(true)})}})}};
  const Item item{{"n", N("1")},
                  {"ss", SS({"a", "b"})},
                  {"ns", NS({"1", "2"})},
                  {"l", L({N("1.000"), S("x")})},
                  {"lr", L({S("x"), N("1")})},
                  {"m", M({{"b", L({BOOL(true)})}, {"a", N("1")}})}};
  EXPECT_TRUE(eval("n = :n", item));    // numbers compare numerically
  EXPECT_TRUE(eval("ss = :ss", item));  // sets ignore order
  EXPECT_TRUE(eval("ns = :ns", item));
  EXPECT_TRUE(eval("l = :l", item));    // lists element-wise
  EXPECT_FALSE(eval("lr = :l", item));  // ... in order
  EXPECT_TRUE(eval("m = :m", item));    // maps deeply
  EXPECT_TRUE(eval("n = l[0]", item));  // path against path
  EXPECT_FALSE(eval("n <> l[0]", item));
}

TEST_F(ConditionTest, OrderingRules) {
  values_ = {{":nine", N("9")},     {":big", N("1E100")}, {":neg", N("-0.5")}, {":z", S("Z")},
             {":e", S("\xC3\xA9")}, {":b7f", B("\x7f")},  {":pre", S("ab")}};
  const Item item{
      {"ten", N("10")}, {"a", S("a")}, {"b80", B("\x80")}, {"abc", S("abc")}, {"zero", N("0")}};
  EXPECT_TRUE(eval("ten > :nine", item));  // numerically, not as text
  EXPECT_TRUE(eval("ten < :big", item));
  EXPECT_TRUE(eval("zero > :neg", item));
  EXPECT_TRUE(eval("a > :z", item));      // UTF-8 bytes: 'a' (0x61) > 'Z' (0x5A)
  EXPECT_TRUE(eval("a < :e", item));      // bytes unsigned: 0xC3 > 0x61
  EXPECT_TRUE(eval("b80 > :b7f", item));  // binary unsigned
  EXPECT_TRUE(eval("abc > :pre", item));  // a prefix sorts first
}

TEST_F(ConditionTest, MissingOperands) {
  values_ = {{":v", N("1")}, {":w", N("2")}};
  const Item item{{"present", N("1")}};
  EXPECT_FALSE(eval("absent = :v", item));
  EXPECT_TRUE(eval("absent <> :v", item));
  EXPECT_FALSE(eval("absent < :v", item));
  EXPECT_FALSE(eval("absent <= :v", item));
  EXPECT_FALSE(eval("absent > :v", item));
  EXPECT_FALSE(eval("absent >= :v", item));
  EXPECT_FALSE(eval("absent BETWEEN :v AND :w", item));
  EXPECT_FALSE(eval("absent IN (:v, :w)", item));
  EXPECT_FALSE(eval("present BETWEEN absent AND :w", item));
  EXPECT_FALSE(eval("present IN (absent, :w)", item));
  EXPECT_TRUE(eval("NOT absent = :v", item));
  EXPECT_FALSE(eval("present.x = :v", item));  // through a number
  EXPECT_FALSE(eval("present[0] = :v", item));
  EXPECT_TRUE(eval("absent <> nothere", item));
  EXPECT_FALSE(eval("absent = nothere", item));
  EXPECT_FALSE(eval("present = :v", Item{}));  // a missing item is an empty map
}

TEST_F(ConditionTest, BetweenAndIn) {
  values_ = {{":lo", N("1")}, {":hi", N("3")}, {":s", S("2")}, {":two", N("2.0")}};
  EXPECT_TRUE(eval("a BETWEEN :lo AND :hi", Item{{"a", N("1")}}));  // inclusive
  EXPECT_TRUE(eval("a BETWEEN :lo AND :hi", Item{{"a", N("3")}}));
  EXPECT_FALSE(eval("a BETWEEN :lo AND :hi", Item{{"a", N("3.0001")}}));
  EXPECT_FALSE(eval("a BETWEEN :lo AND :hi", Item{{"a", S("2")}}));
  // Bounds read from the item are not checked up front: reversed bounds are just false.
  EXPECT_FALSE(eval("a BETWEEN hi AND lo", Item{{"a", N("2")}, {"lo", N("1")}, {"hi", N("3")}}));
  EXPECT_TRUE(eval("size(a) BETWEEN :lo AND :hi", Item{{"a", S("ab")}}));
  EXPECT_TRUE(eval("a IN (:s, :two)", Item{{"a", N("2")}}));
  EXPECT_TRUE(eval("a IN (:s, :two)", Item{{"a", S("2")}}));
  EXPECT_FALSE(eval("a IN (:lo, :hi)", Item{{"a", N("2")}}));
  EXPECT_TRUE(eval("a IN (:lo, b)", Item{{"a", N("5")}, {"b", N("5")}}));
}

TEST_F(ConditionTest, LogicalOperatorsAndPrecedence) {
  values_ = {{":t", BOOL(true)}};
  const Item t{{"a", BOOL(true)}, {"b", BOOL(true)}, {"c", BOOL(true)}};
  const Item none{};
  auto item = [](bool a, bool b, bool c) {
    Item i;
    if (a) i["a"] = BOOL(true);
    if (b) i["b"] = BOOL(true);
    if (c) i["c"] = BOOL(true);
    return i;
  };
  for (int bits = 0; bits < 8; ++bits) {
    const bool a = bits & 1, b = bits & 2, c = bits & 4;
    const Item it = item(a, b, c);
    EXPECT_EQ(eval("a = :t OR b = :t AND c = :t", it), a || (b && c)) << bits;
    EXPECT_EQ(eval("(a = :t OR b = :t) AND c = :t", it), (a || b) && c) << bits;
    EXPECT_EQ(eval("NOT a = :t AND b = :t", it), !a && b) << bits;
    EXPECT_EQ(eval("NOT (a = :t AND b = :t)", it), !(a && b)) << bits;
    EXPECT_EQ(eval("NOT NOT a = :t", it), a) << bits;
    EXPECT_EQ(eval("a = :t AND b = :t OR c = :t", it), (a && b) || c) << bits;
    EXPECT_EQ(eval("attribute_exists(a) and not attribute_exists(b) or c = :t", it), (a && !b) || c)
        << bits;
  }
}

TEST_F(ConditionTest, AttributeExistsAndNotExists) {
  const Item item{{"n", NUL()}, {"m", M({{"l", L({S("x"), M({{"k", S("v")}})})}})}};
  EXPECT_TRUE(eval("attribute_exists(n)", item));  // a NULL value exists
  EXPECT_FALSE(eval("attribute_not_exists(n)", item));
  EXPECT_TRUE(eval("attribute_exists(m.l[1].k)", item));
  EXPECT_FALSE(eval("attribute_exists(m.l[2])", item));
  EXPECT_FALSE(eval("attribute_exists(m.l.k)", item));
  EXPECT_TRUE(eval("attribute_not_exists(m.x)", item));
  EXPECT_TRUE(eval("attribute_not_exists(absent)", item));
  names_ = {{"#dot", "a.b"}};
  EXPECT_TRUE(eval("attribute_exists(#dot)", Item{{"a.b", N("1")}}));
  EXPECT_FALSE(eval("attribute_exists(a.b)", Item{{"a.b", N("1")}}));
}

TEST_F(ConditionTest, AttributeTypeOnEveryType) {
  for (const Sample& s : samples()) {
    const Item item{{"x", s.value}};
    for (std::string_view t : {"S", "SS", "N", "NS", "B", "BS", "BOOL", "NULL", "L", "M"}) {
      values_ = {{":t", S(std::string(t))}};
      EXPECT_EQ(eval("attribute_type(x, :t)", item), type_name(s.value.type()) == t)
          << type_name(s.value.type()) << " " << t;
    }
  }
  values_ = {{":t", S("S")}};
  EXPECT_FALSE(eval("attribute_type(absent, :t)", Item{}));
}

TEST_F(ConditionTest, BeginsWith) {
  values_ = {{":p", S("ab")}, {":bp", B("\x01\x02")}, {":empty", S("")}};
  EXPECT_TRUE(eval("begins_with(s, :p)", Item{{"s", S("abc")}}));
  EXPECT_TRUE(eval("begins_with(s, :p)", Item{{"s", S("ab")}}));
  EXPECT_FALSE(eval("begins_with(s, :p)", Item{{"s", S("a")}}));
  EXPECT_FALSE(eval("begins_with(s, :p)", Item{{"s", S("xab")}}));
  EXPECT_TRUE(eval("begins_with(s, :empty)", Item{{"s", S("x")}}));
  EXPECT_TRUE(eval("begins_with(b, :bp)", Item{{"b", B("\x01\x02\x03")}}));
  EXPECT_FALSE(eval("begins_with(b, :p)", Item{{"b", B("abc")}}));  // B vs S
  EXPECT_FALSE(eval("begins_with(s, :p)", Item{{"s", SS({"abc"})}}));
  EXPECT_FALSE(eval("begins_with(s, :p)", Item{{"s", L({S("abc")})}}));
  EXPECT_FALSE(eval("begins_with(s, :p)", Item{{"s", N("1")}}));
  EXPECT_FALSE(eval("begins_with(absent, :p)", Item{}));
  EXPECT_TRUE(eval("begins_with(s, t)", Item{{"s", S("abc")}, {"t", S("a")}}));
}

TEST_F(ConditionTest, Contains) {
  values_ = {{":s", S("b")},
             {":n", N("1.0")},
             {":bin", B("\x02")},
             {":m", M({{"k", S("v")}})},
             {":num", N("2")}};
  EXPECT_TRUE(eval("contains(x, :s)", Item{{"x", S("abc")}}));  // substring
  EXPECT_FALSE(eval("contains(x, :s)", Item{{"x", S("xyz")}}));
  EXPECT_TRUE(eval("contains(x, :s)", Item{{"x", SS({"a", "b"})}}));  // set member
  EXPECT_FALSE(eval("contains(x, :s)", Item{{"x", SS({"abc"})}}));
  EXPECT_TRUE(eval("contains(x, :n)", Item{{"x", NS({"1", "3"})}}));  // numeric equality
  EXPECT_FALSE(eval("contains(x, :s)", Item{{"x", NS({"1"})}}));
  EXPECT_TRUE(eval("contains(x, :bin)", Item{{"x", BS({"\x01", "\x02"})}}));
  EXPECT_TRUE(eval("contains(x, :bin)", Item{{"x", B("\x01\x02\x03")}}));  // byte sequence
  EXPECT_FALSE(eval("contains(x, :s)", Item{{"x", B("abc")}}));
  EXPECT_TRUE(eval("contains(x, :s)", Item{{"x", L({N("1"), S("b")})}}));  // list element
  EXPECT_TRUE(eval("contains(x, :m)", Item{{"x", L({M({{"k", S("v")}})})}}));
  EXPECT_FALSE(eval("contains(x, :s)", Item{{"x", L({S("abc")})}}));
  EXPECT_FALSE(eval("contains(x, :s)", Item{{"x", M({{"b", S("b")}})}}));
  EXPECT_FALSE(eval("contains(x, :num)", Item{{"x", N("12")}}));
  EXPECT_FALSE(eval("contains(absent, :s)", Item{}));
  EXPECT_TRUE(eval("contains(x, y)", Item{{"x", SS({"a", "b"})}, {"y", S("a")}}));
}

TEST_F(ConditionTest, SizeOfEveryType) {
  values_ = {{":zero", N("0")}, {":one", N("1")}, {":two", N("2")}, {":three", N("3")}};
  EXPECT_TRUE(eval("size(x) = :three", Item{{"x", S("abc")}}));
  EXPECT_TRUE(eval("size(x) = :two", Item{{"x", S("\xC3\xA9")}}));  // UTF-8 bytes by default
  EXPECT_TRUE(eval("size(x) = :zero", Item{{"x", S("")}}));
  EXPECT_TRUE(eval("size(x) = :two", Item{{"x", B(std::string("\x00\x01", 2))}}));
  EXPECT_TRUE(eval("size(x) = :two", Item{{"x", SS({"a", "bcd"})}}));
  EXPECT_TRUE(eval("size(x) = :three", Item{{"x", NS({"1", "2", "3"})}}));
  EXPECT_TRUE(eval("size(x) = :one", Item{{"x", BS({"ab"})}}));
  EXPECT_TRUE(eval("size(x) = :two", Item{{"x", L({NUL(), L({})})}}));
  EXPECT_TRUE(eval("size(x) = :one", Item{{"x", M({{"k", S("long value")}})}}));
  EXPECT_TRUE(eval("size(x) = :zero", Item{{"x", M({})}}));
  for (const AttributeValue& v : {N("3"), BOOL(true), NUL()}) {
    EXPECT_FALSE(eval("size(x) = :one", Item{{"x", v}}));
    EXPECT_FALSE(eval("size(x) >= :zero", Item{{"x", v}}));
  }
  EXPECT_FALSE(eval("size(absent) = :zero", Item{}));
  EXPECT_TRUE(eval("size(absent) <> :zero", Item{}));
  EXPECT_TRUE(eval("size(x) > size(y)", Item{{"x", S("ab")}, {"y", S("a")}}));
  EXPECT_TRUE(eval(":three > size(x)", Item{{"x", S("ab")}}));
  values_[":s"] = S("abc");
  EXPECT_TRUE(eval("size(:s) = :three", Item{}));
  EXPECT_TRUE(eval("size(x) IN (:one, :two)", Item{{"x", L({N("1")})}}));
}

TEST_F(ConditionTest, FilterAndConditionShareSemantics) {
  values_ = {{":v", S("x")}};
  auto filter = ConditionExpression::compile(Kind::kFilter, "a = :v", names_, values_);
  EXPECT_TRUE(filter.matches(Item{{"a", S("x")}}));
  EXPECT_EQ(filter.parsed().kind, Kind::kFilter);
}

}  // namespace
}  // namespace kumo::expr
