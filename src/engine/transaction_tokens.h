// ClientRequestToken idempotency for TransactWriteItems and ExecuteTransaction (DynamoDB's
// rule): a repeat of a completed request with the same token within 10 minutes after it
// completed answers the first result without writing again; the same token with different
// parameters is refused (IdempotentParameterMismatchException), and so is the same token
// while the first call still runs (TransactionInProgressException). After 10 minutes the
// token is forgotten; a failed call is not remembered.
//
// Two implementations: LocalTransactionTokens, in the memory of the one process that owns
// the storage (memory, RocksDB), and SharedTransactionTokens
// (engine/shared_transaction_tokens.h), kept in a storage that several processes share
// (RADOS), so that a repeat sent to any front end is recognised.
#pragma once

#include <chrono>
#include <deque>
#include <functional>
#include <string>
#include <unordered_map>

#include "model/mutex.h"

namespace kumo::storage {
class WriteBatch;
}

namespace kumo::engine {

class TransactionTokens {
 public:
  // How long a completed request's token is remembered.
  static constexpr std::chrono::minutes kLifetime{10};

  enum class State { kNew, kInProgress, kMismatch, kCompleted };

  virtual ~TransactionTokens() = default;

  // Registers `token` for a request whose canonical parameters are `fingerprint`. kNew: the
  // caller runs the request and must call complete() or abandon(). kCompleted: *response
  // holds the first call's response body. May throw storage::StorageError.
  virtual State begin(const std::string& token, const std::string& fingerprint,
                      std::string* response) = 0;
  // The request under `token` succeeded with `response`. Does not throw for the storage's
  // failures: the request has been applied, and is answered.
  virtual void complete(const std::string& token, std::string response) = 0;
  // The request under `token` failed: the token is forgotten, as a failed call is not
  // remembered. Does not throw for the storage's failures.
  virtual void abandon(const std::string& token) = 0;
  // The request under `token` failed in the storage, where it may have been applied: on
  // a storage several processes share, a transaction past its commit point is finished by
  // another, so the token stays running (a repeat is refused as in progress until the
  // entry is taken as abandoned) rather than let a repeat apply it twice. By default (one
  // process, whose failed batch wrote nothing), abandon().
  virtual void fail(const std::string& token) { abandon(token); }
  // Whether seal() keeps the outcome with the transaction (tokens kept in a storage that
  // several processes share). By default no: one process, whose failed batch wrote nothing.
  virtual bool seals() const { return false; }
  // Adds to the batch of the transaction that runs under `token` (begin() said kNew) the
  // writes that complete its entry with `response`: the token is completed exactly when the
  // transaction commits, by whichever process applies it (another one, when this one dies
  // past the commit point), so a repeat never applies it again. complete() then only
  // replaces the response if it differs. Called again when the transaction is retried.
  virtual void seal(const std::string& token, std::string response, storage::WriteBatch* batch) {
    (void)token;
    (void)response;
    (void)batch;
  }
  // Removes what expired where that takes work of its own (the engine's maintenance thread
  // calls it now and then); nothing by default.
  virtual void sweep() {}
};

// Tokens in this process's memory. They expire in the order they completed, from the front
// of a queue, so a request never walks the tokens that are still live: its cost is the same
// with none or with the tens of thousands that a steady rate of SDK calls (each carries a
// token) keeps alive.
class LocalTransactionTokens final : public TransactionTokens {
 public:
  using Clock = std::chrono::steady_clock;

  // `now` tells the time; tests hand in a clock they move themselves.
  explicit LocalTransactionTokens(std::function<Clock::time_point()> now = Clock::now)
      : now_(std::move(now)) {}

  State begin(const std::string& token, const std::string& fingerprint,
              std::string* response) override;
  void complete(const std::string& token, std::string response) override;
  void abandon(const std::string& token) override;
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
