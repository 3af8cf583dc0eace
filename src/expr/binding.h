// Placeholders of one parsed expression resolved against one request's
// ExpressionAttributeNames and ExpressionAttributeValues; an undefined one is an error.
#pragma once

#include <string_view>
#include <vector>

#include "expr/ast.h"

namespace kumo::expr {

class Bindings {
 public:
  Bindings() = default;
  // Resolves every placeholder `parsed` uses. Throws ApiError::validation ("Invalid <Kind>:
  // An expression attribute name/value ... is not defined") for the first one, in source
  // order, that has no entry. Keeps pointers into `names` and `values`: both must outlive
  // this object and stay unmodified.
  Bindings(const ParsedExpression& parsed, const AttributeNames& names,
           const AttributeValues& values);

  // The attribute name or map key an element stands for (not for list indexes).
  std::string_view name(const PathElement& element) const {
    return element.kind == PathElement::Kind::kNamePlaceholder ? *names_[element.number]
                                                               : std::string_view(element.text);
  }
  const AttributeValue& value(std::uint32_t slot) const { return *values_[slot]; }
  // `path` with its placeholders replaced. Views `parsed` and the names map.
  ResolvedPath resolve(const DocumentPath& path) const;

 private:
  std::vector<const std::string*> names_;      // by name slot
  std::vector<const AttributeValue*> values_;  // by value slot
};

}  // namespace kumo::expr
