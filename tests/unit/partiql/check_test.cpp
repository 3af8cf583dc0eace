// The checks made on a parsed statement and its parameters before the table is looked up:
// each refusal with DynamoDB's text, their order, and statements that pass.
#include "partiql/check.h"

#include <gtest/gtest.h>

#include "partiql_test_util.h"

namespace kumo::partiql {
namespace {

using test::B;
using test::BOOL;
using test::BS;
using test::check_error;
using test::N;
using test::NS;
using test::NUL;
using test::S;
using test::SS;

const char* const kOk = "<no error>";

TEST(PartiqlCheck, ParameterCount) {
  const std::string message = "Number of parameters in request and statement don't match.";
  EXPECT_EQ(check_error("SELECT * FROM t WHERE pk = ?"), message);
  EXPECT_EQ(check_error("SELECT * FROM t WHERE pk = ?", {S("a"), S("b")}), message);
  EXPECT_EQ(check_error("SELECT * FROM t WHERE pk = 'a'", {S("a")}), message);
  EXPECT_EQ(check_error("SELECT * FROM t WHERE pk = ?", {S("a")}), kOk);
  // The count comes first.
  EXPECT_EQ(check_error("SELECT * FROM \"\" WHERE pk = ?"), message);
}

TEST(PartiqlCheck, EmptyPathComponent) {
  const std::string message = "Path component cannot be an empty string";
  EXPECT_EQ(check_error("SELECT * FROM \"\""), message);
  EXPECT_EQ(check_error("SELECT * FROM \"T\".\"\""), message);
  EXPECT_EQ(check_error("SELECT * FROM \"\".\"\".\"x\""), message);
  EXPECT_EQ(check_error("UPDATE \"\" SET a = 1 WHERE pk = 'a'"), message);
  EXPECT_EQ(check_error("DELETE FROM \"\" WHERE pk = 'a'"), message);
  EXPECT_EQ(check_error("INSERT INTO \"\" VALUE {'pk': 'a'}"), message);
  EXPECT_EQ(check_error("SELECT * FROM \"\" WHERE a < true"), message);
}

TEST(PartiqlCheck, OrderingOperandTypes) {
  auto message = [](std::string_view op, std::string_view type) {
    return "Incorrect operand type for operator or function; operator or function: " +
           std::string(op) + ", operand type: " + std::string(type);
  };
  EXPECT_EQ(check_error("SELECT * FROM t WHERE a < TRUE"), message("<", "BOOL"));
  EXPECT_EQ(check_error("SELECT * FROM t WHERE a >= NULL"), message(">=", "NULL"));
  EXPECT_EQ(check_error("SELECT * FROM t WHERE a > [1]"), message(">", "L"));
  EXPECT_EQ(check_error("SELECT * FROM t WHERE a <= {'x': 1}"), message("<=", "M"));
  EXPECT_EQ(check_error("SELECT * FROM t WHERE <<'a'>> < a"), message("<", "SS"));
  EXPECT_EQ(check_error("SELECT * FROM t WHERE a < <<1>>"), message("<", "NS"));
  EXPECT_EQ(check_error("SELECT * FROM t WHERE a < ?", {BS({"x"})}), message("<", "BS"));
  EXPECT_EQ(check_error("SELECT * FROM t WHERE a < ?", {BOOL(true)}), message("<", "BOOL"));
  EXPECT_EQ(check_error("SELECT * FROM t WHERE a BETWEEN 1 AND [2]"), message("BETWEEN", "L"));
  EXPECT_EQ(check_error("SELECT * FROM t WHERE a NOT BETWEEN ? AND 2", {NUL()}),
            message("BETWEEN", "NULL"));
  EXPECT_EQ(check_error("SELECT * FROM t WHERE (a = 1) < 2"), message("<", "BOOL"));
  EXPECT_EQ(check_error("SELECT * FROM t WHERE attribute_exists(a) > 2"), message(">", "BOOL"));
  // S, N and B order; an S against an N simply matches nothing.
  EXPECT_EQ(check_error("SELECT * FROM t WHERE a < 'x' AND b > 1 AND c <= ?", {B("b")}), kOk);
  EXPECT_EQ(check_error("SELECT * FROM t WHERE 'a' < 1"), kOk);
  // = and <> take every type.
  EXPECT_EQ(check_error("SELECT * FROM t WHERE a = TRUE AND b <> [1] AND c = NULL"), kOk);
}

TEST(PartiqlCheck, ArithmeticOperandTypes) {
  auto message = [](std::string_view op, std::string_view type) {
    return "Incorrect operand type for operator or function; operator or function: " +
           std::string(op) + ", operand type: " + std::string(type);
  };
  EXPECT_EQ(check_error("UPDATE t SET n = n + 'a' WHERE pk = 'a'"), message("+", "S"));
  EXPECT_EQ(check_error("UPDATE t SET n = n - NULL WHERE pk = 'a'"), message("-", "NULL"));
  EXPECT_EQ(check_error("UPDATE t SET n = n + [1] WHERE pk = 'a'"), message("+", "L"));
  EXPECT_EQ(check_error("UPDATE t SET n = ? + n WHERE pk = 'a'", {S("x")}), message("+", "S"));
  EXPECT_EQ(check_error("UPDATE t SET n = n + 1, m = m - ? WHERE pk = 'a'", {N("2")}), kOk);
  EXPECT_EQ(check_error("UPDATE t SET n = n - - 2 WHERE pk = 'a'"), kOk);
}

TEST(PartiqlCheck, OperandTypesInTextOrder) {
  const std::string plus =
      "Incorrect operand type for operator or function; operator or function: +, operand type: S";
  const std::string less =
      "Incorrect operand type for operator or function; operator or function: <, operand type: "
      "BOOL";
  EXPECT_EQ(check_error("UPDATE t SET n = n + 'a' WHERE a < true"), plus);
  EXPECT_EQ(check_error("FROM t WHERE a < true SET n = n + 'a'"), less);
  // Operand types come before the table path and projection checks.
  EXPECT_EQ(check_error("UPDATE \"T\".\"i\" SET n = n + 'a' WHERE pk = 'a'"), plus);
  EXPECT_EQ(check_error("SELECT * FROM \"a\".\"b\".\"c\" WHERE a < true"), less);
}

TEST(PartiqlCheck, TablePath) {
  EXPECT_EQ(check_error("SELECT * FROM \"t\".\"i\".\"x\""),
            "A path may contain at most 2 components in the FROM clause");
  EXPECT_EQ(check_error("EXISTS(SELECT * FROM a.b.c WHERE pk = 'a' AND n = 1)"),
            "A path may contain at most 2 components in the FROM clause");
  EXPECT_EQ(check_error("SELECT * FROM 1"),
            "Only select from a single table or index is supported.");
  EXPECT_EQ(check_error("SELECT * FROM t[0]"),
            "Only select from a single table or index is supported.");
  EXPECT_EQ(check_error("INSERT INTO \"T\".\"idx\" VALUE {'pk': 'a'}"),
            "FROM clause may only contain a single table name in data manipulation statements");
  for (std::string_view text :
       {"UPDATE \"T\".\"idx\" SET a = 1 WHERE pk = 'a'", "DELETE FROM \"T\".\"idx\" WHERE pk = 'a'",
        "FROM \"T\".idx WHERE pk = 'a' SET a = 1", "UPDATE t[1] SET a = 1 WHERE pk = 'a'"}) {
    EXPECT_EQ(check_error(text), "This operation is not supported on an index") << text;
  }
  EXPECT_EQ(check_error("SELECT * FROM \"T\".\"idx\" WHERE pk = 'a'"), kOk);
  // Before the projection.
  EXPECT_EQ(check_error("SELECT COUNT(*) FROM a.b.c"),
            "A path may contain at most 2 components in the FROM clause");
}

TEST(PartiqlCheck, Projection) {
  EXPECT_EQ(check_error("SELECT attribute_exists(ss) FROM t"),
            "Unexpected path component at 1:8:16");
  EXPECT_EQ(check_error("SELECT COUNT(*) FROM t"), "Unexpected path component at 1:8:5");
  EXPECT_EQ(check_error("SELECT pk, COUNT(*) FROM t"), "Unexpected path component at 1:12:5");
  EXPECT_EQ(check_error("SELECT COUNT(pk) FROM t"), "Unexpected path component at 1:8:5");
  EXPECT_EQ(check_error("SELECT count(*) FROM t WHERE pk = 'a'"),
            "Unexpected path component at 1:8:5");
  EXPECT_EQ(check_error("SELECT 1 FROM t"), "Unexpected path component at 1:8:1");
  EXPECT_EQ(check_error("SELECT a, a FROM t"), "Duplicate identifiers in select clause: a");
  EXPECT_EQ(check_error("SELECT m.k[0], b, m.k[0] FROM t"),
            "Duplicate identifiers in select clause: k[0]");
  EXPECT_EQ(check_error("SELECT m.k, n.k, l[0], l[1] FROM t"), kOk);
}

TEST(PartiqlCheck, DeleteReturning) {
  for (std::string_view variant : {"MODIFIED OLD", "ALL NEW", "MODIFIED NEW"}) {
    EXPECT_EQ(check_error("DELETE FROM t WHERE pk = 'a' RETURNING " + std::string(variant) + " *"),
              "Invalid returning clause: RETURNING " + std::string(variant) +
                  " *. Only RETURNING ALL OLD * is allowed in DELETE statements.");
  }
  EXPECT_EQ(check_error("DELETE FROM t WHERE pk = 'a' RETURNING ALL OLD *"), kOk);
  for (std::string_view variant : {"ALL OLD", "MODIFIED OLD", "ALL NEW", "MODIFIED NEW"}) {
    EXPECT_EQ(
        check_error("UPDATE t SET a = 1 WHERE pk = 'a' RETURNING " + std::string(variant) + " *"),
        kOk);
  }
}

TEST(PartiqlCheck, UnknownFunctions) {
  EXPECT_EQ(check_error("SELECT * FROM t WHERE set_add(a, <<1>>)"),
            "Unrecognized function: set_add at 1:23:7");
  EXPECT_EQ(check_error("SELECT * FROM t WHERE exists(a)"),
            "Unrecognized function: exists at 1:23:6");
  EXPECT_EQ(check_error("SELECT * FROM t WHERE EXISTS(a)"),
            "Unrecognized function: exists at 1:23:6");
  EXPECT_EQ(check_error("SELECT * FROM t WHERE Foo(a) = 1"),
            "Unrecognized function: foo at 1:23:3");
  EXPECT_EQ(check_error("SELECT * FROM t WHERE count(*) > 1"),
            "Unrecognized function: count at 1:23:5");
  EXPECT_EQ(check_error("SELECT * FROM t WHERE list_append(a, b) = c"),
            "Unrecognized function: list_append at 1:23:11");
  EXPECT_EQ(check_error("UPDATE t SET x = size(x) WHERE pk = 'a'"),
            "Unrecognized function: size at 1:18:4");
  EXPECT_EQ(check_error("UPDATE t SET x = if_not_exists(x, 1) WHERE pk = 'a'"),
            "Unrecognized function: if_not_exists at 1:18:13");
  EXPECT_EQ(check_error("UPDATE t SET x = attribute_exists(x) WHERE pk = 'a'"),
            "Unrecognized function: attribute_exists at 1:18:16");
}

TEST(PartiqlCheck, ConditionFunctions) {
  EXPECT_EQ(
      check_error("SELECT * FROM t WHERE attribute_exists('ss')"),
      "Operator or function requires a document path; operator or function: attribute_exists");
  EXPECT_EQ(
      check_error("SELECT * FROM t WHERE ATTRIBUTE_EXISTS(?)", {S("ss")}),
      "Operator or function requires a document path; operator or function: attribute_exists");
  EXPECT_EQ(check_error("SELECT * FROM t WHERE attribute_not_exists(1)"),
            "Operator or function requires a document path; operator or function: "
            "attribute_not_exists");
  EXPECT_EQ(check_error("SELECT * FROM t WHERE attribute_type('x', 'S')"),
            "Operator or function requires a document path; operator or function: attribute_type");
  auto count = [](std::string_view f, int n) {
    return "Incorrect number of operands for operator or function; operator or function: " +
           std::string(f) + ", number of operands: " + std::to_string(n);
  };
  EXPECT_EQ(check_error("SELECT * FROM t WHERE attribute_exists(a, b)"),
            count("attribute_exists", 2));
  EXPECT_EQ(check_error("SELECT * FROM t WHERE attribute_not_exists()"),
            count("attribute_not_exists", 0));
  EXPECT_EQ(check_error("SELECT * FROM t WHERE begins_with(a)"), count("begins_with", 1));
  EXPECT_EQ(check_error("SELECT * FROM t WHERE contains(a, b, c)"), count("contains", 3));
  EXPECT_EQ(check_error("SELECT * FROM t WHERE size(a, b) = 1"), count("size", 2));
  EXPECT_EQ(check_error("SELECT * FROM t WHERE attribute_type(a)"), count("attribute_type", 1));
  auto type = [](std::string_view t) {
    return "Incorrect operand type for operator or function; operator or function: "
           "attribute_type, operand type: " +
           std::string(t);
  };
  EXPECT_EQ(check_error("SELECT * FROM t WHERE attribute_type(l, 1)"), type("N"));
  EXPECT_EQ(check_error("SELECT * FROM t WHERE attribute_type(l, true)"), type("BOOL"));
  EXPECT_EQ(check_error("SELECT * FROM t WHERE attribute_type(l, ?)", {N("1")}), type("N"));
  EXPECT_EQ(
      check_error("SELECT * FROM t WHERE attribute_type(x, 'X')"),
      "Invalid attribute type name found; type: X, valid types: {N,BS,L,B,NULL,M,S,SS,NS,BOOL}");
  EXPECT_EQ(
      check_error("SELECT * FROM t WHERE attribute_type(x, ?)", {S("s")}),
      "Invalid attribute type name found; type: s, valid types: {N,BS,L,B,NULL,M,S,SS,NS,BOOL}");
  for (std::string_view t : {"S", "SS", "N", "NS", "B", "BS", "BOOL", "NULL", "L", "M"}) {
    EXPECT_EQ(check_error("SELECT * FROM t WHERE attribute_type(x, '" + std::string(t) + "')"), kOk)
        << t;
  }
}

TEST(PartiqlCheck, In) {
  const std::string shape =
      "IN operator must have a left hand argument of type Variable Reference and right hand "
      "argument of type Seq with at least one member";
  EXPECT_EQ(check_error("SELECT * FROM t WHERE a IN []"), shape);
  EXPECT_EQ(check_error("SELECT * FROM t WHERE a IN ?", {test::L({S("a")})}), shape);
  EXPECT_EQ(check_error("SELECT * FROM t WHERE a IN b"), shape);
  auto in_list = [](int n) {
    std::string list = "[";
    for (int i = 0; i < n; ++i) list += (i ? ", " : "") + std::to_string(i);
    return "SELECT * FROM t WHERE a IN " + list + "]";
  };
  EXPECT_EQ(check_error(in_list(100)), kOk);
  EXPECT_EQ(check_error(in_list(101)),
            "The IN operator is provided with too many operands; number of operands: 101");
  EXPECT_EQ(check_error("UPDATE t SET a = 1 WHERE pk = 'a' AND " + in_list(101).substr(22)),
            "The IN operator is provided with too many operands; number of operands: 101");
}

TEST(PartiqlCheck, IsAndMissing) {
  EXPECT_EQ(check_error("SELECT * FROM t WHERE attribute_exists(a) IS NULL"),
            "The left hand side argument to IS must be a Variable Reference, Literal, or Path");
  EXPECT_EQ(check_error("SELECT * FROM t WHERE ? IS NULL", {S("a")}),
            "The left hand side argument to IS must be a Variable Reference, Literal, or Path");
  const std::string supported =
      ". Supported data types are [MISSING, NULL, BOOLEAN, BLOB, STRING, NUMERIC, STRUCT, "
      "TUPLE, LIST]";
  EXPECT_EQ(check_error("SELECT * FROM t WHERE x IS INT4"),
            "Unsupported data type for IS operator: INT4" + supported);
  EXPECT_EQ(check_error("SELECT * FROM t WHERE x IS NOT double precision"),
            "Unsupported data type for IS operator: DOUBLE PRECISION" + supported);
  EXPECT_EQ(check_error("SELECT * FROM t WHERE a = MISSING"),
            "MISSING must be compared using IS operator");
  EXPECT_EQ(check_error("SELECT * FROM t WHERE a IN [1, MISSING]"),
            "MISSING must be compared using IS operator");
  EXPECT_EQ(
      check_error("SELECT * FROM t WHERE a IS MISSING AND b IS NOT MISSING AND c IS NULL AND "
                  "d IS NOT NULL AND e IS BOOLEAN AND f IS STRING AND g IS NUMERIC AND "
                  "h IS BLOB AND i IS STRUCT AND j IS TUPLE AND k IS LIST AND l.m[0] IS BOOL"),
      kOk);
}

TEST(PartiqlCheck, OperatorsDynamoDbDoesNotRun) {
  auto condition = [](std::string_view op) {
    return "Unsupported operator in Condition Expression. Operator: " + std::string(op);
  };
  EXPECT_EQ(check_error("SELECT * FROM t WHERE a LIKE 'x%'"), condition("LIKE"));
  EXPECT_EQ(check_error("SELECT * FROM t WHERE a NOT LIKE 'x%'"), condition("NOT LIKE"));
  EXPECT_EQ(check_error("SELECT * FROM t WHERE a + 1 = 2"), condition("+"));
  EXPECT_EQ(check_error("SELECT * FROM t WHERE a * 2 = 1"), condition("*"));
  EXPECT_EQ(check_error("SELECT * FROM t WHERE a || 'b' = 'c'"), condition("||"));
  EXPECT_EQ(check_error("SELECT * FROM t WHERE -a = 1"), condition("-"));
  EXPECT_EQ(check_error("SELECT * FROM t WHERE a = -?", {N("1")}), condition("-"));
  EXPECT_EQ(check_error("SELECT * FROM t WHERE (a, b) = 1"), condition("List"));
  auto update = [](std::string_view op) {
    return "Unsupported operator in Update Expression. Operator: " + std::string(op);
  };
  EXPECT_EQ(check_error("UPDATE t SET x = a = 1 WHERE pk = 'a'"), update("="));
  EXPECT_EQ(check_error("UPDATE t SET x = a AND b WHERE pk = 'a'"), update("AND"));
  EXPECT_EQ(check_error("UPDATE t SET x = NOT a WHERE pk = 'a'"), update("NOT"));
  EXPECT_EQ(check_error("UPDATE t SET x = a * 2 WHERE pk = 'a'"), update("*"));
  EXPECT_EQ(check_error("UPDATE t SET x = -y WHERE pk = 'a'"), update("-"));
  EXPECT_EQ(check_error("UPDATE t SET x = a IN [1] WHERE pk = 'a'"), update("IN"));
  EXPECT_EQ(check_error("UPDATE t SET x = (a, b) WHERE pk = 'a'"), update("List"));
  EXPECT_EQ(check_error("UPDATE t SET x = a IS NULL WHERE pk = 'a'"),
            "IS operator is not supported in update expressions");
  EXPECT_EQ(check_error("UPDATE t SET x = MISSING WHERE pk = 'a'"),
            "MISSING must be compared using IS operator");
}

TEST(PartiqlCheck, WhereMustBeACondition) {
  const std::string message = "WHERE clause must contain an expression that resolves to a boolean";
  EXPECT_EQ(check_error("SELECT * FROM t WHERE 1"), message);
  EXPECT_EQ(check_error("SELECT * FROM t WHERE 'a'"), message);
  EXPECT_EQ(check_error("SELECT * FROM t WHERE ?", {N("1")}), message);
  EXPECT_EQ(check_error("SELECT * FROM t WHERE size(a)"), message);
  EXPECT_EQ(check_error("SELECT * FROM t WHERE a + 1"), message);
  EXPECT_EQ(check_error("SELECT * FROM t WHERE TRUE"), kOk);
  EXPECT_EQ(check_error("SELECT * FROM t WHERE ?", {BOOL(false)}), kOk);
  EXPECT_EQ(check_error("SELECT * FROM t WHERE flag"), kOk);
}

TEST(PartiqlCheck, SetFunctions) {
  EXPECT_EQ(check_error("UPDATE t SET x = set_add(x, <<'a'>>) WHERE pk = 'a'"), kOk);
  EXPECT_EQ(check_error("UPDATE t SET m.x = SET_DELETE(m.x, <<1, 2>>) WHERE pk = 'a'"), kOk);
  EXPECT_EQ(check_error("UPDATE t SET x = set_add(x, ?) WHERE pk = 'a'", {SS({"a"})}), kOk);
  EXPECT_EQ(check_error("UPDATE t SET x = set_add(x, ?) WHERE pk = 'a'", {BS({"a"})}), kOk);
  EXPECT_EQ(check_error("UPDATE t SET x = SET_ADD(y, <<'a'>>) WHERE pk = 'a'"),
            "The first argument to SET_ADD must equal the assignment value at 1:18:7");
  EXPECT_EQ(check_error("UPDATE t SET x = set_add('x', <<1>>) WHERE pk = 'a'"),
            "The first argument to SET_ADD must equal the assignment value at 1:18:7");
  EXPECT_EQ(check_error("UPDATE t SET x = set_delete(x.y, <<1>>) WHERE pk = 'a'"),
            "The first argument to SET_DELETE must equal the assignment value at 1:18:10");
  EXPECT_EQ(check_error("UPDATE t SET x = set_add(x, 'a') WHERE pk = 'a'"),
            "The second argument to SET_ADD must be a value with type SET at 1:26:1");
  EXPECT_EQ(check_error("UPDATE t SET xy = set_add(xy, [1]) WHERE pk = 'a'"),
            "The second argument to SET_ADD must be a value with type SET at 1:27:2");
  EXPECT_EQ(check_error("UPDATE t SET x = set_add(x, ?) WHERE pk = 'a'", {S("a")}),
            "The second argument to SET_ADD must be a value with type SET at 1:26:1");
  EXPECT_EQ(check_error("UPDATE t SET x = set_add(x, y) WHERE pk = 'a'"),
            "The second argument to SET_ADD must be a value with type SET at 1:26:1");
  EXPECT_EQ(check_error("UPDATE t SET x = set_add(x) WHERE pk = 'a'"),
            "SET_ADD must have exactly two arguments at 1:18:7");
  EXPECT_EQ(check_error("UPDATE t SET x = set_add(x, <<1>>, <<2>>) WHERE pk = 'a'"),
            "SET_ADD must have exactly two arguments at 1:18:7");
  EXPECT_EQ(check_error("UPDATE t SET x = Set_Delete() WHERE pk = 'a'"),
            "SET_DELETE must have exactly two arguments at 1:18:10");
}

TEST(PartiqlCheck, ListAppend) {
  EXPECT_EQ(check_error("UPDATE t SET x = list_append(x, [1]) WHERE pk = 'a'"), kOk);
  EXPECT_EQ(check_error("UPDATE t SET x = list_append([2010], x) WHERE pk = 'a'"), kOk);
  EXPECT_EQ(check_error("UPDATE t SET x = list_append(x, ?) WHERE pk = 'a'", {test::L({})}), kOk);
  EXPECT_EQ(check_error("UPDATE t SET x = list_append(x) WHERE pk = 'a'"),
            "Incorrect number of operands for operator or function; operator or function: "
            "list_append, number of operands: 1");
}

TEST(PartiqlCheck, StatementsThatPass) {
  const std::pair<std::string_view, std::vector<AttributeValue>> cases[] = {
      {"SELECT * FROM \"Music\" WHERE Artist = ? AND SongTitle = ?", {S("a"), S("b")}},
      {"SELECT a, b.c, l[1] FROM \"T\".\"idx\" WHERE pk IN ['a', 'b'] ORDER BY pk DESC", {}},
      {"SELECT * FROM t WHERE pk = 'a' AND (sk = '1' OR sk = '2') AND NOT begins_with(s, 'x')", {}},
      {"SELECT * FROM t WHERE contains(ss, 'a') AND size(s) = 3 AND attribute_not_exists(z)", {}},
      {"SELECT * FROM t WHERE n BETWEEN 1 AND 5 AND x IS NOT MISSING AND y <> 'b'", {}},
      {"SELECT * FROM t WHERE attribute_exists(n) = attribute_exists(f)", {}},
      {"INSERT INTO \"T\" VALUE {'pk': ?, 'n': 1, 'l': [1, 'a'], 's': <<'x'>>}", {S("a")}},
      {"UPDATE \"T\" SET a = 1 SET b = ? REMOVE c WHERE pk = 'a' RETURNING ALL NEW *", {N("1")}},
      {"UPDATE \"T\" SET n = n + 1, m = m - ?, l = list_append(l, [1]) WHERE pk = 'a'", {N("1")}},
      {"UPDATE \"T\" SET c = m.z WHERE pk = 'a' AND attribute_exists(c)", {}},
      {"FROM \"T\" WHERE pk = 'a' SET c = 2 RETURNING MODIFIED NEW *", {}},
      {"DELETE FROM \"T\" WHERE pk = 'a' AND n > 1 RETURNING ALL OLD *", {}},
      {"EXISTS(SELECT * FROM \"T\" WHERE pk = ? AND attribute_exists(x))", {S("a")}},
      {"SELECT * FROM t", {}},
  };
  for (const auto& [text, parameters] : cases)
    EXPECT_EQ(check_error(text, parameters), kOk) << text;
}

}  // namespace
}  // namespace kumo::partiql
