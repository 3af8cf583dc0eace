// The storage seam: what a write hands the storage as one partition's change, and what as
// maintenance that a back end without cross-object batches applies afterwards
// (storage::WriteBatch). The item, its LSI entries and the counters are the partition's;
// GSI entries, the TTL schedule and stream records are maintenance.
#include <gtest/gtest.h>

#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "codec/key_codec.h"
#include "engine/engine.h"
#include "values.h"

namespace kumo::engine {
namespace {

using namespace kumo::test;
using storage::WriteBatch;

// The in-memory store, keeping a copy of every batch written.
class RecordingStorage : public storage::Storage {
 public:
  RecordingStorage() : inner_(storage::open_memory()) {}
  std::optional<std::string> get(std::string_view key, const storage::Snapshot* snapshot) override {
    return inner_->get(key, snapshot);
  }
  void write(const WriteBatch& batch) override {
    {
      std::lock_guard lock(mutex_);
      batches_.push_back(batch);
    }
    inner_->write(batch);
  }
  std::unique_ptr<storage::Snapshot> snapshot() override { return inner_->snapshot(); }
  std::unique_ptr<storage::Iterator> iterator(std::string lower, std::string upper,
                                              const storage::Snapshot* snapshot) override {
    return inner_->iterator(std::move(lower), std::move(upper), snapshot);
  }
  std::vector<WriteBatch> take() {
    std::lock_guard lock(mutex_);
    return std::exchange(batches_, {});
  }

 private:
  std::unique_ptr<storage::Storage> inner_;
  std::mutex mutex_;
  std::vector<WriteBatch> batches_;
};

bool starts_with(const std::string& key, const std::string& prefix) {
  return key.compare(0, prefix.size(), prefix) == 0;
}

class WriteSeamTest : public ::testing::Test {
 protected:
  WriteSeamTest() {
    auto recording = std::make_unique<RecordingStorage>();
    storage_ = recording.get();
    EngineOptions o;
    o.background_maintenance = false;
    engine_.emplace(std::move(recording), o);
    TableDefinition def;
    def.name = "orders";
    def.attribute_definitions = {
        {"pk", ScalarType::S}, {"sk", ScalarType::S}, {"g", ScalarType::S}, {"l", ScalarType::S}};
    def.key = {{"pk", ScalarType::S}, AttributeDefinition{"sk", ScalarType::S}};
    IndexDefinition gsi;
    gsi.name = "by_g";
    gsi.id = 1;
    gsi.key_schema = {{"g", KeyType::HASH}};
    gsi.hash = {{"g", ScalarType::S}};
    gsi.projection.type = ProjectionType::ALL;
    gsi.key_attributes = {"g", "pk", "sk"};
    def.global_indexes.push_back(gsi);
    IndexDefinition lsi;
    lsi.name = "by_l";
    lsi.global = false;
    lsi.id = 2;
    lsi.key_schema = {{"pk", KeyType::HASH}, {"l", KeyType::RANGE}};
    lsi.hash = {{"pk", ScalarType::S}};
    lsi.range = {{"l", ScalarType::S}};
    lsi.projection.type = ProjectionType::ALL;
    lsi.key_attributes = {"l", "pk", "sk"};
    def.local_indexes.push_back(lsi);
    def.next_index_id = 3;
    def.stream = StreamSpecification{true, "NEW_IMAGE"};
    def.latest_stream_label = "2026-11-27T00:00:00.000";
    def.ttl_enabled = true;
    def.ttl_attribute = "exp";
    table_ = engine_->create_table(def);
    // The first record reserves a block of stream sequence numbers, in a batch of its own.
    engine_->put_item(*table_, order("warm", "up"));
    storage_->take();
  }

  Item order(const std::string& pk, const std::string& sk) {
    return {{"pk", S(pk)}, {"sk", S(sk)}, {"g", S("G")}, {"l", S("L")}, {"exp", N("4102444800")}};
  }

  RecordingStorage* storage_ = nullptr;
  std::optional<Engine> engine_;
  TablePtr table_;
};

TEST_F(WriteSeamTest, APutIsOnePartitionGroupAndItsMaintenance) {
  engine_->put_item(*table_, order("a", "1"));
  std::vector<WriteBatch> batches = storage_->take();
  ASSERT_EQ(batches.size(), 1u);
  const WriteBatch& batch = batches[0];
  const std::string item = engine_->item_key(*table_, order("a", "1"));
  ASSERT_EQ(batch.groups(), std::vector<std::string>{item});
  const std::string t = codec::table_prefix(table_->id);
  const std::string gsi =
      codec::space_prefix(table_->id, codec::Space::kIndexes) + std::string("\0\0\0\1", 4);
  const std::string lsi =
      codec::space_prefix(table_->id, codec::Space::kIndexes) + std::string("\0\0\0\2", 4);
  int partition_puts = 0, counters = 0, maintenance = 0;
  bool item_put = false, lsi_put = false, gsi_put = false, ttl_put = false, stream_put = false;
  for (const WriteBatch::Op& op : batch.ops()) {
    EXPECT_EQ(op.group, 0u) << "every op belongs to the item's group";
    if (!op.maintenance) {
      if (op.type == WriteBatch::OpType::kAddCounter) {
        ++counters;
        EXPECT_TRUE(starts_with(op.key, t)) << "counters are the table's";
      } else {
        ++partition_puts;
        item_put = item_put || op.key == item;
        lsi_put = lsi_put || starts_with(op.key, lsi);
        EXPECT_FALSE(starts_with(op.key, gsi)) << "a GSI entry is maintenance";
      }
      continue;
    }
    ++maintenance;
    gsi_put = gsi_put || starts_with(op.key, gsi);
    ttl_put = ttl_put || starts_with(op.key, codec::space_prefix(table_->id, codec::Space::kTtl));
    stream_put =
        stream_put || starts_with(op.key, codec::space_prefix(table_->id, codec::Space::kStream));
  }
  EXPECT_EQ(partition_puts, 2);  // the item and its LSI entry
  EXPECT_TRUE(item_put);
  EXPECT_TRUE(lsi_put);
  // count, bytes, the item collection, and each index's count and bytes
  EXPECT_EQ(counters, 7);
  EXPECT_TRUE(gsi_put);
  EXPECT_TRUE(ttl_put);
  EXPECT_TRUE(stream_put);
  EXPECT_EQ(maintenance, 3);  // GSI entry, TTL entry, stream record
}

TEST_F(WriteSeamTest, ATransactionHasOneGroupPerItem) {
  std::vector<TransactWrite> writes(2);
  for (int i = 0; i < 2; ++i) {
    writes[i].table = table_.get();
    Item item = order("t", std::to_string(i));
    writes[i].storage_key = engine_->item_key(*table_, item);
    writes[i].mutation = [item](const std::optional<Item>&) { return item; };
  }
  std::vector<WriteResult> results;
  std::vector<std::exception_ptr> failures;
  ASSERT_TRUE(engine_->transact_write(writes, &results, &failures));
  std::vector<WriteBatch> batches = storage_->take();
  ASSERT_EQ(batches.size(), 1u);
  EXPECT_EQ(batches[0].groups(),
            (std::vector<std::string>{writes[0].storage_key, writes[1].storage_key}));
  for (const WriteBatch::Op& op : batches[0].ops()) {
    if (op.maintenance) continue;
    if (op.key == writes[0].storage_key) {
      EXPECT_EQ(op.group, 0u);
    } else if (op.key == writes[1].storage_key) {
      EXPECT_EQ(op.group, 1u);
    }
  }
}

TEST_F(WriteSeamTest, TheLocalBackEndsApplyMaintenanceWithThePartition) {
  engine_->put_item(*table_, order("a", "1"));
  // This item and the fixture's first.
  EXPECT_EQ(engine_->item_count(*table_), 2);
  EXPECT_EQ(engine_->index_item_count(*table_, table_->global_indexes[0]), 2);
  EXPECT_EQ(engine_->index_item_count(*table_, table_->local_indexes[0]), 2);
}

}  // namespace
}  // namespace kumo::engine
