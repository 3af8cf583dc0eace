// ClientRequestToken idempotency for TransactWriteItems: a repeat of a completed request
// with the same token within 10 minutes answers the first result without writing again;
// the same token with different parameters, or while the first call runs, is refused.
//
// Tokens expire in the order they completed, from the front of a queue, so a request
// never walks the tokens that are still live: its cost is the same with none or with the
// tens of thousands that a steady rate of SDK calls (each carries a token) keeps alive.
#pragma once

#include <chrono>
#include <deque>
#include <functional>
#include <string>
#include <unordered_map>

#include "model/mutex.h"

namespace kumo::engine {

class TransactionTokens {
 public:
  using Clock = std::chrono::steady_clock;
  // How long a completed request's token is remembered.
  static constexpr std::chrono::minutes kLifetime{10};

  // `now` tells the time; tests hand in a clock they move themselves.
  explicit TransactionTokens(std::function<Clock::time_point()> now = Clock::now)
      : now_(std::move(now)) {}

  enum class State { kNew, kInProgress, kMismatch, kCompleted };

  // Registers `token` for a request whose canonical parameters are `fingerprint`. kNew: the
  // caller runs the request and must call complete() or abandon(). kCompleted: *response
  // holds the first call's response body.
  State begin(const std::string& token, const std::string& fingerprint, std::string* response);
  // The request under `token` succeeded with `response`.
  void complete(const std::string& token, std::string response);
  // The request under `token` failed: the token is forgotten, as a failed call is not
  // remembered.
  void abandon(const std::string& token);
  // Tokens remembered now (running or completed and not yet expired).
  std::size_t size();

 private:
  struct Entry {
    std::string fingerprint;
    bool completed = false;
    std::string response;
    Clock::time_point completed_at;
  };
  // A completed token, in completion order.
  struct Completion {
    Clock::time_point at;
    std::string token;
  };
  // Forgets the tokens that completed more than kLifetime before `now`.
  void expire(Clock::time_point now) KUMO_REQUIRES(mutex_);

  std::function<Clock::time_point()> now_;
  Mutex mutex_;
  std::unordered_map<std::string, Entry> entries_ KUMO_GUARDED_BY(mutex_);
  std::deque<Completion> completions_ KUMO_GUARDED_BY(mutex_);
};

}  // namespace kumo::engine
