// The one lexer all five expression kinds share: keywords are case-insensitive, function
// names case-sensitive, and every constant is a :value placeholder.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace kumo::expr {

enum class TokenType : std::uint8_t {
  kName,              // [A-Za-z][A-Za-z0-9_]*: an attribute name, function name or clause word
  kNamePlaceholder,   // #[A-Za-z0-9_]+
  kValuePlaceholder,  // :[A-Za-z0-9_]+
  kNumber,            // [0-9]+ (only valid as a list index)
  // Keywords of the condition grammar, in any letter case.
  kAnd,
  kOr,
  kNot,
  kBetween,
  kIn,
  kLeftParen,
  kRightParen,
  kLeftBracket,
  kRightBracket,
  kComma,
  kDot,
  kEq,
  kNe,
  kLt,
  kLe,
  kGt,
  kGe,
  kPlus,
  kMinus,
  kInvalid,  // any other character (one whole UTF-8 sequence): never fits the grammar
  kEnd,      // end of input, rendered "<EOF>" in syntax errors
};

struct Token {
  TokenType type = TokenType::kEnd;
  std::uint32_t begin = 0;  // byte offsets into the expression text
  std::uint32_t end = 0;
};

// Splits `text` into tokens; whitespace (space, tab, CR, LF) separates them. The result
// always ends with one kEnd token. Never fails: unknown characters become kInvalid tokens so
// that the parser reports them as DynamoDB's syntax error.
std::vector<Token> tokenize(std::string_view text);

// True for `#` or `:` followed by one or more [A-Za-z0-9_]: the keys DynamoDB accepts in
// ExpressionAttributeNames (prefix '#') and ExpressionAttributeValues (prefix ':').
bool is_valid_placeholder(std::string_view key, char prefix);

}  // namespace kumo::expr
