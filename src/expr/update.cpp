#include "expr/update.h"

#include <algorithm>
#include <utility>

#include "expr/cache.h"
#include "expr/condition.h"
#include "expr/messages.h"
#include "expr/validation.h"
#include "model/api_error.h"

namespace kumo::expr {

UpdateExpression UpdateExpression::compile(std::string_view text, const AttributeNames& names,
                                           const AttributeValues& values, UpdateSource source) {
  return build(source == UpdateSource::kExpression ? parse(ExpressionKind::kUpdate, text)
                                                   : parse_generated(ExpressionKind::kUpdate, text),
               names, values, source);
}

UpdateExpression UpdateExpression::build(std::shared_ptr<const ParsedExpression> parsed,
                                         const AttributeNames& names, const AttributeValues& values,
                                         UpdateSource source) {
  UpdateExpression u;
  u.parsed_ = std::move(parsed);
  u.source_ = source;
  u.bindings_ = Bindings(*u.parsed_, names, values);
  check_operands(*u.parsed_, u.bindings_);
  // One update may not write a path twice, nor a path and a part of it, nor use one
  // position both as a map member and as a list element.
  u.targets_.reserve(u.parsed_->actions.size());
  for (const UpdateAction& action : u.parsed_->actions) {
    u.targets_.push_back(u.bindings_.resolve(u.parsed_->paths[action.path]));
    const auto id = static_cast<std::uint32_t>(u.targets_.size() - 1);
    std::uint32_t other = 0;
    PathTree::Clash clash = u.tree_.add(u.targets_.back(), id, &other);
    if (clash == PathTree::Clash::kNone) continue;
    const std::string one = render_path(u.targets_[other]);
    const std::string two = render_path(u.targets_.back());
    throw ApiError::validation(
        msg::invalid(ExpressionKind::kUpdate, clash == PathTree::Clash::kOverlap
                                                  ? msg::paths_overlap(one, two)
                                                  : msg::paths_conflict(one, two)));
  }
  return u;
}

void UpdateExpression::check_key_attributes(std::span<const std::string> table_keys,
                                            std::span<const std::string> index_keys) const {
  for (const ResolvedPath& path : targets_) {
    const std::string_view top = path[0].name;
    if (std::ranges::find(table_keys, top) != table_keys.end()) {
      throw ApiError::validation(path.size() == 1 ? msg::update_key_attribute(top)
                                                  : msg::update_nested_key(top, false));
    }
    if (path.size() > 1 && std::ranges::find(index_keys, top) != index_keys.end()) {
      throw ApiError::validation(msg::update_nested_key(top, true));
    }
  }
}

std::vector<std::string_view> UpdateExpression::attribute_names() const {
  std::vector<std::string_view> names;
  for (const ResolvedPath& path : targets_) {
    if (std::ranges::find(names, path[0].name) == names.end()) names.push_back(path[0].name);
  }
  return names;
}

bool UpdateExpression::removes_only() const {
  return std::ranges::all_of(parsed_->actions, [](const UpdateAction& action) {
    return action.clause == UpdateClause::kRemove || action.clause == UpdateClause::kDelete;
  });
}

Item UpdateExpression::updated_attributes(const Item& item) const {
  return project_tree(item, tree_);
}

}  // namespace kumo::expr
