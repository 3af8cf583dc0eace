// UpdateExpression (UpdateItem, TransactWriteItems Update): SET, REMOVE, ADD and DELETE
// clauses, each at most once, all evaluated against the item before the update.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "expr/ast.h"
#include "expr/binding.h"
#include "expr/path.h"

namespace kumo::expr {

// Where an update comes from. Legacy AttributeUpdates are not an expression to DynamoDB: the
// limits on an expression's text (size, operator count) do not apply to the one they are
// translated into, and an ADD or DELETE whose value clashes with the stored value's kind is
// a "Type mismatch for attribute to update". A PartiQL UPDATE's actions are built, not
// parsed; its set_add or set_delete of a set whose kind differs from the stored set's is
// "An operand in the update expression has an incorrect data type", like any other operand
// of the wrong type, and a SET that makes the item too deep is "Nesting Levels have exceeded
// supported limits" with no detail.
enum class UpdateSource : std::uint8_t { kExpression, kAttributeUpdates, kPartiQL };

class UpdateExpression {
 public:
  // Parses `text` (through the cache) and checks it against one request's maps: clause
  // rules, operand types of constants, overlapping or conflicting paths. Throws
  // ApiError::validation with DynamoDB's "Invalid UpdateExpression: ..." message. `names` and
  // `values` must outlive the result.
  static UpdateExpression compile(std::string_view text, const AttributeNames& names,
                                  const AttributeValues& values,
                                  UpdateSource source = UpdateSource::kExpression);

  // An update built directly as a ParsedExpression (kind kUpdate) rather than parsed from
  // text: the same checks as compile() except the limits on an expression's text, with the
  // same messages. `parsed` may hold what the text parser forbids, such as several actions
  // of one clause kind from separate clauses. `names` and `values` must outlive the result.
  static UpdateExpression build(std::shared_ptr<const ParsedExpression> parsed,
                                const AttributeNames& names, const AttributeValues& values,
                                UpdateSource source = UpdateSource::kPartiQL);

  // Throws DynamoDB's error when an action writes a table key attribute ("Cannot update
  // attribute <k>. This attribute is part of the key") or goes through a table or index key
  // attribute with '.' or '[]' ("Key attributes must be scalars; ..."). Call once the table
  // is known, before apply().
  void check_key_attributes(std::span<const std::string> table_keys,
                            std::span<const std::string> index_keys = {}) const;

  // Applies the update to `item` (an empty map for a missing item); every operand reads the
  // item as it was before the update. Throws ApiError::validation with DynamoDB's execution
  // texts (missing operand, wrong data type, invalid document path, number overflow, nesting
  // depth); `item` is then partly updated, so apply to a copy.
  void apply(Item& item) const;

  // Whether every action removes something (REMOVE, or DELETE from a set): on a missing
  // item such an update finds nothing to remove and creates nothing, not even the key.
  bool removes_only() const;

  // ReturnValues UPDATED_OLD / UPDATED_NEW: `item`, the item before or after the update,
  // seen through the update's own paths as written, list indexes included. So UPDATED_NEW
  // shows nothing of a removed attribute or map member, nor of a SET past the end of a list
  // (the value went to the end, not to that index), and shows, for a removed list element,
  // the element that moved into its slot.
  Item updated_attributes(const Item& item) const;

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
  UpdateSource source_ = UpdateSource::kExpression;
  std::vector<ResolvedPath> targets_;  // by action index
  PathTree tree_;                      // leaf id = action index
};

}  // namespace kumo::expr
