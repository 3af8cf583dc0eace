// Storage: the ordered key-value interface the engine talks to. Keys and values are byte
// strings; keys sort by unsigned byte order. Back ends: RocksDB (default, durable) and
// memory (--in-memory, tests). See docs/storage.md for the keys.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kumo {
class Clock;
}

namespace kumo::storage {

// Thrown when the back end fails (I/O error, corruption). The request that hit it gets
// InternalServerError; the process keeps serving.
class StorageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Thrown by Storage::write when an expectation of the batch (WriteBatch::expect) did not
// hold: another process changed the key since the caller read it. Nothing of the batch was
// applied; the caller reads again and retries.
class WriteConflict : public StorageError {
 public:
  using StorageError::StorageError;
};

// Thrown by Storage::write (and Storage::confirm_reads) when an item the batch reads or
// writes is held by a transaction of another process sharing the storage, still in
// progress: nothing of the batch was applied. `keys` are the items held. (A kind of
// WriteConflict: a caller that only retries may retry it too.)
class TransactionConflict : public WriteConflict {
 public:
  TransactionConflict(const std::string& message, std::vector<std::string> held)
      : WriteConflict(message), keys(std::move(held)) {}
  std::vector<std::string> keys;
};

// Thrown by Storage::write when a partition group carries a definition version of its
// table (WriteBatch::definition) older than the one set in its partition since
// (Storage::set_definition): another process changed what a write of the table must do (an
// index added or removed, TTL, the stream, the table dropped) after the caller took the
// definition it wrote with. Nothing of the batch was applied; the caller reloads its
// catalog and makes the write again with the new definition. (A kind of WriteConflict: a
// caller that only retries later may retry it too.)
class DefinitionChanged : public WriteConflict {
 public:
  using WriteConflict::WriteConflict;
};

// Thrown by Storage::write when the batch writes to a table that another process sharing
// the storage dropped: nothing was written, and the caller's catalog is stale.
class TableGone : public StorageError {
 public:
  using StorageError::StorageError;
};

// A group of writes applied atomically: all or none, and no reader sees part of it.
//
// A batch also says what must be atomic on a back end that cannot apply any set of keys
// at once (RADOS: one object per partition). A write of one item opens a *partition group*
// with partition(item key): the item, its LSI entries, its item collection's size and the
// table's counters change together, in the item's partition. What the write implies
// elsewhere (GSI entries, the TTL schedule, the stream record) is *maintenance*: such a back
// end applies it after the partition's change, from a record kept with that change, and may
// apply it again after a crash; applied in order, maintenance is idempotent. The local back
// ends apply every op of a batch together and ignore both marks.
class WriteBatch {
 public:
  enum class OpType : std::uint8_t { kPut, kDelete, kAddCounter };
  // Op::group of an op outside any partition group.
  static constexpr std::uint32_t kNoGroup = UINT32_MAX;
  struct Op {
    OpType type;
    bool maintenance = false;
    std::uint32_t group = kNoGroup;  // index into groups()
    std::string key;
    std::string value;   // kPut
    std::int64_t delta;  // kAddCounter
  };

  // Opens a partition group for the item stored at `item_key`: the ops that follow, up to
  // the next partition(), belong to it.
  void partition(std::string item_key) {
    group_ = static_cast<std::uint32_t>(groups_.size());
    groups_.push_back(std::move(item_key));
    definitions_.emplace_back();
  }
  // The version of its table's definition that the current partition group was made with
  // (what it writes besides the item: index entries, the TTL entry, the stream record): a
  // back end shared by several processes applies the group only while its partition holds
  // no newer version (Storage::set_definition), and throws DefinitionChanged otherwise.
  // A group given none is not compared.
  void definition(std::uint64_t version) {
    if (group_ != kNoGroup) definitions_[group_] = version;
  }
  void put(std::string key, std::string value) {
    ops_.push_back({OpType::kPut, false, group_, std::move(key), std::move(value), 0});
  }
  void del(std::string key) {
    ops_.push_back({OpType::kDelete, false, group_, std::move(key), {}, 0});
  }
  // Adds `delta` to the signed 64-bit counter stored at `key` (absent counts as 0). Blind:
  // needs no read. Read it back with Storage::get_counter.
  void add_counter(std::string key, std::int64_t delta) {
    ops_.push_back({OpType::kAddCounter, false, group_, std::move(key), {}, delta});
  }
  // Maintenance that the current partition group implies (see above).
  void maintain_put(std::string key, std::string value) {
    ops_.push_back({OpType::kPut, true, group_, std::move(key), std::move(value), 0});
  }
  void maintain_del(std::string key) {
    ops_.push_back({OpType::kDelete, true, group_, std::move(key), {}, 0});
  }
  void maintain_add_counter(std::string key, std::int64_t delta) {
    ops_.push_back({OpType::kAddCounter, true, group_, std::move(key), {}, delta});
  }
  // The batch applies only while `key` still holds `value` (nullopt: absent), as the
  // caller read it: the guard of a read-modify-write against writers in other processes.
  // A back end shared by several processes (RADOS) checks it atomically with the ops of
  // the key's partition (or, for a batch across partitions, before its commit point,
  // holding the key until it is applied) and throws WriteConflict when it fails. The local back
  // ends are owned by one process, whose callers order their read-modify-writes of a key (the
  // engine's ItemLocks), so an expectation always holds there and they ignore it.
  struct Expectation {
    std::string key;
    std::optional<std::string> value;
  };
  void expect(std::string key, std::optional<std::string> value) {
    expectations_.push_back({std::move(key), std::move(value)});
  }
  const std::vector<Expectation>& expectations() const { return expectations_; }
  const std::vector<Op>& ops() const { return ops_; }
  // The item key of each partition group.
  const std::vector<std::string>& groups() const { return groups_; }
  // The definition version of each partition group, if it was given one.
  const std::vector<std::optional<std::uint64_t>>& definitions() const { return definitions_; }
  bool empty() const { return ops_.empty(); }

 private:
  std::vector<Op> ops_;
  std::vector<Expectation> expectations_;
  std::vector<std::string> groups_;
  std::vector<std::optional<std::uint64_t>> definitions_;
  std::uint32_t group_ = kNoGroup;
};

// A consistent point-in-time view. Reads through it see every batch committed before it
// was taken and none after.
class Snapshot {
 public:
  virtual ~Snapshot() = default;
};

// Walks keys in [lower, upper) in order (or reverse). Valid until destroyed; the storage
// must outlive it.
class Iterator {
 public:
  virtual ~Iterator() = default;
  // Positions at the first key >= target (forward) within the range.
  virtual void seek(std::string_view target) = 0;
  // Positions at the last key <= target within the range.
  virtual void seek_for_prev(std::string_view target) = 0;
  virtual void seek_to_first() = 0;
  virtual void seek_to_last() = 0;
  virtual bool valid() const = 0;
  virtual void next() = 0;
  virtual void prev() = 0;
  // Only while valid(); views stay good until the iterator moves.
  virtual std::string_view key() const = 0;
  virtual std::string_view value() const = 0;
};

struct Options {
  // Directory of the RocksDB database; ignored by the memory back end.
  std::string path;
  // fsync the write-ahead log on every commit. Off by default: a committed batch is in the
  // OS page cache and survives a process kill (not a power loss).
  bool sync = false;
  // RocksDB block cache in bytes: data blocks, and the index and filter partitions of the
  // table files. Bounds read memory independently of data size. The default holds a table
  // of about a million small items (70-byte items: 72 MB of compressed files).
  std::size_t block_cache_bytes = 128u << 20;
  // Bytes of each of RocksDB's two memtables.
  std::size_t write_buffer_bytes = 32u << 20;
  // Bytes per second that flushes and compactions may write; 0: no limit.
  std::uint64_t compaction_bytes_per_second = 64u << 20;
};

// Concurrency contract, which every back end keeps and the engine relies on:
// - get, get_counter, write, snapshot, iterator and visit_range may be called from any
//   number of threads at once, on one Storage, without outside locking.
// - write is atomic and isolated: a concurrent reader (a get, an iterator, a snapshot
//   taken meanwhile) sees all of a batch or none of it. Batches are applied one after
//   another, in some order, each before write returns.
// - A Snapshot, and an iterator made without one, read one point in time: every batch
//   whose write returned before it was taken, and none begun after. Without a snapshot,
//   two gets may see different points in time.
// - An Iterator or Snapshot is used by one thread at a time; it may be made on one thread
//   and used or destroyed on another. Both must be destroyed before the Storage.
// - The storage serialises nothing above a batch: two read-modify-writes of one key must
//   be ordered by the caller (the engine's ItemLocks).
class Storage {
 public:
  virtual ~Storage() = default;

  // Reads `key` at `snapshot` (latest when null). Returns nullopt when absent.
  virtual std::optional<std::string> get(std::string_view key,
                                         const Snapshot* snapshot = nullptr) = 0;
  // Reads the item stored at `key` that a write is about to replace. A storage shared by
  // several processes (RADOS) may still be applying the GSI and TTL entries of the item's
  // last write, which the write may read to decide its own (whether an entry of a
  // backfilling index is there to remove): it then throws WriteConflict, and the caller
  // reads again a moment later. By default, get(key).
  virtual std::optional<std::string> read_for_write(std::string_view key) { return get(key); }
  // read_for_write(key) that also sets *version as get_versioned does, for confirm_reads.
  virtual std::optional<std::string> read_for_write_versioned(std::string_view key,
                                                              std::string* version) {
    version->clear();
    return read_for_write(key);
  }
  // Reads the counter written by WriteBatch::add_counter; 0 when absent. By default, the
  // value get() finds.
  virtual std::int64_t get_counter(std::string_view key);
  // Applies the batch atomically and durably (per Options::sync) before returning.
  virtual void write(const WriteBatch& batch) = 0;
  // Whether the back end is behind with its own work on what was written (RocksDB: a full
  // memtable not flushed yet, or enough files at level 0 that writes soon slow down or
  // stop): a job writing in bulk (an import, a backup's copy, a restore) waits while it is,
  // so that requests' writes never wait for the flushes and compactions the job caused. By
  // default, never.
  virtual bool behind() { return false; }
  virtual std::unique_ptr<Snapshot> snapshot() = 0;
  // Reads `key` as get() does, and sets *version to what tells this state of the key apart
  // from every other state it had or will have (a storage shared by several processes
  // writes a new one with each write of an item, its deletion included), for
  // confirm_reads. By default (one process, whose snapshots are consistent) empty.
  virtual std::optional<std::string> get_versioned(std::string_view key, const Snapshot* snapshot,
                                                   std::string* version) {
    version->clear();
    return get(key, snapshot);
  }
  // Whether every key of `reads` is still as read, so that reads made one by one are a
  // consistent snapshot even against other processes' writes: a read with a version
  // (get_versioned) is compared by it, which no write leaves as it was, so that a value
  // changed and changed back does not pass; one without by its value (nullopt: absent).
  // Throws TransactionConflict when a transaction of another process holds one of them.
  // The local back ends belong to one process, whose snapshots already are consistent:
  // true.
  struct Read {
    Read(std::string k, std::optional<std::string> v, std::optional<std::string> ver = {})
        : key(std::move(k)), value(std::move(v)), version(std::move(ver)) {}
    std::string key;
    std::optional<std::string> value;
    std::optional<std::string> version;  // nullopt: compared by value
  };
  virtual bool confirm_reads(const std::vector<Read>& reads) {
    (void)reads;
    return true;
  }
  // How long (ns of the engine's clock) reads confirmed by version may take, from before
  // the first read to the end of their confirmation: a version that no longer exists
  // (a deleted item's, reclaimed: reclaim_tombstones) is read as absent, like one never
  // written, so a confirmation that took longer may have missed a deletion and is not
  // trusted (the caller reads again). 0: no bound.
  virtual std::int64_t confirm_window_ns() const { return 0; }
  // The clock deletions are timed by and tombstones reclaimed on (the engine's). Set once,
  // before the storage is used by more than one thread.
  virtual void set_clock(const Clock* clock) { (void)clock; }
  // Removes the versions of deleted items of `table` (tombstones) old enough that no
  // confirmation that read the item before its deletion can still run (confirm_window_ns
  // and a margin). Returns how many it removed. By default (no versions) none.
  virtual std::size_t reclaim_tombstones(std::uint32_t table) {
    (void)table;
    return 0;
  }
  // Iterator over [lower, upper) at `snapshot` (latest when null). An empty `upper` means
  // no upper bound.
  virtual std::unique_ptr<Iterator> iterator(std::string lower, std::string upper,
                                             const Snapshot* snapshot = nullptr) = 0;
  // Calls `visit(key, value)` for each key of [lower, upper) (no upper bound when empty)
  // at `snapshot` (latest when null), in order (`forward`) or reverse, until it returns
  // false. The views are good during the call only, and `visit` must not call into the
  // storage: a back end may hold a lock meanwhile. By default, through an iterator.
  using EntryVisitor = std::function<bool(std::string_view key, std::string_view value)>;
  virtual void visit_range(std::string lower, std::string upper, bool forward,
                           const EntryVisitor& visit, const Snapshot* snapshot = nullptr);
  // Deletes every key in [lower, upper), counters included, in batches of bounded size (so
  // not atomically). By default, deletions of the keys an iterator finds. A range that
  // covers a table's counters, items and indexes (the engine erases them only to drop the
  // table, and its TTL schedule next) may take the table's TTL schedule with it: RADOS keeps
  // the schedule in the partitions, which it removes whole.
  virtual void erase_range(const std::string& lower, const std::string& upper);

  // Partitions of the back end's own layout (a back end that keeps a table's items in
  // several places, as RADOS does in one object per range of tokens). The local back ends
  // have none, and ignore both calls.
  //
  // `listener(table id, token, last)` is called when the back end has split a partition of
  // the table at the token (the first token of the new one); `last` is the last stream
  // record number the partition had handed out when it split (both halves number their
  // records from after it: stream_partitions). The split is also among unnoted_splits()
  // until split_noted(). It may be called from inside write(), and must not call into the
  // storage.
  using SplitListener =
      std::function<void(std::uint32_t table, std::uint64_t token, std::uint64_t last)>;
  virtual void set_split_listener(SplitListener listener) { (void)listener; }
  // Splits the back end's partition of the table that holds `token` at it, unless a
  // partition already starts there (the table's capacity partitions split at it).
  virtual void split_partition(std::uint32_t table, std::uint64_t token) {
    (void)table;
    (void)token;
  }

  // Stream records on a storage that several processes share (shared()) are numbered by
  // the storage, per partition of its own layout, where the change is made durable: the
  // engine writes each record at [table id][stream space][u64 0][u64 token of its item],
  // and the storage writes it at [..][n][token] instead, n being the next number of the
  // partition that holds the token (the records of one batch in their order), in the same
  // atomic step as the batch's items. So two changes of one item, ordered by the item's
  // guard, are numbered in their order, whichever process made them. A split partition's
  // halves both go on from its last number. Readers read a partition's records up to its
  // horizon: every record numbered up to it is in the storage (none is still on its way).
  // The local back ends, which one process owns, number nothing: the engine does (and
  // these three are not called).
  struct StreamPartition {
    std::uint64_t first_token = 0;
    std::uint64_t last = 0;  // the last number handed out; 0 before any
  };
  // The table's partitions now, in token order, each with its last number.
  virtual std::vector<StreamPartition> stream_partitions(std::uint32_t table);
  // The horizon of the records of the partition of the table that starts at `first_token`
  // and, as far as the reader knows, ends at `end_token` (nullopt: at 2^64). A reader that
  // has not heard of a split of that range yet (the split's process announces it to the
  // others after the fact) gets no number past the split's last: those past it belong to
  // the shards the split makes.
  virtual std::uint64_t stream_horizon(std::uint32_t table, std::uint64_t first_token,
                                       std::optional<std::uint64_t> end_token);
  // The partition splits whose stream shards may not be split yet, and their `last` (a
  // process may stop between publishing a split and splitting the shards; any other then
  // splits them). split_noted() forgets one once its shards are split, stored.
  struct UnnotedSplit {
    std::uint32_t table = 0;
    std::uint64_t token = 0;
    std::uint64_t last = 0;
  };
  virtual std::vector<UnnotedSplit> unnoted_splits() { return {}; }
  virtual void split_noted(std::uint32_t table, std::uint64_t token) {
    (void)table;
    (void)token;
  }
  // Forward iterator over the records of [lower, upper) written by the partition that
  // starts at `first_token` (they stay where they were written: a split moves none).
  virtual std::unique_ptr<Iterator> stream_records(std::uint32_t table, std::uint64_t first_token,
                                                   std::string lower, std::string upper);
  // Erases the records of [lower, upper) written by the partition that starts at
  // `first_token` (those stream_records() walks), and no other partition's: each
  // partition's records are trimmed up to its own first record still within retention.
  virtual void erase_stream_records(std::uint32_t table, std::uint64_t first_token,
                                    const std::string& lower, const std::string& upper);

  // Several processes (front ends) may share one back end (RADOS). Each keeps the catalog
  // (the keys outside the tables' spaces) in memory, so a change is announced:
  // notify_catalog() tells every other process sharing the storage that the catalog
  // changed, and returns once each has called its listener (or has not answered within a
  // few seconds: it finds out by its writes' guards). `listener` is called on a thread of
  // the back end's, never from inside a call into the storage; it may read the storage.
  // Setting an empty listener waits for a call in progress to end. The local back ends
  // belong to one process and do neither.
  // announce_catalog() tells them too but returns at once: for a change that no answer to a
  // client waits on (a stream's shard split), which then reaches every live process within
  // a round trip even while a dead one keeps notify_catalog() waiting its few seconds.
  using CatalogListener = std::function<void()>;
  virtual void set_catalog_listener(CatalogListener listener) { (void)listener; }
  virtual void notify_catalog() {}
  virtual void announce_catalog() {}
  // Sets table `table`'s definition version in each of its partitions (only ever raising
  // it): once it returns, every write of a partition group made with an older version
  // (WriteBatch::definition) is refused with DefinitionChanged, whichever process makes it.
  // A catalog change that changes what a write of the table must do calls it after the
  // change is stored and before it is announced (and before a GSI's backfill starts), so no
  // process writes the table with the old definition once the change's next step begins;
  // `dropped`: the table was removed (its partitions are not made if it has none). The local
  // back ends belong to one process, whose catalog is the only one: they do nothing.
  virtual void set_definition(std::uint32_t table, std::uint64_t version, bool dropped) {
    (void)table;
    (void)version;
    (void)dropped;
  }
  // Whether other processes may share this storage (RADOS): what one process keeps only in
  // its memory (ClientRequestTokens) is then kept in the storage too. Such a back end
  // checks every expectation of a batch (WriteBatch::expect).
  virtual bool shared() const { return false; }
  // Background work that processes sharing the storage must do once (a GSI's backfill, a
  // table's TTL reaping, a dropped table's removal): claim_job(name) is true when this
  // process may do it now, no other live process having claimed it (it then holds the
  // claim; true again while it holds it). A claim lasts until release_job, or until the
  // process that holds it is gone (on RADOS: its lease lapsed and another front end took
  // its work over, which also removes its claims). One process owns a local back end:
  // always true.
  virtual bool claim_job(const std::string& name) {
    (void)name;
    return true;
  }
  virtual void release_job(const std::string& name) { (void)name; }
  // This process's id among those sharing the storage (what claims name). 0 for a local
  // back end.
  virtual std::uint64_t process_id() { return 0; }
  // The processes sharing the storage that are alive, this one included (on RADOS: the
  // front ends listed whose lease renewals this process sees go on; one that stopped
  // renewing is left out before its lease lapses and its work is taken over): those a
  // process spreads jobs of one kind over. A process seen for the first time counts as
  // alive until it has had the time to renew.
  virtual std::vector<std::uint64_t> live_processes() { return {process_id()}; }
  // A job's claim: the process holding it and, while it is being handed over, the process
  // it goes to (0: none).
  struct JobClaim {
    std::uint64_t holder = 0;
    std::uint64_t taker = 0;
  };
  // The claims of the jobs whose names start with `prefix`, by name.
  virtual std::vector<std::pair<std::string, JobClaim>> job_claims(const std::string& prefix) {
    (void)prefix;
    return {};
  }
  // Names process `taker` in the claim this process holds: this process still holds it
  // (claim_job stays true here) until the taker claims it (claim_job there takes it), so that
  // the job always has a holder. `taker` 0 takes a handover back. False when this process
  // no longer holds the job.
  virtual bool hand_over_job(const std::string& name, std::uint64_t taker) {
    (void)name;
    (void)taker;
    return true;
  }
  // Claims a job held by process `holder` that is no longer alive (live_processes), as
  // claim_job does once its work has been taken over: false when another process claimed
  // it meanwhile. For jobs that two processes may do at once without harm (a table's TTL
  // reaping: each deletion is guarded on the item read), should the holder be alive after
  // all.
  virtual bool take_job(const std::string& name, std::uint64_t holder) {
    (void)name;
    (void)holder;
    return true;
  }
};

// Opens (creating if needed) a RocksDB database at options.path.
std::unique_ptr<Storage> open_rocksdb(const Options& options);
// A fresh, empty in-memory store.
std::unique_ptr<Storage> open_memory();

}  // namespace kumo::storage
