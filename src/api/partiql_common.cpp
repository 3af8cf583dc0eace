#include "api/partiql_common.h"

#include <fmt/format.h>

#include "model/api_error.h"
#include "partiql/cache.h"
#include "partiql/check.h"
#include "partiql/number.h"
#include "partiql/update.h"

namespace kumo::api {
namespace {

using partiql::Node;
using partiql::NodeId;
using partiql::NodeType;

constexpr std::size_t kMaxStatementLength = 8192;

// A parameter's number is read as Java's BigDecimal reads a string; one it cannot read is
// named as sent, and one out of DynamoDB's range gets the Number texts without a path.
void read_parameter_number(std::string_view text, Decimal* out, Validation& v) {
  const partiql::NumberError error = partiql::read_number(text, out);
  if (error == partiql::NumberError::kNone) return;
  if (error != partiql::NumberError::kNotConvertible) {
    v.fail(partiql::number_message(error));
  } else if (text.empty()) {
    v.fail("The parameter cannot be converted to a numeric value");
  } else {
    v.fail(fmt::format("The parameter cannot be converted to a numeric value: {}", text));
  }
}

}  // namespace

StatementSpec read_statement_spec(const JsonObject& spec, std::string_view path, CoralErrors& coral,
                                  Validation& validation) {
  StatementSpec s;
  s.text = spec.string("Statement");
  std::optional<JsonArray> parameters = spec.array("Parameters");
  if (parameters) {
    validation.set_number_reader(&read_parameter_number);
    for (const JsonValue& e : *parameters) s.parameters.push_back(decode_value(e, validation));
  }
  const std::string statement_path = fmt::format("{}statement", path);
  coral.require(s.text.has_value(), statement_path);
  if (s.text) coral.check_length(*s.text, statement_path, 1, kMaxStatementLength);
  if (parameters && parameters->size() == 0) {
    coral.add("[]", fmt::format("{}parameters", path),
              "Member must have length greater than or equal to 1");
  }
  return s;
}

BoundStatement prepare_statement(std::string_view text, std::vector<AttributeValue> parameters,
                                 const Context* ctx) {
  BoundStatement s{partiql::parse(text), std::move(parameters)};
  try {
    partiql::check_statement(*s.statement, s.parameters);
  } catch (const ApiError&) {
    // A statement on an index with a multi-attribute key is refused for that first.
    if (ctx) refuse_multi_attribute_index(*ctx, *s);
    throw;
  }
  return s;
}

void refuse_multi_attribute_index(const Context& ctx, const partiql::Statement& statement) {
  const std::optional<std::string_view> index = statement.target.index();
  if (!index) return;
  engine::TablePtr table = ctx.engine.find_table(statement.target.table());
  const IndexDefinition* definition = table ? table->find_index(*index) : nullptr;
  if (definition && (definition->hash.size() > 1 || definition->range.size() > 1)) {
    throw ApiError::validation(
        "PartiQL statements cannot be executed on tables with multi-attribute HASH keys or "
        "multi-attribute RANGE keys.");
  }
}

const AttributeValue* constant_value(const partiql::Statement& statement, NodeId node,
                                     std::span<const AttributeValue> parameters) {
  const Node& n = statement.node(node);
  if (n.type == NodeType::kLiteral) return &statement.values[n.ref];
  if (n.type == NodeType::kParameter && n.ref < parameters.size()) return &parameters[n.ref];
  return nullptr;
}

std::string_view top_attribute(const partiql::Statement& statement, NodeId node) {
  const Node& n = statement.node(node);
  if (n.type != NodeType::kPath) return {};
  const expr::DocumentPath& path = statement.paths[n.ref];
  if (path.elements.size() != 1 || path.elements[0].kind != expr::PathElement::Kind::kName) {
    return {};
  }
  return path.elements[0].text;
}

ItemKeyMatch match_item_key(const TableDefinition& table, const BoundStatement& s, bool in_counts) {
  using Problem = ItemKeyMatch::Problem;
  const partiql::Statement& st = *s;
  ItemKeyMatch m;
  auto key_definition = [&](std::string_view name) -> const AttributeDefinition* {
    if (name == table.key.hash.name) return &table.key.hash;
    if (table.key.range && name == table.key.range->name) return &*table.key.range;
    return nullptr;
  };
  for_each_conjunct(st, st.where, [&](NodeId id) {
    const Node& n = st.node(id);
    std::string_view name;
    const AttributeValue* value = nullptr;
    if (n.type == NodeType::kCompare && n.comparator == expr::Comparator::kEq) {
      for (int side = 0; side < 2 && !value; ++side) {
        name = top_attribute(st, n.args[side]);
        value = name.empty() ? nullptr : constant_value(st, n.args[1 - side], s.parameters);
      }
    } else if (in_counts && n.type == NodeType::kIn && !n.negated && n.list && n.args.size() == 2) {
      name = top_attribute(st, n.args[0]);
      value = constant_value(st, n.args[1], s.parameters);
    }
    const AttributeDefinition* d = value ? key_definition(name) : nullptr;
    if (!d) {
      m.only_key = false;
      return;
    }
    if (value->type() != to_attr_type(d->type)) {
      if (m.problem == Problem::kNone) {
        m.problem = Problem::kType;
        m.attribute = name;
      }
      return;
    }
    auto [it, inserted] = m.key.emplace(std::string(name), *value);
    if (!inserted && !(it->second == *value) && m.problem == Problem::kNone) {
      m.problem = Problem::kMultiple;
      m.attribute = name;
    }
  });
  if (m.problem != Problem::kNone) return m;
  for (const AttributeDefinition* d :
       {&table.key.hash, table.key.range ? &*table.key.range : nullptr}) {
    if (d && !m.key.count(d->name)) {
      m.problem = Problem::kMissing;
      m.attribute = d->name;
      break;
    }
  }
  return m;
}

void throw_key_problem(const ItemKeyMatch& match) {
  switch (match.problem) {
    case ItemKeyMatch::Problem::kMultiple:
      throw ApiError::validation(fmt::format(
          "Multiple conditions on same key {}. Only single item Update/Insert/Delete are supported",
          match.attribute));
    case ItemKeyMatch::Problem::kType:
      throw ApiError::validation(fmt::format(
          "Key attribute's data type should match its data type in table's schema: Key {}",
          match.attribute));
    case ItemKeyMatch::Problem::kMissing:
    case ItemKeyMatch::Problem::kNone:
      break;
  }
  throw ApiError::validation(
      "Where clause does not contain a mandatory equality on all key attributes");
}

namespace {

ReturnValues returning_values(partiql::Returning returning) {
  switch (returning) {
    case partiql::Returning::kNone:
      return ReturnValues::kNone;
    case partiql::Returning::kAllOld:
      return ReturnValues::kAllOld;
    case partiql::Returning::kModifiedOld:
      return ReturnValues::kUpdatedOld;
    case partiql::Returning::kAllNew:
      return ReturnValues::kAllNew;
    case partiql::Returning::kModifiedNew:
      return ReturnValues::kUpdatedNew;
  }
  return ReturnValues::kNone;
}

}  // namespace

ItemWrite statement_write(const BoundStatement& s, engine::TablePtr table, Item key,
                          bool all_old_on_condition_failure) {
  const partiql::Statement& st = *s;
  ItemWrite w;
  w.table_name = st.target.table();
  w.all_old_on_condition_failure = all_old_on_condition_failure;
  w.statement = ItemWrite::Statement{&st, st.where, s.parameters};
  w.return_values = returning_values(st.returning);
  switch (st.kind) {
    case partiql::StatementKind::kInsert:
      w.kind = WriteKind::kPut;
      w.statement->where = partiql::kNoNode;
      for (const partiql::InsertAttribute& a : st.item) {
        if (const AttributeValue* v = constant_value(st, a.value, s.parameters)) {
          w.item.insert_or_assign(a.name, *v);
        }
      }
      check_put_size(w.item);
      break;
    case partiql::StatementKind::kUpdate:
      w.kind = WriteKind::kUpdate;
      w.item = std::move(key);
      if (!st.update) throw ApiError::internal();
      w.expressions->set_update(st.update, partiql::update_values(st, s.parameters));
      break;
    case partiql::StatementKind::kDelete:
      w.kind = WriteKind::kDelete;
      w.item = std::move(key);
      break;
    case partiql::StatementKind::kExists:
    case partiql::StatementKind::kSelect:
      w.kind = WriteKind::kConditionCheck;
      w.item = std::move(key);
      break;
  }
  bind_write(w, std::move(table));
  return w;
}

engine::WriteResult apply_statement_write(const Context& ctx, ItemWrite& w,
                                          const engine::Metering& metering) {
  const std::string storage_key = ctx.engine.item_key(*w.table, w.item);
  return ctx.engine.write_item(
      *w.table, storage_key,
      [&](const std::optional<Item>& current) {
        check_write_condition(w, current);
        return apply_write(w, current);
      },
      metering);
}

}  // namespace kumo::api
