#include "expr/parser.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <optional>

#include "expr/lexer.h"
#include "expr/messages.h"
#include "expr/reserved_words.h"
#include "model/api_error.h"

namespace kumo::expr {
namespace {

struct FunctionInfo {
  std::string_view name;  // case-sensitive, as DynamoDB requires
  Function function;
  std::size_t arity;
  bool needs_path;    // first operand must be a document path
  bool is_condition;  // may stand as a condition
  bool is_operand;    // may stand as an operand
};

// Condition, filter and key-condition expressions know these functions; update expressions
// know only their own two. A condition function in an update is an unknown name; an update
// function in a condition is a known function that conditions do not allow.
constexpr std::array<FunctionInfo, 6> kConditionFunctions{{
    {"attribute_exists", Function::kAttributeExists, 1, true, true, false},
    {"attribute_not_exists", Function::kAttributeNotExists, 1, true, true, false},
    {"attribute_type", Function::kAttributeType, 2, false, true, false},
    {"begins_with", Function::kBeginsWith, 2, false, true, false},
    {"contains", Function::kContains, 2, false, true, false},
    {"size", Function::kSize, 1, false, false, true},
}};
constexpr std::array<FunctionInfo, 2> kUpdateFunctions{{
    {"if_not_exists", Function::kIfNotExists, 2, true, false, true},
    {"list_append", Function::kListAppend, 2, false, false, true},
}};

// Errors found while parsing but reported only once the whole text parsed, in this order.
enum Category : std::size_t {
  kPathLimits,
  kClauseRepeated,
  kRedundantParens,
  kInvalidFunction,
  kMisusedFunction,
  kReservedWord,
  kKeyStructure,
  kCategoryCount,
};

constexpr std::array<std::string_view, 4> kClauseWords{"SET", "REMOVE", "ADD", "DELETE"};

std::optional<UpdateClause> clause_of(std::string_view word) {
  for (std::size_t i = 0; i < kClauseWords.size(); ++i) {
    if (std::ranges::equal(word, kClauseWords[i], [](char a, char b) {
          return std::toupper(static_cast<unsigned char>(a)) == b;
        })) {
      return static_cast<UpdateClause>(i);
    }
  }
  return std::nullopt;
}

std::optional<Comparator> comparator_of(TokenType type) {
  switch (type) {
    case TokenType::kEq:
      return Comparator::kEq;
    case TokenType::kNe:
      return Comparator::kNe;
    case TokenType::kLt:
      return Comparator::kLt;
    case TokenType::kLe:
      return Comparator::kLe;
    case TokenType::kGt:
      return Comparator::kGt;
    case TokenType::kGe:
      return Comparator::kGe;
    default:
      return std::nullopt;
  }
}

class Parser {
 public:
  Parser(ExpressionKind kind, std::string_view text, TextLimits limits = TextLimits::kApply)
      : kind_(kind),
        limits_(limits),
        text_(text),
        tokens_(tokenize(text)),
        out_(std::make_shared<ParsedExpression>()) {
    out_->kind = kind;
    out_->text = text;
  }

  std::shared_ptr<const ParsedExpression> run() {
    switch (kind_) {
      case ExpressionKind::kProjection:
        parse_projection();
        break;
      case ExpressionKind::kUpdate:
        parse_update();
        break;
      default:
        out_->root = parse_or();
        break;
    }
    if (peek().type != TokenType::kEnd) fail();
    if (limits_ == TextLimits::kApply && operators_ > msg::kMaxOperators) {
      throw error(msg::too_many_operators(operators_));
    }
    if (kind_ == ExpressionKind::kKeyCondition &&
        std::ranges::all_of(pending_, &std::string::empty)) {
      check_key_condition(out_->root);
    }
    for (const std::string& message : pending_) {
      if (!message.empty()) throw error(message);
    }
    return out_;
  }

 private:
  ApiError error(std::string_view detail) const {
    return ApiError::validation(msg::invalid(kind_, detail));
  }

  // --- tokens ---
  const Token& peek(std::size_t ahead = 0) const {
    return tokens_[std::min(pos_ + ahead, tokens_.size() - 1)];
  }
  std::string_view slice(const Token& t) const { return text_.substr(t.begin, t.end - t.begin); }
  bool accept(TokenType type) {
    if (peek().type != type) return false;
    ++pos_;
    return true;
  }
  void expect(TokenType type) {
    if (!accept(type)) fail();
  }

  // DynamoDB's syntax error: the first token that does not fit ("<EOF>" at the end), and the
  // source from the start of the previous token through the end of the next one.
  [[noreturn]] void fail() const {
    const Token& t = tokens_[pos_];
    const bool at_end = t.type == TokenType::kEnd;
    std::uint32_t begin = pos_ > 0 ? tokens_[pos_ - 1].begin : t.begin;
    std::uint32_t end = at_end ? (pos_ > 0 ? tokens_[pos_ - 1].end : t.begin) : t.end;
    if (!at_end && tokens_[pos_ + 1].type != TokenType::kEnd) end = tokens_[pos_ + 1].end;
    throw error(msg::syntax_error(at_end ? "<EOF>" : slice(t), text_.substr(begin, end - begin)));
  }

  // --- error bookkeeping ---
  void note(Category category, std::string message) {
    if (pending_[category].empty()) pending_[category] = std::move(message);
  }
  void defer(std::string message) {
    if (out_->deferred_error.empty()) out_->deferred_error = std::move(message);
  }

  // --- nesting ---
  // Each nesting level (a group, a NOT, a function call) owns at least one operator of its own
  // unless a group is redundant, and a group can add a level to a NOT: a valid expression
  // (at most 300 operators, no redundant parentheses) nests at most about 600 deep. Deeper
  // input is rejected before recursion can exhaust the stack, with the error it necessarily
  // has: too many operators, or else redundant parentheses.
  static constexpr std::size_t kMaxNesting = 700;
  struct Nesting {
    explicit Nesting(Parser& p) : parser(p) {
      if (++parser.depth_ > kMaxNesting) parser.too_deep();
    }
    ~Nesting() { --parser.depth_; }
    Parser& parser;
  };
  [[noreturn]] void too_deep() const {
    std::size_t operators = 0;
    for (std::size_t i = 0; i + 1 < tokens_.size(); ++i) {
      const TokenType t = tokens_[i].type;
      if (t == TokenType::kEq && kind_ == ExpressionKind::kUpdate) continue;  // SET's '='
      operators += comparator_of(t) || t == TokenType::kAnd || t == TokenType::kOr ||
                   t == TokenType::kNot || t == TokenType::kBetween || t == TokenType::kIn ||
                   t == TokenType::kPlus || t == TokenType::kMinus ||
                   (t == TokenType::kName && tokens_[i + 1].type == TokenType::kLeftParen);
    }
    // BETWEEN's AND is part of the BETWEEN, not an operator of its own.
    operators -= std::min(
        operators, static_cast<std::size_t>(std::ranges::count_if(
                       tokens_, [](const Token& t) { return t.type == TokenType::kBetween; })));
    if (operators > msg::kMaxOperators) throw error(msg::too_many_operators(operators));
    throw error(msg::redundant_parentheses());
  }

  // --- building ---
  NodeId add(Node node) {
    if (node.type != NodeType::kPath && node.type != NodeType::kValue) ++operators_;
    out_->nodes.push_back(std::move(node));
    grouped_.push_back(false);
    info_.push_back(nullptr);
    return static_cast<NodeId>(out_->nodes.size() - 1);
  }
  const Node& node(NodeId id) const { return out_->nodes[id]; }
  static Node make(NodeType type, std::vector<NodeId> args = {}) {
    Node n;
    n.type = type;
    n.args = std::move(args);
    return n;
  }
  Node value_node(std::string_view placeholder) {
    Node n = make(NodeType::kValue);
    n.ref = slot(out_->value_placeholders, placeholder, false);
    return n;
  }

  std::uint32_t slot(std::vector<std::string>& table, std::string_view text, bool is_name) {
    auto it = std::ranges::find(table, text);
    if (it != table.end()) return static_cast<std::uint32_t>(it - table.begin());
    table.emplace_back(text);
    auto index = static_cast<std::uint32_t>(table.size() - 1);
    out_->placeholder_uses.push_back({is_name, index});
    return index;
  }

  // --- condition grammar: OR < AND < NOT < comparison / function / ( condition ) ---
  NodeId parse_or() {
    NodeId left = parse_and();
    while (accept(TokenType::kOr)) {
      NodeId right = parse_and();
      left = add(make(NodeType::kOr, {left, right}));
    }
    return left;
  }

  NodeId parse_and() {
    NodeId left = parse_not();
    while (accept(TokenType::kAnd)) {
      NodeId right = parse_not();
      left = add(make(NodeType::kAnd, {left, right}));
    }
    return left;
  }

  NodeId parse_not() {
    if (accept(TokenType::kNot)) {
      Nesting nesting(*this);
      NodeId inner = parse_not();
      return add(make(NodeType::kNot, {inner}));
    }
    return parse_primary();
  }

  static bool starts_comparison(TokenType type) {
    return comparator_of(type) || type == TokenType::kBetween || type == TokenType::kIn;
  }

  NodeId parse_primary() {
    if (accept(TokenType::kLeftParen)) {
      Nesting nesting(*this);
      NodeId inner = parse_or();
      expect(TokenType::kRightParen);
      // DynamoDB rejects a group whose whole content is already a group: ((a = :v)).
      if (grouped_[inner]) note(kRedundantParens, msg::redundant_parentheses());
      grouped_[inner] = true;
      return inner;
    }
    if (at_function_call()) {
      NodeId call = parse_function_call();
      if (starts_comparison(peek().type)) {
        check_operand_use(call);
        return parse_comparison(call);
      }
      if (const FunctionInfo* info = info_[call]; info && !info->is_condition) {
        note(kMisusedFunction, msg::misused_function(info->name));
      }
      return call;
    }
    return parse_comparison(parse_operand());
  }

  NodeId parse_comparison(NodeId left) {
    const TokenType type = peek().type;
    if (std::optional<Comparator> op = comparator_of(type)) {
      ++pos_;
      NodeId right = parse_operand();
      Node compare = make(NodeType::kCompare, {left, right});
      compare.comparator = *op;
      return add(std::move(compare));
    }
    if (accept(TokenType::kBetween)) {
      NodeId lower = parse_operand();
      expect(TokenType::kAnd);
      NodeId upper = parse_operand();
      return add(make(NodeType::kBetween, {left, lower, upper}));
    }
    if (accept(TokenType::kIn)) {
      expect(TokenType::kLeftParen);
      std::vector<NodeId> args{left};
      do {
        args.push_back(parse_operand());
      } while (accept(TokenType::kComma));
      expect(TokenType::kRightParen);
      if (args.size() - 1 > msg::kMaxInOperands) defer(msg::operand_count("IN", args.size() - 1));
      return add(make(NodeType::kIn, std::move(args)));
    }
    fail();
  }

  // --- operands, shared by conditions and update values ---
  bool at_function_call() const {
    return peek().type == TokenType::kName && peek(1).type == TokenType::kLeftParen;
  }

  template <std::size_t N>
  static const FunctionInfo* find_function(const std::array<FunctionInfo, N>& table,
                                           std::string_view name) {
    auto it = std::ranges::find(table, name, &FunctionInfo::name);
    return it == table.end() ? nullptr : &*it;
  }

  // The function `name` calls in this expression's grammar; notes the error when there is
  // none.
  const FunctionInfo* lookup(std::string_view name) {
    if (kind_ == ExpressionKind::kUpdate) {
      if (const FunctionInfo* info = find_function(kUpdateFunctions, name)) return info;
    } else if (const FunctionInfo* info = find_function(kConditionFunctions, name)) {
      return info;
    } else if (find_function(kUpdateFunctions, name) != nullptr) {
      note(kInvalidFunction, msg::function_not_in_condition(name));
      return nullptr;
    }
    note(kInvalidFunction, msg::invalid_function(name));
    return nullptr;
  }

  bool calls(NodeId id, Function function) const {
    return info_[id] != nullptr && info_[id]->function == function;
  }

  void check_operand_use(NodeId call) {
    if (const FunctionInfo* info = info_[call]; info && !info->is_operand) {
      note(kMisusedFunction, msg::misused_function(info->name));
    }
  }

  NodeId parse_operand() {
    if (at_function_call()) {
      NodeId call = parse_function_call();
      check_operand_use(call);
      return call;
    }
    const Token& t = peek();
    if (t.type == TokenType::kValuePlaceholder) {
      ++pos_;
      return add(value_node(slice(t)));
    }
    if (t.type == TokenType::kName || t.type == TokenType::kNamePlaceholder) {
      Node path = make(NodeType::kPath);
      path.ref = parse_path();
      return add(std::move(path));
    }
    fail();
  }

  NodeId parse_function_call() {
    const std::string_view name = slice(peek());
    pos_ += 2;  // the name and '('
    Nesting nesting(*this);
    std::vector<NodeId> args;
    do {
      args.push_back(parse_operand());
    } while (accept(TokenType::kComma));
    expect(TokenType::kRightParen);
    Node call = make(NodeType::kFunction, std::move(args));
    const FunctionInfo* info = lookup(name);
    if (info != nullptr) {
      call.function = info->function;
      check_call(*info, call);
    }
    NodeId id = add(std::move(call));
    info_[id] = info;
    return id;
  }

  void check_call(const FunctionInfo& info, const Node& call) {
    if (call.args.size() != info.arity) {
      return defer(msg::operand_count(info.name, call.args.size()));
    }
    if (info.needs_path && node(call.args[0]).type != NodeType::kPath) {
      return defer(msg::requires_path(info.name));
    }
    // attribute_type names the type with a value: a path there has no type name to compare.
    if (info.function == Function::kAttributeType && node(call.args[1]).type == NodeType::kPath) {
      return defer(msg::requires_value(info.name));
    }
    // list_append takes if_not_exists as an operand, but not another list_append.
    if (info.function == Function::kListAppend &&
        std::ranges::any_of(call.args,
                            [this](NodeId arg) { return calls(arg, Function::kListAppend); })) {
      note(kMisusedFunction, msg::misused_function(info.name));
    }
  }

  std::uint32_t parse_path() {
    DocumentPath path;
    path.elements.push_back(parse_path_name());
    for (;;) {
      if (accept(TokenType::kDot)) {
        path.elements.push_back(parse_path_name());
      } else if (accept(TokenType::kLeftBracket)) {
        const Token& t = peek();
        if (t.type != TokenType::kNumber) fail();
        ++pos_;
        expect(TokenType::kRightBracket);
        path.elements.push_back(
            {.kind = PathElement::Kind::kIndex, .number = list_index(slice(t)), .text = {}});
      } else {
        break;
      }
    }
    if (path.elements.size() > msg::kMaxPathElements) {
      note(kPathLimits, msg::path_too_deep(path.elements.size()));
    }
    out_->paths.push_back(std::move(path));
    return static_cast<std::uint32_t>(out_->paths.size() - 1);
  }

  // The list index `digits` (a number token) stands for; past 2^31 - 1 it is an error.
  std::uint32_t list_index(std::string_view digits) {
    std::uint64_t index = 0;
    const std::from_chars_result parsed =
        std::from_chars(digits.data(), digits.data() + digits.size(), index);
    if (parsed.ec != std::errc{} || index > msg::kMaxListIndex) {
      note(kPathLimits, msg::list_index_out_of_range(digits));
      return 0;
    }
    return static_cast<std::uint32_t>(index);
  }

  PathElement parse_path_name() {
    const Token& t = peek();
    const std::string_view text = slice(t);
    if (t.type == TokenType::kNamePlaceholder) {
      ++pos_;
      return {.kind = PathElement::Kind::kNamePlaceholder,
              .number = slot(out_->name_placeholders, text, true),
              .text = std::string(text)};
    }
    // In an update expression the clause words are keywords, never names.
    if (t.type != TokenType::kName || (kind_ == ExpressionKind::kUpdate && clause_of(text))) {
      fail();
    }
    if (is_reserved_word(text)) note(kReservedWord, msg::reserved_keyword(text));
    ++pos_;
    return {.kind = PathElement::Kind::kName, .text = std::string(text)};
  }

  // --- update grammar: clause+ where clause is SET/REMOVE/ADD/DELETE actions ---
  void parse_update() {
    std::array<bool, 4> seen{};
    do {
      const Token& t = peek();
      std::optional<UpdateClause> clause =
          t.type == TokenType::kName ? clause_of(slice(t)) : std::nullopt;
      if (!clause) fail();
      const auto index = static_cast<std::size_t>(*clause);
      if (seen[index]) note(kClauseRepeated, msg::clause_repeated(kClauseWords[index]));
      seen[index] = true;
      ++pos_;
      do {
        UpdateAction action{.clause = *clause, .path = parse_path()};
        if (*clause == UpdateClause::kSet) {
          expect(TokenType::kEq);
          action.value = parse_set_value();
        } else if (*clause != UpdateClause::kRemove) {
          const Token& v = peek();
          if (v.type != TokenType::kValuePlaceholder) fail();
          ++pos_;
          action.value = add(value_node(slice(v)));
        }
        out_->actions.push_back(action);
      } while (accept(TokenType::kComma));
    } while (peek().type != TokenType::kEnd);
  }

  NodeId parse_set_value() {
    NodeId left = parse_operand();
    const TokenType type = peek().type;
    if (type != TokenType::kPlus && type != TokenType::kMinus) return left;
    ++pos_;
    NodeId right = parse_operand();
    return add(make(type == TokenType::kPlus ? NodeType::kPlus : NodeType::kMinus, {left, right}));
  }

  void parse_projection() {
    do {
      out_->projection.push_back(parse_path());
    } while (accept(TokenType::kComma));
  }

  // --- KeyConditionExpression structure: conditions joined by AND, each a comparison,
  // BETWEEN or begins_with on one top-level key attribute ---
  void check_key_condition(NodeId id) {
    if (!pending_[kKeyStructure].empty()) return;
    const Node& n = node(id);
    switch (n.type) {
      case NodeType::kAnd:
        check_key_condition(n.args[0]);
        check_key_condition(n.args[1]);
        return;
      case NodeType::kOr:
        return note(kKeyStructure, msg::key_invalid_operator("OR"));
      case NodeType::kNot:
        return note(kKeyStructure, msg::key_invalid_operator("NOT"));
      case NodeType::kIn:
        return note(kKeyStructure, msg::key_invalid_operator("IN"));
      case NodeType::kCompare:
        if (n.comparator == Comparator::kNe) {
          return note(kKeyStructure, msg::key_invalid_operator("<>"));
        }
        return check_key_operands(n, {});
      case NodeType::kBetween:
        return check_key_operands(n, "BETWEEN");
      case NodeType::kFunction:
        if (n.function == Function::kSize) {
          return note(kKeyStructure, msg::key_nested_operation());
        }
        if (n.function != Function::kBeginsWith) {
          return note(kKeyStructure, msg::key_invalid_operator(function_name(n.function)));
        }
        if (n.args.size() == 2) check_key_operands(n, "begins_with");
        return;
      default:
        return;
    }
  }

  // `first_operand_op` names BETWEEN/begins_with, whose key must come first; comparisons
  // accept it on either side.
  void check_key_operands(const Node& n, std::string_view first_operand_op) {
    std::size_t paths = 0;
    for (NodeId arg : n.args) {
      const Node& operand = node(arg);
      if (operand.type == NodeType::kFunction) {
        return note(kKeyStructure, msg::key_nested_operation());
      }
      if (operand.type == NodeType::kPath) {
        if (out_->paths[operand.ref].elements.size() > 1) {
          return note(kKeyStructure, msg::key_nested_attribute());
        }
        ++paths;
      }
    }
    if (paths == 0) return note(kKeyStructure, msg::key_no_attribute());
    if (!first_operand_op.empty() && node(n.args[0]).type != NodeType::kPath) {
      return note(kKeyStructure, msg::key_first_operand(first_operand_op));
    }
    if (paths > 1) note(kKeyStructure, msg::key_multiple_names());
  }

  ExpressionKind kind_;
  TextLimits limits_;
  std::string_view text_;
  std::vector<Token> tokens_;
  std::size_t pos_ = 0;
  std::shared_ptr<ParsedExpression> out_;
  std::size_t operators_ = 0;
  std::size_t depth_ = 0;
  std::array<std::string, kCategoryCount> pending_;
  std::vector<bool> grouped_;              // per node: written as a whole "( ... )" group
  std::vector<const FunctionInfo*> info_;  // per node: the known function it calls
};

}  // namespace

std::shared_ptr<const ParsedExpression> parse_generated_expression(ExpressionKind kind,
                                                                   std::string_view text) {
  return Parser(kind, text, TextLimits::kIgnore).run();
}

std::shared_ptr<const ParsedExpression> parse_expression(ExpressionKind kind,
                                                         std::string_view text) {
  if (text.empty()) {
    throw ApiError::validation(msg::invalid(kind, msg::empty_expression()));
  }
  if (text.size() > msg::kMaxExpressionBytes) {
    throw ApiError::validation(msg::invalid(kind, msg::expression_too_large(text.size())));
  }
  return Parser(kind, text).run();
}

}  // namespace kumo::expr
