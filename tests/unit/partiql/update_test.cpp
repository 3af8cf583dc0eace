// A PartiQL UPDATE's actions as UpdateItem's update: the expression built from real
// statements, its values bound from literals and parameters, then UpdateItem's checks and
// mutation with the texts DynamoDB gives a PartiQL UPDATE.
#include "partiql/update.h"

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "expr/update.h"
#include "partiql_test_util.h"

namespace kumo::partiql {
namespace {

using namespace test;

// One statement's update as a request would hold it: the values outlive the update.
struct BoundUpdate {
  std::shared_ptr<const Statement> statement;
  expr::AttributeNames names;
  expr::AttributeValues values;
  std::optional<expr::UpdateExpression> update;
};

std::unique_ptr<BoundUpdate> bind(std::string_view text,
                                  const std::vector<AttributeValue>& parameters = {}) {
  auto b = std::make_unique<BoundUpdate>();
  b->statement = parse(text);
  check_statement(*b->statement, parameters);
  b->values = update_values(*b->statement, parameters);
  b->update = expr::UpdateExpression::build(b->statement->update, b->names, b->values);
  return b;
}

// `item` after the UPDATE `text`.
Item updated(std::string_view text, Item item, const std::vector<AttributeValue>& parameters = {}) {
  bind(text, parameters)->update->apply(item);
  return item;
}

// The message binding or applying `text` to `item` fails with, or "<no error>".
std::string apply_error(std::string_view text, Item item,
                        const std::vector<AttributeValue>& parameters = {}) {
  return error_of([&] { bind(text, parameters)->update->apply(item); });
}

// The message binding `text` fails with, or "<no error>".
std::string build_error(std::string_view text) {
  return error_of([&] { bind(text); });
}

const Item kItem{{"pk", S("k")},
                 {"n", N("5")},
                 {"s", S("text")},
                 {"tags", L({S("a"), S("b"), S("c")})},
                 {"colors", SS({"red", "blue"})},
                 {"m", M({{"x", N("1")}, {"y", N("2")}})}};

Item with(Item item, std::string name, AttributeValue value) {
  item.insert_or_assign(std::move(name), std::move(value));
  return item;
}
Item without(Item item, const std::string& name) {
  item.erase(name);
  return item;
}

// --- the built expression ---

TEST(PartiqlUpdateBuild, ActionsInTextOrderWithValueSlots) {
  auto s = parse(
      "UPDATE \"T\" SET a = 1, b = ? SET c = d REMOVE e SET f = set_add(f, <<'x'>>) "
      "SET g = set_delete(g, ?) WHERE pk = ? RETURNING ALL NEW *");
  ASSERT_NE(s->update, nullptr);
  const expr::ParsedExpression& u = *s->update;
  EXPECT_EQ(u.kind, expr::ExpressionKind::kUpdate);
  ASSERT_EQ(u.actions.size(), 6U);
  const expr::UpdateClause clauses[] = {expr::UpdateClause::kSet, expr::UpdateClause::kSet,
                                        expr::UpdateClause::kSet, expr::UpdateClause::kRemove,
                                        expr::UpdateClause::kAdd, expr::UpdateClause::kDelete};
  const char* targets[] = {"a", "b", "c", "e", "f", "g"};
  for (std::size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(u.actions[i].clause, clauses[i]) << i;
    EXPECT_EQ(render_path(u.paths[u.actions[i].path]), targets[i]) << i;
  }
  EXPECT_EQ(u.value_placeholders, (std::vector<std::string>{":0", ":1", ":2", ":3"}));
  ASSERT_EQ(s->update_slots.size(), 4U);
  EXPECT_EQ(s->node(s->update_slots[1]).type, NodeType::kParameter);
  EXPECT_EQ(s->node(s->update_slots[3]).ref, 1U);  // set_delete's `?`, the second parameter
}

TEST(PartiqlUpdateBuild, ValuesBindLiteralsAndParametersInBothForms) {
  auto s = parse("UPDATE \"T\" SET a = ?, b = 'lit' WHERE pk = ? AND c = ?");
  const std::vector<AttributeValue> parameters{N("1"), S("key"), S("cond")};
  EXPECT_EQ(update_values(*s, parameters),
            (expr::AttributeValues{{":0", N("1")}, {":1", S("lit")}}));
  // FROM-first: the WHERE's parameters come before the SET's.
  s = parse("FROM \"T\" WHERE pk = ? SET a = ? REMOVE b SET c = ? + n");
  EXPECT_EQ(update_values(*s, parameters),
            (expr::AttributeValues{{":0", S("key")}, {":1", S("cond")}}));
}

TEST(PartiqlUpdateBuild, OnlyUpdatesHaveOne) {
  EXPECT_EQ(parse("SELECT * FROM \"T\" WHERE pk = 'a'")->update, nullptr);
  EXPECT_EQ(parse("DELETE FROM \"T\" WHERE pk = 'a'")->update, nullptr);
  EXPECT_EQ(parse("INSERT INTO \"T\" VALUE {'pk': 'a'}")->update, nullptr);
  EXPECT_TRUE(update_values(*parse("DELETE FROM \"T\" WHERE pk = ?"), {{S("a")}}).empty());
}

// A value no update holds leaves the update null, and check_statement refuses it.
TEST(PartiqlUpdateBuild, RefusedShapesBuildNothing) {
  for (const char* text : {
           "UPDATE \"T\" SET a = size(b) WHERE pk = 'k'",
           "UPDATE \"T\" SET a = b * 2 WHERE pk = 'k'",
           "UPDATE \"T\" SET a = b IS NULL WHERE pk = 'k'",
           "UPDATE \"T\" SET a = list_append(a) WHERE pk = 'k'",
           "UPDATE \"T\" SET a = set_add(b, <<1>>) WHERE pk = 'k'",
           "UPDATE \"T\" SET a = set_add(a, 1) WHERE pk = 'k'",
           "UPDATE \"T\" SET a = list_append(set_add(a, <<1>>), b) WHERE pk = 'k'",
       }) {
    auto s = parse(text);
    EXPECT_EQ(s->update, nullptr) << text;
    EXPECT_TRUE(s->update_slots.empty()) << text;
    EXPECT_NE(check_error(text), "<no error>") << text;
  }
  // set_add has its place as a whole SET value only.
  EXPECT_EQ(check_error("UPDATE \"T\" SET a = list_append(set_add(a, <<1>>), b) WHERE pk = 'k'"),
            "Unrecognized function: set_add at 1:32:7");
  EXPECT_EQ(check_error("UPDATE \"T\" SET a = a + SET_DELETE(a, <<1>>) WHERE pk = 'k'"),
            "Unrecognized function: set_delete at 1:24:10");
}

// --- SET and REMOVE ---

TEST(PartiqlUpdateApply, SetsAndRemovesInRepeatedClauses) {
  EXPECT_EQ(updated("UPDATE \"T\" SET a = 1 SET b = ? REMOVE s REMOVE m WHERE pk = 'k'", kItem,
                    {SS({"p"})}),
            with(with(without(without(kItem, "s"), "m"), "a", N("1")), "b", SS({"p"})));
  EXPECT_EQ(
      updated("FROM \"T\" WHERE pk = 'k' SET m.z = [1, {'q': true}], s = m.x", kItem),
      with(with(kItem, "m",
                M({{"x", N("1")}, {"y", N("2")}, {"z", L({N("1"), M({{"q", BOOL(true)}})})}})),
           "s", N("1")));
}

TEST(PartiqlUpdateApply, ArithmeticReadsTheItemBeforeTheUpdate) {
  EXPECT_EQ(updated("UPDATE \"T\" SET n = n + 1, a = n - ?, b = 10 - m.y WHERE pk = 'k'", kItem,
                    {N("0.5")}),
            with(with(with(kItem, "n", N("6")), "a", N("4.5")), "b", N("8")));
  EXPECT_EQ(updated("UPDATE \"T\" SET n=n-1 WHERE pk = 'k'", kItem), with(kItem, "n", N("4")));
  EXPECT_EQ(apply_error("UPDATE \"T\" SET n = absent + 1 WHERE pk = 'k'", kItem),
            "The provided expression refers to an attribute that does not exist in the item");
  EXPECT_EQ(apply_error("UPDATE \"T\" SET n = s + 1 WHERE pk = 'k'", kItem),
            "An operand in the update expression has an incorrect data type");
  EXPECT_EQ(apply_error("UPDATE \"T\" SET n = n + ? WHERE pk = 'k'", kItem,
                        {N("9.9999999999999999999999999999999999999E+125")}),
            "Number overflow. Attempting to store a number with magnitude larger than supported "
            "range");
}

TEST(PartiqlUpdateApply, ListAppend) {
  EXPECT_EQ(updated("UPDATE \"T\" SET tags = list_append(tags, ['d']) WHERE pk = 'k'", kItem),
            with(kItem, "tags", L({S("a"), S("b"), S("c"), S("d")})));
  EXPECT_EQ(
      updated("UPDATE \"T\" SET tags = list_append(?, tags) WHERE pk = 'k'", kItem, {L({N("0")})}),
      with(kItem, "tags", L({N("0"), S("a"), S("b"), S("c")})));
  EXPECT_EQ(apply_error("UPDATE \"T\" SET l = list_append(l, [1]) WHERE pk = 'k'", kItem),
            "The provided expression refers to an attribute that does not exist in the item");
  EXPECT_EQ(apply_error("UPDATE \"T\" SET s = list_append(s, [1]) WHERE pk = 'k'", kItem),
            "An operand in the update expression has an incorrect data type");
  // A constant of another type is refused before any item is read, as UpdateItem refuses it.
  EXPECT_EQ(build_error("UPDATE \"T\" SET tags = list_append(tags, 'd') WHERE pk = 'k'"),
            "Invalid UpdateExpression: Incorrect operand type for operator or function; "
            "operator or function: list_append, operand type: S");
}

TEST(PartiqlUpdateApply, SetAdd) {
  EXPECT_EQ(updated("UPDATE \"T\" SET colors = set_add(colors, <<'green', 'red'>>) WHERE pk = 'k'",
                    kItem),
            with(kItem, "colors", SS({"red", "blue", "green"})));
  EXPECT_EQ(
      updated("UPDATE \"T\" SET colors = set_add(colors, ?) WHERE pk = 'k'", kItem, {SS({"red"})}),
      kItem);
  // Adding to an absent attribute creates it.
  EXPECT_EQ(updated("UPDATE \"T\" SET nums = set_add(nums, <<1, 2>>) WHERE pk = 'k'", kItem),
            with(kItem, "nums", NS({"1", "2"})));
  EXPECT_EQ(updated("UPDATE \"T\" SET m.b = set_add(m.b, ?) WHERE pk = 'k'", kItem, {BS({"\x01"})}),
            with(kItem, "m", M({{"x", N("1")}, {"y", N("2")}, {"b", BS({"\x01"})}})));
  // The stored value must be a set of the same type.
  EXPECT_EQ(apply_error("UPDATE \"T\" SET colors = set_add(colors, <<1>>) WHERE pk = 'k'", kItem),
            "An operand in the update expression has an incorrect data type");
  EXPECT_EQ(apply_error("UPDATE \"T\" SET n = set_add(n, <<1>>) WHERE pk = 'k'", kItem),
            "An operand in the update expression has an incorrect data type");
  EXPECT_EQ(apply_error("UPDATE \"T\" SET s = set_add(s, ?) WHERE pk = 'k'", kItem, {SS({"x"})}),
            "An operand in the update expression has an incorrect data type");
}

TEST(PartiqlUpdateApply, SetDelete) {
  EXPECT_EQ(
      updated("UPDATE \"T\" SET colors = set_delete(colors, <<'red', 'pink'>>) WHERE pk = 'k'",
              kItem),
      with(kItem, "colors", SS({"blue"})));
  // Deleting every member removes the attribute; deleting from an absent one does nothing.
  EXPECT_EQ(updated("UPDATE \"T\" SET colors = set_delete(colors, ?) WHERE pk = 'k'", kItem,
                    {SS({"blue", "red"})}),
            without(kItem, "colors"));
  EXPECT_EQ(updated("UPDATE \"T\" SET nums = set_delete(nums, <<1>>) WHERE pk = 'k'", kItem),
            kItem);
  EXPECT_EQ(
      apply_error("UPDATE \"T\" SET colors = set_delete(colors, <<1>>) WHERE pk = 'k'", kItem),
      "An operand in the update expression has an incorrect data type");
  EXPECT_EQ(apply_error("UPDATE \"T\" SET tags = set_delete(tags, <<'a'>>) WHERE pk = 'k'", kItem),
            "An operand in the update expression has an incorrect data type");
}

TEST(PartiqlUpdateApply, ListIndexes) {
  // Past the end appends; several appends go in index order.
  EXPECT_EQ(updated("UPDATE \"T\" SET tags[5] = 'e' SET tags[4] = 'd' WHERE pk = 'k'", kItem),
            with(kItem, "tags", L({S("a"), S("b"), S("c"), S("d"), S("e")})));
  // REMOVE shifts the later elements down; indexes are those of the list before the update.
  EXPECT_EQ(
      updated("UPDATE \"T\" REMOVE tags[0] REMOVE tags[2] REMOVE tags[9] WHERE pk = 'k'", kItem),
      with(kItem, "tags", L({S("b")})));
  EXPECT_EQ(updated("UPDATE \"T\" SET tags[1] = 'B' WHERE pk = 'k'", kItem),
            with(kItem, "tags", L({S("a"), S("B"), S("c")})));
  EXPECT_EQ(apply_error("UPDATE \"T\" SET newlist[0] = 'x' WHERE pk = 'k'", kItem),
            "The document path provided in the update expression is invalid for update");
  EXPECT_EQ(apply_error("UPDATE \"T\" SET s.a = 1 WHERE pk = 'k'", kItem),
            "The document path provided in the update expression is invalid for update");
}

TEST(PartiqlUpdateApply, NestingLimit) {
  AttributeValue deep = S("x");
  for (int i = 0; i < 31; ++i) deep = L({deep});  // a scalar in 31 levels: a valid value
  EXPECT_EQ(updated("UPDATE \"T\" SET d = ? WHERE pk = 'k'", {}, {deep}), (Item{{"d", deep}}));
  EXPECT_EQ(apply_error("UPDATE \"T\" SET m.deep = ? WHERE pk = 'k'", kItem, {deep}),
            "Nesting Levels have exceeded supported limits");
}

// --- checks across the actions ---

TEST(PartiqlUpdateChecks, OverlappingAndConflictingPaths) {
  EXPECT_EQ(build_error("UPDATE \"T\" SET a = 1 SET a = 2 WHERE pk = 'k'"),
            "Invalid UpdateExpression: Two document paths overlap with each other; must remove "
            "or rewrite one of these paths; path one: [a], path two: [a]");
  EXPECT_EQ(build_error("UPDATE \"T\" SET m.x = 1 REMOVE m WHERE pk = 'k'"),
            "Invalid UpdateExpression: Two document paths overlap with each other; must remove "
            "or rewrite one of these paths; path one: [m, x], path two: [m]");
  EXPECT_EQ(build_error("UPDATE \"T\" SET c = set_add(c, <<1>>) REMOVE c WHERE pk = 'k'"),
            "Invalid UpdateExpression: Two document paths overlap with each other; must remove "
            "or rewrite one of these paths; path one: [c], path two: [c]");
  EXPECT_EQ(build_error("UPDATE \"T\" SET l[0] = 1 SET l.a = 2 WHERE pk = 'k'"),
            "Invalid UpdateExpression: Two document paths conflict with each other; must remove "
            "or rewrite one of these paths; path one: [l, [0]], path two: [l, a]");
  // Operands may read what the update writes.
  EXPECT_EQ(build_error("UPDATE \"T\" SET a = b, b = a REMOVE c[0] SET c[1] = c[0] WHERE pk = 'k'"),
            "<no error>");
}

TEST(PartiqlUpdateChecks, KeyAttributes) {
  const std::vector<std::string> keys{"pk", "sk"};
  const std::vector<std::string> index_keys{"g"};
  auto key_error = [&](std::string_view text) {
    auto b = bind(text);
    return error_of([&] { b->update->check_key_attributes(keys, index_keys); });
  };
  EXPECT_EQ(key_error("UPDATE \"T\" SET n = 1 SET sk = 'x' WHERE pk = 'k'"),
            "One or more parameter values were invalid: Cannot update attribute sk. This "
            "attribute is part of the key");
  EXPECT_EQ(key_error("UPDATE \"T\" REMOVE pk WHERE pk = 'k'"),
            "One or more parameter values were invalid: Cannot update attribute pk. This "
            "attribute is part of the key");
  EXPECT_EQ(key_error("UPDATE \"T\" SET pk = set_add(pk, <<'a'>>) WHERE pk = 'k'"),
            "One or more parameter values were invalid: Cannot update attribute pk. This "
            "attribute is part of the key");
  EXPECT_EQ(key_error("UPDATE \"T\" SET pk.a = 1 WHERE pk = 'k'"),
            "Key attributes must be scalars; list random access '[]' and map lookup '.' are not "
            "allowed: Key: pk");
  EXPECT_EQ(key_error("UPDATE \"T\" SET g[0] = 1 WHERE pk = 'k'"),
            "Key attributes must be scalars; list random access '[]' and map lookup '.' are not "
            "allowed: IndexKey: g");
  EXPECT_EQ(key_error("UPDATE \"T\" SET g = 1, n = pk WHERE pk = 'k'"), "<no error>");
}

// RETURNING MODIFIED OLD / NEW: the action targets as written, in the old and the new image.
TEST(PartiqlUpdateReturning, ModifiedAttributes) {
  auto modified = [](std::string_view text, const Item& old_item) {
    auto b = bind(text);
    Item new_item = old_item;
    b->update->apply(new_item);
    return std::vector<Item>{b->update->updated_attributes(old_item),
                             b->update->updated_attributes(new_item)};
  };
  const Item two{{"pk", S("k")}, {"tags", L({S("a"), S("b")})}};
  EXPECT_EQ(modified("UPDATE \"T\" SET tags[5] = 'c' WHERE pk = 'k'", two),
            (std::vector<Item>{Item{}, Item{}}));
  EXPECT_EQ(modified("UPDATE \"T\" SET tags[2] = 'c' WHERE pk = 'k'", two),
            (std::vector<Item>{Item{}, Item{{"tags", L({S("c")})}}}));
  EXPECT_EQ(modified("UPDATE \"T\" REMOVE tags[1] WHERE pk = 'k'", kItem),
            (std::vector<Item>{Item{{"tags", L({S("b")})}}, Item{{"tags", L({S("c")})}}}));
  EXPECT_EQ(modified("UPDATE \"T\" SET tags[2] = 'y', tags[0] = 'x' WHERE pk = 'k'", kItem),
            (std::vector<Item>{Item{{"tags", L({S("a"), S("c")})}},
                               Item{{"tags", L({S("x"), S("y")})}}}));
  EXPECT_EQ(modified("UPDATE \"T\" SET m.x = 9 REMOVE s SET z = 1 WHERE pk = 'k'", kItem),
            (std::vector<Item>{Item{{"m", M({{"x", N("1")}})}, {"s", S("text")}},
                               Item{{"m", M({{"x", N("9")}})}, {"z", N("1")}}}));
  EXPECT_EQ(modified("UPDATE \"T\" SET colors = set_delete(colors, <<'red', 'blue'>>) WHERE "
                     "pk = 'k'",
                     kItem),
            (std::vector<Item>{Item{{"colors", SS({"red", "blue"})}}, Item{}}));
}

}  // namespace
}  // namespace kumo::partiql
