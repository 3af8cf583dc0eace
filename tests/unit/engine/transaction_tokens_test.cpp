#include "engine/transaction_tokens.h"

#include <gtest/gtest.h>

namespace kumo::engine {
namespace {

using State = TransactionTokens::State;
using namespace std::chrono_literals;

class TransactionTokensTest : public ::testing::Test {
 protected:
  LocalTransactionTokens::Clock::time_point now_{};
  LocalTransactionTokens tokens_{[this] { return now_; }};

  State begin(const std::string& token, const std::string& fingerprint = "f") {
    std::string response;
    return tokens_.begin(token, fingerprint, &response);
  }
};

TEST_F(TransactionTokensTest, ARepeatWithinTenMinutesAnswersTheFirstResponse) {
  ASSERT_EQ(begin("t"), State::kNew);
  tokens_.complete("t", "first");
  now_ += 10min;
  std::string response;
  EXPECT_EQ(tokens_.begin("t", "f", &response), State::kCompleted);
  EXPECT_EQ(response, "first");
  EXPECT_EQ(begin("t", "other"), State::kMismatch);
}

TEST_F(TransactionTokensTest, ATokenIsForgottenTenMinutesAfterItsRequestCompleted) {
  ASSERT_EQ(begin("t"), State::kNew);
  now_ += 1h;  // a long-running request: its ten minutes start when it completes
  EXPECT_EQ(begin("t"), State::kInProgress);
  tokens_.complete("t", "first");
  now_ += 10min + 1ms;
  EXPECT_EQ(begin("t", "other"), State::kNew);
}

TEST_F(TransactionTokensTest, AFailedRequestIsNotRemembered) {
  ASSERT_EQ(begin("t"), State::kNew);
  tokens_.abandon("t");
  EXPECT_EQ(begin("t", "other"), State::kNew);
}

TEST_F(TransactionTokensTest, TokensExpireInTheOrderTheyCompleted) {
  for (int i = 0; i < 1000; ++i) {
    const std::string token = "t" + std::to_string(i);
    ASSERT_EQ(begin(token), State::kNew);
    tokens_.complete(token, "r");
    now_ += 100ms;
  }
  EXPECT_EQ(tokens_.size(), 1000u);
  // At 640 s, the 400 tokens that completed before 40 s did so more than ten minutes ago.
  now_ += 540s;
  ASSERT_EQ(begin("new"), State::kNew);
  EXPECT_EQ(tokens_.size(), 1000u - 400u + 1u);
  EXPECT_EQ(begin("t399"), State::kNew);
  EXPECT_EQ(begin("t400"), State::kCompleted);
}

TEST_F(TransactionTokensTest, ATokenReusedAfterExpiryLivesFromItsNewCompletion) {
  ASSERT_EQ(begin("t"), State::kNew);
  tokens_.complete("t", "first");
  now_ += 11min;
  ASSERT_EQ(begin("t"), State::kNew);
  tokens_.complete("t", "second");
  now_ += 5min;
  std::string response;
  EXPECT_EQ(tokens_.begin("t", "f", &response), State::kCompleted);
  EXPECT_EQ(response, "second");
}

}  // namespace
}  // namespace kumo::engine
