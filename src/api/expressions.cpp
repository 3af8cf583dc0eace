#include "api/expressions.h"

#include <utility>

#include <fmt/format.h>

#include "expr/placeholders.h"
#include "model/api_error.h"

namespace kumo::api {
namespace {

// Legacy and expression parameters may not be mixed; the error lists those present in
// these fixed orders.
constexpr std::string_view kLegacyMembers[] = {
    "AttributesToGet", "AttributeUpdates",    "QueryFilter",  "ScanFilter",
    "Expected",        "ConditionalOperator", "KeyConditions"};
constexpr std::string_view kExpressionMembers[] = {"ProjectionExpression", "FilterExpression",
                                                   "KeyConditionExpression", "UpdateExpression",
                                                   "ConditionExpression"};

std::string join(const std::vector<std::string_view>& parts) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i) out += ", ";
    out += parts[i];
  }
  return out;
}

void check_mixing(const JsonObject& request) {
  std::vector<std::string_view> legacy, expression;
  for (auto m : kLegacyMembers) {
    if (request.has(m)) legacy.push_back(m);
  }
  for (auto m : kExpressionMembers) {
    if (request.has(m)) expression.push_back(m);
  }
  // Query may pair KeyConditions with expressions as long as KeyConditionExpression is
  // absent.
  if (legacy.size() == 1 && legacy[0] == "KeyConditions" &&
      !request.has("KeyConditionExpression")) {
    return;
  }
  if (!legacy.empty() && !expression.empty()) {
    throw ApiError::validation(fmt::format(
        "Can not use both expression and non-expression parameters in the same request: "
        "Non-expression parameters: {{{}}} Expression parameters: {{{}}}",
        join(legacy), join(expression)));
  }
}

}  // namespace

void RequestExpressions::read_maps(const JsonObject& request, Validation& validation) {
  // JSON types come before every semantic check, the mixing rule included.
  for (auto m : kExpressionMembers) request.string(m);
  for (auto m : {"AttributeUpdates", "QueryFilter", "ScanFilter", "Expected", "KeyConditions"}) {
    if (auto conditions = request.object(m)) {
      for (auto [name, condition] : *conditions) {
        if (condition.IsNull()) continue;
        if (!condition.IsObject()) throw_not_object(condition);
      }
    }
  }
  request.string("ConditionalOperator");
  if (auto names = request.array("AttributesToGet")) names->strings();
  if (auto names = request.object("ExpressionAttributeNames")) {
    names_given_ = true;
    for (auto [key, value] : *names) {
      if (value.IsNull()) continue;
      if (!value.IsString()) throw_not_string(value);
      names_.insert_or_assign(std::string(key), std::string(json_string(value)));
    }
  }
  if (auto values = request.object("ExpressionAttributeValues")) {
    values_given_ = true;
    for (auto [key, value] : *values) {
      if (value.IsNull()) continue;
      Validation one(validation.duplicates());
      AttributeValue decoded = decode_value(value, one);
      if (one.failed() && !values_error_) {
        values_error_ = fmt::format(
            "ExpressionAttributeValues contains invalid value: {} for key {}", *one.message(), key);
      }
      values_.insert_or_assign(std::string(key), std::move(decoded));
    }
  }
}

void RequestExpressions::compile(const JsonObject& request, const ExpressionMembers& members) {
  check_mixing(request);
  // Operations whose expressions take no values (GetItem, BatchGetItem, TransactGetItems)
  // have no ExpressionAttributeValues member: like any unknown member, it is ignored.
  if (!members.condition && !members.update && !members.filter && !members.key_condition) {
    values_given_ = false;
    values_.clear();
    values_error_.reset();
  }

  const bool any_expression = (members.condition && request.has("ConditionExpression")) ||
                              (members.update && request.has("UpdateExpression")) ||
                              (members.projection && request.has("ProjectionExpression")) ||
                              (members.filter && request.has("FilterExpression")) ||
                              (members.key_condition && request.has("KeyConditionExpression"));
  const bool value_expression = (members.condition && request.has("ConditionExpression")) ||
                                (members.update && request.has("UpdateExpression")) ||
                                (members.filter && request.has("FilterExpression")) ||
                                (members.key_condition && request.has("KeyConditionExpression"));
  if (names_given_ && !any_expression) {
    throw ApiError::validation(
        "ExpressionAttributeNames can only be specified when using expressions");
  }
  if (values_given_ && !value_expression) {
    std::string message = "ExpressionAttributeValues can only be specified when using expressions";
    if (!members.values_null_tail.empty()) message += fmt::format(": {}", members.values_null_tail);
    throw ApiError::validation(std::move(message));
  }
  if (names_given_ && names_.empty()) {
    throw ApiError::validation("ExpressionAttributeNames must not be empty");
  }
  if (values_given_ && values_.empty()) {
    throw ApiError::validation("ExpressionAttributeValues must not be empty");
  }
  for (const auto& [key, value] : names_) {
    if (!expr::is_valid_name_key(key)) {
      throw ApiError::validation(fmt::format(
          "ExpressionAttributeNames contains invalid key: Syntax error; key: \"{}\"", key));
    }
    if (const std::string_view error = attribute_name_error(value); !error.empty()) {
      throw ApiError::validation(fmt::format(
          "ExpressionAttributeNames contains invalid value: {} for key {}", error, key));
    }
  }
  for (const auto& [key, value] : values_) {
    if (!expr::is_valid_value_key(key)) {
      throw ApiError::validation(fmt::format(
          "ExpressionAttributeValues contains invalid key: Syntax error; key: \"{}\"", key));
    }
  }
  if (values_error_) throw ApiError::validation(*values_error_);

  // Legacy members become expressions over generated placeholders.
  std::optional<std::string> condition_text, update_text, filter_text;
  expr::UpdateSource update_source = expr::UpdateSource::kExpression;
  const auto conditional_operator = request.string("ConditionalOperator");
  if (conditional_operator && *conditional_operator != "AND" && *conditional_operator != "OR") {
    CoralErrors coral;
    coral.check_enum(conditional_operator, "conditionalOperator", {"OR", "AND"});
    coral.throw_if_any();
  }
  const std::string_view op = conditional_operator.value_or("AND");
  if (members.update) {
    if (auto text = request.string("UpdateExpression")) {
      update_text = std::string(*text);
    } else if (auto updates = request.object("AttributeUpdates")) {
      std::string t = translate_attribute_updates(*updates, names_, values_);
      if (!t.empty()) update_text = std::move(t);
      update_source = expr::UpdateSource::kAttributeUpdates;
    }
  }
  if (members.condition) {
    if (auto text = request.string("ConditionExpression")) {
      condition_text = std::string(*text);
    } else if (auto expected = request.object("Expected")) {
      std::string t = translate_conditions(*expected, "Expected", op, true, names_, values_);
      if (!t.empty()) condition_text = std::move(t);
    }
    // ConditionalOperator joins the conditions of Expected: there must be some.
    if (conditional_operator && !condition_text) {
      throw ApiError::validation(
          "ConditionalOperator can only be used when Expected is specified and not empty");
    }
  }
  if (members.filter) {
    if (auto text = request.string("FilterExpression")) {
      filter_text = std::string(*text);
    } else {
      for (std::string_view member : {"QueryFilter", "ScanFilter"}) {
        if (auto conditions = request.object(member)) {
          std::string t = translate_conditions(*conditions, member, op, false, names_, values_);
          if (!t.empty()) filter_text = std::move(t);
        }
      }
    }
  }

  if (update_text) {
    update = expr::UpdateExpression::compile(*update_text, names_, values_, update_source);
  }
  if (condition_text) {
    condition = expr::ConditionExpression::compile(expr::ExpressionKind::kCondition,
                                                   *condition_text, names_, values_);
  }
  if (members.key_condition) {
    if (auto text = request.string("KeyConditionExpression")) {
      key_condition = expr::KeyConditionExpression::compile(*text, names_, values_);
    } else if (auto conditions = request.object("KeyConditions")) {
      key_condition = expr::KeyConditionExpression::compile(
          translate_key_conditions(*conditions, names_, values_), names_, values_);
    }
  }
  if (filter_text) {
    filter = expr::ConditionExpression::compile(expr::ExpressionKind::kFilter, *filter_text, names_,
                                                values_);
  }
  if (members.projection) {
    if (auto text = request.string("ProjectionExpression")) {
      projection = expr::ProjectionExpression::compile(*text, names_);
    } else if (auto list = request.array("AttributesToGet")) {
      std::vector<std::string> names;
      for (const auto& name : list->strings()) {
        if (!name) continue;
        check_attribute_name(*name);
        if (std::find(names.begin(), names.end(), *name) != names.end()) {
          throw ApiError::validation(fmt::format(
              "One or more parameter values were invalid: Duplicate value in attribute name: {}",
              *name));
        }
        names.emplace_back(*name);
      }
      attributes_to_get = std::move(names);
    }
  }
  expr::check_placeholders(
      {update ? &update->parsed() : nullptr, condition ? &condition->parsed() : nullptr,
       key_condition ? &key_condition->parsed() : nullptr, filter ? &filter->parsed() : nullptr,
       projection ? &projection->parsed() : nullptr},
      names_, values_);
}

void RequestExpressions::set_update(std::shared_ptr<const expr::ParsedExpression> parsed,
                                    expr::AttributeValues values) {
  update.reset();
  values_ = std::move(values);
  update = expr::UpdateExpression::build(std::move(parsed), names_, values_);
}

void check_attributes_to_get(const JsonObject& request, std::string_view path, CoralErrors& coral) {
  if (auto list = request.array("AttributesToGet"); list && list->size() == 0) {
    coral.add("[]", path, "Member must have length greater than or equal to 1");
  }
}

Item RequestExpressions::project(const Item& item) const {
  if (projection) return projection->apply(item);
  if (!attributes_to_get) return item;
  Item out;
  for (const auto& name : *attributes_to_get) {
    auto it = item.find(name);
    if (it != item.end()) out.emplace(it->first, it->second);
  }
  return out;
}

}  // namespace kumo::api
