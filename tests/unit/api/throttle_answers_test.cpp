// The answers of throttled requests under --capacity enforce (docs/capacity.md): the
// exception of a single-item operation, UnprocessedItems and UnprocessedKeys of batches,
// cancellations of transactions, and BatchExecuteStatement's per-statement Error.
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <string>

#include "api/allow_all.h"
#include "api/service.h"
#include "capacity/manager.h"
#include "model/clock.h"
#include "storage/storage.h"

namespace kumo::api {
namespace {

using test::AllowAll;

capacity::CapacityOptions enforce() {
  capacity::CapacityOptions o;
  o.mode = capacity::Mode::kEnforce;
  o.burst_seconds = 0;
  return o;
}

constexpr const char* kT1 =
    "The level of configured provisioned throughput for the table was exceeded. Consider "
    "increasing your provisioning level with the UpdateTable API.";

class ThrottleAnswersTest : public ::testing::Test {
 protected:
  ThrottleAnswersTest()
      : clock_(1'767'225'600'000'000'000),
        manager_(enforce(), clock_),
        engine_(storage::open_memory(), options()),
        service_(engine_, ServiceOptions{}) {}

  engine::EngineOptions options() {
    engine::EngineOptions o;
    o.background_maintenance = false;
    o.clock = &clock_;
    o.manual_clock = &clock_;
    o.capacity = &manager_;
    return o;
  }

  Response call(std::string_view op, const std::string& body) {
    return service_.handle("DynamoDB_20120810." + std::string(op), body, allow_);
  }

  void create(std::string_view name, int rcu, int wcu) {
    const Response r =
        call("CreateTable",
             R"({"TableName":")" + std::string(name) +
                 R"(","AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"}],)"
                 R"("KeySchema":[{"AttributeName":"pk","KeyType":"HASH"}],)"
                 R"("ProvisionedThroughput":{"ReadCapacityUnits":)" +
                 std::to_string(rcu) + R"(,"WriteCapacityUnits":)" + std::to_string(wcu) + "}}");
    ASSERT_EQ(r.status, 200) << r.body;
    engine_.advance_clock(1);
  }

  static std::string put(std::string_view pk, std::size_t pad) {
    return R"({"PutRequest":{"Item":{"pk":{"S":")" + std::string(pk) + R"("},"pad":{"S":")" +
           std::string(pad, 'x') + R"("}}}})";
  }

  ManualClock clock_;
  capacity::CapacityManager manager_;
  engine::Engine engine_;
  Service service_;
  AllowAll allow_;
};

TEST_F(ThrottleAnswersTest, GetItemPastTheTablesReadsIsProvisionedThroughputExceeded) {
  create("tbl", 1, 5);
  const std::string get = R"({"TableName":"tbl","Key":{"pk":{"S":"a"}},"ConsistentRead":true})";
  EXPECT_EQ(call("GetItem", get).status, 200);
  const Response r = call("GetItem", get);
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(
      r.body,
      std::string(
          R"({"__type":"com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException","message":")") +
          kT1 +
          R"(","ThrottlingReasons":[{"reason":"TableReadProvisionedThroughputExceeded","resource":"arn:aws:dynamodb:us-east-1:000000000000:table/tbl"}]})");
}

TEST_F(ThrottleAnswersTest, BatchWriteReturnsRefusedRequestsAsSentThenFailsWhenAllAre) {
  create("tbl", 5, 3);
  std::string requests;
  for (int i = 0; i < 5; ++i) requests += (i ? "," : "") + put("k" + std::to_string(i), 900);
  const std::string body =
      R"({"RequestItems":{"tbl":[)" + requests + R"(]},"ReturnConsumedCapacity":"TOTAL"})";
  Response r = call("BatchWriteItem", body);
  ASSERT_EQ(r.status, 200) << r.body;
  rapidjson::Document doc;
  doc.Parse(r.body.c_str());
  ASSERT_TRUE(doc["UnprocessedItems"].HasMember("tbl")) << r.body;
  EXPECT_EQ(doc["UnprocessedItems"]["tbl"].Size(), 2u);
  EXPECT_EQ(doc["UnprocessedItems"]["tbl"][0]["PutRequest"]["Item"]["pk"]["S"].GetString(),
            std::string("k3"));
  EXPECT_EQ(doc["ConsumedCapacity"][0]["CapacityUnits"].GetDouble(), 3);
  r = call("BatchWriteItem", body);
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.body.find("TableWriteProvisionedThroughputExceeded"), std::string::npos) << r.body;
}

TEST_F(ThrottleAnswersTest, BatchGetLeavesRefusedKeysUnprocessed) {
  create("tbl", 2, 5);
  const std::string body =
      R"({"RequestItems":{"tbl":{"Keys":[{"pk":{"S":"a"}},{"pk":{"S":"b"}},{"pk":{"S":"c"}}],"ConsistentRead":true}}})";
  Response r = call("BatchGetItem", body);
  ASSERT_EQ(r.status, 200) << r.body;
  rapidjson::Document doc;
  doc.Parse(r.body.c_str());
  ASSERT_TRUE(doc["UnprocessedKeys"].HasMember("tbl")) << r.body;
  EXPECT_EQ(doc["UnprocessedKeys"]["tbl"]["Keys"].Size(), 1u);
  EXPECT_TRUE(doc["UnprocessedKeys"]["tbl"]["ConsistentRead"].GetBool());
  EXPECT_EQ(call("BatchGetItem", body).status, 400);
}

TEST_F(ThrottleAnswersTest, ARefusedTransactionActionCancelsItAndWritesNothing) {
  create("tbl", 5, 1);
  // The table's one write unit of this second is spent.
  ASSERT_EQ(call("PutItem", R"({"TableName":"tbl","Item":{"pk":{"S":"b"}}})").status, 200);
  const Response r =
      call("TransactWriteItems",
           R"({"TransactItems":[{"Put":{"TableName":"tbl","Item":{"pk":{"S":"a"}}}}]})");
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.body.find("Transaction cancelled, please refer cancellation reasons for specific "
                        "reasons [ProvisionedThroughputExceeded]"),
            std::string::npos)
      << r.body;
  EXPECT_NE(r.body.find(std::string(R"({"Code":"ProvisionedThroughputExceeded","Message":")") +
                        kT1 + "\"}"),
            std::string::npos)
      << r.body;
  EXPECT_EQ(engine_.item_count(*engine_.catalog().find("tbl")), 1);
}

TEST_F(ThrottleAnswersTest, BatchExecuteStatementGivesARefusedStatementItsError) {
  create("tbl", 1, 5);
  const auto select = [](const char* pk) {
    return R"({"Statement":"SELECT * FROM \"tbl\" WHERE pk = ')" + std::string(pk) +
           R"('","ConsistentRead":true})";
  };
  const Response r =
      call("BatchExecuteStatement", R"({"Statements":[)" + select("a") + "," + select("b") + "]}");
  ASSERT_EQ(r.status, 200) << r.body;
  rapidjson::Document doc;
  doc.Parse(r.body.c_str());
  EXPECT_FALSE(doc["Responses"][0].HasMember("Error")) << r.body;
  EXPECT_EQ(doc["Responses"][1]["Error"]["Code"].GetString(),
            std::string("ProvisionedThroughputExceeded"));
}

TEST_F(ThrottleAnswersTest, EachRequestIsRecordedOnTheTablesItUsed) {
  create("tbl", 1, 5);
  ASSERT_EQ(call("PutItem", R"({"TableName":"tbl","Item":{"pk":{"S":"a"}}})").status, 200);
  const std::string get = R"({"TableName":"tbl","Key":{"pk":{"S":"a"}},"ConsistentRead":true})";
  EXPECT_EQ(call("GetItem", get).status, 200);
  EXPECT_EQ(call("GetItem", get).status, 400);
  const std::string text = manager_.metrics_text();
  EXPECT_NE(
      text.find(R"(dynamodb_returned_item_count_total{table_name="tbl",operation="GetItem"} 1)"),
      std::string::npos)
      << text;
  EXPECT_NE(
      text.find(R"(dynamodb_throttled_requests_total{table_name="tbl",operation="GetItem"} 1)"),
      std::string::npos)
      << text;
}

}  // namespace
}  // namespace kumo::api
