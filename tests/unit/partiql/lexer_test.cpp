// Tokens, reserved words, comments, quoting, numbers and lexical errors, and the numbers
// DynamoDB's PartiQL reads (literals and N parameters).
#include "partiql/lexer.h"

#include <gtest/gtest.h>

#include "partiql/number.h"
#include "partiql_test_util.h"

namespace kumo::partiql {
namespace {

using test::error_of;
using test::malformed;

std::vector<TokenType> types(std::string_view text) {
  std::vector<TokenType> out;
  for (const Token& t : tokenize(text)) out.push_back(t.type);
  return out;
}

std::vector<std::string> texts(std::string_view text) {
  std::vector<std::string> out;
  for (const Token& t : tokenize(text)) out.emplace_back(text.substr(t.begin, t.end - t.begin));
  return out;
}

std::string lex_error(std::string_view text) {
  return error_of([&] { tokenize(text); });
}

TEST(PartiqlLexer, ClassifiesEveryTokenKind) {
  using T = TokenType;
  EXPECT_EQ(
      types("SELECT \"t\" x 'a' 1.5 `ion` NULL MISSING TRUE FALSE ? ( ) [ ] { } << >> , . : ;"),
      (std::vector<T>{T::kKeyword,      T::kQuotedIdentifier,
                      T::kIdentifier,   T::kString,
                      T::kNumber,       T::kIon,
                      T::kNull,         T::kMissing,
                      T::kTrue,         T::kFalse,
                      T::kParameter,    T::kLeftParen,
                      T::kRightParen,   T::kLeftBracket,
                      T::kRightBracket, T::kLeftBrace,
                      T::kRightBrace,   T::kLeftBag,
                      T::kRightBag,     T::kComma,
                      T::kDot,          T::kColon,
                      T::kSemicolon,    T::kEnd}));
}

TEST(PartiqlLexer, Operators) {
  const std::vector<Token> tokens =
      tokenize("= <> != < <= > >= + - * / % || and OR Not is IN between LIKE");
  const std::vector<Operator> expected{
      Operator::kEq,    Operator::kNe,      Operator::kNe,     Operator::kLt,      Operator::kLe,
      Operator::kGt,    Operator::kGe,      Operator::kPlus,   Operator::kMinus,   Operator::kStar,
      Operator::kSlash, Operator::kPercent, Operator::kConcat, Operator::kAnd,     Operator::kOr,
      Operator::kNot,   Operator::kIs,      Operator::kIn,     Operator::kBetween, Operator::kLike};
  ASSERT_EQ(tokens.size(), expected.size() + 1);
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(tokens[i].type, TokenType::kOperator) << i;
    EXPECT_EQ(tokens[i].op(), expected[i]) << i;
  }
}

TEST(PartiqlLexer, KeywordsInAnyCase) {
  for (std::string_view word : {"select", "SELECT", "SeLeCt"}) {
    const std::vector<Token> tokens = tokenize(word);
    EXPECT_TRUE(tokens[0].is(Keyword::kSelect)) << word;
  }
  EXPECT_EQ(types("null Null tRuE false missing"),
            (std::vector<TokenType>{TokenType::kNull, TokenType::kNull, TokenType::kTrue,
                                    TokenType::kFalse, TokenType::kMissing, TokenType::kEnd}));
  EXPECT_TRUE(is_reserved_word("Size"));
  EXPECT_TRUE(is_reserved_word("VALUE"));
  EXPECT_TRUE(is_reserved_word("inner"));
  EXPECT_TRUE(is_reserved_word("returning"));
  EXPECT_TRUE(is_reserved_word("first"));
  EXPECT_TRUE(is_reserved_word("Last"));
  EXPECT_FALSE(is_reserved_word("nulls"));
  EXPECT_FALSE(is_reserved_word("set_add"));
  EXPECT_FALSE(is_reserved_word("begins_with"));
  for (std::string_view name : {"pk", "sk", "data", "val", "kind", "flag", "n", "s", "l", "m", "ss",
                                "ns", "nul", "tags", "profile", "age", "mymap"}) {
    EXPECT_FALSE(is_reserved_word(name)) << name;
    EXPECT_EQ(tokenize(name)[0].type, TokenType::kIdentifier) << name;
  }
}

TEST(PartiqlLexer, MergesTwoWordTokens) {
  const std::vector<Token> t =
      tokenize("a NOT IN b not between c NOT like d IS not e INSERT  INTO f");
  EXPECT_TRUE(t[1].is(Operator::kNotIn));
  EXPECT_TRUE(t[3].is(Operator::kNotBetween));
  EXPECT_TRUE(t[5].is(Operator::kNotLike));
  EXPECT_TRUE(t[7].is(Operator::kIsNot));
  EXPECT_TRUE(t[9].is(Keyword::kInsertInto));
  EXPECT_TRUE(tokenize("double precision")[0].is(Keyword::kDoublePrecision));
  EXPECT_TRUE(tokenize("Character /* c */ Varying")[0].is(Keyword::kCharacterVarying));
  // NOT before anything else stays NOT.
  EXPECT_TRUE(tokenize("NOT a")[0].is(Operator::kNot));
}

TEST(PartiqlLexer, IdentifiersAndQuoting) {
  EXPECT_EQ(texts("_a $b c1_$ \"x y\" \"a\"\"b\" 'it''s'"),
            (std::vector<std::string>{"_a", "$b", "c1_$", "\"x y\"", "\"a\"\"b\"", "'it''s'", ""}));
  EXPECT_EQ(unquote("\"a\"\"b\""), "a\"b");
  EXPECT_EQ(unquote("'it''s here'"), "it's here");
  EXPECT_EQ(unquote("''"), "");
  EXPECT_EQ(unquote("\"\""), "");
  // Comment markers and '?' inside quotes are text.
  EXPECT_EQ(types("'a--b /*c*/ ?'"), (std::vector<TokenType>{TokenType::kString, TokenType::kEnd}));
  EXPECT_EQ(types("\"--\""),
            (std::vector<TokenType>{TokenType::kQuotedIdentifier, TokenType::kEnd}));
}

TEST(PartiqlLexer, CommentsAndWhitespace) {
  EXPECT_EQ(texts("SELECT/**/* FROM t -- done\n WHERE\tpk/* key */='x'\r\n"),
            (std::vector<std::string>{"SELECT", "*", "FROM", "t", "WHERE", "pk", "=", "'x'", ""}));
  // n--1 is n followed by a comment.
  EXPECT_EQ(texts("n--1 WHERE"), (std::vector<std::string>{"n", ""}));
  EXPECT_EQ(texts("-/* c */-1"), (std::vector<std::string>{"-", "-", "1", ""}));
  EXPECT_EQ(texts("-- only a comment"), (std::vector<std::string>{""}));
  EXPECT_EQ(texts("a; -- done"), (std::vector<std::string>{"a", ";", ""}));
}

TEST(PartiqlLexer, Numbers) {
  EXPECT_EQ(texts("1 -7.3 1.0 1e0 7.31E6 7.31e+6 73100000e-1 .73e1 1. 0.5"),
            (std::vector<std::string>{"1", "-", "7.3", "1.0", "1e0", "7.31E6", "7.31e+6",
                                      "73100000e-1", ".73e1", "1.", "0.5", ""}));
  // A number split from its exponent is two tokens.
  EXPECT_EQ(types("1 e5"),
            (std::vector<TokenType>{TokenType::kNumber, TokenType::kIdentifier, TokenType::kEnd}));
}

TEST(PartiqlLexer, LexicalErrorsHaveAnEmptyDetail) {
  for (std::string_view text :
       {"SELECT * FROM t WHERE a # b", "a /* open", "\"abc", "'oops", "`ion", "a ! b", "a | b",
        "a & b", "a ~ b", "a \\ b", "a @ b", "1e", "1e+", "1e2147483648", "1e99999999999",
        "1.5e-2147483647", "1e-2147483648"}) {
    EXPECT_EQ(lex_error(text), malformed("")) << text;
  }
  // The largest exponents that convert.
  for (std::string_view text : {"1e2147483647", "1e-2147483647", "1e+0002147483647"}) {
    EXPECT_EQ(lex_error(text), "<no error>") << text;
  }
}

TEST(PartiqlLexer, LexicalErrorsComeBeforeSyntaxErrors) {
  EXPECT_EQ(test::parse_error("SELECT * FROM WHERE #"), malformed(""));
}

// --- numbers ---

std::string number(std::string_view text) {
  Decimal d;
  const NumberError e = read_number(text, &d);
  switch (e) {
    case NumberError::kNone:
      return d.to_string();
    case NumberError::kNotConvertible:
      return "not convertible";
    case NumberError::kTooManyDigits:
      return "digits";
    case NumberError::kOverflow:
      return "overflow";
    case NumberError::kUnderflow:
      return "underflow";
  }
  return "?";
}

TEST(PartiqlNumber, CanonicalValues) {
  EXPECT_EQ(number("1E3"), "1000");
  EXPECT_EQ(number("-1.5e-3"), "-0.0015");
  EXPECT_EQ(number("2.50"), "2.5");
  EXPECT_EQ(number("-0"), "0");
  EXPECT_EQ(number("+5"), "5");
  EXPECT_EQ(number("7.31e6"), "7310000");
  EXPECT_EQ(number(".73e1"), "7.3");
  EXPECT_EQ(number("1."), "1");
  EXPECT_EQ(number("000123.4500"), "123.45");
  EXPECT_EQ(number("0e99"), "0");
}

TEST(PartiqlNumber, RangeAndDigits) {
  EXPECT_EQ(number("9.9999999999999999999999999999999999999E+125"),
            "999999999999999999999999999999999999990000000000000000000000000000000000000000000000"
            "000000000000000000000000000000000000000000");
  EXPECT_EQ(number("1E126"), "overflow");
  EXPECT_EQ(number("1E-130"), number("0.1E-129"));
  EXPECT_EQ(number("1E-131"), "underflow");
  EXPECT_EQ(number("1.23456789012345678901234567890123456789"), "digits");
  EXPECT_EQ(number("1234567890123456789012345678901234567800000"),
            "1234567890123456789012345678901234567800000");  // trailing zeros do not count
  // The magnitude is computed in 32 bits: this one wraps round and is too small.
  EXPECT_EQ(number("1e2147483647"), "underflow");
  EXPECT_EQ(number("1e-2147483647"), "underflow");
  EXPECT_EQ(number("1e2147483646"), "overflow");
}

TEST(PartiqlNumber, NotConvertible) {
  for (std::string_view text :
       {"", "abc", ".", "-", "1e", "1e+", "1.2.3", " 1", "1 ", "0x10", "1e99999999999",
        "-1e99999999999", "1e-2147483648", "1.5e-2147483647", "1e2147483648", "NaN", "Infinity"}) {
    EXPECT_EQ(number(text), "not convertible") << text;
  }
}

TEST(PartiqlNumber, Messages) {
  EXPECT_EQ(number_message(NumberError::kOverflow),
            "Number overflow. Attempting to store a number with magnitude larger than supported "
            "range");
  EXPECT_EQ(number_message(NumberError::kUnderflow),
            "Number underflow. Attempting to store a number with magnitude smaller than "
            "supported range");
  EXPECT_EQ(number_message(NumberError::kTooManyDigits),
            "Attempting to store more than 38 significant digits in a Number");
}

TEST(PartiqlNumber, SameRepresentationIsBigDecimalEquality) {
  EXPECT_TRUE(same_representation("2", "2"));
  EXPECT_TRUE(same_representation("2", "2e0"));
  EXPECT_TRUE(same_representation("02", "2"));
  EXPECT_TRUE(same_representation("-0", "0"));
  EXPECT_TRUE(same_representation("0.20", ".20"));
  EXPECT_FALSE(same_representation("2", "2.0"));
  EXPECT_FALSE(same_representation("20", "2e1"));
  EXPECT_FALSE(same_representation("0", "0.0"));
  EXPECT_FALSE(same_representation("-1", "1"));
}

}  // namespace
}  // namespace kumo::partiql
