// The TTL reaper and the stream trimmer resume where their last pass stopped: a pass
// reads from there, never again over the entries earlier passes deleted (in RocksDB each
// such deletion stays a tombstone that a walk must step over until compaction drops it).
#include <gtest/gtest.h>

#include <algorithm>

#include <mutex>
#include <string>
#include <vector>

#include "codec/key_codec.h"
#include "engine/engine.h"
#include "engine/forwarding_storage.h"
#include "model/clock.h"
#include "values.h"

namespace kumo::engine {
namespace {

using namespace kumo::test;

// A store that remembers where each walk began and every point read, and otherwise is the
// in-memory store.
class SpyStorage : public ForwardingStorage {
 public:
  SpyStorage() : ForwardingStorage(storage::open_memory()) {}

  std::unique_ptr<storage::Iterator> iterator(std::string lower, std::string upper,
                                              const storage::Snapshot* snapshot) override {
    {
      std::lock_guard lock(mutex_);
      walks_.push_back(lower);
    }
    return ForwardingStorage::iterator(std::move(lower), std::move(upper), snapshot);
  }

  // The lower bounds of the walks begun since the last call that lie in `prefix`.
  std::vector<std::string> walks_within(const std::string& prefix) {
    std::lock_guard lock(mutex_);
    std::vector<std::string> out;
    for (const std::string& lower : walks_) {
      if (lower.compare(0, prefix.size(), prefix) == 0) out.push_back(lower);
    }
    walks_.clear();
    return out;
  }

 private:
  std::mutex mutex_;
  std::vector<std::string> walks_;
};

class MaintenancePassesTest : public ::testing::Test {
 protected:
  MaintenancePassesTest() {
    auto spy = std::make_unique<SpyStorage>();
    spy_ = spy.get();
    EngineOptions o;
    o.background_maintenance = false;  // the tests run the passes themselves
    engine_.emplace(std::move(spy), o);
    TableDefinition def;
    def.name = "events";
    def.attribute_definitions = {{"pk", ScalarType::S}};
    def.key = {{"pk", ScalarType::S}, std::nullopt};
    def.stream = StreamSpecification{true, "KEYS_ONLY"};
    def.latest_stream_label = "2026-11-22T00:00:00.000";
    table_ = engine_->create_table(def);
    enable_ttl();
  }

  void enable_ttl() {
    engine_->update_table("events", [](TableDefinition& t) {
      t.ttl_enabled = true;
      t.ttl_attribute = "exp";
      t.ttl_scheduling = true;  // until the items already there are scheduled
    });
  }

  void put(const std::string& pk, long long expiry) {
    engine_->put_item(*table_, {{"pk", S(pk)}, {"exp", N(expiry)}});
  }
  bool exists(const std::string& pk) {
    return engine_->get_item(*table_, {{"pk", S(pk)}}).has_value();
  }

  std::string schedule() const { return codec::space_prefix(table_->id, codec::Space::kTtl); }
  std::string schedule_at(long long seconds) const {
    std::string key = schedule();
    codec::append_key_value(&key, N(seconds));
    return key;
  }

  SpyStorage* spy_ = nullptr;
  std::optional<Engine> engine_;
  TablePtr table_;
  const long long now_ = static_cast<long long>(now_seconds());
};

TEST_F(MaintenancePassesTest, ATtlPassStartsWhereTheLastOneStopped) {
  for (int i = 0; i < 300; ++i) put("old" + std::to_string(i), now_ - 100 + i % 50);
  put("later", now_ + 100);
  spy_->walks_within(schedule());
  EXPECT_EQ(engine_->expire_items(static_cast<double>(now_)), 300u);
  std::vector<std::string> first = spy_->walks_within(schedule());
  ASSERT_FALSE(first.empty());
  EXPECT_EQ(first.front(), schedule());  // the first pass begins at the beginning

  EXPECT_EQ(engine_->expire_items(static_cast<double>(now_ + 1)), 0u);
  std::vector<std::string> second = spy_->walks_within(schedule());
  ASSERT_FALSE(second.empty());
  for (const std::string& lower : second) EXPECT_GE(lower, schedule_at(now_));
  EXPECT_TRUE(exists("later"));
  EXPECT_EQ(engine_->expire_items(static_cast<double>(now_ + 101)), 1u);
  EXPECT_FALSE(exists("later"));
}

TEST_F(MaintenancePassesTest, AnEntryWrittenBehindThePassesIsExpiredByTheNextOne) {
  put("a", now_ - 10);
  EXPECT_EQ(engine_->expire_items(static_cast<double>(now_)), 1u);
  spy_->walks_within(schedule());
  // Already expired when written: its entry lies behind where the passes have reached.
  put("b", now_ - 1000);
  put("c", now_ - 5);
  put("d", now_ + 5);
  EXPECT_EQ(engine_->expire_items(static_cast<double>(now_ + 1)), 2u);
  EXPECT_FALSE(exists("b"));
  EXPECT_FALSE(exists("c"));
  EXPECT_TRUE(exists("d"));
  for (const std::string& lower : spy_->walks_within(schedule())) {
    EXPECT_GE(lower, schedule_at(now_));
  }
  EXPECT_EQ(engine_->expire_items(static_cast<double>(now_ + 10)), 1u);
  EXPECT_FALSE(exists("d"));
}

TEST_F(MaintenancePassesTest, AnEntryMovedBehindThePassesIsExpiredByTheNextOne) {
  put("a", now_ + 3600);
  EXPECT_EQ(engine_->expire_items(static_cast<double>(now_)), 0u);
  put("a", now_ - 3600);  // an update moves the TTL into the past
  EXPECT_EQ(engine_->expire_items(static_cast<double>(now_ + 1)), 1u);
  EXPECT_FALSE(exists("a"));
}

TEST_F(MaintenancePassesTest, APassWithAnEarlierClockLeavesLaterEntriesToLaterPasses) {
  EXPECT_EQ(engine_->expire_items(static_cast<double>(now_ + 100)), 0u);
  put("a", now_ + 50);  // behind the pass at now + 100
  EXPECT_EQ(engine_->expire_items(static_cast<double>(now_)), 0u);
  EXPECT_TRUE(exists("a"));
  EXPECT_EQ(engine_->expire_items(static_cast<double>(now_ + 60)), 1u);
  EXPECT_FALSE(exists("a"));
}

TEST_F(MaintenancePassesTest, TtlDisabledAndEnabledAgainSchedulesFromTheBeginning) {
  put("a", now_ - 10);
  EXPECT_EQ(engine_->expire_items(static_cast<double>(now_)), 1u);
  engine_->update_table("events", [](TableDefinition& t) { t.ttl_enabled = false; });
  put("b", now_ - 10);  // not scheduled: TTL is off
  EXPECT_EQ(engine_->expire_items(static_cast<double>(now_ + 1)), 0u);
  EXPECT_TRUE(exists("b"));
  // The items already there are scheduled in the background; wait for it.
  enable_ttl();
  for (int i = 0; i < 2000 && engine_->catalog().find("events")->ttl_scheduling; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_FALSE(engine_->catalog().find("events")->ttl_scheduling);
  EXPECT_EQ(engine_->expire_items(static_cast<double>(now_ + 2)), 1u);
  EXPECT_FALSE(exists("b"));
}

TEST_F(MaintenancePassesTest, ATrimPassStartsAtTheOldestRecordStillKept) {
  for (int i = 0; i < 2500; ++i) engine_->put_item(*table_, {{"pk", S(std::to_string(i))}});
  const StreamInfo before = engine_->streams().list("events").back();
  spy_->walks_within("");
  const std::string records = codec::space_prefix(table_->id, codec::Space::kStream);
  engine_->streams().trim(now_seconds() + 10, 5);
  const StreamInfo after = engine_->streams().list("events").back();
  EXPECT_EQ(after.trimmed_before, engine_->streams().next_sequence());
  std::vector<std::string> walks = spy_->walks_within(records);
  // Batches of 1,000 records, each erased as a range: every walk (the pass's own and the
  // erasure's) begins where the batch before ended, never before it; four batch starts
  // (the last finds nothing old enough).
  std::string start = records;
  codec::append_u64(&start, before.trimmed_before);
  ASSERT_FALSE(walks.empty());
  EXPECT_EQ(walks[0], start);
  for (std::size_t i = 1; i < walks.size(); ++i) EXPECT_GE(walks[i], walks[i - 1]);
  std::vector<std::string> batches = walks;
  batches.erase(std::unique(batches.begin(), batches.end()), batches.end());
  EXPECT_EQ(batches.size(), 4u);

  engine_->put_item(*table_, {{"pk", S("new")}});
  engine_->streams().trim(now_seconds() - 1000, 5);  // nothing old enough
  walks = spy_->walks_within(records);
  ASSERT_EQ(walks.size(), 1u);
  start = records;
  codec::append_u64(&start, after.trimmed_before);
  EXPECT_EQ(walks[0], start);
}

}  // namespace
}  // namespace kumo::engine
