#include "partiql/parser.h"

#include <algorithm>
#include <cctype>
#include <string>
#include <utility>

#include "model/api_error.h"
#include "partiql/messages.h"
#include "partiql/number.h"
#include "partiql/update.h"

namespace kumo::partiql {
namespace {

// Infix binding strength, loosest first; 0 for a token that is no infix operator.
constexpr int kOrPrecedence = 10;
constexpr int kAndPrecedence = 20;
constexpr int kNotPrecedence = 30;  // prefix NOT: NOT a = 1 is NOT (a = 1)
constexpr int kEqualityPrecedence = 40;
constexpr int kOrderingPrecedence = 50;
constexpr int kAdditivePrecedence = 60;
constexpr int kMultiplicativePrecedence = 70;

int infix_precedence(const Token& t) {
  if (t.type != TokenType::kOperator) return 0;
  switch (t.op()) {
    case Operator::kOr:
      return kOrPrecedence;
    case Operator::kAnd:
      return kAndPrecedence;
    case Operator::kEq:
    case Operator::kNe:
    case Operator::kIs:
    case Operator::kIsNot:
    case Operator::kIn:
    case Operator::kNotIn:
    case Operator::kLike:
    case Operator::kNotLike:
      return kEqualityPrecedence;
    case Operator::kLt:
    case Operator::kLe:
    case Operator::kGt:
    case Operator::kGe:
    case Operator::kBetween:
    case Operator::kNotBetween:
      return kOrderingPrecedence;
    case Operator::kPlus:
    case Operator::kMinus:
    case Operator::kConcat:
      return kAdditivePrecedence;
    case Operator::kStar:
    case Operator::kSlash:
    case Operator::kPercent:
      return kMultiplicativePrecedence;
    case Operator::kNot:
      return 0;
  }
  return 0;
}

Function function_of(std::string_view lower_name) {
  static constexpr std::pair<std::string_view, Function> kFunctions[] = {
      {"attribute_exists", Function::kAttributeExists},
      {"attribute_not_exists", Function::kAttributeNotExists},
      {"attribute_type", Function::kAttributeType},
      {"begins_with", Function::kBeginsWith},
      {"contains", Function::kContains},
      {"size", Function::kSize},
      {"list_append", Function::kListAppend},
      {"set_add", Function::kSetAdd},
      {"set_delete", Function::kSetDelete},
      {"exists", Function::kExists},
      {"count", Function::kCount},
      {"sum", Function::kSum},
      {"avg", Function::kAvg},
      {"min", Function::kMin},
      {"max", Function::kMax},
  };
  for (const auto& [name, f] : kFunctions) {
    if (name == lower_name) return f;
  }
  return Function::kOther;
}

// The type an IS tests, from the token after IS; nullopt when it names no type.
std::optional<IsType> is_type_of(const Token& t, std::string_view text) {
  if (t.type == TokenType::kNull) return IsType::kNull;
  if (t.type == TokenType::kMissing) return IsType::kMissing;
  if (t.type != TokenType::kKeyword) return std::nullopt;
  if (t.is(Keyword::kDoublePrecision) || t.is(Keyword::kCharacterVarying)) return IsType::kOther;
  static constexpr std::pair<std::string_view, IsType> kTypes[] = {
      {"bool", IsType::kBoolean},    {"boolean", IsType::kBoolean}, {"string", IsType::kString},
      {"numeric", IsType::kNumeric}, {"blob", IsType::kBlob},       {"struct", IsType::kStruct},
      {"tuple", IsType::kStruct},    {"list", IsType::kList},       {"smallint", IsType::kOther},
      {"int2", IsType::kOther},      {"integer2", IsType::kOther},  {"int4", IsType::kOther},
      {"integer4", IsType::kOther},  {"int8", IsType::kOther},      {"integer8", IsType::kOther},
      {"int", IsType::kOther},       {"integer", IsType::kOther},   {"bigint", IsType::kOther},
      {"float", IsType::kOther},     {"real", IsType::kOther},      {"decimal", IsType::kOther},
      {"dec", IsType::kOther},       {"timestamp", IsType::kOther}, {"char", IsType::kOther},
      {"character", IsType::kOther}, {"varchar", IsType::kOther},   {"symbol", IsType::kOther},
      {"clob", IsType::kOther},      {"sexp", IsType::kOther},      {"bag", IsType::kOther},
      {"date", IsType::kOther},      {"time", IsType::kOther},
  };
  const std::string word = to_lower(text.substr(t.begin, t.end - t.begin));
  for (const auto& [name, type] : kTypes) {
    if (name == word) return type;
  }
  return std::nullopt;
}

// What PartiQL parses but DynamoDB refuses in the statement's form (reported after the
// whole text parsed, before literal errors).
struct Form {
  bool alias = false;
  bool multiple_sources = false;
  bool insert_bag = false;
  bool insert_not_struct = false;
  bool insert_at = false;
  bool insert_returning = false;
  bool returning_not_star = false;
  bool returning_multiple = false;
  bool star_with_others = false;
};

struct Body : Clauses {
  Form form;
};

class Parser {
 public:
  explicit Parser(std::string_view text)
      : text_(text), tokens_(tokenize(text)), out_(std::make_shared<Statement>()) {
    out_->text = text;
  }

  std::shared_ptr<const Statement> run() {
    const NodeId root = parse_expression(0);
    if (accept(TokenType::kSemicolon) && peek().type != TokenType::kEnd) {
      throw ApiError::validation(std::string(msg::kOneOperation));
    }
    // Tokens left after a bare expression (`SELECTT * FROMM "T"`) mean the statement never
    // started; after a statement, that something follows it.
    if (peek().type != TokenType::kEnd) {
      fail(out_->node(root).type == NodeType::kStatement ? msg::kUnexpectedTokenAfterExpression
                                                         : msg::kExpectedDataManipulation);
    }
    finish(root);
    build_update(*out_);
    return out_;
  }

 private:
  // --- tokens ---
  const Token& peek(std::size_t ahead = 0) const {
    return tokens_[std::min(pos_ + ahead, tokens_.size() - 1)];
  }
  const Token& previous() const { return tokens_[pos_ - 1]; }
  std::string_view slice(const Token& t) const { return text_.substr(t.begin, t.end - t.begin); }
  bool accept(TokenType type) {
    if (peek().type != type) return false;
    ++pos_;
    return true;
  }
  bool accept(Keyword k) {
    if (!peek().is(k)) return false;
    ++pos_;
    return true;
  }
  bool accept(Operator op) {
    if (!peek().is(op)) return false;
    ++pos_;
    return true;
  }
  void expect(TokenType type, std::string_view name) {
    if (!accept(type)) fail(msg::expected_token(name));
  }
  [[noreturn]] static void fail(std::string_view detail) {
    throw ApiError::validation(msg::malformed(detail));
  }

  // --- deferred errors: the first literal problem in text order ---
  void note(std::string message) {
    if (pending_.empty()) pending_ = std::move(message);
  }

  // --- recursion: deep enough for any statement DynamoDB runs, shallow enough for the stack.
  // Past it the statement is refused with the literal error already found (nesting), or the
  // bare envelope.
  static constexpr std::size_t kMaxDepth = 256;
  struct Depth {
    explicit Depth(Parser& p) : parser(p) {
      if (++parser.depth_ > kMaxDepth) parser.too_deep();
    }
    ~Depth() { --parser.depth_; }
    Depth(const Depth&) = delete;
    Depth& operator=(const Depth&) = delete;
    Parser& parser;
  };
  [[noreturn]] void too_deep() const {
    if (!pending_.empty()) throw ApiError::validation(pending_);
    fail("");
  }

  // --- literal context: where a constant sits inside the value being written ("root",
  // "root.a[0]") and how many maps and lists enclose it ---
  struct Root {  // a fresh value: an IN operand, an INSERT attribute
    explicit Root(Parser& p) : parser(p), path(std::move(p.path_)), containers(p.containers_) {
      parser.path_ = "root";
      parser.containers_ = 0;
    }
    ~Root() {
      parser.path_ = std::move(path);
      parser.containers_ = containers;
    }
    Root(const Root&) = delete;
    Root& operator=(const Root&) = delete;
    Parser& parser;
    std::string path;
    std::size_t containers;
  };
  struct Container {  // a list or map literal
    explicit Container(Parser& p) : depth(p), parser(p) {
      if (++parser.containers_ == msg::kMaxNestingLevels + 1) parser.note(msg::nesting(p.path_));
    }
    ~Container() { --parser.containers_; }
    Container(const Container&) = delete;
    Container& operator=(const Container&) = delete;
    Depth depth;
    Parser& parser;
  };

  // --- building ---
  const Node& node(NodeId id) const { return out_->nodes[id]; }
  NodeId add(Node n) {
    out_->nodes.push_back(std::move(n));
    number_text_.emplace_back();
    return static_cast<NodeId>(out_->nodes.size() - 1);
  }
  static Node make(NodeType type, Span span, std::vector<NodeId> args = {}) {
    Node n;
    n.type = type;
    n.span = span;
    n.args = std::move(args);
    return n;
  }
  static Span span_of(const Token& t) { return {t.begin, t.end}; }
  NodeId literal(AttributeValue value, Span span) {
    Node n = make(NodeType::kLiteral, span);
    n.ref = static_cast<std::uint32_t>(out_->values.size());
    out_->values.push_back(std::move(value));
    return add(std::move(n));
  }
  bool is_number_literal(NodeId id) const { return !number_text_[id].empty(); }

  // A number converted with DynamoDB's rules; out of range it is recorded as the statement's
  // error, naming where it sits.
  NodeId number(std::string text, Span span) {
    Decimal d;
    const NumberError error = read_number(text, &d);
    if (error != NumberError::kNone) note(msg::number_error(number_message(error), path_));
    const NodeId id = literal(AttributeValue::number(std::move(d)), span);
    number_text_[id] = std::move(text);
    return id;
  }

  // --- expressions: a Pratt parser over PartiQL's precedence ---
  NodeId parse_expression(int min_precedence) {
    Depth depth(*this);
    NodeId left = parse_unary();
    for (;;) {
      const int precedence = infix_precedence(peek());
      if (precedence <= min_precedence) return left;
      left = parse_infix(left, precedence);
    }
  }

  // The right operand of the infix operator at pos_: there must be a token after it.
  NodeId parse_right(int precedence) {
    if (tokens_.size() - pos_ < 3) fail(msg::kMissingRightHandSide);
    ++pos_;
    return parse_expression(precedence);
  }

  NodeId parse_infix(NodeId left, int precedence) {
    const Token op = peek();
    Node n = make(NodeType::kOperator, span_of(op));
    n.op = op.op();
    switch (op.op()) {
      case Operator::kIs:
      case Operator::kIsNot:
        ++pos_;
        return parse_is(left, op);
      case Operator::kIn:
      case Operator::kNotIn:
        return parse_in(left, op, precedence);
      case Operator::kBetween:
      case Operator::kNotBetween: {
        const NodeId lower_bound = parse_right(precedence);
        if (!accept(Operator::kAnd)) fail(msg::expected_token("AND"));
        const NodeId upper_bound = parse_expression(precedence);
        n.type = NodeType::kBetween;
        n.negated = op.op() == Operator::kNotBetween;
        n.args = {left, lower_bound, upper_bound};
        return add(std::move(n));
      }
      default:
        break;
    }
    n.args = {left, parse_right(precedence)};
    if (std::optional<expr::Comparator> c = comparator_of(op.op())) {
      n.type = NodeType::kCompare;
      n.comparator = *c;
    } else if (op.op() == Operator::kAnd) {
      n.type = NodeType::kAnd;
    } else if (op.op() == Operator::kOr) {
      n.type = NodeType::kOr;
    } else if (op.op() == Operator::kPlus) {
      n.type = NodeType::kPlus;
    } else if (op.op() == Operator::kMinus) {
      n.type = NodeType::kMinus;
    }
    return add(std::move(n));
  }

  NodeId parse_is(NodeId left, const Token& op) {
    const Token& t = peek();
    const std::optional<IsType> type = is_type_of(t, text_);
    if (!type) fail(msg::kExpectedTypeName);
    ++pos_;
    Node n = make(NodeType::kIs, span_of(t), {left});
    n.op = op.op();
    n.is_type = *type;
    n.negated = op.op() == Operator::kIsNot;
    // Parameterized type names: DECIMAL(5, 2), VARCHAR(10).
    if (*type == IsType::kOther && accept(TokenType::kLeftParen)) {
      do {
        if (!accept(TokenType::kNumber)) fail(msg::expected_token("number"));
      } while (accept(TokenType::kComma));
      expect(TokenType::kRightParen, "RIGHT_PAREN");
    }
    return add(std::move(n));
  }

  // x IN (a, b), x IN [a, b]: each operand is a value of its own (a parameter is allowed);
  // x IN <anything else> is kept as one operand, which DynamoDB refuses (check.h).
  NodeId parse_in(NodeId left, const Token& op, int precedence) {
    Node n = make(NodeType::kIn, span_of(op), {left});
    n.op = op.op();
    n.negated = op.op() == Operator::kNotIn;
    const Token& next = peek(1);
    if ((next.type == TokenType::kLeftParen && !peek(2).is(Keyword::kSelect)) ||
        next.type == TokenType::kLeftBracket) {
      pos_ += 2;
      const bool bracket = next.type == TokenType::kLeftBracket;
      n.list = true;
      parse_operands(bracket ? TokenType::kRightBracket : TokenType::kRightParen,
                     bracket ? "RIGHT_BRACKET" : "RIGHT_PAREN", n.args);
    } else {
      n.args.push_back(parse_right(precedence));
    }
    return add(std::move(n));
  }

  void parse_operands(TokenType close, std::string_view close_name, std::vector<NodeId>& out) {
    Depth depth(*this);
    if (accept(close)) return;
    do {
      Root root(*this);
      out.push_back(parse_expression(0));
    } while (accept(TokenType::kComma));
    expect(close, close_name);
  }

  NodeId parse_unary() {
    const Token t = peek();
    if (t.is(Operator::kNot)) {
      Depth depth(*this);
      ++pos_;
      const NodeId operand = parse_expression(kNotPrecedence);
      Node n = make(NodeType::kNot, span_of(t), {operand});
      n.op = Operator::kNot;
      return add(std::move(n));
    }
    if (t.is(Operator::kPlus) || t.is(Operator::kMinus)) {
      Depth depth(*this);
      ++pos_;
      const NodeId operand = parse_unary();
      // A sign folds into a number, however far from it and however often repeated.
      if (is_number_literal(operand)) {
        if (t.is(Operator::kPlus)) return operand;
        std::string text = number_text_[operand];
        text = text.front() == '-' ? text.substr(1) : "-" + text;
        Decimal d;
        if (read_number(text, &d) == NumberError::kNone) {
          out_->values[node(operand).ref] = AttributeValue::number(std::move(d));
        }
        number_text_[operand] = std::move(text);
        return operand;
      }
      Node n = make(NodeType::kOperator, span_of(t), {operand});
      n.op = t.op();
      return add(std::move(n));
    }
    return parse_term();
  }

  NodeId parse_term() {
    const Token t = peek();
    switch (t.type) {
      case TokenType::kIdentifier:
      case TokenType::kQuotedIdentifier:
        if (peek(1).type == TokenType::kLeftParen) return parse_call();
        return parse_path(false);
      case TokenType::kString:
        ++pos_;
        return literal(AttributeValue::string(unquote(slice(t))), span_of(t));
      case TokenType::kNumber:
        ++pos_;
        return number(std::string(slice(t)), span_of(t));
      case TokenType::kTrue:
      case TokenType::kFalse:
        ++pos_;
        return literal(AttributeValue::boolean(t.type == TokenType::kTrue), span_of(t));
      case TokenType::kNull:
        ++pos_;
        return literal(AttributeValue::null(), span_of(t));
      case TokenType::kMissing:
        ++pos_;
        return add(make(NodeType::kMissing, span_of(t)));
      case TokenType::kParameter: {
        ++pos_;
        Node n = make(NodeType::kParameter, span_of(t));
        n.ref = out_->parameter_count++;
        return add(std::move(n));
      }
      case TokenType::kIon: {
        ++pos_;
        const std::string_view ion = slice(t);
        note(msg::ion_literal(ion.substr(1, ion.size() - 2), path_));
        return literal(AttributeValue::null(), span_of(t));
      }
      case TokenType::kLeftParen:
        return parse_parenthesized();
      case TokenType::kLeftBracket:
        return parse_list();
      case TokenType::kLeftBag:
        return parse_bag();
      case TokenType::kLeftBrace:
        return parse_map();
      case TokenType::kKeyword:
        return parse_keyword_term();
      case TokenType::kOperator:
        fail(msg::kUnexpectedOperator);
      default:
        fail(msg::kUnexpectedTerm);
    }
  }

  NodeId parse_keyword_term() {
    switch (peek().keyword()) {
      case Keyword::kSelect:
        return parse_select();
      case Keyword::kFrom:
        return parse_update(/*where_first=*/true);
      case Keyword::kUpdate:
        return parse_update(/*where_first=*/false);
      case Keyword::kDelete:
        return parse_delete();
      case Keyword::kInsertInto:
        return parse_insert();
      case Keyword::kExists:
      case Keyword::kSize:
      case Keyword::kCount:
      case Keyword::kSum:
      case Keyword::kAvg:
      case Keyword::kMin:
      case Keyword::kMax:
      case Keyword::kCallable:
        if (peek(1).type == TokenType::kLeftParen) return parse_call();
        break;
      default:
        break;
    }
    fail(msg::kUnexpectedKeyword);
  }

  // ( expression ), or (a, b, ...) — a list of operands, which only IN takes.
  NodeId parse_parenthesized() {
    Depth depth(*this);
    const Token open = peek();
    ++pos_;
    std::vector<NodeId> items{parse_expression(0)};
    while (accept(TokenType::kComma)) items.push_back(parse_expression(0));
    expect(TokenType::kRightParen, "RIGHT_PAREN");
    if (items.size() == 1) return items.front();
    return add(make(NodeType::kList, {open.begin, previous().end}, std::move(items)));
  }

  NodeId parse_call() {
    Depth depth(*this);
    const Token name = peek();
    pos_ += 2;  // the name and '('
    Node n = make(NodeType::kFunction, span_of(name));
    n.function = function_of(to_lower(slice(name)));
    if (name.type == TokenType::kKeyword &&
        (n.function == Function::kCount || n.function == Function::kSum ||
         n.function == Function::kAvg || n.function == Function::kMin ||
         n.function == Function::kMax)) {
      n.type = NodeType::kAggregate;
    }
    if (n.function == Function::kCount && peek().is(Operator::kStar) &&
        peek(1).type == TokenType::kRightParen) {
      ++pos_;
      n.star = true;
    } else if (peek().type != TokenType::kRightParen) {
      do {
        n.args.push_back(parse_expression(0));
      } while (accept(TokenType::kComma));
    }
    expect(TokenType::kRightParen, "RIGHT_PAREN");
    return add(std::move(n));
  }

  // --- literals ---
  // One element of a list, map or set literal, at `suffix` below the literal's path. Only
  // constants may stand there.
  NodeId parse_element(std::string_view suffix) {
    const std::size_t saved = path_.size();
    path_.append(suffix);
    const NodeId id = parse_expression(0);
    if (node(id).type != NodeType::kLiteral) {
      note(msg::unsupported_data_type(node_name(*out_, id), path_, out_->position(node(id).span)));
    }
    path_.resize(saved);
    return id;
  }

  bool all_constant(const std::vector<NodeId>& elements) const {
    return std::ranges::all_of(elements,
                               [this](NodeId id) { return node(id).type == NodeType::kLiteral; });
  }

  NodeId parse_list() {
    const Token open = peek();
    ++pos_;
    Container container(*this);
    std::vector<NodeId> elements;
    if (!accept(TokenType::kRightBracket)) {
      do {
        elements.push_back(parse_element("[" + std::to_string(elements.size()) + "]"));
      } while (accept(TokenType::kComma));
      expect(TokenType::kRightBracket, "RIGHT_BRACKET");
    }
    const Span span{open.begin, previous().end};
    if (!all_constant(elements)) return add(make(NodeType::kList, span, std::move(elements)));
    AttributeList list;
    list.reserve(elements.size());
    for (NodeId id : elements) list.push_back(out_->values[node(id).ref]);
    return literal(AttributeValue::list(std::move(list)), span);
  }

  NodeId parse_map() {
    const Token open = peek();
    ++pos_;
    Container container(*this);
    std::vector<NodeId> elements;
    std::vector<std::string> names;
    if (!accept(TokenType::kRightBrace)) {
      do {
        std::string name = map_key(parse_expression(0));
        if (std::ranges::find(names, name) != names.end()) {
          note(msg::duplicate_key(name, path_));
        }
        expect(TokenType::kColon, "COLON");
        elements.push_back(parse_element("." + name));
        names.push_back(std::move(name));
      } while (accept(TokenType::kComma));
      expect(TokenType::kRightBrace, "RIGHT_CURLY");
    }
    const Span span{open.begin, previous().end};
    if (!all_constant(elements)) return add(make(NodeType::kList, span, std::move(elements)));
    AttributeMap map;
    for (std::size_t i = 0; i < elements.size(); ++i) {
      map.emplace(names[i], out_->values[node(elements[i]).ref]);
    }
    return literal(AttributeValue::map(std::move(map)), span);
  }

  // A map key must be a string literal.
  std::string map_key(NodeId key) {
    const Node& n = node(key);
    if (n.type == NodeType::kLiteral && out_->values[n.ref].type() == AttrType::S) {
      return out_->values[n.ref].as_string();
    }
    note(msg::key_type(n.type == NodeType::kLiteral
                           ? std::string(type_name(out_->values[n.ref].type()))
                           : node_name(*out_, key),
                       path_));
    return {};
  }

  // <<a, b>>: a string or number set. Not a nesting level.
  NodeId parse_bag() {
    Depth depth(*this);
    const Token open = peek();
    ++pos_;
    std::vector<NodeId> elements;
    if (!accept(TokenType::kRightBag)) {
      do {
        elements.push_back(parse_element("[" + std::to_string(elements.size()) + "]"));
      } while (accept(TokenType::kComma));
      expect(TokenType::kRightBag, "RIGHT_DOUBLE_ANGLE_BRACKET");
    }
    const Span span{open.begin, previous().end};
    if (!all_constant(elements)) return add(make(NodeType::kList, span, std::move(elements)));
    return literal(make_set(elements), span);
  }

  // The set a bag literal stands for. Problems, in DynamoDB's order: no member; members that
  // are not all strings or all numbers; a member written twice (numbers as BigDecimal sees
  // them: 2 and 2.0 differ); two members of equal numeric value.
  AttributeValue make_set(const std::vector<NodeId>& elements) {
    if (elements.empty()) {
      note(std::string(msg::kEmptyBag));
      return {};
    }
    const AttrType type = out_->values[node(elements.front()).ref].type();
    const bool same_type = std::ranges::all_of(
        elements, [&](NodeId id) { return out_->values[node(id).ref].type() == type; });
    if ((type != AttrType::S && type != AttrType::N) || !same_type) {
      note(std::string(msg::kBagType));
      return {};
    }
    std::vector<std::string> written;
    for (NodeId id : elements) {
      written.push_back(type == AttrType::S ? out_->values[node(id).ref].as_string()
                                            : number_text_[id]);
    }
    std::string members;
    for (const std::string& w : written) members.append(members.empty() ? "" : ", ").append(w);
    bool repeated = false, equal_values = false;
    for (std::size_t i = 0; i < elements.size(); ++i) {
      for (std::size_t j = i + 1; j < elements.size(); ++j) {
        repeated |= type == AttrType::S ? written[i] == written[j]
                                        : same_representation(written[i], written[j]);
        equal_values |= out_->values[node(elements[i]).ref] == out_->values[node(elements[j]).ref];
      }
    }
    if (repeated) {
      note(msg::bag_duplicates(members));
      return {};
    }
    if (equal_values) {
      note(msg::bag_number_duplicates(members, path_));
      return {};
    }
    if (type == AttrType::S) return AttributeValue::string_set(std::move(written));
    std::vector<Decimal> numbers;
    for (NodeId id : elements) numbers.push_back(out_->values[node(id).ref].as_number());
    return AttributeValue::number_set(std::move(numbers));
  }

  // --- document paths ---
  // name {. name | [index]}. A simple path (a statement's table, a SET or REMOVE target)
  // must start with a name.
  NodeId parse_path(bool simple) {
    const Token first = peek();
    if (first.type != TokenType::kIdentifier && first.type != TokenType::kQuotedIdentifier) {
      fail(simple ? msg::kExpectedSimplePath : msg::kUnexpectedTerm);
    }
    ++pos_;
    expr::DocumentPath path;
    path.elements.push_back(name_element(first));
    for (;;) {
      if (peek().type == TokenType::kDot) {
        const Token& component = peek(1);
        if (component.type != TokenType::kIdentifier &&
            component.type != TokenType::kQuotedIdentifier) {
          fail(msg::kInvalidPathDotComponent);
        }
        pos_ += 2;
        path.elements.push_back(name_element(component));
      } else if (peek().type == TokenType::kLeftBracket) {
        Depth depth(*this);
        ++pos_;
        const NodeId index = parse_expression(0);
        expect(TokenType::kRightBracket, "RIGHT_BRACKET");
        path.elements.push_back(index_element(index));
      } else {
        break;
      }
    }
    Node n = make(NodeType::kPath, {first.begin, previous().end});
    n.ref = static_cast<std::uint32_t>(out_->paths.size());
    out_->paths.push_back(std::move(path));
    return add(std::move(n));
  }

  expr::PathElement name_element(const Token& t) const {
    std::string name =
        t.type == TokenType::kQuotedIdentifier ? unquote(slice(t)) : std::string(slice(t));
    return {.kind = expr::PathElement::Kind::kName, .number = 0, .text = std::move(name)};
  }

  // A list index is a whole number in [0, 2^31 - 1], written as a literal (-0 is 0).
  expr::PathElement index_element(NodeId index) {
    const Node& n = node(index);
    const std::string& text = number_text_[index];
    const std::string_view digits = std::string_view(text).substr(text.starts_with('-') ? 1 : 0);
    const bool whole =
        !digits.empty() && std::ranges::all_of(digits, [](char c) { return c >= '0' && c <= '9'; });
    if (whole && n.type == NodeType::kLiteral) {
      const Decimal& value = out_->values[n.ref].as_number();
      if (value.is_zero() || (!value.negative() && value <= Decimal::from_int(msg::kMaxIndex))) {
        const std::uint32_t number =
            value.is_zero() ? 0 : static_cast<std::uint32_t>(std::stoul(std::string(digits)));
        return {.kind = expr::PathElement::Kind::kIndex, .number = number, .text = {}};
      }
    }
    note(msg::list_index(whole ? std::string_view(text) : out_->source(n.span),
                         out_->position(n.span)));
    return {.kind = expr::PathElement::Kind::kIndex, .number = 0, .text = {}};
  }

  // --- statements ---
  NodeId add_statement(Body body, const Token& keyword) {
    Node n = make(NodeType::kStatement, span_of(keyword));
    n.ref = static_cast<std::uint32_t>(bodies_.size());
    bodies_.push_back(std::move(body));
    return add(std::move(n));
  }

  // [AS] alias, AT name, BY name after a table: PartiQL's range variables.
  bool parse_aliases() {
    bool alias = false;
    auto name = [this] {
      return accept(TokenType::kIdentifier) || accept(TokenType::kQuotedIdentifier);
    };
    if (accept(Keyword::kAs)) {
      if (!name()) fail(msg::expected_token("identifier for alias"));
      alias = true;
    } else if (name()) {
      alias = true;
    }
    for (Keyword k : {Keyword::kAt, Keyword::kBy}) {
      if (accept(k)) {
        if (!name()) fail(msg::expected_token("identifier for alias"));
        alias = true;
      }
    }
    return alias;
  }

  Target target_of(NodeId id) const {
    const Node& n = node(id);
    Target target;
    target.span = n.span;
    if (n.type != NodeType::kPath) {
      target.is_path = false;
      target.names.emplace_back(out_->source(n.span));
      return target;
    }
    for (const expr::PathElement& e : out_->paths[n.ref].elements) {
      if (e.kind != expr::PathElement::Kind::kName) target.is_path = false;
      target.names.push_back(e.kind == expr::PathElement::Kind::kName ? e.text
                                                                      : std::to_string(e.number));
    }
    return target;
  }

  // SELECT * | item {, item} FROM source [WHERE cond] [ORDER BY key [ASC|DESC] {, ...}]
  NodeId parse_select() {
    const Token keyword = peek();
    ++pos_;
    Body b;
    b.kind = StatementKind::kSelect;
    do {
      if (accept(Operator::kStar)) {
        if (b.select_all || !b.projection.empty()) b.form.star_with_others = true;
        b.select_all = true;
        continue;
      }
      if (b.select_all) b.form.star_with_others = true;
      const NodeId item = parse_expression(0);
      if (parse_aliases()) b.form.alias = true;
      b.projection.push_back({item, projection_key(item)});
    } while (accept(TokenType::kComma));
    if (!accept(Keyword::kFrom)) fail(msg::kExpectedFrom);
    b.target = target_of(parse_expression(0));
    if (parse_aliases()) b.form.alias = true;
    while (accept(TokenType::kComma)) {
      parse_expression(0);
      parse_aliases();
      b.form.multiple_sources = true;
    }
    if (accept(Keyword::kWhere)) b.where = parse_expression(0);
    if (accept(Keyword::kOrder)) {
      if (!accept(Keyword::kBy)) fail(msg::expected_token("BY"));
      do {
        OrderKey key{parse_expression(0), false};
        if (!accept(Keyword::kAsc)) key.descending = accept(Keyword::kDesc);
        b.order_by.push_back(key);
      } while (accept(TokenType::kComma));
    }
    return add_statement(std::move(b), keyword);
  }

  // The attribute a projected path is returned under: its last name and the indexes after.
  std::string projection_key(NodeId id) const {
    const Node& n = node(id);
    if (n.type != NodeType::kPath) return std::string(out_->source(n.span));
    const auto& elements = out_->paths[n.ref].elements;
    std::size_t last = elements.size() - 1;
    while (elements[last].kind == expr::PathElement::Kind::kIndex) --last;
    std::string key = elements[last].text;
    for (std::size_t i = last + 1; i < elements.size(); ++i) {
      key.append("[").append(std::to_string(elements[i].number)).append("]");
    }
    return key;
  }

  Target parse_simple_target() { return target_of(parse_path(true)); }

  // The start shared by UPDATE and DELETE: the statement's kind, its target and its aliases.
  Body keyed_body(StatementKind kind) {
    Body b;
    b.kind = kind;
    b.target = parse_simple_target();
    b.form.alias = parse_aliases();
    return b;
  }

  // UPDATE target [alias] action {action} [WHERE cond] [RETURNING ...], or, with
  // `where_first`, FROM target [alias] [WHERE cond] action {action} [RETURNING ...].
  NodeId parse_update(bool where_first) {
    const Token keyword = peek();
    ++pos_;
    Body b = keyed_body(StatementKind::kUpdate);
    if (!where_first) parse_actions(b);
    if (accept(Keyword::kWhere)) b.where = parse_expression(0);
    if (where_first) parse_actions(b);
    parse_returning(b);
    return add_statement(std::move(b), keyword);
  }

  // DELETE FROM target [alias] [WHERE cond] [RETURNING ...]
  NodeId parse_delete() {
    const Token keyword = peek();
    ++pos_;
    if (!accept(Keyword::kFrom)) fail(msg::kExpectedFromAfterDelete);
    Body b = keyed_body(StatementKind::kDelete);
    if (accept(Keyword::kWhere)) b.where = parse_expression(0);
    parse_returning(b);
    return add_statement(std::move(b), keyword);
  }

  // INSERT INTO target VALUE {'name': value, ...} — or PartiQL's other INSERT forms, which
  // DynamoDB refuses.
  NodeId parse_insert() {
    const Token keyword = peek();
    ++pos_;
    Body b;
    b.kind = StatementKind::kInsert;
    b.target = parse_simple_target();
    if (!accept(Keyword::kValue)) {
      parse_expression(0);
      b.form.insert_bag = true;
      return add_statement(std::move(b), keyword);
    }
    if (peek().type == TokenType::kLeftBrace) {
      parse_item(b);
    } else {
      parse_expression(0);
      b.form.insert_not_struct = true;
    }
    if (accept(Keyword::kAt)) {
      parse_expression(0);
      b.form.insert_at = true;
    }
    if (peek().is(Keyword::kReturning)) {
      parse_returning(b);
      b.form.insert_returning = true;
    }
    return add_statement(std::move(b), keyword);
  }

  // The item of an INSERT: each attribute's value is a constant or a parameter of its own.
  void parse_item(Body& b) {
    Depth depth(*this);
    ++pos_;
    if (accept(TokenType::kRightBrace)) return;
    do {
      const NodeId key = parse_expression(0);
      InsertAttribute attribute{map_key(key), kNoNode, node(key).span};
      expect(TokenType::kColon, "COLON");
      if (std::ranges::any_of(b.item,
                              [&](const InsertAttribute& a) { return a.name == attribute.name; })) {
        note(msg::duplicate_key(attribute.name, path_));
      }
      {
        Root root(*this);
        attribute.value = parse_expression(0);
        const Node& value = node(attribute.value);
        if (value.type != NodeType::kLiteral && value.type != NodeType::kParameter) {
          note(msg::unsupported_data_type(node_name(*out_, attribute.value), path_,
                                          out_->position(value.span)));
        }
      }
      b.item.push_back(std::move(attribute));
    } while (accept(TokenType::kComma));
    expect(TokenType::kRightBrace, "RIGHT_CURLY");
  }

  // SET path = value {, path = value} | REMOVE path, one or more, in any mix.
  void parse_actions(Body& b) {
    for (;;) {
      if (accept(Keyword::kSet)) {
        do {
          Action action{ActionType::kSet, parse_path(true), kNoNode};
          if (!accept(Operator::kEq)) fail(msg::expected_token("'='"));
          action.value = parse_expression(0);
          b.actions.push_back(action);
        } while (accept(TokenType::kComma));
      } else if (accept(Keyword::kRemove)) {
        b.actions.push_back({ActionType::kRemove, parse_path(true), kNoNode});
      } else {
        break;
      }
    }
    if (b.actions.empty()) fail(msg::kExpectedDataManipulation);
  }

  // RETURNING (ALL | MODIFIED) (OLD | NEW) * — PartiQL also parses a list of such elements
  // and other columns than *, which DynamoDB refuses.
  void parse_returning(Body& b) {
    if (!accept(Keyword::kReturning)) return;
    std::size_t elements = 0;
    do {
      bool all = false, old = false;
      if (accept(Keyword::kAll)) {
        all = true;
      } else if (!accept(Keyword::kModified)) {
        fail(msg::kExpectedReturningMapping);
      }
      if (accept(Keyword::kOld)) {
        old = true;
      } else if (!accept(Keyword::kNew)) {
        fail(msg::kExpectedReturningMapping);
      }
      if (!accept(Operator::kStar)) {
        parse_expression(0);
        b.form.returning_not_star = true;
      }
      if (elements++ == 0) {
        b.returning = all ? (old ? Returning::kAllOld : Returning::kAllNew)
                          : (old ? Returning::kModifiedOld : Returning::kModifiedNew);
      }
    } while (accept(TokenType::kComma));
    b.form.returning_multiple = elements > 1;
  }

  // --- the statement DynamoDB runs ---
  void finish(NodeId root) {
    const Node& top = node(root);
    std::optional<std::uint32_t> body;
    StatementKind kind = StatementKind::kSelect;
    if (top.type == NodeType::kStatement) {
      body = top.ref;
      kind = bodies_[top.ref].kind;
    } else if (top.type == NodeType::kFunction && top.function == Function::kExists &&
               top.args.size() == 1 && node(top.args[0]).type == NodeType::kStatement &&
               bodies_[node(top.args[0]).ref].kind == StatementKind::kSelect) {
      body = node(top.args[0]).ref;
      kind = StatementKind::kExists;
    }
    if (!body) {
      throw ApiError::validation(msg::unsupported_operation(top.type == NodeType::kFunction ? "Call"
                                                            : top.type == NodeType::kAggregate
                                                                ? "CallAgg"
                                                                : node_name(*out_, root)));
    }
    for (const Node& n : out_->nodes) {
      if (n.type == NodeType::kStatement && n.ref != *body) {
        throw ApiError::validation(msg::unsupported_operation(
            bodies_[n.ref].kind == StatementKind::kSelect ? "Select" : "Dml"));
      }
    }
    Body& b = bodies_[*body];
    check_form(b.form);
    if (!pending_.empty()) throw ApiError::validation(pending_);
    static_cast<Clauses&>(*out_) = std::move(static_cast<Clauses&>(b));
    out_->kind = kind;
  }

  static void check_form(const Form& f) {
    auto refuse = [](bool condition, std::string_view message) {
      if (condition) throw ApiError::validation(std::string(message));
    };
    refuse(f.insert_bag, msg::kInsertBag);
    refuse(f.alias, msg::kAliasing);
    refuse(f.multiple_sources, msg::kSingleSource);
    refuse(f.insert_not_struct, msg::kInsertFormat);
    refuse(f.insert_at, msg::kInsertAt);
    refuse(f.insert_returning, msg::kInsertReturning);
    refuse(f.returning_not_star, msg::kReturningStar);
    refuse(f.returning_multiple, msg::kReturningElements);
    refuse(f.star_with_others, msg::kStarWithOthers);
  }

  std::string_view text_;
  std::vector<Token> tokens_;
  std::size_t pos_ = 0;
  std::shared_ptr<Statement> out_;
  std::vector<Body> bodies_;
  std::vector<std::string> number_text_;  // per node: a number literal as written, with sign
  std::string pending_;                   // the first literal error
  std::string path_ = "root";
  std::size_t containers_ = 0;
  std::size_t depth_ = 0;
};

}  // namespace

std::shared_ptr<const Statement> parse_statement(std::string_view text) {
  return Parser(text).run();
}

}  // namespace kumo::partiql
