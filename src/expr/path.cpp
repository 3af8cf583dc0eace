#include "expr/path.h"

#include <algorithm>

namespace kumo::expr {

std::string render_path(std::span<const PathStep> path) {
  std::string s = "[";
  for (std::size_t i = 0; i < path.size(); ++i) {
    if (i > 0) s.append(", ");
    if (path[i].is_index) {
      s.append("[").append(std::to_string(path[i].index)).append("]");
    } else {
      s.append(path[i].name);
    }
  }
  s.push_back(']');
  return s;
}

const AttributeValue* find_path(const Item& item, std::span<const PathStep> path) {
  if (path.empty() || path[0].is_index) return nullptr;
  auto it = item.find(path[0].name);
  if (it == item.end()) return nullptr;
  const AttributeValue* value = &it->second;
  for (const PathStep& step : path.subspan(1)) {
    if (step.is_index) {
      if (value->type() != AttrType::L) return nullptr;
      const AttributeList& list = value->as_list();
      if (step.index >= list.size()) return nullptr;
      value = &list[step.index];
    } else {
      if (value->type() != AttrType::M) return nullptr;
      const AttributeMap& map = value->as_map();
      auto member = map.find(step.name);
      if (member == map.end()) return nullptr;
      value = &member->second;
    }
  }
  return value;
}

PathTree::Clash PathTree::add(std::span<const PathStep> path, std::uint32_t id,
                              std::uint32_t* other) {
  std::uint32_t current = 0;
  for (std::size_t k = 0; k < path.size(); ++k) {
    const Node& node = nodes_[current];
    // An earlier path ends at a prefix of this one.
    if (node.leaf >= 0) {
      *other = static_cast<std::uint32_t>(node.leaf);
      return Clash::kOverlap;
    }
    const PathStep& step = path[k];
    // A map step and a list step at the same position cannot both hold.
    if (step.is_index && !node.members.empty() && current != 0) {
      *other = nodes_[node.members.front().second].first;
      return Clash::kConflict;
    }
    if (!step.is_index && !node.elements.empty()) {
      *other = nodes_[node.elements.front().second].first;
      return Clash::kConflict;
    }
    std::uint32_t child = 0;
    bool found = false;
    if (step.is_index) {
      auto it = std::ranges::lower_bound(node.elements, step.index, {},
                                         &std::pair<std::uint32_t, std::uint32_t>::first);
      if (it != node.elements.end() && it->first == step.index) {
        child = it->second;
        found = true;
      }
    } else {
      for (const auto& [name, index] : node.members) {
        if (name == step.name) {
          child = index;
          found = true;
          break;
        }
      }
    }
    if (!found) {
      // The rest of the path is new: create its nodes.
      for (std::size_t j = k; j < path.size(); ++j) {
        const auto created = static_cast<std::uint32_t>(nodes_.size());
        nodes_.emplace_back().first = id;
        Node& parent = nodes_[current];
        if (path[j].is_index) {
          auto it = std::ranges::lower_bound(parent.elements, path[j].index, {},
                                             &std::pair<std::uint32_t, std::uint32_t>::first);
          parent.elements.insert(it, {path[j].index, created});
        } else {
          parent.members.emplace_back(path[j].name, created);
        }
        current = created;
      }
      nodes_[current].leaf = static_cast<int>(id);
      return Clash::kNone;
    }
    current = child;
  }
  // The whole path already exists: it equals an earlier path or is a prefix of one.
  const Node& node = nodes_[current];
  *other = node.leaf >= 0 ? static_cast<std::uint32_t>(node.leaf) : node.first;
  return Clash::kOverlap;
}

namespace {

bool project_value(const AttributeValue& source, const PathTree& tree, const PathTree::Node& node,
                   AttributeValue* out);

void project_members(const AttributeMap& source, const PathTree& tree, const PathTree::Node& node,
                     AttributeMap& out) {
  for (const auto& [name, index] : node.members) {
    auto it = source.find(name);
    if (it == source.end()) continue;
    const PathTree::Node& child = tree.node(index);
    if (child.leaf >= 0) {
      out.emplace(it->first, it->second);
      continue;
    }
    AttributeValue value;
    if (project_value(it->second, tree, child, &value)) out.emplace(it->first, std::move(value));
  }
}

bool project_value(const AttributeValue& source, const PathTree& tree, const PathTree::Node& node,
                   AttributeValue* out) {
  if (!node.members.empty()) {
    if (source.type() != AttrType::M) return false;
    AttributeMap map;
    project_members(source.as_map(), tree, node, map);
    if (map.empty()) return false;
    *out = AttributeValue::map(std::move(map));
    return true;
  }
  if (source.type() != AttrType::L) return false;
  const AttributeList& list = source.as_list();
  AttributeList selected;
  // Elements are in ascending index order: DynamoDB returns them compacted in that order.
  for (const auto& [index, child_index] : node.elements) {
    if (index >= list.size()) break;
    const PathTree::Node& child = tree.node(child_index);
    if (child.leaf >= 0) {
      selected.push_back(list[index]);
      continue;
    }
    AttributeValue value;
    if (project_value(list[index], tree, child, &value)) selected.push_back(std::move(value));
  }
  if (selected.empty()) return false;
  *out = AttributeValue::list(std::move(selected));
  return true;
}

}  // namespace

Item project_tree(const Item& source, const PathTree& tree) {
  Item out;
  project_members(source, tree, tree.root(), out);
  return out;
}

}  // namespace kumo::expr
