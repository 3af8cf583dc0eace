// Metering and throttling in the engine under --capacity enforce: reads are admitted before
// storage is read, writes before their item's lock and each GSI they change under it, a
// refusal writes nothing, and what is charged is what ConsumedCapacity reports.
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <memory>
#include <sstream>
#include <string>

#include "capacity/manager.h"
#include "engine/engine.h"
#include "engine/shared_memory_storage.h"
#include "model/api_error.h"
#include "model/capacity.h"
#include "model/clock.h"
#include "values.h"

namespace kumo::engine {
namespace {

using namespace kumo::test;

capacity::CapacityOptions enforce() {
  capacity::CapacityOptions o;
  o.mode = capacity::Mode::kEnforce;
  o.burst_seconds = 0;
  return o;
}

class MeteringTest : public ::testing::Test {
 protected:
  MeteringTest()
      : clock_(1'767'225'600'000'000'000),
        manager_(enforce(), clock_),
        engine_(storage::open_memory(), options()) {
    TableDefinition def;
    def.name = "t";
    def.attribute_definitions = {{"pk", ScalarType::S}, {"g", ScalarType::S}};
    def.key = {{"pk", ScalarType::S}, std::nullopt};
    def.billing_mode = BillingMode::PROVISIONED;
    def.throughput = {5, 100};
    IndexDefinition index;
    index.name = "by_g";
    index.id = 1;
    index.key_schema = {{"g", KeyType::HASH}};
    index.hash = {{"g", ScalarType::S}};
    index.projection.type = ProjectionType::ALL;
    index.throughput = {1, 1};
    index.key_attributes = {"g", "pk"};
    def.global_indexes.push_back(index);
    def.next_index_id = 2;
    table_ = engine_.create_table(def);
  }

  EngineOptions options() {
    EngineOptions o;
    o.background_maintenance = false;
    o.clock = &clock_;
    o.manual_clock = &clock_;
    o.capacity = &manager_;
    return o;
  }

  // The units the meters consumed on the table (index empty) or a GSI, once the minute
  // they fall in is closed.
  double consumed(const char* dir, std::string_view index = {}) {
    engine_.advance_clock(60);
    const capacity::AdminResult result = manager_.admin_get("/tables/t", "");
    rapidjson::Document doc;
    doc.Parse(result.body.c_str());
    EXPECT_EQ(result.status, 200) << result.body;
    for (const auto& r : doc["resources"].GetArray()) {
      const bool match = index.empty() ? r["index"].IsNull()
                                       : r["index"].IsString() && r["index"].GetString() == index;
      if (match) return r[dir]["consumed"].GetDouble();
    }
    ADD_FAILURE() << result.body;
    return -1;
  }

  // The reason of the throttle `write` throws.
  template <typename F>
  std::string refusal(F&& f) {
    try {
      f();
    } catch (const ApiError& e) {
      EXPECT_TRUE(e.throttle()) << e.type();
      return e.throttling_reasons().empty() ? "" : e.throttling_reasons()[0].reason;
    }
    return "admitted";
  }

  ManualClock clock_;
  capacity::CapacityManager manager_;
  Engine engine_;
  TablePtr table_;
};

const Metering kPut{.op = capacity::Operation::kPutItem};
const Metering kGet{.op = capacity::Operation::kGetItem};

TEST_F(MeteringTest, TheSixthStronglyConsistentFourKilobyteReadOfFiveRcuIsRefused) {
  Item item{{"pk", S("a")}, {"pad", S(std::string(4000, 'x'))}};
  engine_.put_item(*table_, item, kPut);
  engine_.advance_clock(1);
  for (int i = 0; i < 5; ++i) {
    EXPECT_TRUE(engine_.get_stored(*table_, {{"pk", S("a")}}, true, kGet));
  }
  EXPECT_EQ(refusal([&] {
              engine_.get_stored(*table_, {{"pk", S("a")}}, true, kGet);
            }),
            "TableReadProvisionedThroughputExceeded");
  engine_.advance_clock(1);
  EXPECT_TRUE(engine_.get_stored(*table_, {{"pk", S("a")}}, true, kGet));
  // Unmetered reads (the engine's own) are never refused.
  for (int i = 0; i < 10; ++i) EXPECT_TRUE(engine_.get_item(*table_, {{"pk", S("a")}}));
  EXPECT_DOUBLE_EQ(consumed("read"), 6);
}

TEST_F(MeteringTest, AGsiWithoutCapacityRefusesTheBaseWriteAndNothingIsWritten) {
  engine_.put_item(*table_, {{"pk", S("a")}, {"g", S("x")}}, kPut);
  EXPECT_EQ(refusal([&] {
              engine_.put_item(*table_, {{"pk", S("b")}, {"g", S("y")}}, kPut);
            }),
            "IndexWriteProvisionedThroughputExceeded");
  EXPECT_FALSE(engine_.get_item(*table_, {{"pk", S("b")}}));
  EXPECT_EQ(engine_.item_count(*table_), 1);
  EXPECT_EQ(engine_.index_item_count(*table_, table_->global_indexes[0]), 1);
  // A write touching no GSI entry is never held back by a GSI.
  engine_.put_item(*table_, {{"pk", S("c")}}, kPut);
  EXPECT_TRUE(engine_.get_item(*table_, {{"pk", S("c")}}));
  EXPECT_DOUBLE_EQ(consumed("write"), 2);
  EXPECT_DOUBLE_EQ(consumed("write", "by_g"), 1);
}

TEST_F(MeteringTest, TheManagerAsksTheEngineForItemCounts) {
  engine_.put_item(*table_, {{"pk", S("a")}}, kPut);
  engine_.put_item(*table_, {{"pk", S("b")}}, kPut);
  rapidjson::Document doc;
  doc.Parse(manager_.admin_get("/tables/t", "").body.c_str());
  ASSERT_TRUE(doc.HasMember("item_count"));
  EXPECT_EQ(doc["item_count"].GetInt64(), 2);
}

TEST_F(MeteringTest, ChargesAreWhatConsumedCapacityReports) {
  // A 2.5 KB item: 3 write units; its GSI entry the same.
  Item item{{"pk", S("a")}, {"g", S("x")}, {"pad", S(std::string(2500, 'x'))}};
  const WriteResult put = engine_.put_item(*table_, item, kPut);
  ASSERT_EQ(put.index_units.size(), 1u);
  EXPECT_EQ(put.index_units[0].units, 3);
  engine_.advance_clock(10);  // the GSI's bucket refills
  // Deleting it: the deleted item's units, and its entry's.
  engine_.delete_item(*table_, {{"pk", S("a")}}, {.op = capacity::Operation::kDeleteItem});
  // Deleting nothing still costs one unit.
  engine_.delete_item(*table_, {{"pk", S("a")}}, {.op = capacity::Operation::kDeleteItem});
  // A failed condition on an absent item: one unit.
  EXPECT_THROW(engine_.write_item(*table_, engine_.item_key(*table_, {{"pk", S("z")}}),
                                  [](const std::optional<Item>&) -> std::optional<Item> {
                                    throw ApiError::conditional_check_failed();
                                  },
                                  {.op = capacity::Operation::kPutItem}),
               ApiError);
  // Reads: 0.5 eventually consistent for nothing read; a Scan page of nothing, 0.5.
  engine_.get_item(*table_, {{"pk", S("a")}}, false, kGet);
  engine_.scan(*table_, 0, 1, PageOptions{}, {.op = capacity::Operation::kScan});
  EXPECT_DOUBLE_EQ(consumed("write"), 3 + 3 + 1 + 1);
  EXPECT_DOUBLE_EQ(consumed("write", "by_g"), 3 + 3);
  EXPECT_DOUBLE_EQ(consumed("read"), 1);
}

TEST_F(MeteringTest, ATransactionWithARefusedActionWritesNothing) {
  std::vector<TransactWrite> writes(2);
  Item first{{"pk", S("a")}, {"g", S("x")}}, second{{"pk", S("b")}, {"g", S("y")}};
  for (int i = 0; i < 2; ++i) {
    const Item& item = i == 0 ? first : second;
    writes[i].table = table_.get();
    writes[i].storage_key = engine_.item_key(*table_, item);
    writes[i].mutation = [item](const std::optional<Item>&) { return item; };
  }
  std::vector<WriteResult> results;
  std::vector<std::exception_ptr> failures;
  // Two GSI writes of 2 units each against a GSI of 1 WCU.
  EXPECT_FALSE(engine_.transact_write(
      writes, &results, &failures, {.op = capacity::Operation::kTransactWriteItems, .factor = 2}));
  ASSERT_TRUE(failures[0]);
  EXPECT_EQ(refusal([&] { std::rethrow_exception(failures[0]); }),
            "IndexWriteProvisionedThroughputExceeded");
  EXPECT_EQ(engine_.item_count(*table_), 0);
  EXPECT_DOUBLE_EQ(consumed("write"), 0);
}

TEST_F(MeteringTest, ARefusedTransactGetReadsNothing) {
  engine_.put_item(*table_, {{"pk", S("a")}, {"pad", S(std::string(4000, 'x'))}});
  std::vector<TransactGet> gets{{table_.get(), {{"pk", S("a")}}}};
  std::vector<std::exception_ptr> failures;
  const Metering m{.op = capacity::Operation::kTransactGetItems, .factor = 2};
  EXPECT_EQ(engine_.transact_get(gets, 4 << 20, m, &failures).size(), 1u);
  EXPECT_EQ(engine_.transact_get(gets, 4 << 20, m, &failures).size(), 1u);
  EXPECT_FALSE(failures[0]);
  // 4 units are left of 5 minus 2 × 2: the next needs 2.
  EXPECT_TRUE(engine_.transact_get(gets, 4 << 20, m, &failures).empty());
  ASSERT_TRUE(failures[0]);
  EXPECT_DOUBLE_EQ(consumed("read"), 4);
}

// The lines of one metric of table `name` in the manager's metrics: one per registration
// of the table's meters.
int partitions_lines(const capacity::CapacityManager& manager, const std::string& name) {
  std::istringstream text(manager.metrics_text());
  int lines = 0;
  for (std::string line; std::getline(text, line);) {
    if (line.starts_with("kumo_partitions{") &&
        line.find("table_name=\"" + name + "\"") != std::string::npos) {
      ++lines;
    }
  }
  return lines;
}

TEST(MeteringAttach, ACreateThatMeetsAnotherCatalogChangeKeepsOneRegistration) {
  // Another front end changed the catalog first: the create is made again, and only the
  // stored table's meters stay registered.
  ManualClock clock(1'767'225'600'000'000'000);
  capacity::CapacityManager manager(enforce(), clock);
  EngineOptions options;
  options.background_maintenance = false;
  options.clock = &clock;
  options.manual_clock = &clock;
  options.capacity = &manager;
  auto owned = std::make_unique<SharedMemoryStorage>();
  SharedMemoryStorage* storage = owned.get();
  Engine engine(std::move(owned), options);
  TableDefinition def;
  def.name = "t";
  def.attribute_definitions = {{"pk", ScalarType::S}};
  def.key = {{"pk", ScalarType::S}, std::nullopt};
  def.billing_mode = BillingMode::PROVISIONED;
  def.throughput = {5, 5};
  const int writes = storage->writes;
  storage->conflict_once = true;
  TablePtr table = engine.create_table(def);
  EXPECT_FALSE(storage->conflict_once);    // the create met the change
  EXPECT_GE(storage->writes - writes, 2);  // the attempt that met the change, and the next
  EXPECT_EQ(partitions_lines(manager, "t"), 1);
}

}  // namespace
}  // namespace kumo::engine
