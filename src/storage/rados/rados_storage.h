// The RADOS back end: Kumo's ordered key space kept in the omaps of objects of one pool
// of a Ceph cluster. Built as the module kumo-rados.so, which open_rados loads on first
// use (rados_module.cpp). docs/scale-out.md describes the layout and protocols.
//
// Layout. The catalog object `kumo.catalog` (default namespace) holds every key outside
// the tables' spaces (`meta/...`: definitions, streams, sequence numbers) and each table's
// partition map, but the ClientRequestTokens (`meta/tokens/...`), spread by a hash over
// the objects `kumo.tokens.<n>` beside it. Table T's keys live in namespace "t<T>":
//   p<16 hex digits>  one partition: the items ([T][1][token]...), index entries
//                     ([T][2][index][token]...) and TTL schedule entries
//                     ([T][4][enc(expiry)][item key]) whose token lies in its range, the
//                     table's counters as delta keys, and its outbox;
//   s<16 hex digits>  the stream records ([T][3][sequence][token]) of the items of the
//                     partition of the same start when they were written;
//   misc              any other key of the table.
// Every partition also holds its range (kRangeKey), which every write to it and every read
// of it compares with the writer's map: several front ends may share the pool, and one
// whose map is stale (another split the partition) finds out before it writes.
// An index entry is kept by the partition whose range holds the entry's own token, so an
// LSI entry (whose token is its item's) is always in its item's object; a schedule entry
// by its item's partition. The schedule is ordered by expiry and the records by sequence
// number, so a range of either lies in every partition (or stream object) and is read from
// all of them, merged. A split moves no record: the records of the moved half written
// before it stay where they are, those after go to the new start's stream object. A
// dropped table's stream objects stay, found through its map (kept, and marked dropped),
// until its last record is trimmed.
//
// Writes. A batch whose partition ops (WriteBatch: everything but maintenance) touch one
// object is one compound operation on it, atomic and replicated before it returns. Its
// maintenance (GSI entries, TTL schedule, stream records), if any, is first recorded in
// that same operation as an outbox entry, then applied object by object, then the entry is
// removed; a process that stops in between leaves the entry, and the next open applies it
// again (in order, which makes it idempotent). A batch whose partition ops touch several
// objects (a transaction) is first written whole as a record object `kumo.txn.*`: once
// that write returns the batch is committed, and it is applied object by object, then the
// record is removed; the next open applies any record left.
//
// Counters are never read-modified-written: each add is a key of its own (a delta) in the
// object of the write's partition, and a counter's value is the sum of its deltas in all
// of the table's partitions. Deltas are folded into one base key per object now and then,
// but never one that a record still to be applied again (after a crash) would set again.
//
// This header declares the back end; its definitions are in rados_storage.cpp (reads, the
// partition maps), rados_writes.cpp (batches in one partition, guards, maintenance),
// rados_counters.cpp (counters and records in flight),
// rados_ranges.cpp (partitions' ranges), rados_scattered.cpp (the TTL schedule's and the
// stream records' spaces), rados_splits.cpp, rados_transactions.cpp (batches across
// partitions), rados_iterator.cpp, rados_recovery.cpp, rados_watch.cpp (the catalog watch)
// and rados_leases.cpp (front ends' leases, background jobs).
#pragma once

#include <rados/librados.hpp>

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "model/clock.h"
#include "storage/rados/layout.h"
#include "storage/rados/module.h"
#include "storage/storage.h"

namespace kumo::storage::rados {

// Reports a failure through the function that kumo_open_rados was given (which throws).
[[noreturn]] void fail(const std::string& message);
// Fails with `what` and the error when `r`, a librados result, is negative.
void check(int r, const std::string& what);
// How many results check() found to be a blocklisted client's (ESHUTDOWN) in this process.
std::uint64_t blocklisted_answers();
// Reports a write whose guard failed (storage::WriteConflict), which throws.
[[noreturn]] void conflict(const std::string& message);
// Reports a write to a table another front end dropped (storage::TableGone), which throws.
[[noreturn]] void gone(const std::string& message);
// Reports a write made with an older definition of its table than its partition holds
// (storage::DefinitionChanged), which throws.
[[noreturn]] void stale(const std::string& message);
// Reports items held by another front end's transaction in progress
// (storage::TransactionConflict naming their keys), which throws.
[[noreturn]] void held(const std::vector<std::string>& keys);

// Keys a range read asks for at once: a walk's first read asks for few (a Query with a
// small Limit, or one that stops at its first 1 MB of items of up to 400 KB, reads no more
// than it needs), and each next one for four times as many, up to kPageKeys.
constexpr unsigned kPageKeys = 512;
constexpr unsigned kFirstPageKeys = 8;

// omap_cmp assertions: key -> (value, comparison). An empty value tests absence.
using Guards = std::map<std::string, std::pair<librados::bufferlist, int>>;

// A write found that a partition's range is not the one its map gave (another front end
// split it, or dropped the table): thrown by apply() before anything was written, and
// caught by write(), which reloads the map and writes again.
// A write's guard on its partition's last stream record number failed (another write
// numbered records there first): thrown by apply() before anything was written, once the
// number read now is cached; the writer numbers its records again and sends its op again.
struct NumbersMoved {};

struct LayoutChanged {
  std::uint32_t table = 0;
  bool frozen = false;   // the partition is being split: wait, then write again
  bool missing = false;  // the object is gone (the table was dropped)
};

class RadosSnapshot : public Snapshot {
 public:
  explicit RadosSnapshot(std::shared_mutex& applying) : lock_(applying) {}

 private:
  std::shared_lock<std::shared_mutex> lock_;
};

class RadosStorage;

// librados's callbacks of the catalog watch, handed to the storage's watch thread.
class CatalogWatch : public librados::WatchCtx2 {
 public:
  explicit CatalogWatch(RadosStorage& storage) : storage_(storage) {}
  void handle_notify(std::uint64_t notify_id, std::uint64_t cookie, std::uint64_t notifier,
                     librados::bufferlist& bl) override;
  void handle_error(std::uint64_t cookie, int err) override;

 private:
  RadosStorage& storage_;
};

// Walks [lower, upper) forward in pages. RADOS reads omaps forward only: for a backward
// walk it reads the keys of the range whole (keys only), then the values from the end back,
// a few first and four times as many each time (a descending Query with a small Limit
// reads few of the range's values).
class RadosIterator : public Iterator {
 public:
  RadosIterator(RadosStorage& storage, std::string lower, std::string upper)
      : storage_(storage), lower_(std::move(lower)), upper_(std::move(upper)) {}
  void seek(std::string_view target) override;
  void seek_for_prev(std::string_view target) override { load_backward(target); }
  void seek_to_first() override { seek(lower_); }
  void seek_to_last() override { load_backward(std::nullopt); }
  bool valid() const override { return at_ < entries_.size(); }
  void next() override;
  void prev() override;
  std::string_view key() const override { return entries_[at_].first; }
  std::string_view value() const override { return entries_[at_].second; }

 private:
  // Backward: reads the values of the entries below loaded_ that the walk stands on or
  // will step to next (entries deleted meanwhile are dropped, and the walk stands on the
  // one before).
  void load_values();
  // Reads the next page from `resume_` into entries_; false at the end.
  bool load_forward();
  // Reads every entry of the range up to `last` (inclusive; nullopt: the end) and stands
  // on the last one.
  void load_backward(std::optional<std::string_view> last);

  RadosStorage& storage_;
  std::string lower_, upper_;
  std::vector<std::pair<std::string, std::string>> entries_;
  std::size_t at_ = 0;
  std::string resume_;              // where the next forward page starts (inclusive)
  unsigned page_ = kFirstPageKeys;  // keys the next forward read asks for
  bool exhausted_ = true;
  bool whole_ = false;  // entries_ starts at lower_ (read by load_backward)
  // Backward: entries_ holds keys only, their values from loaded_ on; objects_ the object
  // each key was read from; values_ how many values the next read of them asks for.
  bool keys_only_ = false;
  std::vector<ObjectRef> objects_;
  std::size_t loaded_ = 0;
  unsigned values_ = kFirstPageKeys;
};

class RadosStorage : public Storage {
 public:
  // The start tokens of a table's partitions, shared with the readers of the map.
  using Starts = std::shared_ptr<const std::vector<std::uint64_t>>;

  RadosStorage(const std::string& pool, const std::string& conf, const std::string& prefix,
               const KumoRadosSettings& settings);
  ~RadosStorage() override;

  std::optional<std::string> get(std::string_view key, const Snapshot*) override;
  std::optional<std::string> read_for_write(std::string_view key) override;
  // An item's version is its key of kVersionsSpace (layout.h).
  std::optional<std::string> get_versioned(std::string_view key, const Snapshot*,
                                           std::string* version) override;
  std::int64_t get_counter(std::string_view key) override;
  void write(const WriteBatch& batch) override;
  void write_resolved(const WriteBatch& batch);
  std::unique_ptr<Snapshot> snapshot() override;
  // Reads each key's version again with its lock (rados_transactions.cpp).
  bool confirm_reads(const std::vector<Read>& reads) override;
  std::optional<std::string> read_for_write_versioned(std::string_view key,
                                                      std::string* version) override;
  std::int64_t confirm_window_ns() const override { return kConfirmWindowNs; }
  void set_clock(const Clock* clock) override { clock_.store(clock, std::memory_order_release); }
  // Walks the versions of each partition of `table` a page at a time, and removes the
  // tombstones timed more than kTombstoneKeptNs ago, each guarded on its value.
  std::size_t reclaim_tombstones(std::uint32_t table) override;
  std::unique_ptr<Iterator> iterator(std::string lower, std::string upper,
                                     const Snapshot*) override;
  void erase_range(const std::string& lower, const std::string& upper) override;

  // The object and range of the segment of the key space that `key` lies in: the keys of
  // [key, end) that exist are all in `object` (`counters`: the table's counter space, kept
  // as deltas, which range reads skip).
  struct Place {
    ObjectRef object;
    std::string end;  // empty: no end
    bool counters = false;
    std::uint32_t table = 0;
    // For items and index entries: how many splits had been published when the place was
    // found in the map.
    std::optional<std::uint64_t> splits;
    // The segment's keys lie in every partition of `table` (the TTL schedule, ordered by
    // expiry) or every stream object (the stream records, ordered by sequence number):
    // `object` is the one of the key located, and a range read merges them all
    // (read_scattered).
    bool scattered = false;
  };
  // The objects that may hold `key`, located at `place`: its object, but for a stream
  // record every stream object it may have been written to (a split moves none).
  std::vector<ObjectRef> holders(const Place& place, std::string_view key);
  // Whether a split changed the map since `place` was found: what was read from the
  // partition may then be incomplete (the moved keys are removed from it after the new
  // map is published), so the read is done again.
  bool moved(const Place& place);
  Place locate(std::string_view key);
  // get(), and read_for_write() when `settled`: then an item held (kHoldPrefix) is a
  // WriteConflict.
  // (*version, when given: the item's version key's value, empty when it has none.)
  std::optional<std::string> read_item(std::string_view key, bool settled,
                                       std::string* version = nullptr);

  // Up to `max` entries of `object` in [from, to) (to empty: no end), in order; `more` says
  // whether entries remain past the last one returned.
  // With `keys_only`, the values are left empty (and not read).
  std::vector<std::pair<std::string, std::string>> read_range(const ObjectRef& object,
                                                              const std::string& from,
                                                              const std::string& to, unsigned max,
                                                              bool* more, bool keys_only = false);

  // The objects that keep table `table`'s keys of a scattered space: its partitions
  // (`kind` 'p': the TTL schedule) or their stream objects ('s': the stream records); for
  // kTokensKind, the ClientRequestTokens' objects (no table).
  std::vector<ObjectRef> scattered_objects(std::uint32_t table, char kind);
  // The ClientRequestTokens' objects, kumo.tokens.<n>; created by the constructor.
  std::vector<ObjectRef> token_objects() const;
  void create_token_objects();
  // Removes the keys of [from, to) from each of those objects.
  void erase_scattered(std::uint32_t table, char kind, const std::string& from,
                       const std::string& to);
  // Removes a dropped table's stream objects and partition map once no record is left in
  // them (nothing when the table was not dropped).
  void release_dropped(std::uint32_t table);
  // Moves the keys of `space` kept in the object `oid` of table `table`'s namespace (where
  // the stream records and the TTL schedule were kept before objects per partition kept
  // them: "stream", "ttl") to the objects that keep them now, then removes it.
  void move_space(std::uint32_t table, const std::string& oid, std::uint8_t space);

  // The entries of [from, to) of every object of `table` of `kind` (scattered_objects),
  // merged in key order: up to `max` of each object's, cut where one that has more ends
  // (`more`). `objects` gets the object of each entry.
  std::vector<std::pair<std::string, std::string>> read_scattered(
      std::uint32_t table, char kind, const std::string& from, const std::string& to, unsigned max,
      bool* more, bool keys_only, std::vector<ObjectRef>* objects);

  // The values of `keys` in `object` (those that exist).
  std::map<std::string, std::string> read_values(const ObjectRef& object,
                                                 const std::set<std::string>& keys);

  // Where a forward walk that reached `at` goes on. A walk steps through the key space
  // segment by segment; where a segment boundary opens a stretch of spaces that may all
  // be empty (the next index of a table, the next table), it jumps to the first one that
  // holds something, or to `upper`.
  // (A walk that starts at a table's own prefix stays in that table: no jump.)
  std::string skip_empty(const std::string& at, const std::string& lower, const std::string& upper);

  // The catalog watch (rados_watch.cpp). A notify received, or the watch lost (`lost`).
  struct Notice {
    std::uint64_t id = 0, cookie = 0;
    std::string payload;  // the notifier's instance
    bool lost = false;
    bool reload = false;  // no notify: the listener is to run once
  };
  void queue_notify(Notice notice);
  void set_catalog_listener(CatalogListener listener) override;
  void notify_catalog() override;
  void announce_catalog() override;
  // Releases the announcements answered (or timed out); `all`: waits for the others first.
  void reap_announcements(bool all);
  bool shared() const override { return true; }
  // Stream record numbers (rados_numbers.cpp).
  std::vector<StreamPartition> stream_partitions(std::uint32_t table) override;
  std::uint64_t stream_horizon(std::uint32_t table, std::uint64_t first_token,
                               std::optional<std::uint64_t> end_token) override;
  std::vector<UnnotedSplit> unnoted_splits() override;
  void split_noted(std::uint32_t table, std::uint64_t token) override;
  static std::string unnoted_key(std::uint32_t table, std::uint64_t token);
  std::unique_ptr<Iterator> stream_records(std::uint32_t table, std::uint64_t first_token,
                                           std::string lower, std::string upper) override;
  void erase_stream_records(std::uint32_t table, std::uint64_t first_token,
                            const std::string& lower, const std::string& upper) override;
  bool claim_job(const std::string& name) override;
  void release_job(const std::string& name) override;
  // Sets kDefinitionKey in every partition of the table (rados_writes.cpp).
  void set_definition(std::uint32_t table, std::uint64_t version, bool dropped) override;
  std::uint64_t process_id() override { return instance_.load(); }
  std::vector<std::uint64_t> live_processes() override;
  std::vector<std::pair<std::string, JobClaim>> job_claims(const std::string& prefix) override;
  bool hand_over_job(const std::string& name, std::uint64_t taker) override;
  bool take_job(const std::string& name, std::uint64_t holder) override;

 private:
  // A client of the cluster and its I/O contexts. Its address names it to the OSDs: a
  // front end that takes over this one's work (its lease lapsed) blocklists it, and from
  // then on the OSDs refuse every op it sends. This front end then goes on under a new instance
  // with a new client; the old one is shut down (its threads end, its memory is freed) once nothing
  // uses it any more: every op holds its client (Io) until it returns, and every asynchronous op
  // (an outbox entry's removal, an announcement, the watch) until it completes.
  struct Connection {
    librados::Rados cluster;
    librados::IoCtx catalog;
    std::string address;
    std::shared_mutex io_mutex;
    std::unordered_map<std::string, librados::IoCtx> io;  // by namespace (io_mutex)
    Connection() = default;
    Connection(const Connection&) = delete;
    Connection& operator=(const Connection&) = delete;
    ~Connection();
  };
  // Holds a client for as long as an I/O context taken from it is used.
  struct Holder {
    std::shared_ptr<Connection> connection;
  };
  // An I/O context of a client that keeps the client alive while it lives: taken for one
  // op (`io(ns).operate(...)`), or kept while asynchronous ops sent through it are in
  // flight. (The holder is a base declared first: the context is destroyed before it.)
  class Io : private Holder, public librados::IoCtx {
   public:
    Io(std::shared_ptr<Connection> connection, const librados::IoCtx& ctx)
        : Holder{std::move(connection)}, librados::IoCtx(ctx) {}
    const std::shared_ptr<Connection>& connection() const { return Holder::connection; }
  };
  // Connects a new client (the pool opened, its address read).
  std::shared_ptr<Connection> connect();
  std::shared_ptr<Connection> connection() const {
    std::shared_lock lock(connection_mutex_);
    return connection_;
  }
  // Makes `fresh` the current client; returns the one it replaces.
  std::shared_ptr<Connection> replace_connection(std::shared_ptr<Connection> fresh) {
    std::unique_lock lock(connection_mutex_);
    connection_.swap(fresh);
    return fresh;
  }
  // The I/O context of namespace `ns` on the current client, or on `on`.
  Io io(const std::string& ns) { return io(connection(), ns); }
  Io io(const std::shared_ptr<Connection>& on, const std::string& ns);
  Io catalog_io() { return catalog_io(connection()); }
  Io catalog_io(const std::shared_ptr<Connection>& on) { return Io(on, on->catalog); }
  mutable std::shared_mutex connection_mutex_;
  std::shared_ptr<Connection> connection_;  // the current client (connection_mutex_)
  // Watches the catalog object, and starts the thread that handles its notifies: each is
  // acknowledged after the listener ran (but this process's own).
  void start_watch();
  void stop_watch();
  void watch_loop();

  std::string table_namespace(std::uint32_t table) const;

  // The start tokens of the table's partitions, in order (the first is 0). A table without
  // a map has the initial partitions; `create` (a write) stores them as its map.
  Starts partition_starts(std::uint32_t table, bool create = false);

  void forget_partitions(std::uint32_t table);
  // Raises `to`'s definition version to `value` (a stored version, [u64]): a split's new
  // partition, to the catalog's record of it before its map is published.
  void raise_definition(const ObjectRef& to, const std::string& value);
  // Whether `used` (a map taken from the cache) is still the table's stored map: a walk of
  // every partition (a counter's sum, the first index entry) that another front end's split
  // may have outdated checks it once done. When it is not, the cache is refreshed and the
  // walk is done again with the stored map.
  bool map_current(std::uint32_t table, const Starts& used);
  std::vector<ObjectRef> partitions(std::uint32_t table);
  std::vector<ObjectRef> partitions(std::uint32_t table, const std::vector<std::uint64_t>& starts);

  // Where a counter's deltas may lie: every partition of its table, or the catalog.
  std::vector<ObjectRef> counter_objects(std::string_view key);

  bool read_key(const ObjectRef& object, const std::string& key, std::string* value);

  // Every entry of `object` whose key starts with `prefix`, reserved ones included.
  std::vector<std::pair<std::string, std::string>> read_prefix(const ObjectRef& object,
                                                               const std::string& prefix);

  // The batch's ops, each resolved to a key of an object. A counter add becomes a delta
  // key in its partition's object (or the catalog); a deleted counter, the removal of its
  // keys everywhere.
  std::vector<Resolved> resolve(const WriteBatch& batch, std::vector<ObjectRef>* group_objects);

  // One compound operation on `object`: its ops in order, then `extra` keys set; with
  // `guards`, only if they all hold (else WriteConflict, and nothing is applied).
  void apply(const ObjectRef& object, const std::vector<const Resolved*>& ops,
             const std::map<std::string, std::string>& extra, const Guards& guards = {});

  // Partition ranges (kRangeKey). The value partition `start` of a map holds.
  static std::string range_value(const std::vector<std::uint64_t>& starts, std::uint64_t start);
  // The range the cached map gives a partition object; empty for any other object.
  std::string expected_range(const ObjectRef& object);
  // Whether a key of a partition's spaces belongs to `range` (reserved keys do).
  static bool in_range(std::string_view range, std::string_view key);
  // Whether `found`, a partition's range key, is `expected` or `expected` frozen by a split.
  static bool range_fits(std::string_view found, std::string_view expected);
  // Why a guarded write to a partition whose range was `expected` failed: the range key
  // read now says whether the layout changed (LayoutChanged thrown) or not (returns).
  void check_range(const ObjectRef& object, const std::string& expected);
  std::uint32_t table_of(const ObjectRef& object) const;
  // The table's map changed in another front end: the cached one is dropped, and every
  // place found before counts as moved (moved()).
  void refresh_map(std::uint32_t table);
  // Creates the objects of the table's partitions that do not exist, each with its range,
  // and sets the range of those that have none (written before ranges were kept).
  void ensure_ranges(std::uint32_t table, const std::vector<std::uint64_t>& starts);

  // The batch's expectations (WriteBatch::expect) as guards, by the object of their key,
  // each with its lock's absence.
  std::map<ObjectRef, Guards> expectations(const WriteBatch& batch);
  // Reads the guarded keys and throws when one differs: TransactionConflict when a
  // transaction holds an item (its lock is there), else WriteConflict. Why a guarded op
  // failed.
  void verify(const std::map<ObjectRef, Guards>& guards);

  // Adds the ops to `op`: runs of sets and of removals, in order (after creating the
  // object, when they remove keys and either they or what the caller adds after them
  // (`then_set`) set keys). `sets`: how many keys of Kumo's space (not reserved ones) it
  // sets. True when the op only removes keys: it then fails with ENOENT on an object that
  // does not exist, where its keys are gone already.
  static bool add_ops(librados::ObjectWriteOperation* op, const std::vector<const Resolved*>& ops,
                      int* deltas, int* sets, bool then_set = false);

  // Applies ops to their objects: one compound op per object, all at once.
  void apply_all(const std::vector<const Resolved*>& ops);

  // Removes a done outbox entry without waiting for it: the write has been acknowledged
  // already, and an entry left by a crash is only applied once more. Its record counts as
  // in flight until the removal is durable.
  void remove_entry_later(const ObjectRef& home, const std::set<std::string>& keys,
                          std::uint64_t sequence);

  // Stream record numbers (rados_numbers.cpp). The last number partition `partition`
  // handed out, as last seen here (read when not yet seen), and what was seen of it since.
  std::uint64_t last_number(const ObjectRef& partition);
  void note_last_number(const ObjectRef& partition, std::uint64_t last);
  std::uint64_t read_last_number(const ObjectRef& partition);
  // Held while a write numbers records of `partition` and sends its op.
  std::unique_lock<std::mutex> numbering(const ObjectRef& partition);
  // The partition whose number a record of `stream_object` (s<start>) takes: p<start>.
  static ObjectRef numbering_partition(const ObjectRef& stream_object);
  // The ops of `ops` that are records left unnumbered (unnumbered_record).
  static std::vector<Resolved*> unnumbered(std::vector<Resolved>& ops);
  // Numbers `records` (all of `home`'s) in `home`'s op: adds to `extra` the partition's new
  // last number and the mark of the first (naming the outbox entry `entry`), and to
  // `guards` the number expected. Returns the mark's key.
  std::string number_records(const ObjectRef& home, const std::vector<Resolved*>& records,
                             const std::string& entry, std::map<std::string, std::string>* extra,
                             Guards* guards);
  // Thrown by apply() when `guards` expected a last number that `object` no longer has.
  void check_numbers(const ObjectRef& object, const Guards& guards);
  // A transaction's records of partition `partition`, numbered there once: the first
  // number it took there before (kStreamNumberedPrefix; with `look`), or taken now (with
  // `take`, `record` holding `lock` there); nullopt when the transaction no longer holds
  // the partition.
  std::optional<std::uint64_t> transaction_numbers(const ObjectRef& partition,
                                                   const std::string& record,
                                                   const std::string& lock, std::size_t count,
                                                   bool take, bool look);

  // Forgets the removals that have completed (with `wait`, waits for all first).
  void reap_removals(bool wait);

  void remove_keys(const ObjectRef& object, const std::set<std::string>& keys);
  void remove_object(const ObjectRef& object);

  // A batch across partitions (rados_transactions.cpp): its record (numbered `sequence`,
  // from begin_record), the locks of the items that `guards` expect, the commit point,
  // then its ops, and the locks' removal. Sets *held_on once the record is committed
  // (from then on, a failure leaves it for recovery); ends the record when it is done.
  void write_transaction(const std::vector<Resolved>& ops,
                         const std::map<ObjectRef, Guards>& guards, std::uint64_t sequence,
                         bool* held_on);
  // Locks every expected key of `guards` for `record`, each in its object, with the
  // guards compared in the same op. When one object's op fails, ends the record as
  // aborted and throws why (LayoutChanged, TransactionConflict or WriteConflict).
  void prepare(const std::string& record, const std::map<ObjectRef, Guards>& guards,
               const std::vector<Resolved>& locks);
  // Moves a pending record to `state` (committed or aborted) in one op guarded on it being
  // pending; the op's result (-ECANCELED: not pending, -ENOENT: gone).
  int end_pending(const std::string& record, const std::string& state);
  // Removes each of `locks` (removals of lock keys) that still names `record`.
  void release_locks(const std::string& record, const std::vector<Resolved>& locks);
  // Ends a transaction record whose owner is gone: a pending one is aborted (its locks
  // released), a committed one applied; then the record goes.
  void finish_transaction(const std::string& record);
  // Applies a committed record's ops: with no locks, all at once; else the maintenance
  // ops first (unless an object was applied already), then each locked object's ops with
  // its locks' removal, guarded on the locks naming `record` (`fresh`: the caller took
  // them just now, so none was applied).
  void apply_transaction(const std::string& record, const std::vector<Resolved>& ops,
                         const std::vector<Resolved>& locks, bool fresh);
  // Whether `object` still holds the locks of `record` among `locks`.
  bool holds_lock(const ObjectRef& object, const std::vector<Resolved>& locks,
                  const std::string& record);
  // How the transaction `record`, which holds the item stored at `key`, decides the item
  // for a reader: it stands as stored (the transaction is not committed, or only checks
  // it), or it is the record's (`value`, nullopt when deleted: committed, maybe not yet
  // applied), or the record has ended since the item was read (read it again). So a read
  // sees a transaction whole from its commit point on, whoever applies it, and when.
  enum class Decided { kStands, kByRecord, kEnded };
  Decided decided(const std::string& record, std::string_view key,
                  std::optional<std::string>* value);
  // Removes the lock on `item` in `object` if the transaction it names has ended (its
  // record gone or aborted); true when the item is not locked any more.
  bool break_orphaned_lock(const ObjectRef& object, const std::string& item);
  // A record this front end left when its transaction failed (`sequence`: its number,
  // whose end waits for it, once committed), and their end, on the takeover thread.
  void leave(const std::string& record, std::optional<std::uint64_t> sequence);
  void finish_leftovers();
  std::mutex leftovers_mutex_;
  std::vector<std::pair<std::string, std::optional<std::uint64_t>>> leftovers_;

  // Records (outbox entries, transaction records) in flight: their delta keys may be set
  // again by a replay, so no fold may take them. A record's number is below its deltas'
  // (taken before them), and a fold takes no delta numbered at or above the lowest record
  // in flight.
  std::uint64_t begin_record();
  void end_record(std::uint64_t sequence);

  // Counts the delta keys written to an object; every kFoldEvery, folds its counters.
  void note_deltas(const ObjectRef& object, int deltas);

  // Sums each counter's deltas in `object` into its base key. Skips the deltas that a
  // record in flight (or any later one) set: a replay would set them again.
  void fold(const ObjectRef& object);

  // Splits. A partition whose object holds more than partition_keys_ keys (items and
  // index entries) splits in two at the token that leaves about half of them on each side,
  // never inside one token (so never inside an item collection). The lower half keeps the
  // object (and every counter delta); the upper half moves to a new object named by its
  // first token:
  //   1. writes pause (layout_) and the partition's outbox is applied;
  //   2. the split key (the new partition's first token) is set in the partition;
  //   3. the keys from that token on are copied to the new object;
  //   4. the new map is published in the catalog: from here on the new object holds them;
  //   5. writes resume; the moved keys, then the split key, are removed from the old one.
  // A process that stops before step 4 leaves the split key, and the next open removes the
  // new object; one that stops after it, and the next open removes the moved keys
  // (finish_split). Readers never wait: a read that found its partition in the map before
  // step 4 and read it after, when keys may be gone, reads again (moved()).

  // Counts the keys set in a partition's object; once a quarter of partition_keys_ has
  // been set since its keys were last counted, it is due to be counted again.
  void note_growth(const ObjectRef& object, int sets);

  // Counts the keys of the objects due and splits those that hold too many, one thread at
  // a time. Runs after a write has been applied: a split that fails is logged, never
  // reported to the write (the next open undoes or finishes it).
  void split_due();

  // The keys of `object` below the reserved ones.
  std::uint64_t count_keys(const ObjectRef& object);

  static std::string encode_map(const std::vector<std::uint64_t>& starts);

  // Stops the process as kill -9 would when KUMO_RADOS_SPLIT_FAULT (or KUMO_RADOS_FAULT)
  // names this step: of a split ("intent", "copy", "publish", "cleanup"), of a write after
  // its partition's op and before its maintenance ("outbox"), of a write's maintenance
  // between its lease check and its ops ("maintenance"), of a transaction after its
  // record and before its ops ("transaction"), of a dropped table's removal after its
  // first partition object went ("drop"); for the fault tests. The step followed by
  // "-pause" stops it with SIGSTOP instead, once; followed by "-hold", it holds the thread
  // there, once, while the process goes on; followed by "-clock", it then waits, once,
  // until the engine's clock moved. Steps of reads: "item-read" (after a read of an item),
  // "check-read" (after a read of an item whose condition a transaction checks), "confirm"
  // (between two objects' confirmations).
  void fault_point(const char* step);

  void log(const std::string& message);
  void set_split_listener(SplitListener listener) override;
  void split_partition(std::uint32_t table, std::uint64_t token) override;

  // Splits partition `object` at `at`, or (nullopt) where about half of its keys lie on
  // each side; false when those all have one token. Runs under split_mutex_.
  bool split(const ObjectRef& object, std::optional<std::uint64_t> at = std::nullopt);

  // Sets a partition's range key (and with `remove_key` removes its split key), only while
  // its split key still holds `split`, the value the splitting front end set or the one
  // a finisher read: a front end paused past its lease within a split, which another ended
  // (and perhaps split the partition again since), changes nothing. False then.
  bool end_split(const ObjectRef& object, const std::string& range, const std::string& split,
                 bool remove_key);

  // Removes moved keys from a split partition, a chunk at a time, then its split key, each
  // step while the split key still holds `split` (as end_split).
  void remove_moved(const ObjectRef& object, const std::set<std::string>& keys,
                    const std::string& split);

  // Ends a split that a stopped process left in `object`: undone when its map was not
  // published (the new object removed), finished when it was (the moved keys removed).
  void finish_split(const ObjectRef& object);

  std::mutex recover_mutex_;  // one recovery at a time
  // Finishes what front ends that stopped mid-write left: transaction records, splits, then
  // each partition's outbox. At open (`known` null), also what was left before leases
  // were kept (naming no front end), and the partitions' ranges; later, only what front
  // ends found gone in `known` left. Removes the lease objects of those found gone.
  void recover(std::map<std::uint64_t, bool>* known = nullptr);

  // Applies and removes the outbox entries of `object` that `finish(owner)` says to (owner
  // nullopt: an entry from before leases).
  void recover_outbox(const ObjectRef& object,
                      const std::function<bool(std::optional<std::uint64_t>)>& finish);

  // Leases (rados_leases.cpp).
  static std::string lease_object(std::uint64_t instance);
  // Removes a front end's lease object, its entry in the catalog's list and the job claims
  // that name it.
  void forget_front_end(std::uint64_t instance);
  // Locks `instance`'s lease object as `cookie` for a lease's length (flags: renew).
  int lock_lease(std::uint64_t instance, std::uint64_t cookie, std::uint8_t flags);
  // Takes this front end's lease (drawing another instance if the one drawn is taken).
  void take_lease();
  // Fails (and has the lease thread go on under a new instance) when this front end's
  // lease may have lapsed: nothing is written under it any more.
  void check_lease();
  // The gap between two ticks that means the process was stopped (ns).
  std::int64_t tick_gap() const;
  void start_leases();
  void stop_leases();
  // Renews the lease every quarter of its length.
  void lease_loop();
  // Goes on under a new instance, lease and client.
  void renew_instance();
  // While this front end goes on under a new instance and client, or loads its catalog on
  // the new client, waits for that (a few seconds at most), then fails: the write was made
  // with the definitions held before.
  void await_client();
  // Whether the front end `owner` is gone: its lease lapsed, and this front end now holds
  // its lock. Remembered in `known`.
  // With `wait`, waits up to a lease's length for it to lapse.
  bool owner_gone(std::uint64_t owner, std::map<std::uint64_t, bool>* known, bool wait);
  // Each renewal of this front end's lease is followed by a count of them kept in its lease
  // object (kRenewalsKey): another front end that sees the count move knows it alive
  // without waiting for its lease to lapse. Nothing when the lease object is gone (taken
  // over: the count would bring it back).
  void note_renewal();
  // Front end `instance`'s count of renewals; nullopt when it keeps none.
  std::optional<std::uint64_t> renewals_of(std::uint64_t instance);
  // Finds the front ends whose leases lapsed and finishes their work.
  void take_over();

  // The tables that have a partition map, in order of id: every table that holds data.
  std::vector<std::uint32_t> mapped_tables();

  const std::string prefix_;  // namespace of the catalog, and start of every table's
  const std::string pool_, conf_;
  // How many clients were made before the current one, and the client on which the catalog
  // was last loaded: while the catalog was not loaded again on the current client, writes
  // fail (they would use definitions that may have changed while this one was cut off).
  std::atomic<std::uint64_t> generation_{0}, loaded_generation_{0};
  // Blocklists a front end's client (its address as listed in the catalog; nothing when it
  // recorded none), and waits until this client's map has the blocklist: every op of this
  // one sent after that reaches each OSD after the blocklist.
  void fence(std::uint64_t instance, const std::string& address);
  // The address listed for front end `instance` in the catalog (empty: none).
  std::string listed_address(std::uint64_t instance);
  // This front end's instance: it names its lease, records and split keys. Changes only
  // under layout_ held exclusively (renew_instance).
  std::atomic<std::uint64_t> instance_{0};
  const unsigned lease_seconds_;
  // Writes are allowed until then (steady clock, ns): two thirds of the lease after the
  // last renewal was sent.
  std::atomic<std::int64_t> lease_until_{0};
  std::atomic<bool> lease_lost_{false};
  // When the renewal in flight was sent (0: none); the tick thread's last tick, and when
  // it last saw a gap (the process was stopped).
  std::atomic<std::int64_t> renew_sent_{0}, last_tick_{0}, stall_seen_{0};
  // When the last renewal that succeeded was sent.
  std::atomic<std::int64_t> renewed_{0};
  std::atomic<std::uint64_t> renewals_{0};  // this lease's renewals, as note_renewal keeps them
  // The other front ends' renewal counts as live_processes last read them, and when each
  // was first read with that value (steady clock, ns).
  struct Renewals {
    std::optional<std::uint64_t> count;
    std::int64_t since = 0;
  };
  std::mutex renewals_mutex_;
  std::map<std::uint64_t, Renewals> seen_renewals_;  // (renewals_mutex_)
  std::thread lease_thread_, takeover_thread_, tick_thread_;
  std::mutex lease_mutex_;
  std::condition_variable lease_wake_;
  bool lease_stopping_ = false;  // (lease_mutex_)
  // Set once the recovery at open has run: until then the takeover thread leaves the
  // leases of other front ends alone. (Both would otherwise race for the lock of a front
  // end that just lapsed: the thread taking it first makes the other's lock call answer
  // that this process holds it already, and the open would serve before the work that
  // front end left is finished.)
  std::atomic<bool> opened_{false};
  // An op answered that a client is blocklisted: the lease is renewed at once (and fails
  // if this front end's client is the one).
  std::atomic<bool> renew_now_{false};
  std::atomic<std::uint64_t> next_delta_{1};
  // The number of the next item version this front end writes (after its instance).
  std::atomic<std::uint64_t> next_version_{1};
  // The engine's clock (set_clock); null: the system's.
  std::atomic<const Clock*> clock_{nullptr};
  std::int64_t now_ns() const;
  std::mutex mutex_;  // deltas_written_
  std::map<ObjectRef, int> deltas_written_;
  std::shared_mutex maps_mutex_;
  std::unordered_map<std::uint32_t, Starts> maps_;
  std::mutex records_mutex_;
  std::set<std::uint64_t> records_;
  struct Removal {
    std::uint64_t sequence = 0;
    librados::ObjectWriteOperation op;
    librados::AioCompletion* done = nullptr;
    std::shared_ptr<Connection> connection;  // (held until the removal completed)
  };
  std::mutex removals_mutex_;
  std::list<Removal> removals_;
  // Held exclusively while a transaction's ops are applied, shared by each snapshot.
  std::shared_mutex applying_;
  // Shared by each write, held exclusively by a split.
  std::shared_mutex layout_;
  const std::uint64_t partition_keys_;  // 0: no splits
  // KUMO_RADOS_FAULT: the steps a test stops the process at, comma-separated (`<step>`:
  // killed; `<step>-pause`: stopped, once per step; `<step>-clock`: held until the clock
  // moves, once per step).
  std::vector<std::string> faults_;
  std::mutex paused_mutex_;
  std::set<std::string> paused_;  // (paused_mutex_)
  // A test holds a write of an item (one made with a definition version) after the engine
  // took its table's definition and before its partition op, while this file exists
  // (KUMO_RADOS_HOLD_FILE).
  std::string hold_file_;
  // A thread held at a step (`<step>-hold`) goes on once the file <step> exists in this
  // directory (KUMO_RADOS_RELEASE_DIR), if one is given.
  std::string release_dir_;
  // Whether writes compare their definition version (KUMO_RADOS_FAULT=no-definition-guard
  // leaves it out, for the benchmark that measures what it costs).
  bool definition_guard_ = true;
  std::map<ObjectRef, std::int64_t> growth_;  // keys set since last counted (mutex_)
  std::set<ObjectRef> due_;                   // to be counted (mutex_)
  std::atomic<bool> split_due_{false};
  std::atomic<std::uint64_t> splits_published_{0};
  std::mutex split_mutex_;  // one split at a time
  SplitListener split_listener_;
  // Splits finished at open, reported to the listener once it is set.
  struct FinishedSplit {
    std::uint32_t table = 0;
    std::uint64_t token = 0, last = 0;
  };
  std::vector<FinishedSplit> finished_splits_;
  // Partitions' last stream record numbers, as last seen here (numbers_mutex_).
  std::mutex numbers_mutex_;
  std::map<ObjectRef, std::uint64_t> last_numbers_;
  // One write that numbers records of a partition at a time in this process (the others'
  // guards would fail on its number): by partition (numbers_mutex_).
  std::map<ObjectRef, std::unique_ptr<std::mutex>> numbering_;
  // The catalog watch.
  std::unique_ptr<CatalogWatch> watch_ctx_;
  std::uint64_t watch_handle_ = 0;
  std::shared_ptr<Connection> watch_connection_;  // the client the watch was set on
  bool watching_ = false;                         // (the watch thread's, once started)
  std::thread watch_thread_;
  std::mutex watch_mutex_;
  std::condition_variable watch_wake_;
  std::deque<Notice> notices_;   // (watch_mutex_)
  bool watch_stopping_ = false;  // (watch_mutex_)
  std::mutex listener_mutex_;    // held while the listener runs
  CatalogListener catalog_listener_;
  // Announcements sent and not yet released (announce_catalog).
  std::mutex announce_mutex_;
  // Each with the client it was sent on, held until it completed (announce_mutex_).
  std::vector<std::pair<librados::AioCompletion*, std::shared_ptr<Connection>>> announcements_;
};

}  // namespace kumo::storage::rados
