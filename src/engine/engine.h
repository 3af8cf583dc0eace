// Engine: the database. Owns the catalog of tables and performs item reads and writes on
// storage with per-item atomicity. Receives validated data; knows nothing of JSON or HTTP.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "capacity/manager.h"
#include "engine/backup_records.h"
#include "engine/catalog.h"
#include "engine/change_stream.h"
#include "engine/item_locks.h"
#include "engine/pitr_log.h"
#include "engine/transaction_tokens.h"
#include "model/attribute_value.h"
#include "model/clock.h"
#include "model/mutex.h"
#include "model/table.h"
#include "model/value_visitor.h"
#include "storage/storage.h"

namespace kumo::engine {

// How an engine read or write is metered (docs/capacity.md): the operation it serves
// (kNone: not metered at all), the factor its units are multiplied by (2 in a transaction),
// and whether Contributor Insights sees its keys (not for PartiQL).
struct Metering {
  capacity::Operation op = capacity::Operation::kNone;
  int factor = 1;
  bool insights = true;
  // The factor of index write units when it differs (ExecuteTransaction doubles only the
  // table's); 0: `factor`.
  int index_factor = 0;
};

// Where part of an index write went: the entry's storage key (its token at
// index_token_offset()), its write units, and the change of its partition's bytes (overhead
// included).
struct IndexWritePart {
  std::string key;
  double units = 0;
  std::int64_t bytes = 0;
};

// The tables whose meters the calling thread's current request used, so that the request's
// outcome (throttled, latency, errors) can be recorded on each once it is answered. Up to
// kMax tables are kept; a request touching more records on the first kMax.
class RequestScope {
 public:
  static constexpr std::size_t kMax = 8;
  // Starts a request: forgets the tables of the previous one.
  static void clear();
  static void touch(const std::shared_ptr<capacity::TableMeters>& meters);
  static std::span<const std::shared_ptr<capacity::TableMeters>> tables();
  // Items the request returned (CloudWatch's ReturnedItemCount).
  static void returned(std::size_t items);
  static std::size_t returned_items();
};

// Outcome of a single-item write.
struct WriteResult {
  std::optional<Item> old_item;  // the item before the write, when there was one
  std::optional<Item> new_item;  // the item after the write (absent after a delete)
  std::size_t old_size = 0;      // item_size of the old item (0 if none)
  std::size_t new_size = 0;      // item_size of the new item (0 after a delete)
  // Write units each secondary index consumed, for indexes the write touched.
  struct IndexUnits {
    std::string name;
    bool global = true;
    double units = 0;
    // The index's id, and where its units and bytes went: parts[0] the old entry (removed,
    // or deleted because its key changed), parts[1] the new entry (added or rewritten).
    // `key` is the entry's storage key (its token at index_token_offset()), empty when the
    // part is unused.
    std::uint32_t id = 0;
    using Part = IndexWritePart;
    std::array<Part, 2> parts{};
  };
  std::vector<IndexUnits> index_units;
};

// An index's write units for one base write, split over the entry it removes (`old_key`,
// nullopt when none) and the one it puts (`new_key`): a moved entry is a delete plus a put,
// a rewritten one a put of its new size; `units` is their sum.
WriteResult::IndexUnits index_write(const IndexDefinition& index, double units,
                                    std::optional<std::string> old_key, std::size_t old_size,
                                    std::optional<std::string> new_key, std::size_t new_size);

// Decides, under the item's lock, what a write does to the current item (nullopt when
// absent): returns the item to store, or nullopt to delete it. It may throw (a failed
// condition, an invalid update) to abort the write; nothing is written then. It is called
// again, on the item read again, when the write meets another front end's write of the
// item (storage::WriteConflict), so it must not consume what it decides from.
using ItemMutation = std::function<std::optional<Item>(const std::optional<Item>& current)>;

// A condition on the sort key of a Query: =, <, <=, >, >=, BETWEEN or begins_with.
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
  // Bytes read at which the page stops (DynamoDB stops a Query or Scan page at 1 MB of
  // items, stored sizes before projection and filter); a read that spans several Queries
  // gives each what is left.
  std::size_t max_bytes = 1 << 20;
  // Resume strictly after this key (the table's key attributes), if given.
  std::optional<Item> exclusive_start_key;
  // A strongly consistent read (capacity: 1 unit per 4 KB instead of 0.5).
  bool consistent = false;
};

// An item (or index entry) as storage holds it, with its size. It can be read without
// being built (visit: the calls visit_item makes), which is what a response needs, or
// built (decode). Both throw storage::StorageError if the stored bytes are corrupt.
class StoredItem {
 public:
  // The item stored as `bytes` (codec::encode_item), measured; nullopt if they are corrupt.
  static std::optional<StoredItem> from_bytes(std::string_view bytes);
  Item decode() const;
  void visit(ValueVisitor& visitor) const;
  // The item's size as DynamoDB counts it (item_size).
  std::size_t size() const { return size_; }

 private:
  StoredItem(std::string bytes, std::size_t size) : bytes_(std::move(bytes)), size_(size) {}
  std::string bytes_;
  std::size_t size_;
};

// One page of a Query or Scan, read from one storage snapshot. `items` are every item
// evaluated, before any filter; `last_evaluated_key` is set when the page stopped early
// (Limit or the 1 MB page size), as DynamoDB sets it without looking ahead.
struct Page {
  std::vector<StoredItem> items;
  std::size_t bytes_read = 0;  // Σ item sizes, for capacity
  std::optional<Item> last_evaluated_key;
  // Bytes read per partition key token, in reading order (metered reads only).
  std::vector<capacity::TokenBytes> by_partition;
};

// Lowers the calling thread's CPU priority (Linux keeps a nice value per thread): a job
// that copies or loads a table in bulk (a backup's copy, a restore, an export, an import)
// runs on what the requests' threads leave of the CPU.
void lower_job_priority();

// What a transaction's own batch carries besides its writes: called with the results (each
// write's item before and after) once they are known, before the batch is written, it adds
// expectations and writes of its own, which hold exactly when the transaction does (a
// ClientRequestToken's outcome: TransactionTokens::seal).
using TransactionSeal =
    std::function<void(const std::vector<WriteResult>& results, storage::WriteBatch* batch)>;

// One item of a multi-item write (TransactWriteItems).
struct TransactWrite {
  const TableDefinition* table = nullptr;
  std::string storage_key;  // Engine::item_key of the item
  ItemMutation mutation;    // as for write_item; ignored (may be empty) when check_only
  // Condition checks only: `check` runs on the current item and nothing is written.
  std::function<void(const std::optional<Item>& current)> check;
  bool check_only = false;
};

// One item of a multi-item read (TransactGetItems).
struct TransactGet {
  const TableDefinition* table = nullptr;
  Item key;
};

struct EngineOptions {
  // Bytes at which an item collection — the items sharing a partition key in a table with
  // LSIs, plus their LSI entries — is full (DynamoDB: 10 GB).
  std::uint64_t item_collection_limit = std::uint64_t{10} << 30;
  // Seconds between two passes of the TTL reaper over the expiry schedule.
  double ttl_interval = 1.0;
  // Seconds a stream record is kept, and a closed stream listed (DynamoDB: 24 hours).
  double stream_retention = 86400;
  // Runs the TTL reaper and stream trimming in a background thread, started once a table
  // has TTL or a stream (a server with neither starts without it). Off (tests, fuzzing):
  // nothing happens unless the caller calls expire_items() or streams().trim().
  bool background_maintenance = true;
  // The clock capacity rules run on; null: the wall clock (a SystemClock the engine owns).
  const Clock* clock = nullptr;
  // Set when the clock is manual (kumo serve --clock manual): advance_clock moves it.
  ManualClock* manual_clock = nullptr;
  // Meters and throttling; null when capacity is off (kumo serve --capacity off).
  capacity::CapacityManager* capacity = nullptr;
  // The account's provisioned throughput quota: the read (write) capacity units of every
  // provisioned table and its GSIs together may not exceed it (DynamoDB: 80,000 each), and
  // the region its refusal names. 0: no quota.
  std::int64_t account_quota_read = 80000, account_quota_write = 80000;
  std::string region = "us-east-1";
  // CreateBackup copies a table of at most this many bytes (TableSizeBytes) before it
  // answers; a larger one is copied by a background job.
  std::uint64_t backup_sync_bytes = std::uint64_t{1} << 20;
  // Restores from backups that may run at once (DynamoDB: 50 per account).
  std::size_t restore_limit = 50;
  // Exports to S3 (DynamoDB: 300 tasks per account) and imports from it (50 per account)
  // that may run at once.
  std::size_t export_limit = 300, import_limit = 50;
  // Seconds LatestRestorableDateTime stays behind the engine's time (DynamoDB: about 5
  // minutes).
  double pitr_lag = 300;
};

// One change of an item in a point-in-time recovery log: its key, its image after the
// change (nullopt: deleted) and the change's commit time.
struct PitrChange {
  Item key;
  std::optional<Item> new_image;
  std::int64_t time_us = 0;
};

// What a restore from a backup meets when it starts, for the caller to refuse it: the
// backup (null when there is none), the table that already has the target's name (null:
// none), the table being restored from this backup (null: none), and how many restores are
// running.
struct RestoreCheck {
  const Backup* backup = nullptr;
  TablePtr target;
  TablePtr using_backup;
  std::size_t running = 0;
};

// The tokens at which partitions of `after` start that no partition of `before` (null:
// none) starts at, 0 excepted.
std::vector<std::uint64_t> new_boundaries(const PartitionMap* before, const PartitionMap& after);

class Engine {
 public:
  // Resumes the backfill of any index a previous run left unfinished.
  explicit Engine(std::unique_ptr<storage::Storage> storage, EngineOptions options = {});
  // Stops background work and waits for it.
  ~Engine();

  // Read-only: tables change through create_table, update_table and delete_table, which
  // keep streams, the TTL schedule and background work in step with the catalog.
  const Catalog& catalog() const { return catalog_; }
  // The table named `name`; when this process does not know it and other processes share
  // the storage, the catalog is loaded again first if it changed there (another front end
  // created the table and this one has not reloaded yet: DynamoDB finds a table once
  // CreateTable returned). Null when there is no such table.
  TablePtr find_table(std::string_view name);
  // In this process's memory, or in the storage when other processes share it.
  TransactionTokens& transaction_tokens() { return *tokens_; }
  ChangeStreams& streams() { return streams_; }
  const ChangeStreams& streams() const { return streams_; }
  const EngineOptions& options() const { return options_; }
  const Clock& clock() const { return *clock_; }
  // Null when capacity is off.
  capacity::CapacityManager* capacity() const { return options_.capacity; }
  // Moves the manual clock forward by `seconds` and runs, on the calling thread, every
  // per-second capacity tick it crosses and what they decide, so that everything due has
  // happened when it returns. Returns the clock's new time in epoch seconds. Throws
  // std::logic_error when the clock is not manual.
  double advance_clock(double seconds);
  // Splits a partition as the per-second tick planned it: at `plan.at`, or where the
  // partition's bytes reach half (a walk of its range). Stores the new map and the split
  // log in the catalog, then hands the definition to the capacity manager. Does nothing
  // when the partition is gone, cannot split (one partition key) or the resource has the
  // most partitions allowed.
  void split_partition(const capacity::SplitPlan& plan);

  // Table lifecycle, as Catalog::create/update/remove, keeping the change streams and the
  // TTL schedule in step: enabling a stream opens a new one, disabling it or deleting the
  // table closes it; enabling TTL schedules the items already there, disabling it drops
  // the schedule.
  TablePtr create_table(TableDefinition definition);
  TablePtr update_table(std::string_view name, const std::function<void(TableDefinition&)>& change);
  TablePtr delete_table(std::string_view name);

  // On-demand backups (backups.cpp, docs/backups.md). A backup is a record under
  // meta/backup/<id> and a copy of the table's items under a table id no table has.
  //
  // Backs up `table`: stores its record (CREATING) and copies the items as they are now, from
  // one storage snapshot (on a storage that other processes share, which has no snapshot
  // across its partitions, item by item while writes go on). A table of at most
  // backup_sync_bytes is copied before this returns, and the backup is AVAILABLE then; a
  // larger one by a background job. Throws TableNotFoundException when the table is gone
  // or still being restored.
  Backup create_backup(const TableDefinition& table, std::string name,
                       BackupType type = BackupType::kUser);
  // The backup with this id, or nullopt.
  std::optional<Backup> find_backup(std::string_view id) const;
  // Every backup, in id order (creation time).
  std::vector<Backup> list_backups() const;
  // Deletes the backup with this id and its copy of the items. `check` is called first
  // with the record (null when there is none) and the table being restored from it (null:
  // none), and throws to refuse. Returns the record deleted.
  Backup delete_backup(
      std::string_view id,
      const std::function<void(const Backup* backup, const TablePtr& restoring)>& check);
  // Restores a backup into a new table named `target_name`: `plan` is called with what the
  // restore meets (the backup, the table of that name, ...) and throws to refuse, or returns
  // the new table's definition, whose `restore` must be set. The table is created CREATING and a
  // background job writes the backup's items into it through the write path (indexes and
  // counters as for any write); then the table turns ACTIVE. Checks and creation hold one
  // lock, so two restores of one backup cannot both start.
  TablePtr restore_table(std::string_view backup_id, std::string_view target_name,
                         const std::function<TableDefinition(const RestoreCheck&)>& plan);

  // Point-in-time recovery (pitr.cpp, docs/backups.md). A table with recovery enabled
  // keeps a log of every committed write of an item (pitr_log.h), starting with the items
  // present when it was enabled; the maintenance pass trims what falls out of the window.
  //
  // Enables (`enable`, with RecoveryPeriodInDays `period_days`, nullopt: 35 when enabling,
  // unchanged when already enabled) or disables point-in-time recovery on the table, and
  // returns its definition. Enabling answers at once: a background job writes the items
  // present into the log (base_pending until it is done; reads of the log wait for it);
  // disabling forgets the log and the period. Throws TableNotFoundException when
  // the table is missing or still being restored.
  TablePtr update_pitr(std::string_view name, bool enable, std::optional<int> period_days);
  // The restorable window of `table` now (on the engine's clock, with pitr_lag), or nullopt
  // when the table is missing or its point-in-time recovery is off.
  std::optional<PitrWindow> pitr_window(const std::string& table) const;
  // The same for a definition.
  std::optional<PitrWindow> pitr_window(const TableDefinition& table) const;
  // Calls `visit` with every item of `table` as it was at `time_ms` (epoch milliseconds;
  // every write committed in that millisecond or before counts), in token order; stops when
  // `visit` returns false. False when `visit` stopped it, or when the table is missing or
  // has point-in-time recovery off (nothing visited). The caller keeps time_ms within the
  // window: outside it the answer is what the log holds, not the table's past.
  bool read_table_at(const std::string& table, std::int64_t time_ms,
                     const std::function<bool(const Item& item)>& visit) const;
  // Calls `visit` with the last change in (from_ms, to_ms] of each item changed then, in
  // token order; as read_table_at otherwise.
  bool changes_between(const std::string& table, std::int64_t from_ms, std::int64_t to_ms,
                       const std::function<bool(const PitrChange& change)>& visit) const;
  // Restores table `source` as it was at `time_ms` into a new table named `target_name`:
  // `plan` is called, under the backups lock, with the source's current definition (null
  // when missing or still being restored), its window (nullopt: recovery off) and what the
  // restore meets (the table of the target's name, the restores running), and throws to
  // refuse or returns the new table's definition, whose `restore` must name the source.
  // The table is created CREATING; the restore job writes the items as they were at
  // `restore->restore_date_time`, then the table turns ACTIVE.
  TablePtr restore_table_to_time(
      std::string_view source, std::string_view target_name,
      const std::function<TableDefinition(const TablePtr& source,
                                          const std::optional<PitrWindow>& window,
                                          const RestoreCheck& check)>& plan);
  // Drops from the logs of the tables with point-in-time recovery what lies before their
  // windows (the maintenance pass calls it). Returns the records removed.
  std::size_t trim_pitr_logs();
  // Deletes the SYSTEM backups whose BackupExpiryDateTime has passed on the engine's clock
  // (the maintenance pass calls it), except one feeding a restore. Returns how many.
  std::size_t expire_system_backups();
  // Exports to S3 and imports from it (api/exports.cpp, api/imports.cpp,
  // docs/data-movement.md). Their records live under meta/export/ and meta/import/ of the
  // storage; their jobs run as background workers of the engine, which outlives the service.
  storage::Storage& storage() const { return *storage_; }
  bool stopping() const { return stopping_; }
  // What a job writing in bulk (an import, a backup's copy, a restore) calls between its
  // batches: waits while the storage is behind with its flushes and compactions
  // (Storage::behind), for at most a second, or until the engine stops. The requests' writes
  // then never meet the write stall that the job's own writes would cause.
  void pace_bulk_writes() const;
  // Runs `work` on a background thread named `name` (at most 15 characters); the engine
  // waits for it when it stops, and stopping() tells it to end early.
  void start_job(const char* name, std::function<void()> work) {
    start_worker(name, std::move(work));
  }
  // The KUMO_BACKUP_FAULT hook for the jobs of exports and imports ("export", "import"):
  // called after a job went from `before` to `after` items.
  void data_job_fault(std::string_view job, std::size_t before, std::size_t after) {
    job_fault(job, before, after);
  }
  // Makes the table being imported (its `restore` marks an import) ACTIVE, when it is still
  // the table with id `id`. Returns it, or null when it is gone.
  TablePtr finish_import(const std::string& name, std::uint32_t id);
  // An export's or import's job ("export/<id>", "import/<id>") claimed for this process, as
  // a backup's copy is (Storage::claim_job, and once per process): false when it runs here
  // already or another live process holds it. release_data_job gives it back (`done`: in
  // the storage too; otherwise the claim stays until this process stops).
  bool claim_data_job(const std::string& name) { return claim_backup_job(name); }
  void release_data_job(const std::string& name, bool done) { release_backup_job(name, done); }
  // On a storage several processes share, the maintenance thread calls `hook` every 2 s
  // (with the backups' jobs): the exports and imports of a process that stopped are
  // looked for there. Null: none.
  void set_data_job_hook(std::function<void()> hook) KUMO_EXCLUDES(data_job_hook_mutex_);

  // Deletes every item whose TTL attribute is a number of epoch seconds before `now` and
  // not more than five years before it, as a service deletion (REMOVE stream record with
  // the service's identity). The background reaper calls it every ttl_interval. Returns
  // the number of items deleted.
  std::size_t expire_items(double now);

  // Reads the item whose storage key is `storage_key` (item_key of the item or its key),
  // applies `mutation` and stores its outcome, atomically with respect to every other
  // write of that item.
  // Metered (docs/capacity.md): admitted before the item's lock is taken, each GSI the
  // write changes admitted under it before anything is written (a refusal throws the
  // throttling ApiError), charged after the commit. A failed condition charges what
  // DynamoDB charges for it: the current item's write units, 1 when absent.
  WriteResult write_item(const TableDefinition& table, const std::string& storage_key,
                         const ItemMutation& mutation, const Metering& metering = {});
  // All or nothing: locks every item (in a global order, so no deadlock), runs every check
  // and mutation on the current items, and commits all changes in one batch when none
  // threw. Otherwise writes nothing and returns false with `failures[i]` holding what
  // write i threw (null for those that passed). Results are in request order.
  // A throttle refusing an action is that action's failure. `seal`, when given, adds to the
  // batch (a batch of checks only is then written too, its items expected as read).
  bool transact_write(const std::vector<TransactWrite>& writes, std::vector<WriteResult>* results,
                      std::vector<std::exception_ptr>* failures, const Metering& metering = {},
                      const TransactionSeal& seal = {});
  // The items with these keys, read from one snapshot (nullopt where absent). Reading stops
  // at the item that takes their total size (item_size) past `max_bytes`: that item is the
  // last one returned.
  // Metered: every get is admitted before anything is read; when one is refused nothing
  // is read, `failures` (when given) holds the refusal at its position (null elsewhere)
  // and the result is empty.
  std::vector<std::optional<Item>> transact_get(
      const std::vector<TransactGet>& gets, std::size_t max_bytes, const Metering& metering = {},
      std::vector<std::exception_ptr>* failures = nullptr) const;

  // The identity of the item whose key attributes `item_or_key` carries, within the whole
  // store: two writes address the same item exactly when their keys are equal.
  std::string item_key(const TableDefinition& table, const Item& item_or_key) const;

  // Replaces (or creates) the item whose key attributes `item` carries.
  WriteResult put_item(const TableDefinition& table, Item item, const Metering& metering = {});
  // The item with `key` (exactly the table's key attributes), or nullopt. Metered reads
  // are admitted before storage is read and charged after.
  std::optional<Item> get_item(const TableDefinition& table, const Item& key,
                               bool consistent = false, const Metering& metering = {}) const;
  // The same, as stored: for a response, which needs it written rather than built.
  std::optional<StoredItem> get_stored(const TableDefinition& table, const Item& key,
                                       bool consistent = false,
                                       const Metering& metering = {}) const;
  // Deletes the item with `key`; deleting an absent item succeeds.
  WriteResult delete_item(const TableDefinition& table, const Item& key,
                          const Metering& metering = {});
  // Charges the table for `bytes` of items a Query or Scan of a local secondary index
  // fetched from the table for attributes the index does not project (read units of the
  // sum), on the partition the page read.
  void charge_read(const TableDefinition& table, const Page& page, std::size_t bytes,
                   bool consistent, const Metering& metering) const;

  // The entries of one index partition: equality on every HASH component (`hash`, in
  // schema order), equality on the first `range_equal.size()` RANGE components, then `sort`
  // on the next one. Entries come in index order (RANGE tuple, then table key) and carry
  // the index's projection.
  Page query_index(const TableDefinition& table, const IndexDefinition& index,
                   const std::vector<AttributeValue>& hash,
                   const std::vector<AttributeValue>& range_equal, const SortCondition& sort,
                   const PageOptions& options, const Metering& metering = {}) const;
  // Segment `segment` of `total_segments` of an index, in token order.
  Page scan_index(const TableDefinition& table, const IndexDefinition& index, std::uint32_t segment,
                  std::uint32_t total_segments, const PageOptions& options,
                  const Metering& metering = {}) const;
  // Starts writing, in the background, the entries of a newly added index for every item
  // already in the table; marks the index ACTIVE (backfilling false) when done. Writes to
  // the table meanwhile maintain the index themselves. On a storage other processes share,
  // only the process that claims the backfill (Storage::claim_job) runs it; the others
  // claim it once that process is gone (resume_backfills).
  void start_backfill(const std::string& table_name, std::uint32_t index_id);
  // The backfill's claim (Storage::claim_job), taken by the front end that creates the
  // index before the catalog change that makes it, and released if that change fails. On
  // shared storage the others then never start it while this front end lives: it starts
  // only once the change was announced to every front end and each loaded it. One that
  // backfilled an item while another front end still wrote without the index could leave
  // an entry of the item's old value. True when claimed (always, on a local back end).
  bool claim_backfill(std::uint32_t table_id, std::string_view index_name);
  void release_backfill(std::uint32_t table_id, std::string_view index_name);
  // Starts the backfill of every index still backfilling that no process runs.
  void resume_backfills();
  // Claims the removal of dropped table `id`'s data (the job "drop/<id>"): false when it
  // runs in this process already or another process holds it.
  bool claim_drop(std::uint32_t id) KUMO_EXCLUDES(drops_mutex_);
  // Gives back a claim of claim_drop whose table was not dropped after all.
  void unclaim_drop(std::uint32_t id) KUMO_EXCLUDES(drops_mutex_);
  // Removes the data of a dropped table whose removal this process claimed, then its record
  // and the claim. Throws if the storage fails; the record stays, and the removal is done
  // again (resume_drops).
  void run_drop(std::uint32_t id, const std::string& name) KUMO_EXCLUDES(drops_mutex_);
  // Starts the removal of every dropped table's data that no process runs: one whose
  // process stopped midway (on a shared storage, once its lease lapsed).
  void resume_drops();
  // On a shared storage, each table's TTL reaping is a job ("ttl/<table id>") that one
  // process holds: gives back the claims of tables dropped or without TTL, and spreads the
  // tables with TTL over the live processes by weight (ttl_weight): every process computes
  // the same spread (tables heaviest first, each to the process with the least weight so
  // far, ties to the lowest id), claims the tables the spread gives it that no live process
  // holds (or that are handed to it), and hands those the spread gives another process
  // over to it (this one reaps them until the other holds them: a table always has a
  // reaper).
  void balance_ttl_jobs() KUMO_EXCLUDES(ttl_jobs_mutex_);
  // A table's weight in the spread of TTL jobs: its item count, one more so that an empty
  // table counts, kept to its three highest bits so that the counts of a table under write
  // load, read at other moments by each process, give every process the same weight.
  std::int64_t ttl_weight(const TableDefinition& table) const;
  // Whether this process reaps the table: on a local back end always, on a shared one when
  // it holds the table's TTL job.
  bool reaps(std::uint32_t table_id) KUMO_EXCLUDES(ttl_jobs_mutex_);
  // Gives back the table's TTL job if this process holds it (TTL disabled, table dropped).
  void release_ttl_job(std::uint32_t table_id) KUMO_EXCLUDES(ttl_jobs_mutex_);
  // Deletes every entry of index `index_id` of the table.
  void drop_index(const TableDefinition& table, std::uint32_t index_id);
  // Backups' and restores' jobs (backups.cpp).
  // Copies the items of table `copy.source_id` (read at `snapshot`, null: the latest) into
  // the data id of backup `id`, then marks the backup AVAILABLE. Returns false when the
  // engine stopped first (the copy is made again at the next start). A backup deleted
  // meanwhile has its copy removed instead.
  bool copy_backup(const std::string& id, BackupCopy copy, const storage::Snapshot* snapshot);
  // Runs copy_backup in a background job ("backup/<id>" on a storage others share).
  void start_copy(const std::string& id, BackupCopy copy,
                  std::shared_ptr<storage::Snapshot> snapshot, bool again);
  // Removes the copy of a backup whose record is gone.
  void discard_backup_copy(const std::string& id, std::uint32_t data_id);
  // Whether a backup still copies the items of table `table_id` (its data must stay).
  bool backup_copies_from(std::uint32_t table_id) KUMO_REQUIRES(backups_mutex_);
  // Starts the restore job of the table (table id `id`) being restored.
  void start_restore(const std::string& name, std::uint32_t id);
  // Writes the backup's items into the table being restored, from where a previous run
  // stopped; marks it ACTIVE when done. False when stopped first.
  bool run_restore(const std::string& name, std::uint32_t id);
  // A restore that cannot be done: its table is deleted.
  void fail_restore(const std::string& name, std::uint32_t id, const std::string& why);
  // Makes the restored table `name` (id `id`) ACTIVE, then removes the restore's stored
  // position `progress`.
  void finish_restore(const std::string& name, std::uint32_t id, const std::string& progress);
  // The copies of CREATING backups made again, the restores in progress resumed: at start,
  // and on a storage that others share each time their jobs are looked for (those of a
  // process that stopped).
  void resume_backup_jobs();
  // Claims job `name` for this process: false when it runs here already or another process
  // holds it. release_backup_job gives it back (`done`: in the storage too).
  bool claim_backup_job(const std::string& name) KUMO_EXCLUDES(backup_jobs_mutex_);
  void release_backup_job(const std::string& name, bool done) KUMO_EXCLUDES(backup_jobs_mutex_);
  // The tables being restored (with `restore` set).
  std::vector<TablePtr> restoring_tables() const;
  // Point-in-time recovery (pitr.cpp).
  // Writes the items present when recovery was enabled into the log (records at the enable
  // time, for the items that have none there yet), then clears base_pending. False when
  // stopped, or the table changed meanwhile.
  bool write_pitr_base(const std::string& name, std::uint32_t id);
  // Runs write_pitr_base in the background (job "pitr_base/<table id>", claimed once across
  // the processes sharing the storage) until the table has no base pending.
  void start_pitr_base(const std::string& name, std::uint32_t id);
  // Starts the base of every table whose base is pending (at the engine's start, and on a
  // shared storage each time jobs of stopped processes are looked for).
  void resume_pitr_bases();
  // Waits until the base of `table`, enabled at `since`, is written: false when recovery
  // was disabled (or enabled anew) or the table deleted meanwhile, or the engine stops.
  bool wait_pitr_base(const std::string& table, double since) const;
  // Adds to `batch` the log records of a write to a table with point-in-time recovery.
  void add_pitr_record(const TableDefinition& table, const std::string& storage_key,
                       const WriteResult& result, storage::WriteBatch* batch) const;
  // Calls `group` with each item's log records (key and value, in time order) from `from`
  // to the end of the log of table `table_id`; `start` is the first key of the group.
  // Stops when `group` returns false (then returns false).
  using PitrGroup = std::function<bool(
      std::string_view start, const std::vector<std::pair<std::string, std::string>>& records)>;
  bool walk_pitr_log(std::uint32_t table_id, const std::string& from, const PitrGroup& group) const;
  // The item a group of records gives at `time_us`, ignoring records before `since_us`:
  // the stored item of the last record at or before the time, or nullopt (absent).
  static std::optional<std::string> pitr_state_at(
      std::uint32_t table_id, const std::vector<std::pair<std::string, std::string>>& records,
      std::int64_t since_us, std::int64_t time_us);
  // The point-in-time restore job of table `id`: writes the source's items as they were at
  // the restore time, from where a previous run stopped. False when stopped first.
  bool run_pitr_restore(const std::string& name, std::uint32_t id);
  // KUMO_BACKUP_FAULT=<copy|restore>-<kill|hold>:<n>: once a copy or restore job has written
  // n items, the process is killed (as kill -9 would), or the job waits until the engine
  // stops or the file KUMO_BACKUP_FAULT_RELEASE names exists. For tests of a job in progress
  // and of what a stop in the middle of one leaves.
  void job_fault(std::string_view job, std::size_t before, std::size_t after);

  // The items of one partition whose sort key satisfies `sort`, in sort-key order.
  // Query and Scan pages are metered as reads of the table (or of the GSI) admitted at the
  // partition they start in, charged by the bytes read in each partition.
  Page query(const TableDefinition& table, const AttributeValue& partition,
             const SortCondition& sort, const PageOptions& options,
             const Metering& metering = {}) const;
  // Segment `segment` of `total_segments` of the table, in token order (the whole table
  // for 0 of 1). Segments are token ranges, so each item lies in exactly one.
  Page scan(const TableDefinition& table, std::uint32_t segment, std::uint32_t total_segments,
            const PageOptions& options, const Metering& metering = {}) const;
  // The segment (of `total_segments`) that holds the item with this key.
  std::uint32_t segment_of(const TableDefinition& table, const Item& key,
                           std::uint32_t total_segments,
                           const IndexDefinition* index = nullptr) const;

  // Items currently stored in the table and their total size (item sizes + 100 bytes
  // per item, as DynamoDB's TableSizeBytes counts).
  std::int64_t item_count(const TableDefinition& table) const;
  std::int64_t table_size_bytes(const TableDefinition& table) const;
  // Entries in an index and their total size (entry sizes + 100 bytes each, as DynamoDB's
  // IndexSizeBytes counts).
  std::int64_t index_item_count(const TableDefinition& table, const IndexDefinition& index) const;
  std::int64_t index_size_bytes(const TableDefinition& table, const IndexDefinition& index) const;

 private:
  // Reads [lower, upper) of the table's items (index null) or of an index's entries from
  // a snapshot, in the requested direction, into a page.
  Page read_range(const TableDefinition& table, const IndexDefinition* index, std::string lower,
                  std::string upper, const PageOptions& options, const Metering& metering) const;

  // Capacity (metering.cpp, partitions.cpp). The resource a metered access of the table
  // (index_id 0, or an LSI) or of a GSI goes to; null when unmetered.
  capacity::ResourceMeter* meter(const TableDefinition& table, std::uint32_t index_id,
                                 const Metering& metering) const;
  // Check 1 of a read or write of `key` (an item's storage key, or a GSI entry's when
  // `index` is given): throws the throttle when refused.
  void admit(capacity::ResourceMeter* resource, const TableDefinition& table,
             const IndexDefinition* index, std::string_view key, capacity::Dir dir,
             capacity::Milli min, const Metering& metering) const;
  // Check 2 of a base write: each GSI whose entry the write adds, removes or rewrites.
  void admit_indexes(const TableDefinition& table, const WriteResult& result,
                     const Metering& metering) const;
  // Charges a committed write (its base, LSI and GSI units) and moves partition bytes;
  // `table` is the definition the write's index changes were computed with.
  void charge_write(const TableDefinition& table, const std::string& storage_key,
                    const WriteResult& result, const Metering& metering) const;
  // Charges the write units of a failed condition on `current` (1 when absent).
  void charge_failed_condition(const TableDefinition& table, const std::string& storage_key,
                               std::size_t current_size, const Metering& metering) const;
  // Charges a single-item read of `bytes`.
  void charge_item_read(capacity::ResourceMeter* resource, const TableDefinition& table,
                        std::string_view storage_key, std::size_t bytes, bool consistent,
                        const Metering& metering) const;
  // Charges a page's read units over the partitions it read; `cutter` cuts the keys it read
  // for the key statistics (none: not logged).
  void charge_page(capacity::ResourceMeter* resource, const Page& page, std::size_t bytes,
                   bool consistent, const Metering& metering,
                   capacity::KeyCutter cutter = {}) const;
  // How the keys of `index` (null: the table's items) are cut for the key statistics.
  static capacity::KeyCutter key_cutter(const TableDefinition& table, const IndexDefinition* index);
  // Gives the table and each GSI the partitions they need: at creation (and when loaded
  // without a map) a fresh map; with `grow`, after UpdateTable, maps for new GSIs and
  // doubling where raised throughput needs more.
  void fit_partitions(TableDefinition& table, bool grow) const;
  // Meters for a table being created or loaded; nothing when capacity is off.
  void attach_meters(TableDefinition& table) const;
  // Hands a changed definition to the capacity manager; returns it.
  TablePtr configure_meters(TablePtr table) const;
  // Feeds the capacity manager the bytes stored in each partition of every table.
  void walk_partition_sizes();
  // What the last tick decided: splits, and on-demand peak raises to store.
  void run_capacity_plans();
  // The kumo-capacity thread: ticks each whole second of the wall clock.
  void run_capacity_clock();
  // Walks [first, end) of the table's (index_id 0) or GSI's tokens, appending the bytes of
  // each token (sizes + 100 per item or entry) to `runs`; returns the total.
  std::uint64_t partition_walk(const TableDefinition& table, std::uint32_t index_id,
                               std::uint64_t first, std::optional<std::uint64_t> end,
                               std::vector<capacity::TokenBytes>* runs) const;
  // Writes every existing item's entry of the index; false if stopped or the table/index
  // went away first.
  bool backfill(const std::string& table_name, std::uint32_t index_id);
  // Calls `visit` with every item of the table, each re-read under its lock; stops when
  // `visit` returns false, the engine stops or the table goes away (then returns false).
  // With `workers` above 1, that many threads visit the items of each page at once (in no
  // order): `visit` must be safe to call from several threads.
  using ItemVisitor =
      std::function<bool(const TableDefinition& table, const std::string& key, const Item& item)>;
  // `from`: the walk starts at that key (a walk cut short resumes there); `page_done` is
  // called after each page with the key the walk goes on from.
  bool walk_items(const std::string& table_name, std::uint32_t table_id, const ItemVisitor& visit,
                  std::size_t workers = 1, std::string from = {},
                  const std::function<void(const std::string& next)>& page_done = {});
  // walk_items' visit of one page of item keys; false when `visit` returned false.
  bool visit_page(const TableDefinition& table, const std::vector<std::string>& keys,
                  const ItemVisitor& visit, std::size_t workers);
  // Adds to the TTL schedule every item written before TTL was enabled, then marks the
  // table's schedule complete. A job ("ttl-scan/<table id>") that one process runs (others
  // sharing the storage do nothing), recording how far it went after each page: a scan
  // whose process stopped midway is resumed from there by the process that claims it next
  // (resume_ttl_scans). `again`: TTL was enabled anew, and the scan starts from the first
  // item.
  void start_ttl_scheduling(const std::string& table_name, bool again = false);
  // Starts the scans of tables whose schedule is not complete that no process runs.
  void resume_ttl_scans();
  // Removes a table's scan progress and gives back its scan job (TTL disabled, or enabled
  // anew, the table dropped, or its scan done).
  void forget_ttl_scan(std::uint32_t table_id);
  // Deletes the item under `key` if it is still expired at `now`; removes the schedule
  // entry `entry` when it no longer matches the item.
  bool expire_item(const TableDefinition& table, const Item& key, const std::string& entry,
                   double now);
  // The background loop: TTL reaper and stream trimming, until the engine stops.
  void maintain();
  // Loads the catalog again: another front end sharing the storage changed it. The
  // streams too, unless `streams` is false (the caller may hold their lock).
  void reload_catalog(bool streams = true);
  // Tells the other processes sharing the storage that a stream changed (opened, closed,
  // a shard split), once it is stored: they load the streams again.
  void announce_streams();
  // Starts the maintenance thread unless it runs already (or background_maintenance is off).
  void start_maintenance();
  // Runs `work` on a new thread named `name` (at most 15 characters), after joining the
  // workers that have finished, so that a finished one holds no stack for long.
  void start_worker(const char* name, std::function<void()> work);
  // The table's current definition when it is still the same table (indexes may have been
  // added or dropped since `table` was read), else `table` itself. Called under the item's
  // lock, so a write and a backfill never miss each other.
  TablePtr current(const TableDefinition& table) const;
  // Before a write refused for its table's old definition is made again: loads the
  // catalog (the write then takes the table's new definition, or finds it dropped).
  void redo_with_new_definition(const TableDefinition& table,
                                const storage::DefinitionChanged& stale, int attempt);
  // A write of one item, waiting in a batch for commit().
  struct Change {
    TablePtr table;  // the table's definition when the write was prepared; null if deleted
    const WriteResult* result = nullptr;
    bool by_service = false;  // a TTL deletion
    // The TTL schedule entry the write adds, when it adds one.
    std::string ttl_entry;
  };
  // Adds to `batch` the item write and the counter, index and TTL schedule changes of
  // `result`; returns the change for commit().
  Change add_write(const TableDefinition& table, const std::string& storage_key,
                   WriteResult& result, storage::WriteBatch* batch) const;
  // Commits `batch` with the stream records of `changes` (tables whose stream is open).
  void commit(storage::WriteBatch& batch, const std::vector<Change>& changes);
  // The table's partitions split at `token` (its capacity partitions, or the storage's own):
  // the open shard of its stream that holds the token splits there too. `last`: the
  // storage's last record number of the partition, when the storage numbers records.
  void note_partition_split(std::uint32_t table_id, std::uint64_t token,
                            std::optional<std::uint64_t> last = std::nullopt);
  // Splits the shards of the storage's unnoted partition splits (Storage::unnoted_splits)
  // and tells the storage they are noted. Called after a commit once the storage reported
  // a split (from inside a write, where the streams' lock may be held), by the maintenance
  // thread (the splits other processes published and stopped before noting), and at start.
  void split_shards() KUMO_EXCLUDES(shard_splits_mutex_);
  // Adds to `batch` the TTL schedule change of replacing the old item by the new one;
  // returns the entry it adds, if any.
  std::string update_ttl_schedule(const TableDefinition& table, const std::string& storage_key,
                                  const WriteResult& result, storage::WriteBatch* batch) const;
  // Called once a TTL schedule entry is committed: an entry that falls below where the
  // reaper's passes have reached is handed to the next pass, which reads it directly
  // (nothing on a shared storage).
  void note_ttl_entry(std::uint32_t table_id, std::string_view entry) KUMO_EXCLUDES(ttl_mutex_);
  // Deletes the expired items of one table whose schedule entries lie below `upper`
  // (entries below `past_limit` are dropped), from where the last pass stopped (on a
  // shared storage, from the schedule's start: other processes' writes add entries there).
  std::size_t expire_table(const TableDefinition& table, const std::string& past_limit,
                           const std::string& upper, double now);
  // Forgets where the reaper stands on a table's schedule (its schedule was dropped, or
  // the table deleted).
  void reset_ttl_progress(std::uint32_t table_id) KUMO_EXCLUDES(ttl_mutex_);
  // Refuses (LimitExceededException) a new or changed definition that would take the
  // provisioned throughput of all tables and GSIs past the account's quota.
  void verify_account_quota(const TableDefinition* before, const TableDefinition& after,
                            const std::vector<const TableDefinition*>& others) const;
  std::optional<Item> read_current(const TableDefinition& table, const std::string& storage_key,
                                   const storage::Snapshot* snapshot = nullptr) const;
  // Reads the item a write replaces into result.old_item, and its size, as stored with it,
  // into result.old_size.
  // Returns the stored bytes read, the write's expectation of the item (WriteBatch::expect).
  // With `version`, sets it to the state's version (Storage::get_versioned).
  std::optional<std::string> read_old(const TableDefinition& table, const std::string& storage_key,
                                      WriteResult& result, std::string* version = nullptr) const;
  // Whether reads that began at `read_at` (the engine's clock) and were just confirmed by
  // version did so within the storage's confirm_window_ns, after which a version found
  // absent may be a reclaimed tombstone rather than one never written.
  bool confirmed_in_time(std::int64_t read_at) const;
  // Removes old versions of deleted items from every table (Storage::reclaim_tombstones).
  void reclaim_tombstones();
  // Waits before attempt `attempt` + 1 of a write that met a WriteConflict: a random time
  // that grows with the attempts. Past the last attempt it throws InternalServerError,
  // which the SDKs retry.
  static void conflict_backoff(int attempt);
  // Bytes `item` adds to its item collection: its size plus its LSI entries.
  std::int64_t collection_bytes(const TableDefinition& table,
                                const std::optional<Item>& item) const;
  // Adds the write's change to its item collection's size, refusing to grow a full one.
  void add_collection_size(const TableDefinition& table, const WriteResult& result,
                           storage::WriteBatch* batch) const;
  // Adds to `batch` the index changes that replacing `old_item` by `new_item` causes.
  void update_indexes(const TableDefinition& table, WriteResult& result,
                      storage::WriteBatch* batch) const;

  std::unique_ptr<storage::Storage> storage_;
  EngineOptions options_;
  std::unique_ptr<SystemClock> own_clock_;  // when options_.clock is null
  const Clock* clock_ = nullptr;
  // Serialises advance_clock (ticks run in order).
  Mutex clock_mutex_;
  // Where the TTL reaper stands on each table's schedule. A pass reads the entries due
  // below its horizon (an encoded expiry, the same for every table) from `resume`, where
  // the pass before stopped: every entry below it was handled, and the tombstones the
  // earlier passes left there are never stepped over again. An entry committed below
  // the horizon after a pass began may lie behind `resume`: it is kept in `late` and read
  // directly by the next pass. In memory only: after a restart the first pass starts at
  // the beginning of each schedule. Not used on a shared storage, where other processes
  // write entries below the horizon too: each pass starts at the schedule's beginning.
  struct TtlProgress {
    std::string resume;
    std::vector<std::string> late;
    bool overflow = false;  // too many late entries: the next pass starts at the beginning
  };
  Mutex ttl_mutex_;
  // The horizon of the latest pass, an encoded expiry: entries below it are due.
  std::string ttl_horizon_ KUMO_GUARDED_BY(ttl_mutex_);
  std::unordered_map<std::uint32_t, TtlProgress> ttl_progress_ KUMO_GUARDED_BY(ttl_mutex_);
  // Each table's latest scan that schedules the items written before TTL was enabled (by
  // table id → scan number): a scan from an earlier enabling, still running when TTL was
  // disabled and enabled again, ends without marking the table scheduled.
  std::unordered_map<std::uint32_t, std::uint64_t> ttl_scans_ KUMO_GUARDED_BY(ttl_mutex_);
  std::uint64_t next_ttl_scan_ KUMO_GUARDED_BY(ttl_mutex_) = 0;
  // The tables whose scan runs in this process.
  std::set<std::uint32_t> ttl_scans_running_ KUMO_GUARDED_BY(ttl_mutex_);
  Catalog catalog_;
  ItemLocks locks_;
  std::unique_ptr<TransactionTokens> tokens_;
  ChangeStreams streams_;
  // Held by split_shards: one pass at a time. shard_splits_due_: the storage reported a
  // split since the last pass.
  Mutex shard_splits_mutex_;
  std::atomic<bool> shard_splits_due_{false};
  std::atomic<bool> stopping_{false};
  // A one-off background job (backfill, TTL scheduling); `done` is set as it ends.
  struct Worker {
    std::thread thread;
    std::atomic<bool> done{false};
  };
  // The backfills this process runs: (table id, index id).
  Mutex backfills_mutex_;
  std::set<std::pair<std::uint32_t, std::uint32_t>> backfills_ KUMO_GUARDED_BY(backfills_mutex_);
  // Serialises the changes of backups and restores: a restore's checks and the creation of
  // its table, a backup's deletion, a backup's record and the dropping of its source's data.
  Mutex backups_mutex_;
  // KUMO_BACKUP_FAULT, read at construction.
  std::string backup_fault_;
  // KUMO_TTL_SCAN_FAULT=page: the process is killed (as kill -9 would) once a TTL scan
  // recorded its first page; for the tests of a scan taken over.
  std::string scan_fault_;
  // The copy and restore jobs this process runs ("backup/<id>", "restore/<table id>").
  Mutex data_job_hook_mutex_;
  std::function<void()> data_job_hook_ KUMO_GUARDED_BY(data_job_hook_mutex_);
  Mutex backup_jobs_mutex_;
  std::set<std::string> backup_jobs_ KUMO_GUARDED_BY(backup_jobs_mutex_);
  // Where each table's log was last trimmed to (table id → cutoff, epoch µs): a table is
  // trimmed again once its window's start has moved a minute past it.
  Mutex pitr_mutex_;
  std::unordered_map<std::uint32_t, std::int64_t> pitr_trimmed_ KUMO_GUARDED_BY(pitr_mutex_);
  // The dropped tables whose data this process is removing.
  Mutex drops_mutex_;
  std::set<std::uint32_t> drops_ KUMO_GUARDED_BY(drops_mutex_);
  // The tables whose TTL job this process holds (a shared storage only).
  Mutex ttl_jobs_mutex_;
  std::set<std::uint32_t> ttl_jobs_ KUMO_GUARDED_BY(ttl_jobs_mutex_);
  std::string ttl_share_ KUMO_GUARDED_BY(ttl_jobs_mutex_);  // as last logged
  Mutex workers_mutex_;
  std::list<Worker> workers_ KUMO_GUARDED_BY(workers_mutex_);
  // Wakes the maintenance thread early when the engine stops or the manual clock moves.
  Mutex maintenance_mutex_;
  CondVar maintenance_wake_;
  // Set by advance_clock: the maintenance thread runs its passes at once, for what the
  // move made due.
  bool clock_moved_ KUMO_GUARDED_BY(maintenance_mutex_) = false;
  // A shard split that the other processes sharing the storage are not told of yet.
  bool split_unannounced_ KUMO_GUARDED_BY(maintenance_mutex_) = false;
  std::once_flag maintenance_started_;
  std::thread maintenance_;
  // Ticks the capacity manager each second of the wall clock (capacity on, clock not manual).
  std::thread capacity_thread_;
};

}  // namespace kumo::engine
