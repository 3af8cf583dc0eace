// Document paths: `a.b[2].c`, `#n.x`. A path is a list of elements, each an
// attribute/map-key name or a list index. A placeholder stands for exactly one element, so
// `#a.#b` is two elements and a name containing a dot inside `#a` is one.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model/attribute_value.h"

namespace kumo::expr {

// One element as written in the expression (placeholders not yet resolved).
struct PathElement {
  enum class Kind : std::uint8_t { kName, kNamePlaceholder, kIndex };
  Kind kind = Kind::kName;
  std::uint32_t number = 0;  // kIndex: the list index; kNamePlaceholder: the name slot
  std::string text;          // kName: the name; kNamePlaceholder: "#x" as written

  // Equal as written: a placeholder equals the same placeholder, not the name it stands for.
  bool operator==(const PathElement&) const = default;
};

struct DocumentPath {
  std::vector<PathElement> elements;  // never empty; the first is never an index

  bool operator==(const DocumentPath&) const = default;
};

// One element after placeholders are resolved. `name` views the expression text or the
// request's ExpressionAttributeNames, whichever owns it.
struct PathStep {
  std::string_view name;    // when !is_index
  std::uint32_t index = 0;  // when is_index
  bool is_index = false;

  static PathStep member(std::string_view name) { return {name, 0, false}; }
  static PathStep element(std::uint32_t index) { return {{}, index, true}; }
  bool operator==(const PathStep&) const = default;
};
using ResolvedPath = std::vector<PathStep>;

// DynamoDB's rendering in messages: "[a, b, [3]]".
std::string render_path(std::span<const PathStep> path);

// The value at `path` in `item`, or nullptr when any step is missing or crosses a value of
// the wrong type (a name step needs an M, an index step an L).
const AttributeValue* find_path(const Item& item, std::span<const PathStep> path);

// A trie of resolved paths. Building it detects DynamoDB's overlap and conflict rules
// (no path twice, nor a path and a part of it, nor one position as both a map member and a
// list element); projections and updates then walk it alongside an item, so every attribute
// is visited once. Names are views: their owners must outlive the tree.
class PathTree {
 public:
  struct Node {
    int leaf = -1;            // id of the path ending here, -1 for an inner node
    std::uint32_t first = 0;  // id of the first path that reached this node
    std::vector<std::pair<std::string_view, std::uint32_t>> members;  // name → node
    std::vector<std::pair<std::uint32_t, std::uint32_t>> elements;    // index → node, ascending
  };
  enum class Clash : std::uint8_t { kNone, kOverlap, kConflict };

  PathTree() : nodes_(1) {}

  // Adds `path` under `id`. On a clash nothing is added, and *other is the id of the
  // earlier path it overlaps (one is a prefix of the other, or they are equal) or conflicts
  // with (a name step and an index step at the same position).
  Clash add(std::span<const PathStep> path, std::uint32_t id, std::uint32_t* other);

  // The root's members are the top-level attributes.
  const Node& root() const { return nodes_[0]; }
  const Node& node(std::uint32_t index) const { return nodes_[index]; }

 private:
  std::vector<Node> nodes_;
};

// Copies from `source` the parts of it that `tree` selects: nested maps keep only selected
// members; selected list elements are compacted in index order; selections that do not exist
// (or cross a value of the wrong type) are left out, and so is a container left empty.
Item project_tree(const Item& source, const PathTree& tree);

}  // namespace kumo::expr
