// WHERE conditions evaluated on items: every operator, function and IS type, absent
// operands, the NOT forms, nested paths and list indexes, parameters, and that the common
// conditions allocate nothing.
#include "partiql/evaluate.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <new>
#include <string>
#include <string_view>
#include <vector>

#include "partiql_test_util.h"

namespace {

// Counts the allocations made by this thread while `counting` is set.
thread_local bool counting = false;
thread_local int allocations = 0;

void* allocate(std::size_t size) {
  if (counting) ++allocations;
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}

}  // namespace

void* operator new(std::size_t size) {
  return allocate(size);
}
void* operator new[](std::size_t size) {
  return allocate(size);
}
void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete[](void* p) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::size_t) noexcept {
  std::free(p);
}

namespace kumo::partiql {
namespace {

using test::B;
using test::BOOL;
using test::BS;
using test::L;
using test::M;
using test::N;
using test::NS;
using test::NUL;
using test::S;
using test::SS;

Item sample() {
  return {
      {"pk", S("a")},
      {"n", N("5")},
      {"f", N("1.5")},
      {"s", S("str")},
      {"b", B("\x01\x02\x03")},
      {"t", BOOL(true)},
      {"nay", BOOL(false)},
      {"z", NUL()},
      {"l", L({N("1"), S("x"), L({N("2"), N("3")})})},
      {"m", M({{"k", S("v")}, {"sub", M({{"d", N("7")}})}, {"inner", N("8")}})},
      {"ss", SS({"a", "b"})},
      {"ns", NS({"1", "2"})},
      {"bs", BS({"\x01", "\x02"})},
      {"odd name", S("q")},
  };
}

// Whether the WHERE clause of `text`, which must parse and pass check_statement with
// `parameters`, holds on `item`.
bool holds(std::string_view text, std::vector<AttributeValue> parameters = {},
           const Item& item = sample()) {
  const std::string error = test::check_error(text, parameters);
  EXPECT_EQ(error, "<no error>") << text;
  auto statement = test::parse(text);
  return matches(*statement, statement->where, parameters, item);
}

// The same for `SELECT * FROM t WHERE <condition>`.
bool where_holds(std::string_view condition, std::vector<AttributeValue> parameters = {},
                 const Item& item = sample()) {
  return holds("SELECT * FROM t WHERE " + std::string(condition), std::move(parameters), item);
}

TEST(PartiqlEvaluate, Equality) {
  EXPECT_TRUE(where_holds("pk = 'a'"));
  EXPECT_FALSE(where_holds("pk = 'b'"));
  EXPECT_TRUE(where_holds("'a' = pk"));
  EXPECT_TRUE(where_holds("n = 5"));
  EXPECT_TRUE(where_holds("n = 5.0"));
  EXPECT_TRUE(where_holds("n = 5e0"));
  EXPECT_TRUE(where_holds("f = 1.50"));
  EXPECT_TRUE(where_holds("pk <> 'b'"));
  EXPECT_TRUE(where_holds("pk != 'b'"));
  EXPECT_FALSE(where_holds("pk <> 'a'"));
  EXPECT_TRUE(where_holds("t = true"));
  EXPECT_TRUE(where_holds("nay = false"));
  EXPECT_TRUE(where_holds("z = null"));
  EXPECT_FALSE(where_holds("z <> null"));
  EXPECT_TRUE(where_holds("n = f OR n <> f"));
  EXPECT_FALSE(where_holds("n = f"));
  EXPECT_TRUE(where_holds("b = ?", {B("\x01\x02\x03")}));
  EXPECT_FALSE(where_holds("b = ?", {B("\x01\x02")}));
}

TEST(PartiqlEvaluate, NoCoercion) {
  EXPECT_FALSE(where_holds("n = '5'"));
  EXPECT_TRUE(where_holds("n <> '5'"));
  EXPECT_FALSE(where_holds("s = ?", {B("str")}));
  EXPECT_FALSE(where_holds("t = 1"));
  EXPECT_TRUE(where_holds("t <> 1"));
  EXPECT_FALSE(where_holds("z = false"));
  EXPECT_FALSE(where_holds("ss = ['a', 'b']"));
  EXPECT_FALSE(where_holds("ns = <<'1', '2'>>"));
  // An ordering between different types matches nothing, either way round.
  EXPECT_FALSE(where_holds("n < 'z'"));
  EXPECT_FALSE(where_holds("n >= 'z'"));
  EXPECT_FALSE(where_holds("s > 1"));
  EXPECT_FALSE(where_holds("s <= 1"));
  EXPECT_FALSE(where_holds("b < 'z'"));
}

TEST(PartiqlEvaluate, Collections) {
  // Sets are unordered, lists ordered, maps compared by content.
  EXPECT_TRUE(where_holds("ss = <<'b', 'a'>>"));
  EXPECT_TRUE(where_holds("ss = ?", {SS({"b", "a"})}));
  EXPECT_FALSE(where_holds("ss = <<'a'>>"));
  EXPECT_TRUE(where_holds("ns = <<2, 1.0>>"));
  EXPECT_TRUE(where_holds("bs = ?", {BS({"\x02", "\x01"})}));
  EXPECT_TRUE(where_holds("l = [1, 'x', [2, 3]]"));
  EXPECT_FALSE(where_holds("l = ['x', 1, [2, 3]]"));
  EXPECT_TRUE(where_holds("l[2] = [2, 3]"));
  EXPECT_TRUE(where_holds("m = {'inner': 8, 'sub': {'d': 7}, 'k': 'v'}"));
  EXPECT_FALSE(where_holds("m = {'k': 'v'}"));
  EXPECT_TRUE(where_holds("m <> {'k': 'v'}"));
  EXPECT_TRUE(where_holds("m.sub = ?", {M({{"d", N("7.0")}})}));
}

TEST(PartiqlEvaluate, Ordering) {
  EXPECT_TRUE(where_holds("n < 6"));
  EXPECT_FALSE(where_holds("n < 5"));
  EXPECT_TRUE(where_holds("n <= 5"));
  EXPECT_TRUE(where_holds("n > 4.99"));
  EXPECT_FALSE(where_holds("n > 5"));
  EXPECT_TRUE(where_holds("n >= 5"));
  EXPECT_TRUE(where_holds("f < n"));
  EXPECT_TRUE(where_holds("n > -10"));
  EXPECT_TRUE(where_holds("s > 'st'"));
  EXPECT_TRUE(where_holds("s < 'su'"));
  EXPECT_TRUE(where_holds("'a' < s"));
  // Strings and binaries compare as unsigned bytes.
  EXPECT_TRUE(where_holds("s < ?", {S("\xc3\xa9")}));
  EXPECT_TRUE(where_holds("b > ?", {B("\x01\x02")}));
  EXPECT_TRUE(where_holds("b < ?", {B("\xff")}));
  EXPECT_FALSE(where_holds("b >= ?", {B("\x80")}));
  // A stored value of a type without order compares false.
  EXPECT_FALSE(where_holds("t > 'a'"));
  EXPECT_FALSE(where_holds("l < 1"));
  EXPECT_FALSE(where_holds("ss >= 'a'"));
}

TEST(PartiqlEvaluate, AbsentOperands) {
  EXPECT_FALSE(where_holds("nope = 1"));
  EXPECT_FALSE(where_holds("1 = nope"));
  EXPECT_EQ(where_holds("nope <> 1"), kAbsentIsNotEqual);
  EXPECT_EQ(where_holds("nope != 'x'"), kAbsentIsNotEqual);
  EXPECT_FALSE(where_holds("nope = nada"));
  EXPECT_FALSE(where_holds("nope < 1"));
  EXPECT_FALSE(where_holds("nope >= 'a'"));
  EXPECT_FALSE(where_holds("n = nope"));
  EXPECT_FALSE(where_holds("nope = null"));
  // NOT negates the comparison's result.
  EXPECT_TRUE(where_holds("NOT nope = 1"));
  EXPECT_TRUE(where_holds("NOT (nope = 1)"));
  EXPECT_TRUE(where_holds("NOT nope < 1"));
  EXPECT_EQ(where_holds("NOT nope <> 1"), !kAbsentIsNotEqual);
  // Comparisons with what a path crosses are absent too.
  EXPECT_FALSE(where_holds("s.x = 1"));
  EXPECT_FALSE(where_holds("m[0] = 'v'"));
  EXPECT_FALSE(where_holds("l.a = 1"));
  EXPECT_FALSE(where_holds("l[3] = 1"));
  EXPECT_TRUE(where_holds("NOT l[3] = 1"));
}

TEST(PartiqlEvaluate, AbsentItem) {
  const Item empty;
  EXPECT_FALSE(where_holds("pk = 'a'", {}, empty));
  EXPECT_TRUE(where_holds("attribute_not_exists(pk)", {}, empty));
  EXPECT_FALSE(where_holds("attribute_exists(pk)", {}, empty));
  EXPECT_TRUE(where_holds("pk IS MISSING", {}, empty));
  EXPECT_TRUE(where_holds("NOT pk = 'a'", {}, empty));
}

TEST(PartiqlEvaluate, Logic) {
  EXPECT_TRUE(where_holds("pk = 'a' AND n = 5"));
  EXPECT_FALSE(where_holds("pk = 'a' AND n = 6"));
  EXPECT_FALSE(where_holds("pk = 'b' AND n = 5"));
  EXPECT_TRUE(where_holds("pk = 'b' OR n = 5"));
  EXPECT_FALSE(where_holds("pk = 'b' OR n = 6"));
  EXPECT_TRUE(where_holds("NOT pk = 'b'"));
  EXPECT_FALSE(where_holds("NOT NOT pk = 'b'"));
  // AND binds tighter than OR; NOT looser than comparisons.
  EXPECT_TRUE(where_holds("n = 5 OR n = 6 AND s = 'x'"));
  EXPECT_FALSE(where_holds("(n = 5 OR n = 6) AND s = 'x'"));
  EXPECT_TRUE(where_holds("NOT n = 6 AND s = 'str'"));
  EXPECT_FALSE(where_holds("NOT (n = 5 AND s = 'str')"));
  EXPECT_TRUE(where_holds("((pk = 'a'))"));
}

TEST(PartiqlEvaluate, BooleanValues) {
  EXPECT_TRUE(where_holds("TRUE"));
  EXPECT_FALSE(where_holds("FALSE"));
  EXPECT_TRUE(where_holds("?", {BOOL(true)}));
  EXPECT_FALSE(where_holds("?", {BOOL(false)}));
  // A path holds when it is the BOOL true.
  EXPECT_TRUE(where_holds("t"));
  EXPECT_FALSE(where_holds("nay"));
  EXPECT_FALSE(where_holds("n"));
  EXPECT_FALSE(where_holds("nope"));
  EXPECT_TRUE(where_holds("NOT nay"));
  EXPECT_TRUE(where_holds("t AND pk = 'a'"));
}

TEST(PartiqlEvaluate, ConditionsAreValues) {
  EXPECT_TRUE(where_holds("attribute_exists(n) = true"));
  EXPECT_TRUE(where_holds("attribute_exists(nope) = false"));
  EXPECT_FALSE(where_holds("attribute_exists(nope) = true"));
  EXPECT_TRUE(where_holds("attribute_exists(nope) <> true"));
  EXPECT_TRUE(where_holds("(n BETWEEN 0 AND 5) = true"));
  EXPECT_TRUE(where_holds("(n BETWEEN 6 AND 7) = false"));
  EXPECT_TRUE(where_holds("attribute_exists(n) IN [true, false]"));
  EXPECT_TRUE(where_holds("attribute_exists(nope) IN (false)"));
  EXPECT_FALSE(where_holds("attribute_exists(nope) IN [true]"));
  EXPECT_TRUE(where_holds("attribute_exists(n) = attribute_exists(s)"));
  EXPECT_FALSE(where_holds("attribute_exists(n) = attribute_exists(nope)"));
  EXPECT_TRUE(where_holds("attribute_exists(n) = t"));
  EXPECT_TRUE(where_holds("attribute_exists(nope) = nay"));
  EXPECT_FALSE(where_holds("attribute_exists(n) = nay"));
  EXPECT_FALSE(where_holds("attribute_exists(n) = 1"));
  EXPECT_TRUE(where_holds("attribute_exists(n) <> 1"));
  EXPECT_TRUE(where_holds("attribute_exists(n) = ?", {BOOL(true)}));
  // A comparison on an absent attribute is the value false, not absent.
  EXPECT_TRUE(where_holds("(nope = 1) = false"));
  EXPECT_TRUE(where_holds("(pk = 'a') = (n = 5)"));
  EXPECT_TRUE(where_holds("(pk = 'a' AND n = 6) = false"));
  EXPECT_TRUE(where_holds("(pk IS MISSING) = false"));
  EXPECT_TRUE(where_holds("(pk IN ['a']) = true"));
  EXPECT_TRUE(where_holds("contains(nope, 'z') = false"));
  EXPECT_TRUE(where_holds("(NOT pk = 'a') = false"));
}

TEST(PartiqlEvaluate, Between) {
  EXPECT_TRUE(where_holds("n BETWEEN 1 AND 10"));
  EXPECT_TRUE(where_holds("n BETWEEN 5 AND 5"));
  EXPECT_TRUE(where_holds("n BETWEEN 5.0 AND 6"));
  EXPECT_FALSE(where_holds("n BETWEEN 6 AND 10"));
  EXPECT_FALSE(where_holds("n BETWEEN 1 AND 4"));
  EXPECT_FALSE(where_holds("n BETWEEN 10 AND 1"));
  EXPECT_TRUE(where_holds("s BETWEEN 'a' AND 'z'"));
  EXPECT_TRUE(where_holds("b BETWEEN ? AND ?", {B("\x01"), B("\x02")}));
  EXPECT_TRUE(where_holds("n BETWEEN ? AND ?", {N("4"), N("6")}));
  EXPECT_TRUE(where_holds("n BETWEEN f AND 5"));
  EXPECT_FALSE(where_holds("n BETWEEN 'a' AND 'z'"));
  EXPECT_FALSE(where_holds("n BETWEEN 1 AND 'z'"));
  EXPECT_FALSE(where_holds("nope BETWEEN 1 AND 10"));
  EXPECT_FALSE(where_holds("n BETWEEN nope AND 10"));
  // NOT BETWEEN, infix or prefix, negates BETWEEN.
  EXPECT_TRUE(where_holds("n NOT BETWEEN 6 AND 10"));
  EXPECT_FALSE(where_holds("n NOT BETWEEN 1 AND 10"));
  EXPECT_TRUE(where_holds("NOT n BETWEEN 6 AND 10"));
  EXPECT_FALSE(where_holds("NOT n BETWEEN 5 AND 5"));
  EXPECT_TRUE(where_holds("nope NOT BETWEEN 1 AND 10"));
  EXPECT_TRUE(where_holds("NOT nope BETWEEN 1 AND 10"));
}

TEST(PartiqlEvaluate, In) {
  EXPECT_TRUE(where_holds("pk IN ['a', 'b']"));
  EXPECT_TRUE(where_holds("pk IN ('b', 'a')"));
  EXPECT_FALSE(where_holds("pk IN ['b', 'c']"));
  EXPECT_TRUE(where_holds("n IN [1, 5.0]"));
  EXPECT_FALSE(where_holds("n IN ['5']"));
  EXPECT_TRUE(where_holds("pk IN [?, ?]", {S("x"), S("a")}));
  EXPECT_FALSE(where_holds("pk IN [?]", {S("x")}));
  EXPECT_TRUE(where_holds("ss IN [<<'b', 'a'>>]"));
  EXPECT_TRUE(where_holds("l[2] IN [[2, 3]]"));
  EXPECT_TRUE(where_holds("n IN [nope, m.sub.d, 5]"));
  EXPECT_FALSE(where_holds("n IN [nope]"));
  EXPECT_FALSE(where_holds("nope IN [1, 'a']"));
  EXPECT_TRUE(where_holds("'a' IN [s, pk]"));
  // NOT IN, infix or prefix, negates IN.
  EXPECT_TRUE(where_holds("pk NOT IN ['b', 'c']"));
  EXPECT_FALSE(where_holds("pk NOT IN ['b', 'a']"));
  EXPECT_TRUE(where_holds("NOT pk IN ['b', 'c']"));
  EXPECT_FALSE(where_holds("NOT pk IN ['a']"));
  EXPECT_TRUE(where_holds("nope NOT IN [1]"));
  EXPECT_TRUE(where_holds("NOT nope IN [1]"));
}

TEST(PartiqlEvaluate, IsMissingAndNull) {
  EXPECT_TRUE(where_holds("nope IS MISSING"));
  EXPECT_FALSE(where_holds("n IS MISSING"));
  EXPECT_FALSE(where_holds("z IS MISSING"));
  EXPECT_TRUE(where_holds("n IS NOT MISSING"));
  EXPECT_TRUE(where_holds("z IS NOT MISSING"));
  EXPECT_FALSE(where_holds("nope IS NOT MISSING"));
  EXPECT_TRUE(where_holds("m.sub.d IS NOT MISSING"));
  EXPECT_TRUE(where_holds("l[5] IS MISSING"));
  EXPECT_TRUE(where_holds("MISSING IS MISSING"));
  EXPECT_TRUE(where_holds("z IS NULL"));
  EXPECT_FALSE(where_holds("n IS NULL"));
  EXPECT_FALSE(where_holds("nope IS NULL"));
  EXPECT_TRUE(where_holds("nope IS NOT NULL"));
  EXPECT_TRUE(where_holds("n IS NOT NULL"));
  EXPECT_FALSE(where_holds("z IS NOT NULL"));
  EXPECT_TRUE(where_holds("NULL IS NULL"));
  EXPECT_TRUE(where_holds("NOT z IS NOT NULL"));
}

TEST(PartiqlEvaluate, IsType) {
  struct Case {
    std::string_view type;
    std::vector<std::string_view> attributes;  // the sample's attributes of that type
  };
  const Case cases[] = {
      {"BOOLEAN", {"t", "nay"}}, {"BOOL", {"t", "nay"}},  {"STRING", {"pk", "s", "l[1]"}},
      {"NUMERIC", {"n", "f"}},   {"BLOB", {"b"}},         {"STRUCT", {"m", "m.sub"}},
      {"TUPLE", {"m", "m.sub"}}, {"LIST", {"l", "l[2]"}},
  };
  const std::string_view all[] = {"pk",   "n",    "f", "s",     "b",  "t",  "nay", "z",   "l",
                                  "l[1]", "l[2]", "m", "m.sub", "ss", "ns", "bs",  "nope"};
  for (const Case& c : cases) {
    for (std::string_view a : all) {
      const bool is = std::ranges::find(c.attributes, a) != c.attributes.end();
      const std::string test = std::string(a) + " IS " + std::string(c.type);
      EXPECT_EQ(where_holds(test), is) << test;
      const std::string negated = std::string(a) + " IS NOT " + std::string(c.type);
      EXPECT_EQ(where_holds(negated), !is) << negated;
    }
  }
  EXPECT_TRUE(where_holds("'x' IS STRING"));
  EXPECT_TRUE(where_holds("1 IS NUMERIC"));
  EXPECT_TRUE(where_holds("[1] IS LIST"));
  EXPECT_FALSE(where_holds("<<1>> IS LIST"));
}

TEST(PartiqlEvaluate, AttributeExists) {
  EXPECT_TRUE(where_holds("attribute_exists(pk)"));
  EXPECT_TRUE(where_holds("attribute_exists(z)"));
  EXPECT_FALSE(where_holds("attribute_exists(nope)"));
  EXPECT_TRUE(where_holds("attribute_exists(m.sub.d)"));
  EXPECT_TRUE(where_holds("attribute_exists(m.\"inner\")"));
  EXPECT_FALSE(where_holds("attribute_exists(m.sub.e)"));
  EXPECT_TRUE(where_holds("attribute_exists(l[2][1])"));
  EXPECT_FALSE(where_holds("attribute_exists(l[2][2])"));
  EXPECT_TRUE(where_holds("attribute_exists(\"odd name\")"));
  EXPECT_TRUE(where_holds("ATTRIBUTE_EXISTS(\"ss\")"));
  EXPECT_TRUE(where_holds("attribute_not_exists(nope)"));
  EXPECT_FALSE(where_holds("attribute_not_exists(pk)"));
  EXPECT_TRUE(where_holds("attribute_not_exists(l[3])"));
  EXPECT_TRUE(where_holds("NOT attribute_exists(nope)"));
}

TEST(PartiqlEvaluate, AttributeType) {
  const std::pair<std::string_view, std::string_view> typed[] = {
      {"s", "S"}, {"n", "N"},   {"b", "B"},   {"t", "BOOL"}, {"z", "NULL"}, {"l", "L"},
      {"m", "M"}, {"ss", "SS"}, {"ns", "NS"}, {"bs", "BS"},  {"l[0]", "N"}, {"m.k", "S"},
  };
  for (const auto& [path, type] : typed) {
    EXPECT_TRUE(
        where_holds("attribute_type(" + std::string(path) + ", '" + std::string(type) + "')"))
        << path;
    EXPECT_TRUE(where_holds("attribute_type(" + std::string(path) + ", ?)", {S(std::string(type))}))
        << path;
    const std::string_view other = type == "S" ? "N" : "S";
    EXPECT_FALSE(
        where_holds("attribute_type(" + std::string(path) + ", '" + std::string(other) + "')"))
        << path;
  }
  EXPECT_FALSE(where_holds("attribute_type(nope, 'NULL')"));
  EXPECT_TRUE(where_holds("NOT attribute_type(nope, 'S')"));
}

TEST(PartiqlEvaluate, BeginsWith) {
  EXPECT_TRUE(where_holds("begins_with(s, 'st')"));
  EXPECT_TRUE(where_holds("begins_with(s, '')"));
  EXPECT_TRUE(where_holds("begins_with(s, 'str')"));
  EXPECT_FALSE(where_holds("begins_with(s, 'stra')"));
  EXPECT_FALSE(where_holds("begins_with(s, 'tr')"));
  EXPECT_TRUE(where_holds("BEGINS_WITH(m.k, ?)", {S("v")}));
  EXPECT_TRUE(where_holds("begins_with(b, ?)", {B("\x01\x02")}));
  EXPECT_FALSE(where_holds("begins_with(b, ?)", {B("\x02")}));
  // Both S or both B; nothing else has a prefix.
  EXPECT_FALSE(where_holds("begins_with(b, ?)", {S("\x01")}));
  EXPECT_FALSE(where_holds("begins_with(s, ?)", {B("s")}));
  EXPECT_FALSE(where_holds("begins_with(n, '5')"));
  EXPECT_FALSE(where_holds("begins_with(l, 1)"));
  EXPECT_FALSE(where_holds("begins_with(ss, 'a')"));
  EXPECT_FALSE(where_holds("begins_with(nope, 'a')"));
  EXPECT_TRUE(where_holds("NOT begins_with(nope, 'a')"));
  EXPECT_FALSE(where_holds("begins_with(s, nope)"));
  EXPECT_TRUE(where_holds("begins_with(s, pk) = false"));
}

TEST(PartiqlEvaluate, Contains) {
  EXPECT_TRUE(where_holds("contains(s, 'tr')"));
  EXPECT_FALSE(where_holds("contains(s, 'rs')"));
  EXPECT_TRUE(where_holds("contains(b, ?)", {B("\x02\x03")}));
  EXPECT_FALSE(where_holds("contains(b, ?)", {S("\x02")}));
  EXPECT_TRUE(where_holds("contains(ss, 'b')"));
  EXPECT_FALSE(where_holds("contains(ss, 'c')"));
  EXPECT_TRUE(where_holds("contains(ns, 2.0)"));
  EXPECT_FALSE(where_holds("contains(ns, '2')"));
  EXPECT_TRUE(where_holds("contains(bs, ?)", {B("\x02")}));
  EXPECT_FALSE(where_holds("contains(bs, ?)", {S("\x02")}));
  EXPECT_TRUE(where_holds("contains(l, 'x')"));
  EXPECT_TRUE(where_holds("contains(l, 1)"));
  EXPECT_TRUE(where_holds("contains(l, [2, 3])"));
  EXPECT_FALSE(where_holds("contains(l, 2)"));
  EXPECT_FALSE(where_holds("contains(m, 'k')"));
  EXPECT_FALSE(where_holds("contains(n, 5)"));
  EXPECT_TRUE(where_holds("contains(l[2], 3)"));
  EXPECT_TRUE(where_holds("contains(ss, pk)"));
  EXPECT_FALSE(where_holds("contains(nope, 'z')"));
  EXPECT_FALSE(where_holds("contains(s, nope)"));
  EXPECT_TRUE(where_holds("NOT contains(nope, 'z')"));
}

TEST(PartiqlEvaluate, Size) {
  EXPECT_TRUE(where_holds("size(s) = 3"));
  EXPECT_TRUE(where_holds("size(b) = 3"));
  EXPECT_TRUE(where_holds("size(ss) = 2"));
  EXPECT_TRUE(where_holds("size(ns) = 2"));
  EXPECT_TRUE(where_holds("size(bs) = 2"));
  EXPECT_TRUE(where_holds("size(l) = 3"));
  EXPECT_TRUE(where_holds("size(l[2]) = 2"));
  EXPECT_TRUE(where_holds("size(m) = 3"));
  EXPECT_TRUE(where_holds("size(m.sub) = 1"));
  EXPECT_TRUE(where_holds("size(\"odd name\") = 1.0"));
  EXPECT_TRUE(where_holds("size(l) > 2"));
  EXPECT_TRUE(where_holds("size(s) BETWEEN 1 AND 3"));
  EXPECT_TRUE(where_holds("size(s) IN [2, 3]"));
  EXPECT_TRUE(where_holds("size(s) = size(l)"));
  EXPECT_TRUE(where_holds("n > size(s)"));
  EXPECT_TRUE(where_holds("size(s) = ?", {N("3")}));
  EXPECT_FALSE(where_holds("size(s) = '3'"));
  // Numbers, BOOLs, NULLs and absent attributes have no size.
  EXPECT_FALSE(where_holds("size(n) = 1"));
  EXPECT_FALSE(where_holds("size(n) >= 0"));
  EXPECT_FALSE(where_holds("size(t) = 1"));
  EXPECT_FALSE(where_holds("size(z) = 0"));
  EXPECT_FALSE(where_holds("size(nope) = 0"));
  EXPECT_FALSE(where_holds("size(nope) <> 0"));
  EXPECT_TRUE(where_holds("NOT size(nope) = 0"));
}

TEST(PartiqlEvaluate, NestedPaths) {
  EXPECT_TRUE(where_holds("m.k = 'v'"));
  EXPECT_TRUE(where_holds("m.sub.d = 7"));
  EXPECT_TRUE(where_holds("m.\"inner\" = 8"));
  EXPECT_TRUE(where_holds("\"m\".\"k\" = 'v'"));
  EXPECT_TRUE(where_holds("l[0] = 1"));
  EXPECT_TRUE(where_holds("l[1] = 'x'"));
  EXPECT_TRUE(where_holds("l[2][0] = 2"));
  EXPECT_TRUE(where_holds("l[2][1] > l[2][0]"));
  EXPECT_TRUE(where_holds("l[-0] = 1"));
  EXPECT_TRUE(where_holds("\"odd name\" = 'q'"));
  EXPECT_FALSE(where_holds("l[2][2] = 3"));
  EXPECT_FALSE(where_holds("l[2147483647] = 1"));
  EXPECT_FALSE(where_holds("m.K = 'v'"));
  EXPECT_FALSE(where_holds("M.k = 'v'"));
  EXPECT_FALSE(where_holds("m.k[0] = 'v'"));
  Item deep{{"a", M({{"b", L({M({{"c", L({S("deep")})}})})}})}};
  EXPECT_TRUE(where_holds("a.b[0].c[0] = 'deep'", {}, deep));
  EXPECT_TRUE(where_holds("begins_with(a.b[0].c[0], 'de')", {}, deep));
  EXPECT_FALSE(where_holds("a.b[0].c[1] = 'deep'", {}, deep));
}

TEST(PartiqlEvaluate, Parameters) {
  EXPECT_TRUE(where_holds("pk = ?", {S("a")}));
  EXPECT_FALSE(where_holds("pk = ?", {S("b")}));
  EXPECT_FALSE(where_holds("pk = ?", {N("1")}));
  EXPECT_TRUE(where_holds("n > ? AND s = ?", {N("4"), S("str")}));
  EXPECT_FALSE(where_holds("n > ? AND s = ?", {N("5"), S("str")}));
  EXPECT_TRUE(where_holds("? = ?", {N("1"), N("1.0")}));
  EXPECT_TRUE(where_holds("z = ?", {NUL()}));
  EXPECT_TRUE(where_holds("l = ?", {L({N("1"), S("x"), L({N("2"), N("3")})})}));
  EXPECT_TRUE(where_holds("contains(ss, ?) AND begins_with(s, ?)", {S("a"), S("s")}));
}

TEST(PartiqlEvaluate, WritesTakeTheirWhere) {
  EXPECT_TRUE(holds("UPDATE t SET x = 1 WHERE pk = 'a' AND n > 3"));
  EXPECT_FALSE(holds("UPDATE t SET x = 1 WHERE pk = 'a' AND n > 5"));
  EXPECT_TRUE(holds("UPDATE t SET x = ? WHERE pk = ? AND s = ?", {N("1"), S("a"), S("str")}));
  EXPECT_TRUE(holds("FROM t WHERE pk = ? SET x = ?", {S("a"), N("1")}));
  EXPECT_TRUE(holds("DELETE FROM t WHERE pk = 'a' AND attribute_exists(m.sub)"));
  EXPECT_FALSE(holds("DELETE FROM t WHERE pk = 'a' AND attribute_not_exists(pk)"));
  EXPECT_TRUE(holds("EXISTS(SELECT * FROM t WHERE pk = 'a' AND l[1] = 'x')"));
}

// Shapes check_statement refuses, and calls outside its contract, answer false.
TEST(PartiqlEvaluate, RefusedShapesAreFalse) {
  const Item item = sample();
  auto unchecked = [&](std::string_view text, std::vector<AttributeValue> parameters = {}) {
    auto statement = test::parse(text);
    return matches(*statement, statement->where, parameters, item);
  };
  EXPECT_FALSE(unchecked("SELECT * FROM t WHERE pk = ?"));
  EXPECT_FALSE(unchecked("SELECT * FROM t WHERE pk IN ?", {S("a")}));
  EXPECT_FALSE(unchecked("SELECT * FROM t WHERE pk IN ['a'] AND pk IN []"));
  EXPECT_FALSE(unchecked("SELECT * FROM t WHERE pk LIKE 'a'"));
  EXPECT_FALSE(unchecked("SELECT * FROM t WHERE n + 1 = 6"));
  EXPECT_FALSE(unchecked("SELECT * FROM t WHERE -n = -5"));
  EXPECT_FALSE(unchecked("SELECT * FROM t WHERE size(s)"));
  EXPECT_FALSE(unchecked("SELECT * FROM t WHERE size(s, l) = 3"));
  EXPECT_FALSE(unchecked("SELECT * FROM t WHERE attribute_exists()"));
  EXPECT_FALSE(unchecked("SELECT * FROM t WHERE contains(s)"));
  EXPECT_FALSE(unchecked("SELECT * FROM t WHERE nofunc(s)"));
  EXPECT_FALSE(unchecked("SELECT * FROM t WHERE count(*) = 1"));
  EXPECT_FALSE(unchecked("SELECT * FROM t WHERE n = MISSING"));
  EXPECT_FALSE(unchecked("SELECT * FROM t WHERE (n, s) = 1"));
  EXPECT_FALSE(unchecked("SELECT * FROM t WHERE n IS INT4"));
  EXPECT_FALSE(unchecked("SELECT * FROM t WHERE attribute_type(s, 'X')"));
  EXPECT_FALSE(unchecked("SELECT * FROM t WHERE attribute_type(s, 1)"));
  EXPECT_FALSE(unchecked("SELECT * FROM t WHERE 1"));
  auto statement = test::parse("SELECT * FROM t WHERE pk = 'a'");
  EXPECT_FALSE(matches(*statement, kNoNode, {}, item));
  EXPECT_FALSE(matches(*statement, static_cast<NodeId>(statement->nodes.size()), {}, item));
}

TEST(PartiqlEvaluate, CommonConditionsAllocateNothing) {
  const Item item = sample();
  const std::vector<AttributeValue> key = {S("a")};
  const std::vector<AttributeValue> none;
  struct Case {
    const char* text;
    const std::vector<AttributeValue>& parameters;
  };
  const Case cases[] = {
      {"SELECT * FROM t WHERE pk = ?", key},
      {"SELECT * FROM t WHERE n > 4 AND s = 'str'", none},
      {"SELECT * FROM t WHERE m.sub.d BETWEEN 1 AND 9 OR l[2][0] IN [1, 2]", none},
      {"SELECT * FROM t WHERE NOT nope = 1 AND z IS NOT MISSING AND n IS NUMERIC", none},
      {"SELECT * FROM t WHERE attribute_exists(s) = true AND begins_with(s, 'st')", none},
      {"SELECT * FROM t WHERE contains(ss, 'a') AND attribute_type(l, 'L')", none},
      {"SELECT * FROM t WHERE size(l) = 3", none},
  };
  // The counter sees what parsing allocates.
  allocations = 0;
  counting = true;
  auto probe = test::parse(cases[0].text);
  counting = false;
  EXPECT_GT(allocations, 0);
  for (const Case& c : cases) {
    auto statement = test::parse(c.text);
    allocations = 0;
    counting = true;
    const bool result = matches(*statement, statement->where, c.parameters, item);
    counting = false;
    EXPECT_TRUE(result) << c.text;
    EXPECT_EQ(allocations, 0) << c.text;
  }
}

}  // namespace
}  // namespace kumo::partiql
