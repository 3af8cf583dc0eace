#include "expr/projection.h"

#include "expr/cache.h"
#include "expr/condition.h"
#include "expr/messages.h"
#include "model/api_error.h"

namespace kumo::expr {

ProjectionExpression ProjectionExpression::compile(std::string_view text,
                                                   const AttributeNames& names) {
  static const AttributeValues kNoValues;
  ProjectionExpression p;
  p.parsed_ = parse(ExpressionKind::kProjection, text);
  p.bindings_ = Bindings(*p.parsed_, names, kNoValues);
  p.paths_.reserve(p.parsed_->projection.size());
  for (std::uint32_t path_index : p.parsed_->projection) {
    p.paths_.push_back(p.bindings_.resolve(p.parsed_->paths[path_index]));
    const auto id = static_cast<std::uint32_t>(p.paths_.size() - 1);
    std::uint32_t other = 0;
    PathTree::Clash clash = p.tree_.add(p.paths_.back(), id, &other);
    if (clash == PathTree::Clash::kNone) continue;
    const std::string one = render_path(p.paths_[other]);
    const std::string two = render_path(p.paths_.back());
    throw ApiError::validation(
        msg::invalid(ExpressionKind::kProjection, clash == PathTree::Clash::kOverlap
                                                      ? msg::paths_overlap(one, two)
                                                      : msg::paths_conflict(one, two)));
  }
  return p;
}

Item ProjectionExpression::apply(const Item& item) const {
  return project_tree(item, tree_);
}

std::vector<std::string_view> ProjectionExpression::attribute_names() const {
  return top_level_names(*parsed_, bindings_);
}

}  // namespace kumo::expr
