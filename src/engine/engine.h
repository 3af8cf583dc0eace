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

  // Items currently stored in the table and their total size (item sizes + 100 bytes
  // per item, as DynamoDB's TableSizeBytes counts).
  std::int64_t item_count(const TableDefinition& table) const;
  std::int64_t table_size_bytes(const TableDefinition& table) const;

 private:
  std::string key_of(const TableDefinition& table, const Item& item_or_key) const;

  std::unique_ptr<storage::Storage> storage_;
  Catalog catalog_;
  ItemLocks locks_;
};

}  // namespace kumo::engine
