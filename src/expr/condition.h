// ConditionExpression (PutItem, UpdateItem, DeleteItem, transaction actions) and
// FilterExpression (Query, Scan). A missing item has no attributes; a false condition
// fails the write with ConditionalCheckFailedException.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "expr/ast.h"
#include "expr/binding.h"

namespace kumo::expr {

class ConditionExpression {
 public:
  // Parses `text` (through the cache) as `kind` — kCondition or kFilter, which only changes
  // the "Invalid <Kind>: " prefix of errors — and checks it against one request's maps.
  // Throws ApiError::validation with DynamoDB's message. `names` and `values` must outlive
  // the result.
  static ConditionExpression compile(ExpressionKind kind, std::string_view text,
                                     const AttributeNames& names, const AttributeValues& values);

  // True when `item` satisfies the condition; pass an empty map for a missing item.
  // Never throws and copies nothing from the item.
  bool matches(const Item& item) const;

  // Distinct top-level attribute names the expression reads, in source order (e.g. to check
  // that a Query filter does not touch key attributes).
  std::vector<std::string_view> attribute_names() const;

  // Throws "Filter Expression can only contain non-primary key attributes: ..." when the
  // expression reads one of `key_names` (a Query's table or index key attributes, every
  // component of a multi-attribute key included).
  void check_no_key_attributes(std::span<const std::string> key_names) const;

  const ParsedExpression& parsed() const { return *parsed_; }

 private:
  ConditionExpression(std::shared_ptr<const ParsedExpression> parsed, Bindings bindings)
      : parsed_(std::move(parsed)), bindings_(std::move(bindings)) {}

  std::shared_ptr<const ParsedExpression> parsed_;
  Bindings bindings_;
};

// Distinct top-level attribute names of every path in `parsed`, in source order.
std::vector<std::string_view> top_level_names(const ParsedExpression& parsed,
                                              const Bindings& bindings);

}  // namespace kumo::expr
