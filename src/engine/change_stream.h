// Change streams (DynamoDB Streams). While a table's stream is enabled, every change of one
// of its items is logged as a record in the same write batch as the change, under a
// sequence number taken when the batch is made.
//
// Order. Two changes of one item are made under its item lock, one after the other, so
// their numbers increase in the order of the changes. Changes of different items are
// written side by side, and a batch with a lower number may be written after one with a
// higher number: readers therefore stop below the lowest number still being written (the
// horizon), so that no reader ever passes a record that appears later.
//
// Shared storage (Storage::shared(), RADOS) numbers the records itself, per partition of its
// own layout, in the same atomic step as the change (Storage::stream_partitions): numbers
// taken here in blocks would be in flight in several processes at once, and no reader could
// know how far it may read. A stream opened there starts with one shard per partition (a
// shard's numbers are its partition's), and a reader of a shard stops at its partition's
// horizon (Storage::stream_horizon) instead of this process's.
//
// Storage: records at [table id][kStream][u64 sequence][u64 token of the item] (records
// written before keys carried the token: [table id][kStream][u64 sequence]); the streams themselves
// (one per enable, kept until retention ends after they close) at meta/stream/<table>/<label>; in
// the counter meta/stream_sequence, the highest sequence number that may have been handed
// out: numbers are reserved a block at a time, and a restart goes on after the block, so
// that a number is never handed out twice (those of a block a stopped process did not use
// are skipped). Sequence numbers are global, so the streams of one table occupy disjoint
// ranges of its record space.
//
// Shards. As in DynamoDB, a stream's records are divided among shards by the partition of
// their item, and a partition split closes the shard that held its range and opens two
// children that name it as their parent. A stream starts with one shard for every token;
// a split of the table's partitions at a token (Engine::note_partition_split) splits the
// open shard holding that token there. A record carries its item's token, and a shard's
// records are those of its sequence range whose token lies in its token range (so shards
// open at the same time share the sequence numbers between them, each with its own).
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model/attribute_value.h"
#include "model/clock.h"
#include "model/mutex.h"
#include "model/table.h"
#include "storage/storage.h"

namespace kumo::engine {

enum class StreamEvent : std::uint8_t { kInsert = 1, kModify = 2, kRemove = 3 };

struct StreamRecord {
  std::uint64_t sequence = 0;
  StreamEvent event = StreamEvent::kInsert;
  bool by_service = false;  // a TTL deletion
  std::int64_t created_ms = 0;
  std::string view_type;
  Item keys;
  std::optional<Item> new_image;
  std::optional<Item> old_image;
  std::size_t size_bytes = 0;  // keys plus images
  // The item's token; absent in records written before streams had shards (all of which
  // belong to shard 0).
  std::optional<std::uint64_t> token;
};

// One shard: the records of items whose token lies in [first_token, end_token) with
// sequence numbers from `start` on, up to `end` once it is closed (by a split, or with its
// stream).
struct StreamShard {
  std::uint32_t index = 0;              // 0: the shard the stream was created with
  std::optional<std::uint32_t> parent;  // index of the shard it was split from
  std::uint64_t first_token = 0;
  std::optional<std::uint64_t> end_token;  // nullopt: 2^64
  std::uint64_t start = 0;
  std::optional<std::uint64_t> end;
  double created = 0;  // epoch seconds
  // Records of the shard below this number were trimmed (0: none yet). Kept per shard on
  // shared storage, where each partition numbers its records and is trimmed on its own:
  // a quiet partition's numbers stay low, and its recent records must not hold back the
  // trim of a busy one's older ones.
  std::uint64_t trimmed_before = 0;

  bool open() const { return !end.has_value(); }
  bool holds(std::uint64_t token) const {
    return token >= first_token && (!end_token || token < *end_token);
  }
};

// One stream of one table: created when the stream is enabled, closed when it is disabled
// or the table is deleted. Its shards are ordered by index: every parent before its
// children.
struct StreamInfo {
  std::string table_name;
  std::uint32_t table_id = 0;
  std::string label;  // creation time, "2026-11-22T01:02:03.456"
  std::string view_type;
  std::vector<KeySchemaElement> key_schema;
  double created = 0;                // epoch seconds
  std::uint64_t start = 0;           // first sequence number the stream can hold
  std::optional<std::uint64_t> end;  // last one, once closed
  double closed_at = 0;
  std::uint64_t trimmed_before = 0;  // records below this sequence were trimmed
  std::vector<StreamShard> shards;
  // Opened on shared storage: its records are numbered by the storage, per partition.
  bool numbered_by_storage = false;

  bool open() const { return !end.has_value(); }
  // "shardId-<creation ms, 20 digits>-<8 hex digits>".
  std::string shard_id(const StreamShard& shard) const;
  // The shard whose id is `id`, or null.
  const StreamShard* find_shard(std::string_view id) const;
  // The first number of `shard` that may not have been trimmed: a TRIM_HORIZON iterator
  // starts there, and a sequence number below it is TrimmedDataAccessException.
  std::uint64_t trim_horizon(const StreamShard& shard) const {
    return std::max({shard.start, shard.trimmed_before, trimmed_before});
  }
};

// What a reader gets from one position of a stream's shard.
struct StreamPage {
  std::vector<StreamRecord> records;
  std::uint64_t next = 0;  // where the next read starts
};

// "2026-11-22T01:02:03.456": a stream's label is its creation time, UTC, in milliseconds.
std::string stream_label(double epoch_seconds);

// Sequence numbers as DynamoDB writes them: decimal strings of 21 digits.
std::string format_sequence(std::uint64_t sequence);
// nullopt unless `text` is a sequence number format_sequence can produce.
std::optional<std::uint64_t> parse_sequence(std::string_view text);

class ChangeStreams {
 public:
  // Loads the streams stored in `storage` (which must outlive this). Records are stamped
  // with the time of `clock` (the engine's), which must outlive this too. A stream closed
  // more than `retention` seconds ago is gone: DynamoDB keeps a disabled stream's records,
  // and the stream itself, for 24 hours after it closes.
  ChangeStreams(storage::Storage& storage, const Clock& clock, double retention = 86400);

  // Holds the streams' lock, which guards the set of open streams and the order of
  // sequence numbers. A write holds it from choosing its records until its batch is
  // committed, so commit order is sequence order; a table change holds it from choosing a
  // stream label until the stream is opened. The methods that need it held take the guard.
  class KUMO_SCOPED_CAPABILITY Guard {
   public:
    explicit Guard(ChangeStreams& streams) KUMO_ACQUIRE(streams.mutex_) : streams_(streams) {
      streams_.mutex_.lock();
    }
    ~Guard() KUMO_RELEASE() { streams_.mutex_.unlock(); }
    Guard(const Guard&) = delete;
    Guard& operator=(const Guard&) = delete;

   private:
    friend class ChangeStreams;
    ChangeStreams& streams_;
  };

  // The open stream of table `table_id`, or null. Valid while the guard is held.
  const StreamInfo* active(const Guard& guard, std::uint32_t table_id) const;
  // `label`, or the first millisecond after it that no stream of `table_name` has taken:
  // two streams enabled within one millisecond must still get labels of their own.
  std::string free_label(const Guard& guard, std::string_view table_name, std::string label) const;
  // Opens a new stream for `table` (its latest label and view type).
  void open(const Guard& guard, const TableDefinition& table, double now);
  // Closes the open stream of table `table_id`, if any.
  void close(const Guard& guard, std::uint32_t table_id, double now);
  // Splits the open shard of table `table_id`'s open stream that holds `token` there (the
  // table's partitions split at it): closes it and opens its two children. Nothing when
  // the table has no open stream or `token` already starts a shard (false then). On
  // shared storage, `last` is the partition's last record number when it split (the
  // parent ends there, the children start after it).
  bool split(const Guard& guard, std::uint32_t table_id, std::uint64_t token, double now,
             std::optional<std::uint64_t> last = std::nullopt);
  // Adds to `batch` the record of a change of one item of the table whose open stream is
  // `stream`; nothing when the item did not change. The record's sequence number is
  // appended to `written`: the caller writes the batch, then calls done(written) whether
  // or not the write succeeded (readers stop below it until then).
  void add_record(const Guard& guard, const StreamInfo& stream, const KeySchema& key,
                  const std::optional<Item>& old_item, const std::optional<Item>& new_item,
                  bool by_service, storage::WriteBatch* batch, std::vector<std::uint64_t>* written);
  // No stream at all, open, closed or expired but not yet trimmed.
  bool empty(const Guard& guard) const;

  // The rest take the lock themselves.

  // Streams not yet expired, ordered by table name then label; only `table_name`'s when
  // given. Expiry is decided by the clock here, not by the trim pass having forgotten the
  // stream: front ends sharing a storage trim at their own times, and must agree.
  std::vector<StreamInfo> list(std::optional<std::string_view> table_name) const;
  // On shared storage find() compares the stream with its stored value first, and loads
  // the streams again if it changed: a process that changed it (split a shard) may have
  // stopped before its announcement went out, and a reader must not go on with a parent
  // shard whose children it never hears of.
  // A stream closed longer ago than the retention is not found, as in list().
  std::optional<StreamInfo> find(std::string_view table_name, std::string_view label);
  // The batches holding these records were written (or failed).
  void done(const std::vector<std::uint64_t>& written);
  // The sequence number the next record will get.
  std::uint64_t next_sequence() const;
  // Every record numbered up to this one is written (or will never be): readers read no
  // further. (For one shard: horizon(stream, shard).)
  std::uint64_t horizon() const;
  // The horizon of `shard` of `stream`: this process's, or on shared storage its
  // partition's.
  std::uint64_t horizon(const StreamInfo& stream, const StreamShard& shard) const;
  // Records of `shard` of `stream` from sequence `from` on: at most `limit`, stopping once
  // `max_bytes` of records were read (or after passing many records of other shards).
  StreamPage read(const StreamInfo& stream, const StreamShard& shard, std::uint64_t from,
                  std::size_t limit, std::size_t max_bytes) const;
  // Deletes records older than `retention` seconds and forgets streams closed longer ago.
  // On shared storage each partition's records (each stream object's) are deleted up to its
  // own first record within retention, and the shards reading them get their own horizon.
  void trim(double now, double retention);
  // Loads the streams again from the storage: another process sharing it changed them
  // (Storage::notify_catalog). Waits for this process's writes in progress.
  void reload();

 private:
  // Tells the analysis that `guard`, a guard of this object, holds the lock.
  void held(const Guard& guard) const KUMO_ASSERT_CAPABILITY(mutex_);
  // Loads every stream from the storage.
  void load() KUMO_REQUIRES(mutex_);
  // Adds to `batch` the stream's new state, expected to replace the one loaded here (a
  // back end shared with other processes checks that: WriteBatch::expect).
  void store(const StreamInfo& stream, storage::WriteBatch* batch) const KUMO_REQUIRES(mutex_);
  // Changes the stream stored at `key` by `change_stream` (which answers false to leave
  // it as it is) and stores it; when another process changed it meanwhile, loads the
  // streams again and changes it again. False when unchanged or unknown.
  bool change(std::string key, const std::function<bool(StreamInfo&)>& change_stream)
      KUMO_REQUIRES(mutex_);
  // Hands out the next sequence number, reserving a new block first when needed.
  std::uint64_t take_sequence() KUMO_REQUIRES(mutex_);
  // split() of a stream in hand (not stored).
  bool split_shard(StreamInfo& stream, std::uint64_t token, double now,
                   std::optional<std::uint64_t> last) KUMO_REQUIRES(mutex_);
  std::uint64_t horizon_locked() const KUMO_REQUIRES(mutex_);
  // The trim of the tables whose records are numbered in one sequence (local back ends):
  // a run of numbers from the start of each table's record space. Returns, by table, the
  // last number deleted.
  std::map<std::uint32_t, std::uint64_t> trim_in_order(const std::set<std::uint32_t>& tables,
                                                       std::int64_t cutoff_ms)
      KUMO_REQUIRES(mutex_);
  // The trim of the tables whose records are numbered by partition (shared storage): each
  // stream object on its own. Returns, by (table, first token of the partition), the last
  // number deleted there.
  std::map<std::pair<std::uint32_t, std::uint64_t>, std::uint64_t> trim_by_partition(
      const std::set<std::uint32_t>& tables, std::int64_t cutoff_ms) KUMO_REQUIRES(mutex_);
  static std::string meta_key(const StreamInfo& stream);

  storage::Storage& storage_;
  const Clock& clock_;
  const double retention_;
  // Whether `stream` closed longer ago than the retention.
  bool expired(const StreamInfo& stream) const;
  mutable Mutex mutex_;
  std::map<std::string, StreamInfo> streams_ KUMO_GUARDED_BY(mutex_);  // by meta_key
  // The stored value of each stream (by meta_key), as loaded or last written here.
  std::map<std::string, std::string> stored_ KUMO_GUARDED_BY(mutex_);
  // Table id → meta_key of its open stream.
  std::map<std::uint32_t, std::string> open_ KUMO_GUARDED_BY(mutex_);
  std::uint64_t next_sequence_ KUMO_GUARDED_BY(mutex_) = 1;
  // The last number of the reserved block (meta/stream_sequence).
  std::uint64_t reserved_ KUMO_GUARDED_BY(mutex_) = 0;
  // Numbers of records whose batch is being written.
  std::multiset<std::uint64_t> writing_ KUMO_GUARDED_BY(mutex_);
};

}  // namespace kumo::engine
