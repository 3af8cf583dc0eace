// The per-second tick: on-demand peaks, split plans, report-mode would-be throttles, key
// statistics and Contributor Insights minutes.
#include <rapidjson/document.h>

#include <gtest/gtest.h>

#include "fixture.h"

namespace kumo::capacity::testing {
namespace {

rapidjson::Document json(const CapacityManager::AdminResult& r) {
  rapidjson::Document d;
  d.Parse(r.body.c_str());
  EXPECT_FALSE(d.HasParseError()) << r.body;
  return d;
}

class Tick : public CapacityTest {
 protected:
  // `units` of writes to `key` in each of `seconds` seconds.
  void write_for(ResourceMeter* r, std::string_view key, Milli units, int seconds) {
    for (int s = 0; s < seconds; ++s) {
      ASSERT_EQ(request(access(r, Dir::kWrite, key), units), "") << "second " << s;
      advance(1);
    }
  }
};

TEST_F(Tick, SustainedTrafficRaisesTheOnDemandPeakAfterTheWindow) {
  options.partition.write_units = 1'000'000;
  make();
  auto meters = manager->attach(on_demand_table("od"));
  ResourceMeter* table = CapacityManager::resource(*meters, 0);
  // 3,000 units a second for a minute: sustained, but the window since creation is open.
  write_for(table, "k", 3'000'000, 61);
  EXPECT_TRUE(manager->take_peak_raises().empty());
  advance(1800);
  write_for(table, "k", 3'000'000, 61);
  auto raises = manager->take_peak_raises();
  ASSERT_EQ(raises.size(), 1u);
  EXPECT_EQ(raises[0].table_id, 7u);
  EXPECT_EQ(raises[0].index_id, 0u);
  EXPECT_EQ(raises[0].peak_write, 3000);
  EXPECT_EQ(raises[0].peak_read, 0);
  // The allowance is now 2 x 3,000.
  for (int i = 0; i < 6; ++i)
    ASSERT_EQ(request(access(table, Dir::kWrite, "k"), 1'000'000), "") << i;
  EXPECT_EQ(request(access(table, Dir::kWrite, "k"), 1000), "TableWriteKeyRangeThroughputExceeded");
  // A raise never comes again within the window.
  advance(1);
  write_for(table, "k", 5'000'000, 61);
  EXPECT_TRUE(manager->take_peak_raises().empty());
}

TEST_F(Tick, SizeSplitPlannedPastThePartitionSize) {
  options.partition_size_mb = 1;
  make();
  TableDefinition t = provisioned_table("big", 5, 5);
  auto meters = manager->attach(t);
  ResourceMeter* table = CapacityManager::resource(*meters, 0);
  manager->add_bytes(*table, codec::token(encoded("a")), 1 << 20);
  advance(1);
  EXPECT_TRUE(manager->take_split_plans().empty());
  manager->add_bytes(*table, codec::token(encoded("a")), 1);
  advance(1);
  auto plans = manager->take_split_plans();
  ASSERT_EQ(plans.size(), 1u);
  EXPECT_EQ(plans[0].cause, SplitCause::kSize);
  EXPECT_EQ(plans[0].partition, t.capacity.partitions.ranges[0].id);
  EXPECT_FALSE(plans[0].at.has_value());
  advance(1);
  EXPECT_TRUE(manager->take_split_plans().empty());  // not planned twice
  // The engine splits and gives the children the bytes its walk found; they start with
  // full buckets.
  split_at(t.capacity.partitions, 0, std::uint64_t{1} << 63, SplitCause::kSize, 0,
           &t.next_partition_id);
  manager->configure(*meters, t);
  manager->add_bytes(*table, 1, 100);
  manager->add_bytes(*table, std::uint64_t{1} << 63, 200);
  auto parts = json(manager->admin_get("/tables/big/partitions", ""));
  ASSERT_EQ(parts["partitions"].Size(), 2u);
  EXPECT_EQ(parts["partitions"][0]["bytes"].GetInt64(), 100);
  EXPECT_EQ(parts["partitions"][1]["bytes"].GetInt64(), 200);
  EXPECT_EQ(parts["partitions"][1]["parent"].GetInt64(), 1);
  EXPECT_EQ(parts["partitions"][1]["write_level"].GetInt64(), 1000);
  EXPECT_STREQ(parts["partitions"][1]["first_token"].GetString(), "8000000000000000");
  EXPECT_STREQ(parts["partitions"][0]["end_token"].GetString(), "7fffffffffffffff");
  EXPECT_STREQ(parts["partitions"][1]["cause"].GetString(), "size");
}

// Keys of one partition of a one-partition table.
TEST_F(Tick, HeatSplitHalvesTheTrafficOrMarksAHotKey) {
  options.split_heat_seconds = 5;
  make();
  TableDefinition t = provisioned_table("hot", 1, 999);
  auto meters = manager->attach(t);
  ResourceMeter* table = CapacityManager::resource(*meters, 0);
  // Four keys at 200 units each a second: 800 of 1,000, at the 0.8 threshold.
  for (int s = 0; s < 5; ++s) {
    for (const char* k : {"a", "b", "c", "d"})
      ASSERT_EQ(request(access(table, Dir::kWrite, k), 200'000), "");
    advance(1);
  }
  auto plans = manager->take_split_plans();
  ASSERT_EQ(plans.size(), 1u);
  EXPECT_EQ(plans[0].cause, SplitCause::kHeat);
  ASSERT_TRUE(plans[0].at.has_value());
  std::vector<std::uint64_t> tokens;
  for (const char* k : {"a", "b", "c", "d"}) tokens.push_back(codec::token(encoded(k)));
  std::sort(tokens.begin(), tokens.end());
  EXPECT_EQ(*plans[0].at, tokens[2]);  // two keys on each side

  // One key carrying more than half: refused, marked hot-key.
  make();
  meters = manager->attach(t);
  table = CapacityManager::resource(*meters, 0);
  for (int s = 0; s < 5; ++s) {
    ASSERT_EQ(request(access(table, Dir::kWrite, "PENDING"), 600'000), "");
    ASSERT_EQ(request(access(table, Dir::kWrite, "b"), 250'000), "");
    advance(1);
  }
  EXPECT_TRUE(manager->take_split_plans().empty());
  auto parts = json(manager->admin_get("/tables/hot/partitions", ""));
  EXPECT_STREQ(parts["partitions"][0]["status"].GetString(), "hot-key");
  EXPECT_STREQ(parts["partitions"][0]["hot_key"]["pk"]["S"].GetString(), "PENDING");
  EXPECT_STREQ(parts["partitions"][0]["hot_key_dir"].GetString(), "write");
  EXPECT_NEAR(parts["partitions"][0]["hot_key_share"].GetDouble(), 600.0 / 850, 1e-9);
  auto report = json(manager->admin_get("/report", ""));
  const auto& hot = report["tables"][0]["resources"][0]["partitions"][0]["hot_key"];
  EXPECT_STREQ(hot["key"]["pk"]["S"].GetString(), "PENDING");
  EXPECT_STREQ(hot["dir"].GetString(), "write");
  EXPECT_NEAR(hot["share"].GetDouble(), 600.0 / 850, 1e-9);

  // No splits at all with splits off.
  options.splits = false;
  make();
  meters = manager->attach(t);
  table = CapacityManager::resource(*meters, 0);
  for (int s = 0; s < 5; ++s) {
    for (const char* k : {"a", "b", "c", "d"})
      ASSERT_EQ(request(access(table, Dir::kWrite, k), 200'000), "");
    advance(1);
  }
  EXPECT_TRUE(manager->take_split_plans().empty());
}

TEST_F(Tick, SplitLimitStopsSplits) {
  options.split_heat_seconds = 2;
  options.max_partitions = 1;
  make();
  auto meters = manager->attach(provisioned_table("hot", 1, 999));
  ResourceMeter* table = CapacityManager::resource(*meters, 0);
  for (int s = 0; s < 2; ++s) {
    for (const char* k : {"a", "b", "c", "d"})
      ASSERT_EQ(request(access(table, Dir::kWrite, k), 200'000), "");
    advance(1);
  }
  EXPECT_TRUE(manager->take_split_plans().empty());
  auto parts = json(manager->admin_get("/tables/hot/partitions", ""));
  EXPECT_STREQ(parts["partitions"][0]["status"].GetString(), "split-limit");
}

TEST_F(Tick, ReportModeCountsWouldBeThrottleSeconds) {
  options.burst_seconds = 0;
  make(Mode::kReport);
  auto meters = manager->attach(provisioned_table("orders", 10, 10));
  ResourceMeter* table = CapacityManager::resource(*meters, 0);
  write_for(table, "k", 5'000, 3);   // within the rate
  write_for(table, "k", 25'000, 2);  // above: two would-be throttle seconds
  auto d = json(manager->admin_get("/tables/orders/history", ""));
  ASSERT_EQ(d["minutes"].Size(), 1u);
  EXPECT_EQ(
      d["minutes"][0]["would_throttle_seconds"]["TableWriteProvisionedThroughputExceeded"].GetInt(),
      2);
  EXPECT_EQ(d["minutes"][0]["write"].GetInt(), 65);
  EXPECT_EQ(d["minutes"][0]["peak_write_second"].GetInt(), 25);
  EXPECT_EQ(d["minutes"][0]["write_limit"].GetInt(), 10);
  auto table_view = json(manager->admin_get("/tables/orders", ""));
  EXPECT_EQ(table_view["resources"][0]["write"]["would_throttle_units"].GetInt(), 30);
  const std::string metrics = manager->metrics_text();
  EXPECT_NE(metrics.find("kumo_would_throttle_seconds_total{table_name=\"orders\",reason="
                         "\"TableWriteProvisionedThroughputExceeded\"} 2\n"),
            std::string::npos)
      << metrics;
}

TEST_F(Tick, TopKeysFromWarmPartitionsAndRefusals) {
  options.key_sample = 0;  // only warm partitions and refusals log keys
  options.burst_seconds = 0;
  make();
  auto meters = manager->attach(provisioned_table("t", 3000, 1000));
  ResourceMeter* table = CapacityManager::resource(*meters, 0);
  // The first second warms the partition; the next logs every key.
  ASSERT_EQ(request(access(table, Dir::kWrite, "hot"), 600'000), "");
  advance(1);
  ASSERT_EQ(request(access(table, Dir::kWrite, "hot"), 300'000), "");
  ASSERT_EQ(request(access(table, Dir::kWrite, "warm"), 200'000), "");
  ASSERT_EQ(request(access(table, Dir::kWrite, "hot"), 500'000), "");
  ASSERT_EQ(request(access(table, Dir::kWrite, "hot"), 1'000),
            "TableWriteProvisionedThroughputExceeded");
  advance(1);
  auto d = json(manager->admin_get("/tables/t/top-keys", "kind=accessed&seconds=60"));
  ASSERT_EQ(d["keys"].Size(), 2u);
  EXPECT_STREQ(d["keys"][0]["key"]["pk"]["S"].GetString(), "hot");
  EXPECT_EQ(d["keys"][0]["units"].GetInt(), 800);
  EXPECT_FALSE(d["keys"][0]["estimate"].GetBool());
  EXPECT_EQ(d["keys"][1]["units"].GetInt(), 200);
  auto th = json(manager->admin_get("/tables/t/top-keys", "kind=throttled"));
  ASSERT_EQ(th["keys"].Size(), 1u);
  EXPECT_EQ(th["keys"][0]["events"].GetInt(), 1);
}

TEST_F(Tick, TopKeysByPartitionKeySumItems) {
  options.key_sample = 1;  // every access logs its key
  make();
  TableDefinition t = on_demand_table("music");
  t.key.range = AttributeDefinition{"sk", ScalarType::N};
  auto meters = manager->attach(t);
  ResourceMeter* table = CapacityManager::resource(*meters, 0);
  auto item = [&](std::string_view pk, int sk, Milli units) {
    Access a = access(table, Dir::kWrite, pk);
    keys.emplace_back();
    codec::append_key_value(&keys.back(), AttributeValue::number(Decimal::from_int(sk)));
    a.sort_key = keys.back();
    return request(a, units);
  };
  // Five items of "band" at 1 unit each; one item of "solo" at 3 units.
  for (int sk = 0; sk < 5; ++sk) ASSERT_EQ(item("band", sk, 1'000), "");
  ASSERT_EQ(item("solo", 0, 3'000), "");
  advance(1);
  auto items = json(manager->admin_get("/tables/music/top-keys", ""));
  EXPECT_STREQ(items["by"].GetString(), "item");
  ASSERT_EQ(items["keys"].Size(), 6u);
  EXPECT_STREQ(items["keys"][0]["key"]["pk"]["S"].GetString(), "solo");
  EXPECT_EQ(items["keys"][0]["units"].GetInt(), 3);
  auto by_pk = json(manager->admin_get("/tables/music/top-keys", "by=partition-key"));
  EXPECT_STREQ(by_pk["by"].GetString(), "partition-key");
  ASSERT_EQ(by_pk["keys"].Size(), 2u);
  EXPECT_STREQ(by_pk["keys"][0]["key"]["pk"]["S"].GetString(), "band");
  EXPECT_FALSE(by_pk["keys"][0]["key"].HasMember("sk"));
  EXPECT_EQ(by_pk["keys"][0]["units"].GetInt(), 5);
  EXPECT_EQ(by_pk["keys"][1]["units"].GetInt(), 3);
  const auto bad = manager->admin_get("/tables/music/top-keys", "by=table");
  EXPECT_EQ(bad.status, 400);
  EXPECT_EQ(bad.body, R"({"error":"by must be item or partition-key"})");
  // The table view carries both lists when the table has a sort key.
  auto view = json(manager->admin_get("/tables/music", ""));
  const auto& top = view["resources"][0]["top_keys"];
  ASSERT_EQ(top["accessed_partition_keys"].Size(), 2u);
  EXPECT_EQ(top["accessed_partition_keys"][0]["units"].GetInt(), 5);
  EXPECT_EQ(top["throttled_partition_keys"].Size(), 0u);
}

TEST_F(Tick, InsightsMinutesRankKeys) {
  make();
  TableDefinition t = provisioned_table("music", 3000, 1000);
  t.key.range = AttributeDefinition{"sk", ScalarType::N};
  t.capacity.insights.state = InsightsSettings::State::kEnabled;
  t.capacity.insights.mode = "ACCESSED_AND_THROTTLED_KEYS";
  t.capacity.insights.changed = static_cast<double>(kStart) / 1e9;
  auto meters = manager->attach(t);
  ResourceMeter* table = CapacityManager::resource(*meters, 0);
  std::string sk;
  codec::append_key_value(&sk, AttributeValue::number(Decimal::from_int(5)));
  auto with_sort = [&](std::string_view pk, Dir dir) {
    Access a = access(table, dir, pk);
    a.sort_key = sk;
    return a;
  };
  ASSERT_EQ(request(with_sort("a", Dir::kWrite), 2'000), "");
  ASSERT_EQ(request(with_sort("b", Dir::kRead), 5'000), "");
  ASSERT_EQ(request(with_sort("c", Dir::kRead), 1'000, false), "");  // PartiQL: not counted
  advance(61);  // the minute closes with the first second of the next
  auto d = json(manager->admin_get("/tables/music/insights", ""));
  ASSERT_EQ(d["minutes"].Size(), 1u);
  const auto& m = d["minutes"][0];
  EXPECT_EQ(m["minute"].GetInt64(), kStart / kSecond);
  ASSERT_EQ(m["PKC"].Size(), 2u);
  EXPECT_STREQ(m["PKC"][0]["key"]["pk"]["S"].GetString(), "a");  // 3 x 2 write units
  EXPECT_EQ(m["PKC"][0]["value"].GetInt(), 6);
  EXPECT_EQ(m["PKC"][1]["value"].GetInt(), 5);
  ASSERT_EQ(m["SKC"].Size(), 2u);
  EXPECT_STREQ(m["SKC"][0]["key"]["sk"]["N"].GetString(), "5");
  EXPECT_EQ(m["PKT"].Size(), 0u);

  t.capacity.insights.mode = "THROTTLED_KEYS";
  manager->configure(*meters, t);
  auto narrowed = json(manager->admin_get("/tables/music/insights", "minutes=1"));
  EXPECT_FALSE(narrowed["minutes"][0].HasMember("PKC"));
  EXPECT_TRUE(narrowed["minutes"][0].HasMember("SKT"));
}

}  // namespace
}  // namespace kumo::capacity::testing

namespace kumo::capacity::testing {
namespace {

TEST_F(Tick, InsightsCountRefusedKeysButNotGsiBackPressure) {
  options.burst_seconds = 0;
  make();
  TableDefinition t = provisioned_table("orders", 1, 1);
  IndexDefinition& index = add_gsi(t, "by_status", 1, 1);
  for (InsightsSettings* s : {&t.capacity.insights, &index.capacity.insights}) {
    s->state = InsightsSettings::State::kEnabled;
    s->mode = "THROTTLED_KEYS";
  }
  auto meters = manager->attach(t);
  ResourceMeter* table = CapacityManager::resource(*meters, 0);
  ResourceMeter* gsi = CapacityManager::resource(*meters, t.global_indexes[0].id);
  ASSERT_EQ(request(access(table, Dir::kRead, "a"), 1000), "");
  ASSERT_EQ(request(access(table, Dir::kRead, "a"), 1000),
            "TableReadProvisionedThroughputExceeded");
  ASSERT_EQ(request(access(gsi, Dir::kWrite, "PENDING"), 1000), "");
  ASSERT_EQ(request(access(gsi, Dir::kWrite, "PENDING"), 1000),
            "IndexWriteProvisionedThroughputExceeded");
  advance(61);
  auto d = json(manager->admin_get("/tables/orders/insights", ""));
  ASSERT_EQ(d["minutes"].Size(), 1u);
  EXPECT_FALSE(d["minutes"][0].HasMember("PKC"));
  ASSERT_EQ(d["minutes"][0]["PKT"].Size(), 1u);
  EXPECT_EQ(d["minutes"][0]["PKT"][0]["value"].GetInt(), 1);
  auto g = json(manager->admin_get("/tables/orders/insights", "index=by_status"));
  ASSERT_EQ(g["minutes"].Size(), 1u);
  EXPECT_EQ(g["minutes"][0]["PKT"].Size(), 0u);
}

TEST_F(Tick, AHotKeysMarkClearsOnceThePartitionCools) {
  options.split_heat_seconds = 3;
  make();
  auto meters = manager->attach(provisioned_table("hot", 1, 999));
  ResourceMeter* table = CapacityManager::resource(*meters, 0);
  for (int s = 0; s < 3; ++s) {
    ASSERT_EQ(request(access(table, Dir::kWrite, "k"), 900'000), "");
    advance(1);
  }
  auto hot = json(manager->admin_get("/tables/hot/partitions", ""));
  EXPECT_STREQ(hot["partitions"][0]["status"].GetString(), "hot-key");
  advance(3);
  auto cool = json(manager->admin_get("/tables/hot/partitions", ""));
  EXPECT_STREQ(cool["partitions"][0]["status"].GetString(), "ok");
  EXPECT_TRUE(cool["partitions"][0]["hot_key"].IsNull());
}

}  // namespace
}  // namespace kumo::capacity::testing
