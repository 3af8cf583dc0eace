// Shorthands for partiql/ tests: parse or check a statement and get DynamoDB's message, and
// render an expression tree as a compact prefix form, e.g. "(AND (= pk 'a') (> n 1))".
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "../expr/expr_test_util.h"
#include "partiql/ast.h"
#include "partiql/check.h"
#include "partiql/parser.h"

namespace kumo::partiql::test {

using expr::test::B;
using expr::test::BOOL;
using expr::test::BS;
using expr::test::error_of;
using expr::test::L;
using expr::test::M;
using expr::test::N;
using expr::test::NS;
using expr::test::NUL;
using expr::test::S;
using expr::test::SS;

// The envelope of syntax errors.
inline std::string malformed(std::string_view detail) {
  return "Statement wasn't well formed, can't be processed: " + std::string(detail);
}

inline std::shared_ptr<const Statement> parse(std::string_view text) {
  return parse_statement(text);
}

// The message parsing `text` fails with, or "<no error>".
inline std::string parse_error(std::string_view text) {
  return error_of([&] { parse_statement(text); });
}

// The message check_statement fails with on `text` (which must parse), or "<no error>".
inline std::string check_error(std::string_view text, std::vector<AttributeValue> parameters = {}) {
  std::shared_ptr<const Statement> s;
  try {
    s = parse_statement(text);
  } catch (const ApiError& e) {
    ADD_FAILURE() << "does not parse: " << text << ": " << e.message().value_or("");
    return "<parse error>";
  }
  return error_of([&] { check_statement(*s, parameters); });
}

inline std::string render_value(const AttributeValue& v) {
  auto join = [](const auto& items, auto&& one) {
    std::string out;
    for (const auto& item : items) out.append(out.empty() ? "" : ", ").append(one(item));
    return out;
  };
  switch (v.type()) {
    case AttrType::S:
      return "'" + v.as_string() + "'";
    case AttrType::N:
      return v.as_number().to_string();
    case AttrType::B:
      return "b'" + v.as_string() + "'";
    case AttrType::BOOL:
      return v.as_bool() ? "true" : "false";
    case AttrType::NUL:
      return "null";
    case AttrType::L:
      return "[" + join(v.as_list(), render_value) + "]";
    case AttrType::M:
      return "{" +
             join(v.as_map(),
                  [](const auto& m) { return "'" + m.first + "': " + render_value(m.second); }) +
             "}";
    case AttrType::SS:
    case AttrType::BS:
      return "<<" + join(v.as_string_set(), [](const std::string& s) { return "'" + s + "'"; }) +
             ">>";
    case AttrType::NS:
      return "<<" + join(v.as_number_set(), [](const Decimal& d) { return d.to_string(); }) + ">>";
  }
  return "?";
}

inline std::string render_path(const expr::DocumentPath& path) {
  std::string out;
  for (const auto& e : path.elements) {
    if (e.kind == expr::PathElement::Kind::kIndex) {
      out += "[" + std::to_string(e.number) + "]";
    } else {
      out += (out.empty() ? "" : ".") + e.text;
    }
  }
  return out;
}

inline std::string render(const Statement& s, NodeId id) {
  if (id == kNoNode) return "<none>";
  const Node& n = s.node(id);
  std::string args;
  for (NodeId a : n.args) args += " " + render(s, a);
  const std::string not_ = n.negated ? "NOT " : "";
  switch (n.type) {
    case NodeType::kLiteral:
      return render_value(s.values[n.ref]);
    case NodeType::kParameter:
      return "?" + std::to_string(n.ref);
    case NodeType::kMissing:
      return "MISSING";
    case NodeType::kPath:
      return render_path(s.paths[n.ref]);
    case NodeType::kList:
      return "(LIST" + args + ")";
    case NodeType::kCompare:
    case NodeType::kAnd:
    case NodeType::kOr:
    case NodeType::kNot:
    case NodeType::kPlus:
    case NodeType::kMinus:
    case NodeType::kOperator:
      return "(" + std::string(operator_text(n.op)) + args + ")";
    case NodeType::kBetween:
      return "(" + not_ + "BETWEEN" + args + ")";
    case NodeType::kIn:
      return "(" + not_ + "IN" + std::string(n.list ? "" : "*") + args + ")";
    case NodeType::kIs:
      return "(IS " + not_ + std::string(s.source(n.span)) + args + ")";
    case NodeType::kFunction:
    case NodeType::kAggregate:
      return std::string(s.source(n.span)) + "(" +
             (n.star         ? "*"
              : args.empty() ? ""
                             : args.substr(1)) +
             ")";
    case NodeType::kStatement:
      return "(STATEMENT)";
  }
  return "?";
}

// The WHERE clause of `text`, rendered.
inline std::string where(std::string_view text) {
  auto s = parse(text);
  return render(*s, s->where);
}

}  // namespace kumo::partiql::test
