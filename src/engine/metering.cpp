// Capacity metering of reads and writes (docs/capacity.md): each access is admitted by the
// capacity manager before it reads or writes and charged, after, exactly the units
// ConsumedCapacity reports (model/capacity.h), on its resource (the table, or a GSI) and
// the partition of its key's token.
#include <algorithm>
#include <array>

#include "codec/key_codec.h"
#include "engine/engine.h"
#include "engine/index_keys.h"
#include "model/api_error.h"
#include "model/capacity.h"

namespace kumo::engine {
namespace {

using capacity::Dir;
using capacity::Milli;

// The length of one encoded key value of `type` at the front of `in` (all of it when it
// does not end there).
std::size_t value_length(std::string_view in, ScalarType type) {
  if (type == ScalarType::N) {
    if (in.empty() || in[0] == '\x02') return std::min<std::size_t>(1, in.size());
    const char end = in[0] == '\x01' ? '\xFF' : '\x00';  // negatives are complemented
    for (std::size_t i = 2; i < in.size(); ++i) {
      if (in[i] == end) return i + 1;
    }
    return in.size();
  }
  // S and B end with 0x00 0x01; a 0x00 inside is escaped as 0x00 0xFF.
  for (std::size_t i = 0; i + 1 < in.size(); ++i) {
    if (in[i] != '\x00') continue;
    if (in[i + 1] == '\x01') return i + 2;
    ++i;
  }
  return in.size();
}

std::size_t tuple_length(std::string_view in, const std::vector<AttributeDefinition>& components) {
  std::size_t length = 0;
  for (const auto& d : components) length += value_length(in.substr(length), d.type);
  return length;
}

// An item's key after its token: the partition key, then the sort key (if the table has one).
void cut_item(const void* shape, std::string_view rest, std::string_view* partition_key,
              std::string_view* sort_key) {
  const auto& key = *static_cast<const KeySchema*>(shape);
  const std::size_t hash = value_length(rest, key.hash.type);
  *partition_key = rest.substr(0, hash);
  if (key.range) *sort_key = rest.substr(hash);
}

// A GSI entry's key after its token: the HASH tuple, then the RANGE tuple.
void cut_entry(const void* shape, std::string_view rest, std::string_view* partition_key,
               std::string_view* sort_key) {
  const auto& index = *static_cast<const IndexDefinition*>(shape);
  const std::size_t hash = tuple_length(rest, index.hash);
  *partition_key = rest.substr(0, hash);
  *sort_key = rest.substr(hash, tuple_length(rest.substr(hash), index.range));
}

// An LSI entry's key after its token: only the partition key (the table's), for the
// table's key statistics.
void cut_partition_key(const void* shape, std::string_view rest, std::string_view* partition_key,
                       std::string_view*) {
  const auto& index = *static_cast<const IndexDefinition*>(shape);
  *partition_key = rest.substr(0, tuple_length(rest, index.hash));
}

// How the keys of `index` (null: the table's items) are cut for the key statistics.
capacity::KeyCutter cutter_of(const TableDefinition& table, const IndexDefinition* index) {
  if (index == nullptr) return {cut_item, &table.key};
  // An LSI's reads count against the table's partition keys; its sort key is not the table's.
  if (!index->global) return {cut_partition_key, index};
  return {cut_entry, index};
}

// The access to the partition holding `key`: its token, and its encoded partition and sort
// key (as key_cutter cuts an item's or an index entry's), cut only if the key statistics
// keep the access.
capacity::Access access_of(capacity::ResourceMeter* resource, const TableDefinition& table,
                           const IndexDefinition* index, std::string_view key, Dir dir, Milli min) {
  capacity::Access access;
  access.resource = resource;
  access.dir = dir;
  access.min = min;
  const std::size_t offset = index ? index_token_offset() : kItemTokenOffset;
  if (key.size() < offset + 8) {
    // A range bound before any partition key: the resource's first token.
    if (key.size() > offset) {
      std::string token(key.substr(offset));
      token.resize(8, '\0');
      access.token = codec::read_u64(token);
    }
    return access;
  }
  access.token = codec::read_u64(key.substr(offset));
  access.key = key.substr(offset + 8);
  access.cutter = cutter_of(table, index);
  return access;
}

const IndexDefinition* global_index(const TableDefinition& table, std::uint32_t id) {
  for (const auto& index : table.global_indexes) {
    if (index.id == id) return &index;
  }
  return nullptr;
}

Milli milli(double units, int factor) {
  return capacity::to_milli(units * factor);
}

thread_local std::array<std::shared_ptr<capacity::TableMeters>, RequestScope::kMax> scope_tables;
thread_local std::size_t scope_count = 0;
thread_local std::size_t scope_returned = 0;

}  // namespace

void RequestScope::clear() {
  for (std::size_t i = 0; i < scope_count; ++i) scope_tables[i].reset();
  scope_count = 0;
  scope_returned = 0;
}

void RequestScope::returned(std::size_t items) {
  scope_returned += items;
}

std::size_t RequestScope::returned_items() {
  return scope_returned;
}

void RequestScope::touch(const std::shared_ptr<capacity::TableMeters>& meters) {
  for (std::size_t i = 0; i < scope_count; ++i) {
    if (scope_tables[i] == meters) return;
  }
  if (scope_count < kMax) scope_tables[scope_count++] = meters;
}

std::span<const std::shared_ptr<capacity::TableMeters>> RequestScope::tables() {
  return {scope_tables.data(), scope_count};
}

WriteResult::IndexUnits index_write(const IndexDefinition& index, double units,
                                    std::optional<std::string> old_key, std::size_t old_size,
                                    std::optional<std::string> new_key, std::size_t new_size) {
  WriteResult::IndexUnits out{index.name, index.global, units, index.id, {}};
  const auto with_overhead = [](std::size_t size) {
    return static_cast<std::int64_t>(size) + kItemOverheadBytes;
  };
  if (old_key && new_key && *old_key == *new_key) {
    out.parts[1] = {std::move(*new_key), units,
                    static_cast<std::int64_t>(new_size) - static_cast<std::int64_t>(old_size)};
    return out;
  }
  if (old_key) {
    const double removed = new_key ? write_capacity_units(old_size) : units;
    out.parts[0] = {std::move(*old_key), removed, -with_overhead(old_size)};
  }
  if (new_key) {
    out.parts[1] = {std::move(*new_key), units - out.parts[0].units, with_overhead(new_size)};
  }
  return out;
}

capacity::ResourceMeter* Engine::meter(const TableDefinition& table, std::uint32_t index_id,
                                       const Metering& metering) const {
  if (metering.op == capacity::Operation::kNone || !table.meters || !capacity()) return nullptr;
  RequestScope::touch(table.meters);
  return capacity::CapacityManager::resource(*table.meters, index_id);
}

void Engine::admit(capacity::ResourceMeter* resource, const TableDefinition& table,
                   const IndexDefinition* index, std::string_view key, Dir dir, Milli min,
                   const Metering& metering) const {
  // Only enforce refuses: the other modes skip finding the partition.
  if (!resource || !capacity()->enforcing()) return;
  capacity()->admit(access_of(resource, table, index, key, dir, min), metering.op,
                    metering.insights);
}

void Engine::admit_indexes(const TableDefinition& table, const WriteResult& result,
                           const Metering& metering) const {
  if (metering.op == capacity::Operation::kNone || !table.meters || !capacity() ||
      !capacity()->enforcing()) {
    return;
  }
  const int factor = metering.index_factor ? metering.index_factor : metering.factor;
  // In the order of the table's GSIs: the index's bucket and the partition of its old
  // entry, then of its new one.
  for (const auto& units : result.index_units) {
    if (!units.global) continue;
    const IndexDefinition* index = global_index(table, units.id);
    capacity::ResourceMeter* resource =
        index ? capacity::CapacityManager::resource(*table.meters, units.id) : nullptr;
    if (!resource) continue;
    for (const auto& part : units.parts) {
      if (part.key.empty()) continue;
      capacity()->admit(access_of(resource, table, index, part.key, Dir::kWrite, 1000 * factor),
                        metering.op, metering.insights);
    }
  }
}

void Engine::charge_write(const TableDefinition& table, const std::string& storage_key,
                          const WriteResult& result, const Metering& metering) const {
  capacity::CapacityManager* manager = capacity();
  if (!manager || !table.meters) return;
  capacity::ResourceMeter* base = capacity::CapacityManager::resource(*table.meters, 0);
  const bool metered = metering.op != capacity::Operation::kNone;
  const int index_factor = metering.index_factor ? metering.index_factor : metering.factor;
  capacity::Access access = access_of(base, table, nullptr, storage_key, Dir::kWrite, 1000);
  // The base write costs the larger of the old and new item; LSI writes go to the table.
  double units = write_capacity_units(std::max(result.old_size, result.new_size));
  Milli milli_units = milli(units, metering.factor);
  for (const auto& u : result.index_units) {
    if (!u.global) milli_units += milli(u.units, index_factor);
  }
  if (base) {
    if (metered) manager->charge(access, milli_units, metering.op, metering.insights);
    const std::int64_t delta =
        (result.new_item ? static_cast<std::int64_t>(result.new_size) + kItemOverheadBytes : 0) -
        (result.old_item ? static_cast<std::int64_t>(result.old_size) + kItemOverheadBytes : 0);
    if (delta) manager->add_bytes(*base, access.token, delta);
  }
  for (const auto& u : result.index_units) {
    const IndexDefinition* index = u.global ? global_index(table, u.id) : nullptr;
    capacity::ResourceMeter* resource =
        index ? capacity::CapacityManager::resource(*table.meters, u.id) : nullptr;
    if (!resource) continue;
    for (const auto& part : u.parts) {
      if (part.key.empty()) continue;
      capacity::Access entry = access_of(resource, table, index, part.key, Dir::kWrite, 1000);
      if (metered && part.units > 0) {
        manager->charge(entry, milli(part.units, index_factor), metering.op, metering.insights);
      }
      if (part.bytes) manager->add_bytes(*resource, entry.token, part.bytes);
    }
  }
}

void Engine::charge_failed_condition(const TableDefinition& table, const std::string& storage_key,
                                     std::size_t current_size, const Metering& metering) const {
  capacity::ResourceMeter* resource = meter(table, 0, metering);
  if (!resource) return;
  capacity()->charge(access_of(resource, table, nullptr, storage_key, Dir::kWrite, 1000),
                     milli(write_capacity_units(current_size), metering.factor), metering.op,
                     metering.insights);
}

void Engine::charge_item_read(capacity::ResourceMeter* resource, const TableDefinition& table,
                              std::string_view storage_key, std::size_t bytes, bool consistent,
                              const Metering& metering) const {
  if (!resource) return;
  capacity()->charge(access_of(resource, table, nullptr, storage_key, Dir::kRead, 1000),
                     milli(read_capacity_units(bytes, consistent), metering.factor), metering.op,
                     metering.insights);
}

void Engine::charge_page(capacity::ResourceMeter* resource, const Page& page, std::size_t bytes,
                         bool consistent, const Metering& metering,
                         capacity::KeyCutter cutter) const {
  if (!resource) return;
  capacity()->charge_page(*resource, Dir::kRead, page.by_partition,
                          milli(read_capacity_units(bytes, consistent), metering.factor),
                          metering.op, metering.insights, cutter);
}

capacity::KeyCutter Engine::key_cutter(const TableDefinition& table, const IndexDefinition* index) {
  return cutter_of(table, index);
}

void Engine::charge_read(const TableDefinition& table, const Page& page, std::size_t bytes,
                         bool consistent, const Metering& metering) const {
  if (bytes == 0) return;
  charge_page(meter(table, 0, metering), page, bytes, consistent, metering);
}

}  // namespace kumo::engine
