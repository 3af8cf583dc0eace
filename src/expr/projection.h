// ProjectionExpression (GetItem, BatchGetItem, Query, Scan, TransactGetItems): the result
// holds only the requested paths that exist; overlapping or conflicting paths are refused.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "expr/ast.h"
#include "expr/binding.h"
#include "expr/path.h"

namespace kumo::expr {

class ProjectionExpression {
 public:
  // Parses `text` (through the cache) and resolves its names. Throws ApiError::validation
  // with DynamoDB's message, including "Two document paths overlap/conflict ...". `names`
  // must outlive the result.
  static ProjectionExpression compile(std::string_view text, const AttributeNames& names);

  // The projected copy of `item`: only requested paths that exist; nested maps keep only
  // requested members; requested list elements come back compacted in index order. An item
  // with none of the paths projects to an empty map.
  Item apply(const Item& item) const;

  // Resolved paths in source order.
  const std::vector<ResolvedPath>& paths() const { return paths_; }
  // Distinct top-level attribute names, in source order.
  std::vector<std::string_view> attribute_names() const;

  const ParsedExpression& parsed() const { return *parsed_; }

 private:
  ProjectionExpression() = default;

  std::shared_ptr<const ParsedExpression> parsed_;
  Bindings bindings_;
  std::vector<ResolvedPath> paths_;
  PathTree tree_;
};

}  // namespace kumo::expr
