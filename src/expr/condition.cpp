#include "expr/condition.h"

#include <algorithm>
#include <cassert>

#include "expr/cache.h"
#include "expr/evaluate.h"
#include "expr/messages.h"
#include "expr/validation.h"
#include "model/api_error.h"

namespace kumo::expr {

ConditionExpression ConditionExpression::compile(ExpressionKind kind, std::string_view text,
                                                 const AttributeNames& names,
                                                 const AttributeValues& values) {
  assert(kind == ExpressionKind::kCondition || kind == ExpressionKind::kFilter);
  std::shared_ptr<const ParsedExpression> parsed = parse(kind, text);
  Bindings bindings(*parsed, names, values);
  check_operands(*parsed, bindings);
  return ConditionExpression(std::move(parsed), std::move(bindings));
}

bool ConditionExpression::matches(const Item& item) const {
  return evaluate_condition(*parsed_, bindings_, item);
}

std::vector<std::string_view> ConditionExpression::attribute_names() const {
  return top_level_names(*parsed_, bindings_);
}

void ConditionExpression::check_no_key_attributes(std::span<const std::string> key_names) const {
  for (std::string_view name : attribute_names()) {
    if (std::ranges::find(key_names, name) != key_names.end()) {
      throw ApiError::validation(msg::filter_on_key(name));
    }
  }
}

std::vector<std::string_view> top_level_names(const ParsedExpression& parsed,
                                              const Bindings& bindings) {
  std::vector<std::string_view> names;
  for (const DocumentPath& path : parsed.paths) {
    std::string_view name = bindings.name(path.elements[0]);
    if (std::ranges::find(names, name) == names.end()) names.push_back(name);
  }
  return names;
}

}  // namespace kumo::expr
