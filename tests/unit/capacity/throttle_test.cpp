// Limits and reasons: the first refusal's reason, with DynamoDB's exception for it.
#include "capacity/limits.h"

#include <thread>

#include <gtest/gtest.h>

#include "fixture.h"

namespace kumo::capacity::testing {
namespace {

using Code = ApiError::Code;

TEST(ResourceLimit, ProvisionedAndOnDemandTerms) {
  CapacityOptions o;
  ResourceLimit p = resource_limit(o, Dir::kRead, {false, 150, std::nullopt, 0, 0});
  EXPECT_EQ(p.rate, 150);
  EXPECT_EQ(p.binding, Limit::kProvisioned);
  EXPECT_EQ(p.capacity_seconds, 300);
  EXPECT_EQ(p.start_level, 150'000);
  ResourceLimit od = resource_limit(o, Dir::kWrite, {true, 0, std::nullopt, 0, 0});
  EXPECT_EQ(od.rate, 4000);
  EXPECT_EQ(od.binding, Limit::kKeyRange);
  EXPECT_EQ(od.capacity_seconds, 1);
  // The allowance is max(warm, 2 x peak), capped by the quota and the maximum.
  EXPECT_EQ(resource_limit(o, Dir::kWrite, {true, 0, std::nullopt, 0, 3000}).rate, 6000);
  EXPECT_EQ(resource_limit(o, Dir::kWrite, {true, 0, std::nullopt, 10000, 3000}).rate, 10000);
  ResourceLimit quota = resource_limit(o, Dir::kRead, {true, 0, std::nullopt, 0, 30000});
  EXPECT_EQ(quota.rate, 40000);
  EXPECT_EQ(quota.binding, Limit::kAccount);
  ResourceLimit max = resource_limit(o, Dir::kRead, {true, 0, 40000, 0, 30000});
  EXPECT_EQ(max.binding, Limit::kMaxOnDemand);  // ties go to the maximum
  o.burst_seconds = 0;
  EXPECT_EQ(resource_limit(o, Dir::kRead, {false, 5, std::nullopt, 0, 0}).capacity_seconds, 1);
}

class Throttle : public CapacityTest {};

TEST_F(Throttle, ProvisionedReadsWithoutBurst) {
  options.burst_seconds = 0;
  make();
  auto meters = manager->attach(provisioned_table("orders", 5, 5));
  ResourceMeter* table = CapacityManager::resource(*meters, 0);
  for (int i = 0; i < 5; ++i)
    ASSERT_EQ(request(access(table, Dir::kRead, "k" + std::to_string(i)), 1000), "");
  EXPECT_EQ(request(access(table, Dir::kRead, "k9"), 1000),
            "TableReadProvisionedThroughputExceeded");
  EXPECT_EQ(last_error->code(), Code::kProvisionedThroughputExceeded);
  EXPECT_EQ(*last_error->message(),
            "The level of configured provisioned throughput for the table was exceeded. Consider "
            "increasing your provisioning level with the UpdateTable API.");
  EXPECT_EQ(last_error->throttling_reasons()[0].resource,
            "arn:aws:dynamodb:us-east-1:000000000000:table/orders");
  // Writes are independent of reads.
  EXPECT_EQ(request(access(table, Dir::kWrite, "k1"), 1000), "");
  advance(1);
  EXPECT_EQ(request(access(table, Dir::kRead, "k9"), 1000), "");
}

TEST_F(Throttle, BurstKeepsFiveMinutesOfUnusedCapacity) {
  make();
  auto meters = manager->attach(provisioned_table("orders", 5, 5));
  ResourceMeter* table = CapacityManager::resource(*meters, 0);
  advance(300);
  for (int i = 0; i < 1500; ++i) ASSERT_EQ(request(access(table, Dir::kRead, "k"), 1000), "") << i;
  EXPECT_EQ(request(access(table, Dir::kRead, "k"), 1000),
            "TableReadProvisionedThroughputExceeded");
}

TEST_F(Throttle, OnDemandAllowanceMaximumAndQuota) {
  options.partition.write_units = 1'000'000;
  make();
  TableDefinition t = on_demand_table("sessions");
  auto meters = manager->attach(t);
  ResourceMeter* table = CapacityManager::resource(*meters, 0);
  for (int i = 0; i < 10; ++i) ASSERT_EQ(request(access(table, Dir::kWrite, "k"), 400'000), "");
  EXPECT_EQ(request(access(table, Dir::kWrite, "k"), 1000), "TableWriteKeyRangeThroughputExceeded");
  EXPECT_EQ(last_error->code(), Code::kThrottling);

  t.capacity.max_write = 10;
  manager->configure(*meters, t);
  advance(1);
  for (int i = 0; i < 10; ++i) ASSERT_EQ(request(access(table, Dir::kWrite, "k"), 1000), "");
  EXPECT_EQ(request(access(table, Dir::kWrite, "k"), 1000),
            "TableWriteMaxOnDemandThroughputExceeded");
  EXPECT_EQ(*last_error->message(),
            "Throughput exceeds the maximum OnDemandThroughput configured on table or index");
}

TEST_F(Throttle, TableQuotaIsAnAccountLimit) {
  options.table_quota_write = 100;
  options.account_limit_request_limit_exceeded = true;
  make();
  auto meters = manager->attach(on_demand_table("t"));
  ResourceMeter* table = CapacityManager::resource(*meters, 0);
  for (int i = 0; i < 100; ++i)
    ASSERT_EQ(request(access(table, Dir::kWrite, std::to_string(i)), 1000), "");
  EXPECT_EQ(request(access(table, Dir::kWrite, "x"), 1000), "TableWriteAccountLimitExceeded");
  EXPECT_EQ(last_error->code(), Code::kRequestLimitExceeded);
}

TEST_F(Throttle, OneKeyMeetsItsPartitionsCeiling) {
  make();
  auto meters = manager->attach(provisioned_table("p", 100, 5000));
  ResourceMeter* table = CapacityManager::resource(*meters, 0);
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(request(access(table, Dir::kWrite, "hot"), 1000), "");
  EXPECT_EQ(request(access(table, Dir::kWrite, "hot"), 1000),
            "TableWriteKeyRangeThroughputExceeded");
  EXPECT_EQ(last_error->code(), Code::kProvisionedThroughputExceeded);
  // Another partition's key still passes; so does a read of the hot key.
  std::string other = "cold";
  for (int i = 0; codec::token(encoded(other)) >> 62 == codec::token(encoded("hot")) >> 62; ++i) {
    other = "cold" + std::to_string(i);
  }
  EXPECT_EQ(request(access(table, Dir::kWrite, other), 1000), "");
  EXPECT_EQ(request(access(table, Dir::kRead, "hot"), 1000), "");

  make();
  auto od = manager->attach(on_demand_table("od"));
  ResourceMeter* odt = CapacityManager::resource(*od, 0);
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(request(access(odt, Dir::kWrite, "hot"), 1000), "");
  EXPECT_EQ(request(access(odt, Dir::kWrite, "hot"), 1000), "TableWriteKeyRangeThroughputExceeded");
  EXPECT_EQ(last_error->code(), Code::kThrottling);
}

TEST_F(Throttle, GsiHoldsBackABaseWrite) {
  options.burst_seconds = 0;
  make();
  TableDefinition t = provisioned_table("orders", 100, 100);
  add_gsi(t, "by_status", 1, 1);
  auto meters = manager->attach(t);
  ResourceMeter* gsi = CapacityManager::resource(*meters, t.global_indexes[0].id);
  ASSERT_NE(gsi, nullptr);
  EXPECT_EQ(CapacityManager::resource(*meters, 99), nullptr);
  EXPECT_EQ(request(access(gsi, Dir::kWrite, "PENDING"), 1000), "");
  EXPECT_EQ(request(access(gsi, Dir::kWrite, "PENDING"), 1000),
            "IndexWriteProvisionedThroughputExceeded");
  EXPECT_EQ(last_error->code(), Code::kProvisionedThroughputExceeded);
  EXPECT_EQ(last_error->throttling_reasons()[0].resource,
            "arn:aws:dynamodb:us-east-1:000000000000:table/orders/index/by_status");
  EXPECT_EQ(request(access(gsi, Dir::kRead, "PENDING", 500), 1000), "");
  EXPECT_EQ(request(access(gsi, Dir::kRead, "PENDING", 500), 500),
            "IndexReadProvisionedThroughputExceeded");
}

TEST_F(Throttle, ReportModeNeverRefuses) {
  options.burst_seconds = 0;
  make(Mode::kReport);
  auto meters = manager->attach(provisioned_table("orders", 1, 1));
  ResourceMeter* table = CapacityManager::resource(*meters, 0);
  for (int i = 0; i < 100; ++i) ASSERT_EQ(request(access(table, Dir::kWrite, "k"), 1000), "");
}

TEST_F(Throttle, ThrottleEventsAreCountedByReason) {
  options.burst_seconds = 0;
  make();
  auto meters = manager->attach(provisioned_table("orders", 1, 1));
  ResourceMeter* table = CapacityManager::resource(*meters, 0);
  request(access(table, Dir::kWrite, "k"), 1000);
  request(access(table, Dir::kWrite, "k"), 1000);
  request(access(table, Dir::kWrite, "k"), 1000);
  const std::string metrics = manager->metrics_text();
  EXPECT_NE(
      metrics.find(
          "dynamodb_write_provisioned_throughput_throttle_events_total{table_name=\"orders\"} 2\n"),
      std::string::npos)
      << metrics;
  EXPECT_NE(metrics.find("dynamodb_write_throttle_events_total{table_name=\"orders\"} 2\n"),
            std::string::npos);
  EXPECT_NE(metrics.find("dynamodb_consumed_write_capacity_units_total{table_name=\"orders\"} 1\n"),
            std::string::npos);
}

}  // namespace
}  // namespace kumo::capacity::testing

namespace kumo::capacity::testing {
namespace {

TEST_F(Throttle, ChargesFromManyThreadsWhileTicking) {
  make(Mode::kReport);
  auto meters = manager->attach(on_demand_table("t"));
  ResourceMeter* table = CapacityManager::resource(*meters, 0);
  const Access write = access(table, Dir::kWrite, "k");
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 5000; ++i) {
        manager->charge(write, 1000, Operation::kPutItem, true);
      }
    });
  }
  for (int s = 0; s < 5; ++s) advance(1);
  for (auto& t : threads) t.join();
  advance(1);
  const std::string metrics = manager->metrics_text();
  EXPECT_NE(metrics.find("dynamodb_consumed_write_capacity_units_total{table_name=\"t\"} 20000\n"),
            std::string::npos);
  EXPECT_NE(metrics.find("kumo_write_events_total{table_name=\"t\"} 20000\n"), std::string::npos);
}

}  // namespace
}  // namespace kumo::capacity::testing
