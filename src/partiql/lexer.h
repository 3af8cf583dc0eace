// The lexer of DynamoDB's PartiQL dialect. The whole statement is split into tokens before
// anything is parsed, so a lexical error (a character that starts no token, an unterminated
// string, quoted name, comment or backquoted literal, a number that cannot be converted)
// is reported before any syntax error, as "Statement wasn't well formed, can't be
// processed: " with an empty detail.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kumo::partiql {

enum class TokenType : std::uint8_t {
  kIdentifier,        // [A-Za-z_$][A-Za-z0-9_$]*, not a reserved word
  kQuotedIdentifier,  // "text" ("" is a quote); may be any text, a reserved word included
  kKeyword,           // a reserved word that is not one of the operator words or literals
  kOperator,          // = <> != < <= > >= + - * / % || and AND OR NOT IS IN BETWEEN LIKE
  kString,            // 'text' ('' is a quote)
  kNumber,            // 12, 1.5, .5, 1., 7.31E6, 1e-3 (no sign: a sign is an operator)
  kIon,               // `...`: a backquoted Ion literal, which DynamoDB refuses
  kNull,              // NULL
  kMissing,           // MISSING
  kTrue,              // TRUE
  kFalse,             // FALSE
  kParameter,         // ?
  kLeftParen,
  kRightParen,
  kLeftBracket,
  kRightBracket,
  kLeftBrace,
  kRightBrace,
  kLeftBag,   // <<
  kRightBag,  // >>
  kComma,
  kDot,
  kColon,
  kSemicolon,
  kEnd,  // end of the statement
};

// The reserved words the parser looks for; every other one is kOther.
enum class Keyword : std::uint8_t {
  kOther,
  kSelect,
  kFrom,
  kWhere,
  kOrder,
  kBy,
  kAsc,
  kDesc,
  kAs,
  kAt,
  kInsert,
  kInto,
  kInsertInto,  // INSERT INTO, merged into one token
  kValue,
  kUpdate,
  kDelete,
  kSet,
  kRemove,
  kReturning,
  kAll,
  kModified,
  kOld,
  kNew,
  // Reserved words that are also function names, e.g. size(x), EXISTS(SELECT ...).
  kExists,
  kSize,
  kCount,
  kSum,
  kAvg,
  kMin,
  kMax,
  kCallable,  // any other reserved word that may be called: upper(x), cast(...), ...
  // Two-word type names, merged into one token.
  kDoublePrecision,
  kCharacterVarying,
};

enum class Operator : std::uint8_t {
  kEq,
  kNe,  // <> or !=
  kLt,
  kLe,
  kGt,
  kGe,
  kPlus,
  kMinus,
  kStar,
  kSlash,
  kPercent,
  kConcat,  // ||
  kAnd,
  kOr,
  kNot,
  kIs,
  kIsNot,  // IS NOT, merged
  kIn,
  kNotIn,  // NOT IN, merged
  kBetween,
  kNotBetween,  // NOT BETWEEN, merged
  kLike,
  kNotLike,  // NOT LIKE, merged
};

struct Token {
  TokenType type = TokenType::kEnd;
  std::uint8_t code = 0;    // the Keyword of kKeyword, the Operator of kOperator
  std::uint32_t begin = 0;  // byte offsets into the statement text
  std::uint32_t end = 0;

  Keyword keyword() const {
    return type == TokenType::kKeyword ? static_cast<Keyword>(code) : Keyword::kOther;
  }
  bool is(Keyword k) const { return type == TokenType::kKeyword && keyword() == k; }
  bool is(Operator op) const {
    return type == TokenType::kOperator && static_cast<Operator>(code) == op;
  }
  Operator op() const { return static_cast<Operator>(code); }
};

// Splits `text` into tokens, comments and whitespace dropped. The result always ends with
// one kEnd token. Throws ApiError::validation (the envelope with an empty detail) on a
// lexical error.
std::vector<Token> tokenize(std::string_view text);

// True for PartiQL's reserved words, in any letter case: they cannot be unquoted names.
bool is_reserved_word(std::string_view word);

// `text` in lower case (ASCII letters only): keywords, function and type names are
// case-insensitive.
std::string to_lower(std::string_view text);

// The text of a string literal or quoted identifier token, without its quotes and with
// each doubled quote made single.
std::string unquote(std::string_view token_text);

}  // namespace kumo::partiql
