// UpdateExpression: every clause, arithmetic exactness, list and set semantics, execution
// and validation errors, key attributes and ReturnValues UPDATED_*.
#include "expr/update.h"

#include <gtest/gtest.h>

#include "expr_test_util.h"

namespace kumo::expr {
namespace {

using namespace test;

class UpdateTest : public ::testing::Test {
 protected:
  UpdateExpression compile(std::string_view text) {
    return UpdateExpression::compile(text, names_, values_);
  }
  // `item` after applying `text`.
  Item apply(std::string_view text, Item item) {
    compile(text).apply(item);
    return item;
  }
  std::string compile_error(std::string_view text) {
    return error_of([&] { compile(text); });
  }
  std::string apply_error(std::string_view text, Item item) {
    auto update = compile(text);
    return error_of([&] { update.apply(item); });
  }

  AttributeNames names_;
  AttributeValues values_{{":v", S("v")},          {":w", S("w")},       {":one", N("1")},
                          {":n", N("0.1")},        {":l", L({S("x")})},  {":ss", SS({"b", "c"})},
                          {":ns", NS({"2", "3"})}, {":bs", BS({"\x02"})}};
};

// --- SET ---

TEST_F(UpdateTest, SetTopLevelAndNested) {
  EXPECT_EQ(apply("SET a = :v", {}), (Item{{"a", S("v")}}));
  EXPECT_EQ(apply("SET a = :v", {{"a", N("1")}}), (Item{{"a", S("v")}}));
  EXPECT_EQ(apply("SET m.b = :v", {{"m", M({{"c", N("1")}})}}),
            (Item{{"m", M({{"b", S("v")}, {"c", N("1")}})}}));
  EXPECT_EQ(apply("SET m.x.y = :v", {{"m", M({{"x", M({})}})}}),
            (Item{{"m", M({{"x", M({{"y", S("v")}})}})}}));
  EXPECT_EQ(apply("SET l[1] = :v", {{"l", L({N("0"), N("1"), N("2")})}}),
            (Item{{"l", L({N("0"), S("v"), N("2")})}}));
  EXPECT_EQ(apply("SET l[0].k = :v", {{"l", L({M({})})}}), (Item{{"l", L({M({{"k", S("v")}})})}}));
  names_ = {{"#a", "a.b"}};
  EXPECT_EQ(apply("SET #a = :v", {}), (Item{{"a.b", S("v")}}));
}

TEST_F(UpdateTest, SetBeyondTheEndAppendsInIndexOrder) {
  EXPECT_EQ(apply("SET l[10] = :v", {{"l", L({N("0")})}}), (Item{{"l", L({N("0"), S("v")})}}));
  EXPECT_EQ(apply("SET l[10] = :w, l[5] = :v", {{"l", L({N("0")})}}),
            (Item{{"l", L({N("0"), S("v"), S("w")})}}));
  EXPECT_EQ(apply("SET l[0] = :v, l[7] = :w", {{"l", L({})}}), (Item{{"l", L({S("v"), S("w")})}}));
}

TEST_F(UpdateTest, SetThroughMissingOrWrongParentIsInvalid) {
  const std::string invalid =
      "The document path provided in the update expression is invalid for update";
  EXPECT_EQ(apply_error("SET m.b = :v", {}), invalid);
  EXPECT_EQ(apply_error("SET m.b.c = :v", {{"m", M({})}}), invalid);
  EXPECT_EQ(apply_error("SET a.b = :v", {{"a", S("x")}}), invalid);
  EXPECT_EQ(apply_error("SET a[0] = :v", {{"a", M({})}}), invalid);
  EXPECT_EQ(apply_error("SET a.b = :v", {{"a", L({})}}), invalid);
  EXPECT_EQ(apply_error("SET l[3].b = :v", {{"l", L({})}}), invalid);
  EXPECT_EQ(apply_error("SET l[0] = :v", {}), invalid);
}

TEST_F(UpdateTest, OperandsReadTheItemBeforeTheUpdate) {
  EXPECT_EQ(apply("SET a = b, b = a", {{"a", N("1")}, {"b", N("2")}}),
            (Item{{"a", N("2")}, {"b", N("1")}}));
  EXPECT_EQ(apply("SET a = b REMOVE b", {{"b", N("2")}}), (Item{{"a", N("2")}}));
  EXPECT_EQ(apply("SET l[0] = l[1], l[1] = l[0]", {{"l", L({N("0"), N("1")})}}),
            (Item{{"l", L({N("1"), N("0")})}}));
  EXPECT_EQ(apply("SET c = m.x[1]", {{"m", M({{"x", L({N("0"), N("5")})}})}}),
            (Item{{"c", N("5")}, {"m", M({{"x", L({N("0"), N("5")})}})}}));
}

TEST_F(UpdateTest, ArithmeticIsExactDecimal) {
  values_[":tenth"] = N("0.2");
  EXPECT_EQ(apply("SET a = a + :tenth", {{"a", N("0.1")}}), (Item{{"a", N("0.3")}}));
  EXPECT_EQ(apply("SET a = :n + :tenth", {}), (Item{{"a", N("0.3")}}));
  EXPECT_EQ(apply("SET a = a - :one", {{"a", N("1")}}), (Item{{"a", N("0")}}));
  EXPECT_EQ(apply("SET a = :one - a", {{"a", N("3.5")}}), (Item{{"a", N("-2.5")}}));
  values_[":big"] = N("99999999999999999999999999999999999999");  // 38 digits
  EXPECT_EQ(apply("SET a = a + :one", {{"a", N("-99999999999999999999999999999999999999")}}),
            (Item{{"a", N("-99999999999999999999999999999999999998")}}));
  EXPECT_EQ(apply("SET a = a - :big", {{"a", N("1E38")}}), (Item{{"a", N("1")}}));
  EXPECT_EQ(apply_error("SET a = a - :big", {{"a", N("1E100")}}),
            "Number overflow. Attempting to store a number with magnitude larger than supported "
            "range");  // exact, but more than 38 digits
  EXPECT_EQ(apply("SET a = b - c", {{"b", N("5")}, {"c", N("5")}}),
            (Item{{"a", N("0")}, {"b", N("5")}, {"c", N("5")}}));
}

TEST_F(UpdateTest, ArithmeticErrors) {
  values_[":big"] = N("99999999999999999999999999999999999999");
  values_[":max"] = N("9.9999999999999999999999999999999999999E+125");
  const std::string overflow =
      "Number overflow. Attempting to store a number with magnitude larger than supported range";
  EXPECT_EQ(apply_error("SET a = a + :big", {{"a", N("0.5")}}), overflow);  // 39 digits
  EXPECT_EQ(apply_error("SET a = :max + :max", {}), overflow);
  EXPECT_EQ(apply_error("SET a = b + :one", {}),
            "The provided expression refers to an attribute that does not exist in the item");
  EXPECT_EQ(apply_error("SET a = b - :one", {{"b", S("1")}}),
            "An operand in the update expression has an incorrect data type");
  EXPECT_EQ(compile_error("SET a = b + :v"),
            "Invalid UpdateExpression: Incorrect operand type for operator or function; operator "
            "or function: +, operand type: S");
  EXPECT_EQ(compile_error("SET a = :l - b"),
            "Invalid UpdateExpression: Incorrect operand type for operator or function; operator "
            "or function: -, operand type: L");
}

TEST_F(UpdateTest, IfNotExists) {
  values_[":zero"] = N("0");
  EXPECT_EQ(apply("SET a = if_not_exists(a, :v)", {}), (Item{{"a", S("v")}}));
  EXPECT_EQ(apply("SET a = if_not_exists(a, :v)", {{"a", N("1")}}), (Item{{"a", N("1")}}));
  EXPECT_EQ(apply("SET c = if_not_exists(c, :zero) + :one", {}), (Item{{"c", N("1")}}));
  EXPECT_EQ(apply("SET c = if_not_exists(c, :zero) + :one", {{"c", N("41")}}),
            (Item{{"c", N("42")}}));
  EXPECT_EQ(apply("SET a = if_not_exists(b, c)", {{"c", N("3")}}),
            (Item{{"a", N("3")}, {"c", N("3")}}));
  EXPECT_EQ(apply_error("SET a = if_not_exists(b, c)", {}),
            "The provided expression refers to an attribute that does not exist in the item");
  EXPECT_EQ(compile_error("SET a = if_not_exists(:v, b)"),
            "Invalid UpdateExpression: Operator or function requires a document path; operator "
            "or function: if_not_exists");
  EXPECT_EQ(compile_error("SET a = if_not_exists(b)"),
            "Invalid UpdateExpression: Incorrect number of operands for operator or function; "
            "operator or function: if_not_exists, number of operands: 1");
}

TEST_F(UpdateTest, ListAppend) {
  EXPECT_EQ(apply("SET l = list_append(l, :l)", {{"l", L({N("1")})}}),
            (Item{{"l", L({N("1"), S("x")})}}));
  EXPECT_EQ(apply("SET l = list_append(:l, l)", {{"l", L({N("1")})}}),
            (Item{{"l", L({S("x"), N("1")})}}));
  EXPECT_EQ(apply("SET l = list_append(if_not_exists(l, :l), :l)", {}),
            (Item{{"l", L({S("x"), S("x")})}}));
  EXPECT_EQ(apply_error("SET l = list_append(l, :l)", {}),
            "The provided expression refers to an attribute that does not exist in the item");
  EXPECT_EQ(apply_error("SET l = list_append(l, :l)", {{"l", SS({"a"})}}),
            "An operand in the update expression has an incorrect data type");
  EXPECT_EQ(compile_error("SET l = list_append(l, :v)"),
            "Invalid UpdateExpression: Incorrect operand type for operator or function; operator "
            "or function: list_append, operand type: S");
  EXPECT_EQ(compile_error("SET l = list_append(:ss, l)"),
            "Invalid UpdateExpression: Incorrect operand type for operator or function; operator "
            "or function: list_append, operand type: SS");
  EXPECT_EQ(compile_error("SET l = list_append(l)"),
            "Invalid UpdateExpression: Incorrect number of operands for operator or function; "
            "operator or function: list_append, number of operands: 1");
}

// --- REMOVE ---

TEST_F(UpdateTest, Remove) {
  EXPECT_EQ(apply("REMOVE a, b", {{"a", N("1")}, {"b", N("2")}, {"c", N("3")}}),
            (Item{{"c", N("3")}}));
  EXPECT_EQ(apply("REMOVE absent", {{"a", N("1")}}), (Item{{"a", N("1")}}));
  EXPECT_EQ(apply("REMOVE m.b", {{"m", M({{"b", N("1")}, {"c", N("2")}})}}),
            (Item{{"m", M({{"c", N("2")}})}}));
  EXPECT_EQ(apply("REMOVE m.absent", {{"m", M({})}}), (Item{{"m", M({})}}));
  EXPECT_EQ(apply_error("REMOVE m.b", {}),
            "The document path provided in the update expression is invalid for update");
  EXPECT_EQ(apply_error("REMOVE a.b", {{"a", N("1")}}),
            "The document path provided in the update expression is invalid for update");
}

TEST_F(UpdateTest, RemoveListElementsUsesOriginalIndexes) {
  const Item item{{"l", L({S("a"), S("b"), S("c"), S("d")})}};
  EXPECT_EQ(apply("REMOVE l[1]", item), (Item{{"l", L({S("a"), S("c"), S("d")})}}));
  EXPECT_EQ(apply("REMOVE l[1], l[2]", item), (Item{{"l", L({S("a"), S("d")})}}));
  EXPECT_EQ(apply("REMOVE l[2], l[0]", item), (Item{{"l", L({S("b"), S("d")})}}));
  EXPECT_EQ(apply("REMOVE l[9]", item), item);
  EXPECT_EQ(apply("REMOVE l[0] SET l[2] = :v", item), (Item{{"l", L({S("b"), S("v"), S("d")})}}));
  EXPECT_EQ(apply("REMOVE l[0], l[1], l[2], l[3]", item), (Item{{"l", L({})}}));
  EXPECT_EQ(apply("REMOVE l[0] SET l[8] = :v", item),
            (Item{{"l", L({S("b"), S("c"), S("d"), S("v")})}}));
}

// --- ADD ---

TEST_F(UpdateTest, AddNumbers) {
  EXPECT_EQ(apply("ADD c :one", {}), (Item{{"c", N("1")}}));  // missing counts as 0
  EXPECT_EQ(apply("ADD c :n", {{"c", N("0.2")}}), (Item{{"c", N("0.3")}}));
  EXPECT_EQ(apply("ADD m.c :one", {{"m", M({{"c", N("4")}})}}), (Item{{"m", M({{"c", N("5")}})}}));
  EXPECT_EQ(apply("ADD m.c :one", {{"m", M({})}}), (Item{{"m", M({{"c", N("1")}})}}));
  values_[":max"] = N("9.9999999999999999999999999999999999999E+125");
  EXPECT_EQ(apply_error("ADD c :max", {{"c", N("9E125")}}),
            "Number overflow. Attempting to store a number with magnitude larger than supported "
            "range");
  EXPECT_EQ(apply_error("ADD c :one", {{"c", S("1")}}),
            "An operand in the update expression has an incorrect data type");
  EXPECT_EQ(apply_error("ADD c :one", {{"c", SS({"1"})}}),
            "An operand in the update expression has an incorrect data type");
}

TEST_F(UpdateTest, AddSets) {
  EXPECT_EQ(apply("ADD s :ss", {}), (Item{{"s", SS({"b", "c"})}}));
  EXPECT_EQ(apply("ADD s :ss", {{"s", SS({"a", "b"})}}), (Item{{"s", SS({"a", "b", "c"})}}));
  values_[":ns2"] = NS({"2.0", "4"});
  EXPECT_EQ(apply("ADD s :ns2", {{"s", NS({"1", "2"})}}), (Item{{"s", NS({"1", "2", "4"})}}));
  EXPECT_EQ(apply("ADD s :bs", {{"s", BS({"\x01"})}}), (Item{{"s", BS({"\x01", "\x02"})}}));
  EXPECT_EQ(apply_error("ADD s :ns", {{"s", SS({"a"})}}), "Type mismatch for attribute to update");
  EXPECT_EQ(apply_error("ADD s :ss", {{"s", N("1")}}),
            "An operand in the update expression has an incorrect data type");
  EXPECT_EQ(apply_error("ADD s :ss", {{"s", L({})}}),
            "An operand in the update expression has an incorrect data type");
}

TEST_F(UpdateTest, AddAndDeleteOperandTypesAreCheckedUpFront) {
  values_[":b"] = B("x");
  values_[":bool"] = BOOL(true);
  values_[":null"] = NUL();
  values_[":m"] = M({});
  auto add = [](std::string_view type) {
    return "Invalid UpdateExpression: Incorrect operand type for operator or function; "
           "operator: ADD, operand type: " +
           std::string(type);
  };
  EXPECT_EQ(compile_error("ADD a :v"), add("STRING"));
  EXPECT_EQ(compile_error("ADD a :b"), add("BINARY"));
  EXPECT_EQ(compile_error("ADD a :bool"), add("BOOLEAN"));
  EXPECT_EQ(compile_error("ADD a :null"), add("NULL"));
  EXPECT_EQ(compile_error("ADD a :l"), add("LIST"));
  EXPECT_EQ(compile_error("ADD a :m"), add("MAP"));
  EXPECT_EQ(compile_error("DELETE a :one"),
            "Invalid UpdateExpression: Incorrect operand type for operator or function; "
            "operator: DELETE, operand type: NUMBER");
  EXPECT_EQ(compile_error("DELETE a :v"),
            "Invalid UpdateExpression: Incorrect operand type for operator or function; "
            "operator: DELETE, operand type: STRING");
  EXPECT_EQ(compile_error("ADD a :one, b :ss, c :ns, d :bs DELETE e :ss, f :ns, g :bs"),
            "<no error>");
}

// --- DELETE ---

TEST_F(UpdateTest, DeleteFromSets) {
  EXPECT_EQ(apply("DELETE s :ss", {{"s", SS({"a", "b", "c"})}}), (Item{{"s", SS({"a"})}}));
  EXPECT_EQ(apply("DELETE s :ss", {{"s", SS({"b"})}}), Item{});  // emptied: removed
  EXPECT_EQ(apply("DELETE s :ss", {}), Item{});
  values_[":ns2"] = NS({"1.0"});
  EXPECT_EQ(apply("DELETE s :ns2", {{"s", NS({"1", "2"})}}), (Item{{"s", NS({"2"})}}));
  EXPECT_EQ(apply("DELETE s :bs", {{"s", BS({"\x01", "\x02"})}}), (Item{{"s", BS({"\x01"})}}));
  EXPECT_EQ(apply("DELETE m.s :ss", {{"m", M({{"s", SS({"c"})}})}}), (Item{{"m", M({})}}));
  EXPECT_EQ(apply_error("DELETE s :ss", {{"s", NS({"1"})}}),
            "Type mismatch for attribute to update");
  EXPECT_EQ(apply_error("DELETE s :ss", {{"s", S("b")}}),
            "An operand in the update expression has an incorrect data type");
}

// --- whole-expression rules ---

TEST_F(UpdateTest, OverlappingAndConflictingPaths) {
  const std::string overlap =
      "Invalid UpdateExpression: Two document paths overlap with each other; must remove or "
      "rewrite one of these paths; ";
  EXPECT_EQ(compile_error("SET a = :v REMOVE a"), overlap + "path one: [a], path two: [a]");
  EXPECT_EQ(compile_error("SET a.b = :v, a = :w"), overlap + "path one: [a, b], path two: [a]");
  EXPECT_EQ(compile_error("REMOVE a ADD a.b :one"), overlap + "path one: [a], path two: [a, b]");
  EXPECT_EQ(compile_error("SET l[1] = :v DELETE l[1] :ss"),
            overlap + "path one: [l, [1]], path two: [l, [1]]");
  names_ = {{"#x", "a"}};
  EXPECT_EQ(compile_error("SET #x = :v, a = :w"), overlap + "path one: [a], path two: [a]");
  EXPECT_EQ(compile_error("SET a.b = :v, a[1] = :w"),
            "Invalid UpdateExpression: Two document paths conflict with each other; must remove "
            "or rewrite one of these paths; path one: [a, b], path two: [a, [1]]");
  // Reading a path that is also written is fine.
  EXPECT_EQ(compile_error("SET a = a + :one, b = a"), "<no error>");
  EXPECT_EQ(compile_error("SET l[1] = :v, l[2] = :w REMOVE l[0]"), "<no error>");
}

TEST_F(UpdateTest, PlaceholdersAndFunctionChecks) {
  EXPECT_EQ(compile_error("SET #a = :v"),
            "Invalid UpdateExpression: An expression attribute name used in the document path is "
            "not defined; attribute name: #a");
  EXPECT_EQ(compile_error("SET a = :undefined"),
            "Invalid UpdateExpression: An expression attribute value used in expression is not "
            "defined; attribute value: :undefined");
  EXPECT_EQ(compile_error("SET a = foo(b)"),
            "Invalid UpdateExpression: Invalid function name; function: foo");
  EXPECT_EQ(compile_error("SET a = :v SET b = :w"),
            "Invalid UpdateExpression: The \"SET\" section can only be used once in an update "
            "expression;");
}

TEST_F(UpdateTest, KeyAttributesCannotBeUpdated) {
  const std::vector<std::string> keys{"pk", "sk"};
  const std::vector<std::string> index_keys{"gsi_pk"};
  auto check = [&](std::string_view text) {
    auto update = compile(text);
    return error_of([&] { update.check_key_attributes(keys, index_keys); });
  };
  EXPECT_EQ(check("SET sk = :v"),
            "One or more parameter values were invalid: Cannot update attribute sk. This "
            "attribute is part of the key");
  EXPECT_EQ(check("REMOVE a, pk"),
            "One or more parameter values were invalid: Cannot update attribute pk. This "
            "attribute is part of the key");
  EXPECT_EQ(check("ADD pk :one"),
            "One or more parameter values were invalid: Cannot update attribute pk. This "
            "attribute is part of the key");
  EXPECT_EQ(check("SET pk.x = :v"),
            "Key attributes must be scalars; list random access '[]' and map lookup '.' are not "
            "allowed: Key: pk");
  EXPECT_EQ(check("SET gsi_pk[0] = :v"),
            "Key attributes must be scalars; list random access '[]' and map lookup '.' are not "
            "allowed: IndexKey: gsi_pk");
  EXPECT_EQ(check("SET gsi_pk = :v, a = pk"), "<no error>");
}

TEST_F(UpdateTest, NestingLimit) {
  std::string path = "a";
  AttributeValue nested = M({});
  for (int i = 0; i < 30; ++i) nested = M({{"a", nested}});
  for (int i = 0; i < 31; ++i) path += ".a";
  // `a` holds 31 levels of maps. A scalar inside the innermost one is fine; a map there is a
  // 32nd level.
  const Item item{{"a", nested}};
  EXPECT_EQ(apply_error("SET " + path + " = :v", item), "<no error>");
  values_[":m"] = M({});
  EXPECT_EQ(apply_error("SET " + path + " = :m", item),
            "Nesting Levels have exceeded supported limits: Attributes in the item have nested "
            "levels beyond supported limit");
}

// --- ReturnValues UPDATED_OLD / UPDATED_NEW ---

// UPDATED_OLD and UPDATED_NEW see the item before and after through the paths as written:
// l[0] after the update is the element that moved into the removed slot, and l[9] (a SET
// past the end, appended) shows nothing.
TEST_F(UpdateTest, UpdatedOldAndNew) {
  const Item old_item{{"a", N("1")},
                      {"c", S("gone")},
                      {"m", M({{"b", S("old")}, {"keep", S("k")}})},
                      {"l", L({S("p"), S("q"), S("r")})},
                      {"untouched", S("u")}};
  auto update = compile("SET m.b = :v, a = a + :one, l[2] = :w, l[9] = :v REMOVE c, l[0]");
  Item item = old_item;
  update.apply(item);
  EXPECT_EQ(item, (Item{{"a", N("2")},
                        {"m", M({{"b", S("v")}, {"keep", S("k")}})},
                        {"l", L({S("q"), S("w"), S("v")})},
                        {"untouched", S("u")}}));
  EXPECT_EQ(update.updated_attributes(old_item), (Item{{"a", N("1")},
                                                       {"c", S("gone")},
                                                       {"m", M({{"b", S("old")}})},
                                                       {"l", L({S("p"), S("r")})}}));
  EXPECT_EQ(update.updated_attributes(item),
            (Item{{"a", N("2")}, {"m", M({{"b", S("v")}})}, {"l", L({S("q"), S("v")})}}));
}

TEST_F(UpdateTest, UpdatedValuesOfSetsAndMissingItems) {
  Item item;
  auto add = compile("ADD s :ss, c :one");
  add.apply(item);
  EXPECT_EQ(add.updated_attributes(Item{}), Item{});
  EXPECT_EQ(add.updated_attributes(item), (Item{{"c", N("1")}, {"s", SS({"b", "c"})}}));
  const Item old_item{{"s", SS({"b"})}};
  item = old_item;
  auto del = compile("DELETE s :ss");
  del.apply(item);
  EXPECT_EQ(del.updated_attributes(old_item), old_item);
  EXPECT_EQ(del.updated_attributes(item), Item{});
}

TEST_F(UpdateTest, RemovesOnly) {
  EXPECT_TRUE(compile("REMOVE a, m.x, l[0]").removes_only());
  EXPECT_TRUE(compile("DELETE s :ss REMOVE a").removes_only());
  EXPECT_FALSE(compile("REMOVE a SET b = :v").removes_only());
  EXPECT_FALSE(compile("ADD c :one").removes_only());
}

// Legacy AttributeUpdates are no expression: no text limits, and a value of the wrong kind
// for ADD or DELETE is a type mismatch.
TEST_F(UpdateTest, AttributeUpdatesSource) {
  std::string text = "SET a0 = :v";
  for (int i = 1; i < 400; ++i) text += ", a" + std::to_string(i) + " = list_append(:l, :l)";
  EXPECT_NE(compile_error(text).find("Expression size has exceeded"), std::string::npos);
  Item item;
  UpdateExpression::compile(text, names_, values_, UpdateSource::kAttributeUpdates).apply(item);
  EXPECT_EQ(item.size(), 400u);
  const Item stored{{"n", N("1")}, {"s", SS({"b"})}};
  for (const char* update : {"ADD n :ss", "ADD s :one", "DELETE n :ss",
                             "SET s = list_append(if_not_exists(s, :l), :l)"}) {
    auto legacy =
        UpdateExpression::compile(update, names_, values_, UpdateSource::kAttributeUpdates);
    Item copy = stored;
    EXPECT_EQ(error_of([&] { legacy.apply(copy); }), "Type mismatch for attribute to update")
        << update;
    EXPECT_EQ(apply_error(update, stored),
              "An operand in the update expression has an incorrect data type")
        << update;
  }
}

TEST_F(UpdateTest, Accessors) {
  names_ = {{"#m", "m"}};
  auto update = compile("SET #m.a = :v, b = :w REMOVE m.c ADD d :one");
  EXPECT_EQ(update.attribute_names(), (std::vector<std::string_view>{"m", "b", "d"}));
  ASSERT_EQ(update.target_paths().size(), 4u);
  EXPECT_EQ(render_path(update.target_paths()[2]), "[m, c]");
}

}  // namespace
}  // namespace kumo::expr
