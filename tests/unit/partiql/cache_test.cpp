// The statement cache: one parse per text, errors not kept, bounded, safe across threads.
#include "partiql/cache.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "model/api_error.h"

namespace kumo::partiql {
namespace {

TEST(StatementCache, HitReturnsTheSameParse) {
  auto a = parse("SELECT * FROM cache_test WHERE pk = ?");
  auto b = parse("SELECT * FROM cache_test WHERE pk = ?");
  EXPECT_EQ(a.get(), b.get());
  auto c = parse("SELECT * FROM cache_test WHERE pk = ? ");  // the text is the key
  EXPECT_NE(a.get(), c.get());
  EXPECT_EQ(c->target.table(), "cache_test");
}

TEST(StatementCache, ErrorsAreNotCached) {
  StatementCache cache(64);
  EXPECT_THROW(cache.get("SELECT * FROM"), ApiError);
  EXPECT_THROW(cache.get("x IS INT4"), ApiError);
  EXPECT_THROW(cache.get("SELECT * FROM t WHERE x = <<>>"), ApiError);
  EXPECT_EQ(cache.size(), 0u);
}

TEST(StatementCache, StaysBounded) {
  StatementCache cache(32);
  for (int i = 0; i < 500; ++i) cache.get("SELECT * FROM t" + std::to_string(i));
  EXPECT_LE(cache.size(), 32u);
  EXPECT_GT(cache.size(), 0u);
  auto kept = cache.get("DELETE FROM t WHERE pk = 'a'");
  EXPECT_EQ(cache.get("DELETE FROM t WHERE pk = 'a'").get(), kept.get());
  cache.clear();
  EXPECT_EQ(cache.size(), 0u);
}

TEST(StatementCache, ConcurrentUse) {
  StatementCache cache(64);
  std::vector<std::thread> threads;
  std::vector<const Statement*> seen(8);
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&cache, &seen, t] {
      for (int i = 0; i < 200; ++i) {
        auto s = cache.get("UPDATE t SET a" + std::to_string(i % 100) + " = ? WHERE pk = ?");
        ASSERT_EQ(s->actions.size(), 1u);
      }
      seen[t] = cache.get("SELECT * FROM common").get();
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_LE(cache.size(), 64u);
  for (const Statement* s : seen) EXPECT_EQ(s->text, "SELECT * FROM common");
}

}  // namespace
}  // namespace kumo::partiql
