// Grammar (tokens, document paths, conditions, update clauses, reserved words), syntax-error
// shape and the text-only checks of the parser.
#include "expr/parser.h"

#include <gtest/gtest.h>

#include "expr/lexer.h"
#include "expr/reserved_words.h"
#include "expr_test_util.h"

namespace kumo::expr {
namespace {

using test::error_of;
using Kind = ExpressionKind;

std::string parse_error(Kind kind, std::string_view text) {
  return error_of([&] { parse_expression(kind, text); });
}

std::string syntax(std::string_view kind, std::string_view token, std::string_view near) {
  return "Invalid " + std::string(kind) + ": Syntax error; token: \"" + std::string(token) +
         "\", near: \"" + std::string(near) + "\"";
}

// --- lexer ---

TEST(Lexer, SplitsTokensAndClassifiesKeywordsInAnyCase) {
  const std::string text = "#n.a[12] <> :v aNd Between iN or NOT <= >= < > = + - ( ) ,";
  std::vector<Token> tokens = tokenize(text);
  std::vector<TokenType> types;
  for (const Token& t : tokens) types.push_back(t.type);
  EXPECT_EQ(types, (std::vector<TokenType>{TokenType::kNamePlaceholder,
                                           TokenType::kDot,
                                           TokenType::kName,
                                           TokenType::kLeftBracket,
                                           TokenType::kNumber,
                                           TokenType::kRightBracket,
                                           TokenType::kNe,
                                           TokenType::kValuePlaceholder,
                                           TokenType::kAnd,
                                           TokenType::kBetween,
                                           TokenType::kIn,
                                           TokenType::kOr,
                                           TokenType::kNot,
                                           TokenType::kLe,
                                           TokenType::kGe,
                                           TokenType::kLt,
                                           TokenType::kGt,
                                           TokenType::kEq,
                                           TokenType::kPlus,
                                           TokenType::kMinus,
                                           TokenType::kLeftParen,
                                           TokenType::kRightParen,
                                           TokenType::kComma,
                                           TokenType::kEnd}));
}

TEST(Lexer, WhitespaceIsSpaceTabCrLf) {
  std::vector<Token> tokens = tokenize("a\t=\r\n:v");
  ASSERT_EQ(tokens.size(), 4u);
  EXPECT_EQ(tokens[2].type, TokenType::kValuePlaceholder);
}

TEST(Lexer, UnknownCharacterIsOneWholeUtf8Token) {
  std::vector<Token> tokens = tokenize("a\xC3\xA9");
  ASSERT_EQ(tokens.size(), 3u);
  EXPECT_EQ(tokens[1].type, TokenType::kInvalid);
  EXPECT_EQ(tokens[1].end - tokens[1].begin, 2u);
}

TEST(Lexer, PlaceholderKeys) {
  EXPECT_TRUE(is_valid_placeholder("#a_1", '#'));
  EXPECT_TRUE(is_valid_placeholder(":0", ':'));
  EXPECT_FALSE(is_valid_placeholder("#", '#'));
  EXPECT_FALSE(is_valid_placeholder("a", '#'));
  EXPECT_FALSE(is_valid_placeholder("#a-b", '#'));
  EXPECT_FALSE(is_valid_placeholder(":a", '#'));
}

// --- syntax errors: Invalid <Kind>: Syntax error; token: "<token>", near: "<context>" ---

TEST(SyntaxError, ObservedShapes) {
  EXPECT_EQ(parse_error(Kind::kCondition, "a-b"), syntax("ConditionExpression", "-", "a-b"));
  EXPECT_EQ(parse_error(Kind::kKeyCondition, "()"), syntax("KeyConditionExpression", ")", "()"));
  EXPECT_EQ(parse_error(Kind::kCondition, "attribute_exists(x) AND NOT #flag"),
            syntax("ConditionExpression", "<EOF>", "#flag"));
  EXPECT_EQ(parse_error(Kind::kUpdate, "SET #a = :a, #b = :b,"),
            syntax("UpdateExpression", "<EOF>", ","));
  EXPECT_EQ(parse_error(Kind::kUpdate, "INVALID SYNTAX HERE"),
            syntax("UpdateExpression", "INVALID", "INVALID SYNTAX"));
  EXPECT_EQ(parse_error(Kind::kUpdate, "SET str_set bad_value"),
            syntax("UpdateExpression", "bad_value", "str_set bad_value"));
}

TEST(SyntaxError, NearSpansPreviousThroughNextToken) {
  EXPECT_EQ(parse_error(Kind::kCondition, "a = :v :w"),
            syntax("ConditionExpression", ":w", ":v :w"));
  EXPECT_EQ(parse_error(Kind::kCondition, "a != :v"), syntax("ConditionExpression", "!", "a !="));
  EXPECT_EQ(parse_error(Kind::kCondition, "a = :v)"), syntax("ConditionExpression", ")", ":v)"));
  EXPECT_EQ(parse_error(Kind::kCondition, "a[x] = :v"), syntax("ConditionExpression", "x", "[x]"));
  EXPECT_EQ(parse_error(Kind::kCondition, "a.1 = :v"), syntax("ConditionExpression", "1", ".1 ="));
  EXPECT_EQ(parse_error(Kind::kCondition, "AND = :v"),
            syntax("ConditionExpression", "AND", "AND ="));
  EXPECT_EQ(parse_error(Kind::kCondition, "a BETWEEN :x :y"),
            syntax("ConditionExpression", ":y", ":x :y"));
  EXPECT_EQ(parse_error(Kind::kCondition, "a IN :x"), syntax("ConditionExpression", ":x", "IN :x"));
  EXPECT_EQ(parse_error(Kind::kCondition, "a IN ()"), syntax("ConditionExpression", ")", "()"));
  EXPECT_EQ(parse_error(Kind::kCondition, "a = :v\xC3\xA9"),
            syntax("ConditionExpression", "\xC3\xA9", ":v\xC3\xA9"));
  EXPECT_EQ(parse_error(Kind::kCondition, "a < b < c"),
            syntax("ConditionExpression", "<", "b < c"));
  EXPECT_EQ(parse_error(Kind::kCondition, "a < > b"), syntax("ConditionExpression", ">", "< > b"));
  EXPECT_EQ(parse_error(Kind::kCondition, "a ="), syntax("ConditionExpression", "<EOF>", "="));
  EXPECT_EQ(parse_error(Kind::kCondition, "   "), syntax("ConditionExpression", "<EOF>", ""));
  EXPECT_EQ(parse_error(Kind::kCondition, "(a) = :v"), syntax("ConditionExpression", ")", "a) ="));
  EXPECT_EQ(parse_error(Kind::kCondition, "a"), syntax("ConditionExpression", "<EOF>", "a"));
  EXPECT_EQ(parse_error(Kind::kCondition, "attribute_exists()"),
            syntax("ConditionExpression", ")", "()"));
  EXPECT_EQ(parse_error(Kind::kFilter, "a = 1"), syntax("FilterExpression", "1", "= 1"));
  EXPECT_EQ(parse_error(Kind::kFilter, "a = 'x'"), syntax("FilterExpression", "'", "= 'x"));
}

TEST(SyntaxError, UpdateGrammar) {
  EXPECT_EQ(parse_error(Kind::kUpdate, "SET a = b + c + d"),
            syntax("UpdateExpression", "+", "c + d"));
  EXPECT_EQ(parse_error(Kind::kUpdate, "SET a = :v, remove = :w"),
            syntax("UpdateExpression", "remove", ", remove ="));
  EXPECT_EQ(parse_error(Kind::kUpdate, "REMOVE a SET"), syntax("UpdateExpression", "<EOF>", "SET"));
  EXPECT_EQ(parse_error(Kind::kUpdate, "SET a = (b)"), syntax("UpdateExpression", "(", "= (b"));
  EXPECT_EQ(parse_error(Kind::kUpdate, "ADD a b"), syntax("UpdateExpression", "b", "a b"));
  EXPECT_EQ(parse_error(Kind::kUpdate, "DELETE a"), syntax("UpdateExpression", "<EOF>", "a"));
  EXPECT_EQ(parse_error(Kind::kUpdate, "SET a = :v b = :w"),
            syntax("UpdateExpression", "b", ":v b ="));
  EXPECT_EQ(parse_error(Kind::kUpdate, "SET a == :v"), syntax("UpdateExpression", "=", "== :v"));
  EXPECT_EQ(parse_error(Kind::kUpdate, "SET a = :v AND b = :w"),
            syntax("UpdateExpression", "AND", ":v AND b"));
  EXPECT_EQ(parse_error(Kind::kUpdate, "SET a[-1] = :v"), syntax("UpdateExpression", "-", "[-1"));
}

TEST(SyntaxError, ProjectionGrammar) {
  EXPECT_EQ(parse_error(Kind::kProjection, "a,"), syntax("ProjectionExpression", "<EOF>", ","));
  EXPECT_EQ(parse_error(Kind::kProjection, "a b"), syntax("ProjectionExpression", "b", "a b"));
  EXPECT_EQ(parse_error(Kind::kProjection, "size(a)"),
            syntax("ProjectionExpression", "(", "size(a"));
  EXPECT_EQ(parse_error(Kind::kProjection, ":v"), syntax("ProjectionExpression", ":v", ":v"));
}

TEST(SyntaxError, NamesAndFunctionNamesStartWithALetter) {
  EXPECT_EQ(parse_error(Kind::kUpdate, "SET _123 = :v"),
            syntax("UpdateExpression", "_", "SET _123"));
  EXPECT_EQ(parse_error(Kind::kUpdate, "SET _abc = :v"),
            syntax("UpdateExpression", "_", "SET _abc"));
  EXPECT_EQ(parse_error(Kind::kUpdate, "SET a = _f(b)"), syntax("UpdateExpression", "_", "= _f"));
  EXPECT_EQ(parse_error(Kind::kCondition, "a._b = :v"), syntax("ConditionExpression", "_", "._b"));
  EXPECT_EQ(parse_error(Kind::kProjection, "_a"), syntax("ProjectionExpression", "_", "_a"));
  EXPECT_EQ(parse_error(Kind::kUpdate, "SET #_1 = :_v, #2 = :3, a_ = :v"), "<no error>");
}

TEST(SyntaxError, ComesBeforeEveryOtherError) {
  EXPECT_EQ(parse_error(Kind::kCondition, "((name = :v)) AND foo(a) AND"),
            syntax("ConditionExpression", "<EOF>", "AND"));
}

// --- accepted grammar ---

TEST(Grammar, AcceptsEveryConditionForm) {
  for (std::string_view text : {
           "a = :v",
           "a <> :v",
           "a < :v",
           "a <= :v",
           "a > :v",
           "a >= :v",
           ":v = a",
           "a BETWEEN :x AND :y",
           "a IN (:x)",
           "a IN (:x, :y, b)",
           "attribute_exists(a)",
           "attribute_not_exists(a.b[1])",
           "attribute_type(a, :t)",
           "begins_with(a, :p)",
           "contains(a, :v)",
           "size(a) > :n",
           ":n < size(a)",
           "size(a) BETWEEN :x AND :y",
           "size(a) IN (:x)",
           "NOT a = :v",
           "NOT NOT a = :v",
           "(a = :v)",
           "a = :v AND b = :w",
           "a = :v OR b = :w",
           "(a = :v OR b = :w) AND NOT (c = :x)",
           "#n.#m[3][4].x = :v",
           "a = b",
           "a.b.c = :v",
           "A_1 = :v",
           "x_ = :v",
           "#_x = :v AND #1 = :w",
           "remove = :v",
           "begins_with = :v",
           "a=:v",
           "a between :x and :y",
           "a in (:x) or b = :v",
           "begins_with(a, size(b))",
       }) {
    EXPECT_EQ(parse_error(Kind::kCondition, text), "<no error>") << text;
  }
}

TEST(Grammar, PrecedenceNotOverAndOverOr) {
  // a OR b AND c == a OR (b AND c); NOT a AND b == (NOT a) AND b.
  auto parsed = parse_expression(Kind::kCondition, "a = :v OR b = :v AND c = :v");
  EXPECT_EQ(parsed->nodes[parsed->root].type, NodeType::kOr);
  EXPECT_EQ(parsed->nodes[parsed->nodes[parsed->root].args[1]].type, NodeType::kAnd);
  parsed = parse_expression(Kind::kCondition, "NOT a = :v AND b = :v");
  EXPECT_EQ(parsed->nodes[parsed->root].type, NodeType::kAnd);
  EXPECT_EQ(parsed->nodes[parsed->nodes[parsed->root].args[0]].type, NodeType::kNot);
  parsed = parse_expression(Kind::kCondition, "a BETWEEN :x AND :y AND b = :v");
  EXPECT_EQ(parsed->nodes[parsed->root].type, NodeType::kAnd);
  EXPECT_EQ(parsed->nodes[parsed->nodes[parsed->root].args[0]].type, NodeType::kBetween);
}

TEST(Grammar, PathsAndPlaceholders) {
  auto parsed = parse_expression(Kind::kCondition, "#a.b[2].#c = :v AND #a = :w AND :v = x");
  ASSERT_EQ(parsed->paths.size(), 3u);
  const auto& e = parsed->paths[0].elements;
  ASSERT_EQ(e.size(), 4u);
  EXPECT_EQ(e[0].kind, PathElement::Kind::kNamePlaceholder);
  EXPECT_EQ(e[1].text, "b");
  EXPECT_EQ(e[2].kind, PathElement::Kind::kIndex);
  EXPECT_EQ(e[2].number, 2u);
  EXPECT_EQ(parsed->name_placeholders, (std::vector<std::string>{"#a", "#c"}));
  EXPECT_EQ(parsed->value_placeholders, (std::vector<std::string>{":v", ":w"}));
  ASSERT_EQ(parsed->placeholder_uses.size(), 4u);
  EXPECT_TRUE(parsed->placeholder_uses[0].is_name);
  EXPECT_TRUE(parsed->placeholder_uses[1].is_name);
  EXPECT_FALSE(parsed->placeholder_uses[2].is_name);
}

TEST(Grammar, UpdateClausesInAnyOrderAndCase) {
  auto parsed =
      parse_expression(Kind::kUpdate,
                       "remove x, y[1] add n :one set a = :v, b = b + :n, c = list_append(c, :l), "
                       "d = if_not_exists(d, :z) - :n delete s :s");
  ASSERT_EQ(parsed->actions.size(), 8u);
  EXPECT_EQ(parsed->actions[0].clause, UpdateClause::kRemove);
  EXPECT_EQ(parsed->actions[2].clause, UpdateClause::kAdd);
  EXPECT_EQ(parsed->actions[3].clause, UpdateClause::kSet);
  EXPECT_EQ(parsed->actions[7].clause, UpdateClause::kDelete);
  EXPECT_EQ(parsed->nodes[parsed->actions[4].value].type, NodeType::kPlus);
  EXPECT_EQ(parsed->nodes[parsed->actions[6].value].type, NodeType::kMinus);
}

TEST(Grammar, ProjectionPaths) {
  auto parsed = parse_expression(Kind::kProjection, "a, b.c, #d[0]");
  EXPECT_EQ(parsed->projection.size(), 3u);
}

// --- structural errors, in DynamoDB's order ---

TEST(Structure, EmptyExpression) {
  EXPECT_EQ(parse_error(Kind::kCondition, ""),
            "Invalid ConditionExpression: The expression can not be empty;");
  EXPECT_EQ(parse_error(Kind::kFilter, ""),
            "Invalid FilterExpression: The expression can not be empty;");
  EXPECT_EQ(parse_error(Kind::kKeyCondition, ""),
            "Invalid KeyConditionExpression: The expression can not be empty;");
  EXPECT_EQ(parse_error(Kind::kProjection, ""),
            "Invalid ProjectionExpression: The expression can not be empty;");
  EXPECT_EQ(parse_error(Kind::kUpdate, ""),
            "Invalid UpdateExpression: The expression can not be empty;");
}

TEST(Structure, ExpressionSizeLimitIs4096Bytes) {
  std::string text = "a = :v";
  text.resize(4096, ' ');
  EXPECT_EQ(parse_error(Kind::kCondition, text), "<no error>");
  text.push_back(' ');
  EXPECT_EQ(parse_error(Kind::kCondition, text),
            "Invalid ConditionExpression: Expression size has exceeded the maximum allowed size; "
            "expression size: 4097");
  EXPECT_EQ(parse_error(Kind::kUpdate, text + "((("),
            "Invalid UpdateExpression: Expression size has exceeded the maximum allowed size; "
            "expression size: 4100");
}

TEST(Structure, OperatorLimitIs300) {
  auto chain = [](int comparisons) {
    std::string text = "a = :v";
    for (int i = 1; i < comparisons; ++i) text += " OR a = :v";
    return text;
  };
  EXPECT_EQ(parse_error(Kind::kCondition, chain(150)), "<no error>");  // 299 operators
  EXPECT_EQ(parse_error(Kind::kCondition, chain(151)),
            "Invalid ConditionExpression: The expression contains too many operators; operator "
            "count: 301, maximum allowed: 300");
  std::string update = "SET a0=:v+:v";
  for (int i = 1; i < 301; ++i) update += ",a" + std::to_string(i) + "=:v+:v";
  EXPECT_EQ(parse_error(Kind::kUpdate, update),
            "Invalid UpdateExpression: The expression contains too many operators; operator "
            "count: 301, maximum allowed: 300");
}

TEST(Structure, DeepNestingIsRejectedWithoutExhaustingTheStack) {
  std::string parens = std::string(2000, '(') + "a = :v" + std::string(2000, ')');
  EXPECT_EQ(parse_error(Kind::kCondition, parens),
            "Invalid ConditionExpression: The expression has redundant parentheses;");
  std::string nots;
  while (nots.size() < 4000) nots += "NOT ";
  EXPECT_EQ(parse_error(Kind::kFilter, nots + "a = :v"),
            "Invalid FilterExpression: The expression contains too many operators; operator "
            "count: 1001, maximum allowed: 300");
  std::string calls = "SET a = ";
  for (int i = 0; i < 2000; ++i) calls += "f(";
  EXPECT_EQ(parse_error(Kind::kUpdate, calls),
            "Invalid UpdateExpression: The expression contains too many operators; operator "
            "count: 2000, maximum allowed: 300");
  // The deepest valid shapes still parse: 299 NOTs, or 150 nested groups with an AND each.
  std::string valid;
  for (int i = 0; i < 299; ++i) valid += "NOT ";
  EXPECT_EQ(parse_error(Kind::kCondition, valid + "a = :v"), "<no error>");
  valid.clear();
  for (int i = 0; i < 149; ++i) valid += "(a = :v AND ";
  valid += "a = :v" + std::string(149, ')');
  EXPECT_EQ(parse_error(Kind::kCondition, valid), "<no error>");
}

TEST(Structure, RedundantParentheses) {
  const std::string message =
      "Invalid ConditionExpression: The expression has redundant parentheses;";
  EXPECT_EQ(parse_error(Kind::kCondition, "((a = :v))"), message);
  EXPECT_EQ(parse_error(Kind::kCondition, "(a = :v) AND ((b = :w))"), message);
  EXPECT_EQ(parse_error(Kind::kCondition, "NOT ((a = :v))"), message);
  EXPECT_EQ(parse_error(Kind::kCondition, "(((attribute_exists(a))))"), message);
  EXPECT_EQ(parse_error(Kind::kKeyCondition, "((pk = :v))"),
            "Invalid KeyConditionExpression: The expression has redundant parentheses;");
  EXPECT_EQ(parse_error(Kind::kCondition, "((a = :v) AND b = :w)"), "<no error>");
  EXPECT_EQ(parse_error(Kind::kCondition, "(NOT (a = :v))"), "<no error>");
}

TEST(Structure, FunctionNamesAreCaseSensitive) {
  EXPECT_EQ(parse_error(Kind::kKeyCondition, "pk = :v AND BegIns_WiTh(sk, :p)"),
            "Invalid KeyConditionExpression: Invalid function name; function: BegIns_WiTh");
  EXPECT_EQ(parse_error(Kind::kCondition, "foo(a)"),
            "Invalid ConditionExpression: Invalid function name; function: foo");
  EXPECT_EQ(parse_error(Kind::kCondition, "SIZE(a) = :v"),
            "Invalid ConditionExpression: Invalid function name; function: SIZE");
}

TEST(Structure, EachGrammarKnowsOnlyItsFunctions) {
  EXPECT_EQ(parse_error(Kind::kCondition, "if_not_exists(a, :v) = :v"),
            "Invalid ConditionExpression: The function is not allowed in a condition "
            "expression; function: if_not_exists");
  EXPECT_EQ(parse_error(Kind::kFilter, "list_append(a, :v) = :v"),
            "Invalid FilterExpression: The function is not allowed in a condition expression; "
            "function: list_append");
  // Known functions of the other grammar rank with unknown ones.
  EXPECT_EQ(parse_error(Kind::kCondition, "size(a) AND if_not_exists(a, :v) = :v"),
            "Invalid ConditionExpression: The function is not allowed in a condition "
            "expression; function: if_not_exists");
  EXPECT_EQ(parse_error(Kind::kUpdate, "SET a = size(b)"),
            "Invalid UpdateExpression: Invalid function name; function: size");
  EXPECT_EQ(parse_error(Kind::kUpdate, "SET a = attribute_exists(b)"),
            "Invalid UpdateExpression: Invalid function name; function: attribute_exists");
}

TEST(Structure, MisusedFunctions) {
  auto misused = [](std::string_view f) {
    return "Invalid ConditionExpression: The function is not allowed to be used this way in an "
           "expression; function: " +
           std::string(f);
  };
  EXPECT_EQ(parse_error(Kind::kCondition, "size(a)"), misused("size"));
  EXPECT_EQ(parse_error(Kind::kCondition, "a = :v AND size(a)"), misused("size"));
  EXPECT_EQ(parse_error(Kind::kCondition, "attribute_exists(a) = :v"), misused("attribute_exists"));
  EXPECT_EQ(parse_error(Kind::kCondition, ":v = begins_with(a, :p)"), misused("begins_with"));
  EXPECT_EQ(parse_error(Kind::kCondition, "contains(a, attribute_type(b, :t))"),
            misused("attribute_type"));
  EXPECT_EQ(parse_error(Kind::kCondition, "a IN (contains(a, :v))"), misused("contains"));
}

TEST(Structure, ListAppendInsideListAppend) {
  const std::string message =
      "Invalid UpdateExpression: The function is not allowed to be used this way in an "
      "expression; function: list_append";
  EXPECT_EQ(parse_error(Kind::kUpdate, "SET a = list_append(list_append(a, :l), :m)"), message);
  EXPECT_EQ(parse_error(Kind::kUpdate, "SET a = list_append(:l, list_append(a, :m))"), message);
  EXPECT_EQ(parse_error(Kind::kUpdate, "SET a = list_append(if_not_exists(a, :e), :l)"),
            "<no error>");
  EXPECT_EQ(parse_error(Kind::kUpdate, "SET a = if_not_exists(a, :e), b = list_append(b, :l)"),
            "<no error>");
}

TEST(Structure, DocumentPathLimits) {
  std::string deep = "a";
  for (int i = 1; i < 32; ++i) deep += i % 2 ? ".b" : "[0]";
  EXPECT_EQ(parse_error(Kind::kProjection, deep), "<no error>");  // 32 elements
  EXPECT_EQ(parse_error(Kind::kCondition, deep + ".c = :v"),
            "Invalid ConditionExpression: The document path has too many nesting levels; "
            "nesting levels: 33");
  EXPECT_EQ(parse_error(Kind::kFilter, "attribute_exists(" + deep + ".c.d)"),
            "Invalid FilterExpression: The document path has too many nesting levels; "
            "nesting levels: 34");
  EXPECT_EQ(parse_error(Kind::kKeyCondition, "pk = :v AND " + deep + ".c = :w"),
            "Invalid KeyConditionExpression: The document path has too many nesting levels; "
            "nesting levels: 33");
  EXPECT_EQ(parse_error(Kind::kProjection, "x, " + deep + "[1]"),
            "Invalid ProjectionExpression: The document path has too many nesting levels; "
            "nesting levels: 33");
  EXPECT_EQ(parse_error(Kind::kUpdate, "REMOVE " + deep + ".c"),
            "Invalid UpdateExpression: The document path has too many nesting levels; "
            "nesting levels: 33");

  EXPECT_EQ(parse_error(Kind::kProjection, "a[2147483647], a[0002147483646]"), "<no error>");
  EXPECT_EQ(parse_error(Kind::kProjection, "a[99999999999999]"),
            "Invalid ProjectionExpression: List index is not within the allowable range; index: "
            "[99999999999999]");
  EXPECT_EQ(parse_error(Kind::kUpdate, "SET a[2147483648] = :v"),
            "Invalid UpdateExpression: List index is not within the allowable range; index: "
            "[2147483648]");
  EXPECT_EQ(parse_error(Kind::kCondition, "a[123456789012345678901234567890] = :v"),
            "Invalid ConditionExpression: List index is not within the allowable range; index: "
            "[123456789012345678901234567890]");
  // A syntax error still comes first.
  EXPECT_EQ(parse_error(Kind::kProjection, "a[99999999999999] b"),
            syntax("ProjectionExpression", "b", "] b"));
}

TEST(Structure, ReservedWordsAsPlainNames) {
  EXPECT_EQ(parse_error(Kind::kCondition, "name = :v"),
            "Invalid ConditionExpression: Attribute name is a reserved keyword; reserved "
            "keyword: name");
  EXPECT_EQ(parse_error(Kind::kCondition, "a.Status = :v"),
            "Invalid ConditionExpression: Attribute name is a reserved keyword; reserved "
            "keyword: Status");
  EXPECT_EQ(parse_error(Kind::kProjection, "a, YEAR"),
            "Invalid ProjectionExpression: Attribute name is a reserved keyword; reserved "
            "keyword: YEAR");
  EXPECT_EQ(parse_error(Kind::kUpdate, "SET #a = count"),
            "Invalid UpdateExpression: Attribute name is a reserved keyword; reserved keyword: "
            "count");
  EXPECT_EQ(parse_error(Kind::kCondition, "size(size) > :v"),
            "Invalid ConditionExpression: Attribute name is a reserved keyword; reserved "
            "keyword: size");
  EXPECT_EQ(parse_error(Kind::kCondition, "#name = :v AND #status = :s"), "<no error>");
}

TEST(Structure, CategoryOrder) {
  // Redundant parentheses before an unknown function, unknown before misused, misused
  // before reserved words.
  EXPECT_EQ(parse_error(Kind::kCondition, "foo(a) AND ((b = :v))"),
            "Invalid ConditionExpression: The expression has redundant parentheses;");
  EXPECT_EQ(parse_error(Kind::kCondition, "size(a) AND foo(b)"),
            "Invalid ConditionExpression: Invalid function name; function: foo");
  EXPECT_EQ(parse_error(Kind::kCondition, "name = :v AND size(a)"),
            "Invalid ConditionExpression: The function is not allowed to be used this way in an "
            "expression; function: size");
  // A reserved word comes before any key-condition structure error.
  EXPECT_EQ(parse_error(Kind::kKeyCondition, "name = :v OR b = :w"),
            "Invalid KeyConditionExpression: Attribute name is a reserved keyword; reserved "
            "keyword: name");
}

TEST(Structure, UpdateClauseAtMostOnce) {
  EXPECT_EQ(parse_error(Kind::kUpdate, "SET a = :v SET b = :w"),
            "Invalid UpdateExpression: The \"SET\" section can only be used once in an update "
            "expression;");
  EXPECT_EQ(parse_error(Kind::kUpdate, "remove a set b = :v Remove c"),
            "Invalid UpdateExpression: The \"REMOVE\" section can only be used once in an update "
            "expression;");
  EXPECT_EQ(parse_error(Kind::kUpdate, "ADD a :v ADD b :w"),
            "Invalid UpdateExpression: The \"ADD\" section can only be used once in an update "
            "expression;");
  EXPECT_EQ(parse_error(Kind::kUpdate, "DELETE a :v DELETE b :w"),
            "Invalid UpdateExpression: The \"DELETE\" section can only be used once in an update "
            "expression;");
}

TEST(Structure, OperandCountAndPathErrorsAreDeferred) {
  // Found while parsing, but reported after undefined placeholders (binding).
  auto parsed = parse_expression(Kind::kCondition, "attribute_exists(a, b)");
  EXPECT_EQ(parsed->deferred_error,
            "Incorrect number of operands for operator or function; operator or function: "
            "attribute_exists, number of operands: 2");
  parsed = parse_expression(Kind::kCondition, "attribute_not_exists(:v)");
  EXPECT_EQ(parsed->deferred_error,
            "Operator or function requires a document path; operator or function: "
            "attribute_not_exists");
  std::string in = "a IN (:v";
  for (int i = 1; i < 101; ++i) in += ", :v";
  parsed = parse_expression(Kind::kCondition, in + ")");
  EXPECT_EQ(parsed->deferred_error,
            "Incorrect number of operands for operator or function; operator or function: IN, "
            "number of operands: 101");
  in.clear();
  in = "a IN (:v";
  for (int i = 1; i < 100; ++i) in += ", :v";
  EXPECT_EQ(parse_expression(Kind::kCondition, in + ")")->deferred_error, "");
}

// --- reserved words ---

TEST(ReservedWords, FullListCaseInsensitive) {
  EXPECT_EQ(reserved_word_count(), 573u);
  for (std::string_view w :
       {"ABORT", "abort", "Name", "STATUS", "data",     "Date",   "timestamp", "TTL",
        "count", "VALUE", "key",  "user",   "type",     "year",   "ITEMS",     "comment",
        "hash",  "range", "SIZE", "ZONE",   "FLATTERN", "INNTER", "LOGED",     "SPECIFICTYPE"}) {
    EXPECT_TRUE(is_reserved_word(w)) << w;
  }
  for (std::string_view w : {"REMOVE", "remove", "begins_with", "attribute_exists", "contains",
                             "if_not_exists", "list_append", "pk", "sk", "names", "ZONES", "",
                             "ABORTS", "averylongnamethatisnotreserved"}) {
    EXPECT_EQ(is_reserved_word(w), w == "names") << w;
  }
}

}  // namespace
}  // namespace kumo::expr
