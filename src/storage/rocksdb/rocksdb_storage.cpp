// The durable back end: one RocksDB instance per data directory, WAL always on. Built as
// the module kumo-rocksdb.so, which open_rocksdb loads on first use (rocksdb_module.cpp):
// a server in memory never maps RocksDB, nor runs its static initializers.
#include <cstdlib>
#include <string>

#include <rocksdb/cache.h>
#include <rocksdb/db.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/merge_operator.h>
#include <rocksdb/options.h>
#include <rocksdb/rate_limiter.h>
#include <rocksdb/table.h>
#include <rocksdb/write_batch.h>

#include "storage/counter.h"
#include "storage/rocksdb/module.h"
#include "storage/storage.h"

namespace kumo::storage {
namespace {

// Sums int64 operands so add_counter is a blind write (no read-modify-write under a lock).
// Wraps on overflow rather than failing: a counter never legitimately gets near 2^63.
class Int64AddOperator : public rocksdb::AssociativeMergeOperator {
 public:
  bool Merge(const rocksdb::Slice& /*key*/, const rocksdb::Slice* existing_value,
             const rocksdb::Slice& value, std::string* new_value,
             rocksdb::Logger* /*logger*/) const override {
    std::int64_t base = 0, delta = 0;
    if (existing_value != nullptr &&
        !decode_counter({existing_value->data(), existing_value->size()}, &base)) {
      return false;
    }
    if (!decode_counter({value.data(), value.size()}, &delta)) return false;
    *new_value = encode_counter(static_cast<std::int64_t>(static_cast<std::uint64_t>(base) +
                                                          static_cast<std::uint64_t>(delta)));
    return true;
  }
  const char* Name() const override { return "kumo.Int64Add"; }
};

// How the module reports an error (module.h): the executable throws, never the module.
kumo_rocksdb_fail_function fail_with = nullptr;

[[noreturn]] void fail(const std::string& message) {
  fail_with(message.c_str());
  std::abort();  // fail_with throws; never reached
}

void check(const rocksdb::Status& status) {
  if (!status.ok()) fail(status.ToString());
}

rocksdb::Slice slice(std::string_view s) {
  return {s.data(), s.size()};
}

class RocksSnapshot : public Snapshot {
 public:
  explicit RocksSnapshot(rocksdb::DB* db) : db_(db), snapshot_(db->GetSnapshot()) {}
  ~RocksSnapshot() override { db_->ReleaseSnapshot(snapshot_); }
  RocksSnapshot(const RocksSnapshot&) = delete;
  RocksSnapshot& operator=(const RocksSnapshot&) = delete;

  const rocksdb::Snapshot* get() const { return snapshot_; }

 private:
  rocksdb::DB* db_;
  const rocksdb::Snapshot* snapshot_;
};

const rocksdb::Snapshot* unwrap(const Snapshot* snapshot) {
  if (snapshot == nullptr) return nullptr;
  const auto* rocks = dynamic_cast<const RocksSnapshot*>(snapshot);
  if (rocks == nullptr) fail("snapshot belongs to another storage back end");
  return rocks->get();
}

class RocksIterator : public Iterator {
 public:
  RocksIterator(rocksdb::DB* db, std::string lower, std::string upper,
                const rocksdb::Snapshot* snapshot)
      : lower_(std::move(lower)), upper_(std::move(upper)) {
    // The bound slices point into lower_/upper_, which live as long as the iterator.
    lower_slice_ = slice(lower_);
    upper_slice_ = slice(upper_);
    rocksdb::ReadOptions read;
    read.snapshot = snapshot;
    read.iterate_lower_bound = &lower_slice_;
    if (!upper_.empty()) read.iterate_upper_bound = &upper_slice_;
    it_.reset(db->NewIterator(read));
  }

  void seek(std::string_view target) override {
    it_->Seek(slice(target));
    settle();
  }
  void seek_for_prev(std::string_view target) override {
    it_->SeekForPrev(slice(target));
    settle();
  }
  void seek_to_first() override {
    it_->SeekToFirst();
    settle();
  }
  void seek_to_last() override {
    it_->SeekToLast();
    settle();
  }
  bool valid() const override { return it_->Valid(); }
  void next() override {
    it_->Next();
    settle();
  }
  void prev() override {
    it_->Prev();
    settle();
  }
  std::string_view key() const override { return it_->key().ToStringView(); }
  std::string_view value() const override { return it_->value().ToStringView(); }

 private:
  // An iterator that stops early because of an error reports it through status(), not
  // through Valid(); surface it rather than letting a scan end silently short.
  void settle() {
    if (!it_->Valid()) check(it_->status());
  }

  std::string lower_;
  std::string upper_;
  rocksdb::Slice lower_slice_;
  rocksdb::Slice upper_slice_;
  std::unique_ptr<rocksdb::Iterator> it_;
};

// Shards of the block cache: each holds at least 4 MiB, so that an index or filter
// partition or a data block (a few KiB each) always fits many times over.
int cache_shard_bits(std::size_t capacity) {
  int bits = 0;
  while (bits < 6 && (capacity >> (bits + 1)) >= (std::size_t{4} << 20)) ++bits;
  return bits;
}

class RocksStorage : public Storage {
 public:
  explicit RocksStorage(const Options& options) {
    rocksdb::Options db_options;
    db_options.create_if_missing = true;
    db_options.merge_operator = std::make_shared<Int64AddOperator>();
    // A counter's merge operands are folded into a value as they are written, so a read
    // (DescribeTable, an item collection's size) folds at most this many however many
    // writes the memtable holds: unfolded, 300,000 writes made one DescribeTable cost
    // 20 ms. RocksDB folds them only when memtable writes are made one at a time.
    db_options.max_successive_merges = 64;
    db_options.allow_concurrent_memtable_write = false;
    // Memory stays modest and independent of data size: two memtables, a bounded block
    // cache that also holds the index and filter partitions, and a bounded table-file count.
    db_options.write_buffer_size = options.write_buffer_bytes;
    db_options.max_write_buffer_number = 2;
    db_options.max_open_files = 512;
    db_options.max_background_jobs = 4;
    db_options.level_compaction_dynamic_level_bytes = true;
    db_options.keep_log_file_num = 4;
    // Flushes and compactions write at a bounded rate (auto-tuned below it by demand), so
    // the compactions that follow a bulk load leave requests their share of the disk.
    if (options.compaction_bytes_per_second > 0) {
      db_options.rate_limiter.reset(rocksdb::NewGenericRateLimiter(
          static_cast<std::int64_t>(options.compaction_bytes_per_second), 100 * 1000, 10,
          rocksdb::RateLimiter::Mode::kWritesOnly, /*auto_tuned=*/true));
    }

    rocksdb::BlockBasedTableOptions table;
    table.block_cache = rocksdb::NewLRUCache(rocksdb::LRUCacheOptions(
        options.block_cache_bytes, cache_shard_bits(options.block_cache_bytes), false, 0.5));
    table.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
    // The index and the filter of a table file are split into 4 KiB partitions under a
    // small top level that stays pinned; partitions go through the block cache at high
    // priority. A whole index block is about 1.5% of its file (1.6 MB for a 24 MB file of
    // small items): read and decompressed again whenever it fell out of the cache, it made
    // GetItem on 1,000,000 items 100 times slower than on 10,000.
    table.index_type = rocksdb::BlockBasedTableOptions::kTwoLevelIndexSearch;
    table.partition_filters = true;
    table.pin_top_level_index_and_filter = true;
    table.cache_index_and_filter_blocks = true;
    table.cache_index_and_filter_blocks_with_high_priority = true;
    table.pin_l0_filter_and_index_blocks_in_cache = true;
    // A hash of the keys in each data block finds a point read's key without a binary
    // search of the block.
    table.data_block_index_type = rocksdb::BlockBasedTableOptions::kDataBlockBinaryAndHash;
    db_options.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));

    rocksdb::DB* db = nullptr;
    check(rocksdb::DB::Open(db_options, options.path, &db));
    db_.reset(db);
    write_options_.sync = options.sync;
  }

  ~RocksStorage() override {
    if (!db_) return;
    // A clean stop writes the memtables out, so the next start has no write-ahead log to
    // replay (what a restart after SIGKILL must do, bounded by the two 32 MiB memtables).
    db_->Flush(rocksdb::FlushOptions()).PermitUncheckedError();
    db_->Close().PermitUncheckedError();
  }

  std::optional<std::string> get(std::string_view key, const Snapshot* snapshot) override {
    rocksdb::ReadOptions read;
    read.snapshot = unwrap(snapshot);
    std::string value;
    rocksdb::Status status = db_->Get(read, slice(key), &value);
    if (status.IsNotFound()) return std::nullopt;
    check(status);
    return value;
  }

  void write(const WriteBatch& batch) override {
    rocksdb::WriteBatch rocks;
    for (const WriteBatch::Op& op : batch.ops()) {
      switch (op.type) {
        case WriteBatch::OpType::kPut:
          check(rocks.Put(op.key, op.value));
          break;
        case WriteBatch::OpType::kDelete:
          check(rocks.Delete(op.key));
          break;
        case WriteBatch::OpType::kAddCounter:
          check(rocks.Merge(op.key, encode_counter(op.delta)));
          break;
      }
    }
    check(db_->Write(write_options_, &rocks));
  }

  bool behind() override {
    // RocksDB stops every write when both memtables are full, and slows them down from
    // level0_slowdown_writes_trigger (20) files at level 0: a bulk writer waits well before.
    std::uint64_t value = 0;
    if (db_->GetIntProperty(rocksdb::DB::Properties::kNumImmutableMemTable, &value) && value > 0) {
      return true;
    }
    if (db_->GetIntProperty(rocksdb::DB::Properties::kActualDelayedWriteRate, &value) &&
        value > 0) {
      return true;
    }
    const std::string level0 = rocksdb::DB::Properties::kNumFilesAtLevelPrefix + std::string("0");
    std::string files;
    return db_->GetProperty(level0, &files) && std::strtoull(files.c_str(), nullptr, 10) >= 8;
  }

  std::unique_ptr<Snapshot> snapshot() override {
    return std::make_unique<RocksSnapshot>(db_.get());
  }

  std::unique_ptr<Iterator> iterator(std::string lower, std::string upper,
                                     const Snapshot* snapshot) override {
    return std::make_unique<RocksIterator>(db_.get(), std::move(lower), std::move(upper),
                                           unwrap(snapshot));
  }

 private:
  std::unique_ptr<rocksdb::DB> db_;
  rocksdb::WriteOptions write_options_;
};

}  // namespace
}  // namespace kumo::storage

// The module's one exported symbol (kumo-rocksdb.map); the caller owns the result.
extern "C" kumo::storage::Storage* kumo_open_rocksdb(const kumo::storage::Options& options,
                                                     kumo_rocksdb_fail_function fail) {
  kumo::storage::fail_with = fail;
  return new kumo::storage::RocksStorage(options);
}
