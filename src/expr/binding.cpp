#include "expr/binding.h"

#include "expr/messages.h"
#include "model/api_error.h"

namespace kumo::expr {

Bindings::Bindings(const ParsedExpression& parsed, const AttributeNames& names,
                   const AttributeValues& values)
    : names_(parsed.name_placeholders.size()), values_(parsed.value_placeholders.size()) {
  for (const PlaceholderUse& use : parsed.placeholder_uses) {
    if (use.is_name) {
      const std::string& key = parsed.name_placeholders[use.slot];
      auto it = names.find(key);
      if (it == names.end()) {
        throw ApiError::validation(msg::invalid(parsed.kind, msg::undefined_name(key)));
      }
      names_[use.slot] = &it->second;
    } else {
      const std::string& key = parsed.value_placeholders[use.slot];
      auto it = values.find(key);
      if (it == values.end()) {
        throw ApiError::validation(msg::invalid(parsed.kind, msg::undefined_value(key)));
      }
      values_[use.slot] = &it->second;
    }
  }
}

ResolvedPath Bindings::resolve(const DocumentPath& path) const {
  ResolvedPath steps;
  steps.reserve(path.elements.size());
  for (const PathElement& e : path.elements) {
    if (e.kind == PathElement::Kind::kIndex) {
      steps.push_back(PathStep::element(e.number));
    } else {
      steps.push_back(PathStep::member(name(e)));
    }
  }
  return steps;
}

}  // namespace kumo::expr
