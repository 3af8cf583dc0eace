// The statement forms, literals, paths and precedence of the parser, and every error it
// reports with DynamoDB's text: syntax errors in the envelope, refused forms, literal rules.
#include "partiql/parser.h"

#include <gtest/gtest.h>

#include "partiql_test_util.h"

namespace kumo::partiql {
namespace {

using test::malformed;
using test::parse;
using test::parse_error;
using test::render;
using test::render_value;
using test::where;

std::vector<std::string> projection_keys(const Statement& s) {
  std::vector<std::string> keys;
  for (const ProjectionItem& item : s.projection) keys.push_back(item.key);
  return keys;
}

// --- statement forms ---

TEST(PartiqlParser, SelectStar) {
  auto s = parse("SELECT * FROM \"Music\" WHERE Artist = 'Acme Band'");
  EXPECT_EQ(s->kind, StatementKind::kSelect);
  EXPECT_TRUE(s->select_all);
  EXPECT_TRUE(s->projection.empty());
  EXPECT_EQ(s->target.names, std::vector<std::string>{"Music"});
  EXPECT_EQ(s->target.table(), "Music");
  EXPECT_FALSE(s->target.index());
  EXPECT_EQ(render(*s, s->where), "(= Artist 'Acme Band')");
  EXPECT_EQ(s->parameter_count, 0u);
}

TEST(PartiqlParser, SelectWithoutWhere) {
  auto s = parse("SELECT * FROM t");
  EXPECT_EQ(s->where, kNoNode);
  EXPECT_EQ(s->target.table(), "t");
}

TEST(PartiqlParser, ProjectionKeysAreTheLastNameWithItsIndexes) {
  auto s = parse(
      "SELECT a, mymap.nested, profile.sub, tags[1], m.k[0], l[-0], \"q x\".\"y\"[2][3] FROM t");
  EXPECT_FALSE(s->select_all);
  EXPECT_EQ(projection_keys(*s),
            (std::vector<std::string>{"a", "nested", "sub", "tags[1]", "k[0]", "l[0]", "y[2][3]"}));
  EXPECT_EQ(test::render_path(s->paths[s->node(s->projection[6].node).ref]), "q x.y[2][3]");
}

TEST(PartiqlParser, TableAndIndex) {
  for (std::string_view text :
       {"SELECT * FROM \"T\".\"idx\"", "SELECT * FROM T.idx", "SELECT * FROM \"T\".idx"}) {
    auto s = parse(text);
    EXPECT_EQ(s->target.names, (std::vector<std::string>{"T", "idx"})) << text;
    EXPECT_EQ(s->target.index().value_or(""), "idx");
  }
  auto three = parse("SELECT * FROM \"t\".\"i\".\"x\"");
  EXPECT_EQ(three->target.names.size(), 3u);
  auto quoted = parse("SELECT * FROM \"my-table.v2\"");
  EXPECT_EQ(quoted->target.table(), "my-table.v2");
  auto empty = parse("SELECT * FROM \"\"");
  EXPECT_EQ(empty->target.table(), "");
  EXPECT_TRUE(parse("SELECT * FROM 1")->target.is_path == false);
}

TEST(PartiqlParser, OrderBy) {
  auto s = parse("SELECT * FROM t WHERE pk IN ['o','p'] ORDER BY pk DESC, sk ASC, x");
  ASSERT_EQ(s->order_by.size(), 3u);
  EXPECT_EQ(render(*s, s->order_by[0].node), "pk");
  EXPECT_TRUE(s->order_by[0].descending);
  EXPECT_FALSE(s->order_by[1].descending);
  EXPECT_FALSE(s->order_by[2].descending);
}

TEST(PartiqlParser, Insert) {
  auto s = parse(
      "INSERT INTO \"T\" VALUE {'pk': 'a', 'n': 1, 'p': ?, 'm': {'x': [1, <<'a', 'b'>>, NULL]}, "
      "'b': true}");
  EXPECT_EQ(s->kind, StatementKind::kInsert);
  EXPECT_EQ(s->target.table(), "T");
  ASSERT_EQ(s->item.size(), 5u);
  std::vector<std::string> rendered;
  for (const InsertAttribute& a : s->item) rendered.push_back(a.name + "=" + render(*s, a.value));
  EXPECT_EQ(rendered, (std::vector<std::string>{"pk='a'", "n=1", "p=?0",
                                                "m={'x': [1, <<'a', 'b'>>, null]}", "b=true"}));
  EXPECT_EQ(s->parameter_count, 1u);
  EXPECT_EQ(s->returning, Returning::kNone);
  EXPECT_EQ(parse("INSERT INTO t VALUE {}")->item.size(), 0u);
}

TEST(PartiqlParser, Update) {
  auto s = parse(
      "UPDATE \"T\" SET a = 1, b = ? SET c = c + 1 REMOVE d REMOVE e[2] SET f = list_append(f, "
      "[1]) WHERE pk = ? AND sk = 2 RETURNING ALL NEW *");
  EXPECT_EQ(s->kind, StatementKind::kUpdate);
  ASSERT_EQ(s->actions.size(), 6u);
  std::vector<std::string> rendered;
  for (const Action& a : s->actions) {
    rendered.push_back((a.type == ActionType::kSet ? "SET " : "REMOVE ") + render(*s, a.target) +
                       (a.value == kNoNode ? "" : " = " + render(*s, a.value)));
  }
  EXPECT_EQ(rendered,
            (std::vector<std::string>{"SET a = 1", "SET b = ?0", "SET c = (+ c 1)", "REMOVE d",
                                      "REMOVE e[2]", "SET f = list_append(f [1])"}));
  EXPECT_EQ(render(*s, s->where), "(AND (= pk ?1) (= sk 2))");
  EXPECT_EQ(s->returning, Returning::kAllNew);
  EXPECT_EQ(s->parameter_count, 2u);
}

TEST(PartiqlParser, UpdateFromFirstForm) {
  auto s = parse("from \"T\" where pk = 'a' set c = 2 remove d returning modified old *");
  EXPECT_EQ(s->kind, StatementKind::kUpdate);
  EXPECT_EQ(s->target.table(), "T");
  EXPECT_EQ(render(*s, s->where), "(= pk 'a')");
  EXPECT_EQ(s->actions.size(), 2u);
  EXPECT_EQ(s->returning, Returning::kModifiedOld);
}

TEST(PartiqlParser, ReturningVariants) {
  const std::pair<std::string_view, Returning> cases[] = {
      {"ALL OLD", Returning::kAllOld},
      {"MODIFIED OLD", Returning::kModifiedOld},
      {"ALL NEW", Returning::kAllNew},
      {"modified new", Returning::kModifiedNew}};
  for (const auto& [words, expected] : cases) {
    auto s = parse("UPDATE t SET a = 1 WHERE pk = 'a' RETURNING " + std::string(words) + " *");
    EXPECT_EQ(s->returning, expected) << words;
  }
  EXPECT_EQ(returning_text(Returning::kModifiedNew), "MODIFIED NEW");
}

TEST(PartiqlParser, Delete) {
  auto s = parse("DELETE FROM \"T\" WHERE pk = 'a' AND sk = 1 RETURNING ALL OLD *");
  EXPECT_EQ(s->kind, StatementKind::kDelete);
  EXPECT_EQ(s->target.table(), "T");
  EXPECT_EQ(render(*s, s->where), "(AND (= pk 'a') (= sk 1))");
  EXPECT_EQ(s->returning, Returning::kAllOld);
  EXPECT_EQ(parse("DELETE FROM t")->where, kNoNode);
}

TEST(PartiqlParser, Exists) {
  auto s = parse("EXISTS(SELECT * FROM \"T\" WHERE pk = 'a' AND n > ?)");
  EXPECT_EQ(s->kind, StatementKind::kExists);
  EXPECT_EQ(s->target.table(), "T");
  EXPECT_TRUE(s->select_all);
  EXPECT_EQ(render(*s, s->where), "(AND (= pk 'a') (> n ?0))");
  EXPECT_EQ(parse("exists ( select * from t where pk = 'a' )")->kind, StatementKind::kExists);
}

TEST(PartiqlParser, KeywordsInAnyCase) {
  EXPECT_EQ(parse("select * from t where pk = 'a'")->kind, StatementKind::kSelect);
  EXPECT_EQ(parse("Insert Into t Value {'pk': 'a'}")->kind, StatementKind::kInsert);
  EXPECT_EQ(parse("update t set a = 1 where pk = 'a'")->kind, StatementKind::kUpdate);
  EXPECT_EQ(parse("DeLeTe FrOm t WhErE pk = 'a'")->kind, StatementKind::kDelete);
  EXPECT_EQ(where("select * from t where a between 1 and 2 or not b in [1] and c is not null"),
            "(OR (BETWEEN a 1 2) (AND (NOT (IN b 1)) (IS NOT null c)))");
}

TEST(PartiqlParser, TrailingSemicolonAndComments) {
  EXPECT_EQ(where("SELECT * FROM t WHERE pk = 'a';"), "(= pk 'a')");
  EXPECT_EQ(where("-- first\nSELECT * FROM t WHERE pk = 'a'; -- done"), "(= pk 'a')");
  EXPECT_EQ(where("/* c */SELECT/**/*/**/FROM t WHERE pk/* key */='a' /* end */"), "(= pk 'a')");
}

// --- literals ---

std::string value_of(std::string_view literal) {
  auto s = parse("SELECT * FROM t WHERE x = " + std::string(literal));
  const Node& compare = s->node(s->where);
  return render(*s, compare.args[1]);
}

TEST(PartiqlParser, StringLiterals) {
  EXPECT_EQ(value_of("'it''s here'"), "'it's here'");
  EXPECT_EQ(value_of("''"), "''");
  EXPECT_EQ(value_of("'a--b /*c*/'"), "'a--b /*c*/'");
  EXPECT_EQ(value_of("'?'"), "'?'");
  EXPECT_EQ(value_of("'line\nbreak'"), "'line\nbreak'");
}

TEST(PartiqlParser, NumberLiteralsAreCanonical) {
  EXPECT_EQ(value_of("1E3"), "1000");
  EXPECT_EQ(value_of("-1.5e-3"), "-0.0015");
  EXPECT_EQ(value_of("2.50"), "2.5");
  EXPECT_EQ(value_of("-0"), "0");
  EXPECT_EQ(value_of("7.31e6"), "7310000");
  EXPECT_EQ(value_of(".73e1"), "7.3");
  EXPECT_EQ(value_of("-.73e1"), "-7.3");
  EXPECT_EQ(value_of("73100000e-1"), "7310000");
}

TEST(PartiqlParser, SignsFoldIntoNumbers) {
  EXPECT_EQ(value_of("- - 1"), "1");
  EXPECT_EQ(value_of("-/* c */-1"), "1");
  EXPECT_EQ(value_of("- 2"), "-2");
  EXPECT_EQ(value_of("+5"), "5");
  EXPECT_EQ(value_of("- + - 3"), "3");
  EXPECT_EQ(value_of("[- 1, +2]"), "[-1, 2]");
  // A sign before a parameter or a path stays an operator (refused by DynamoDB).
  EXPECT_EQ(value_of("-?"), "(- ?0)");
  EXPECT_EQ(value_of("-n"), "(- n)");
  EXPECT_EQ(value_of("-'a'"), "(- 'a')");
}

TEST(PartiqlParser, OtherLiterals) {
  EXPECT_EQ(value_of("TRUE"), "true");
  EXPECT_EQ(value_of("false"), "false");
  EXPECT_EQ(value_of("Null"), "null");
  EXPECT_EQ(value_of("MISSING"), "MISSING");
  EXPECT_EQ(value_of("[]"), "[]");
  EXPECT_EQ(value_of("{}"), "{}");
  EXPECT_EQ(value_of("[1, 'a', [true], {'k': NULL}]"), "[1, 'a', [true], {'k': null}]");
  EXPECT_EQ(value_of("{'b': 1, 'a': {'c': [2]}}"), "{'a': {'c': [2]}, 'b': 1}");
  EXPECT_EQ(value_of("<<'a', 'b'>>"), "<<'a', 'b'>>");
  EXPECT_EQ(value_of("<<1, 2.5>>"), "<<1, 2.5>>");
  EXPECT_EQ(value_of("[<<1>>]"), "[<<1>>]");
  auto s = parse("SELECT * FROM t WHERE x = <<'a', 'b'>>");
  EXPECT_EQ(s->values[s->node(s->node(s->where).args[1]).ref].type(), AttrType::SS);
  auto n = parse("SELECT * FROM t WHERE x = <<1>>");
  EXPECT_EQ(n->values[n->node(n->node(n->where).args[1]).ref].type(), AttrType::NS);
}

TEST(PartiqlParser, ParametersAreNumberedInTextOrder) {
  auto s = parse("UPDATE t SET a = ?, b = set_add(b, ?) WHERE pk = ? AND n IN [?, 2, ?]");
  EXPECT_EQ(s->parameter_count, 5u);
  EXPECT_EQ(render(*s, s->where), "(AND (= pk ?2) (IN n ?3 2 ?4))");
  EXPECT_EQ(render(*s, s->actions[1].value), "set_add(b ?1)");
}

// --- paths ---

TEST(PartiqlParser, Paths) {
  EXPECT_EQ(where("SELECT * FROM t WHERE a.b[2].c = 1"), "(= a.b[2].c 1)");
  EXPECT_EQ(where("SELECT * FROM t WHERE \"a.b\".\"c d\" = 1"), "(= a.b.c d 1)");
  EXPECT_EQ(where("SELECT * FROM t WHERE m.\"inner\" = 1"), "(= m.inner 1)");
  EXPECT_EQ(where("SELECT * FROM t WHERE \"size\" = 1"), "(= size 1)");
  EXPECT_EQ(where("SELECT * FROM t WHERE l[2147483647] = 1"), "(= l[2147483647] 1)");
  EXPECT_EQ(where("SELECT * FROM t WHERE l[-0] = 1"), "(= l[0] 1)");
  EXPECT_EQ(where("SELECT * FROM t WHERE l[0][1][2] = 1"), "(= l[0][1][2] 1)");
  auto s = parse("SELECT * FROM t WHERE AwardsWon = 1");
  auto where_path = [](const Statement& st) {
    return st.paths[st.node(st.node(st.where).args[0]).ref].elements[0].text;
  };
  EXPECT_EQ(where_path(*s), "AwardsWon");  // not case-folded
  auto quoted = parse("SELECT * FROM t WHERE \"a\"\"b\" = 1");
  EXPECT_EQ(where_path(*quoted), "a\"b");
}

TEST(PartiqlParser, PathSpans) {
  auto s = parse("SELECT * FROM t WHERE m.k[1] = 1");
  const Node& path = s->node(s->node(s->where).args[0]);
  EXPECT_EQ(s->source(path.span), "m.k[1]");
  EXPECT_EQ(s->position(path.span), "1:23:6");
}

// --- precedence ---

TEST(PartiqlParser, Precedence) {
  auto w = [](std::string_view condition) {
    return where("SELECT * FROM t WHERE " + std::string(condition));
  };
  EXPECT_EQ(w("a = 1 OR b = 2 AND c = 3"), "(OR (= a 1) (AND (= b 2) (= c 3)))");
  EXPECT_EQ(w("(a = 1 OR b = 2) AND c = 3"), "(AND (OR (= a 1) (= b 2)) (= c 3))");
  EXPECT_EQ(w("NOT a = 1"), "(NOT (= a 1))");
  EXPECT_EQ(w("NOT a = 1 AND b = 2"), "(AND (NOT (= a 1)) (= b 2))");
  EXPECT_EQ(w("NOT NOT a = 1"), "(NOT (NOT (= a 1)))");
  EXPECT_EQ(w("a BETWEEN 1 AND 5 AND b = 2"), "(AND (BETWEEN a 1 5) (= b 2))");
  EXPECT_EQ(w("a NOT BETWEEN 1 AND 5"), "(NOT BETWEEN a 1 5)");
  EXPECT_EQ(w("a = 1 AND b = 2 AND c = 3"), "(AND (AND (= a 1) (= b 2)) (= c 3))");
  EXPECT_EQ(w("a + 1 - 2 = n"), "(= (- (+ a 1) 2) n)");
  EXPECT_EQ(w("a < b = true"), "(= (< a b) true)");
  EXPECT_EQ(w("attribute_exists(x) = false"), "(= attribute_exists(x) false)");
  EXPECT_EQ(w("(n BETWEEN 0 AND 5) = true"), "(= (BETWEEN n 0 5) true)");
  EXPECT_EQ(w("attribute_exists(x) IN [true, false]"), "(IN attribute_exists(x) true false)");
  EXPECT_EQ(w("attribute_exists(n) = attribute_exists(f)"),
            "(= attribute_exists(n) attribute_exists(f))");
  EXPECT_EQ(w("a * 2 + b / 3 % 4 || c = 1"), "(= (|| (+ (* a 2) (% (/ b 3) 4)) c) 1)");
}

TEST(PartiqlParser, Comparisons) {
  auto w = [](std::string_view condition) {
    return where("SELECT * FROM t WHERE " + std::string(condition));
  };
  EXPECT_EQ(w("a = 1"), "(= a 1)");
  EXPECT_EQ(w("a <> 1"), "(<> a 1)");
  EXPECT_EQ(w("a != 1"), "(<> a 1)");
  EXPECT_EQ(w("a < 1"), "(< a 1)");
  EXPECT_EQ(w("a <= 1"), "(<= a 1)");
  EXPECT_EQ(w("a > 1"), "(> a 1)");
  EXPECT_EQ(w("a >= 1"), "(>= a 1)");
  EXPECT_EQ(w("1 < a"), "(< 1 a)");
  EXPECT_EQ(w("n=n"), "(= n n)");
  auto s = parse("SELECT * FROM t WHERE a != 1");
  EXPECT_EQ(s->node(s->where).comparator, expr::Comparator::kNe);
}

TEST(PartiqlParser, InBetweenIs) {
  auto w = [](std::string_view condition) {
    return where("SELECT * FROM t WHERE " + std::string(condition));
  };
  EXPECT_EQ(w("a IN [1, 'b']"), "(IN a 1 'b')");
  EXPECT_EQ(w("a IN (1, 2)"), "(IN a 1 2)");
  EXPECT_EQ(w("a IN (1)"), "(IN a 1)");
  EXPECT_EQ(w("a NOT IN [1]"), "(NOT IN a 1)");
  EXPECT_EQ(w("a IN []"), "(IN a)");
  EXPECT_EQ(w("a IN ?"), "(IN* a ?0)");
  EXPECT_EQ(w("a IN [[1], <<2>>]"), "(IN a [1] <<2>>)");
  EXPECT_EQ(w("x IS MISSING"), "(IS MISSING x)");
  EXPECT_EQ(w("x IS NOT MISSING"), "(IS NOT MISSING x)");
  EXPECT_EQ(w("x IS NULL"), "(IS NULL x)");
  EXPECT_EQ(w("x is not null"), "(IS NOT null x)");
  EXPECT_EQ(w("x IS BOOL"), "(IS BOOL x)");
  EXPECT_EQ(w("x IS DECIMAL(5, 2)"), "(IS DECIMAL x)");
  EXPECT_EQ(w("x IS DOUBLE PRECISION"), "(IS DOUBLE PRECISION x)");
  const std::pair<std::string_view, IsType> types[] = {
      {"MISSING", IsType::kMissing}, {"NULL", IsType::kNull},
      {"BOOL", IsType::kBoolean},    {"boolean", IsType::kBoolean},
      {"STRING", IsType::kString},   {"NUMERIC", IsType::kNumeric},
      {"BLOB", IsType::kBlob},       {"STRUCT", IsType::kStruct},
      {"TUPLE", IsType::kStruct},    {"LIST", IsType::kList},
      {"INT4", IsType::kOther},      {"CHARACTER VARYING", IsType::kOther},
      {"sexp", IsType::kOther}};
  for (const auto& [name, type] : types) {
    auto s = parse("SELECT * FROM t WHERE x IS " + std::string(name));
    EXPECT_EQ(s->node(s->where).is_type, type) << name;
  }
}

TEST(PartiqlParser, FunctionsAndAggregates) {
  auto s = parse(
      "SELECT * FROM t WHERE BEGINS_WITH(a, 'x') AND contains(b, 1) AND attribute_type(c, 'S') "
      "AND size(d) = 3 AND Attribute_Exists(e) AND attribute_not_exists(f) AND foo(g)");
  std::vector<Function> functions;
  for (const Node& n : s->nodes) {
    if (n.type == NodeType::kFunction) functions.push_back(n.function);
  }
  EXPECT_EQ(functions, (std::vector<Function>{Function::kBeginsWith, Function::kContains,
                                              Function::kAttributeType, Function::kSize,
                                              Function::kAttributeExists,
                                              Function::kAttributeNotExists, Function::kOther}));
  auto count = parse("SELECT COUNT(*), count(pk), sum(n), upper(s), f() FROM t");
  EXPECT_EQ(count->node(count->projection[0].node).type, NodeType::kAggregate);
  EXPECT_TRUE(count->node(count->projection[0].node).star);
  EXPECT_EQ(count->node(count->projection[1].node).function, Function::kCount);
  EXPECT_EQ(count->node(count->projection[2].node).type, NodeType::kAggregate);
  EXPECT_EQ(count->node(count->projection[3].node).type, NodeType::kFunction);
  EXPECT_EQ(count->node(count->projection[4].node).args.size(), 0u);
  EXPECT_EQ(node_name(*count, count->projection[3].node), "upper");
}

TEST(PartiqlParser, OperatorsDynamoDbDoesNotRunStillParse) {
  EXPECT_EQ(where("SELECT * FROM t WHERE a LIKE 'x%'"), "(LIKE a 'x%')");
  EXPECT_EQ(where("SELECT * FROM t WHERE a NOT LIKE 'x%'"), "(NOT LIKE a 'x%')");
  EXPECT_EQ(where("SELECT * FROM t WHERE a = MISSING"), "(= a MISSING)");
}

// --- syntax errors ---

TEST(PartiqlParser, SyntaxErrors) {
  const std::pair<std::string_view, std::string_view> cases[] = {
      {"SLECT * FROM \"T\" WHERE pk = 'a'", "Expected data manipulation"},
      {"SELECT * FROM", "Unexpected term"},
      {"SELECT * FROM \"T\" WHERE", "Unexpected term"},
      {"SELECT * FROM \"T\" WHERE;", "Unexpected term"},
      {"SELECT * FROM \"T\" WHERE   ", "Unexpected term"},
      {"SELECT * FROM \"T\" WHERE NOT", "Unexpected term"},
      {"SELECT * FROM \"T\" WHERE (", "Unexpected term"},
      {"SELECT * FROM \"T\" WHERE pk = 'p1' AND",
       "Missing right-hand side expression of infix operator"},
      {"SELECT * FROM \"T\" WHERE pk = 'p1' OR",
       "Missing right-hand side expression of infix operator"},
      {"SELECT * FROM \"T\" WHERE pk =", "Missing right-hand side expression of infix operator"},
      {"SELECT * FROM \"T\" WHERE pk IN", "Missing right-hand side expression of infix operator"},
      {"SELECT * FROM \"T\" WHERE pk BETWEEN",
       "Missing right-hand side expression of infix operator"},
      {"SELECT * FROM \"T\" WHERE ORDER BY pk", "Unexpected keyword"},
      {"SELECT * FROM \"T\" WHERE IS NULL", "Unexpected operator"},
      {"SELECT * FROM \"T\" WHERE pk = LIKE", "Unexpected operator"},
      {"SELECT * FROM \"T\" WHERE pk = 'a' AND x IS FOO", "Expected type name"},
      {"SELECT * FROM \"T\" WHERE x IS", "Expected type name"},
      {"DELETE FROM", "Expected identifier for simple path"},
      {"DELETE FROM;", "Expected identifier for simple path"},
      {"DELETE FROM WHERE pk = 'a'", "Expected identifier for simple path"},
      {"UPDATE", "Expected identifier for simple path"},
      {"INSERT INTO VALUE {'pk': 'a'}", "Expected identifier for simple path"},
      {"UPDATE t SET = 1 WHERE pk = 'a'", "Expected identifier for simple path"},
      {"SELECT * FROM t WHERE m.inner = 1", "Invalid path dot component"},
      {"SELECT * FROM t WHERE m. = 1", "Invalid path dot component"},
      {"SELECT * FROM t WHERE m.* = 1", "Invalid path dot component"},
      {"SELECTT * FROMM \"T\"", "Expected data manipulation"},
      {"SELECT * FROM \"T\" WHERE pk = 1 foo", "Unexpected token after expression"},
      {"SELECT * FROM \"T\" WHERE pk = 1)", "Unexpected token after expression"},
      {"SELECT * FROM \"T\" WHERE pk = 1 e5", "Unexpected token after expression"},
      {"SELECT * FROM \"T\" ORDER BY pk WHERE pk = 'a'", "Unexpected token after expression"},
      {"DELETE FROM \"T\" WHERE pk = 'a' ORDER BY pk", "Unexpected token after expression"},
      {"INSERT INTO \"T\" t VALUE {'pk': 'a'}", "Unexpected token after expression"},
      {"FROM \"T\" SET c = 1 WHERE pk = 'a'", "Unexpected token after expression"},
      {"UPDATE t SET a = 1 WHERE pk = 'a' REMOVE b", "Unexpected token after expression"},
      {"UPDATE t REMOVE a, b WHERE pk = 'a'", "Unexpected token after expression"},
      {"SELECT * FROM t LIMIT 5", "Unexpected token after expression"},
      {"UPDATE t WHERE pk = 'a'", "Expected data manipulation"},
      {"FROM t WHERE pk = 'a'", "Expected data manipulation"},
      {"SELECT FROM \"T\"", "Expected data manipulation"},
      {"", "Unexpected term"},
      {"-- nothing", "Unexpected term"},
      {";", "Unexpected term"},
      {"SELECT", "Unexpected term"},
      {"SELECT 1", "Expected FROM after SELECT list"},
      {"SELECT * WHERE pk = 'a'", "Expected FROM after SELECT list"},
      {"DELETE t WHERE pk = 'a'", "Expected FROM after DELETE"},
      {"SELECT * FROM t WHERE x BETWEEN 1", "Expected AND"},
      {"SELECT * FROM t WHERE x BETWEEN 1 AND", "Unexpected term"},
      {"SELECT * FROM t WHERE (pk = 'a'", "Expected RIGHT_PAREN"},
      {"SELECT * FROM t WHERE f(a", "Expected RIGHT_PAREN"},
      {"SELECT * FROM t WHERE x = [1, 2", "Expected RIGHT_BRACKET"},
      {"SELECT * FROM t WHERE x = [1 2]", "Expected RIGHT_BRACKET"},
      {"SELECT * FROM t WHERE x = {'a' 1}", "Expected COLON"},
      {"SELECT * FROM t WHERE x = {'a': 1", "Expected RIGHT_CURLY"},
      {"SELECT * FROM t WHERE x = <<1", "Expected RIGHT_DOUBLE_ANGLE_BRACKET"},
      {"SELECT * FROM t WHERE x = [1,]", "Unexpected term"},
      {"SELECT * FROM t WHERE l[1 = 1", "Expected RIGHT_BRACKET"},
      {"SELECT * FROM t WHERE x IN (1, 2", "Expected RIGHT_PAREN"},
      {"UPDATE t SET a 1 WHERE pk = 'a'", "Expected '='"},
      {"UPDATE t SET a = 1 WHERE pk = 'a' RETURNING *",
       "Expected ( MODIFIED | ALL ) ( NEW | OLD ) in each returning element."},
      {"UPDATE t SET a = 1 WHERE pk = 'a' RETURNING ALL *",
       "Expected ( MODIFIED | ALL ) ( NEW | OLD ) in each returning element."},
      {"SELECT * FROM t AS", "Expected identifier for alias"},
      {"SELECT * FROM t ORDER pk", "Expected BY"},
      {"SELECT * FROM t WHERE size = 1", "Unexpected keyword"},
      {"SELECT * FROM t WHERE value = 1", "Unexpected keyword"},
      {"SELECT * FROM t WHERE a = *", "Unexpected operator"},
      {"SELECT * FROM t WHERE ()", "Unexpected term"},
      {"SELECT * FROM t WHERE a IS DECIMAL(x)", "Expected number"},
  };
  for (const auto& [text, detail] : cases) EXPECT_EQ(parse_error(text), malformed(detail)) << text;
}

TEST(PartiqlParser, UnterminatedQuotesHaveAnEmptyDetail) {
  EXPECT_EQ(parse_error("SELECT * FROM \"abc"), malformed(""));
  EXPECT_EQ(parse_error("SELECT * FROM t WHERE pk = 'oops"), malformed(""));
}

TEST(PartiqlParser, BareExpressionsAreUnsupportedOperations) {
  EXPECT_EQ(parse_error("x IS INT4"), "Unsupported operation: IsType");
  EXPECT_EQ(parse_error("x IS CHARACTER VARYING"), "Unsupported operation: IsType");
  EXPECT_EQ(parse_error("1"), "Unsupported operation: Lit");
  EXPECT_EQ(parse_error("x"), "Unsupported operation: Id");
  EXPECT_EQ(parse_error("a.b"), "Unsupported operation: Path");
  EXPECT_EQ(parse_error("a = 1"), "Unsupported operation: Eq");
  EXPECT_EQ(parse_error("?"), "Unsupported operation: Parameter");
  EXPECT_EQ(parse_error("upper(x)"), "Unsupported operation: Call");
  EXPECT_EQ(parse_error("EXISTS(x)"), "Unsupported operation: Call");
  EXPECT_EQ(parse_error("EXISTS(DELETE FROM t WHERE pk = 'a')"), "Unsupported operation: Call");
  EXPECT_EQ(parse_error("SELECT * FROM t WHERE a = (SELECT * FROM u)"),
            "Unsupported operation: Select");
  EXPECT_EQ(parse_error("SELECT * FROM t WHERE a = (DELETE FROM u)"), "Unsupported operation: Dml");
}

TEST(PartiqlParser, RefusedForms) {
  const std::pair<std::string_view, std::string_view> cases[] = {
      {"SELECT * FROM \"T\" t WHERE pk = 'a'", "Aliasing is not supported"},
      {"SELECT * FROM \"T\" AS t WHERE pk = 'a'", "Aliasing is not supported"},
      {"SELECT * FROM \"T\" AT i", "Aliasing is not supported"},
      {"SELECT a AS b FROM \"T\"", "Aliasing is not supported"},
      {"UPDATE \"T\" t SET a = 1 WHERE pk = 'a'", "Aliasing is not supported"},
      {"UPDATE \"T\" AS t SET a = 1 WHERE pk = 'a'", "Aliasing is not supported"},
      {"DELETE FROM \"T\" t WHERE pk = 'a'", "Aliasing is not supported"},
      {"FROM \"T\" AS t WHERE pk = 'a' SET a = 1", "Aliasing is not supported"},
      {"SELECT * FROM a; SELECT * FROM b", "Only one operation is allowed in a statement."},
      {"SELECT * FROM t;;", "Only one operation is allowed in a statement."},
      {"SELECT * FROM t, u", "Only select from a single table or index is supported."},
      {"INSERT INTO t <<{'pk': 'a'}>>",
       "Unsupported operation: Inserting multiple items in a single statement is not supported, "
       "use \"INSERT INTO tableName VALUE item\" instead"},
      {"INSERT INTO t VALUE ?",
       "Unsupported format in item expression. Please use struct format {...} to express item "
       "values for insert statement."},
      {"INSERT INTO t VALUE {'pk': 'a'} AT 1", "AT is not supported in insert statements."},
      {"INSERT INTO t VALUE {'pk': 'a'} RETURNING ALL OLD *",
       "RETURNING is not supported in INSERT"},
      {"UPDATE t SET a = 1 WHERE pk = 'a' RETURNING ALL OLD a",
       "Expected '*' after ( MODIFIED | ALL ) ( NEW | OLD ) in RETURNING clause"},
      {"UPDATE t SET a = 1 WHERE pk = 'a' RETURNING ALL OLD *, ALL NEW *",
       "Invalid syntax with multiple returning elements in RETURNING clause"},
      {"SELECT *, a FROM t",
       "Other attributes should not be present in the projection when '*' is used."},
      {"SELECT a, * FROM t",
       "Other attributes should not be present in the projection when '*' is used."},
      {"SELECT *, * FROM t",
       "Other attributes should not be present in the projection when '*' is used."},
  };
  for (const auto& [text, message] : cases) EXPECT_EQ(parse_error(text), message) << text;
}

TEST(PartiqlParser, SyntaxErrorsComeBeforeRefusedForms) {
  EXPECT_EQ(parse_error("SELECT * FROM \"T\" t WHERE"), malformed("Unexpected term"));
  EXPECT_EQ(parse_error("SELECT * FROM \"T\" t WHERE n = 1e999"), "Aliasing is not supported");
}

// --- literal rules ---

std::string literal_error(std::string_view literal) {
  return parse_error("SELECT * FROM t WHERE x = " + std::string(literal));
}

TEST(PartiqlParser, NumberLiteralErrorsNameTheirPlace) {
  const std::string overflow =
      "Number overflow. Attempting to store a number with magnitude larger than supported range";
  const std::string underflow =
      "Number underflow. Attempting to store a number with magnitude smaller than supported range";
  const std::string digits = "Attempting to store more than 38 significant digits in a Number";
  EXPECT_EQ(literal_error("1e200"), overflow + " under root");
  EXPECT_EQ(literal_error("-1e200"), overflow + " under root");
  EXPECT_EQ(literal_error("1e-200"), underflow + " under root");
  EXPECT_EQ(literal_error("1.23456789012345678901234567890123456789"), digits + " under root");
  EXPECT_EQ(literal_error("1e2147483647"), underflow + " under root");
  EXPECT_EQ(literal_error("[1, 1e999]"), overflow + " under root[1]");
  EXPECT_EQ(literal_error("{'x': 1e999}"), overflow + " under root.x");
  EXPECT_EQ(literal_error("[1, {'a': [0, [1e999]]}]"), overflow + " under root[1].a[1][0]");
  EXPECT_EQ(parse_error("INSERT INTO t VALUE {'pk': 'a', 'm': {'x': 1e999}}"),
            overflow + " under root.x");
  EXPECT_EQ(parse_error("UPDATE t SET n = [1e999] WHERE pk = 'a'"), overflow + " under root[0]");
  EXPECT_EQ(parse_error("SELECT * FROM t WHERE n IN [1, [1e999]]"), overflow + " under root[0]");
  // The largest values that are in range.
  EXPECT_EQ(literal_error("9.9999999999999999999999999999999999999E+125"), "<no error>");
  EXPECT_EQ(literal_error("1E-130"), "<no error>");
}

TEST(PartiqlParser, SetLiterals) {
  EXPECT_EQ(literal_error("<<>>"), "Empty bags are not supported");
  const std::string type =
      "Unsupported data type in Bag. DynamoDB only supports either numbers or strings in bags";
  EXPECT_EQ(literal_error("<<1, 'a'>>"), type);
  EXPECT_EQ(literal_error("<<[1]>>"), type);
  EXPECT_EQ(literal_error("<<NULL>>"), type);
  EXPECT_EQ(literal_error("<<true>>"), type);
  EXPECT_EQ(literal_error("<<<<1>>>>"), type);
  EXPECT_EQ(literal_error("<<'a', 'a'>>"),
            "One or more parameter values were invalid: Input collection [a, a] contains "
            "duplicates.");
  EXPECT_EQ(literal_error("<<1, 2, 1>>"),
            "One or more parameter values were invalid: Input collection [1, 2, 1] contains "
            "duplicates.");
  EXPECT_EQ(literal_error("<<2, 2.0>>"),
            "One or more parameter values were invalid: Input collection [2, 2.0] contains "
            "duplicates! under root");
  EXPECT_EQ(literal_error("[<<-1, - 1.0>>]"),
            "One or more parameter values were invalid: Input collection [-1, -1.0] contains "
            "duplicates! under root[0]");
  EXPECT_EQ(literal_error("<<'a', 'b'>>"), "<no error>");
  EXPECT_EQ(literal_error("<<1, 2.5, -3>>"), "<no error>");
}

TEST(PartiqlParser, NonConstantsInsideLiterals) {
  EXPECT_EQ(parse_error("UPDATE t SET x = [?] WHERE pk = 'a'"),
            "Unsupported data type: Parameter under key root[0] at 1:19:1");
  EXPECT_EQ(parse_error("INSERT INTO t VALUE {'pk': 'a', 'm': {'k': ?}}"),
            "Unsupported data type: Parameter under key root.k at 1:44:1");
  EXPECT_EQ(parse_error("INSERT INTO t VALUE {'pk': 'a', 'x': set_add(a, <<1>>)}"),
            "Unsupported data type: set_add under key root at 1:38:7");
  EXPECT_EQ(parse_error("INSERT INTO t VALUE {'pk': 'a', 'x': [1, SET_ADD(a, <<1>>)]}"),
            "Unsupported data type: set_add under key root[1] at 1:42:7");
  EXPECT_EQ(parse_error("INSERT INTO t VALUE {'pk': a}"),
            "Unsupported data type: Id under key root at 1:28:1");
  EXPECT_EQ(literal_error("<<?>>"), "Unsupported data type: Parameter under key root[0] at 1:29:1");
  EXPECT_EQ(literal_error("{'a': [1, n]}"),
            "Unsupported data type: Id under key root.a[1] at 1:37:1");
  // Allowed: a parameter as an IN operand or as a whole INSERT attribute.
  EXPECT_EQ(parse_error("SELECT * FROM t WHERE n IN [?, 2]"), "<no error>");
  EXPECT_EQ(parse_error("SELECT * FROM t WHERE n IN (?, ?)"), "<no error>");
  EXPECT_EQ(parse_error("INSERT INTO t VALUE {'pk': ?, 'data': ?}"), "<no error>");
  // Not allowed: a parameter inside an IN operand.
  EXPECT_EQ(parse_error("SELECT * FROM t WHERE n IN [[?]]"),
            "Unsupported data type: Parameter under key root[0] at 1:30:1");
}

std::string nested_lists(std::size_t levels) {
  return std::string(levels, '[') + "1" + std::string(levels, ']');
}

TEST(PartiqlParser, LiteralNesting) {
  EXPECT_EQ(literal_error(nested_lists(31)), "<no error>");
  std::string path = "root";
  for (int i = 0; i < 31; ++i) path += "[0]";
  EXPECT_EQ(literal_error(nested_lists(32)),
            "Nesting Levels have exceeded supported limits under " + path);
  EXPECT_EQ(literal_error(nested_lists(40)),
            "Nesting Levels have exceeded supported limits under " + path);
  std::string maps = "1";
  for (int i = 0; i < 32; ++i) maps = "{'a': " + maps + "}";
  std::string map_path = "root";
  for (int i = 0; i < 31; ++i) map_path += ".a";
  EXPECT_EQ(literal_error(maps), "Nesting Levels have exceeded supported limits under " + map_path);
  // In an INSERT the item is not a level: its attributes are.
  EXPECT_EQ(parse_error("INSERT INTO t VALUE {'pk': 'a', 'l': " + nested_lists(31) + "}"),
            "<no error>");
  // Sets are no level.
  EXPECT_EQ(literal_error(nested_lists(30).insert(30, "<<1>>,")), "<no error>");
}

TEST(PartiqlParser, MapKeys) {
  EXPECT_EQ(literal_error("{1: 'a'}"),
            "Tuple keys must be of type String. Actual type: N under root");
  EXPECT_EQ(literal_error("{'m': {true: 1}}"),
            "Tuple keys must be of type String. Actual type: BOOL under root.m");
  EXPECT_EQ(literal_error("{a: 1}"),
            "Tuple keys must be of type String. Actual type: Id under root");
  EXPECT_EQ(literal_error("{'a': 1, 'a': 2}"), "Duplicate keys in tuple. Key: a under root");
  EXPECT_EQ(parse_error("INSERT INTO t VALUE {'pk': 'a', 'pk': 'b'}"),
            "Duplicate keys in tuple. Key: pk under root");
}

TEST(PartiqlParser, IonLiteralsAreRefused) {
  EXPECT_EQ(literal_error("`{a: 1}`"), "Ion Literals are not supported: {a: 1} under key root");
  EXPECT_EQ(literal_error("[1, `2`]"), "Ion Literals are not supported: 2 under key root[1]");
}

TEST(PartiqlParser, ListIndexes) {
  EXPECT_EQ(parse_error("SELECT l[-1] FROM t"),
            "List index is not within the allowable range; index: [-1] at 1:11:1");
  EXPECT_EQ(parse_error("SELECT l[2147483648] FROM t"),
            "List index is not within the allowable range; index: [2147483648] at 1:10:10");
  EXPECT_EQ(parse_error("SELECT l[2147483647] FROM t"), "<no error>");
  EXPECT_EQ(parse_error("SELECT l[-0] FROM t"), "<no error>");
  EXPECT_EQ(parse_error("UPDATE t SET l[- 3] = 1 WHERE pk = 'a'"),
            "List index is not within the allowable range; index: [-3] at 1:18:1");
  EXPECT_EQ(parse_error("SELECT l[1.5] FROM t"),
            "List index is not within the allowable range; index: [1.5] at 1:10:3");
  EXPECT_EQ(parse_error("SELECT l['a'] FROM t"),
            "List index is not within the allowable range; index: ['a'] at 1:10:3");
  EXPECT_EQ(parse_error("SELECT l[?] FROM t"),
            "List index is not within the allowable range; index: [?] at 1:10:1");
}

TEST(PartiqlParser, TheFirstLiteralErrorInTextOrderWins) {
  EXPECT_EQ(parse_error("SELECT * FROM t WHERE a = <<>> AND b = 1e999"),
            "Empty bags are not supported");
  EXPECT_EQ(parse_error("SELECT * FROM t WHERE b = 1e999 AND a = <<>>"),
            "Number overflow. Attempting to store a number with magnitude larger than supported "
            "range under root");
  // A syntax error anywhere wins over a literal error, a lexical one over both.
  EXPECT_EQ(parse_error("SELECT * FROM t WHERE n = 1e999 AND"),
            malformed("Missing right-hand side expression of infix operator"));
  EXPECT_EQ(parse_error("SELECT * FROM t WHERE n = 1e999 AND #"), malformed(""));
}

TEST(PartiqlParser, PositionsCountLinesAndCharacters) {
  EXPECT_EQ(parse_error("UPDATE t\n  SET x = [?]\nWHERE pk = 'a'"),
            "Unsupported data type: Parameter under key root[0] at 2:12:1");
  // Columns count characters, not bytes: 'é' is one.
  EXPECT_EQ(parse_error("UPDATE t SET \"é\" = [?] WHERE pk = 'a'"),
            "Unsupported data type: Parameter under key root[0] at 1:21:1");
}

TEST(PartiqlParser, DeepInputIsRefusedWithoutExhaustingTheStack) {
  EXPECT_NE(parse_error("SELECT * FROM t WHERE " + std::string(5000, '(') + "a = 1" +
                        std::string(5000, ')')),
            "<no error>");
  EXPECT_EQ(parse_error("SELECT * FROM t WHERE x = " + std::string(5000, '[')),
            parse_error("SELECT * FROM t WHERE x = " + nested_lists(40)));
  std::string nots;
  for (int i = 0; i < 3000; ++i) nots += "NOT ";
  EXPECT_NE(parse_error("SELECT * FROM t WHERE " + nots + "a = 1"), "<no error>");
  std::string signs;
  for (int i = 0; i < 3000; ++i) signs += "- ";
  EXPECT_NE(parse_error("SELECT * FROM t WHERE a = " + signs + "1"), "<no error>");
  // Reasonable nesting parses.
  EXPECT_EQ(
      parse_error("SELECT * FROM t WHERE " + std::string(50, '(') + "a = 1" + std::string(50, ')')),
      "<no error>");
}

}  // namespace
}  // namespace kumo::partiql
