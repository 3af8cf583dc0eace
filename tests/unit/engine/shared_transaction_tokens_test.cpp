// ClientRequestTokens kept in a storage that several front ends share: each
// SharedTransactionTokens below is one front end, all on one storage, on one clock.
#include "engine/shared_transaction_tokens.h"

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

#include "engine/engine.h"
#include "engine/shared_memory_storage.h"
#include "model/clock.h"
#include "storage/storage.h"

namespace kumo::engine {
namespace {

using State = TransactionTokens::State;

constexpr std::int64_t kMs = 1'000'000;  // ns
constexpr std::int64_t kMinute = 60'000 * kMs;

class SharedTransactionTokensTest : public ::testing::Test {
 protected:
  State begin(TransactionTokens& tokens, const std::string& token,
              const std::string& fingerprint = "f", std::string* response = nullptr) {
    std::string ignored;
    return tokens.begin(token, fingerprint, response ? response : &ignored);
  }
  std::optional<std::string> stored(const std::string& token) {
    return storage_.get("meta/tokens/" + token, nullptr);
  }

  SharedMemoryStorage storage_;
  ManualClock clock_{1'767'225'600LL * 1'000'000'000LL};
  SharedTransactionTokens one_{storage_, clock_}, two_{storage_, clock_}, three_{storage_, clock_};
};

TEST_F(SharedTransactionTokensTest, ARepeatThroughAnotherFrontEndAnswersTheFirstResponse) {
  ASSERT_EQ(begin(one_, "t"), State::kNew);
  // Running through one front end: in progress through the others, and through it.
  EXPECT_EQ(begin(two_, "t"), State::kInProgress);
  EXPECT_EQ(begin(one_, "t"), State::kInProgress);
  EXPECT_EQ(begin(three_, "t", "other"), State::kMismatch);
  one_.complete("t", "first");
  clock_.advance(10 * kMinute);  // within 10 minutes after it completed, the bound included
  std::string response;
  EXPECT_EQ(begin(two_, "t", "f", &response), State::kCompleted);
  EXPECT_EQ(response, "first");
  EXPECT_EQ(begin(three_, "t", "other"), State::kMismatch);
  EXPECT_EQ(begin(one_, "t", "f", &response), State::kCompleted);
}

TEST_F(SharedTransactionTokensTest, ATokenIsForgottenTenMinutesAfterItsRequestCompleted) {
  ASSERT_EQ(begin(one_, "t"), State::kNew);
  clock_.advance(30'000 * kMs);  // the ten minutes start when it completes
  one_.complete("t", "first");
  clock_.advance(10 * kMinute + kMs);
  ASSERT_EQ(begin(two_, "t", "other"), State::kNew);
  EXPECT_EQ(begin(three_, "t", "other"), State::kInProgress);
  two_.complete("t", "second");
  std::string response;
  EXPECT_EQ(begin(one_, "t", "other", &response), State::kCompleted);
  EXPECT_EQ(response, "second");
}

TEST_F(SharedTransactionTokensTest, AFailedRequestIsNotRemembered) {
  ASSERT_EQ(begin(one_, "t"), State::kNew);
  one_.abandon("t");
  EXPECT_FALSE(stored("t"));
  EXPECT_EQ(begin(two_, "t", "other"), State::kNew);
}

// A request that failed in the storage may have passed its commit point, and another front
// end finishes it: a repeat is refused as in progress rather than applied again.
TEST_F(SharedTransactionTokensTest, AStorageFailureOfTheRequestKeepsTheTokenRunning) {
  ASSERT_EQ(begin(one_, "t"), State::kNew);
  one_.fail("t");
  EXPECT_TRUE(stored("t"));
  EXPECT_EQ(begin(two_, "t"), State::kInProgress);
  EXPECT_EQ(begin(one_, "t"), State::kInProgress);
}

TEST_F(SharedTransactionTokensTest, ARunningEntryWhoseFrontEndDiedBlocksTheTokenForAMinute) {
  ASSERT_EQ(begin(one_, "t"), State::kNew);  // and `one_` never ends it
  clock_.advance(SharedTransactionTokens::kRunningLimitMs * kMs);
  EXPECT_EQ(begin(two_, "t"), State::kInProgress);
  clock_.advance(kMs);
  ASSERT_EQ(begin(two_, "t"), State::kNew);
  // The first front end ends after all: the entry is not its own any more.
  one_.complete("t", "late");
  std::string response;
  EXPECT_EQ(begin(three_, "t", "f", &response), State::kInProgress);
  two_.complete("t", "taken over");
  EXPECT_EQ(begin(three_, "t", "f", &response), State::kCompleted);
  EXPECT_EQ(response, "taken over");
}

TEST_F(SharedTransactionTokensTest, ABeginThatMeetsAnotherFrontEndsWriteDecidesAgain) {
  // Another front end begins and completes the token between this one's decision and its
  // write: the write fails on its expectation, and the entry read again is answered.
  storage_.interleave = [this] {
    ASSERT_EQ(begin(two_, "t"), State::kNew);
    two_.complete("t", "the other's");
  };
  std::string response;
  EXPECT_EQ(begin(one_, "t", "f", &response), State::kCompleted);
  EXPECT_EQ(response, "the other's");

  storage_.interleave = [this] { ASSERT_EQ(begin(two_, "u"), State::kNew); };
  EXPECT_EQ(begin(one_, "u", "other"), State::kMismatch);
}

TEST_F(SharedTransactionTokensTest, AConflictOnAnAbsentEntryIsTriedAgain) {
  storage_.conflict_once = true;
  const int before = storage_.writes;
  ASSERT_EQ(begin(one_, "t"), State::kNew);
  EXPECT_EQ(storage_.writes - before, 2);
  EXPECT_EQ(begin(two_, "t"), State::kInProgress);
  // An expired entry met on a conflict is replaced as well.
  one_.complete("t", "first");
  clock_.advance(11 * kMinute);
  storage_.conflict_once = true;
  EXPECT_EQ(begin(two_, "t", "other"), State::kNew);
}

TEST_F(SharedTransactionTokensTest, AStorageFailureAfterTheRequestLeavesTheTokenRunning) {
  ASSERT_EQ(begin(one_, "t"), State::kNew);
  storage_.failing = true;
  one_.complete("t", "first");  // does not throw: the request was applied
  storage_.failing = false;
  EXPECT_EQ(begin(two_, "t"), State::kInProgress);
  storage_.failing = true;
  EXPECT_THROW(begin(two_, "u"), storage::StorageError);
}

TEST_F(SharedTransactionTokensTest, EachFrontEndRemovesTheEntriesItCompletedOnceExpired) {
  for (const char* token : {"a", "b", "c"}) {
    ASSERT_EQ(begin(one_, token), State::kNew);
    one_.complete(token, "r");
    clock_.advance(kMinute);
  }
  clock_.advance(8 * kMinute);  // "a" completed 11 minutes ago, "b" 10, "c" 9
  two_.sweep();                 // not the second front end's entries
  EXPECT_TRUE(stored("a"));
  one_.sweep();
  EXPECT_FALSE(stored("a"));
  EXPECT_TRUE(stored("b"));
  // "b" expires and is taken again through another front end: it is not removed.
  clock_.advance(kMs);
  ASSERT_EQ(begin(two_, "b"), State::kNew);
  clock_.advance(kMinute);
  one_.sweep();
  EXPECT_FALSE(stored("c"));
  EXPECT_EQ(begin(three_, "b"), State::kInProgress);
}

TEST_F(SharedTransactionTokensTest, EntriesLeftByAFrontEndThatStoppedAreRemovedByAWalk) {
  {
    SharedTransactionTokens stopped(storage_, clock_);
    ASSERT_EQ(begin(stopped, "done"), State::kNew);
    stopped.complete("done", "r");
    ASSERT_EQ(begin(stopped, "running"), State::kNew);
  }
  ASSERT_EQ(begin(one_, "live"), State::kNew);
  clock_.advance(SharedTransactionTokens::kWalkEveryMs * kMs - kMinute);
  one_.complete("live", "r");
  two_.sweep();  // not an hour yet since it began
  EXPECT_TRUE(stored("done"));
  clock_.advance(kMinute);
  two_.sweep();
  EXPECT_FALSE(stored("done"));
  EXPECT_FALSE(stored("running"));
  EXPECT_TRUE(stored("live"));
}

TEST_F(SharedTransactionTokensTest, AnEntryRoundTrips) {
  SharedTransactionTokens::Entry entry{true, 1'767'225'600'123, 42, std::string(32, 'd'),
                                       std::string("{\"a\":1}\0x", 10)};
  const std::optional<SharedTransactionTokens::Entry> back =
      SharedTransactionTokens::decode(SharedTransactionTokens::encode(entry));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->completed, true);
  EXPECT_EQ(back->at_ms, entry.at_ms);
  EXPECT_EQ(back->nonce, 42u);
  EXPECT_EQ(back->digest, entry.digest);
  EXPECT_EQ(back->response, entry.response);
  EXPECT_FALSE(SharedTransactionTokens::decode("short"));
}

TEST(EngineTransactionTokens, SharedWhenTheStorageIsShared) {
  EngineOptions options;
  options.background_maintenance = false;
  Engine shared(std::make_unique<SharedMemoryStorage>(), options);
  EXPECT_NE(dynamic_cast<SharedTransactionTokens*>(&shared.transaction_tokens()), nullptr);
  Engine local(storage::open_memory(), options);
  EXPECT_NE(dynamic_cast<LocalTransactionTokens*>(&local.transaction_tokens()), nullptr);
}

}  // namespace
}  // namespace kumo::engine
