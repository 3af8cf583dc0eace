// Contributor Insights through the service on a manual clock: the transitions that take
// time, the rule quota, and a GSI still backfilling.
#include <gtest/gtest.h>

#include "api/allow_all.h"
#include "api/service.h"
#include "model/clock.h"
#include "storage/storage.h"

namespace kumo::api {
namespace {

using test::AllowAll;

constexpr std::int64_t kStartNs = 1'767'225'600'000'000'000;  // 2026-01-01T00:00:00Z

ServiceOptions insights_options() {
  ServiceOptions options;
  options.capacity.insights_delay = 2;
  options.capacity.insights_rule_quota = 7;
  return options;
}

engine::EngineOptions manual_clock(ManualClock* clock) {
  engine::EngineOptions options;
  options.clock = clock;
  options.manual_clock = clock;
  return options;
}

class InsightsTest : public ::testing::Test {
 protected:
  InsightsTest()
      : clock_(kStartNs),
        engine_(storage::open_memory(), manual_clock(&clock_)),
        service_(engine_, insights_options()) {
    create(
        R"({"TableName":"orders","BillingMode":"PAY_PER_REQUEST",)"
        R"("AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"},)"
        R"({"AttributeName":"sk","AttributeType":"S"},{"AttributeName":"g","AttributeType":"S"}],)"
        R"("KeySchema":[{"AttributeName":"pk","KeyType":"HASH"},)"
        R"({"AttributeName":"sk","KeyType":"RANGE"}],)"
        R"("GlobalSecondaryIndexes":[{"IndexName":"by_g","KeySchema":[)"
        R"({"AttributeName":"g","KeyType":"HASH"}],"Projection":{"ProjectionType":"ALL"}}]})");
    create(R"({"TableName":"plain","BillingMode":"PAY_PER_REQUEST",)"
           R"("AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"}],)"
           R"("KeySchema":[{"AttributeName":"pk","KeyType":"HASH"}]})");
  }

  void create(std::string_view body) { ASSERT_EQ(call("CreateTable", body).status, 200); }

  Response call(std::string_view op, std::string_view body) {
    return service_.handle("DynamoDB_20120810." + std::string(op), body, allow_);
  }
  std::string update(std::string_view resource, std::string_view action) {
    return call("UpdateContributorInsights", "{" + std::string(resource) +
                                                 R"(,"ContributorInsightsAction":")" +
                                                 std::string(action) + "\"}")
        .body;
  }
  std::string describe(std::string_view resource) {
    return call("DescribeContributorInsights", "{" + std::string(resource) + "}").body;
  }
  void advance(double seconds) { engine_.advance_clock(seconds); }

  ManualClock clock_;
  engine::Engine engine_;
  Service service_;
  AllowAll allow_;
};

constexpr std::string_view kOrders = R"("TableName":"orders")";
constexpr std::string_view kIndex = R"("TableName":"orders","IndexName":"by_g")";
constexpr std::string_view kPlain = R"("TableName":"plain")";

TEST_F(InsightsTest, EnableAndDisableTakeTheDelay) {
  EXPECT_EQ(update(kOrders, "ENABLE"),
            R"({"TableName":"orders","ContributorInsightsStatus":"ENABLING",)"
            R"("ContributorInsightsMode":"ACCESSED_AND_THROTTLED_KEYS"})");
  const std::string rules =
      R"("ContributorInsightsRuleList":["DynamoDBContributorInsights-PKC-orders-1767225600000",)"
      R"("DynamoDBContributorInsights-SKC-orders-1767225600000",)"
      R"("DynamoDBContributorInsights-PKT-orders-1767225600000",)"
      R"("DynamoDBContributorInsights-SKT-orders-1767225600000"],)";
  EXPECT_EQ(describe(kOrders), R"({"TableName":"orders",)" + rules +
                                   R"("ContributorInsightsStatus":"ENABLING",)"
                                   R"("LastUpdateDateTime":1767225600.0,)"
                                   R"("ContributorInsightsMode":"ACCESSED_AND_THROTTLED_KEYS"})");
  advance(1);
  EXPECT_NE(describe(kOrders).find(R"("ContributorInsightsStatus":"ENABLING")"), std::string::npos);
  advance(1);
  EXPECT_EQ(describe(kOrders), R"({"TableName":"orders",)" + rules +
                                   R"("ContributorInsightsStatus":"ENABLED",)"
                                   R"("LastUpdateDateTime":1767225600.0,)"
                                   R"("ContributorInsightsMode":"ACCESSED_AND_THROTTLED_KEYS"})");
  EXPECT_EQ(update(kOrders, "ENABLE"),
            R"({"TableName":"orders","ContributorInsightsStatus":"ENABLED",)"
            R"("ContributorInsightsMode":"ACCESSED_AND_THROTTLED_KEYS"})");
  EXPECT_EQ(update(kOrders, "DISABLE"),
            R"({"TableName":"orders","ContributorInsightsStatus":"DISABLING",)"
            R"("ContributorInsightsMode":"ACCESSED_AND_THROTTLED_KEYS"})");
  EXPECT_EQ(update(kOrders, "DISABLE"),
            R"({"TableName":"orders","ContributorInsightsStatus":"DISABLING",)"
            R"("ContributorInsightsMode":"ACCESSED_AND_THROTTLED_KEYS"})");
  EXPECT_EQ(describe(kOrders), R"({"TableName":"orders","ContributorInsightsStatus":"DISABLING",)"
                               R"("LastUpdateDateTime":1767225602.0,)"
                               R"("ContributorInsightsMode":"ACCESSED_AND_THROTTLED_KEYS"})");
  advance(2);
  EXPECT_EQ(describe(kOrders), R"({"TableName":"orders","ContributorInsightsStatus":"DISABLED",)"
                               R"("LastUpdateDateTime":1767225602.0,)"
                               R"("ContributorInsightsMode":"ACCESSED_AND_THROTTLED_KEYS"})");
}

TEST_F(InsightsTest, ModeChangeKeepsTheSuffix) {
  update(kIndex, "ENABLE");
  advance(5);
  Response r =
      call("UpdateContributorInsights",
           R"({"TableName":"orders","IndexName":"by_g",)"
           R"("ContributorInsightsAction":"ENABLE","ContributorInsightsMode":"THROTTLED_KEYS"})");
  EXPECT_EQ(r.body, R"({"TableName":"orders","IndexName":"by_g","ContributorInsightsStatus":)"
                    R"("ENABLING","ContributorInsightsMode":"THROTTLED_KEYS"})");
  advance(2);
  EXPECT_EQ(describe(kIndex),
            R"({"TableName":"orders","IndexName":"by_g","ContributorInsightsRuleList":[)"
            R"("DynamoDBContributorInsights-PKT-orders-by_g-1767225600000"],)"
            R"("ContributorInsightsStatus":"ENABLED","LastUpdateDateTime":1767225605.0,)"
            R"("ContributorInsightsMode":"THROTTLED_KEYS"})");
}

TEST_F(InsightsTest, RuleQuotaFails) {
  // The quota is 7: the table takes 4 rules, the GSI 2; the plain table's 2 do not fit.
  update(kOrders, "ENABLE");
  update(kIndex, "ENABLE");
  EXPECT_EQ(update(kPlain, "ENABLE"),
            R"({"TableName":"plain","ContributorInsightsStatus":"ENABLING",)"
            R"("ContributorInsightsMode":"ACCESSED_AND_THROTTLED_KEYS"})");
  EXPECT_EQ(describe(kPlain), R"({"TableName":"plain","ContributorInsightsStatus":"ENABLING",)"
                              R"("LastUpdateDateTime":1767225600.0,)"
                              R"("ContributorInsightsMode":"ACCESSED_AND_THROTTLED_KEYS"})");
  advance(2);
  const std::string failure =
      R"("FailureException":{"ExceptionName":"LimitExceededException","ExceptionDescription":)"
      R"("Amazon CloudWatch Contributor Insights rule limit reached. Please disable )"
      R"(Contributor Insights for other tables/indexes OR disable other CloudWatch )"
      R"(Contributor Insights rules before retrying."},)";
  EXPECT_EQ(describe(kPlain), R"({"TableName":"plain","ContributorInsightsStatus":"FAILED",)"
                              R"("LastUpdateDateTime":1767225600.0,)" +
                                  failure +
                                  R"("ContributorInsightsMode":"ACCESSED_AND_THROTTLED_KEYS"})");
  // FAILED does not recover by itself; DISABLE shows the failure until DISABLED.
  advance(100);
  EXPECT_EQ(update(kPlain, "DISABLE"),
            R"({"TableName":"plain","ContributorInsightsStatus":"DISABLING",)"
            R"("ContributorInsightsMode":"ACCESSED_AND_THROTTLED_KEYS"})");
  EXPECT_EQ(describe(kPlain), R"({"TableName":"plain","ContributorInsightsStatus":"DISABLING",)"
                              R"("LastUpdateDateTime":1767225702.0,)" +
                                  failure +
                                  R"("ContributorInsightsMode":"ACCESSED_AND_THROTTLED_KEYS"})");
  advance(2);
  EXPECT_EQ(describe(kPlain), R"({"TableName":"plain","ContributorInsightsStatus":"DISABLED",)"
                              R"("LastUpdateDateTime":1767225702.0,)"
                              R"("ContributorInsightsMode":"ACCESSED_AND_THROTTLED_KEYS"})");
  // The GSI in THROTTLED_KEYS holds one rule, which leaves room for the plain table.
  call("UpdateContributorInsights",
       R"({"TableName":"orders","IndexName":"by_g","ContributorInsightsAction":"ENABLE",)"
       R"("ContributorInsightsMode":"THROTTLED_KEYS"})");
  update(kPlain, "ENABLE");
  advance(2);
  EXPECT_EQ(describe(kPlain),
            R"({"TableName":"plain","ContributorInsightsRuleList":[)"
            R"("DynamoDBContributorInsights-PKC-plain-1767225704000",)"
            R"("DynamoDBContributorInsights-PKT-plain-1767225704000"],)"
            R"("ContributorInsightsStatus":"ENABLED","LastUpdateDateTime":1767225704.0,)"
            R"("ContributorInsightsMode":"ACCESSED_AND_THROTTLED_KEYS"})");
}

TEST_F(InsightsTest, ListShowsTransitions) {
  update(kPlain, "ENABLE");
  update(kIndex, "ENABLE");
  EXPECT_EQ(call("ListContributorInsights", "{}").body,
            R"({"ContributorInsightsSummaries":[)"
            R"({"TableName":"orders","IndexName":"by_g","ContributorInsightsStatus":"ENABLING",)"
            R"("ContributorInsightsMode":"ACCESSED_AND_THROTTLED_KEYS"},)"
            R"({"TableName":"plain","ContributorInsightsStatus":"ENABLING",)"
            R"("ContributorInsightsMode":"ACCESSED_AND_THROTTLED_KEYS"}]})");
  advance(2);
  update(kPlain, "DISABLE");
  EXPECT_EQ(call("ListContributorInsights", "{}").body,
            R"({"ContributorInsightsSummaries":[)"
            R"({"TableName":"orders","IndexName":"by_g","ContributorInsightsStatus":"ENABLED",)"
            R"("ContributorInsightsMode":"ACCESSED_AND_THROTTLED_KEYS"},)"
            R"({"TableName":"plain","ContributorInsightsStatus":"DISABLING",)"
            R"("ContributorInsightsMode":"ACCESSED_AND_THROTTLED_KEYS"}]})");
  advance(2);
  EXPECT_EQ(call("ListContributorInsights", "{}").body,
            R"({"ContributorInsightsSummaries":[)"
            R"({"TableName":"orders","IndexName":"by_g","ContributorInsightsStatus":"ENABLED",)"
            R"("ContributorInsightsMode":"ACCESSED_AND_THROTTLED_KEYS"}]})");
}

TEST_F(InsightsTest, BackfillingIndexCannotBeEnabled) {
  engine_.update_table("orders",
                       [](TableDefinition& t) { t.global_indexes[0].backfilling = true; });
  EXPECT_EQ(update(kIndex, "ENABLE"),
            R"({"__type":"com.amazon.coral.validate#ValidationException","message":"Table or )"
            R"(Index is not in a valid state to update Key Access Insights: IndexStatus must be )"
            R"(ACTIVE to enable ContributorInsights."})");
  EXPECT_EQ(update(kIndex, "DISABLE"),
            R"({"TableName":"orders","IndexName":"by_g","ContributorInsightsStatus":"DISABLED",)"
            R"("ContributorInsightsMode":"ACCESSED_AND_THROTTLED_KEYS"})");
  EXPECT_EQ(describe(kIndex),
            R"({"TableName":"orders","IndexName":"by_g","ContributorInsightsStatus":"DISABLED"})");
}

}  // namespace
}  // namespace kumo::api
