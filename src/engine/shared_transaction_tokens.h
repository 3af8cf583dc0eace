// ClientRequestTokens kept in a storage that several processes (front ends) share, so that
// the same token sent to any of them is recognised (the rule: engine/transaction_tokens.h).
//
// Each token is the key `meta/tokens/<token>`, whose value is the entry: running or
// completed, the time it began or completed on the engine's clock (which the front ends
// share), a SHA-256 of the request's canonical parameters, a number drawn by the front end
// that began it, and the response to replay. Every write of it expects what was read
// (WriteBatch::expect, which a shared storage checks atomically with the write): of two
// front ends that begin one token at once, one stores its entry and the other meets
// storage::WriteConflict, reads the entry again and decides again.
//
// begin: absent, expired (completed more than 10 minutes ago) or stale (running for more
// than a minute: its front end died before its transaction's commit point) → stored as
// running, kNew; another fingerprint → kMismatch; running, or held by the transaction that
// completes it → kInProgress; completed → kCompleted with its response. The transaction
// completes the entry itself (seal: the entry is one of its writes, expected running as
// stored), so a transaction committed by a front end that then died is completed by the
// front end that takes its work over, however long after, and a repeat of the token never
// applies it again. complete stores the final response (when the sealed one lacks part of
// it), abandon removes the entry, both only while it is still the one this front end
// stored. Each front end removes the entries it completed once they expired
// (sweep(), off the requests' path), and now and then walks every entry for expired ones
// that a front end which stopped left.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <unordered_map>

#include "engine/transaction_tokens.h"
#include "model/clock.h"
#include "model/mutex.h"
#include "storage/storage.h"

namespace kumo::engine {

class SharedTransactionTokens final : public TransactionTokens {
 public:
  static constexpr std::string_view kPrefix = "meta/tokens/";
  // How long a completed request's token is remembered, in ms of the engine's clock.
  static constexpr std::int64_t kLifetimeMs =
      std::chrono::duration_cast<std::chrono::milliseconds>(kLifetime).count();
  // A running entry older than this (ms) is taken as abandoned: its front end died before
  // its transaction's commit point, and the token is not blocked for ever. (A transaction
  // past its prepare holds the entry, which is then in progress however old; one not yet
  // prepared fails its guard on the entry once another request replaced it.)
  static constexpr std::int64_t kRunningLimitMs = 60'000;
  // How often (ms of the engine's clock) sweep() walks every entry.
  static constexpr std::int64_t kWalkEveryMs = 3'600'000;

  // `storage` and `clock` outlive the tokens.
  SharedTransactionTokens(storage::Storage& storage, const Clock& clock);

  State begin(const std::string& token, const std::string& fingerprint,
              std::string* response) override;
  void complete(const std::string& token, std::string response) override;
  void abandon(const std::string& token) override;
  // Leaves the stored entry as it is (see TransactionTokens::fail): running, or completed by
  // the transaction it sealed, whoever applies that; forgets it here.
  void fail(const std::string& token) override;
  bool seals() const override { return true; }
  // The entry completed, expected running as this front end stored it.
  void seal(const std::string& token, std::string response, storage::WriteBatch* batch) override;
  // Removes the entries this front end completed that expired (each only while it holds
  // what this front end stored), and, every kWalkEveryMs, every expired or stale entry.
  void sweep() override;

  // The entry as stored.
  struct Entry {
    bool completed = false;
    std::int64_t at_ms = 0;  // when it began (running) or completed
    std::uint64_t nonce = 0;
    std::string digest;  // SHA-256 of the fingerprint
    std::string response;
  };
  static std::string encode(const Entry& entry);
  static std::optional<Entry> decode(std::string_view value);

 private:
  // An entry this front end completed: when, its key, and the value stored.
  struct Completion {
    std::int64_t at_ms = 0;
    std::string key;
    std::string value;
  };

  std::int64_t now_ms() const { return clock_.now_ns() / 1'000'000; }
  // The entry this front end stored running under `token`, which it forgets.
  std::optional<std::string> take_running(const std::string& token);
  // Whether `entry` still counts at `now`: completed within kLifetimeMs, or running for
  // less than kRunningLimitMs.
  static bool live(const Entry& entry, std::int64_t now);
  // Removes `key` if it still holds `value`; false when it did not.
  bool remove(const std::string& key, const std::string& value);
  // Removes every entry expired at `now`.
  void walk(std::int64_t now);
  // `running`, the entry this front end stored under `key`, completed now with
  // `response`: written to `batch`, which expects `running` still stored; nullopt (nothing
  // written) when it does not decode.
  std::optional<Completion> completed(const std::string& key, const std::string& running,
                                      std::string response, storage::WriteBatch* batch) const;
  // Adds `done` to completions_, its time no earlier than the last one's (they are removed
  // in this order).
  void remember(Completion done) KUMO_REQUIRES(mutex_);

  storage::Storage& storage_;
  const Clock& clock_;
  Mutex mutex_;
  // The tokens this front end runs now: the value it stored for each.
  std::unordered_map<std::string, std::string> running_ KUMO_GUARDED_BY(mutex_);
  // The completed entries it added to its tokens' transactions (seal), by token.
  std::unordered_map<std::string, std::string> sealed_ KUMO_GUARDED_BY(mutex_);
  // The entries it completed, in completion order, until they are removed.
  std::deque<Completion> completions_ KUMO_GUARDED_BY(mutex_);
  std::mt19937_64 random_ KUMO_GUARDED_BY(mutex_);
  std::int64_t next_walk_ms_ KUMO_GUARDED_BY(mutex_) = 0;
};

}  // namespace kumo::engine
