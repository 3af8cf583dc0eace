// Query and Scan pages over the item space (docs/storage.md: items are ordered by
// partition token, then partition key, then sort key).
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <thread>

#include "codec/item_codec.h"
#include "codec/key_codec.h"
#include "engine/engine.h"
#include "engine/index_keys.h"

namespace kumo::engine {

namespace {

// Threads that backfill a GSI at once on shared storage (Engine::backfill).
constexpr std::size_t kSharedBackfillWorkers = 8;

}  // namespace

std::optional<StoredItem> StoredItem::from_bytes(std::string_view bytes) {
  const std::optional<codec::StoredForm> form = codec::split_stored_item(bytes);
  if (!form) return std::nullopt;
  if (form->size) return StoredItem(std::string(form->item), *form->size);
  SizeCounter size;
  if (!codec::walk_item(form->item, size) || !size.valid()) return std::nullopt;
  return StoredItem(std::string(form->item), size.size());
}

Item StoredItem::decode() const {
  Item item;
  if (!codec::decode_item(bytes_, &item)) throw storage::StorageError("corrupt stored item");
  return item;
}

void StoredItem::visit(ValueVisitor& visitor) const {
  if (!codec::walk_item(bytes_, visitor)) throw storage::StorageError("corrupt stored item");
}

namespace {

// The smallest key greater than `key` and every key it prefixes is not needed here: item
// keys are self-delimiting, so no item key extends another, and `key + '\0'` is the
// smallest key after `key` alone.
std::string after(std::string key) {
  key.push_back('\0');
  return key;
}

// enc(value) without the terminator of S/B encodings: the common prefix of the encodings
// of every string (binary) that begins with `value`.
std::string begins_with_prefix(const AttributeValue& value) {
  std::string enc;
  codec::append_key_value(&enc, value);
  enc.resize(enc.size() - 2);
  return enc;
}

Item key_of_item(const TableDefinition& table, const Item& item) {
  Item key;
  key.emplace(table.key.hash.name, item.find(table.key.hash.name)->second);
  if (table.key.range) key.emplace(table.key.range->name, item.find(table.key.range->name)->second);
  return key;
}

}  // namespace

std::optional<StoredItem> Engine::get_stored(const TableDefinition& table, const Item& key,
                                             bool consistent, const Metering& metering) const {
  const std::string storage_key = item_key(table, key);
  capacity::ResourceMeter* resource = meter(table, 0, metering);
  admit(resource, table, nullptr, storage_key, capacity::Dir::kRead,
        capacity::Milli{consistent ? 1000 : 500} * metering.factor, metering);
  std::optional<std::string> bytes = storage_->get(storage_key);
  std::optional<StoredItem> item;
  if (bytes) {
    item = StoredItem::from_bytes(*bytes);
    if (!item) throw storage::StorageError("corrupt item in table " + table.name);
  }
  charge_item_read(resource, table, storage_key, item ? item->size() : 0, consistent, metering);
  return item;
}

Page Engine::read_range(const TableDefinition& table, const IndexDefinition* index,
                        std::string lower, std::string upper, const PageOptions& options,
                        const Metering& metering) const {
  std::optional<std::string> start;
  if (options.exclusive_start_key) {
    start = index ? index_entry_key(table, *index, *options.exclusive_start_key)
                  : item_key(table, *options.exclusive_start_key);
    // A position no entry can have: nothing follows it.
    if (!start) upper = lower;
  }
  if (start) {
    if (options.forward) {
      std::string next = after(*start);
      if (next > lower) lower = std::move(next);
    } else if (upper.empty() || *start < upper) {
      upper = std::move(*start);
    }
  }
  Page page;
  // A GSI is its own resource; an LSI's reads are the table's. The page is admitted at the
  // partition it starts in (a Query's partition key).
  const IndexDefinition* gsi = index && index->global ? index : nullptr;
  capacity::ResourceMeter* resource = meter(table, gsi ? gsi->id : 0, metering);
  const std::size_t space = index ? index_token_offset() : kItemTokenOffset;
  if (resource) {
    const std::string_view start = std::string_view(lower).substr(0, space + 8);
    admit(resource, table, index, start, capacity::Dir::kRead,
          (options.consistent ? 1000 : 500) * metering.factor, metering);
    // Reading nothing is charged to the partition the page starts in.
    page.by_partition.push_back(
        {start.size() == space + 8 ? codec::read_u64(start.substr(space)) : 0, 0, {}});
  }
  if (!upper.empty() && lower >= upper) {
    charge_page(resource, page, 0, options.consistent, metering);
    return page;
  }
  // Items are copied out as stored and measured without being built: a response renders
  // them from their binary form.
  bool corrupt = false, stopped = false;
  auto add = [&](std::string_view key, std::string_view value) {
    std::optional<StoredItem> item = StoredItem::from_bytes(value);
    if (!item) {
      corrupt = true;
      return false;
    }
    if (resource && key.size() >= space + 8) {
      const std::uint64_t token = codec::read_u64(key.substr(space));
      capacity::TokenBytes& last = page.by_partition.back();
      if (last.bytes == 0) {
        last.token = token;  // the start's placeholder
        last.key = key.substr(space + 8);
      } else if (last.token != token) {
        page.by_partition.push_back({token, 0, std::string(key.substr(space + 8))});
      }
      page.by_partition.back().bytes += item->size();
    }
    page.bytes_read += item->size();
    page.items.push_back(std::move(*item));
    stopped = (options.limit && page.items.size() >= options.limit) ||
              page.bytes_read >= options.max_bytes;
    return !stopped;
  };
  storage_->visit_range(std::move(lower), std::move(upper), options.forward, add);
  if (corrupt) throw storage::StorageError("corrupt item in table " + table.name);
  charge_page(resource, page, page.bytes_read, options.consistent, metering,
              key_cutter(table, index));
  if (stopped) {
    const Item last = page.items.back().decode();
    page.last_evaluated_key =
        index ? index_entry_position(table, *index, last) : key_of_item(table, last);
  }
  return page;
}

namespace {

// [lower, upper) of the keys under `prefix` whose next encoded value satisfies `sort`.
std::pair<std::string, std::string> sort_range(const std::string& prefix,
                                               const SortCondition& sort) {
  std::string lower = prefix, upper = codec::prefix_end(prefix);
  auto bound = [&](const AttributeValue& v) {
    std::string key = prefix;
    codec::append_key_value(&key, v);
    return key;
  };
  // Keys under a bound continue with more components (index entries end with the table
  // key), so "after every key starting with enc(v)" is prefix_end, not enc(v) + '\0'.
  using Op = SortCondition::Op;
  switch (sort.op) {
    case Op::kNone:
      break;
    case Op::kEq:
      lower = bound(sort.value);
      upper = codec::prefix_end(lower);
      break;
    case Op::kLt:
      upper = bound(sort.value);
      break;
    case Op::kLe:
      upper = codec::prefix_end(bound(sort.value));
      break;
    case Op::kGt:
      lower = codec::prefix_end(bound(sort.value));
      break;
    case Op::kGe:
      lower = bound(sort.value);
      break;
    case Op::kBetween:
      lower = bound(sort.value);
      upper = codec::prefix_end(bound(sort.value2));
      break;
    case Op::kBeginsWith:
      lower = prefix + begins_with_prefix(sort.value);
      upper = codec::prefix_end(lower);
      break;
  }
  return {std::move(lower), std::move(upper)};
}

}  // namespace

Page Engine::query(const TableDefinition& table, const AttributeValue& partition,
                   const SortCondition& sort, const PageOptions& options,
                   const Metering& metering) const {
  auto [lower, upper] = sort_range(codec::item_key(table.id, partition, nullptr), sort);
  return read_range(table, nullptr, std::move(lower), std::move(upper), options, metering);
}

Page Engine::query_index(const TableDefinition& table, const IndexDefinition& index,
                         const std::vector<AttributeValue>& hash,
                         const std::vector<AttributeValue>& range_equal, const SortCondition& sort,
                         const PageOptions& options, const Metering& metering) const {
  auto [lower, upper] = sort_range(index_partition_prefix(table, index, hash, range_equal), sort);
  return read_range(table, &index, std::move(lower), std::move(upper), options, metering);
}

namespace {

// Segment i of N covers tokens t with i·2⁶⁴ <= t·N < (i+1)·2⁶⁴, the rule segment_of
// applies, so its first token is ceil(i·2⁶⁴/N).
std::uint64_t token_start(std::uint32_t i, std::uint32_t total_segments) {
  return static_cast<std::uint64_t>(
      ((static_cast<unsigned __int128>(i) << 64) + total_segments - 1) / total_segments);
}

std::pair<std::string, std::string> segment_range(const std::string& space, std::uint32_t segment,
                                                  std::uint32_t total_segments) {
  std::string lower = space, upper = codec::prefix_end(space);
  if (segment > 0) codec::append_u64(&lower, token_start(segment, total_segments));
  if (segment + 1 < total_segments) {
    upper = space;
    codec::append_u64(&upper, token_start(segment + 1, total_segments));
  }
  return {std::move(lower), std::move(upper)};
}

}  // namespace

Page Engine::scan(const TableDefinition& table, std::uint32_t segment, std::uint32_t total_segments,
                  const PageOptions& options, const Metering& metering) const {
  auto [lower, upper] =
      segment_range(codec::space_prefix(table.id, codec::Space::kItems), segment, total_segments);
  return read_range(table, nullptr, std::move(lower), std::move(upper), options, metering);
}

Page Engine::scan_index(const TableDefinition& table, const IndexDefinition& index,
                        std::uint32_t segment, std::uint32_t total_segments,
                        const PageOptions& options, const Metering& metering) const {
  auto [lower, upper] = segment_range(index_prefix(table, index.id), segment, total_segments);
  return read_range(table, &index, std::move(lower), std::move(upper), options, metering);
}

std::uint32_t Engine::segment_of(const TableDefinition& table, const Item& key,
                                 std::uint32_t total_segments, const IndexDefinition* index) const {
  std::uint64_t token = 0;
  if (index) {
    std::optional<std::string> entry = index_entry_key(table, *index, key);
    if (!entry) return total_segments;  // no segment holds it
    token = codec::read_u64(std::string_view(*entry).substr(index_token_offset()));
  } else {
    const std::string storage_key = item_key(table, key);
    const std::size_t token_at = codec::space_prefix(table.id, codec::Space::kItems).size();
    token = codec::read_u64(std::string_view(storage_key).substr(token_at));
  }
  return static_cast<std::uint32_t>((static_cast<unsigned __int128>(token) * total_segments) >> 64);
}

bool Engine::walk_items(const std::string& table_name, std::uint32_t table_id,
                        const ItemVisitor& visit, std::size_t workers, std::string from,
                        const std::function<void(const std::string& next)>& page_done) {
  const std::string space = codec::space_prefix(table_id, codec::Space::kItems);
  std::string next = from > space ? std::move(from) : space;
  const std::string end = codec::prefix_end(space);
  for (;;) {
    // The table may have been changed or replaced since the last page.
    TablePtr table = catalog_.find(table_name);
    if (stopping_ || !table || table->id != table_id) return false;
    // Read keys in bounded pages; each item is re-read under its lock. A write that takes
    // the lock after this re-read sees the latest definition and acts on it itself.
    std::vector<std::string> keys;
    {
      auto it = storage_->iterator(next, end);
      for (it->seek_to_first(); it->valid() && keys.size() < 1000; it->next()) {
        keys.emplace_back(it->key());
      }
    }
    if (keys.empty()) return true;
    if (!visit_page(*table, keys, visit, workers)) return false;
    next = after(keys.back());
    if (page_done) page_done(next);
  }
}

bool Engine::visit_page(const TableDefinition& table, const std::vector<std::string>& keys,
                        const ItemVisitor& visit, std::size_t workers) {
  std::atomic<std::size_t> next{0};
  std::atomic<bool> stopped{false};
  Mutex failure_mutex;
  std::exception_ptr failure;
  auto work = [&] {
    try {
      for (std::size_t i = next++; i < keys.size() && !stopped; i = next++) {
        auto guard = locks_.lock(keys[i]);
        std::optional<Item> item = read_current(table, keys[i]);
        if (item && !visit(table, keys[i], *item)) stopped = true;
      }
    } catch (...) {
      MutexLock lock(failure_mutex);
      if (!failure) failure = std::current_exception();
      stopped = true;
    }
  };
  std::vector<std::thread> threads;
  for (std::size_t n = 1; n < std::min(workers, keys.size()); ++n) threads.emplace_back(work);
  work();
  for (std::thread& thread : threads) thread.join();
  if (failure) std::rethrow_exception(failure);
  return !stopped;
}

bool Engine::backfill(const std::string& table_name, std::uint32_t index_id) {
  TablePtr table = catalog_.find(table_name);
  if (!table) return false;
  // On shared storage (RADOS) each item costs several round trips to the cluster, one after
  // the other: items are backfilled by several threads at once there. A local back end
  // answers in microseconds, and one thread keeps it busy.
  const std::size_t workers = storage_->shared() ? kSharedBackfillWorkers : 1;
  return walk_items(
      table_name, table->id,
      [&](const TableDefinition& t, const std::string& key, const Item& walked) {
        const IndexDefinition* index = nullptr;
        for (const auto& i : t.global_indexes) {
          if (i.id == index_id) index = &i;
        }
        if (!index) return false;  // dropped meanwhile
        Item item = walked;
        for (int attempt = 0;; ++attempt) {
          std::optional<std::string> entry = index_entry_key(t, *index, item);
          if (!entry) return true;  // not indexed
          Item projected = project_entry(*index, item);
          const std::size_t size = item_size(projected);
          std::string entry_value = codec::encode_stored_item(projected, size);
          const std::optional<std::string> there = storage_->get(*entry);
          if (there && (!storage_->shared() || *there == entry_value))
            return true;  // a write put it
          // Another process sharing the storage may write the item meanwhile
          // (its write then maintains the entry): the entry is written only
          // while the item is as read. The item is stored again in other bytes
          // (restamped): a write of it in another process that read it before,
          // and saw no entry to remove, then fails its guard and reads again;
          // one that reads it after waits until the entry is in place (the
          // storage holds the item meanwhile). So the entry never outlives the
          // value it was made from.
          storage::WriteBatch batch;
          batch.partition(key);
          if (storage_->shared()) {
            std::optional<std::string> stored = storage_->get(key);
            Item current;
            const auto form = stored ? codec::split_stored_item(*stored) : std::nullopt;
            if (!form || !codec::decode_item(form->item, &current)) return true;  // deleted
            if (current != item) {
              // Written since the walk read it: decided again from what is stored.
              item = std::move(current);
              continue;
            }
            std::optional<std::string> restamped = codec::restamp_stored_item(*stored);
            batch.put(key, restamped ? std::move(*restamped)
                                     : codec::encode_stored_item(item, item_size(item)));
            batch.expect(key, std::move(stored));
          }
          // An entry there with other attributes (written by a front end that loaded the
          // index just before a write with the old definition, which did not know it,
          // changed the item) is replaced.
          std::int64_t replaced = 0;
          if (there) {
            Item old_entry;
            const auto form = codec::split_stored_item(*there);
            if (form && codec::decode_item(form->item, &old_entry)) {
              replaced = static_cast<std::int64_t>(item_size(old_entry));
            }
          } else {
            batch.add_counter(index_counter_key(t, index->id, "count"), 1);
          }
          batch.add_counter(index_counter_key(t, index->id, "bytes"),
                            static_cast<std::int64_t>(size) - replaced);
          batch.maintain_put(*entry, std::move(entry_value));
          try {
            storage_->write(batch);
          } catch (const storage::WriteConflict&) {
            // Written meanwhile, or held: by a write of the index's definition (which
            // maintains the entry), or by one made with the definition before it (a
            // transaction prepared before the change, a write whose other entries are
            // still being applied), which does not. Looked at again once it is done.
            if (attempt >= 1000) {
              spdlog::warn("the backfill of an index of table {} left an item that stays held",
                           t.name);
              return true;
            }
            conflict_backoff(std::min(attempt, 6));
            std::optional<std::string> stored = storage_->get(key);
            const auto form = stored ? codec::split_stored_item(*stored) : std::nullopt;
            Item current;
            if (!form || !codec::decode_item(form->item, &current)) return true;  // deleted
            item = std::move(current);
            continue;
          }
          // The backfill charges nothing, but fills the index's partitions.
          WriteResult added;
          added.index_units.push_back(
              index_write(*index, 0, std::nullopt, 0, std::move(*entry), size));
          charge_write(t, {}, added, Metering{});
          return true;
        }
      },
      workers);
}

void Engine::drop_index(const TableDefinition& table, std::uint32_t index_id) {
  {
    storage::WriteBatch batch;
    batch.del(index_counter_key(table, index_id, "count"));
    batch.del(index_counter_key(table, index_id, "bytes"));
    storage_->write(batch);
  }
  const std::string prefix = index_prefix(table, index_id);
  storage_->erase_range(prefix, codec::prefix_end(prefix));
}

}  // namespace kumo::engine
