#include "api/partiql_select.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <memory>

#include <fmt/format.h>
#include <openssl/evp.h>

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

// A keyed SELECT decomposes into at most this many key reads (the product of the values
// its OR and IN name for the key attributes).
constexpr std::size_t kMaxDecomposedReads = 50;
// Past this many candidate reads while decomposing, a keyed statement is refused at once.
constexpr std::size_t kMaxCandidates = 2500;
// A page stops once this much has been read, as Query and Scan pages do.
constexpr std::size_t kPageBytes = 1 << 20;

constexpr std::string_view kTooManyReads = "Too many decomposed read operations for a given query.";
constexpr std::string_view kOverlapping =
    "Overlapping conditions with range keys are not supported in where clause";

// The key a SELECT reads by: its table's, or its index's.
struct TargetKey {
  std::string_view hash;
  AttrType hash_type = AttrType::S;
  std::string_view range;  // empty without a sort key
  AttrType range_type = AttrType::S;
};

enum class SortKind : std::uint8_t { kNone, kEqual, kRange, kNegated };

// One decomposed read: a partition (null: the WHERE does not pin one, so the statement is
// a scan) and what narrows its sort key.
struct Interval;

struct KeyRead {
  const AttributeValue* partition = nullptr;
  SortKind kind = SortKind::kNone;
  engine::SortCondition sort;  // the condition a Query can narrow by
  // The sort keys the read covers when paired from several conditions (else `sort`'s).
  std::shared_ptr<const Interval> bounds;
};

KeyRead on_partition(const AttributeValue* value) {
  KeyRead r;
  r.partition = value;
  return r;
}

KeyRead with_sort(SortKind kind) {
  KeyRead r;
  r.kind = kind;
  return r;
}

[[noreturn]] void throw_key_type(std::string_view attribute) {
  throw ApiError::validation(fmt::format(
      "Key attribute's data type should match its data type in table's schema: Key {}", attribute));
}

// The interval of sort keys a read covers, for the overlap rule.
struct Interval {
  std::optional<AttributeValue> low;  // absent: unbounded
  bool low_inclusive = true;
  std::optional<AttributeValue> high;
  bool high_inclusive = true;
};

// The smallest string (or binary) above every one that begins with `prefix`: its last byte
// below 0xFF incremented, what follows it dropped; nullopt when there is none.
std::optional<AttributeValue> after_prefix(const AttributeValue& prefix) {
  std::string bytes = prefix.as_string();
  while (!bytes.empty() && static_cast<unsigned char>(bytes.back()) == 0xFF) bytes.pop_back();
  if (bytes.empty()) return std::nullopt;
  bytes.back() = static_cast<char>(static_cast<unsigned char>(bytes.back()) + 1);
  return prefix.type() == AttrType::B ? AttributeValue::binary(std::move(bytes))
                                      : AttributeValue::string(std::move(bytes));
}

Interval interval_of(const engine::SortCondition& c) {
  using Op = engine::SortCondition::Op;
  switch (c.op) {
    case Op::kLt:
      return {std::nullopt, true, c.value, false};
    case Op::kLe:
      return {std::nullopt, true, c.value, true};
    case Op::kGt:
      return {c.value, false, std::nullopt, true};
    case Op::kGe:
      return {c.value, true, std::nullopt, true};
    case Op::kBeginsWith:
      return {c.value, true, after_prefix(c.value), false};
    case Op::kBetween:
      return {c.value, true, c.value2, true};
    default:
      return {c.value, true, c.value, true};
  }
}

// -1, 0 or 1 as `a` sorts below, with or above `b`; nullopt for values that do not compare.
std::optional<int> order_of(const AttributeValue& a, const AttributeValue& b) {
  const auto order = expr::compare_scalars(a, b);
  if (!order) return std::nullopt;
  return *order < 0 ? -1 : (*order > 0 ? 1 : 0);
}

// The keys both intervals cover.
Interval intersect(const Interval& a, const Interval& b) {
  Interval out = a;
  if (b.low) {
    const std::optional<int> o = out.low ? order_of(*b.low, *out.low) : 1;
    if (o && (*o > 0 || (*o == 0 && !b.low_inclusive))) {
      out.low = b.low;
      out.low_inclusive = b.low_inclusive;
    }
  }
  if (b.high) {
    const std::optional<int> o = out.high ? order_of(*b.high, *out.high) : -1;
    if (o && (*o < 0 || (*o == 0 && !b.high_inclusive))) {
      out.high = b.high;
      out.high_inclusive = b.high_inclusive;
    }
  }
  return out;
}

bool is_empty(const Interval& i) {
  if (!i.low || !i.high) return false;
  const std::optional<int> o = order_of(*i.low, *i.high);
  return o && (*o > 0 || (*o == 0 && !(i.low_inclusive && i.high_inclusive)));
}

// The sort keys an equality or range read covers: its own condition's, or the intersection
// of the conditions it was paired from.
Interval bounds_of(const KeyRead& r) {
  return r.bounds ? *r.bounds : interval_of(r.sort);
}

bool narrows(SortKind kind) {
  return kind == SortKind::kEqual || kind == SortKind::kRange;
}

// Whether two reads of one partition may return a common item. A negated sort-key
// condition never counts as overlapping; a read of the whole partition overlaps all others.
bool overlap(const KeyRead& a, const KeyRead& b) {
  if (a.kind == SortKind::kNegated || b.kind == SortKind::kNegated) return false;
  if (a.kind == SortKind::kNone || b.kind == SortKind::kNone) return true;
  return !is_empty(intersect(bounds_of(a), bounds_of(b)));
}

// Decomposes a WHERE clause into key reads (see KeyRead).
class Decomposer {
 public:
  // `type_errors`: a key equality or IN with a value of the wrong type is refused (else it
  // pins nothing).
  Decomposer(const BoundStatement& s, const TargetKey& key, bool type_errors = true)
      : s_(s), st_(*s), key_(key), type_errors_(type_errors) {}

  std::vector<KeyRead> reads(NodeId id) {
    if (id == partiql::kNoNode) return {KeyRead{}};
    const Node& n = st_.node(id);
    switch (n.type) {
      case NodeType::kAnd:
        return conjunction(reads(n.args[0]), reads(n.args[1]));
      case NodeType::kOr: {
        std::vector<KeyRead> a = reads(n.args[0]), b = reads(n.args[1]);
        // An OR of conditions that name no key attribute is one filter, not several reads.
        if (unkeyed(a) && unkeyed(b)) return a;
        a.insert(a.end(), b.begin(), b.end());
        return bounded(std::move(a));
      }
      case NodeType::kCompare:
        return comparison(n);
      case NodeType::kBetween:
        return between(n);
      case NodeType::kIn:
        return in(n);
      case NodeType::kFunction:
        return function(n);
      case NodeType::kNot:
        return {with_sort(mentions_range(n.args[0]) ? SortKind::kNegated : SortKind::kNone)};
      default:
        return {KeyRead{}};
    }
  }

 private:
  // A key attribute named by a path node, checked against a constant's type: the value,
  // or null when the node is no key attribute or the other side is no constant.
  const AttributeValue* key_value(NodeId path, NodeId value, std::string_view attribute,
                                  AttrType type, bool typed_equality) {
    if (attribute.empty() || top_attribute(st_, path) != attribute) return nullptr;
    const AttributeValue* v = constant_value(st_, value, s_.parameters);
    if (!v) return nullptr;
    if (v->type() != type) {
      if (typed_equality && type_errors_) throw_key_type(attribute);
      return nullptr;
    }
    return v;
  }

  std::vector<KeyRead> comparison(const Node& n) {
    using Op = engine::SortCondition::Op;
    for (int side = 0; side < 2; ++side) {
      const NodeId path = n.args[side], other = n.args[1 - side];
      const bool eq = n.comparator == expr::Comparator::kEq;
      if (eq) {
        if (const AttributeValue* v = key_value(path, other, key_.hash, key_.hash_type, true)) {
          return {on_partition(v)};
        }
      }
      if (top_attribute(st_, path) != key_.range || key_.range.empty()) continue;
      if (n.comparator == expr::Comparator::kNe) return {with_sort(SortKind::kNegated)};
      const AttributeValue* v = key_value(path, other, key_.range, key_.range_type, eq);
      if (!v) continue;
      KeyRead r = with_sort(eq ? SortKind::kEqual : SortKind::kRange);
      r.sort.value = *v;
      // `'5' < sk` reads as `sk > '5'`.
      static constexpr Op kOps[2][6] = {{Op::kEq, Op::kNone, Op::kLt, Op::kLe, Op::kGt, Op::kGe},
                                        {Op::kEq, Op::kNone, Op::kGt, Op::kGe, Op::kLt, Op::kLe}};
      r.sort.op = kOps[side][static_cast<int>(n.comparator)];
      return {r};
    }
    return {KeyRead{}};
  }

  std::vector<KeyRead> between(const Node& n) {
    if (key_.range.empty() || top_attribute(st_, n.args[0]) != key_.range) return {KeyRead{}};
    if (n.negated) return {with_sort(SortKind::kNegated)};
    const AttributeValue* low = key_value(n.args[0], n.args[1], key_.range, key_.range_type, false);
    const AttributeValue* high =
        key_value(n.args[0], n.args[2], key_.range, key_.range_type, false);
    if (!low || !high) return {KeyRead{}};
    KeyRead r = with_sort(SortKind::kRange);
    r.sort.op = engine::SortCondition::Op::kBetween;
    r.sort.value = *low;
    r.sort.value2 = *high;
    return {r};
  }

  std::vector<KeyRead> in(const Node& n) {
    const std::string_view attribute = top_attribute(st_, n.args[0]);
    const bool hash = attribute == key_.hash;
    const bool range = !key_.range.empty() && attribute == key_.range;
    if ((!hash && !range) || !n.list) return {KeyRead{}};
    if (n.negated) return {with_sort(range ? SortKind::kNegated : SortKind::kNone)};
    std::vector<KeyRead> out;
    for (std::size_t i = 1; i < n.args.size(); ++i) {
      const AttributeValue* v =
          key_value(n.args[0], n.args[i], attribute, hash ? key_.hash_type : key_.range_type, true);
      if (!v) return {KeyRead{}};
      if (hash) {
        out.push_back(on_partition(v));
      } else {
        KeyRead r = with_sort(SortKind::kEqual);
        r.sort.op = engine::SortCondition::Op::kEq;
        r.sort.value = *v;
        out.push_back(r);
      }
    }
    return out;
  }

  std::vector<KeyRead> function(const Node& n) {
    if (n.function != partiql::Function::kBeginsWith || n.args.size() != 2 || key_.range.empty()) {
      return {KeyRead{}};
    }
    const AttributeValue* v = key_value(n.args[0], n.args[1], key_.range, key_.range_type, false);
    if (!v || v->type() == AttrType::N) return {KeyRead{}};
    KeyRead r = with_sort(SortKind::kRange);
    r.sort.op = engine::SortCondition::Op::kBeginsWith;
    r.sort.value = *v;
    return {r};
  }

  static bool unkeyed(const std::vector<KeyRead>& reads) {
    return reads.size() == 1 && !reads[0].partition && reads[0].kind == SortKind::kNone;
  }

  bool mentions_range(NodeId id) const {
    if (key_.range.empty()) return false;
    const Node& n = st_.node(id);
    if (n.type == NodeType::kPath) {
      const expr::DocumentPath& p = st_.paths[n.ref];
      return p.elements[0].text == key_.range;
    }
    return std::any_of(n.args.begin(), n.args.end(), [&](NodeId a) { return mentions_range(a); });
  }

  // Both conditions hold: every pairing of a read of each that can hold together.
  std::vector<KeyRead> conjunction(const std::vector<KeyRead>& a, const std::vector<KeyRead>& b) {
    std::vector<KeyRead> out;
    if (a.size() * b.size() > kMaxCandidates) {
      // Too many to pair: a keyed side makes every pairing keyed, which is refused.
      if (all_keyed(a) || all_keyed(b)) throw ApiError::validation(std::string(kTooManyReads));
      return {KeyRead{}};
    }
    for (const KeyRead& x : a) {
      for (const KeyRead& y : b) {
        if (std::optional<KeyRead> r = both(x, y)) {
          out.push_back(std::move(*r));
        } else if (x.partition || y.partition) {
          dropped_keyed_ = true;
        }
      }
    }
    return out;
  }

  static std::optional<KeyRead> both(const KeyRead& x, const KeyRead& y) {
    KeyRead r = x;
    if (y.partition) {
      if (r.partition && !(*r.partition == *y.partition)) return std::nullopt;
      r.partition = y.partition;
    }
    if (narrows(r.kind) && narrows(y.kind)) {
      // Both conditions hold: the keys both cover, nothing when they cover none.
      auto both = std::make_shared<const Interval>(intersect(bounds_of(r), bounds_of(y)));
      if (is_empty(*both)) return std::nullopt;
      if (y.kind == SortKind::kEqual && r.kind != SortKind::kEqual) {
        r.kind = SortKind::kEqual;
        r.sort = y.sort;
      }
      r.bounds = std::move(both);
      return r;
    }
    if (y.kind == SortKind::kNone || y.kind == r.kind) return r;
    if (r.kind == SortKind::kNone || r.kind == SortKind::kNegated) {
      r.kind = y.kind;
      r.sort = y.sort;
      r.bounds = y.bounds;
    }
    return r;
  }

  static bool all_keyed(const std::vector<KeyRead>& reads) {
    return std::all_of(reads.begin(), reads.end(), [](const KeyRead& r) { return r.partition; });
  }

  // Too many candidate reads: a keyed statement is refused, anything else is a scan.
  static std::vector<KeyRead> bounded(std::vector<KeyRead> reads) {
    if (reads.size() <= kMaxCandidates) return reads;
    if (all_keyed(reads)) throw ApiError::validation(std::string(kTooManyReads));
    return {KeyRead{}};
  }

  const BoundStatement& s_;
  const partiql::Statement& st_;
  const TargetKey& key_;
  bool type_errors_ = true;
  bool dropped_keyed_ = false;  // a pairing with a partition could not hold

 public:
  // Whether `reads` (of the whole WHERE) make a keyed read: every read names a partition,
  // or, when no read is left, one that named a partition contradicted another.
  bool keyed(const std::vector<KeyRead>& reads, bool has_where) const {
    if (!has_where) return false;
    if (reads.empty()) return dropped_keyed_;
    return std::all_of(reads.begin(), reads.end(),
                       [](const KeyRead& r) { return r.partition != nullptr; });
  }
};

// One partition a keyed SELECT reads, and how.
struct PartitionRead {
  AttributeValue partition;
  std::optional<engine::SortCondition> sort;  // narrows a Query
  std::optional<AttributeValue> sort_equal;   // the whole key: a single-item read
  bool single = false;                        // a table without sort key, or sort_equal
};

bool value_less(const AttributeValue& a, const AttributeValue& b) {
  const auto order = expr::compare_scalars(a, b);
  return order && *order < 0;
}

// The partitions of a keyed SELECT, each read once and in key order; two reads of one
// partition that may return a common item are refused.
std::vector<PartitionRead> partition_reads(std::vector<KeyRead> reads, const TargetKey& key,
                                           bool table_read) {
  if (reads.size() > kMaxDecomposedReads) throw ApiError::validation(std::string(kTooManyReads));
  std::stable_sort(reads.begin(), reads.end(), [](const KeyRead& a, const KeyRead& b) {
    return value_less(*a.partition, *b.partition);
  });
  std::vector<PartitionRead> out;
  for (std::size_t i = 0; i < reads.size();) {
    std::size_t j = i + 1;
    while (j < reads.size() && *reads[j].partition == *reads[i].partition) ++j;
    for (std::size_t a = i; a < j; ++a) {
      for (std::size_t b = a + 1; b < j; ++b) {
        if (overlap(reads[a], reads[b])) throw ApiError::validation(std::string(kOverlapping));
      }
    }
    PartitionRead p{*reads[i].partition, std::nullopt, std::nullopt, false};
    if (j == i + 1 && reads[i].kind == SortKind::kEqual) {
      p.sort_equal = reads[i].sort.value;
      p.sort = reads[i].sort;
    } else if (j == i + 1 && reads[i].kind == SortKind::kRange) {
      p.sort = reads[i].sort;
    }
    p.single = table_read && (key.range.empty() || p.sort_equal);
    out.push_back(std::move(p));
    i = j;
  }
  return out;
}

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
    Decomposer d(s, key);
    for (const KeyRead& r : d.reads(b)) {
      if (r.partition && (!highest || value_less(*highest, *r.partition))) {
        highest = r.partition;
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
    std::optional<engine::StoredItem> item = ctx_.engine.get_stored(*table_, key);
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
    engine::Page page;
    if (!p) {
      page = index_ ? ctx_.engine.scan_index(*table_, *index_, 0, 1, options)
                    : ctx_.engine.scan(*table_, 0, 1, options);
    } else {
      engine::SortCondition sort = p->sort.value_or(engine::SortCondition{});
      page = index_ ? ctx_.engine.query_index(*table_, *index_, {p->partition}, {}, sort, options)
                    : ctx_.engine.query(*table_, p->partition, sort, options);
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
      write_item(w, stored);
      return;
    }
    Item item = stored.decode();
    if (fetch_) item = fetched(item);
    if (filter_ && !partiql::matches(st_, st_.where, s_.parameters, item)) return;
    write_item(w, select_row(st_, item));
  }

  // A local index row with the table's item, for attributes the index does not project;
  // the fetch is charged to the table.
  Item fetched(const Item& entry) {
    Item key;
    key.emplace(table_->key.hash.name, entry.at(table_->key.hash.name));
    if (table_->key.range) key.emplace(table_->key.range->name, entry.at(table_->key.range->name));
    std::optional<Item> item = ctx_.engine.get_item(*table_, key);
    capacity_.table += read_capacity_units(item ? item_size(*item) : 0, options_.consistent);
    return item ? std::move(*item) : entry;
  }

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

TargetKey target_key(const TableDefinition& table, const IndexDefinition* index) {
  TargetKey key;
  if (index) {
    key.hash = index->hash[0].name;
    key.hash_type = to_attr_type(index->hash[0].type);
    if (!index->range.empty()) {
      key.range = index->range[0].name;
      key.range_type = to_attr_type(index->range[0].type);
    }
    return key;
  }
  key.hash = table.key.hash.name;
  key.hash_type = to_attr_type(table.key.hash.type);
  if (table.key.range) {
    key.range = table.key.range->name;
    key.range_type = to_attr_type(table.key.range->type);
  }
  return key;
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
  const TargetKey key = target_key(table, nullptr);
  Decomposer decomposer(s, key, type_errors);
  std::vector<KeyRead> reads = decomposer.reads(s->where);
  if (decomposer.keyed(reads, s->where != partiql::kNoNode)) {
    partition_reads(std::move(reads), key, true);
  }
}

std::string execute_select(const Context& ctx, const BoundStatement& s, engine::TablePtr table,
                           const SelectOptions& options) {
  const partiql::Statement& st = *s;
  const IndexDefinition* index = select_index(st, *table, options);
  const TargetKey key = target_key(*table, index);
  Decomposer decomposer(s, key);
  std::vector<KeyRead> reads = decomposer.reads(st.where);
  const bool keyed = decomposer.keyed(reads, st.where != partiql::kNoNode);
  std::optional<std::vector<PartitionRead>> partitions;
  if (keyed) partitions = partition_reads(std::move(reads), key, index == nullptr);
  const Ordering ordering = order_by(st, key, keyed, partitions ? partitions->size() : 0);
  if (index) {
    check_projection(st, *table, *index);
    if (keyed) check_filter_projected(s, *table, *index, key);
  }
  const std::uint64_t print = fingerprint(s, *table);
  Resume start;
  if (options.next_token) {
    start = decode_token(*options.next_token, print);
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
    write_string(w, encode_token(print, *next));
  }
  write_consumed_capacity(w, options.capacity_mode, run.capacity());
  w.EndObject();
  return json_text(out);
}

}  // namespace kumo::api
