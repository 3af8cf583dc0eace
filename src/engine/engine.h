// Engine: the database. Owns the catalog of tables and performs item reads and writes on
// storage with per-item atomicity. Receives validated data; knows nothing of JSON or HTTP.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/catalog.h"
#include "engine/item_locks.h"
#include "model/attribute_value.h"
#include "model/table.h"
#include "storage/storage.h"

namespace kumo::engine {

// Outcome of a single-item write.
struct WriteResult {
  std::optional<Item> old_item;  // the item before the write, when there was one
  std::size_t old_size = 0;      // item_size of the old item (0 if none)
  std::size_t new_size = 0;      // item_size of the new item (0 after a delete)
};

// A condition on the sort key of a Query (dynamodb-contract.md §5.5).
struct SortCondition {
  enum class Op { kNone, kEq, kLt, kLe, kGt, kGe, kBetween, kBeginsWith };
  Op op = Op::kNone;
  AttributeValue value;   // the operand (the lower bound for kBetween)
  AttributeValue value2;  // the upper bound for kBetween
};

// Where a Query or Scan page starts and when it stops.
struct PageOptions {
  bool forward = true;
  std::size_t limit = 0;  // items evaluated at most; 0: no limit
  // Resume strictly after this key (the table's key attributes), if given.
  std::optional<Item> exclusive_start_key;
};

// One page of a Query or Scan, read from one storage snapshot. `items` are every item
// evaluated, before any filter; `last_evaluated_key` is set when the page stopped early
// (Limit or the 1 MB page size), as DynamoDB sets it without looking ahead.
struct Page {
  std::vector<Item> items;
  std::size_t bytes_read = 0;  // Σ item sizes, for capacity
  std::optional<Item> last_evaluated_key;
};

class Engine {
 public:
  explicit Engine(std::unique_ptr<storage::Storage> storage);

  Catalog& catalog() { return catalog_; }
  const Catalog& catalog() const { return catalog_; }

  // Replaces (or creates) the item whose key attributes `item` carries.
  WriteResult put_item(const TableDefinition& table, Item item);
  // The item with `key` (exactly the table's key attributes), or nullopt.
  std::optional<Item> get_item(const TableDefinition& table, const Item& key) const;
  // Deletes the item with `key`; deleting an absent item succeeds.
  WriteResult delete_item(const TableDefinition& table, const Item& key);

  // The items of one partition whose sort key satisfies `sort`, in sort-key order.
  Page query(const TableDefinition& table, const AttributeValue& partition,
             const SortCondition& sort, const PageOptions& options) const;
  // Segment `segment` of `total_segments` of the table, in token order (the whole table
  // for 0 of 1). Segments are token ranges, so each item lies in exactly one.
  Page scan(const TableDefinition& table, std::uint32_t segment, std::uint32_t total_segments,
            const PageOptions& options) const;
  // The segment (of `total_segments`) that holds the item with this key.
  std::uint32_t segment_of(const TableDefinition& table, const Item& key,
                           std::uint32_t total_segments) const;

  // Items currently stored in the table and their total size (item sizes + 100 bytes
  // per item, as DynamoDB's TableSizeBytes counts).
  std::int64_t item_count(const TableDefinition& table) const;
  std::int64_t table_size_bytes(const TableDefinition& table) const;

 private:
  std::string key_of(const TableDefinition& table, const Item& item_or_key) const;
  // Reads [lower, upper) from a snapshot in the requested direction into a page.
  Page read_range(const TableDefinition& table, std::string lower, std::string upper,
                  const PageOptions& options) const;

  std::unique_ptr<storage::Storage> storage_;
  Catalog catalog_;
  ItemLocks locks_;
};

}  // namespace kumo::engine
