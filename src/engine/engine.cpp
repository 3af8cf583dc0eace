#include "engine/engine.h"

#include <pthread.h>
#include <spdlog/spdlog.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <random>
#include <set>
#include <thread>
#include <tuple>

#include "codec/item_codec.h"
#include "codec/key_codec.h"
#include "engine/index_keys.h"
#include "engine/shared_transaction_tokens.h"
#include "model/api_error.h"
#include "model/capacity.h"

namespace kumo::engine {

namespace {}  // namespace

Engine::Engine(std::unique_ptr<storage::Storage> storage, EngineOptions options)
    : storage_(std::move(storage)),
      options_(options),
      own_clock_(options.clock ? nullptr : std::make_unique<SystemClock>()),
      clock_(options.clock ? options.clock : own_clock_.get()),
      catalog_(*storage_),
      streams_(*storage_, *clock_, options_.stream_retention) {
  storage_->set_clock(clock_);
  if (storage_->shared()) {
    tokens_ = std::make_unique<SharedTransactionTokens>(*storage_, *clock_);
  } else {
    tokens_ = std::make_unique<LocalTransactionTokens>();
  }
  storage_->set_split_listener(
      [this](std::uint32_t table, std::uint64_t token, std::uint64_t last) {
        // (The split is among the storage's unnoted splits, where split_shards finds it.)
        (void)table;
        (void)token;
        (void)last;
        shard_splits_due_.store(true, std::memory_order_release);
        // Split by the writer after its commit, or else soon by the maintenance thread: a
        // split that another process's takeover (or this one's start) finished comes with
        // no write, and the new partition's records are read only through the shard's
        // children.
        { MutexLock wake(maintenance_mutex_); }
        maintenance_wake_.notify_all();
      });
  catalog_.set_verify([this](const TableDefinition* before, const TableDefinition& after,
                             const std::vector<const TableDefinition*>& others) {
    verify_account_quota(before, after, others);
  });
  // Tables stored before partitions were kept get their initial maps, stored with their
  // next change.
  auto prepare = [this](TableDefinition& t) {
    fit_partitions(t, false);
    attach_meters(t);
  };
  catalog_.amend_loaded(prepare);
  catalog_.set_prepare_loaded(prepare);
  // (A catalog change retried may hold the streams' lock: the streams are not loaded then.)
  catalog_.set_reload([this] { reload_catalog(false); });
  if (const char* fault = std::getenv("KUMO_TTL_SCAN_FAULT")) scan_fault_ = fault;
  bool more = false, ttl = false, pitr = false;
  for (const auto& name : catalog_.list("", SIZE_MAX, &more)) {
    TablePtr table = catalog_.find(name);
    if (table->ttl_enabled && table->ttl_scheduling) start_ttl_scheduling(name);
    ttl = ttl || table->ttl_enabled;
    pitr = pitr || table->pitr;
  }
  resume_backfills();
  if (const char* fault = std::getenv("KUMO_BACKUP_FAULT")) backup_fault_ = fault;
  // A base that a stop cut short is finished in the background, as after an enabling.
  resume_pitr_bases();
  // (Before the drops: a dropped table's data stays while a backup still copies it.)
  resume_backup_jobs();
  resume_drops();
  // The splits this start finished (of a process that stopped midway) split their shards
  // before this process serves.
  split_shards();
  bool streams = false;
  {
    ChangeStreams::Guard guard(streams_);
    streams = !streams_.empty(guard);
  }
  // (Shared tokens are removed by the maintenance thread once they expired.)
  // (SYSTEM backups expire through the maintenance pass.)
  if (!pitr) {
    for (const Backup& backup : list_backups()) pitr = pitr || backup.type == BackupType::kSystem;
  }
  if (ttl || streams || pitr || storage_->shared()) start_maintenance();
  // Other front ends sharing the storage announce their changes of the catalog.
  storage_->set_catalog_listener([this] { reload_catalog(); });
  if (!capacity()) return;
  capacity()->set_item_count_source([this](std::uint32_t id) -> std::optional<std::int64_t> {
    TablePtr table = catalog_.find_id(id);
    if (!table) return std::nullopt;
    return item_count(*table);
  });
  if (clock_->manual()) {
    walk_partition_sizes();
  } else {
    capacity_thread_ = std::thread([this] { run_capacity_clock(); });
  }
}

void Engine::reload_catalog(bool streams) {
  // A table that changed keeps its meters (what it consumed, its partitions' heat); a new
  // one gets its own.
  std::unordered_map<std::uint32_t, std::shared_ptr<capacity::TableMeters>> meters;
  bool more = false;
  for (const auto& name : catalog_.list("", SIZE_MAX, &more)) {
    if (TablePtr table = catalog_.find(name); table && table->meters) {
      meters.emplace(table->id, table->meters);
    }
  }
  const std::vector<Catalog::Change> changes = catalog_.reload([&](TableDefinition& t) {
    fit_partitions(t, false);
    auto it = meters.find(t.id);
    if (it != meters.end()) {
      t.meters = it->second;
    } else {
      attach_meters(t);
    }
  });
  for (const Catalog::Change& change : changes) {
    if (!change.after) {
      if (capacity() && change.before->meters) capacity()->detach(*change.before->meters);
      reset_ttl_progress(change.before->id);
      continue;
    }
    if (change.before) configure_meters(change.after);
    if (change.after->ttl_enabled || change.after->pitr) start_maintenance();
  }
  // The streams too: another front end opened, closed, split or trimmed one (each such
  // change is announced after it is stored).
  if (!streams) return;
  streams_.reload();
  ChangeStreams::Guard guard(streams_);
  if (!streams_.empty(guard)) start_maintenance();
}

TablePtr Engine::find_table(std::string_view name) {
  TablePtr table = catalog_.find(name);
  if (table || !storage_->shared() || !catalog_.stale()) return table;
  reload_catalog();
  return catalog_.find(name);
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
  storage_->set_catalog_listener({});
  {
    MutexLock lock(maintenance_mutex_);
    stopping_ = true;
  }
  maintenance_wake_.notify_all();
  if (maintenance_.joinable()) maintenance_.join();
  if (capacity_thread_.joinable()) capacity_thread_.join();
  if (capacity()) capacity()->set_item_count_source({});
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

void lower_job_priority() {
  // Nice 10: about a tenth of a request thread's share of a busy core, all of an idle one.
  constexpr int kJobNice = 10;
  if (::setpriority(PRIO_PROCESS, static_cast<id_t>(::syscall(SYS_gettid)), kJobNice) != 0) {
    spdlog::debug("a job's CPU priority could not be lowered");
  }
}

void Engine::pace_bulk_writes() const {
  constexpr auto kStep = std::chrono::milliseconds(5);
  constexpr int kSteps = 200;
  for (int i = 0; i < kSteps && !stopping_ && storage_->behind(); ++i) {
    std::this_thread::sleep_for(kStep);
  }
}

TablePtr Engine::current(const TableDefinition& table) const {
  TablePtr latest = catalog_.find(table.name);
  return latest && latest->id == table.id ? latest : nullptr;
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

std::optional<std::string> Engine::read_old(const TableDefinition& table,
                                            const std::string& storage_key, WriteResult& result,
                                            std::string* version) const {
  result.old_item.reset();
  result.old_size = 0;
  std::optional<std::string> stored = version
                                          ? storage_->read_for_write_versioned(storage_key, version)
                                          : storage_->read_for_write(storage_key);
  if (stored) result.old_item = decode_stored(table, *stored, &result.old_size);
  return stored;
}

bool Engine::confirmed_in_time(std::int64_t read_at) const {
  const std::int64_t window = storage_->confirm_window_ns();
  return window == 0 || clock_->now_ns() - read_at <= window;
}

Engine::Change Engine::add_write(const TableDefinition& table, const std::string& storage_key,
                                 WriteResult& result, storage::WriteBatch* batch) const {
  batch->partition(storage_key);
  if (result.new_item) {
    batch->put(storage_key, codec::encode_stored_item(*result.new_item, result.new_size));
  } else {
    batch->del(storage_key);
  }
  TablePtr latest = current(table);
  const TableDefinition& now = latest ? *latest : table;
  // A storage shared with other front ends refuses the write if the table's definition
  // changed since (storage::DefinitionChanged): what follows is made with this one.
  batch->definition(now.definition_version);
  update_indexes(now, result, batch);
  if (!now.local_indexes.empty()) add_collection_size(now, result, batch);
  std::string ttl_entry = update_ttl_schedule(now, storage_key, result, batch);
  if (now.pitr) add_pitr_record(now, storage_key, result, batch);
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
    // Under the streams' lock the stream is surely open or surely closed, and the records
    // get their sequence numbers; the batch is written after the lock is released, and
    // readers stop below its records until it is (ChangeStreams::horizon).
    std::vector<std::uint64_t> written;
    {
      ChangeStreams::Guard guard(streams_);
      for (const Change& c : changes) {
        if (!c.table) continue;
        if (const StreamInfo* stream = streams_.active(guard, c.table->id)) {
          streams_.add_record(guard, *stream, c.table->key, c.result->old_item, c.result->new_item,
                              c.by_service, &batch, &written);
        }
      }
    }
    struct Done {
      ChangeStreams& streams;
      const std::vector<std::uint64_t>& written;
      ~Done() { streams.done(written); }
    } done{streams_, written};
    storage_->write(batch);
  }
  if (shard_splits_due_.load(std::memory_order_acquire)) split_shards();
  // After the commit: a pass that begins later reads the entry anyway.
  for (const Change& c : changes) {
    if (c.table && !c.ttl_entry.empty()) note_ttl_entry(c.table->id, c.ttl_entry);
  }
}

void Engine::note_partition_split(std::uint32_t table_id, std::uint64_t token,
                                  std::optional<std::uint64_t> last) {
  bool split = false;
  {
    ChangeStreams::Guard guard(streams_);
    split = streams_.split(guard, table_id, token, clock_->now_ms(), last);
  }
  if (!split || !storage_->shared()) return;
  // Announced by the maintenance thread: the split comes from a write, which must not wait
  // for the other front ends' answers (a dead one's for seconds).
  {
    MutexLock wake(maintenance_mutex_);
    split_unannounced_ = true;
  }
  maintenance_wake_.notify_all();
}

void Engine::announce_streams() {
  // (Not while holding the streams' lock: another front end's listener may be waiting
  // for this one's answer to its own announcement, and this one's listener takes it.)
  if (storage_->shared()) storage_->notify_catalog();
}

void Engine::split_shards() {
  shard_splits_due_.store(false, std::memory_order_relaxed);
  MutexLock lock(shard_splits_mutex_);
  std::vector<storage::Storage::UnnotedSplit> splits;
  try {
    splits = storage_->unnoted_splits();
    if (splits.empty()) return;
    // In the order the splits were made, which is that of their last numbers: a range
    // split twice ends its shard at the first split's number. (Two splits with one number
    // make shards that read the same records either way.)
    std::sort(splits.begin(), splits.end(), [](const auto& a, const auto& b) {
      return std::tie(a.table, a.last, a.token) < std::tie(b.table, b.last, b.token);
    });
    // As the storage has them: another process may have opened, split or closed a stream
    // and not announced it yet.
    streams_.reload();
    for (const auto& s : splits) {
      note_partition_split(s.table, s.token, s.last);
      storage_->split_noted(s.table, s.token);
    }
  } catch (...) {
    // (Thrown by kumo's runtime: only `...` catches it here.) Still unnoted: split by a
    // later pass of a maintenance thread, this process's or another's.
    spdlog::warn("the stream shards of a partition split could not be split yet");
  }
}

namespace {

bool condition_failed(const std::exception_ptr& failure) {
  try {
    std::rethrow_exception(failure);
  } catch (const ApiError& e) {
    return e.code() == ApiError::Code::kConditionalCheckFailed;
  } catch (...) {
    return false;
  }
}

}  // namespace

namespace {
// Attempts of a write that meets another front end's transaction before it is refused.
constexpr int kTransactionConflictAttempts = 4;
// Attempts of a transaction whose items other front ends keep changing, or of a
// TransactGetItems whose items they keep changing between its reads and its check.
constexpr int kTransactionAttempts = 16;
}  // namespace

void Engine::redo_with_new_definition(const TableDefinition& table,
                                      const storage::DefinitionChanged& stale, int attempt) {
  // The catalog is stored before the partitions get the new version: loaded now, it has
  // the new definition (or no table).
  spdlog::info("a write of table {} was made with an old definition; made again ({})", table.name,
               stale.what());
  reload_catalog();
  if (!current(table)) throw ApiError::resource_not_found();
  // A write that keeps meeting newer definitions (a table changed again and again) ends.
  if (attempt + 1 >= 64) {
    throw ApiError::internal("The table's definition keeps changing; retry the request");
  }
}

void Engine::conflict_backoff(int attempt) {
  // Several front ends writing one hot item meet each other's writes; each retry reads the
  // item anew. A bounded number of attempts, each after a random wait of up to 1, 2, 4 ...
  // 64 ms, keeps a request from looping for ever behind a stream of writes.
  constexpr int kAttempts = 64;
  if (attempt + 1 >= kAttempts) {
    throw ApiError::internal("The item is being written by other requests; retry the request");
  }
  thread_local std::minstd_rand random(std::random_device{}());
  const int ceiling = 1 << std::min(attempt, 6);
  std::this_thread::sleep_for(
      std::chrono::microseconds(std::uniform_int_distribution<int>(0, ceiling * 1000)(random)));
}

WriteResult Engine::write_item(const TableDefinition& table, const std::string& storage_key,
                               const ItemMutation& mutation, const Metering& metering) {
  // A refused write never waits for the item's lock.
  admit(meter(table, 0, metering), table, nullptr, storage_key, capacity::Dir::kWrite,
        capacity::Milli{1000} * metering.factor, metering);
  WriteResult result;
  std::vector<Change> changes;
  for (int attempt = 0;; ++attempt) {
    try {
      auto guard = locks_.lock(storage_key);
      std::optional<std::string> stored = read_old(table, storage_key, result);
      try {
        result.new_item = mutation(result.old_item);
      } catch (...) {
        if (condition_failed(std::current_exception())) {
          charge_failed_condition(table, storage_key, result.old_size, metering);
        }
        throw;
      }
      if (result.old_item || result.new_item) {
        if (result.new_item) result.new_size = item_size(*result.new_item);
        storage::WriteBatch batch;
        changes.push_back(add_write(table, storage_key, result, &batch));
        // Applied only if no other process wrote the item since it was read.
        batch.expect(storage_key, std::move(stored));
        // Nothing is written when a GSI the write changes refuses it.
        admit_indexes(changes.back().table ? *changes.back().table : table, result, metering);
        commit(batch, changes);
      }
      break;
    } catch (const storage::TableGone&) {
      // Another front end dropped the table, and this one missed the announcement.
      reload_catalog();
      throw ApiError::resource_not_found();
    } catch (const storage::DefinitionChanged& stale) {
      // Another front end changed the table's definition after this write took it: the
      // write is made again with the new one.
      changes.clear();
      result = WriteResult{};
      redo_with_new_definition(table, stale, attempt);
    } catch (const storage::TransactionConflict&) {
      // A transaction of another front end holds the item. DynamoDB refuses such a write
      // (TransactionConflictException); a transaction holds its items for milliseconds, so
      // the write is tried a few times first.
      if (attempt + 1 >= kTransactionConflictAttempts) throw ApiError::transaction_conflict();
      changes.clear();
      result = WriteResult{};
      conflict_backoff(attempt);
    } catch (const storage::WriteConflict&) {
      // Another front end on the same storage wrote the item between the read and the
      // write: read it again and decide again.
      changes.clear();
      result = WriteResult{};
      conflict_backoff(attempt);
    }
  }
  // Deleting nothing still costs a write unit.
  const TableDefinition& written =
      !changes.empty() && changes.back().table ? *changes.back().table : table;
  charge_write(written, storage_key, result, metering);
  return result;
}

bool Engine::transact_write(const std::vector<TransactWrite>& writes,
                            std::vector<WriteResult>* results,
                            std::vector<std::exception_ptr>* failures, const Metering& metering,
                            const TransactionSeal& seal) {
  results->assign(writes.size(), WriteResult{});
  failures->assign(writes.size(), nullptr);
  bool ok = true;
  // Every action is admitted before any lock is taken.
  for (std::size_t i = 0; i < writes.size(); ++i) {
    try {
      admit(meter(*writes[i].table, 0, metering), *writes[i].table, nullptr, writes[i].storage_key,
            capacity::Dir::kWrite, capacity::Milli{1000} * metering.factor, metering);
    } catch (...) {
      (*failures)[i] = std::current_exception();
      ok = false;
    }
  }
  std::vector<std::string> keys;
  for (const auto& w : writes) keys.push_back(w.storage_key);
  auto guards = locks_.lock_all(keys);
  // A transaction that writes nothing (checks only, deletions of absent items) has its
  // items confirmed after the checks, by the versions they were read with (values changed
  // and changed back would pass a comparison of values).
  for (int attempt = 0;; ++attempt) {
    std::vector<std::optional<std::string>> stored(writes.size());
    std::vector<std::string> versions(writes.size());
    const std::int64_t read_at = clock_->now_ns();
    for (std::size_t i = 0; i < writes.size(); ++i) {
      const TransactWrite& w = writes[i];
      WriteResult& result = (*results)[i];
      if ((*failures)[i]) continue;
      try {
        stored[i] = read_old(*w.table, keys[i], result, &versions[i]);
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
        // A cancelled transaction is charged only its failed conditions.
        if (condition_failed((*failures)[i])) {
          charge_failed_condition(*w.table, keys[i], result.old_size, metering);
        }
      }
    }
    if (!ok) return false;
    storage::WriteBatch batch;
    std::vector<Change> changes;
    std::vector<const TableDefinition*> written(writes.size());
    for (std::size_t i = 0; i < writes.size(); ++i) {
      WriteResult& result = (*results)[i];
      written[i] = writes[i].table;
      // Every item the transaction read, written or only checked, must be as read when
      // it commits: other front ends sharing the storage may write it meanwhile.
      batch.expect(keys[i], stored[i]);
      if (writes[i].check_only || (!result.old_item && !result.new_item)) continue;
      changes.push_back(add_write(*writes[i].table, keys[i], result, &batch));
      if (changes.back().table) written[i] = changes.back().table.get();
      try {
        admit_indexes(*written[i], result, metering);
      } catch (...) {
        (*failures)[i] = std::current_exception();
        ok = false;
      }
    }
    if (!ok) return false;
    if (seal) seal(*results, &batch);
    try {
      if (!batch.empty()) {
        commit(batch, changes);
      } else if (writes.size() > 1) {
        // Only checks: the items must have been as read all at once.
        std::vector<storage::Storage::Read> reads;
        for (std::size_t i = 0; i < writes.size(); ++i) {
          reads.emplace_back(keys[i], stored[i], std::move(versions[i]));
        }
        if (!storage_->confirm_reads(reads) || !confirmed_in_time(read_at)) {
          throw storage::WriteConflict("an item changed");
        }
      }
    } catch (const storage::TableGone&) {
      reload_catalog();
      throw ApiError::resource_not_found();
    } catch (const storage::DefinitionChanged& stale) {
      // A table's definition changed after the transaction took it: made again with the
      // new one.
      *results = std::vector<WriteResult>(writes.size());
      redo_with_new_definition(*writes.front().table, stale, attempt);
      for (const TransactWrite& w : writes) {
        if (!current(*w.table)) throw ApiError::resource_not_found();
      }
      continue;
    } catch (const storage::TransactionConflict& conflict) {
      // Another front end's transaction holds some of the items: DynamoDB cancels the
      // transaction, with the reason TransactionConflict on each of them. A transaction
      // holds its items for milliseconds, so it is tried a few times first, after random
      // waits (two that meet each other both let go, and would meet again at once).
      if (attempt + 1 < kTransactionConflictAttempts) {
        *results = std::vector<WriteResult>(writes.size());
        conflict_backoff(attempt);
        continue;
      }
      const std::set<std::string> held(conflict.keys.begin(), conflict.keys.end());
      for (std::size_t i = 0; i < writes.size(); ++i) {
        if (held.count(keys[i])) {
          (*failures)[i] = std::make_exception_ptr(ApiError::transaction_conflict());
        }
      }
      if (held.empty()) (*failures)[0] = std::make_exception_ptr(ApiError::transaction_conflict());
      return false;
    } catch (const storage::WriteConflict&) {
      // Another front end wrote an item after it was read: read them all again.
      if (attempt + 1 >= kTransactionAttempts) {
        for (std::size_t i = 0; i < writes.size(); ++i) {
          (*failures)[i] = std::make_exception_ptr(ApiError::transaction_conflict());
        }
        return false;
      }
      *results = std::vector<WriteResult>(writes.size());
      conflict_backoff(attempt);
      continue;
    }
    for (std::size_t i = 0; i < writes.size(); ++i) {
      charge_write(*written[i], keys[i], (*results)[i], metering);
    }
    return true;
  }
}

std::vector<std::optional<Item>> Engine::transact_get(
    const std::vector<TransactGet>& gets, std::size_t max_bytes, const Metering& metering,
    std::vector<std::exception_ptr>* failures) const {
  std::vector<std::string> keys;
  for (const auto& g : gets) keys.push_back(item_key(*g.table, g.key));
  // Every read is admitted before anything is read (transactional reads are strongly
  // consistent).
  if (failures) failures->assign(gets.size(), nullptr);
  bool refused = false;
  for (std::size_t i = 0; i < gets.size(); ++i) {
    try {
      admit(meter(*gets[i].table, 0, metering), *gets[i].table, nullptr, keys[i],
            capacity::Dir::kRead, capacity::Milli{1000} * metering.factor, metering);
    } catch (...) {
      if (!failures) throw;
      (*failures)[i] = std::current_exception();
      refused = true;
    }
  }
  if (refused) return {};
  // The items as they were at one moment: read from a snapshot, then confirmed unchanged
  // (on a storage other processes share, whose writes no snapshot of this one holds off).
  std::vector<storage::Storage::Read> reads;
  for (int attempt = 0;; ++attempt) {
    reads.clear();
    const std::int64_t read_at = clock_->now_ns();
    {
      // (Not held while the reads are confirmed or while waiting to read again: it holds
      // off this process's transactions.)
      auto snapshot = storage_->snapshot();
      for (const std::string& key : keys) {
        std::string version;
        std::optional<std::string> value = storage_->get_versioned(key, snapshot.get(), &version);
        reads.emplace_back(key, std::move(value), std::move(version));
      }
    }
    try {
      if (gets.size() < 2 || (storage_->confirm_reads(reads) && confirmed_in_time(read_at))) {
        break;
      }
    } catch (const storage::TransactionConflict& conflict) {
      // Another front end's transaction holds some of the items: DynamoDB cancels, with
      // the reason TransactionConflict on each of them.
      if (!failures) throw ApiError::transaction_conflict();
      const std::set<std::string> held(conflict.keys.begin(), conflict.keys.end());
      for (std::size_t i = 0; i < gets.size(); ++i) {
        if (held.count(keys[i]) || held.empty()) {
          (*failures)[i] = std::make_exception_ptr(ApiError::transaction_conflict());
        }
      }
      return {};
    }
    if (attempt + 1 >= kTransactionAttempts) {
      if (!failures) throw ApiError::transaction_conflict();
      for (auto& failure : *failures) {
        failure = std::make_exception_ptr(ApiError::transaction_conflict());
      }
      return {};
    }
    conflict_backoff(attempt);
  }
  std::vector<std::optional<Item>> items;
  std::size_t total = 0;
  for (std::size_t i = 0; i < gets.size(); ++i) {
    items.push_back(reads[i].value ? std::optional<Item>(
                                         decode_stored(*gets[i].table, *reads[i].value, nullptr))
                                   : std::nullopt);
    const std::size_t size = items.back() ? item_size(*items.back()) : 0;
    charge_item_read(meter(*gets[i].table, 0, metering), *gets[i].table, keys[i], size, true,
                     metering);
    total += size;
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
    // An LSI entry changes with its item; a GSI entry lies in the GSI's own partitions and
    // is maintenance. Both kinds of index counter are kept with the item, as the table's.
    const bool global = indexes == &table.global_indexes;
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
      // A changed index key moves the entry: delete the old one, put the new one.
      if (old_key && old_key != new_key) {
        if (global) {
          batch->maintain_del(*old_key);
        } else {
          batch->del(*old_key);
        }
      }
      if (new_key && (!old_key || units > 0)) {
        std::string entry = codec::encode_stored_item(*new_entry, new_size);
        if (global) {
          batch->maintain_put(*new_key, std::move(entry));
        } else {
          batch->put(*new_key, std::move(entry));
        }
      }
      const int count_delta = (new_key ? 1 : 0) - (old_key ? 1 : 0);
      const std::int64_t size_delta =
          static_cast<std::int64_t>(new_size) - static_cast<std::int64_t>(old_size);
      if (count_delta) batch->add_counter(index_counter_key(table, index.id, "count"), count_delta);
      if (size_delta) batch->add_counter(index_counter_key(table, index.id, "bytes"), size_delta);
      if (units > 0) {
        result.index_units.push_back(
            index_write(index, units, std::move(old_key), old_size, std::move(new_key), new_size));
      }
    }
  }
}

WriteResult Engine::put_item(const TableDefinition& table, Item item, const Metering& metering) {
  return write_item(
      table, item_key(table, item), [&](const std::optional<Item>&) { return item; }, metering);
}

std::optional<Item> Engine::get_item(const TableDefinition& table, const Item& key, bool consistent,
                                     const Metering& metering) const {
  const std::string storage_key = item_key(table, key);
  capacity::ResourceMeter* resource = meter(table, 0, metering);
  admit(resource, table, nullptr, storage_key, capacity::Dir::kRead,
        capacity::Milli{consistent ? 1000 : 500} * metering.factor, metering);
  std::size_t size = 0;
  std::optional<Item> item;
  if (std::optional<std::string> stored = storage_->get(storage_key)) {
    item = decode_stored(table, *stored, &size);
  }
  charge_item_read(resource, table, storage_key, size, consistent, metering);
  return item;
}

WriteResult Engine::delete_item(const TableDefinition& table, const Item& key,
                                const Metering& metering) {
  return write_item(
      table, item_key(table, key), [](const std::optional<Item>&) { return std::nullopt; },
      metering);
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
