#include "model/clock.h"

#include <gtest/gtest.h>

namespace kumo {
namespace {

TEST(Clock, EpochMillisecondsRoundsToTheNearest) {
  EXPECT_EQ(epoch_milliseconds(1700000000.123), 1700000000123);
  // 0.001 is not exact in binary: the product lands just below or above the millisecond.
  EXPECT_EQ(epoch_milliseconds(1700000000.001), 1700000000001);
  EXPECT_EQ(epoch_milliseconds(1700000000.0004), 1700000000000);
  EXPECT_EQ(epoch_milliseconds(1700000000.0006), 1700000000001);
  EXPECT_EQ(epoch_milliseconds(0), 0);
}

TEST(Clock, EpochWholeSecondsRoundsDown) {
  EXPECT_EQ(epoch_whole_seconds(1700000000.999), 1700000000);
  EXPECT_EQ(epoch_whole_seconds(1700000000.0), 1700000000);
  EXPECT_EQ(epoch_whole_seconds(-0.5), -1);
}

TEST(Clock, NowHasMillisecondPrecision) {
  const double now = now_seconds();
  EXPECT_DOUBLE_EQ(static_cast<double>(epoch_milliseconds(now)) / 1000, now);
  EXPECT_GT(now, 1.7e9);
}

}  // namespace
}  // namespace kumo
