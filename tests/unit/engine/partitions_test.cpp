// Partitions of tables and GSIs in the engine: the initial maps at CreateTable and at load,
// doubling when UpdateTable raises throughput, splits by size and at a token, and where an
// index write's units and bytes go.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "capacity/manager.h"
#include "codec/key_codec.h"
#include "engine/catalog.h"
#include "engine/engine.h"
#include "engine/forwarding_storage.h"
#include "engine/index_keys.h"
#include "model/clock.h"
#include "values.h"

namespace kumo::engine {
namespace {

using namespace kumo::test;

// Storage shared by several engines in turn (a restart).
using SharedStorage = ForwardingStorage;

TableDefinition table_def(std::string name, BillingMode mode, std::int64_t rcu = 0,
                          std::int64_t wcu = 0) {
  TableDefinition def;
  def.name = std::move(name);
  def.attribute_definitions = {{"pk", ScalarType::S}, {"g", ScalarType::S}};
  def.key = {{"pk", ScalarType::S}, std::nullopt};
  def.billing_mode = mode;
  def.throughput = {rcu, wcu};
  return def;
}

IndexDefinition gsi(std::uint32_t id, std::int64_t rcu = 0, std::int64_t wcu = 0) {
  IndexDefinition index;
  index.name = "by_g";
  index.id = id;
  index.key_schema = {{"g", KeyType::HASH}};
  index.hash = {{"g", ScalarType::S}};
  index.projection.type = ProjectionType::ALL;
  index.throughput = {rcu, wcu};
  index.key_attributes = {"g", "pk"};
  return index;
}

class PartitionsTest : public ::testing::Test {
 protected:
  PartitionsTest()
      : clock_(1'767'225'600'000'000'000),
        manager_(capacity::CapacityOptions{}, clock_),
        engine_(storage::open_memory(), options()) {}

  EngineOptions options() {
    EngineOptions o;
    o.background_maintenance = false;
    o.clock = &clock_;
    o.manual_clock = &clock_;
    o.capacity = &manager_;
    return o;
  }

  ManualClock clock_;
  capacity::CapacityManager manager_;
  Engine engine_;
};

std::vector<std::uint32_t> ids(const PartitionMap& map) {
  std::vector<std::uint32_t> out;
  for (const auto& r : map.ranges) out.push_back(r.id);
  return out;
}

TEST_F(PartitionsTest, CreateTableGivesTheTableAndEachGsiTheirInitialPartitions) {
  TableDefinition def = table_def("small", BillingMode::PROVISIONED, 5, 5);
  def.global_indexes.push_back(gsi(1, 1000, 1000));
  TablePtr t = engine_.create_table(def);
  EXPECT_EQ(ids(t->capacity.partitions), (std::vector<std::uint32_t>{1}));
  EXPECT_EQ(ids(t->global_indexes[0].capacity.partitions), (std::vector<std::uint32_t>{2, 3}));
  EXPECT_EQ(t->next_partition_id, 4u);
  EXPECT_EQ(t->global_indexes[0].capacity.partitions.ranges[1].first_token, 1ull << 63);
  EXPECT_NE(t->meters, nullptr);

  TablePtr od = engine_.create_table(table_def("od", BillingMode::PAY_PER_REQUEST));
  EXPECT_EQ(od->capacity.partitions.size(), 4u);
  TableDefinition warm = table_def("warm", BillingMode::PAY_PER_REQUEST);
  warm.capacity.warm_read = 30000;
  warm.capacity.warm_write = 10000;
  EXPECT_EQ(engine_.create_table(warm)->capacity.partitions.size(), 10u);
  EXPECT_EQ(engine_.create_table(table_def("mid", BillingMode::PROVISIONED, 5000, 2000))
                ->capacity.partitions.size(),
            4u);
}

TEST_F(PartitionsTest, RaisedThroughputDoublesUntilEnoughAndNewGsisGetMaps) {
  engine_.create_table(table_def("t", BillingMode::PROVISIONED, 5, 5));
  TablePtr t = engine_.update_table("t", [](TableDefinition& d) { d.throughput = {5000, 2000}; });
  EXPECT_EQ(ids(t->capacity.partitions), (std::vector<std::uint32_t>{6, 7, 4, 5}));
  ASSERT_EQ(t->capacity.splits.size(), 3u);
  EXPECT_EQ(t->capacity.splits[0].cause, SplitCause::kThroughput);
  // Lowering never merges.
  t = engine_.update_table("t", [](TableDefinition& d) { d.throughput = {5, 5}; });
  EXPECT_EQ(t->capacity.partitions.size(), 4u);

  t = engine_.update_table(
      "t", [](TableDefinition& d) { d.global_indexes.push_back(gsi(d.next_index_id++, 5, 5)); });
  EXPECT_EQ(ids(t->global_indexes[0].capacity.partitions), (std::vector<std::uint32_t>{8}));
  EXPECT_EQ(t->meters, engine_.catalog().find("t")->meters);
}

TEST(PartitionsLoadTest, ATableStoredWithoutPartitionsGetsThemAtLoad) {
  auto shared = std::shared_ptr<storage::Storage>(storage::open_memory());
  {
    Catalog catalog(*shared);
    TableDefinition def = table_def("old", BillingMode::PAY_PER_REQUEST);
    def.global_indexes.push_back(gsi(1));
    def.next_index_id = 2;
    catalog.create(def);
  }
  EngineOptions o;
  o.background_maintenance = false;
  std::uint32_t next_id = 0;
  {
    Engine engine(std::make_unique<SharedStorage>(shared), o);
    TablePtr t = engine.catalog().find("old");
    EXPECT_EQ(ids(t->capacity.partitions), (std::vector<std::uint32_t>{1, 2, 3, 4}));
    EXPECT_EQ(t->global_indexes[0].capacity.partitions.size(), 4u);
    EXPECT_EQ(t->meters, nullptr);  // capacity off
    next_id = t->next_partition_id;
    // Stored with the next change.
    engine.update_table("old", [](TableDefinition& d) { d.deletion_protection = true; });
  }
  Catalog reloaded(*shared);
  TablePtr t = reloaded.find("old");
  EXPECT_EQ(ids(t->capacity.partitions), (std::vector<std::uint32_t>{1, 2, 3, 4}));
  EXPECT_EQ(t->next_partition_id, next_id);
}

TEST_F(PartitionsTest, SizeSplitWalksToTheHalfAndHeatSplitsAtTheToken) {
  TablePtr t = engine_.create_table(table_def("t", BillingMode::PROVISIONED, 5, 5));
  for (int i = 0; i < 64; ++i) {
    engine_.put_item(*t, {{"pk", S("key" + std::to_string(i))}, {"pad", S(std::string(500, 'x'))}});
  }
  engine_.split_partition({t->id, 0, 1, std::nullopt, SplitCause::kSize});
  t = engine_.catalog().find("t");
  ASSERT_EQ(ids(t->capacity.partitions), (std::vector<std::uint32_t>{2, 3}));
  ASSERT_EQ(t->capacity.splits.size(), 1u);
  EXPECT_EQ(t->capacity.splits[0].cause, SplitCause::kSize);
  // About half the items on each side (equal sizes: exactly the 32nd token).
  const std::uint64_t at = t->capacity.partitions.ranges[1].first_token;
  int below = 0;
  for (int i = 0; i < 64; ++i) {
    std::string pk;
    codec::append_key_value(&pk, S("key" + std::to_string(i)));
    if (codec::token(pk) < at) ++below;
  }
  EXPECT_EQ(below, 32);

  engine_.split_partition({t->id, 0, 3, at + 12345, SplitCause::kHeat});
  t = engine_.catalog().find("t");
  EXPECT_EQ(ids(t->capacity.partitions), (std::vector<std::uint32_t>{2, 4, 5}));
  EXPECT_EQ(t->capacity.partitions.ranges[2].first_token, at + 12345);
  EXPECT_EQ(t->capacity.splits.back().cause, SplitCause::kHeat);
  // A retired partition, or a token outside it, splits nothing.
  engine_.split_partition({t->id, 0, 3, std::nullopt, SplitCause::kSize});
  engine_.split_partition({t->id, 0, 2, at + 1, SplitCause::kHeat});
  EXPECT_EQ(engine_.catalog().find("t")->capacity.partitions.size(), 3u);
}

TEST_F(PartitionsTest, APartitionOfOnePartitionKeyCannotSplit) {
  TableDefinition def = table_def("one", BillingMode::PROVISIONED, 5, 5);
  def.attribute_definitions.push_back({"sk", ScalarType::S});
  def.key.range = AttributeDefinition{"sk", ScalarType::S};
  TablePtr t = engine_.create_table(def);
  for (int i = 0; i < 10; ++i)
    engine_.put_item(*t, {{"pk", S("same")}, {"sk", S(std::to_string(i))}});
  engine_.split_partition({t->id, 0, 1, std::nullopt, SplitCause::kSize});
  EXPECT_EQ(engine_.catalog().find("one")->capacity.partitions.size(), 1u);
}

TEST_F(PartitionsTest, IndexWritesNameTheEntriesTheyRemoveAndPut) {
  TableDefinition def = table_def("t", BillingMode::PAY_PER_REQUEST);
  def.global_indexes.push_back(gsi(1));
  TablePtr t = engine_.create_table(def);
  WriteResult put = engine_.put_item(*t, {{"pk", S("a")}, {"g", S("x")}});
  ASSERT_EQ(put.index_units.size(), 1u);
  const auto& added = put.index_units[0];
  EXPECT_EQ(added.id, 1u);
  EXPECT_TRUE(added.parts[0].key.empty());
  EXPECT_EQ(added.parts[1].units, 1);
  EXPECT_EQ(added.parts[1].bytes, 100 + 5);  // "pk", "a", "g", "x" and the overhead

  // A changed index key: a delete of the old entry and a put of the new one.
  WriteResult moved = engine_.put_item(*t, {{"pk", S("a")}, {"g", S("y")}});
  ASSERT_EQ(moved.index_units.size(), 1u);
  const auto& m = moved.index_units[0];
  EXPECT_EQ(m.units, 2);
  EXPECT_EQ(m.parts[0].units, 1);
  EXPECT_EQ(m.parts[1].units, 1);
  EXPECT_EQ(m.parts[0].bytes, -m.parts[1].bytes);
  EXPECT_NE(m.parts[0].key, m.parts[1].key);
  EXPECT_EQ(m.parts[1].key, *index_entry_key(*t, t->global_indexes[0], *moved.new_item));
}

TEST_F(PartitionsTest, MeteredReadsAndWritesReturnWhatUnmeteredOnesDo) {
  TablePtr t = engine_.create_table(table_def("t", BillingMode::PAY_PER_REQUEST));
  const Metering put{.op = capacity::Operation::kPutItem};
  engine_.put_item(*t, {{"pk", S("a")}, {"pad", S(std::string(5000, 'x'))}}, put);
  EXPECT_TRUE(
      engine_.get_stored(*t, {{"pk", S("a")}}, true, {.op = capacity::Operation::kGetItem}));
  EXPECT_FALSE(
      engine_.get_item(*t, {{"pk", S("b")}}, false, {.op = capacity::Operation::kGetItem}));
  PageOptions options;
  const Page page = engine_.scan(*t, 0, 1, options, {.op = capacity::Operation::kScan});
  ASSERT_EQ(page.items.size(), 1u);
  ASSERT_EQ(page.by_partition.size(), 1u);
  EXPECT_EQ(page.by_partition[0].bytes, page.bytes_read);
  const Page empty = engine_.query(*t, S("none"), {}, options, {.op = capacity::Operation::kQuery});
  ASSERT_EQ(empty.by_partition.size(), 1u);  // charged to the partition it starts in
  EXPECT_EQ(empty.by_partition[0].bytes, 0u);
  std::string pk;
  codec::append_key_value(&pk, S("none"));
  EXPECT_EQ(empty.by_partition[0].token, codec::token(pk));
  // Unmetered reads keep no per-partition bytes.
  EXPECT_TRUE(engine_.scan(*t, 0, 1, options).by_partition.empty());
}

TEST_F(PartitionsTest, TheManualClockTicksAndRunsWhatFallsDue) {
  const double start = clock_.now();
  EXPECT_DOUBLE_EQ(engine_.advance_clock(2.5), start + 2.5);
  EXPECT_DOUBLE_EQ(engine_.advance_clock(7200), start + 7202.5);
}

TEST(CapacityThreadTest, TicksOnTheWallClockAndStopsWithTheEngine) {
  SystemClock clock;
  capacity::CapacityManager manager(capacity::CapacityOptions{}, clock);
  EngineOptions o;
  o.background_maintenance = false;
  o.clock = &clock;
  o.capacity = &manager;
  auto engine = std::make_unique<Engine>(storage::open_memory(), o);
  TablePtr t = engine->create_table(table_def("t", BillingMode::PAY_PER_REQUEST));
  engine->put_item(*t, {{"pk", S("a")}}, {.op = capacity::Operation::kPutItem});
  EXPECT_THROW(engine->advance_clock(1), std::logic_error);
  engine.reset();  // joins the kumo-capacity thread at once
}

}  // namespace
}  // namespace kumo::engine
