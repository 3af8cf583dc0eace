// ClientRequestToken idempotency for TransactWriteItems (dynamodb-contract.md §7.6): a repeat
// of a completed request with the same token within 10 minutes answers the first result
// without writing again; the same token with different parameters, or while the first call
// runs, is refused.
#pragma once

#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <string>

namespace kumo::engine {

class TransactionTokens {
 public:
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

 private:
  using Clock = std::chrono::steady_clock;
  static constexpr std::chrono::minutes kLifetime{10};
  struct Entry {
    std::string fingerprint;
    bool completed = false;
    std::string response;
    Clock::time_point completed_at;
  };
  void expire(Clock::time_point now);

  std::mutex mutex_;
  std::map<std::string, Entry> entries_;
};

}  // namespace kumo::engine
