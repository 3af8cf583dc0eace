// How a PartiQL SELECT reads by key. Its WHERE is decomposed into key reads, each a
// partition value and what narrows its sort key: a key equality or IN gives one read per
// value, a sort-key range a range read, a negated sort-key condition a read of the whole
// partition that overlaps nothing, any other condition a read with no key; AND pairs the
// reads that can hold together (two sort-key conditions by the keys both cover), OR
// concatenates them. A read without a partition makes the statement a scan. Otherwise the
// reads are grouped into partitions, each read once and in key order, after DynamoDB's two
// refusals: more than 50 reads, and two reads of one partition that may return a common item.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "api/partiql_common.h"
#include "engine/engine.h"

namespace kumo::api {

// The key a SELECT reads by: its table's, or its index's.
struct TargetKey {
  std::string_view hash;
  AttrType hash_type = AttrType::S;
  std::string_view range;  // empty without a sort key
  AttrType range_type = AttrType::S;
};

TargetKey target_key(const TableDefinition& table, const IndexDefinition* index);

// One partition a keyed SELECT reads, and how.
struct PartitionRead {
  AttributeValue partition;
  std::optional<engine::SortCondition> sort;  // narrows a Query
  std::optional<AttributeValue> sort_equal;   // the whole key: a single-item read
  bool single = false;                        // a table without sort key, or sort_equal
};

// The partitions `s`'s WHERE reads against `key`, or nullopt when the statement is a scan.
// `table_read`: reads of the table (not an index), where a read of the whole key is a
// single-item read. Throws ValidationException: "Too many decomposed read operations for a
// given query.", "Overlapping conditions with range keys are not supported in where
// clause", and, when `type_errors`, a key compared by equality with a value of the wrong type.
std::optional<std::vector<PartitionRead>> plan_partitions(const BoundStatement& s,
                                                          const TargetKey& key, bool table_read,
                                                          bool type_errors = true);

// The partition values the reads of `branch` (a part of WHERE) name.
std::vector<const AttributeValue*> branch_partitions(const BoundStatement& s, const TargetKey& key,
                                                     partiql::NodeId branch);

// Key order of two partition or sort-key values (S, N or B).
bool value_less(const AttributeValue& a, const AttributeValue& b);

}  // namespace kumo::api
