// The admin's JSON views, /report's shape and the metrics' names.
#include <rapidjson/document.h>

#include <gtest/gtest.h>

#include "fixture.h"

namespace kumo::capacity::testing {
namespace {

class Views : public CapacityTest {
 protected:
  rapidjson::Document get(std::string_view path, std::string_view query = "", int status = 200) {
    const auto r = manager->admin_get(path, query);
    EXPECT_EQ(r.status, status) << path << "?" << query << ": " << r.body;
    EXPECT_EQ(r.content_type, "application/json");
    rapidjson::Document d;
    d.Parse(r.body.c_str());
    EXPECT_FALSE(d.HasParseError()) << r.body;
    return d;
  }
  void orders() {
    options.server_version = "0.1.0";
    make();
    TableDefinition t = on_demand_table("orders");
    add_gsi(t, "by_status", 0, 0).capacity.max_write = 100;
    meters = manager->attach(t);
    table = CapacityManager::resource(*meters, 0);
    gsi = CapacityManager::resource(*meters, t.global_indexes[0].id);
  }
  std::shared_ptr<TableMeters> meters;
  ResourceMeter* table = nullptr;
  ResourceMeter* gsi = nullptr;
};

void has(const rapidjson::Value& v, std::initializer_list<const char*> members) {
  for (const char* m : members) EXPECT_TRUE(v.HasMember(m)) << "missing " << m;
}

TEST_F(Views, TablesAndTable) {
  orders();
  auto d = get("/tables");
  EXPECT_STREQ(d["capacity_mode"].GetString(), "enforce");
  ASSERT_EQ(d["tables"].Size(), 1u);
  const auto& t = d["tables"][0];
  EXPECT_STREQ(t["name"].GetString(), "orders");
  EXPECT_STREQ(t["billing_mode"].GetString(), "PAY_PER_REQUEST");
  ASSERT_EQ(t["resources"].Size(), 2u);
  EXPECT_TRUE(t["resources"][0]["index"].IsNull());
  EXPECT_EQ(t["resources"][0]["partitions"].GetInt(), 4);
  EXPECT_EQ(t["resources"][0]["read"]["rate"].GetInt(), 12000);
  EXPECT_STREQ(t["resources"][0]["read"]["binding"].GetString(), "KeyRange");
  EXPECT_STREQ(t["resources"][1]["index"].GetString(), "by_status");
  EXPECT_EQ(t["resources"][1]["write"]["rate"].GetInt(), 100);
  EXPECT_STREQ(t["resources"][1]["write"]["binding"].GetString(), "MaxOnDemand");

  ASSERT_EQ(request(access(table, Dir::kWrite, "o1"), 4000), "");
  ASSERT_EQ(request(access(gsi, Dir::kWrite, "PENDING"), 4000), "");
  auto one = get("/tables/orders");
  has(one, {"name", "billing_mode", "capacity_mode", "key_log_drops", "item_count", "size_bytes",
            "resources"});
  const auto& r = one["resources"][0];
  has(r, {"index", "read", "write", "write_events", "index_write_events", "throttle_events",
          "would_throttle_seconds", "partitions", "splits", "history", "top_keys", "insights"});
  has(r["write"], {"rate", "binding", "provisioned", "max_on_demand", "warm", "peak", "level",
                   "consumed", "peak_second"});
  EXPECT_EQ(r["write"]["consumed"].GetInt(), 4);
  EXPECT_EQ(r["write"]["level"].GetInt(), 3996);
  EXPECT_EQ(r["write_events"].GetInt(), 1);
  EXPECT_TRUE(r["index_write_events"].IsNull());
  const auto& g = one["resources"][1];
  EXPECT_TRUE(g["write_events"].IsNull());  // a GSI has index writes
  EXPECT_EQ(g["index_write_events"].GetInt(), 1);
  EXPECT_EQ(g["write"]["max_on_demand"].GetInt(), 100);
  EXPECT_TRUE(g["write"]["provisioned"].IsNull());
}

TEST_F(Views, PartitionsTopKeysHistoryAndErrors) {
  orders();
  auto p = get("/tables/orders/partitions", "index=by_status");
  EXPECT_STREQ(p["index"].GetString(), "by_status");
  ASSERT_EQ(p["partitions"].Size(), 4u);
  has(p["partitions"][0],
      {"id", "first_token", "end_token", "bytes", "parent", "cause", "created", "status", "hot_key",
       "read_per_second", "write_per_second", "throttle_events", "read_level", "write_level"});
  EXPECT_STREQ(p["partitions"][0]["first_token"].GetString(), "0000000000000000");
  EXPECT_STREQ(p["partitions"][0]["end_token"].GetString(), "3fffffffffffffff");
  EXPECT_STREQ(p["partitions"][3]["end_token"].GetString(), "ffffffffffffffff");

  get("/tables/nope", "", 404);
  get("/tables/orders/partitions", "index=nope", 404);
  get("/tables/orders/nothing", "", 404);
  get("/nothing", "", 404);
  get("/tables/orders/top-keys", "kind=hottest", 400);
  get("/tables/orders/top-keys", "seconds=0", 400);
  get("/tables/orders/top-keys", "seconds=61", 400);
  get("/tables/orders/top-keys", "seconds=x", 400);
  get("/tables/orders/insights", "minutes=-1", 400);
  get("/report", "minutes=abc", 400);
  get("/report", "table=nope", 404);
  // Names from the path or the query are shown percent-encoded past printable ASCII, so an
  // error stays valid UTF-8 JSON whatever bytes were asked for.
  EXPECT_STREQ(get("/tables/or\xa1\n", "", 404)["error"].GetString(), "Table not found: or%A1%0A");
  EXPECT_STREQ(get("/tables/orders/partitions", "index=b\xff", 404)["error"].GetString(),
               "Index not found: b%FF for table: orders");
  EXPECT_STREQ(get("/report", "table=\xc3", 404)["error"].GetString(), "Table not found: %C3");
  auto k = get("/tables/orders/top-keys", "index=by_status&kind=throttled&seconds=10");
  EXPECT_STREQ(k["kind"].GetString(), "throttled");
  EXPECT_EQ(k["seconds"].GetInt(), 10);
  EXPECT_TRUE(k["keys"].IsArray());

  advance(1);
  auto h = get("/tables/orders/history");
  ASSERT_EQ(h["minutes"].Size(), 1u);
  has(h["minutes"][0],
      {"minute", "read", "write", "peak_read_second", "peak_write_second", "read_limit",
       "write_limit", "throttle_events", "would_throttle_seconds", "partitions"});
}

TEST_F(Views, OffModeAnswers409) {
  make(Mode::kOff);
  get("/tables", "", 409);
  get("/tables/t", "", 409);
}

TEST_F(Views, ReportShape) {
  orders();
  for (int i = 0; i < 25; ++i) {
    ASSERT_EQ(request(access(gsi, Dir::kWrite, "PENDING"), 4000), "") << i;
    ASSERT_EQ(request(access(table, Dir::kWrite, "o" + std::to_string(i)), 4000), "");
  }
  EXPECT_EQ(request(access(gsi, Dir::kWrite, "PENDING"), 4000),
            "IndexWriteMaxOnDemandThroughputExceeded");
  advance(1);
  auto throttled = get("/tables/orders/top-keys", "index=by_status&kind=throttled");
  ASSERT_EQ(throttled["keys"].Size(), 1u);
  EXPECT_STREQ(throttled["keys"][0]["key"]["status"]["S"].GetString(), "PENDING");
  EXPECT_EQ(throttled["keys"][0]["events"].GetInt(), 1);
  advance(119);
  auto d = get("/report");
  has(d, {"kumo_version", "capacity_mode", "clock", "window", "partition_limits", "tables"});
  EXPECT_STREQ(d["kumo_version"].GetString(), "0.1.0");
  EXPECT_STREQ(d["clock"]["mode"].GetString(), "manual");
  EXPECT_DOUBLE_EQ(d["clock"]["now"].GetDouble(), 1767225720.0);
  EXPECT_DOUBLE_EQ(d["window"]["start"].GetDouble(), 1767225600.0);
  EXPECT_EQ(d["window"]["seconds"].GetInt(), 120);
  const auto& t = d["tables"][0];
  has(t, {"name", "billing_mode", "item_count", "size_bytes", "resources"});
  EXPECT_FALSE(t.HasMember("capacity_mode"));
  const auto& g = t["resources"][1];
  EXPECT_EQ(g["write"]["consumed"].GetInt(), 100);
  EXPECT_EQ(g["write"]["peak_second"].GetInt(), 100);
  EXPECT_EQ(g["throttle_events"]["IndexWriteMaxOnDemandThroughputExceeded"].GetInt(), 1);
  EXPECT_EQ(g["index_write_events"].GetInt(), 25);
  EXPECT_EQ(t["resources"][0]["write_events"].GetInt(), 25);
  EXPECT_EQ(d["partition_limits"]["write"].GetInt(), 1000);
  has(g["partitions"][0], {"id", "first_token", "end_token", "bytes", "status", "hot_key",
                           "read_per_second", "write_per_second", "throttle_events"});
  EXPECT_EQ(g["partitions"][0]["write_per_second"].Size(), 60u);
  ASSERT_EQ(g["history"].Size(), 2u);
  EXPECT_EQ(g["history"][0]["write_limit"].GetInt(), 100);
  EXPECT_TRUE(g["history"][0]["partitions"].IsObject());
  // By partition: read and write units, throttle events.
  std::int64_t events = 0, written = 0;
  for (const auto& p : g["history"][0]["partitions"].GetObject()) {
    ASSERT_EQ(p.value.Size(), 3u);
    written += p.value[1].GetInt64();
    events += p.value[2].GetInt64();
  }
  EXPECT_EQ(written, 100);
  EXPECT_EQ(events, 1);
  has(g["top_keys"], {"accessed", "throttled"});
  // Without a sort key, items and partition keys are the same list, given once.
  EXPECT_FALSE(g["top_keys"].HasMember("accessed_partition_keys"));
  EXPECT_EQ(g["top_keys"]["throttled"].Size(), 0u);  // the last 60 seconds
  EXPECT_TRUE(g["insights"].IsNull());
  EXPECT_TRUE(t["item_count"].IsNull());
  manager->set_item_count_source(
      [](std::uint32_t id) { return std::optional<std::int64_t>(id * 6); });
  EXPECT_EQ(get("/report")["tables"][0]["item_count"].GetInt(), 42);
  auto only = get("/report", "table=orders&minutes=1");
  EXPECT_DOUBLE_EQ(only["window"]["seconds"].GetDouble(), 60.0);
}

TEST_F(Views, MetricsNamesAndLabels) {
  orders();
  ASSERT_EQ(request(access(gsi, Dir::kWrite, "PENDING"), 1500), "");
  manager->add_bytes(*table, 0, 1234);
  RequestOutcome ok{Operation::kGetItem, 2000000, false, false, false, false, 1};
  manager->record_request(meters.get(), ok);
  manager->record_request(meters.get(), {Operation::kPutItem, 0, true});
  manager->record_request(nullptr, {Operation::kNone, 0, false, false, true});
  const std::string m = manager->metrics_text();
  for (const char* line : {
           "# TYPE dynamodb_consumed_write_capacity_units_total counter\n",
           "dynamodb_consumed_write_capacity_units_total{table_name=\"orders\","
           "global_secondary_index_name=\"by_status\"} 1.5\n",
           "dynamodb_consumed_read_capacity_units_total{table_name=\"orders\"} 0\n",
           "dynamodb_on_demand_max_write_request_units{table_name=\"orders\","
           "global_secondary_index_name=\"by_status\"} 100\n",
           "dynamodb_read_max_on_demand_throughput_throttle_events_total{table_name=\"orders\"} "
           "0\n",
           "dynamodb_write_account_limit_throttle_events_total{table_name=\"orders\"} 0\n",
           "dynamodb_throttled_requests_total{table_name=\"orders\",operation=\"PutItem\"} 1\n",
           "dynamodb_successful_request_latency_seconds_bucket{table_name=\"orders\",operation="
           "\"GetItem\",le=\"0.0025\"} 1\n",
           "dynamodb_successful_request_latency_seconds_count{table_name=\"orders\",operation="
           "\"GetItem\"} 1\n",
           "dynamodb_returned_item_count_total{table_name=\"orders\",operation=\"GetItem\"} 1\n",
           "dynamodb_conditional_check_failed_requests_total{table_name=\"orders\"} 0\n",
           "dynamodb_user_errors_total 1\n",
           "kumo_partition_bytes{table_name=\"orders\",partition=\"1\"} 1234\n",
           "kumo_partitions{table_name=\"orders\",global_secondary_index_name=\"by_status\"} 4\n",
           "kumo_write_events_total{table_name=\"orders\",global_secondary_index_name=\"by_"
           "status\"} 1\n",
           "kumo_bucket_level_units{table_name=\"orders\",direction=\"read\"} 12000\n",
           "kumo_clock_seconds 1767225600\n",
       }) {
    EXPECT_NE(m.find(line), std::string::npos) << line << "\n" << m;
  }
  EXPECT_NE(m.find("kumo_partition_consumed_write_capacity_units_total{table_name=\"orders\","
                   "global_secondary_index_name=\"by_status\",partition=\""),
            std::string::npos);
}

TEST_F(Views, DoubledPartitionsShareTheirParentsBytes) {
  make();
  TableDefinition t = provisioned_table("t", 5000, 2000);
  auto m = manager->attach(t);
  ResourceMeter* r = CapacityManager::resource(*m, 0);
  manager->add_bytes(*r, 0, 1000);
  doubled(t.capacity.partitions, 0, &t.next_partition_id, &t.capacity.splits);
  t.throughput.read_capacity_units = 8000;
  manager->configure(*m, t);
  auto p = get("/tables/t/partitions");
  ASSERT_EQ(p["partitions"].Size(), 8u);
  EXPECT_EQ(p["partitions"][0]["bytes"].GetInt(), 500);
  EXPECT_EQ(p["partitions"][1]["bytes"].GetInt(), 500);
  EXPECT_STREQ(p["partitions"][1]["cause"].GetString(), "throughput");
  auto one = get("/tables/t");
  EXPECT_EQ(one["resources"][0]["splits"].Size(), 4u);
  EXPECT_EQ(one["resources"][0]["read"]["rate"].GetInt(), 8000);
  const std::string metrics = manager->metrics_text();
  EXPECT_NE(metrics.find("kumo_partition_splits_total{table_name=\"t\",cause=\"throughput\"} 4\n"),
            std::string::npos);
}

}  // namespace
}  // namespace kumo::capacity::testing
