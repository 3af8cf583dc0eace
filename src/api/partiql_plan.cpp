#include "api/partiql_plan.h"

#include <algorithm>
#include <memory>

#include <fmt/format.h>

#include "expr/evaluate.h"
#include "model/api_error.h"

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

constexpr std::string_view kTooManyReads = "Too many decomposed read operations for a given query.";
constexpr std::string_view kOverlapping =
    "Overlapping conditions with range keys are not supported in where clause";

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

}  // namespace

bool value_less(const AttributeValue& a, const AttributeValue& b) {
  const auto order = expr::compare_scalars(a, b);
  return order && *order < 0;
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

std::optional<std::vector<PartitionRead>> plan_partitions(const BoundStatement& s,
                                                          const TargetKey& key, bool table_read,
                                                          bool type_errors) {
  Decomposer decomposer(s, key, type_errors);
  std::vector<KeyRead> reads = decomposer.reads(s->where);
  if (!decomposer.keyed(reads, s->where != partiql::kNoNode)) return std::nullopt;
  return partition_reads(std::move(reads), key, table_read);
}

std::vector<const AttributeValue*> branch_partitions(const BoundStatement& s, const TargetKey& key,
                                                     partiql::NodeId branch) {
  Decomposer decomposer(s, key);
  std::vector<const AttributeValue*> out;
  for (const KeyRead& r : decomposer.reads(branch)) {
    if (r.partition) out.push_back(r.partition);
  }
  return out;
}

}  // namespace kumo::api
