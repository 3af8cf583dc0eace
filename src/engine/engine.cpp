#include "engine/engine.h"

#include <pthread.h>
#include <spdlog/spdlog.h>

#include <algorithm>

#include "codec/item_codec.h"
#include "codec/key_codec.h"
#include "engine/index_keys.h"
#include "model/api_error.h"
#include "model/capacity.h"

namespace kumo::engine {

namespace {

// DynamoDB counts 100 bytes of overhead per item in TableSizeBytes and IndexSizeBytes.
constexpr std::int64_t kItemOverheadBytes = 100;

}  // namespace

Engine::Engine(std::unique_ptr<storage::Storage> storage, EngineOptions options)
    : storage_(std::move(storage)),
      options_(options),
      own_clock_(options.clock ? nullptr : std::make_unique<SystemClock>()),
      clock_(options.clock ? options.clock : own_clock_.get()),
      catalog_(*storage_),
      streams_(*storage_) {
  bool more = false, ttl = false;
  for (const auto& name : catalog_.list("", SIZE_MAX, &more)) {
    TablePtr table = catalog_.find(name);
    for (const auto& index : table->global_indexes) {
      if (index.backfilling) start_backfill(name, index.id);
    }
    if (table->ttl_enabled && table->ttl_scheduling) start_ttl_scheduling(name);
    ttl = ttl || table->ttl_enabled;
  }
  bool streams = false;
  {
    ChangeStreams::Guard guard(streams_);
    streams = !streams_.empty(guard);
  }
  if (ttl || streams) start_maintenance();
}

double Engine::advance_clock(double seconds) {
  if (!options_.manual_clock) throw std::logic_error("the clock is not manual");
  MutexLock lock(clock_mutex_);
  constexpr std::int64_t kSecond = 1'000'000'000;
  const std::int64_t before = options_.manual_clock->now_ns();
  const std::int64_t after =
      options_.manual_clock->advance(static_cast<std::int64_t>(seconds * 1e9 + 0.5));
  if (options_.capacity) {
    // Every whole second crossed is closed in order; beyond an hour, the earlier seconds
    // were idle as far as anything kept is concerned, so only the last hour is ticked.
    std::int64_t first = before / kSecond + 1;
    const std::int64_t last = after / kSecond;
    if (last - first > 3600) first = last - 3600;
    for (std::int64_t s = first; s <= last; ++s) options_.capacity->tick(s * kSecond);
  }
  return static_cast<double>(after) / 1e9;
}

void Engine::start_maintenance() {
  if (!options_.background_maintenance) return;
  std::call_once(maintenance_started_, [this] {
    maintenance_ = std::thread([this] {
      pthread_setname_np(pthread_self(), "kumo-maintain");
      maintain();
    });
  });
}

Engine::~Engine() {
  {
    MutexLock lock(maintenance_mutex_);
    stopping_ = true;
  }
  maintenance_wake_.notify_all();
  if (maintenance_.joinable()) maintenance_.join();
  MutexLock lock(workers_mutex_);
  for (auto& worker : workers_) worker.thread.join();
}

void Engine::start_worker(const char* name, std::function<void()> work) {
  MutexLock lock(workers_mutex_);
  workers_.remove_if([](Worker& worker) {
    if (!worker.done.load(std::memory_order_acquire)) return false;
    worker.thread.join();
    return true;
  });
  Worker& worker = workers_.emplace_back();
  worker.thread = std::thread([name, work = std::move(work), &done = worker.done] {
    pthread_setname_np(pthread_self(), name);
    work();
    done.store(true, std::memory_order_release);
  });
}

TablePtr Engine::current(const TableDefinition& table) const {
  TablePtr latest = catalog_.find(table.name);
  return latest && latest->id == table.id ? latest : nullptr;
}

void Engine::start_backfill(const std::string& table_name, std::uint32_t index_id) {
  start_worker("kumo-backfill", [this, table_name, index_id] {
    try {
      if (!backfill(table_name, index_id)) return;
      catalog_.update(table_name, [&](TableDefinition& t) {
        for (auto& index : t.global_indexes) {
          if (index.id == index_id) index.backfilling = false;
        }
      });
    } catch (const std::exception& e) {
      // The table was deleted meanwhile, or storage failed: the index stays CREATING and
      // the backfill resumes at the next start.
      spdlog::warn("backfill of index {} of table {} stopped: {}", index_id, table_name, e.what());
    }
  });
}

std::string Engine::item_key(const TableDefinition& table, const Item& item_or_key) const {
  const AttributeValue& partition = item_or_key.find(table.key.hash.name)->second;
  const AttributeValue* sort = nullptr;
  if (table.key.range) sort = &item_or_key.find(table.key.range->name)->second;
  return codec::item_key(table.id, partition, sort);
}

namespace {

// The item stored as `stored`, and its size.
Item decode_stored(const TableDefinition& table, std::string_view stored, std::size_t* size) {
  const std::optional<codec::StoredForm> form = codec::split_stored_item(stored);
  Item item;
  if (!form || !codec::decode_item(form->item, &item)) {
    throw storage::StorageError("corrupt item in table " + table.name);
  }
  if (size) *size = form->size ? *form->size : item_size(item);
  return item;
}

}  // namespace

std::optional<Item> Engine::read_current(const TableDefinition& table,
                                         const std::string& storage_key,
                                         const storage::Snapshot* snapshot) const {
  std::optional<std::string> stored = storage_->get(storage_key, snapshot);
  if (!stored) return std::nullopt;
  return decode_stored(table, *stored, nullptr);
}

void Engine::read_old(const TableDefinition& table, const std::string& storage_key,
                      WriteResult& result) const {
  result.old_item.reset();
  result.old_size = 0;
  std::optional<std::string> stored = storage_->get(storage_key);
  if (stored) result.old_item = decode_stored(table, *stored, &result.old_size);
}

Engine::Change Engine::add_write(const TableDefinition& table, const std::string& storage_key,
                                 WriteResult& result, storage::WriteBatch* batch) const {
  if (result.new_item) {
    batch->put(storage_key, codec::encode_stored_item(*result.new_item, result.new_size));
  } else {
    batch->del(storage_key);
  }
  TablePtr latest = current(table);
  const TableDefinition& now = latest ? *latest : table;
  update_indexes(now, result, batch);
  if (!now.local_indexes.empty()) add_collection_size(now, result, batch);
  std::string ttl_entry = update_ttl_schedule(now, storage_key, result, batch);
  const int count_delta = (result.new_item ? 1 : 0) - (result.old_item ? 1 : 0);
  if (count_delta != 0) batch->add_counter(table_counter_key(table.id, "count"), count_delta);
  batch->add_counter(
      table_counter_key(table.id, "bytes"),
      static_cast<std::int64_t>(result.new_size) - static_cast<std::int64_t>(result.old_size));
  return Change{std::move(latest), &result, false, std::move(ttl_entry)};
}

void Engine::commit(storage::WriteBatch& batch, const std::vector<Change>& changes) {
  const bool streamed = std::any_of(changes.begin(), changes.end(), [](const Change& c) {
    return c.table && c.table->stream && c.table->stream->enabled;
  });
  if (!streamed) {
    storage_->write(batch);
  } else {
    // Under the streams' lock the stream is surely open or surely closed, and sequence
    // numbers are handed out in commit order.
    ChangeStreams::Guard guard(streams_);
    for (const Change& c : changes) {
      if (!c.table) continue;
      if (const StreamInfo* stream = streams_.active(guard, c.table->id)) {
        streams_.add_record(guard, *stream, c.table->key, c.result->old_item, c.result->new_item,
                            c.by_service, &batch);
      }
    }
    storage_->write(batch);
  }
  // After the commit: a pass that begins later reads the entry anyway.
  for (const Change& c : changes) {
    if (c.table && !c.ttl_entry.empty()) note_ttl_entry(c.table->id, c.ttl_entry);
  }
}

WriteResult Engine::write_item(const TableDefinition& table, const std::string& storage_key,
                               const ItemMutation& mutation) {
  WriteResult result;
  auto guard = locks_.lock(storage_key);
  read_old(table, storage_key, result);
  result.new_item = mutation(result.old_item);
  if (!result.old_item && !result.new_item) return result;  // deleting nothing
  if (result.new_item) result.new_size = item_size(*result.new_item);
  storage::WriteBatch batch;
  commit(batch, {add_write(table, storage_key, result, &batch)});
  return result;
}

bool Engine::transact_write(const std::vector<TransactWrite>& writes,
                            std::vector<WriteResult>* results,
                            std::vector<std::exception_ptr>* failures) {
  std::vector<std::string> keys;
  for (const auto& w : writes) keys.push_back(w.storage_key);
  auto guards = locks_.lock_all(keys);
  results->assign(writes.size(), WriteResult{});
  failures->assign(writes.size(), nullptr);
  bool ok = true;
  for (std::size_t i = 0; i < writes.size(); ++i) {
    const TransactWrite& w = writes[i];
    WriteResult& result = (*results)[i];
    try {
      read_old(*w.table, keys[i], result);
      if (w.check) w.check(result.old_item);
      if (w.check_only) {
        result.new_item = result.old_item;
        result.new_size = result.old_size;
      } else {
        result.new_item = w.mutation(result.old_item);
        if (result.new_item) result.new_size = item_size(*result.new_item);
      }
    } catch (...) {
      (*failures)[i] = std::current_exception();
      ok = false;
    }
  }
  if (!ok) return false;
  storage::WriteBatch batch;
  std::vector<Change> changes;
  for (std::size_t i = 0; i < writes.size(); ++i) {
    WriteResult& result = (*results)[i];
    if (writes[i].check_only || (!result.old_item && !result.new_item)) continue;
    changes.push_back(add_write(*writes[i].table, keys[i], result, &batch));
  }
  if (!batch.empty()) commit(batch, changes);
  return true;
}

std::vector<std::optional<Item>> Engine::transact_get(const std::vector<TransactGet>& gets,
                                                      std::size_t max_bytes) const {
  auto snapshot = storage_->snapshot();
  std::vector<std::optional<Item>> items;
  std::size_t total = 0;
  for (const auto& g : gets) {
    items.push_back(read_current(*g.table, item_key(*g.table, g.key), snapshot.get()));
    if (items.back()) total += item_size(*items.back());
    if (total > max_bytes) break;
  }
  return items;
}

std::int64_t Engine::collection_bytes(const TableDefinition& table,
                                      const std::optional<Item>& item) const {
  if (!item) return 0;
  std::int64_t bytes = static_cast<std::int64_t>(item_size(*item));
  for (const auto& index : table.local_indexes) {
    if (index_entry_key(table, index, *item)) {
      bytes += static_cast<std::int64_t>(item_size(project_entry(index, *item)));
    }
  }
  return bytes;
}

void Engine::add_collection_size(const TableDefinition& table, const WriteResult& result,
                                 storage::WriteBatch* batch) const {
  const Item& any = result.new_item ? *result.new_item : *result.old_item;
  std::string key = table_counter_key(table.id, "collection");
  codec::append_key_value(&key, any.at(table.key.hash.name));
  const std::int64_t delta =
      collection_bytes(table, result.new_item) - collection_bytes(table, result.old_item);
  // DynamoDB refuses a write that would grow a full item collection; shrinking one is
  // always allowed.
  if (delta > 0 && storage_->get_counter(key) + delta >
                       static_cast<std::int64_t>(options_.item_collection_limit)) {
    throw ApiError::item_collection_size_limit_exceeded();
  }
  if (delta != 0) batch->add_counter(std::move(key), delta);
}

void Engine::update_indexes(const TableDefinition& table, WriteResult& result,
                            storage::WriteBatch* batch) const {
  const std::optional<Item>& old_item = result.old_item;
  const std::optional<Item>& new_item = result.new_item;
  for (const auto* indexes : {&table.local_indexes, &table.global_indexes}) {
    for (const auto& index : *indexes) {
      std::optional<std::string> old_key, new_key;
      if (old_item) old_key = index_entry_key(table, index, *old_item);
      // While an index is backfilling, an old item may not have its entry yet.
      if (old_key && index.backfilling && !storage_->get(*old_key)) old_key.reset();
      if (new_item) new_key = index_entry_key(table, index, *new_item);
      if (!old_key && !new_key) continue;
      std::optional<Item> old_entry, new_entry;
      if (old_key) old_entry = project_entry(index, *old_item);
      if (new_key) new_entry = project_entry(index, *new_item);
      const std::size_t old_size = old_entry ? item_size(*old_entry) : 0;
      const std::size_t new_size = new_entry ? item_size(*new_entry) : 0;
      // Index write units: an entry added or removed, or rewritten with changed projected
      // attributes, is one write of its size; a changed index key is a delete plus a put;
      // an unchanged entry costs nothing.
      double units = 0;
      if (old_key && new_key && *old_key != *new_key) {
        units = write_capacity_units(old_size) + write_capacity_units(new_size);
      } else if (old_key && new_key) {
        if (!(*old_entry == *new_entry)) units = write_capacity_units(new_size);
      } else {
        units = write_capacity_units(old_key ? old_size : new_size);
      }
      if (units > 0) result.index_units.push_back({index.name, index.global, units});
      // A changed index key moves the entry: delete the old one, put the new one.
      if (old_key && old_key != new_key) batch->del(*old_key);
      if (new_key && (!old_key || units > 0))
        batch->put(*new_key, codec::encode_stored_item(*new_entry, new_size));
      const int count_delta = (new_key ? 1 : 0) - (old_key ? 1 : 0);
      const std::int64_t size_delta =
          static_cast<std::int64_t>(new_size) - static_cast<std::int64_t>(old_size);
      if (count_delta) batch->add_counter(index_counter_key(table, index.id, "count"), count_delta);
      if (size_delta) batch->add_counter(index_counter_key(table, index.id, "bytes"), size_delta);
    }
  }
}

WriteResult Engine::put_item(const TableDefinition& table, Item item) {
  return write_item(table, item_key(table, item),
                    [&](const std::optional<Item>&) { return std::move(item); });
}

std::optional<Item> Engine::get_item(const TableDefinition& table, const Item& key) const {
  return read_current(table, item_key(table, key));
}

WriteResult Engine::delete_item(const TableDefinition& table, const Item& key) {
  return write_item(table, item_key(table, key),
                    [](const std::optional<Item>&) { return std::nullopt; });
}

std::int64_t Engine::item_count(const TableDefinition& table) const {
  return storage_->get_counter(table_counter_key(table.id, "count"));
}

std::int64_t Engine::table_size_bytes(const TableDefinition& table) const {
  return storage_->get_counter(table_counter_key(table.id, "bytes")) +
         kItemOverheadBytes * item_count(table);
}

std::int64_t Engine::index_item_count(const TableDefinition& table,
                                      const IndexDefinition& index) const {
  return storage_->get_counter(index_counter_key(table, index.id, "count"));
}

std::int64_t Engine::index_size_bytes(const TableDefinition& table,
                                      const IndexDefinition& index) const {
  return storage_->get_counter(index_counter_key(table, index.id, "bytes")) +
         kItemOverheadBytes * index_item_count(table, index);
}

}  // namespace kumo::engine
