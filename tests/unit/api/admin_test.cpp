#include "api/admin.h"

#include <gtest/gtest.h>

#include <memory>
#include <optional>

#include "capacity/manager.h"
#include "storage/storage.h"

namespace kumo::api {
namespace {

constexpr std::int64_t kStart = 1'767'225'600;

TEST(QueryParameter, FindsDecodesAndTakesTheFirst) {
  EXPECT_EQ(query_parameter("seconds=5", "seconds"), "5");
  EXPECT_EQ(query_parameter("a=1&seconds=2.5&seconds=9", "seconds"), "2.5");
  EXPECT_EQ(query_parameter("x=a%20b+c", "x"), "a b c");
  EXPECT_EQ(query_parameter("%73econds=1", "seconds"), "1");
  EXPECT_EQ(query_parameter("seconds", "seconds"), "");
  EXPECT_EQ(query_parameter("seconds=", "seconds"), "");
  EXPECT_EQ(query_parameter("", "seconds"), std::nullopt);
  EXPECT_EQ(query_parameter("second=1", "seconds"), std::nullopt);
  EXPECT_EQ(query_parameter("seconds=%", "seconds"), std::nullopt);
  EXPECT_EQ(query_parameter("seconds=%4", "seconds"), std::nullopt);
  EXPECT_EQ(query_parameter("seconds=%zz", "seconds"), std::nullopt);
  EXPECT_EQ(query_parameter("seconds=%41", "seconds"), "A");
}

// An engine on a manual clock (or the wall clock), with capacity in report mode or off.
class AdminTest : public ::testing::Test {
 protected:
  void start(bool manual, bool capacity_on) {
    if (manual)
      clock_ = std::make_unique<ManualClock>(kStart * 1'000'000'000);
    else
      clock_ = std::make_unique<SystemClock>();
    if (capacity_on) manager_.emplace(capacity::CapacityOptions{}, *clock_);
    engine::EngineOptions options;
    options.background_maintenance = false;
    options.clock = clock_.get();
    options.manual_clock = manual ? static_cast<ManualClock*>(clock_.get()) : nullptr;
    options.capacity = manager_ ? &*manager_ : nullptr;
    engine_.emplace(storage::open_memory(), options);
    admin_.emplace(*engine_);
  }

  AdminResponse call(std::string_view method, std::string_view path, std::string_view query = {}) {
    return admin_->handle(AdminRequest{method, path, query, {}});
  }

  std::unique_ptr<Clock> clock_;
  std::optional<capacity::CapacityManager> manager_;
  std::optional<engine::Engine> engine_;
  std::optional<Admin> admin_;
};

TEST_F(AdminTest, Health) {
  start(true, true);
  const AdminResponse r = call("GET", "/health");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.content_type, "application/json");
  EXPECT_EQ(r.body, R"({"status":"ok"})");
}

TEST_F(AdminTest, ManualClockAdvances) {
  start(true, true);
  EXPECT_EQ(call("GET", "/clock").body, R"({"mode":"manual","now":1767225600.0})");
  const AdminResponse r = call("POST", "/clock/advance", "seconds=1.5");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, R"({"now":1767225601.5})");
  EXPECT_EQ(call("POST", "/clock/advance", "seconds=31536000").status, 200);
  EXPECT_EQ(clock_->now_ns(), (kStart + 31'536'001) * 1'000'000'000 + 500'000'000);
}

TEST_F(AdminTest, BadSecondsLeaveTheClock) {
  start(true, true);
  for (const std::string_view query :
       {"", "seconds=", "seconds=0", "seconds=-2", "seconds=1e2", "seconds=nan", "seconds=inf",
        "seconds=31536000.5", "seconds= 1", "seconds=1 ", "seconds=0x10", "seconds=%"}) {
    const AdminResponse r = call("POST", "/clock/advance", query);
    EXPECT_EQ(r.status, 400) << query;
    EXPECT_TRUE(r.body.starts_with(R"({"error":"seconds must be)")) << r.body;
  }
  EXPECT_EQ(clock_->now_ns(), kStart * 1'000'000'000);
}

TEST_F(AdminTest, WallClockCannotAdvance) {
  start(false, true);
  EXPECT_TRUE(call("GET", "/clock").body.starts_with(R"({"mode":"wall","now":)"));
  EXPECT_EQ(call("POST", "/clock/advance", "seconds=1").status, 409);
}

TEST_F(AdminTest, UnknownPathsAndWrongMethods) {
  start(true, true);
  const AdminResponse missing = call("GET", "/nope\"");
  EXPECT_EQ(missing.status, 404);
  EXPECT_EQ(missing.body, R"({"error":"no such path: /nope\""})");
  EXPECT_EQ(call("GET", "/a\xff\n\x7f").body, R"({"error":"no such path: /a%FF%0A%7F"})");
  EXPECT_EQ(call("GET", "/tablesx").status, 404);
  EXPECT_EQ(call("GET", "/health/").status, 404);
  const AdminResponse wrong = call("GET", "/clock/advance", "seconds=1");
  EXPECT_EQ(wrong.status, 405);
  EXPECT_EQ(wrong.allow, "POST");
  EXPECT_EQ(wrong.body, R"({"error":"GET is not allowed on /clock/advance; use POST"})");
  EXPECT_EQ(call("POST", "/tables/t").allow, "GET");
  EXPECT_EQ(call("HEAD", "/health").status, 405);
  EXPECT_EQ(clock_->now_ns(), kStart * 1'000'000'000);
}

TEST_F(AdminTest, CapacityOffHasNoMeters) {
  start(true, false);
  for (const std::string_view path :
       {"/tables", "/tables/t", "/tables/t/history", "/report", "/metrics"}) {
    const AdminResponse r = call("GET", path);
    EXPECT_EQ(r.status, 409) << path;
    EXPECT_EQ(r.body,
              R"({"error":"capacity is off (kumo serve --capacity off): nothing is metered"})");
  }
  EXPECT_EQ(call("POST", "/clock/advance", "seconds=2").body, R"({"now":1767225602.0})");
}

TEST_F(AdminTest, MetricsArePrometheusText) {
  start(true, true);
  const AdminResponse r = call("GET", "/metrics");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.content_type, "text/plain; version=0.0.4; charset=utf-8");
}

}  // namespace
}  // namespace kumo::api
