#include "partiql/lexer.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <optional>
#include <unordered_map>

#include "model/api_error.h"
#include "partiql/messages.h"
#include "partiql/number.h"

namespace kumo::partiql {
namespace {

struct Word {
  TokenType type;
  std::uint8_t code;
};

constexpr Word keyword(Keyword k) {
  return {TokenType::kKeyword, static_cast<std::uint8_t>(k)};
}
constexpr Word operator_word(Operator op) {
  return {TokenType::kOperator, static_cast<std::uint8_t>(op)};
}
constexpr Word kPlain = keyword(Keyword::kOther);
constexpr Word kCall = keyword(Keyword::kCallable);

// PartiQL's reserved words (SQL-92's and PartiQL's own) that the parser does not tell
// apart, lower case, separated by spaces.
constexpr std::string_view kReserved =
    "absolute action add allocate alter any are assertion authorization bag begin bigint bit blob "
    "bool boolean cascade cascaded case catalog char character check clob close collate collation "
    "column commit conflict connect connection constraint constraints continue convert "
    "corresponding create cross current current_date current_time current_timestamp current_user "
    "cursor date deallocate dec decimal declare default deferrable deferred describe descriptor "
    "diagnostics disconnect distinct do domain double drop else end escape except exception exec "
    "execute external fetch first float for foreign found full get global go goto grant group "
    "having identity immediate index indicator initially inner input insensitive int int2 int4 "
    "int8 integer integer2 integer4 integer8 intersect interval isolation join key language last "
    "left let level limit list local match module names national natural nchar next no nothing "
    "numeric of offset on only open option outer output overlaps pad partial pivot precision "
    "prepare preserve primary prior privileges procedure public read real references relative "
    "restrict revoke right rollback rows schema scroll section session session_user sexp smallint "
    "some space sql sqlcode sqlerror sqlstate string struct symbol system_user table temporary "
    "then time timestamp to transaction translate translation tuple union unique unknown unpivot "
    "usage user using values varchar varying view when whenever with work write zone";

// The reserved words the lexer or parser tells apart, lower case.
constexpr std::pair<std::string_view, Word> kSpecial[] = {
    {"all", keyword(Keyword::kAll)},
    {"and", operator_word(Operator::kAnd)},
    {"as", keyword(Keyword::kAs)},
    {"asc", keyword(Keyword::kAsc)},
    {"at", keyword(Keyword::kAt)},
    {"avg", keyword(Keyword::kAvg)},
    {"between", operator_word(Operator::kBetween)},
    {"bit_length", kCall},
    {"by", keyword(Keyword::kBy)},
    {"can_cast", kCall},
    {"can_lossless_cast", kCall},
    {"cast", kCall},
    {"char_length", kCall},
    {"character_length", kCall},
    {"coalesce", kCall},
    {"count", keyword(Keyword::kCount)},
    {"date_add", kCall},
    {"date_diff", kCall},
    {"delete", keyword(Keyword::kDelete)},
    {"desc", keyword(Keyword::kDesc)},
    {"exists", keyword(Keyword::kExists)},
    {"extract", kCall},
    {"false", {TokenType::kFalse, 0}},
    {"from", keyword(Keyword::kFrom)},
    {"in", operator_word(Operator::kIn)},
    {"insert", keyword(Keyword::kInsert)},
    {"into", keyword(Keyword::kInto)},
    {"is", operator_word(Operator::kIs)},
    {"like", operator_word(Operator::kLike)},
    {"lower", kCall},
    {"max", keyword(Keyword::kMax)},
    {"min", keyword(Keyword::kMin)},
    {"missing", {TokenType::kMissing, 0}},
    {"modified", keyword(Keyword::kModified)},
    {"new", keyword(Keyword::kNew)},
    {"not", operator_word(Operator::kNot)},
    {"null", {TokenType::kNull, 0}},
    {"nullif", kCall},
    {"octet_length", kCall},
    {"old", keyword(Keyword::kOld)},
    {"or", operator_word(Operator::kOr)},
    {"order", keyword(Keyword::kOrder)},
    {"position", kCall},
    {"remove", keyword(Keyword::kRemove)},
    {"returning", keyword(Keyword::kReturning)},
    {"select", keyword(Keyword::kSelect)},
    {"set", keyword(Keyword::kSet)},
    {"size", keyword(Keyword::kSize)},
    {"substring", kCall},
    {"sum", keyword(Keyword::kSum)},
    {"trim", kCall},
    {"true", {TokenType::kTrue, 0}},
    {"update", keyword(Keyword::kUpdate)},
    {"upper", kCall},
    {"value", keyword(Keyword::kValue)},
    {"where", keyword(Keyword::kWhere)},
};
constexpr std::size_t kLongestWord = 17;  // can_lossless_cast

// The reserved word `word` (any case) is, or nullptr.
const Word* find_word(std::string_view word) {
  static const std::unordered_map<std::string_view, Word> table = [] {
    std::unordered_map<std::string_view, Word> map;
    for (std::size_t begin = 0; begin < kReserved.size();) {
      const std::size_t end = std::min(kReserved.find(' ', begin), kReserved.size());
      map.emplace(kReserved.substr(begin, end - begin), kPlain);
      begin = end + 1;
    }
    for (const auto& [name, w] : kSpecial) map.emplace(name, w);
    return map;
  }();
  if (word.size() > kLongestWord) return nullptr;
  std::array<char, kLongestWord> lower{};
  std::transform(word.begin(), word.end(), lower.begin(), [](char c) {
    return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  });
  auto it = table.find(std::string_view(lower.data(), word.size()));
  return it == table.end() ? nullptr : &it->second;
}

bool is_name_start(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_' || c == '$';
}
bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
bool is_name_char(char c) {
  return is_name_start(c) || is_digit(c);
}
bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

[[noreturn]] void lexical_error() {
  throw ApiError::validation(msg::malformed(""));
}

class Lexer {
 public:
  explicit Lexer(std::string_view text) : text_(text) {}

  std::vector<Token> run() {
    while (skip_blanks()) {
      const std::size_t begin = i_;
      const char c = text_[i_];
      if (is_name_start(c)) {
        word(begin);
      } else if (is_digit(c) || (c == '.' && is_digit(at(i_ + 1)))) {
        number(begin);
      } else if (c == '\'' || c == '"' || c == '`') {
        quoted(begin, c);
      } else {
        punctuation(begin);
      }
    }
    push(TokenType::kEnd, 0, text_.size(), text_.size());
    merge();
    return std::move(tokens_);
  }

 private:
  char at(std::size_t i) const { return i < text_.size() ? text_[i] : '\0'; }

  void push(TokenType type, std::uint8_t code, std::size_t begin, std::size_t end) {
    tokens_.push_back(
        {type, code, static_cast<std::uint32_t>(begin), static_cast<std::uint32_t>(end)});
  }

  // Skips whitespace and comments; false at the end of the text.
  bool skip_blanks() {
    for (;;) {
      if (i_ >= text_.size()) return false;
      const char c = text_[i_];
      if (is_space(c)) {
        ++i_;
      } else if (c == '-' && at(i_ + 1) == '-') {
        const std::size_t newline = text_.find('\n', i_);
        i_ = newline == std::string_view::npos ? text_.size() : newline + 1;
      } else if (c == '/' && at(i_ + 1) == '*') {
        const std::size_t close = text_.find("*/", i_ + 2);
        if (close == std::string_view::npos) lexical_error();
        i_ = close + 2;
      } else {
        return true;
      }
    }
  }

  void word(std::size_t begin) {
    while (i_ < text_.size() && is_name_char(text_[i_])) ++i_;
    const Word* w = find_word(text_.substr(begin, i_ - begin));
    if (w == nullptr) {
      push(TokenType::kIdentifier, 0, begin, i_);
    } else {
      push(w->type, w->code, begin, i_);
    }
  }

  // digits [. digits] [e [+-] digits], or . digits [...]. The number must convert.
  void number(std::size_t begin) {
    while (is_digit(at(i_))) ++i_;
    if (at(i_) == '.') {
      ++i_;
      while (is_digit(at(i_))) ++i_;
    }
    if (at(i_) == 'e' || at(i_) == 'E') {
      ++i_;
      if (at(i_) == '+' || at(i_) == '-') ++i_;
      if (!is_digit(at(i_))) lexical_error();
      while (is_digit(at(i_))) ++i_;
    }
    Decimal unused;
    if (read_number(text_.substr(begin, i_ - begin), &unused) == NumberError::kNotConvertible) {
      lexical_error();
    }
    push(TokenType::kNumber, 0, begin, i_);
  }

  // 'string', "quoted name" (a doubled quote stands for one) or `ion`.
  void quoted(std::size_t begin, char quote) {
    for (++i_;; ++i_) {
      if (i_ >= text_.size()) lexical_error();
      if (text_[i_] != quote) continue;
      if (quote != '`' && at(i_ + 1) == quote) {
        ++i_;
        continue;
      }
      break;
    }
    ++i_;
    const TokenType type = quote == '\''  ? TokenType::kString
                           : quote == '"' ? TokenType::kQuotedIdentifier
                                          : TokenType::kIon;
    push(type, 0, begin, i_);
  }

  void punctuation(std::size_t begin) {
    const char c = text_[i_];
    const char n = at(i_ + 1);
    auto op = [&](Operator o, std::size_t length) {
      i_ += length;
      push(TokenType::kOperator, static_cast<std::uint8_t>(o), begin, i_);
    };
    auto simple = [&](TokenType type, std::size_t length) {
      i_ += length;
      push(type, 0, begin, i_);
    };
    switch (c) {
      case '(':
        return simple(TokenType::kLeftParen, 1);
      case ')':
        return simple(TokenType::kRightParen, 1);
      case '[':
        return simple(TokenType::kLeftBracket, 1);
      case ']':
        return simple(TokenType::kRightBracket, 1);
      case '{':
        return simple(TokenType::kLeftBrace, 1);
      case '}':
        return simple(TokenType::kRightBrace, 1);
      case ',':
        return simple(TokenType::kComma, 1);
      case '.':
        return simple(TokenType::kDot, 1);
      case ':':
        return simple(TokenType::kColon, 1);
      case ';':
        return simple(TokenType::kSemicolon, 1);
      case '?':
        return simple(TokenType::kParameter, 1);
      case '=':
        return op(Operator::kEq, 1);
      case '+':
        return op(Operator::kPlus, 1);
      case '-':
        return op(Operator::kMinus, 1);
      case '*':
        return op(Operator::kStar, 1);
      case '/':
        return op(Operator::kSlash, 1);
      case '%':
        return op(Operator::kPercent, 1);
      case '!':
        if (n == '=') return op(Operator::kNe, 2);
        break;
      case '|':
        if (n == '|') return op(Operator::kConcat, 2);
        break;
      case '<':
        if (n == '<') return simple(TokenType::kLeftBag, 2);
        if (n == '>') return op(Operator::kNe, 2);
        if (n == '=') return op(Operator::kLe, 2);
        return op(Operator::kLt, 1);
      case '>':
        if (n == '>') return simple(TokenType::kRightBag, 2);
        if (n == '=') return op(Operator::kGe, 2);
        return op(Operator::kGt, 1);
      default:
        break;
    }
    lexical_error();
  }

  bool word_is(const Token& t, std::string_view lower) const {
    const std::string_view w = text_.substr(t.begin, t.end - t.begin);
    return std::ranges::equal(
        w, lower, [](char a, char b) { return std::tolower(static_cast<unsigned char>(a)) == b; });
  }

  // Joins the two-word tokens PartiQL reads as one: NOT IN, NOT BETWEEN, NOT LIKE, IS NOT,
  // INSERT INTO, DOUBLE PRECISION, CHARACTER VARYING.
  void merge() {
    std::vector<Token> merged;
    merged.reserve(tokens_.size());
    for (std::size_t k = 0; k < tokens_.size(); ++k) {
      Token t = tokens_[k];
      const Token& next = tokens_[std::min(k + 1, tokens_.size() - 1)];
      std::optional<Token> joined;
      auto join = [&](TokenType type, std::uint8_t code) {
        joined = Token{type, code, t.begin, next.end};
      };
      if (t.is(Operator::kNot) && next.is(Operator::kIn)) {
        join(TokenType::kOperator, static_cast<std::uint8_t>(Operator::kNotIn));
      } else if (t.is(Operator::kNot) && next.is(Operator::kBetween)) {
        join(TokenType::kOperator, static_cast<std::uint8_t>(Operator::kNotBetween));
      } else if (t.is(Operator::kNot) && next.is(Operator::kLike)) {
        join(TokenType::kOperator, static_cast<std::uint8_t>(Operator::kNotLike));
      } else if (t.is(Operator::kIs) && next.is(Operator::kNot)) {
        join(TokenType::kOperator, static_cast<std::uint8_t>(Operator::kIsNot));
      } else if (t.is(Keyword::kInsert) && next.is(Keyword::kInto)) {
        join(TokenType::kKeyword, static_cast<std::uint8_t>(Keyword::kInsertInto));
      } else if (t.type == TokenType::kKeyword && word_is(t, "double") &&
                 next.type == TokenType::kKeyword && word_is(next, "precision")) {
        join(TokenType::kKeyword, static_cast<std::uint8_t>(Keyword::kDoublePrecision));
      } else if (t.type == TokenType::kKeyword && word_is(t, "character") &&
                 next.type == TokenType::kKeyword && word_is(next, "varying")) {
        join(TokenType::kKeyword, static_cast<std::uint8_t>(Keyword::kCharacterVarying));
      }
      if (joined) {
        merged.push_back(*joined);
        ++k;
      } else {
        merged.push_back(t);
      }
    }
    tokens_ = std::move(merged);
  }

  std::string_view text_;
  std::size_t i_ = 0;
  std::vector<Token> tokens_;
};

}  // namespace

std::vector<Token> tokenize(std::string_view text) {
  return Lexer(text).run();
}

bool is_reserved_word(std::string_view word) {
  return find_word(word) != nullptr;
}

std::string to_lower(std::string_view text) {
  std::string out(text);
  std::ranges::transform(out, out.begin(), [](char c) {
    return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  });
  return out;
}

std::string unquote(std::string_view token_text) {
  std::string out;
  if (token_text.size() < 2) return out;
  const char quote = token_text.front();
  const std::string_view inner = token_text.substr(1, token_text.size() - 2);
  out.reserve(inner.size());
  for (std::size_t i = 0; i < inner.size(); ++i) {
    out.push_back(inner[i]);
    if (inner[i] == quote && i + 1 < inner.size() && inner[i + 1] == quote) ++i;
  }
  return out;
}

}  // namespace kumo::partiql
