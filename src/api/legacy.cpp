// Legacy parameters (AttributesToGet, KeyConditions, QueryFilter, ScanFilter, Expected,
// AttributeUpdates, ConditionalOperator) translated into expression text over generated
// placeholders, so that the one expression evaluator decides them.
#include <fmt/format.h>

#include "api/expressions.h"
#include "model/api_error.h"

namespace kumo::api {
namespace {

struct OperatorRule {
  std::string_view name;
  int min_values;
  int max_values;  // -1: no upper bound
  std::initializer_list<AttrType> types;
};

constexpr auto kScalar = {AttrType::S, AttrType::N, AttrType::B};

const OperatorRule* find_rule(std::string_view name) {
  static const OperatorRule rules[] = {
      {"EQ",
       1,
       1,
       {AttrType::S, AttrType::N, AttrType::B, AttrType::SS, AttrType::NS, AttrType::BS,
        AttrType::BOOL, AttrType::NUL, AttrType::L, AttrType::M}},
      {"NE",
       1,
       1,
       {AttrType::S, AttrType::N, AttrType::B, AttrType::SS, AttrType::NS, AttrType::BS,
        AttrType::BOOL, AttrType::NUL, AttrType::L, AttrType::M}},
      {"LE", 1, 1, kScalar},
      {"LT", 1, 1, kScalar},
      {"GE", 1, 1, kScalar},
      {"GT", 1, 1, kScalar},
      {"BETWEEN", 2, 2, kScalar},
      {"IN", 1, -1, kScalar},
      {"BEGINS_WITH", 1, 1, {AttrType::S, AttrType::B}},
      {"CONTAINS", 1, 1, kScalar},
      {"NOT_CONTAINS", 1, 1, kScalar},
      {"NULL", 0, 0, {}},
      {"NOT_NULL", 0, 0, {}},
  };
  for (const auto& r : rules) {
    if (r.name == name) return &r;
  }
  return nullptr;
}

// Generated placeholders cannot clash with a client's: clients may not send names or values
// alongside legacy parameters, so the maps hold only these.
class Placeholders {
 public:
  Placeholders(std::string_view prefix, expr::AttributeNames& names, expr::AttributeValues& values)
      : prefix_(prefix), names_(names), values_(values) {}
  std::string name(std::string_view attribute) {
    std::string key = fmt::format("#{}{}", prefix_, names_.size());
    names_.emplace(key, std::string(attribute));
    return key;
  }
  std::string value(AttributeValue v) {
    std::string key = fmt::format(":{}{}", prefix_, values_.size());
    values_.emplace(key, std::move(v));
    return key;
  }

 private:
  std::string_view prefix_;
  expr::AttributeNames& names_;
  expr::AttributeValues& values_;
};

AttributeValue decode_checked(const JsonValue& json) {
  Validation v;
  AttributeValue value = decode_value(json, v);
  v.throw_if_failed();
  return value;
}

std::string condition_text(std::string_view op, const std::string& path,
                           const std::vector<std::string>& operands) {
  if (op == "EQ") return fmt::format("{} = {}", path, operands[0]);
  if (op == "NE")
    return fmt::format("(attribute_not_exists({0}) OR {0} <> {1})", path, operands[0]);
  if (op == "LE") return fmt::format("{} <= {}", path, operands[0]);
  if (op == "LT") return fmt::format("{} < {}", path, operands[0]);
  if (op == "GE") return fmt::format("{} >= {}", path, operands[0]);
  if (op == "GT") return fmt::format("{} > {}", path, operands[0]);
  if (op == "BETWEEN") return fmt::format("{} BETWEEN {} AND {}", path, operands[0], operands[1]);
  if (op == "IN") {
    std::string list;
    for (std::size_t i = 0; i < operands.size(); ++i) list += (i ? ", " : "") + operands[i];
    return fmt::format("{} IN ({})", path, list);
  }
  if (op == "BEGINS_WITH") return fmt::format("begins_with({}, {})", path, operands[0]);
  if (op == "CONTAINS") return fmt::format("contains({}, {})", path, operands[0]);
  if (op == "NOT_CONTAINS") {
    return fmt::format("(attribute_exists({0}) AND NOT contains({0}, {1}))", path, operands[0]);
  }
  if (op == "NULL") return fmt::format("attribute_not_exists({})", path);
  return fmt::format("attribute_exists({})", path);
}

// One `attr → {ComparisonOperator, AttributeValueList}` condition.
std::string comparison(std::string_view member, std::string_view attribute, std::string_view op,
                       std::vector<AttributeValue> operands, Placeholders& p) {
  const OperatorRule* rule = find_rule(op);
  if (!rule) {
    // Map entries appear in coral paths as <map>.<key>.member.
    std::string path(member);
    if (!path.empty())
      path[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(path[0])));
    path = fmt::format("{}.{}.member.comparisonOperator", path, attribute);
    CoralErrors coral;
    coral.check_enum(op, path,
                     {"IN", "NULL", "BETWEEN", "LT", "NOT_CONTAINS", "EQ", "GT", "NOT_NULL", "NE",
                      "LE", "BEGINS_WITH", "GE", "CONTAINS"});
    coral.throw_if_any();
  }
  const int count = static_cast<int>(operands.size());
  if (count < rule->min_values || (rule->max_values >= 0 && count > rule->max_values)) {
    throw ApiError::validation(fmt::format(
        "{}Invalid number of argument(s) for the {} ComparisonOperator", kInvalidParameters, op));
  }
  for (const auto& v : operands) {
    if (v.type() != operands[0].type()) {
      throw ApiError::validation(std::string(kInvalidParameters) +
                                 "AttributeValues inside AttributeValueList must be of same type");
    }
  }
  for (const auto& v : operands) {
    if (std::find(rule->types.begin(), rule->types.end(), v.type()) == rule->types.end()) {
      throw ApiError::validation(
          fmt::format("{}ComparisonOperator {} is not valid for {} AttributeValue type",
                      kInvalidParameters, op, type_name(v.type())));
    }
  }
  if (op == "BETWEEN") {
    const AttributeValue& lo = operands[0];
    const AttributeValue& hi = operands[1];
    const bool reversed = lo.type() == AttrType::N ? hi.as_number() < lo.as_number()
                                                   : hi.as_string() < lo.as_string();
    if (reversed) {
      throw ApiError::validation(
          "The BETWEEN condition was provided a range where the lower bound is greater than "
          "the upper bound");
    }
  }
  const std::string path = p.name(attribute);
  std::vector<std::string> keys;
  for (auto& v : operands) keys.push_back(p.value(std::move(v)));
  return condition_text(op, path, keys);
}

std::vector<AttributeValue> value_list(const JsonArray& list) {
  std::vector<AttributeValue> out;
  for (const JsonValue& e : list) out.push_back(decode_checked(e));
  return out;
}

// Calls `visit(attribute, condition)` for each entry of a legacy conditions map (attribute
// name → {ComparisonOperator, AttributeValueList, ...}): null entries are skipped, and an
// entry that is not an object is a SerializationException.
template <typename F>
void for_each_condition(const JsonObject& conditions, F&& visit) {
  for (auto [attribute, json] : conditions) {
    if (json.IsNull()) continue;
    if (!json.IsObject()) throw_not_object(json);
    visit(std::string(attribute), JsonObject(json));
  }
}

// The ComparisonOperator of a condition of QueryFilter, ScanFilter or KeyConditions
// (`map_path`: their member names in coral paths), where it is required.
std::string_view required_operator(const JsonObject& condition, std::string_view map_path,
                                   const std::string& attribute) {
  const std::optional<std::string_view> op = condition.string("ComparisonOperator");
  if (!op) {
    throw ApiError::coral_validation(fmt::format(
        "1 validation error detected: Value null at '{}.{}.member.comparisonOperator' failed to "
        "satisfy constraint: Member must not be null",
        map_path, attribute));
  }
  return *op;
}

}  // namespace

std::string translate_conditions(const JsonObject& conditions, std::string_view member,
                                 std::string_view conditional_operator, bool expected_form,
                                 expr::AttributeNames& names, expr::AttributeValues& values) {
  Placeholders p("kumo_condition_", names, values);
  std::vector<std::string> parts;
  for_each_condition(conditions, [&](const std::string& attribute, const JsonObject& condition) {
    auto list = condition.array("AttributeValueList");
    if (!expected_form) {
      const std::string_view op = required_operator(
          condition, member == "QueryFilter" ? "queryFilter" : "scanFilter", attribute);
      parts.push_back(comparison(member, attribute, op,
                                 list ? value_list(*list) : std::vector<AttributeValue>{}, p));
      return;
    }
    auto op = condition.string("ComparisonOperator");
    auto value = condition.element("Value");
    auto exists = condition.boolean("Exists");
    if (value && list) {
      throw ApiError::validation(
          fmt::format("{}Value and AttributeValueList cannot be used together for Attribute: {}",
                      kInvalidParameters, attribute));
    }
    if (op) {
      if (exists) {
        throw ApiError::validation(
            fmt::format("{}Exists and ComparisonOperator cannot be used together for Attribute: {}",
                        kInvalidParameters, attribute));
      }
      std::vector<AttributeValue> operands;
      if (list) operands = value_list(*list);
      if (value) operands.push_back(decode_checked(*value));
      const OperatorRule* rule = find_rule(*op);
      if (rule && rule->min_values > 0 && !value && !list) {
        throw ApiError::validation(fmt::format(
            "{}Value or AttributeValueList must be used with ComparisonOperator: {} for "
            "Attribute: {}",
            kInvalidParameters, *op, attribute));
      }
      parts.push_back(comparison(member, attribute, *op, std::move(operands), p));
      return;
    }
    if (list) {
      throw ApiError::validation(fmt::format(
          "{}AttributeValueList can only be used with a ComparisonOperator for Attribute: {}",
          kInvalidParameters, attribute));
    }
    if (exists.value_or(true)) {
      if (!value) {
        throw ApiError::validation(
            fmt::format("{}Value must be provided when Exists is {} for Attribute: {}",
                        kInvalidParameters, exists ? "true" : "null", attribute));
      }
      std::vector<AttributeValue> operands;
      operands.push_back(decode_checked(*value));
      parts.push_back(comparison(member, attribute, "EQ", std::move(operands), p));
    } else {
      if (value) {
        throw ApiError::validation(
            fmt::format("{}Value cannot be used when Exists is false for Attribute: {}",
                        kInvalidParameters, attribute));
      }
      parts.push_back(comparison(member, attribute, "NULL", {}, p));
    }
  });
  std::string text;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i) text += fmt::format(" {} ", conditional_operator);
    text += parts[i];
  }
  return text;
}

std::string translate_attribute_updates(const JsonObject& updates, expr::AttributeNames& names,
                                        expr::AttributeValues& values) {
  Placeholders p("kumo_update_", names, values);
  std::vector<std::string> set, remove, add, del;
  for (auto [attribute_view, json] : updates) {
    const std::string attribute(attribute_view);
    if (json.IsNull()) continue;
    check_attribute_name(attribute);
    if (!json.IsObject()) throw_not_object(json);
    JsonObject update(json);
    const std::string_view action = update.string("Action").value_or("PUT");
    if (action != "PUT" && action != "ADD" && action != "DELETE") {
      CoralErrors coral;
      coral.check_enum(action, "attributeUpdates." + attribute + ".member.action",
                       {"ADD", "PUT", "DELETE"});
      coral.throw_if_any();
    }
    auto value_json = update.element("Value");
    if (!value_json) {
      if (action != "DELETE") {
        throw ApiError::validation(std::string(kInvalidParameters) +
                                   "Only DELETE action is allowed when no attribute value is "
                                   "specified");
      }
      remove.push_back(p.name(attribute));
      continue;
    }
    AttributeValue value = decode_checked(*value_json);
    const AttrType type = value.type();
    const bool is_set = type == AttrType::SS || type == AttrType::NS || type == AttrType::BS;
    if (action == "PUT") {
      std::string name = p.name(attribute);
      set.push_back(fmt::format("{} = {}", name, p.value(std::move(value))));
    } else if (action == "DELETE") {
      if (!is_set) {
        throw ApiError::validation(
            fmt::format("{}DELETE action with value is not supported for the type {}",
                        kInvalidParameters, type_name(type)));
      }
      std::string name = p.name(attribute);
      del.push_back(fmt::format("{} {}", name, p.value(std::move(value))));
    } else if (type == AttrType::L) {
      // Legacy ADD appends to a list (creating it when absent); expressions spell that
      // list_append(if_not_exists(...)).
      std::string name = p.name(attribute);
      std::string empty = p.value(AttributeValue::list({}));
      set.push_back(fmt::format("{0} = list_append(if_not_exists({0}, {1}), {2})", name, empty,
                                p.value(std::move(value))));
    } else if (type == AttrType::N || is_set) {
      std::string name = p.name(attribute);
      add.push_back(fmt::format("{} {}", name, p.value(std::move(value))));
    } else {
      throw ApiError::validation(fmt::format("{}ADD action is not supported for the type {}",
                                             kInvalidParameters, type_name(type)));
    }
  }
  std::string text;
  auto clause = [&](std::string_view keyword, const std::vector<std::string>& actions) {
    if (actions.empty()) return;
    if (!text.empty()) text += ' ';
    text += keyword;
    for (std::size_t i = 0; i < actions.size(); ++i) text += (i ? ", " : " ") + actions[i];
  };
  clause("SET", set);
  clause("REMOVE", remove);
  clause("ADD", add);
  clause("DELETE", del);
  return text;
}

}  // namespace kumo::api

namespace kumo::api {

std::string translate_key_conditions(const JsonObject& conditions, expr::AttributeNames& names,
                                     expr::AttributeValues& values) {
  Placeholders p("kumo_key_", names, values);
  std::vector<std::string> parts;
  std::size_t count = 0;
  for (auto [attribute_view, json] : conditions) {
    (void)attribute_view;
    if (!json.IsNull()) ++count;
  }
  // Tables and LSIs take one or two conditions; a multi-attribute GSI one per component
  // (up to 8). Query checks the table case once it knows which key is queried.
  if (count < 1 || count > 8) throw ApiError::validation("Conditions can be of length 1 or 2 only");
  for_each_condition(conditions, [&](const std::string& attribute, const JsonObject& condition) {
    const std::string_view op = required_operator(condition, "keyConditions", attribute);
    auto list = condition.array("AttributeValueList");
    std::vector<AttributeValue> operands = list ? value_list(*list) : std::vector<AttributeValue>{};
    static constexpr std::string_view kIndexable[] = {"EQ", "LE",          "LT",     "GE",
                                                      "GT", "BEGINS_WITH", "BETWEEN"};
    if (find_rule(op) &&
        std::find(std::begin(kIndexable), std::end(kIndexable), op) == std::end(kIndexable)) {
      throw ApiError::validation("Attempted conditional constraint is not an indexable operation");
    }
    parts.push_back(comparison("KeyConditions", attribute, op, std::move(operands), p));
  });
  std::string text;
  for (const auto& part : parts) text += (text.empty() ? "" : " AND ") + part;
  return text;
}

}  // namespace kumo::api
