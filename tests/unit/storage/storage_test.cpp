#include "storage/storage.h"

#include <gtest/gtest.h>

#include <unistd.h>
#include <algorithm>
#include <atomic>
#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace kumo::storage {
namespace {

namespace fs = std::filesystem;

// A fresh RocksDB directory per test, removed afterwards.
class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    path_ = fs::temp_directory_path() /
            ("kumo_storage_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    fs::remove_all(path_);
  }
  ~TempDir() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  std::string path() const { return path_.string(); }

 private:
  fs::path path_;
};

struct MemoryBackend {
  static constexpr bool kDurable = false;
  std::unique_ptr<Storage> open() { return open_memory(); }
};

struct RocksBackend {
  static constexpr bool kDurable = true;
  TempDir dir;
  std::unique_ptr<Storage> open() {
    Options options;
    options.path = dir.path();
    options.block_cache_bytes = 8u << 20;
    return open_rocksdb(options);
  }
};

template <typename Backend>
class StorageTest : public testing::Test {
 protected:
  StorageTest() : db_(backend_.open()) {}

  void put(std::string key, std::string value) {
    WriteBatch batch;
    batch.put(std::move(key), std::move(value));
    db_->write(batch);
  }
  void del(std::string key) {
    WriteBatch batch;
    batch.del(std::move(key));
    db_->write(batch);
  }

  // Every key/value from a forward walk of [lower, upper).
  std::vector<std::pair<std::string, std::string>> scan(std::string lower, std::string upper,
                                                        const Snapshot* snapshot = nullptr) {
    std::vector<std::pair<std::string, std::string>> out;
    auto it = db_->iterator(std::move(lower), std::move(upper), snapshot);
    for (it->seek_to_first(); it->valid(); it->next()) {
      out.emplace_back(std::string(it->key()), std::string(it->value()));
    }
    return out;
  }

  std::vector<std::string> keys(std::string lower, std::string upper) {
    std::vector<std::string> out;
    for (auto& [k, v] : scan(std::move(lower), std::move(upper))) out.push_back(k);
    return out;
  }

  Backend backend_;
  std::unique_ptr<Storage> db_;
};

using Backends = testing::Types<MemoryBackend, RocksBackend>;

class BackendNames {
 public:
  template <typename T>
  static std::string GetName(int) {
    return std::is_same_v<T, MemoryBackend> ? "Memory" : "RocksDB";
  }
};

TYPED_TEST_SUITE(StorageTest, Backends, BackendNames);

TYPED_TEST(StorageTest, GetPutDelete) {
  auto& db = *this->db_;
  EXPECT_EQ(db.get("a"), std::nullopt);
  this->put("a", "1");
  EXPECT_EQ(db.get("a"), "1");
  this->put("a", "2");
  EXPECT_EQ(db.get("a"), "2");
  this->put("b", "");
  EXPECT_EQ(db.get("b"), "");  // empty value is present, not absent
  this->del("a");
  EXPECT_EQ(db.get("a"), std::nullopt);
  this->del("never-written");
  EXPECT_EQ(db.get("never-written"), std::nullopt);
  // Binary keys and values, including zero bytes.
  const std::string key("\x00\xFF\x00", 3), value("\x00\x01\x00", 3);
  this->put(key, value);
  EXPECT_EQ(db.get(key), value);
  EXPECT_EQ(db.get(std::string("\x00\xFF", 2)), std::nullopt);
}

TYPED_TEST(StorageTest, BatchIsAtomicAndOrdered) {
  auto& db = *this->db_;
  this->put("gone", "x");
  WriteBatch batch;
  EXPECT_TRUE(batch.empty());
  batch.put("k1", "v1");
  batch.put("k2", "v2");
  batch.del("gone");
  batch.put("k1", "v1-final");  // later ops in a batch win
  batch.put("k3", "v3");
  batch.del("k3");
  EXPECT_FALSE(batch.empty());
  db.write(batch);
  EXPECT_EQ(db.get("k1"), "v1-final");
  EXPECT_EQ(db.get("k2"), "v2");
  EXPECT_EQ(db.get("k3"), std::nullopt);
  EXPECT_EQ(db.get("gone"), std::nullopt);
  db.write(WriteBatch());  // empty batch is a no-op
  EXPECT_EQ(this->keys("", ""), (std::vector<std::string>{"k1", "k2"}));
}

TYPED_TEST(StorageTest, Counters) {
  auto& db = *this->db_;
  EXPECT_EQ(db.get_counter("c"), 0);
  WriteBatch batch;
  batch.add_counter("c", 5);
  batch.add_counter("c", -2);
  batch.add_counter("d", -7);
  db.write(batch);
  EXPECT_EQ(db.get_counter("c"), 3);
  EXPECT_EQ(db.get_counter("d"), -7);
  for (int i = 0; i < 100; ++i) {
    WriteBatch one;
    one.add_counter("c", 10);
    db.write(one);
  }
  EXPECT_EQ(db.get_counter("c"), 1003);
  WriteBatch big;
  big.add_counter("big", std::int64_t{1} << 40);
  big.add_counter("big", std::int64_t{1} << 40);
  db.write(big);
  EXPECT_EQ(db.get_counter("big"), std::int64_t{1} << 41);
  // Deleting a counter resets it; a put then count starts from 0 again.
  this->del("c");
  EXPECT_EQ(db.get_counter("c"), 0);
  WriteBatch again;
  again.add_counter("c", 1);
  db.write(again);
  EXPECT_EQ(db.get_counter("c"), 1);
  // The counter is an ordinary 8-byte value to get() and iterators.
  ASSERT_TRUE(db.get("c").has_value());
  EXPECT_EQ(db.get("c")->size(), 8u);
}

TYPED_TEST(StorageTest, IteratorForwardBackwardAndBounds) {
  auto& db = *this->db_;
  for (const char* k : {"a", "b", "b1", "b2", "c", "d"}) this->put(k, std::string("v") + k);
  EXPECT_EQ(this->keys("", ""), (std::vector<std::string>{"a", "b", "b1", "b2", "c", "d"}));
  EXPECT_EQ(this->keys("b", "c"), (std::vector<std::string>{"b", "b1", "b2"}));
  EXPECT_EQ(this->keys("b0", "z"), (std::vector<std::string>{"b1", "b2", "c", "d"}));
  EXPECT_EQ(this->keys("x", ""), std::vector<std::string>{});
  EXPECT_EQ(this->keys("b", "b"), std::vector<std::string>{});

  auto it = db.iterator("b", "c");
  it->seek_to_last();
  ASSERT_TRUE(it->valid());
  EXPECT_EQ(it->key(), "b2");
  EXPECT_EQ(it->value(), "vb2");
  it->prev();
  ASSERT_TRUE(it->valid());
  EXPECT_EQ(it->key(), "b1");
  it->prev();
  ASSERT_TRUE(it->valid());
  EXPECT_EQ(it->key(), "b");
  it->prev();
  EXPECT_FALSE(it->valid());  // "a" is below the lower bound

  it->seek_to_first();
  ASSERT_TRUE(it->valid());
  EXPECT_EQ(it->key(), "b");
  it->next();
  it->next();
  ASSERT_TRUE(it->valid());
  EXPECT_EQ(it->key(), "b2");
  it->prev();
  ASSERT_TRUE(it->valid());
  EXPECT_EQ(it->key(), "b1");
  it->next();
  it->next();
  EXPECT_FALSE(it->valid());  // "c" is the exclusive upper bound

  // Unbounded above.
  auto all = db.iterator("", "");
  all->seek_to_last();
  ASSERT_TRUE(all->valid());
  EXPECT_EQ(all->key(), "d");
}

// visit_range: the same keys as an iterator, both ways, stopping when asked, at a
// snapshot, skipping deleted keys.
TYPED_TEST(StorageTest, VisitRangeMatchesIterator) {
  auto& db = *this->db_;
  for (const char* k : {"a", "b", "b1", "b2", "c", "d"}) this->put(k, std::string("v") + k);
  auto visited = [&](std::string lower, std::string upper, bool forward, std::size_t stop_after,
                     const Snapshot* snapshot = nullptr) {
    std::vector<std::string> seen;
    db.visit_range(
        std::move(lower), std::move(upper), forward,
        [&](std::string_view key, std::string_view value) {
          EXPECT_EQ(value, "v" + std::string(key));
          seen.emplace_back(key);
          return seen.size() < stop_after;
        },
        snapshot);
    return seen;
  };
  using V = std::vector<std::string>;
  EXPECT_EQ(visited("", "", true, 100), (V{"a", "b", "b1", "b2", "c", "d"}));
  EXPECT_EQ(visited("", "", false, 100), (V{"d", "c", "b2", "b1", "b", "a"}));
  EXPECT_EQ(visited("b", "c", true, 100), (V{"b", "b1", "b2"}));
  EXPECT_EQ(visited("b", "c", false, 100), (V{"b2", "b1", "b"}));
  EXPECT_EQ(visited("b0", "", false, 100), (V{"d", "c", "b2", "b1"}));
  EXPECT_EQ(visited("b", "c", true, 2), (V{"b", "b1"}));
  EXPECT_EQ(visited("a", "z", false, 1), (V{"d"}));
  EXPECT_EQ(visited("c", "b", true, 100), V{});
  EXPECT_EQ(visited("c", "b", false, 100), V{});
  EXPECT_EQ(visited("x", "", false, 100), V{});

  auto snap = db.snapshot();
  WriteBatch batch;
  batch.del("b1");
  batch.put("b3", "vb3");
  db.write(batch);
  EXPECT_EQ(visited("b", "c", true, 100), (V{"b", "b2", "b3"}));
  EXPECT_EQ(visited("b", "c", false, 100, snap.get()), (V{"b2", "b1", "b"}));
}

TYPED_TEST(StorageTest, SeekAndSeekForPrev) {
  auto& db = *this->db_;
  for (const char* k : {"a", "c", "e", "g", "i"}) this->put(k, k);
  auto it = db.iterator("c", "h");

  it->seek("d");
  ASSERT_TRUE(it->valid());
  EXPECT_EQ(it->key(), "e");
  it->seek("e");
  ASSERT_TRUE(it->valid());
  EXPECT_EQ(it->key(), "e");
  it->seek("a");  // below the range: clamps to the lower bound
  ASSERT_TRUE(it->valid());
  EXPECT_EQ(it->key(), "c");
  it->seek("h");
  EXPECT_FALSE(it->valid());
  it->seek("gz");
  EXPECT_FALSE(it->valid());

  it->seek_for_prev("f");
  ASSERT_TRUE(it->valid());
  EXPECT_EQ(it->key(), "e");
  it->seek_for_prev("e");
  ASSERT_TRUE(it->valid());
  EXPECT_EQ(it->key(), "e");
  it->seek_for_prev("z");  // above the range: the last key in range
  ASSERT_TRUE(it->valid());
  EXPECT_EQ(it->key(), "g");
  it->seek_for_prev("h");
  ASSERT_TRUE(it->valid());
  EXPECT_EQ(it->key(), "g");
  it->seek_for_prev("b");  // below the range
  EXPECT_FALSE(it->valid());
  it->seek_for_prev("c");
  ASSERT_TRUE(it->valid());
  EXPECT_EQ(it->key(), "c");
  it->next();
  ASSERT_TRUE(it->valid());
  EXPECT_EQ(it->key(), "e");
}

TYPED_TEST(StorageTest, IteratorSkipsDeletedKeys) {
  auto& db = *this->db_;
  for (int i = 0; i < 10; ++i) this->put("k" + std::to_string(i), "v");
  for (int i = 0; i < 10; i += 2) this->del("k" + std::to_string(i));
  EXPECT_EQ(this->keys("", ""), (std::vector<std::string>{"k1", "k3", "k5", "k7", "k9"}));
  auto it = db.iterator("", "");
  it->seek("k2");
  ASSERT_TRUE(it->valid());
  EXPECT_EQ(it->key(), "k3");
  it->seek_for_prev("k4");
  ASSERT_TRUE(it->valid());
  EXPECT_EQ(it->key(), "k3");
}

TYPED_TEST(StorageTest, SnapshotIsolation) {
  auto& db = *this->db_;
  this->put("a", "1");
  this->put("b", "1");
  this->put("d", "1");
  auto snap = db.snapshot();

  WriteBatch batch;
  batch.put("a", "2");
  batch.del("b");
  batch.put("c", "2");
  batch.add_counter("n", 1);
  db.write(batch);

  EXPECT_EQ(db.get("a", snap.get()), "1");
  EXPECT_EQ(db.get("b", snap.get()), "1");
  EXPECT_EQ(db.get("c", snap.get()), std::nullopt);
  EXPECT_EQ(db.get("n", snap.get()), std::nullopt);
  EXPECT_EQ(db.get("a"), "2");
  EXPECT_EQ(db.get("b"), std::nullopt);
  EXPECT_EQ(db.get("c"), "2");

  using KV = std::vector<std::pair<std::string, std::string>>;
  EXPECT_EQ(this->scan("", "", snap.get()), (KV{{"a", "1"}, {"b", "1"}, {"d", "1"}}));
  EXPECT_EQ(this->scan("", "m"), (KV{{"a", "2"}, {"c", "2"}, {"d", "1"}}));

  // Later writes, including to keys rewritten several times, stay invisible too.
  for (int i = 0; i < 5; ++i) this->put("a", "x" + std::to_string(i));
  this->del("d");
  EXPECT_EQ(db.get("a", snap.get()), "1");
  EXPECT_EQ(db.get("d", snap.get()), "1");
  EXPECT_EQ(this->scan("", "", snap.get()), (KV{{"a", "1"}, {"b", "1"}, {"d", "1"}}));

  // A second snapshot sees its own point in time.
  auto snap2 = db.snapshot();
  this->put("a", "after-snap2");
  EXPECT_EQ(db.get("a", snap2.get()), "x4");
  EXPECT_EQ(db.get("a", snap.get()), "1");
  snap.reset();
  EXPECT_EQ(db.get("a", snap2.get()), "x4");
  EXPECT_EQ(db.get("d", snap2.get()), std::nullopt);
  this->put("a", "latest");
  EXPECT_EQ(db.get("a", snap2.get()), "x4");
  snap2.reset();
  EXPECT_EQ(db.get("a"), "latest");
}

TYPED_TEST(StorageTest, IteratorIsAPointInTimeView) {
  auto& db = *this->db_;
  for (int i = 0; i < 5; ++i) this->put("k" + std::to_string(i), "old");
  auto it = db.iterator("", "");
  it->seek_to_first();
  ASSERT_TRUE(it->valid());
  EXPECT_EQ(it->key(), "k0");
  // Writes after the iterator was created are not seen by it.
  this->put("k1", "new");
  this->del("k2");
  this->put("k25", "new");
  // A key created and removed again while the iterator lives.
  this->put("k15", "new");
  this->del("k15");
  std::vector<std::string> seen;
  for (; it->valid(); it->next())
    seen.push_back(std::string(it->key()) + "=" + std::string(it->value()));
  EXPECT_EQ(seen, (std::vector<std::string>{"k0=old", "k1=old", "k2=old", "k3=old", "k4=old"}));
}

// Random batches, snapshots taken and released at random, checked against plain map
// copies: exercises version retention and cleanup under overlapping snapshots.
TYPED_TEST(StorageTest, RandomOpsMatchReferenceModel) {
  auto& db = *this->db_;
  using Model = std::map<std::string, std::string>;
  struct Open {
    std::unique_ptr<Snapshot> snapshot;
    Model model;
  };
  std::mt19937 rng(5);
  constexpr int kKeys = 20;
  auto key = [&] { return "k" + std::to_string(rng() % kKeys); };
  auto check = [&](const Model& model, const Snapshot* snapshot) {
    std::vector<std::pair<std::string, std::string>> expected(model.begin(), model.end());
    EXPECT_EQ(this->scan("", "", snapshot), expected);
    // Backward walk of a sub-range.
    std::vector<std::pair<std::string, std::string>> backward;
    auto it = db.iterator("k1", "k5", snapshot);
    for (it->seek_to_last(); it->valid(); it->prev()) {
      backward.emplace_back(std::string(it->key()), std::string(it->value()));
    }
    std::vector<std::pair<std::string, std::string>> want(model.lower_bound("k1"),
                                                          model.lower_bound("k5"));
    std::reverse(want.begin(), want.end());
    EXPECT_EQ(backward, want);
    // Every key, written, deleted or never written: point reads find keys another way
    // than walks do.
    for (int i = 0; i < kKeys; ++i) {
      const std::string k = "k" + std::to_string(i);
      auto found = model.find(k);
      EXPECT_EQ(db.get(k, snapshot),
                found == model.end() ? std::nullopt : std::optional<std::string>(found->second))
          << k;
    }
  };

  Model model;
  std::vector<Open> open;
  for (int step = 0; step < 600; ++step) {
    switch (rng() % 6) {
      case 0:
      case 1:
      case 2: {
        WriteBatch batch;
        for (int n = rng() % 4 + 1; n > 0; --n) {
          std::string k = key();
          if (rng() % 3 == 0) {
            batch.del(k);
            model.erase(k);
          } else {
            std::string v = std::to_string(step) + "." + std::to_string(n);
            batch.put(k, v);
            model[k] = v;
          }
        }
        db.write(batch);
        break;
      }
      case 3:
        if (open.size() < 6) open.push_back({db.snapshot(), model});
        break;
      case 4:
        if (!open.empty()) open.erase(open.begin() + rng() % open.size());
        break;
      case 5:
        check(model, nullptr);
        for (const auto& o : open) check(o.model, o.snapshot.get());
        break;
    }
    if (::testing::Test::HasFailure()) return;
  }
}

TYPED_TEST(StorageTest, ConcurrentWritersAndReaders) {
  auto& db = *this->db_;
  constexpr int kWriters = 4, kReaders = 4, kBatches = 200;
  std::atomic<bool> failed{false};
  std::vector<std::thread> threads;
  // Each batch moves one unit between two counters and writes the same value to a pair of
  // keys; every consistent view sees both keys of a pair equal.
  for (int w = 0; w < kWriters; ++w) {
    threads.emplace_back([&, w] {
      std::mt19937 rng(w);
      const std::string id = std::to_string(w);
      for (int i = 0; i < kBatches; ++i) {
        WriteBatch batch;
        batch.add_counter("acct" + std::to_string(rng() % 8), -1);
        batch.add_counter("acct" + std::to_string(rng() % 8), 1);
        batch.put("pair" + id + "a", std::to_string(i));
        batch.put("pair" + id + "b", std::to_string(i));
        db.write(batch);
      }
    });
  }
  for (int r = 0; r < kReaders; ++r) {
    threads.emplace_back([&] {
      for (int i = 0; i < 100; ++i) {
        std::map<std::string, std::string> seen;
        auto it = db.iterator("pair", "pair~");
        for (it->seek_to_first(); it->valid(); it->next()) {
          seen[std::string(it->key())] = it->value();
        }
        for (int w = 0; w < kWriters; ++w) {
          const std::string id = std::to_string(w);
          if (seen["pair" + id + "a"] != seen["pair" + id + "b"]) failed = true;
        }
        auto snap = db.snapshot();
        const auto a = db.get("pair0a", snap.get());
        std::this_thread::yield();
        const auto b = db.get("pair0b", snap.get());
        if (a != b) failed = true;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_FALSE(failed);
  std::int64_t total = 0;
  for (int a = 0; a < 8; ++a) total += db.get_counter("acct" + std::to_string(a));
  EXPECT_EQ(total, 0);
  for (int w = 0; w < kWriters; ++w) {
    EXPECT_EQ(db.get("pair" + std::to_string(w) + "a"), std::to_string(kBatches - 1));
  }
}

TYPED_TEST(StorageTest, ReopenKeepsData) {
  if constexpr (!TypeParam::kDurable) {
    GTEST_SKIP() << "the memory back end is not durable";
  } else {
    this->put("kept", "yes");
    WriteBatch batch;
    batch.add_counter("count", 41);
    batch.add_counter("count", 1);
    this->db_->write(batch);
    this->del("kept-not");
    this->db_.reset();
    this->db_ = this->backend_.open();
    EXPECT_EQ(this->db_->get("kept"), "yes");
    EXPECT_EQ(this->db_->get_counter("count"), 42);
    EXPECT_EQ(this->keys("", ""), (std::vector<std::string>{"count", "kept"}));
  }
}

TEST(RocksStorage, OpenFailureThrowsStorageError) {
  Options options;
  options.path = "/proc/definitely/not/writable/kumo";
  EXPECT_THROW(open_rocksdb(options), StorageError);
}

TEST(RocksStorage, SyncWritesWork) {
  TempDir dir;
  Options options;
  options.path = dir.path();
  options.sync = true;
  auto db = open_rocksdb(options);
  WriteBatch batch;
  batch.put("k", "v");
  db->write(batch);
  EXPECT_EQ(db->get("k"), "v");
}

}  // namespace
}  // namespace kumo::storage
