#include "engine/engine.h"

#include "codec/item_codec.h"
#include "codec/key_codec.h"

namespace kumo::engine {
namespace {

// Per-table counters, kept in the table's own key range so DeleteTable drops them with the
// data: [table id][0x00]"count" and [table id][0x00]"bytes". Updated in the same batch as
// the item, so they are exact and survive a crash.
std::string counter_key(std::uint32_t table_id, std::string_view name) {
  std::string key = codec::table_prefix(table_id);
  key.push_back('\0');
  key.append(name);
  return key;
}

// DynamoDB counts 100 bytes of overhead per item in TableSizeBytes (§2.4).
constexpr std::int64_t kItemOverheadBytes = 100;

}  // namespace

Engine::Engine(std::unique_ptr<storage::Storage> storage)
    : storage_(std::move(storage)), catalog_(*storage_) {}

std::string Engine::key_of(const TableDefinition& table, const Item& item_or_key) const {
  const AttributeValue& partition = item_or_key.find(table.key.hash.name)->second;
  const AttributeValue* sort = nullptr;
  if (table.key.range) sort = &item_or_key.find(table.key.range->name)->second;
  return codec::item_key(table.id, partition, sort);
}

WriteResult Engine::put_item(const TableDefinition& table, Item item) {
  const std::string key = key_of(table, item);
  WriteResult result;
  result.new_size = item_size(item);
  std::string encoded = codec::encode_item(item);

  auto guard = locks_.lock(key);
  std::optional<std::string> old = storage_->get(key);
  if (old) {
    Item old_item;
    if (!codec::decode_item(*old, &old_item)) {
      throw storage::StorageError("corrupt item in table " + table.name);
    }
    result.old_size = item_size(old_item);
    result.old_item = std::move(old_item);
  }
  storage::WriteBatch batch;
  batch.put(key, std::move(encoded));
  if (!old) batch.add_counter(counter_key(table.id, "count"), 1);
  batch.add_counter(counter_key(table.id, "bytes"), static_cast<std::int64_t>(result.new_size) -
                                                        static_cast<std::int64_t>(result.old_size));
  storage_->write(batch);
  return result;
}

std::optional<Item> Engine::get_item(const TableDefinition& table, const Item& key) const {
  std::optional<std::string> value = storage_->get(key_of(table, key));
  if (!value) return std::nullopt;
  Item item;
  if (!codec::decode_item(*value, &item)) {
    throw storage::StorageError("corrupt item in table " + table.name);
  }
  return item;
}

WriteResult Engine::delete_item(const TableDefinition& table, const Item& key) {
  const std::string storage_key = key_of(table, key);
  WriteResult result;
  auto guard = locks_.lock(storage_key);
  std::optional<std::string> old = storage_->get(storage_key);
  if (!old) return result;
  Item old_item;
  if (!codec::decode_item(*old, &old_item)) {
    throw storage::StorageError("corrupt item in table " + table.name);
  }
  result.old_size = item_size(old_item);
  result.old_item = std::move(old_item);
  storage::WriteBatch batch;
  batch.del(storage_key);
  batch.add_counter(counter_key(table.id, "count"), -1);
  batch.add_counter(counter_key(table.id, "bytes"), -static_cast<std::int64_t>(result.old_size));
  storage_->write(batch);
  return result;
}

std::int64_t Engine::item_count(const TableDefinition& table) const {
  return storage_->get_counter(counter_key(table.id, "count"));
}

std::int64_t Engine::table_size_bytes(const TableDefinition& table) const {
  return storage_->get_counter(counter_key(table.id, "bytes")) +
         kItemOverheadBytes * item_count(table);
}

}  // namespace kumo::engine
