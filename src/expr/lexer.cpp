#include "expr/lexer.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <utility>

namespace kumo::expr {
namespace {

// Names and function names start with a letter; placeholders may start with any name
// character, '_' and digits included.
bool is_letter(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}
bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
bool is_name_char(char c) {
  return is_letter(c) || is_digit(c) || c == '_';
}
bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

bool iequals(std::string_view a, std::string_view b) {
  return std::ranges::equal(a, b, [](char x, char y) {
    return std::toupper(static_cast<unsigned char>(x)) ==
           std::toupper(static_cast<unsigned char>(y));
  });
}

TokenType classify_word(std::string_view word) {
  static constexpr std::array<std::pair<std::string_view, TokenType>, 5> kKeywords{{
      {"AND", TokenType::kAnd},
      {"OR", TokenType::kOr},
      {"NOT", TokenType::kNot},
      {"BETWEEN", TokenType::kBetween},
      {"IN", TokenType::kIn},
  }};
  for (const auto& [keyword, type] : kKeywords) {
    if (iequals(word, keyword)) return type;
  }
  return TokenType::kName;
}

// Length of the UTF-8 sequence starting with lead byte `c` (1 for stray bytes).
std::size_t utf8_length(unsigned char c) {
  if (c >= 0xF0 && c < 0xF8) return 4;
  if (c >= 0xE0) return c < 0xF0 ? 3 : 1;
  if (c >= 0xC0) return 2;
  return 1;
}

}  // namespace

std::vector<Token> tokenize(std::string_view text) {
  std::vector<Token> tokens;
  std::size_t i = 0;
  auto push = [&tokens](TokenType type, std::size_t begin, std::size_t end) {
    tokens.push_back({type, static_cast<std::uint32_t>(begin), static_cast<std::uint32_t>(end)});
  };
  while (i < text.size()) {
    const char c = text[i];
    const std::size_t begin = i;
    if (is_space(c)) {
      ++i;
      continue;
    }
    if (is_letter(c)) {
      while (i < text.size() && is_name_char(text[i])) ++i;
      push(classify_word(text.substr(begin, i - begin)), begin, i);
      continue;
    }
    if (is_digit(c)) {
      while (i < text.size() && is_digit(text[i])) ++i;
      push(TokenType::kNumber, begin, i);
      continue;
    }
    if ((c == '#' || c == ':') && i + 1 < text.size() && is_name_char(text[i + 1])) {
      ++i;
      while (i < text.size() && is_name_char(text[i])) ++i;
      push(c == '#' ? TokenType::kNamePlaceholder : TokenType::kValuePlaceholder, begin, i);
      continue;
    }
    const char n = i + 1 < text.size() ? text[i + 1] : '\0';
    TokenType type = TokenType::kInvalid;
    std::size_t length = 1;
    switch (c) {
      case '(':
        type = TokenType::kLeftParen;
        break;
      case ')':
        type = TokenType::kRightParen;
        break;
      case '[':
        type = TokenType::kLeftBracket;
        break;
      case ']':
        type = TokenType::kRightBracket;
        break;
      case ',':
        type = TokenType::kComma;
        break;
      case '.':
        type = TokenType::kDot;
        break;
      case '=':
        type = TokenType::kEq;
        break;
      case '+':
        type = TokenType::kPlus;
        break;
      case '-':
        type = TokenType::kMinus;
        break;
      case '<':
        if (n == '>') {
          type = TokenType::kNe;
          length = 2;
        } else if (n == '=') {
          type = TokenType::kLe;
          length = 2;
        } else {
          type = TokenType::kLt;
        }
        break;
      case '>':
        if (n == '=') {
          type = TokenType::kGe;
          length = 2;
        } else {
          type = TokenType::kGt;
        }
        break;
      default:
        length = std::min(utf8_length(static_cast<unsigned char>(c)), text.size() - i);
        break;
    }
    i += length;
    push(type, begin, i);
  }
  push(TokenType::kEnd, text.size(), text.size());
  return tokens;
}

bool is_valid_placeholder(std::string_view key, char prefix) {
  return key.size() >= 2 && key[0] == prefix &&
         std::ranges::all_of(key.substr(1), [](char c) { return is_name_char(c); });
}

}  // namespace kumo::expr
