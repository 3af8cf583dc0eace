#include "capacity/bucket.h"

#include <cmath>
#include <random>

#include <gtest/gtest.h>

namespace kumo::capacity {
namespace {

// A token bucket as the rule states it: refilled continuously at `rate` up to `capacity`,
// admitting while it holds the least charge, debited by the exact units (possibly below 0).
struct Reference {
  double rate = 0, capacity = 0, level = 0;
  void step(double seconds) { level = std::min(capacity, level + rate * seconds); }
  void configure(double r, double capacity_seconds) {
    rate = r;
    capacity = r * capacity_seconds;
    level = std::min(level, capacity);
  }
};

TEST(Bucket, MatchesAReferenceTokenBucketSteppedEveryMillisecond) {
  std::mt19937_64 rng(42);
  for (int round = 0; round < 20; ++round) {
    std::uniform_real_distribution<double> rates(1, 5000);
    std::uniform_real_distribution<double> capacities(1, 300);
    Reference ref;
    Bucket bucket;
    std::int64_t now = 1'000'000'000'000;
    ref.configure(std::floor(rates(rng)), std::floor(capacities(rng)));
    ref.level = ref.rate;  // one second's worth
    bucket.configure(ref.rate, ref.capacity / ref.rate, now, static_cast<Milli>(ref.level * 1000));
    for (int ms = 0; ms < 20000; ++ms) {
      now += 1'000'000;
      ref.step(0.001);
      const int op = static_cast<int>(rng() % 100);
      if (op < 30) {
        const double min = (rng() % 3 == 0) ? 0.5 : (rng() % 2 == 0 ? 1 : 2);
        const bool expected = ref.level >= min;
        if (std::abs(ref.level - min) > 0.01) {
          ASSERT_EQ(bucket.can_take(to_milli(min), now), expected)
              << "round " << round << " ms " << ms;
        }
        if (expected) {
          const double units = static_cast<double>(rng() % 4000) / 2;  // up to 2,000 units: debt
          ref.level -= units;
          bucket.take(to_milli(units), now);
        }
      } else if (op == 99 && rng() % 50 == 0) {
        const double rate = std::floor(rates(rng));
        const double cap = std::floor(capacities(rng));
        ref.configure(rate, cap);
        bucket.configure(rate, cap, now);
      }
      ASSERT_NEAR(static_cast<double>(bucket.level(now)), ref.level * 1000, 3) << "ms " << ms;
    }
  }
}

TEST(Bucket, AdmitsWhileItHoldsTheLeastChargeAndKeepsDebt) {
  Bucket b;
  const std::int64_t t0 = 1'000'000'000'000;
  b.configure(5, 1, t0, 5000);  // 5 units/s, no burst
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(b.can_take(1000, t0));
    b.take(1000, t0);
  }
  EXPECT_FALSE(b.can_take(1000, t0));
  EXPECT_TRUE(b.can_take(1000, t0 + 200'000'000));  // one unit refilled in 0.2 s
  b.take(100'000, t0 + 200'000'000);                // a large page: debt
  EXPECT_EQ(b.level(t0 + 200'000'000), -99'000);
  EXPECT_FALSE(b.can_take(500, t0 + 10'000'000'000));
  EXPECT_TRUE(b.can_take(1000, t0 + 20'200'000'000));
}

TEST(Bucket, ReconfigureKeepsTheLevelClamped) {
  Bucket b;
  const std::int64_t t0 = 1'000'000'000'000;
  b.configure(100, 300, t0, 100'000);
  EXPECT_EQ(b.level(t0 + 10 * 1'000'000'000LL), 1'100'000);
  b.configure(10, 1, t0 + 10 * 1'000'000'000LL);  // capacity 10 units now
  EXPECT_EQ(b.level(t0 + 10 * 1'000'000'000LL), 10'000);
  Bucket unlimited;
  EXPECT_TRUE(unlimited.can_take(1'000'000, t0));
}

}  // namespace
}  // namespace kumo::capacity
