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

#include "storage/memory_storage.h"

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

// Keys that share leading bytes, are shorter than 8 bytes or hold zero bytes sort by
// unsigned byte order, in walks and seeks alike.
TYPED_TEST(StorageTest, KeysSortByUnsignedBytes) {
  auto& db = *this->db_;
  const std::vector<std::string> sorted = {
      std::string("\0", 1),
      std::string("\0\0", 2),
      "a",
      std::string("a\0", 2),
      std::string("a\0\0\0\0\0\0\0\0", 9),
      "abcdefg",
      "abcdefgh",
      std::string("abcdefgh\0", 9),
      "abcdefgha",
      "abcdefghb",
      "abcdefgi",
      "abcdefg\x7f",
      "abcdefg\x80",
      "\xff",
      "\xff\xff\xff\xff\xff\xff\xff\xff\xff",
  };
  for (auto it = sorted.rbegin(); it != sorted.rend(); ++it) this->put(*it, "v" + *it);
  EXPECT_EQ(this->keys("", ""), sorted);
  for (std::size_t i = 0; i < sorted.size(); ++i) {
    EXPECT_EQ(db.get(sorted[i]), "v" + sorted[i]);
    auto it = db.iterator("", "");
    it->seek(sorted[i]);
    ASSERT_TRUE(it->valid());
    EXPECT_EQ(it->key(), sorted[i]);
    it->seek_for_prev(sorted[i]);
    ASSERT_TRUE(it->valid());
    EXPECT_EQ(it->key(), sorted[i]);
    // A range that starts or ends between two neighbours.
    if (i + 1 < sorted.size()) {
      EXPECT_EQ(this->keys(sorted[i] + std::string("\0", 1), sorted[i + 1] + std::string("\0", 1)),
                std::vector<std::string>{sorted[i + 1]});
    }
  }
}

// Values of many sizes, rewritten larger and smaller, read back at the latest and at
// snapshots taken in between.
TYPED_TEST(StorageTest, ValuesOfManySizes) {
  auto& db = *this->db_;
  const std::vector<std::size_t> sizes = {0,    1,    7,    100, 3000, 10, 5000,
                                          2030, 2031, 2040, 64,  0,    300};
  std::vector<std::unique_ptr<Snapshot>> snapshots;
  std::vector<std::string> values;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    std::string value(sizes[i], static_cast<char>('a' + i));
    if (!value.empty()) value.back() = '!';
    this->put("key", value);
    this->put("key-" + std::to_string(i), value);
    EXPECT_EQ(db.get("key"), value);
    values.push_back(value);
    snapshots.push_back(db.snapshot());
  }
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    EXPECT_EQ(db.get("key", snapshots[i].get()), values[i]) << i;
    EXPECT_EQ(db.get("key-" + std::to_string(i)), values[i]) << i;
  }
  this->del("key");
  EXPECT_EQ(db.get("key"), std::nullopt);
  EXPECT_EQ(db.get("key", snapshots.back().get()), values.back());
}

// A key deleted and written again while a snapshot is live: the snapshot still reads the
// value it had, walks included, and later readers the new one.
TYPED_TEST(StorageTest, KeyRewrittenAfterDeleteUnderSnapshot) {
  auto& db = *this->db_;
  this->put("a", "1");
  this->put("b", "1");
  auto snap = db.snapshot();
  this->del("a");
  auto deleted = db.snapshot();
  this->put("a", "2");
  EXPECT_EQ(db.get("a"), "2");
  EXPECT_EQ(db.get("a", snap.get()), "1");
  EXPECT_EQ(db.get("a", deleted.get()), std::nullopt);
  using KV = std::vector<std::pair<std::string, std::string>>;
  EXPECT_EQ(this->scan("", "", snap.get()), (KV{{"a", "1"}, {"b", "1"}}));
  EXPECT_EQ(this->scan("", "", deleted.get()), (KV{{"b", "1"}}));
  EXPECT_EQ(this->scan("", ""), (KV{{"a", "2"}, {"b", "1"}}));
  this->del("a");
  this->put("a", "3");
  EXPECT_EQ(db.get("a", snap.get()), "1");
  EXPECT_EQ(db.get("a", deleted.get()), std::nullopt);
  snap.reset();
  this->put("a", "4");
  EXPECT_EQ(db.get("a", deleted.get()), std::nullopt);
  EXPECT_EQ(db.get("a"), "4");
}

// An iterator keeps its place, and its point-in-time view, while writers insert and
// erase many keys around it, which moves keys between the nodes of an ordered index.
TYPED_TEST(StorageTest, IteratorSurvivesInsertsAndErasesAroundIt) {
  auto& db = *this->db_;
  auto key = [](int i) {
    std::string k = std::to_string(i);
    return "k" + std::string(6 - k.size(), '0') + k;
  };
  constexpr int kKeys = 3000;
  for (int i = 0; i < kKeys; i += 2) this->put(key(i), "old" + std::to_string(i));
  auto it = db.iterator(key(0), key(kKeys));
  it->seek(key(1000));
  std::vector<int> seen;
  int round = 0;
  // Forward from the middle, writing between steps: odd keys near and far appear, even
  // keys near the position go.
  for (; it->valid(); it->next(), ++round) {
    const int at = std::stoi(std::string(it->key().substr(1)));
    EXPECT_EQ(it->value(), "old" + std::to_string(at));
    seen.push_back(at);
    WriteBatch batch;
    for (int d = -20; d <= 20; ++d) {
      const int near = at + d;
      if (near < 0 || near >= kKeys) continue;
      if (near % 2 == 1) {
        batch.put(key(near), "new");
      } else if (d != 0 && round % 3 == 0) {
        batch.del(key(near));
      }
    }
    batch.put(key((at * 7 + 1) % kKeys | 1), "far");
    db.write(batch);
  }
  std::vector<int> want;
  for (int i = 1000; i < kKeys; i += 2) want.push_back(i);
  EXPECT_EQ(seen, want);
  // Backward, with the same kind of churn.
  seen.clear();
  round = 0;
  for (it->seek_for_prev(key(999)); it->valid(); it->prev(), ++round) {
    const int at = std::stoi(std::string(it->key().substr(1)));
    EXPECT_EQ(it->value(), "old" + std::to_string(at));
    seen.push_back(at);
    WriteBatch batch;
    for (int d = -20; d <= 20; ++d) {
      const int near = at + d;
      if (near < 0 || near >= kKeys || near == at) continue;
      batch.put(key(near), "new");
      if (round % 2 == 0) batch.del(key(near));
    }
    db.write(batch);
  }
  want.clear();
  for (int i = 998; i >= 0; i -= 2) want.push_back(i);
  EXPECT_EQ(seen, want);
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

// The memory back end keeps an older version only while a reader may still see it: a
// write after the last such reader went away drops it.
TEST(MemoryStorage, VersionsPrunedAfterSnapshotReleased) {
  auto db = open_memory();
  auto put = [&](const std::string& key, const std::string& value) {
    WriteBatch batch;
    batch.put(key, value);
    db->write(batch);
  };
  put("a", "1");
  put("b", "1");
  EXPECT_EQ(memory_usage(*db).versions, 2u);
  put("a", "2");  // no reader: the old version goes at once
  EXPECT_EQ(memory_usage(*db).versions, 2u);
  auto snap = db->snapshot();
  put("a", "3");
  put("a", "4");  // "2" is kept for the snapshot, "3" is seen by no one
  EXPECT_EQ(memory_usage(*db).versions, 3u);
  WriteBatch del;
  del.del("b");
  db->write(del);  // a tombstone, and "1" behind it for the snapshot
  EXPECT_EQ(memory_usage(*db).keys, 2u);
  EXPECT_EQ(memory_usage(*db).versions, 4u);
  EXPECT_EQ(db->get("a", snap.get()), "2");
  EXPECT_EQ(db->get("b", snap.get()), "1");
  snap.reset();
  put("a", "5");
  put("b", "2");
  const MemoryUsage usage = memory_usage(*db);
  EXPECT_EQ(usage.keys, 2u);
  EXPECT_EQ(usage.versions, 2u);
  EXPECT_EQ(usage.data_bytes, 4u);
  // A key deleted with no reader goes entirely.
  WriteBatch gone;
  gone.del("a");
  db->write(gone);
  EXPECT_EQ(memory_usage(*db).keys, 1u);
  // An iterator is a reader too, until destroyed.
  auto it = db->iterator("", "");
  put("b", "3");
  EXPECT_EQ(memory_usage(*db).versions, 2u);
  it.reset();
  put("b", "4");
  EXPECT_EQ(memory_usage(*db).versions, 1u);
}

// A batch resolves each key's ops in order, counters over puts included, and applies
// nothing when a counter meets a value that is not one.
TEST(MemoryStorage, BatchResolvesOpsPerKeyOrAppliesNothing) {
  auto db = open_memory();
  WriteBatch batch;
  batch.add_counter("c", 5);
  batch.put("x", "1");
  batch.put("c", std::string("\x02\0\0\0\0\0\0\0", 8));
  batch.add_counter("c", 1);
  batch.del("x");
  batch.put("a", "first");
  db->write(batch);
  EXPECT_EQ(db->get_counter("c"), 3);
  EXPECT_EQ(db->get("x"), std::nullopt);
  EXPECT_EQ(db->get("a"), "first");
  WriteBatch bad;
  bad.put("a", "second");
  bad.put("z", "new");
  bad.put("c", "not a counter");
  bad.add_counter("c", 1);
  EXPECT_THROW(db->write(bad), StorageError);
  EXPECT_EQ(db->get("a"), "first");
  EXPECT_EQ(db->get("z"), std::nullopt);
  EXPECT_EQ(db->get_counter("c"), 3);
}

// memory_usage() refuses a store of another back end.
TEST(MemoryStorage, UsageOfAnotherBackEndThrows) {
  TempDir dir;
  Options options;
  options.path = dir.path();
  auto rocks = open_rocksdb(options);
  EXPECT_THROW(memory_usage(*rocks), StorageError);
}

// Many keys written, deleted and written again at other sizes: the memory of deleted
// entries is reused, and every value reads back.
TEST(MemoryStorage, ManyKeysDeletedAndRewrittenAtOtherSizes) {
  auto db = open_memory();
  constexpr int kKeys = 20000;
  for (int round = 0; round < 3; ++round) {
    const std::size_t size = 20 + 90 * static_cast<std::size_t>(round);
    for (int i = 0; i < kKeys; i += 100) {
      WriteBatch batch;
      for (int j = i; j < i + 100; ++j)
        batch.put("key" + std::to_string(j), std::string(size, 'a' + round));
      db->write(batch);
    }
    MemoryUsage usage = memory_usage(*db);
    EXPECT_EQ(usage.keys, static_cast<std::size_t>(kKeys));
    EXPECT_EQ(db->get("key77"), std::string(size, 'a' + round));
    for (int i = 0; i < kKeys; i += 100) {
      WriteBatch batch;
      for (int j = i; j < i + 100; ++j) {
        if (j % 4 != round) batch.del("key" + std::to_string(j));
      }
      db->write(batch);
    }
    usage = memory_usage(*db);
    EXPECT_EQ(usage.keys, static_cast<std::size_t>(kKeys / 4));
    EXPECT_EQ(usage.versions, usage.keys);
    for (int j = 0; j < kKeys; j += 997) {
      EXPECT_EQ(db->get("key" + std::to_string(j)),
                j % 4 == round ? std::optional<std::string>(std::string(size, 'a' + round))
                               : std::nullopt)
          << j;
    }
  }
  // Every key deleted, then written again.
  db->erase_range("", "");
  EXPECT_EQ(memory_usage(*db).keys, 0u);
  EXPECT_EQ(db->get("key1"), std::nullopt);
  for (int j = 0; j < kKeys; j += 10) {
    WriteBatch batch;
    batch.put("key" + std::to_string(j), "again");
    db->write(batch);
  }
  EXPECT_EQ(memory_usage(*db).keys, static_cast<std::size_t>(kKeys / 10));
  EXPECT_EQ(db->get("key10"), "again");
  EXPECT_EQ(db->get("key11"), std::nullopt);
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
