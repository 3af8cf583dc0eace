// Storage keys of secondary-index entries and of a table's counters (docs/storage.md has
// the whole layout). An index entry:
// [table id][kIndexes][index id][token(enc(HASH tuple))][enc(HASH tuple)][enc(RANGE tuple)]
// [enc(table key)] → the item's projection. Tuples are encoded component by component, each
// in its native order, so entries sort by the RANGE tuple and one seek serves any
// left-to-right prefix of it.
#pragma once

#include <optional>
#include <string>

#include "model/attribute_value.h"
#include "model/table.h"

namespace kumo::engine {

// [table id][kIndexes][index id]: every entry of the index starts with this.
std::string index_prefix(const TableDefinition& table, std::uint32_t index_id);

// The entry key of `item` in `index`, or nullopt when the item is not in the index (a
// component missing, not of its declared type, empty, or over the key size limits: indexes
// are sparse).
std::optional<std::string> index_entry_key(const TableDefinition& table,
                                           const IndexDefinition& index, const Item& item);

// The prefix shared by the entries whose HASH tuple is `hash` and whose first RANGE
// components equal `range_equal`.
std::string index_partition_prefix(const TableDefinition& table, const IndexDefinition& index,
                                   const std::vector<AttributeValue>& hash,
                                   const std::vector<AttributeValue>& range_equal);

// Length of index_prefix(): where an entry key's token begins.
std::size_t index_token_offset();

// An item's storage key: [table id (4 bytes)][space (1 byte)][token (8 bytes)][enc(pk)]...
// so its token begins here.
inline constexpr std::size_t kItemTokenOffset = 5;

// DynamoDB counts 100 bytes of overhead per item or index entry in a partition's size, as in
// TableSizeBytes and IndexSizeBytes.
inline constexpr std::int64_t kItemOverheadBytes = 100;

// The attributes of `item` the index stores: its key attributes and the projection.
Item project_entry(const IndexDefinition& index, const Item& item);

// The LastEvaluatedKey of an entry: every index key component and the table key.
Item index_entry_position(const TableDefinition& table, const IndexDefinition& index,
                          const Item& entry);

// The counter key `name` of a table: "count" and "bytes" (its items and their total
// size), "collection" followed by a partition key (an item collection's size). Counters
// are kept in the table's own key range, [table id][0x00]<name>, so DeleteTable drops them
// with the data, and are updated in the batch of the write that changes them, so they are
// exact and survive a crash.
std::string table_counter_key(std::uint32_t table_id, std::string_view name);

// The counter key of an index's entry count ("count") or size ("bytes"), kept in the
// table's key range so both go with the table.
std::string index_counter_key(const TableDefinition& table, std::uint32_t index_id,
                              std::string_view name);

}  // namespace kumo::engine
