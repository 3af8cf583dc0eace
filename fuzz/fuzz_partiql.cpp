// Fuzzes the PartiQL parser and the checks made before a table is looked up: the first byte
// picks which parameter values stand for the statement's `?`s, the rest is the statement.
// A statement that parses must hold together (every node, path, value and span in range,
// sets well formed), parse the same through the cache, and be checked without any other
// exception than ApiError, which is how a statement is refused. A statement that passes the
// checks then has its WHERE evaluated and its update applied to an item holding every
// type, as execution does.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "expr/update.h"
#include "model/api_error.h"
#include "model/attribute_value.h"
#include "partiql/ast.h"
#include "partiql/cache.h"
#include "partiql/check.h"
#include "partiql/evaluate.h"
#include "partiql/parser.h"
#include "partiql/update.h"

namespace {

using namespace kumo;
using namespace kumo::partiql;

// DynamoDB refuses statements over 8192 characters before parsing; twice that still parses.
constexpr std::size_t kMaxText = 16384;

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "fuzz_partiql: %s\n", what);
  std::abort();
}

// One value of every type, which parameters cycle through.
const std::vector<AttributeValue>& samples() {
  static const std::vector<AttributeValue> values = [] {
    Decimal one;
    Decimal::parse("1", &one);
    return std::vector<AttributeValue>{
        AttributeValue::string("S"),
        AttributeValue::number(one),
        AttributeValue::boolean(true),
        AttributeValue::null(),
        AttributeValue::list({AttributeValue::string("a")}),
        AttributeValue::map({{"k", AttributeValue::number(one)}}),
        AttributeValue::string_set({"a", "b"}),
        AttributeValue::number_set({one}),
        AttributeValue::binary_set({"\x01"}),
        AttributeValue::binary("\x00\x01"),
        AttributeValue::string("SS"),
    };
  }();
  return values;
}

void check_value(const AttributeValue& value) {
  switch (value.type()) {
    case AttrType::M:
      for (const auto& [name, member] : value.as_map()) check_value(member);
      break;
    case AttrType::L:
      for (const auto& element : value.as_list()) check_value(element);
      break;
    case AttrType::SS:
    case AttrType::BS:
      if (value.as_string_set().empty()) fail("empty string set literal");
      break;
    case AttrType::NS: {
      const auto& members = value.as_number_set();
      if (members.empty()) fail("empty number set literal");
      for (std::size_t i = 0; i < members.size(); ++i)
        for (std::size_t j = i + 1; j < members.size(); ++j)
          if (members[i] == members[j]) fail("duplicate number set member");
      break;
    }
    default:
      break;
  }
}

void check_span(const Statement& s, Span span) {
  if (span.begin > span.end || span.end > s.text.size()) fail("span outside the statement");
  s.position(span);
}

void check_node_id(const Statement& s, NodeId id, bool optional) {
  if (id == kNoNode && optional) return;
  if (id >= s.nodes.size()) fail("node id out of range");
}

// Everything a parsed statement refers to exists.
void check_statement_shape(const Statement& s) {
  for (std::size_t i = 0; i < s.nodes.size(); ++i) {
    const Node& n = s.nodes[i];
    check_span(s, n.span);
    for (NodeId arg : n.args) {
      if (arg >= i) fail("operand after its node");
    }
    switch (n.type) {
      case NodeType::kLiteral:
        if (n.ref >= s.values.size()) fail("literal out of range");
        break;
      case NodeType::kParameter:
        if (n.ref >= s.parameter_count) fail("parameter out of range");
        break;
      case NodeType::kPath:
        if (n.ref >= s.paths.size()) fail("path out of range");
        break;
      default:
        break;
    }
    node_name(s, static_cast<NodeId>(i));
  }
  for (const expr::DocumentPath& path : s.paths) {
    if (path.elements.empty() || path.elements[0].kind != expr::PathElement::Kind::kName) {
      fail("path without a leading name");
    }
  }
  for (const AttributeValue& value : s.values) check_value(value);
  if (s.target.names.empty()) fail("statement without a table");
  check_node_id(s, s.where, true);
  for (const ProjectionItem& item : s.projection) check_node_id(s, item.node, false);
  for (const OrderKey& key : s.order_by) check_node_id(s, key.node, false);
  for (const InsertAttribute& a : s.item) {
    check_node_id(s, a.value, false);
    const NodeType type = s.node(a.value).type;
    if (type != NodeType::kLiteral && type != NodeType::kParameter) fail("INSERT of a non-value");
  }
  for (const Action& a : s.actions) {
    check_node_id(s, a.target, false);
    if (s.node(a.target).type != NodeType::kPath) fail("action on a non-path");
    check_node_id(s, a.value, a.type == ActionType::kRemove);
  }
  if (s.kind == StatementKind::kUpdate && s.actions.empty()) fail("UPDATE without an action");
  if (s.kind != StatementKind::kUpdate && !s.actions.empty()) fail("actions outside UPDATE");
  if (s.kind != StatementKind::kInsert && !s.item.empty()) fail("item outside INSERT");
}

// An item with an attribute of every sample type, named a0, a1, ..., and the key pk.
const Item& sample_item() {
  static const Item item = [] {
    Item out{{"pk", AttributeValue::string("k")}};
    const std::vector<AttributeValue>& values = samples();
    for (std::size_t i = 0; i < values.size(); ++i) out.emplace("a" + std::to_string(i), values[i]);
    return out;
  }();
  return item;
}

// What execution does with a checked statement: its WHERE on the item and on no item, and
// its update applied (errors are ApiError, as for UpdateItem).
void execute(const Statement& s, std::span<const AttributeValue> parameters) {
  if (s.where != kNoNode) {
    matches(s, s.where, parameters, sample_item());
    matches(s, s.where, parameters, Item{});
  }
  if (s.kind != StatementKind::kUpdate) return;
  if (!s.update) fail("a checked UPDATE without its update");
  static const expr::AttributeNames kNoNames;
  const expr::AttributeValues values = update_values(s, parameters);
  try {
    const expr::UpdateExpression update = expr::UpdateExpression::build(s.update, kNoNames, values);
    Item item = sample_item();
    update.apply(item);
    update.updated_attributes(item);
  } catch (const ApiError&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1 || size > 1 + kMaxText) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  std::shared_ptr<const Statement> statement;
  try {
    statement = parse_statement(text);
  } catch (const ApiError&) {
    // A refused statement is refused through the cache too, and not kept.
    statement_cache().clear();
    try {
      partiql::parse(text);
      fail("the cache parsed what the parser refused");
    } catch (const ApiError&) {
    }
    return 0;
  }
  if (statement->text != text) fail("statement text differs from the input");
  check_statement_shape(*statement);
  statement_cache().clear();
  const std::shared_ptr<const Statement> cached = partiql::parse(text);
  if (cached->nodes.size() != statement->nodes.size() || cached->kind != statement->kind) {
    fail("the cache's parse differs");
  }
  // Parameters of every type, in an order the first byte picks; then one too few.
  const std::vector<AttributeValue>& values = samples();
  std::vector<AttributeValue> parameters;
  for (std::uint32_t i = 0; i < statement->parameter_count; ++i) {
    parameters.push_back(values[(data[0] + i) % values.size()]);
  }
  for (const std::size_t drop : {std::size_t{0}, std::size_t{1}}) {
    if (drop > parameters.size()) break;
    try {
      check_statement(*statement, std::span(parameters).first(parameters.size() - drop));
      if (drop == 0) execute(*statement, parameters);
    } catch (const ApiError&) {
    }
  }
  return 0;
}
