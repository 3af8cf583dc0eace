#include "capacity/key_log.h"

#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "capacity/key_summary.h"

namespace kumo::capacity {
namespace {

TEST(KeyRing, KeepsAccessesInOrderAcrossTheWrapAndDropsWhenFull) {
  KeyRing ring;
  const std::string pk(1000, 'p'), sk = "sort";
  std::size_t pushed = 0;
  while (ring.push({1, 2, 3, 4, 500, Dir::kWrite, KeyEvent::kRefused, pk, sk})) ++pushed;
  EXPECT_EQ(ring.drops(), 1u);
  EXPECT_GT(pushed, 900u);
  std::size_t seen = 0;
  ring.drain([&](const KeyEvent& e) {
    ++seen;
    EXPECT_EQ(e.table, 1u);
    EXPECT_EQ(e.units, 500);
    EXPECT_EQ(e.partition_key, pk);
    EXPECT_EQ(e.sort_key, sk);
  });
  EXPECT_EQ(seen, pushed);
  // Past the end of the buffer: records wrap around.
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < 700; ++i) {
      const std::string key = std::to_string(round) + ":" + std::to_string(i) + pk;
      ASSERT_TRUE(ring.push({1, 0, 0, 0, i, Dir::kRead, 0, key, {}}));
    }
    int next = 0;
    ring.drain([&](const KeyEvent& e) {
      EXPECT_EQ(e.units, next);
      EXPECT_EQ(e.partition_key, std::to_string(round) + ":" + std::to_string(next) + pk);
      ++next;
    });
    EXPECT_EQ(next, 700);
  }
}

TEST(KeyLog, OneRingPerThread) {
  KeyLog log;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&log, t] {
      for (int i = 0; i < 1000; ++i) log.push({1, 0, 0, 0, t, Dir::kRead, 0, "k", {}});
    });
  }
  for (auto& t : threads) t.join();
  std::array<int, 4> counts{};
  log.drain([&](const KeyEvent& e) { ++counts[static_cast<std::size_t>(e.units)]; });
  for (int c : counts) EXPECT_EQ(c, 1000);
  EXPECT_EQ(log.drops(), 0u);
}

TEST(KeySummary, ExactBelowCapacityThenSpaceSaving) {
  KeySummary s(2);
  KeyCounts c;
  c.write = 10;
  s.add("a", c);
  s.add("b", c);
  s.add("a", c);
  auto top = s.top(5);
  ASSERT_EQ(top.size(), 2u);
  EXPECT_EQ(top[0].first, "a");
  EXPECT_EQ(top[0].second.write, 20);
  EXPECT_FALSE(top[0].second.estimate);
  s.add("c", c);  // replaces b, the lightest, inheriting its count
  top = s.top(5);
  EXPECT_EQ(top[1].first, "c");
  EXPECT_EQ(top[1].second.write, 20);
  EXPECT_TRUE(top[1].second.estimate);
  EXPECT_EQ(summary_partition_key(summary_key("pk", "sk")), "pk");
  EXPECT_EQ(summary_sort_key(summary_key("pk", "sk")), "sk");
}

}  // namespace
}  // namespace kumo::capacity
