#include "engine/index_keys.h"

#include "codec/key_codec.h"

namespace kumo::engine {

std::string table_counter_key(std::uint32_t table_id, std::string_view name) {
  std::string key = codec::table_prefix(table_id);
  key.push_back('\0');
  key.append(name);
  return key;
}

std::string index_counter_key(const TableDefinition& table, std::uint32_t index_id,
                              std::string_view name) {
  std::string key = table_counter_key(table.id, "index");
  codec::append_u32(&key, index_id);
  key.append(name);
  return key;
}

std::string index_prefix(const TableDefinition& table, std::uint32_t index_id) {
  std::string key = codec::space_prefix(table.id, codec::Space::kIndexes);
  codec::append_u32(&key, index_id);
  return key;
}

std::size_t index_token_offset() {
  return 4 + 1 + 4;
}

namespace {

// The item's value of an index key component, or nullptr when it cannot be one: absent, of
// another type, or an empty S or B (`bytes` receives its size).
const AttributeValue* component(const Item& item, const AttributeDefinition& d,
                                std::size_t* bytes) {
  auto it = item.find(d.name);
  if (it == item.end() || it->second.type() != to_attr_type(d.type)) return nullptr;
  *bytes = key_value_size(it->second);
  return *bytes == 0 ? nullptr : &it->second;
}

void append_partition(std::string* key, const std::vector<AttributeValue>& hash) {
  std::string tuple;
  for (const auto& v : hash) codec::append_key_value(&tuple, v);
  codec::append_u64(key, codec::token(tuple));
  key->append(tuple);
}

}  // namespace

std::optional<std::string> index_entry_key(const TableDefinition& table,
                                           const IndexDefinition& index, const Item& item) {
  // Only values DynamoDB accepts as key values are indexed: an item written before the
  // index existed may hold an empty one, or one over the key size limits.
  std::vector<AttributeValue> hash;
  std::size_t bytes = 0;
  for (const auto& d : index.hash) {
    const AttributeValue* v = component(item, d, &bytes);
    if (!v || bytes > kMaxPartitionKeyBytes) return std::nullopt;
    hash.push_back(*v);
  }
  std::size_t range_bytes = 0;
  for (const auto& d : index.range) {
    if (!component(item, d, &bytes)) return std::nullopt;
    range_bytes += bytes;
  }
  if (range_bytes > kMaxSortKeyBytes) return std::nullopt;
  std::string key = index_prefix(table, index.id);
  append_partition(&key, hash);
  for (const auto& d : index.range) codec::append_key_value(&key, item.find(d.name)->second);
  codec::append_key_value(&key, item.at(table.key.hash.name));
  if (table.key.range) codec::append_key_value(&key, item.at(table.key.range->name));
  return key;
}

std::string index_partition_prefix(const TableDefinition& table, const IndexDefinition& index,
                                   const std::vector<AttributeValue>& hash,
                                   const std::vector<AttributeValue>& range_equal) {
  std::string key = index_prefix(table, index.id);
  append_partition(&key, hash);
  for (const auto& v : range_equal) codec::append_key_value(&key, v);
  return key;
}

Item project_entry(const IndexDefinition& index, const Item& item) {
  if (index.projection.type == ProjectionType::ALL) return item;
  Item entry;
  auto copy = [&](const std::string& name) {
    auto it = item.find(name);
    if (it != item.end()) entry.insert(*it);
  };
  for (const auto& name : index.key_attributes) copy(name);
  for (const auto& name : index.projection.non_key_attributes) copy(name);
  return entry;
}

Item index_entry_position(const TableDefinition& table, const IndexDefinition& index,
                          const Item& entry) {
  Item position;
  auto copy = [&](const std::string& name) {
    auto it = entry.find(name);
    if (it != entry.end()) position.insert(*it);
  };
  for (const auto& d : index.hash) copy(d.name);
  for (const auto& d : index.range) copy(d.name);
  copy(table.key.hash.name);
  if (table.key.range) copy(table.key.range->name);
  return position;
}

}  // namespace kumo::engine
