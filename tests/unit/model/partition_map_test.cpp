#include "model/partition_map.h"

#include <gtest/gtest.h>

namespace kumo {
namespace {

TEST(PartitionsNeeded, DynamoDBsRule) {
  PartitionLimits limits;
  EXPECT_EQ(partitions_needed(true, 5, 5, 0, 0, limits), 1u);
  EXPECT_EQ(partitions_needed(true, 1000, 500, 0, 0, limits), 1u);
  EXPECT_EQ(partitions_needed(true, 1000, 1000, 0, 0, limits), 2u);
  EXPECT_EQ(partitions_needed(true, 5000, 2000, 0, 0, limits), 4u);
  EXPECT_EQ(partitions_needed(false, 0, 0, 12000, 4000, limits), 4u);
  EXPECT_EQ(partitions_needed(false, 0, 0, 30000, 10000, limits), 10u);
  EXPECT_EQ(partitions_needed(true, 10, 10, 6000, 1000, limits), 2u);
}

TEST(PartitionMap, EvenRangesAndFind) {
  std::uint32_t next = 1;
  PartitionMap map = even_partitions(4, 10, &next);
  ASSERT_EQ(map.size(), 4u);
  EXPECT_EQ(next, 5u);
  EXPECT_EQ(map.ranges[0].first_token, 0u);
  EXPECT_EQ(map.ranges[1].first_token, 0x4000000000000000ULL);
  EXPECT_EQ(map.ranges[3].first_token, 0xC000000000000000ULL);
  EXPECT_EQ(map.find(0), 0u);
  EXPECT_EQ(map.find(0x3FFFFFFFFFFFFFFFULL), 0u);
  EXPECT_EQ(map.find(0x4000000000000000ULL), 1u);
  EXPECT_EQ(map.find(~0ULL), 3u);
  EXPECT_FALSE(map.end_token(3).has_value());
  EXPECT_EQ(*map.end_token(0), 0x4000000000000000ULL);
  PartitionMap three = even_partitions(3, 0, &next);
  EXPECT_EQ(three.ranges[1].first_token, 0x5555555555555555ULL);
}

TEST(PartitionMap, SplitsNeverReuseIds) {
  std::uint32_t next = 1;
  PartitionMap map = even_partitions(1, 0, &next);
  SplitRecord r = split_at(map, 0, 100, SplitCause::kSize, 5, &next);
  EXPECT_EQ(r.parent, 1u);
  EXPECT_EQ(r.low, 2u);
  EXPECT_EQ(r.high, 3u);
  ASSERT_EQ(map.size(), 2u);
  EXPECT_EQ(map.ranges[1].first_token, 100u);
  EXPECT_EQ(map.ranges[1].parent, 1u);
  EXPECT_THROW(split_at(map, 0, 0, SplitCause::kSize, 5, &next), std::invalid_argument);
  EXPECT_THROW(split_at(map, 0, 100, SplitCause::kSize, 5, &next), std::invalid_argument);
  std::vector<SplitRecord> log;
  doubled(map, 6, &next, &log);
  EXPECT_EQ(map.size(), 4u);
  EXPECT_EQ(log.size(), 2u);
  EXPECT_EQ(map.ranges[1].first_token, 50u);
  EXPECT_EQ(map.ranges[3].first_token, 100 + (0ULL - 100) / 2);
  EXPECT_EQ(next, 8u);
}

}  // namespace
}  // namespace kumo
