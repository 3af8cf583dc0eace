// The RADOS back end against an in-memory model (rados_layout_model.h), with keys shaped
// as the engine shapes them. Partitions hold few keys, so they split many times during each
// test. Every check goes through the Storage API.
//
// The tests run only when KUMO_CEPH_CONF names a running cluster's ceph.conf (pool
// KUMO_RADOS_POOL, "kumo" by default); each opens the back end in namespaces of its own.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "model/clock.h"
#include "storage/rados_layout_model.h"
#include "storage/storage.h"

namespace kumo::storage {
namespace {

using namespace layout_test;  // NOLINT(google-build-using-namespace)

// Writes `value` to `item` in its partition, or deletes `item` when `value` is nullopt.
void write_item(Storage& db, const std::string& item, const std::optional<std::string>& value) {
  WriteBatch batch;
  batch.partition(item);
  if (value) {
    batch.put(item, *value);
  } else {
    batch.del(item);
  }
  db.write(batch);
}

// Engine-like writes (items with LSI, GSI and TTL entries, stream records, counters,
// transactions, catalog keys), every kind of read checked against the model while the
// tables' partitions split many times and a hot partition's counters fold.
TEST_F(RadosLayoutTest, RandomWritesMatchTheModel) {
  const std::unique_ptr<Writer> written = writing(60, 600, 100);
  const Writer& writer = *written;
  // More than one fold's worth of deltas went to one partition's object.
  RecordProperty("hot_deltas", writer.hot_deltas());
  EXPECT_GT(writer.hot_deltas(), 256);
}

// A fresh store (nothing in its catalog yet) reads and writes a table's keys like any
// other: absent before the first write, then what was written.
TEST_F(RadosLayoutTest, FreshStoreTakesATableKeyFirst) {
  const std::string item = item_key(kTableA, 0x1234, escaped("k"));
  const std::string lsi = index_key(kTableA, kLsi, 0x1234, escaped("l") + escaped("k"));
  auto attempt = [](const char* what, const std::function<void()>& step) {
    try {
      step();
    } catch (const StorageError& e) {
      ADD_FAILURE() << what << ": " << e.what();
    }
  };
  attempt("the first read", [&] { EXPECT_EQ(db_->get(item), std::nullopt); });
  attempt("the first write", [&] {
    WriteBatch batch;
    batch.partition(item);
    batch.put(item, "v");
    batch.put(lsi, "v");
    batch.add_counter(counter_key(kTableA, "items"), 1);
    db_->write(batch);
  });
  attempt("the reads after it", [&] {
    EXPECT_EQ(db_->get(item), "v");
    EXPECT_EQ(db_->get(lsi), "v");
    EXPECT_EQ(db_->get_counter(counter_key(kTableA, "items")), 1);
  });
}

// A read confirmed by its version fails once the item was written, even back to the value
// read, or deleted and written again; one confirmed by value passes then. The version key
// stays out of every walk.
TEST_F(RadosLayoutTest, ReadsAreConfirmedByVersion) {
  const std::string item = item_key(kTableA, 0x4321, escaped("v"));
  auto put = [&](const std::optional<std::string>& value) { write_item(*db_, item, value); };
  auto read = [&] {
    std::string version;
    std::optional<std::string> value = db_->get_versioned(item, nullptr, &version);
    return Storage::Read(item, std::move(value), std::move(version));
  };
  put("a");
  Storage::Read first = read();
  EXPECT_EQ(first.value, "a");
  EXPECT_TRUE(db_->confirm_reads({first}));
  put("b");
  put("a");
  EXPECT_FALSE(db_->confirm_reads({first}));
  EXPECT_TRUE(db_->confirm_reads({Storage::Read(item, "a")}));  // by value: passes
  put(std::nullopt);
  Storage::Read gone = read();
  EXPECT_EQ(gone.value, std::nullopt);
  EXPECT_TRUE(db_->confirm_reads({gone}));
  put("c");
  put(std::nullopt);
  EXPECT_FALSE(db_->confirm_reads({gone}));
  auto it = db_->iterator(table_prefix(kTableA), table_prefix(kTableA + 1));
  for (it->seek_to_first(); it->valid(); it->next()) {
    EXPECT_NE(static_cast<std::uint8_t>(it->key()[4]), 5) << "a version key in a walk";
  }
}

// A deleted item's version (its tombstone) stays until it is older than the bound on the
// storage's clock, then a pass removes it; a version of an item written again meanwhile
// stays, and so does a live item's. A read confirmed by version within the window sees a
// deletion; the window is shorter than the tombstones' bound.
TEST_F(RadosLayoutTest, TombstonesAreReclaimedAfterTheirBound) {
  ManualClock clock(1'000'000'000'000'000'000);
  db_->set_clock(&clock);
  auto write = [&](const std::string& item, const std::optional<std::string>& value) {
    write_item(*db_, item, value);
  };
  auto version_of = [&](const std::string& item) {
    std::string version;
    db_->get_versioned(item, nullptr, &version);
    return version;
  };
  const std::string gone = item_key(kTableA, 0x1111, escaped("gone"));
  const std::string back = item_key(kTableA, 0x2222, escaped("back"));
  const std::string live = item_key(kTableA, 0x3333, escaped("live"));
  write(gone, "a");
  write(gone, std::nullopt);
  write(back, "b");
  write(back, std::nullopt);
  write(live, "c");
  const std::string tombstone = version_of(gone);
  EXPECT_FALSE(tombstone.empty());
  EXPECT_LT(db_->confirm_window_ns(), 600'000'000'000);
  clock.advance(599'000'000'000);
  EXPECT_EQ(db_->reclaim_tombstones(kTableA), 0u);
  EXPECT_EQ(version_of(gone), tombstone);
  write(back, "b2");  // written again before its tombstone's bound
  const std::string rewritten = version_of(back);
  clock.advance(2'000'000'000);
  EXPECT_EQ(db_->reclaim_tombstones(kTableA), 1u);
  EXPECT_EQ(version_of(gone), "");
  EXPECT_EQ(version_of(back), rewritten);
  EXPECT_FALSE(version_of(live).empty());
  EXPECT_EQ(db_->get(back), "b2");
  EXPECT_EQ(db_->get(live), "c");
  clock.advance(1'000'000'000'000);
  EXPECT_EQ(db_->reclaim_tombstones(kTableA), 0u);
  db_->set_clock(nullptr);
}

// Deleting keys that were never written changes nothing, whether or not anything was ever
// written where they would be kept (a partition, the stream, the TTL schedule).
TEST_F(RadosLayoutTest, DeletingAbsentKeysChangesNothing) {
  std::atomic<std::uint64_t> sequence{1};
  Writer writer(tables(), "w", &sequence, seed_, 1);
  create(writer);
  const std::uint64_t token = 0x0123456789abcdefULL;
  const std::string item = item_key(kTableA, token, escaped("k"));
  const std::string other = item_key(kTableA, ~token, escaped("k"));
  const std::vector<std::pair<std::string, std::function<void(WriteBatch*)>>> batches = {
      {"an item and its LSI entry",
       [&](WriteBatch* b) {
         b->partition(item);
         b->del(item);
         b->del(index_key(kTableA, kLsi, token, escaped("l") + escaped("k")));
       }},
      {"a GSI entry (maintenance)",
       [&](WriteBatch* b) {
         b->partition(other);
         b->put(other, "v");
         b->maintain_del(index_key(kTableA, kGsi1, token, escaped("g") + escaped("k")));
       }},
      {"a TTL schedule entry (maintenance)",
       [&](WriteBatch* b) {
         b->partition(item);
         b->maintain_del(ttl_key(kTableA, 1000, item));
       }},
      {"a stream record", [&](WriteBatch* b) { b->del(stream_key(kTableA, 1, token)); }},
      {"a counter", [&](WriteBatch* b) { b->del(counter_key(kTableA, "never")); }},
      {"a catalog key", [&](WriteBatch* b) { b->del("meta/never"); }},
  };
  for (const auto& [what, make] : batches) {
    WriteBatch batch;
    make(&batch);
    try {
      db_->write(batch);
      writer.committed(batch);
    } catch (const StorageError& e) {
      ADD_FAILURE() << "deleting " << what << " that was never written: " << e.what();
    }
  }
  phase_ = "absent keys deleted";
  check(writer);
  // And the store opens again, with nothing left to apply.
  db_.reset();
  try {
    open();
  } catch (const StorageError& e) {
    FAIL() << "the store does not open again: " << e.what();
  }
  phase_ += ", reopened";
  check(writer);
}

// The store reopened with the same namespaces holds what it held, counters included,
// and goes on from there.
TEST_F(RadosLayoutTest, ReopenKeepsEverything) {
  const std::unique_ptr<Writer> written = writing(50, 300, 300);
  Writer& writer = *written;
  db_.reset();
  open();
  phase_ = "reopened after " + std::to_string(written_);
  written_ = 0;
  check(writer);
  run(writer, 150, 150);
  db_.reset();
  open();
  phase_ += ", reopened after " + std::to_string(written_) + " more";
  written_ = 0;
  check(writer);
}

// erase_range: a table's TTL schedule alone; then a table's range below its stream space
// and from its TTL space to the next table, as a table's removal does (its stream records
// stay); then its stream records, as their trim does. Every key of each range goes
// (counters too), every other key stays.
TEST_F(RadosLayoutTest, EraseRangeRemovesExactlyTheRange) {
  const std::unique_ptr<Writer> written = writing(50, 300, 300);
  Writer& writer = *written;
  Model& model = writer.model;
  auto count = [&](std::uint32_t table, std::uint8_t space) {
    return model.range(space_prefix(table, space), space_prefix(table, space + 1)).size();
  };
  for (std::uint32_t table : {kTableA, kTableB}) {
    ASSERT_GT(count(table, kItems), 0u);
    ASSERT_GT(count(table, kIndexes), 0u);
    ASSERT_GT(count(table, kTtl), 0u);
  }
  ASSERT_GT(count(kTableA, kStream), 0u);
  // `also`: a range the back end erases with [lower, upper) (empty: none).
  auto erase = [&](const std::string& lower, const std::string& upper, const std::string& what,
                   std::pair<std::string, std::string> also = {}) {
    db_->erase_range(lower, upper);
    model.erase(lower, upper);
    if (!also.first.empty()) model.erase(also.first, also.second);
    phase_ = what + " erased";
    written_ = 0;
    check(writer);
  };

  // Table B's TTL schedule alone.
  erase(space_prefix(kTableB, kTtl), space_prefix(kTableB, kTtl + 1), "table B's TTL schedule");
  // Table A below its stream space: counters, items, indexes. The partitions go whole, and
  // the TTL schedule that they keep with them: a table's items are erased only when it is
  // dropped, and its schedule right after.
  erase(table_prefix(kTableA), space_prefix(kTableA, kStream), "table A below its stream",
        {space_prefix(kTableA, kTtl), space_prefix(kTableA, kTtl + 1)});
  // Table A from its TTL space to table B.
  erase(space_prefix(kTableA, kTtl), table_prefix(kTableB), "table A's TTL schedule and the rest");

  // Table A holds its stream records and nothing else; table B what it held.
  Entries stream;
  {
    auto it = db_->iterator(table_prefix(kTableA), table_prefix(kTableB));
    for (it->seek_to_first(); it->valid(); it->next()) {
      stream.emplace_back(std::string(it->key()), std::string(it->value()));
    }
  }
  EXPECT_TRUE(same("table A",
                   model.range(space_prefix(kTableA, kStream), space_prefix(kTableA, kStream + 1)),
                   stream));
  EXPECT_GT(count(kTableA, kStream), 0u);
  for (const char* name : {"items", "bytes", "gsi/count"}) {
    EXPECT_EQ(db_->get_counter(counter_key(kTableA, name)), 0) << name;
  }
  EXPECT_NE(db_->get_counter(counter_key(kTableB, "items")), 0);

  // Table A's stream records trimmed: nothing of table A is left.
  erase(space_prefix(kTableA, kStream), space_prefix(kTableA, kStream + 1),
        "table A's stream records");
  EXPECT_TRUE(same("table A", {},
                   Checker(*db_, model, {kTableA}, 0, findings_, where())
                       .scan(table_prefix(kTableA), table_prefix(kTableB))));

  // Writes go on in both tables (table A's items all absent now).
  writer.forget(kTableA);
  phase_ += ", then written";
  run(writer, 150, 150);
}

// Writers on disjoint items while readers walk the tables: no crash, every walk ordered,
// and at the end the store holds the union of the writers' models.
TEST_F(RadosLayoutTest, ConcurrentWritersAndScans) {
  constexpr int kWriters = 4, kScanners = 2, kBatches = 150;
  std::atomic<std::uint64_t> sequence{1};
  std::vector<std::unique_ptr<Writer>> writers;
  for (int w = 0; w < kWriters; ++w) {
    writers.push_back(std::make_unique<Writer>(tables(), "w" + std::to_string(w), &sequence,
                                               seed_ + 1000 * w, 15));
  }
  for (auto& writer : writers) create(*writer);
  std::atomic<int> writing{kWriters};
  std::atomic<int> scans{0};
  std::mutex errors_mutex;
  std::vector<std::string> errors;
  auto error = [&](std::string message) {
    std::lock_guard lock(errors_mutex);
    errors.push_back(std::move(message));
  };
  std::vector<std::thread> threads;
  for (int w = 0; w < kWriters; ++w) {
    threads.emplace_back([&, w] {
      Writer& writer = *writers[static_cast<std::size_t>(w)];
      try {
        for (int i = 0; i < kBatches; ++i) {
          const WriteBatch batch = writer.next();
          db_->write(batch);
          writer.committed(batch);
          // Only this writer writes its items: it reads its own writes back.
          for (const std::string& item : batch.groups()) {
            auto it = writer.model.kv.find(item);
            const auto want =
                it == writer.model.kv.end() ? std::nullopt : std::optional(it->second);
            const auto read = db_->get(item);
            if (read != want) error("writer " + std::to_string(w) + " read its item " + show(item));
          }
        }
      } catch (const std::exception& e) {
        error("writer " + std::to_string(w) + ": " + e.what());
      }
      --writing;
    });
  }
  for (int s = 0; s < kScanners; ++s) {
    threads.emplace_back([&, s] {
      const std::string lower = s == 0 ? "" : space_prefix(kTableA, kItems);
      const std::string upper = s == 0 ? "\x01" : table_prefix(kTableB + 1);
      try {
        while (writing.load() > 0) {
          auto it = db_->iterator(lower, upper);
          std::optional<std::string> last;
          for (it->seek_to_first(); it->valid(); it->next()) {
            const std::string key(it->key());
            if (last && !(*last < key)) error("a scan went back to " + show(key));
            if (key < lower || key >= upper) error("a scan left its range: " + show(key));
            if (is_counter(key)) error("a scan returned a counter: " + show(key));
            last = key;
          }
          ++scans;
        }
      } catch (const std::exception& e) {
        error("scanner " + std::to_string(s) + ": " + e.what());
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (std::size_t i = 0; i < errors.size() && i < 10; ++i) ADD_FAILURE() << errors[i];
  EXPECT_EQ(errors.size(), 0u);
  EXPECT_GT(scans.load(), 0);

  Model all;
  std::vector<std::string> items, counters;
  for (const auto& writer : writers) {
    all.merge(writer->model);
    for (const std::string& k : writer->item_keys()) items.push_back(k);
    for (const std::string& k : writer->counter_keys()) counters.push_back(k);
  }
  std::sort(counters.begin(), counters.end());
  counters.erase(std::unique(counters.begin(), counters.end()), counters.end());
  phase_ = "4 writers done";
  written_ = kWriters * kBatches;
  Checker(*db_, all, {kTableA, kTableB}, seed_ + 1, findings_, where()).all(items, counters);
}

// Two front ends (two opens of one pool), two threads each, write items of one table with
// stream records left for the storage to number (`[T][3][0][token]`): single-item writes,
// and now and then a transaction of two items in two partitions, while the partitions
// split. Each partition hands out every number once, in the order its writes were made (a
// writer's records in one stream object come in its order), its halves going on from its
// last number, and every record is readable up to the horizon.
TEST_F(RadosLayoutTest, StreamRecordsAreNumberedByTheirPartition) {
  constexpr std::uint32_t kTable = 9;
  constexpr int kThreads = 4, kWrites = 60;
  std::unique_ptr<Storage> other = open_rados(pool_, conf_, prefix_, kPartitionKeys);
  std::mutex errors_mutex;
  std::vector<std::string> errors;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      Storage& db = t % 2 == 0 ? *db_ : *other;
      std::mt19937_64 rng(seed_ + static_cast<std::uint64_t>(t));
      // The writer's items (token → value), which only it writes.
      std::map<std::uint64_t, std::string> items;
      try {
        for (int i = 0; i < kWrites; ++i) {
          WriteBatch batch;
          const int count = i % 10 == 9 ? 2 : 1;
          for (int n = 0; n < count; ++n) {
            // A transaction's two items lie in two partitions (of the four a table starts
            // with): one in the lower half of the tokens, one in the upper.
            std::uint64_t token = rng() >> 2;
            if (n == 1) token |= 1ull << 63;
            token = (token & ~0xFFull) | static_cast<std::uint64_t>(t);  // the writer's own
            const std::string key = item_key(kTable, token, "k");
            const std::string value = "w" + std::to_string(t) + "-" + std::to_string(i);
            batch.partition(key);
            batch.put(key, value);
            batch.maintain_put(stream_key(kTable, 0, token), value);
            if (count == 2) {
              auto it = items.find(token);
              batch.expect(
                  key, it == items.end() ? std::nullopt : std::optional<std::string>(it->second));
            }
            items[token] = value;
          }
          db.write(batch);
        }
      } catch (const std::exception& e) {
        std::lock_guard lock(errors_mutex);
        errors.push_back("writer " + std::to_string(t) + ": " + e.what());
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (const std::string& e : errors) ADD_FAILURE() << e;
  ASSERT_TRUE(errors.empty());

  std::size_t records = 0;
  for (Storage* reader : {db_.get(), other.get()}) {
    records = 0;
    const std::vector<Storage::StreamPartition> parts = reader->stream_partitions(kTable);
    for (std::size_t i = 0; i < parts.size(); ++i) {
      const Storage::StreamPartition& part = parts[i];
      const std::optional<std::uint64_t> end =
          i + 1 < parts.size() ? std::optional(parts[i + 1].first_token) : std::nullopt;
      EXPECT_EQ(reader->stream_horizon(kTable, part.first_token, end), part.last);
      std::vector<std::uint64_t> numbers;
      std::map<char, int> last_write;  // writer → its last write seen in this partition
      auto it = reader->stream_records(kTable, part.first_token, space_prefix(kTable, kStream),
                                       space_prefix(kTable, kStream + 1));
      for (it->seek_to_first(); it->valid(); it->next()) {
        const std::string_view key = it->key();
        ASSERT_EQ(key.size(), 21u);
        std::uint64_t number = 0;
        for (int b = 0; b < 8; ++b) number = (number << 8) | static_cast<unsigned char>(key[5 + b]);
        numbers.push_back(number);
        const std::string value(it->value());
        const char writer = value[1];
        const int write = std::stoi(value.substr(3));
        if (last_write.count(writer)) {
          EXPECT_LT(last_write[writer], write) << "writer " << writer << " out of order";
        }
        last_write[writer] = write;
      }
      // Every number once in the stream object (a split's lower half goes on in its
      // parent's), up to the partition's last.
      for (std::size_t n = 1; n < numbers.size(); ++n) EXPECT_LT(numbers[n - 1], numbers[n]);
      if (!numbers.empty()) {
        EXPECT_EQ(numbers.back(), part.last);
      }
      records += numbers.size();
    }
    EXPECT_EQ(records, static_cast<std::size_t>(kThreads * (kWrites + kWrites / 10)));
  }
  db_->erase_range(table_prefix(kTable), table_prefix(kTable + 1));
}

// A reader that has not heard of a split yet (its shard still covers the range the
// partition had) reads no record number past the split's last: the numbers after it
// belong to the halves' shards. The split stays among the unnoted ones until noted.
TEST_F(RadosLayoutTest, AStreamReaderThatMissedASplitStopsAtIt) {
  constexpr std::uint32_t kTable = 10;
  constexpr std::uint64_t kQuarter = 1ull << 62;  // a table starts with four partitions
  auto write = [&](std::uint64_t token, const std::string& value) {
    WriteBatch batch;
    const std::string key = item_key(kTable, token, "k");
    batch.partition(key);
    batch.put(key, value);
    batch.maintain_put(stream_key(kTable, 0, token), value);
    db_->write(batch);
  };
  write(0x1000, "a");
  write(kQuarter / 2 + 0x1000, "b");
  write(0x2000, "c");
  ASSERT_EQ(db_->stream_horizon(kTable, 0, kQuarter), 3u);
  EXPECT_TRUE(db_->unnoted_splits().empty());

  db_->split_partition(kTable, kQuarter / 2);
  write(0x1000, "d");                 // the lower half's number 4
  write(kQuarter / 2 + 0x1000, "e");  // the upper half's number 4
  EXPECT_EQ(db_->stream_horizon(kTable, 0, kQuarter), 3u);
  EXPECT_EQ(db_->stream_horizon(kTable, 0, kQuarter / 2), 4u);
  EXPECT_EQ(db_->stream_horizon(kTable, kQuarter / 2, kQuarter), 4u);
  std::vector<Storage::UnnotedSplit> unnoted = db_->unnoted_splits();
  ASSERT_EQ(unnoted.size(), 1u);
  EXPECT_EQ(unnoted[0].table, kTable);
  EXPECT_EQ(unnoted[0].token, kQuarter / 2);
  EXPECT_EQ(unnoted[0].last, 3u);

  // Split again below: a reader of the first range still stops at the first split, one
  // that knows of the first only at the second.
  db_->split_partition(kTable, kQuarter / 4);
  write(0x1000, "f");
  EXPECT_EQ(db_->stream_horizon(kTable, 0, kQuarter), 3u);
  EXPECT_EQ(db_->stream_horizon(kTable, 0, kQuarter / 2), 4u);
  EXPECT_EQ(db_->stream_horizon(kTable, 0, kQuarter / 4), 5u);
  EXPECT_EQ(db_->unnoted_splits().size(), 2u);
  db_->split_noted(kTable, kQuarter / 2);
  db_->split_noted(kTable, kQuarter / 4);
  EXPECT_TRUE(db_->unnoted_splits().empty());
}

}  // namespace
}  // namespace kumo::storage
