#include "capacity/tally.h"

#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace kumo::capacity {
namespace {

TEST(Tally, SumsEveryThreadsCounts) {
  const tally::Slot slot = tally::allocate(3);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([slot] {
      for (int i = 0; i < 100000; ++i) {
        tally::add(slot, 1);
        tally::add(slot + 2, -2);
      }
    });
  }
  for (auto& t : threads) t.join();  // slabs outlive their threads
  std::int64_t out[3];
  tally::sum(slot, 3, out);
  EXPECT_EQ(out[0], 400000);
  EXPECT_EQ(out[1], 0);
  EXPECT_EQ(out[2], -800000);
  EXPECT_EQ(tally::sum(slot), 400000);
  EXPECT_NE(tally::allocate(1), slot);
}

}  // namespace
}  // namespace kumo::capacity
