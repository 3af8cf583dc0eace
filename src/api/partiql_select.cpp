#include "api/partiql_select.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <memory>

#include <fmt/format.h>
#include <openssl/evp.h>

#include "api/partiql_plan.h"
#include "api/stored_item_json.h"
#include "expr/evaluate.h"
#include "model/api_error.h"
#include "model/capacity.h"
#include "partiql/evaluate.h"

namespace kumo::api {
namespace {

using partiql::Node;
using partiql::NodeId;
using partiql::NodeType;

// A page stops once this much has been read, as Query and Scan pages do.
constexpr std::size_t kPageBytes = 1 << 20;

// --- NextToken ---

// What a token binds: the table (its identity, so a table created again under the same
// name refuses old tokens), the statement, its parameters and its target.
std::uint64_t fingerprint(const BoundStatement& s, const TableDefinition& table) {
  JsonOut out;
  JsonWriter w(out);
  w.StartArray();
  write_string(w, table.table_id);
  write_string(w, s->text);
  for (const std::string& name : s->target.names) write_string(w, name);
  for (const AttributeValue& v : s.parameters) write_value(w, v);
  w.EndArray();
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_Digest(out.GetString(), out.GetSize(), digest, &length, EVP_sha256(), nullptr);
  std::uint64_t print = 0;
  std::memcpy(&print, digest, sizeof print);
  return print;
}

struct Resume {
  std::uint32_t partition = 0;
  std::optional<Item> start;  // exclusive start key within it
};

constexpr char kTokenMagic = 'Q';

std::string encode_token(std::uint64_t print, const Resume& r) {
  std::string bytes(1, kTokenMagic);
  bytes.append(reinterpret_cast<const char*>(&print), sizeof print);
  bytes.append(reinterpret_cast<const char*>(&r.partition), sizeof r.partition);
  if (r.start) {
    JsonOut out;
    JsonWriter w(out);
    write_item(w, *r.start);
    bytes.append(out.GetString(), out.GetSize());
  }
  return base64_encode(bytes);
}

constexpr std::string_view kInvalidToken = "Invalid NextToken";

// A resume key is exactly the key of what is read — the table's key attributes, plus the
// index's for an index — with their types.
bool valid_start_key(const TableDefinition& table, const IndexDefinition* index, const Item& key) {
  std::size_t expected = 0;
  auto has = [&](const AttributeDefinition& d) {
    const auto it = key.find(d.name);
    return it != key.end() && it->second.type() == to_attr_type(d.type);
  };
  std::vector<const AttributeDefinition*> attributes{&table.key.hash};
  if (table.key.range) attributes.push_back(&*table.key.range);
  if (index) {
    for (const auto* components : {&index->hash, &index->range}) {
      for (const AttributeDefinition& d : *components) {
        const bool listed =
            std::any_of(attributes.begin(), attributes.end(),
                        [&](const AttributeDefinition* a) { return a->name == d.name; });
        if (!listed) attributes.push_back(&d);
      }
    }
  }
  for (const AttributeDefinition* d : attributes) {
    if (!has(*d)) return false;
    ++expected;
  }
  return key.size() == expected;
}

Resume decode_token(std::string_view token, std::uint64_t print) {
  static constexpr std::string_view kInvalid = kInvalidToken;
  std::string bytes;
  try {
    bytes = base64_decode(token);
  } catch (const ApiError&) {
    throw ApiError::validation(std::string(kInvalid));
  }
  constexpr std::size_t kHead = 1 + sizeof(std::uint64_t) + sizeof(std::uint32_t);
  if (bytes.size() < kHead || bytes[0] != kTokenMagic) {
    throw ApiError::validation(std::string(kInvalid));
  }
  std::uint64_t got = 0;
  std::memcpy(&got, bytes.data() + 1, sizeof got);
  if (got != print) throw ApiError::validation("NextToken does not match request");
  Resume r;
  std::memcpy(&r.partition, bytes.data() + 1 + sizeof got, sizeof r.partition);
  if (bytes.size() > kHead) {
    JsonDocument document;
    Validation validation;
    try {
      if (!document.parse(std::string_view(bytes).substr(kHead))) throw ApiError::serialization();
      r.start = decode_item(document.root(), validation);
    } catch (const ApiError&) {
      throw ApiError::validation(std::string(kInvalid));
    }
    if (validation.failed()) throw ApiError::validation(std::string(kInvalid));
  }
  return r;
}

// --- indexes ---

bool projected(const TableDefinition& table, const IndexDefinition& index, std::string_view name) {
  if (index.projection.type == ProjectionType::ALL) return true;
  auto among = [&](const std::vector<std::string>& names) {
    return std::find(names.begin(), names.end(), name) != names.end();
  };
  return name == table.key.hash.name || (table.key.range && name == table.key.range->name) ||
         among(index.key_attributes) || among(index.projection.non_key_attributes);
}

// The top-level attributes the paths under `id` name, in text order, each once.
void names_under(const partiql::Statement& st, NodeId id, std::vector<std::string_view>& out) {
  const Node& n = st.node(id);
  if (n.type == NodeType::kPath) {
    std::string_view name = st.paths[n.ref].elements[0].text;
    if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
    return;
  }
  for (NodeId a : n.args) names_under(st, a, out);
}

std::string render_names(const std::vector<std::string_view>& names) {
  std::string out = "[";
  for (std::string_view n : names) {
    if (out.size() > 1) out += ", ";
    out += n;
  }
  return out + "]";
}

// A keyed read of an index must not filter on attributes the index does not project: in a
// conjunction, the conjuncts that do not name the index partition key; in an OR of keyed
// branches, only when every branch does (naming the branch whose key sorts highest).
void check_filter_projected(const BoundStatement& s, const TableDefinition& table,
                            const IndexDefinition& index, const TargetKey& key) {
  const partiql::Statement& st = *s;
  auto unprojected = [&](NodeId root, bool skip_keyed) {
    std::vector<NodeId> conjuncts;
    for_each_conjunct(st, root, [&](NodeId c) { conjuncts.push_back(c); });
    std::vector<std::string_view> names;
    for (auto it = conjuncts.rbegin(); it != conjuncts.rend(); ++it) {
      std::vector<std::string_view> here;
      names_under(st, *it, here);
      if (skip_keyed && std::find(here.begin(), here.end(), key.hash) != here.end()) continue;
      for (std::string_view n : here) {
        if (!projected(table, index, n) &&
            std::find(names.begin(), names.end(), n) == names.end()) {
          names.push_back(n);
        }
      }
    }
    return names;
  };
  auto refuse = [&](const std::vector<std::string_view>& names) {
    throw ApiError::validation(fmt::format(
        "One or more parameter values were invalid: Secondary index {} does not project one or "
        "more filter attributes: {}",
        index.name, render_names(names)));
  };
  const Node& root = st.node(st.where);
  if (root.type != NodeType::kOr) {
    std::vector<std::string_view> names = unprojected(st.where, true);
    if (!names.empty()) refuse(names);
    return;
  }
  std::vector<NodeId> branches;
  std::function<void(NodeId)> flatten = [&](NodeId id) {
    const Node& n = st.node(id);
    if (n.type == NodeType::kOr) {
      flatten(n.args[0]);
      flatten(n.args[1]);
    } else {
      branches.push_back(id);
    }
  };
  flatten(st.where);
  const AttributeValue* highest = nullptr;
  std::vector<std::string_view> highest_names;
  for (NodeId b : branches) {
    std::vector<std::string_view> names = unprojected(b, true);
    if (names.empty()) return;
    for (const AttributeValue* partition : branch_partitions(s, key, b)) {
      if (!highest || value_less(*highest, *partition)) {
        highest = partition;
        highest_names = names;
      }
    }
  }
  if (!highest_names.empty()) refuse(highest_names);
}

// --- ORDER BY ---

// ORDER BY needs a WHERE that fixes the partition key, names key attributes only, and
// names the partition key when several partitions are read. Returns the direction of the
// sort key: ascending unless the ORDER BY says otherwise, and descending when it names only
// the partition key, as DynamoDB returns such rows.
struct Ordering {
  bool partitions_forward = true;
  bool forward = true;
};

Ordering order_by(const partiql::Statement& st, const TargetKey& key, bool keyed,
                  std::size_t partitions) {
  Ordering o;
  if (st.order_by.empty()) return o;
  if (st.where == partiql::kNoNode) {
    throw ApiError::validation(
        "Must have WHERE clause in the statement when using ORDER BY clause.");
  }
  bool hash = false, range = false;
  for (const partiql::OrderKey& k : st.order_by) {
    const std::string_view name = top_attribute(st, k.node);
    if (!name.empty() && name == key.hash) {
      hash = true;
      o.partitions_forward = !k.descending;
    } else if (!name.empty() && !key.range.empty() && name == key.range) {
      range = true;
      o.forward = !k.descending;
    } else {
      throw ApiError::validation(fmt::format(
          "Attribute {} in ORDER BY clause must be part of the primary key",
          name.empty() ? std::string(st.source(st.node(k.node).span)) : std::string(name)));
    }
  }
  if (!keyed) {
    throw ApiError::validation(
        "Must have at least one non-optional hash key condition in WHERE clause when using ORDER "
        "BY clause.");
  }
  if (partitions > 1 && !hash) {
    throw ApiError::validation(
        "Must have hash key in ORDER BY clause when more than one hash key condition specified "
        "in WHERE clause.");
  }
  if (hash && !range) o.forward = false;
  return o;
}

// --- running the plan ---

class SelectRun {
 public:
  SelectRun(const Context& ctx, const BoundStatement& s, engine::TablePtr table,
            const IndexDefinition* index, const SelectOptions& options)
      : ctx_(ctx),
        s_(s),
        st_(*s),
        table_(std::move(table)),
        index_(index),
        options_(options),
        capacity_{st_.target.table(), 0, {}} {
    if (index_) capacity_.indexes.push_back({index_->name, index_->global, 0});
    filter_ = st_.where != partiql::kNoNode;
    fetch_ =
        index_ && !index_->global && !st_.select_all &&
        std::any_of(st_.projection.begin(), st_.projection.end(), [&](const auto& p) {
          return !projected(*table_, *index_, st_.paths[st_.node(p.node).ref].elements[0].text);
        });
  }

  void no_filter() { filter_ = false; }

  // Writes Items; returns the resume point when the page stopped early.
  std::optional<Resume> run(JsonWriter& w, const std::vector<PartitionRead>* partitions,
                            const Resume& start, const Ordering& ordering) {
    write_key(w, "Items");
    w.StartArray();
    std::optional<Resume> next;
    if (!partitions) {
      next = read_page(w, nullptr, start, ordering.forward);
    } else {
      for (std::size_t i = start.partition; i < partitions->size(); ++i) {
        const std::size_t at = ordering.partitions_forward ? i : partitions->size() - 1 - i;
        const PartitionRead& p = (*partitions)[at];
        Resume here{static_cast<std::uint32_t>(i),
                    i == start.partition ? start.start : std::nullopt};
        if (p.single) {
          read_single(w, p);
        } else {
          next = read_page(w, &p, here, ordering.forward);
          if (next) break;
        }
        if (i + 1 < partitions->size() && (limit_reached() || bytes_ >= kPageBytes)) {
          next = Resume{static_cast<std::uint32_t>(i + 1), std::nullopt};
          break;
        }
      }
    }
    w.EndArray();
    return next;
  }

  const ConsumedCapacity& capacity() const { return capacity_; }

 private:
  bool limit_reached() const {
    return options_.limit && evaluated_ >= static_cast<std::size_t>(*options_.limit);
  }

  void charge(std::size_t bytes) {
    const double units = read_capacity_units(bytes, options_.consistent);
    if (index_) {
      capacity_.indexes.front().units += units;
    } else {
      capacity_.table += units;
    }
  }

  void read_single(JsonWriter& w, const PartitionRead& p) {
    Item key;
    key.emplace(table_->key.hash.name, p.partition);
    if (table_->key.range) key.emplace(table_->key.range->name, *p.sort_equal);
    std::optional<engine::StoredItem> item =
        ctx_.engine.get_stored(*table_, key, options_.consistent, kMetering);
    charge(item ? item->size() : 0);
    if (!item) return;
    ++evaluated_;
    bytes_ += item->size();
    emit(w, *item);
  }

  std::optional<Resume> read_page(JsonWriter& w, const PartitionRead* p, const Resume& at,
                                  bool forward) {
    engine::PageOptions options;
    options.forward = forward;
    if (options_.limit) options.limit = static_cast<std::size_t>(*options_.limit) - evaluated_;
    options.max_bytes = kPageBytes - std::min(bytes_, kPageBytes - 1);
    options.exclusive_start_key = at.start;
    options.consistent = options_.consistent;
    engine::Page page;
    if (!p) {
      page = index_ ? ctx_.engine.scan_index(*table_, *index_, 0, 1, options, kMetering)
                    : ctx_.engine.scan(*table_, 0, 1, options, kMetering);
    } else {
      static const engine::SortCondition kAny;
      const engine::SortCondition& sort = p->sort ? *p->sort : kAny;
      page = index_ ? ctx_.engine.query_index(*table_, *index_, {p->partition}, {}, sort, options,
                                              kMetering)
                    : ctx_.engine.query(*table_, p->partition, sort, options, kMetering);
    }
    charge(page.bytes_read);
    evaluated_ += page.items.size();
    bytes_ += page.bytes_read;
    for (const engine::StoredItem& item : page.items) emit(w, item);
    if (!page.last_evaluated_key) return std::nullopt;
    return Resume{at.partition, std::move(page.last_evaluated_key)};
  }

  void emit(JsonWriter& w, const engine::StoredItem& stored) {
    if (!filter_ && st_.select_all) {
      engine::RequestScope::returned(1);
      write_item(w, stored);
      return;
    }
    Item item = stored.decode();
    if (fetch_) item = fetched(item);
    if (filter_ && !partiql::matches(st_, st_.where, s_.parameters, item)) return;
    engine::RequestScope::returned(1);
    write_item(w, select_row(st_, item));
  }

  // A local index row with the table's item, for attributes the index does not project;
  // the fetch is charged to the table.
  Item fetched(const Item& entry) {
    Item key;
    key.emplace(table_->key.hash.name, entry.at(table_->key.hash.name));
    if (table_->key.range) key.emplace(table_->key.range->name, entry.at(table_->key.range->name));
    std::optional<Item> item = ctx_.engine.get_item(*table_, key, options_.consistent, kMetering);
    capacity_.table += read_capacity_units(item ? item_size(*item) : 0, options_.consistent);
    return item ? std::move(*item) : entry;
  }

  // PartiQL reads are metered, but Contributor Insights does not see them.
  static constexpr engine::Metering kMetering{
      .op = capacity::Operation::kExecuteStatement, .factor = 1, .insights = false};
  const Context& ctx_;
  const BoundStatement& s_;
  const partiql::Statement& st_;
  engine::TablePtr table_;
  const IndexDefinition* index_;
  const SelectOptions& options_;
  ConsumedCapacity capacity_;
  bool filter_ = true;
  bool fetch_ = false;
  std::size_t evaluated_ = 0;
  std::size_t bytes_ = 0;
};

// The index a SELECT names, with the checks that come with it.
const IndexDefinition* select_index(const partiql::Statement& st, const TableDefinition& table,
                                    const SelectOptions& options) {
  const std::optional<std::string_view> name = st.target.index();
  if (!name) return nullptr;
  const IndexDefinition* index = table.find_index(*name);
  if (!index) throw ApiError::validation("The table does not have the specified index");
  if (index->global && options.consistent) {
    throw ApiError::validation(
        "Strongly consistent read is not supported on Global Secondary Indexes");
  }
  if (index->hash.size() > 1 || index->range.size() > 1) {
    throw ApiError::validation(
        "PartiQL statements cannot be executed on tables with multi-attribute HASH keys or "
        "multi-attribute RANGE keys.");
  }
  if (index->backfilling) {
    throw ApiError::validation("Cannot read from backfilling global secondary index: " +
                               index->name);
  }
  return index;
}

// A GSI returns only what it projects: naming anything else is refused.
void check_projection(const partiql::Statement& st, const TableDefinition& table,
                      const IndexDefinition& index) {
  if (!index.global || st.select_all) return;
  std::vector<std::string_view> missing;
  for (const partiql::ProjectionItem& p : st.projection) {
    std::string_view name = st.paths[st.node(p.node).ref].elements[0].text;
    if (!projected(table, index, name) &&
        std::find(missing.begin(), missing.end(), name) == missing.end()) {
      missing.push_back(name);
    }
  }
  if (missing.empty()) return;
  throw ApiError::validation(fmt::format(
      "One or more parameter values were invalid: Global secondary index {} does not project {}",
      index.name, render_names(missing)));
}

// Whether WHERE is only key equalities that the reads already apply.
bool only_key_equalities(const BoundStatement& s, const TargetKey& key) {
  const partiql::Statement& st = *s;
  bool only = st.where != partiql::kNoNode;
  for_each_conjunct(st, st.where, [&](NodeId id) {
    const Node& n = st.node(id);
    bool keyed = false;
    if (n.type == NodeType::kCompare && n.comparator == expr::Comparator::kEq) {
      for (int side = 0; side < 2 && !keyed; ++side) {
        const std::string_view name = top_attribute(st, n.args[side]);
        keyed = !name.empty() && (name == key.hash || name == key.range) &&
                constant_value(st, n.args[1 - side], s.parameters);
      }
    } else if (n.type == NodeType::kIn && !n.negated && n.list) {
      const std::string_view name = top_attribute(st, n.args[0]);
      keyed = !name.empty() && name == key.hash;
    }
    only = only && keyed;
  });
  return only;
}

}  // namespace

Item select_row(const partiql::Statement& statement, const Item& item) {
  if (statement.select_all) return item;
  Item row;
  static const expr::Bindings kNoBindings;
  for (const partiql::ProjectionItem& p : statement.projection) {
    const expr::DocumentPath& path = statement.paths[statement.node(p.node).ref];
    if (const AttributeValue* v = expr::find_path(item, path, kNoBindings)) row.emplace(p.key, *v);
  }
  return row;
}

void check_key_reads(const BoundStatement& s, const TableDefinition& table, bool type_errors) {
  plan_partitions(s, target_key(table, nullptr), true, type_errors);
}

std::string execute_select(const Context& ctx, const BoundStatement& s, engine::TablePtr table,
                           const SelectOptions& options) {
  const partiql::Statement& st = *s;
  const IndexDefinition* index = select_index(st, *table, options);
  const TargetKey key = target_key(*table, index);
  const std::optional<std::vector<PartitionRead>> partitions =
      plan_partitions(s, key, index == nullptr);
  const bool keyed = partitions.has_value();
  const Ordering ordering = order_by(st, key, keyed, partitions ? partitions->size() : 0);
  if (index) {
    check_projection(st, *table, *index);
    if (keyed) check_filter_projected(s, *table, *index, key);
  }
  // The fingerprint is needed only to read or write a token: most reads do neither.
  Resume start;
  if (options.next_token) {
    start = decode_token(*options.next_token, fingerprint(s, *table));
    const std::size_t reads = partitions ? partitions->size() : 1;
    if (start.partition >= std::max<std::size_t>(reads, 1) ||
        (start.start && !valid_start_key(*table, index, *start.start))) {
      throw ApiError::validation(std::string(kInvalidToken));
    }
  }

  SelectRun run(ctx, s, table, index, options);
  if (keyed && only_key_equalities(s, key)) run.no_filter();
  JsonOut out;
  JsonWriter w(out);
  w.StartObject();
  std::optional<Resume> next = run.run(w, partitions ? &*partitions : nullptr, start, ordering);
  if (next) {
    write_key(w, "NextToken");
    write_string(w, encode_token(fingerprint(s, *table), *next));
  }
  write_consumed_capacity(w, options.capacity_mode, run.capacity());
  w.EndObject();
  return json_text(out);
}

}  // namespace kumo::api
