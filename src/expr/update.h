// UpdateExpression (UpdateItem, TransactWriteItems Update): SET, REMOVE, ADD and DELETE
// clauses, each at most once, all evaluated against the item before the update.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "expr/ast.h"
#include "expr/binding.h"
#include "expr/path.h"

namespace kumo::expr {

// Where an applied update wrote, for ReturnValues UPDATED_OLD / UPDATED_NEW. Paths view the
// UpdateExpression's text and names: use them while it is alive.
struct UpdatedPaths {
  // In the item before the update: every path set, removed, added to or deleted from.
  std::vector<ResolvedPath> before;
  // In the item after the update: every path set, added to or deleted from (not removed).
  // List indexes are the elements' final positions (after removals and appends).
  std::vector<ResolvedPath> after;
};

class UpdateExpression {
 public:
  // Parses `text` (through the cache) and checks it against one request's maps: clause
  // rules, operand types of constants, overlapping or conflicting paths. Throws
  // ApiError::validation with DynamoDB's "Invalid UpdateExpression: ..." message. `names` and
  // `values` must outlive the result.
  static UpdateExpression compile(std::string_view text, const AttributeNames& names,
                                  const AttributeValues& values);

  // Throws DynamoDB's error when an action writes a table key attribute ("Cannot update
  // attribute <k>. This attribute is part of the key") or goes through a table or index key
  // attribute with '.' or '[]' ("Key attributes must be scalars; ..."). Call once the table
  // is known, before apply().
  void check_key_attributes(std::span<const std::string> table_keys,
                            std::span<const std::string> index_keys = {}) const;

  // Applies the update to `item` (an empty map for a missing item); every operand reads the
  // item as it was before the update. Throws ApiError::validation with DynamoDB's execution
  // texts (missing operand, wrong data type, invalid document path, number overflow, nesting
  // depth); `item` is then partly updated, so apply to a copy. When `updated` is given it
  // receives the written paths.
  void apply(Item& item, UpdatedPaths* updated = nullptr) const;

  // Target path of each action, in source order.
  const std::vector<ResolvedPath>& target_paths() const { return targets_; }
  // Distinct top-level attributes the update writes, in source order.
  std::vector<std::string_view> attribute_names() const;

  const ParsedExpression& parsed() const { return *parsed_; }
  const Bindings& bindings() const { return bindings_; }

 private:
  UpdateExpression() = default;

  std::shared_ptr<const ParsedExpression> parsed_;
  Bindings bindings_;
  std::vector<ResolvedPath> targets_;  // by action index
  PathTree tree_;                      // leaf id = action index
};

// ReturnValues UPDATED_OLD: the parts of `old_item` the update wrote or removed.
Item updated_old(const Item& old_item, const UpdatedPaths& updated);
// ReturnValues UPDATED_NEW: the parts of `new_item` the update wrote (removals excluded).
Item updated_new(const Item& new_item, const UpdatedPaths& updated);

}  // namespace kumo::expr
