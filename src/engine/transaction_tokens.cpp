#include "engine/transaction_tokens.h"

namespace kumo::engine {

void LocalTransactionTokens::expire(Clock::time_point now) {
  while (!completions_.empty() && now - completions_.front().at > kLifetime) {
    const Completion& oldest = completions_.front();
    // The token may have expired and completed again since: only its latest completion
    // ends it.
    auto it = entries_.find(oldest.token);
    if (it != entries_.end() && it->second.completed && it->second.completed_at == oldest.at) {
      entries_.erase(it);
    }
    completions_.pop_front();
  }
}

TransactionTokens::State LocalTransactionTokens::begin(const std::string& token,
                                                       const std::string& fingerprint,
                                                       std::string* response) {
  MutexLock lock(mutex_);
  expire(now_());
  auto [it, inserted] = entries_.try_emplace(token, Entry{fingerprint, false, {}, {}});
  if (inserted) return State::kNew;
  if (it->second.fingerprint != fingerprint) return State::kMismatch;
  if (!it->second.completed) return State::kInProgress;
  *response = it->second.response;
  return State::kCompleted;
}

void LocalTransactionTokens::complete(const std::string& token, std::string response) {
  MutexLock lock(mutex_);
  auto it = entries_.find(token);
  if (it == entries_.end()) return;
  // Completion times never go back, so the queue stays in order even if the clock did.
  Clock::time_point at = now_();
  if (!completions_.empty() && at < completions_.back().at) at = completions_.back().at;
  it->second.completed = true;
  it->second.response = std::move(response);
  it->second.completed_at = at;
  completions_.push_back({at, token});
}

void LocalTransactionTokens::abandon(const std::string& token) {
  MutexLock lock(mutex_);
  auto it = entries_.find(token);
  // Only a running request is abandoned; a completed one's token stays until it expires.
  if (it != entries_.end() && !it->second.completed) entries_.erase(it);
}

std::size_t LocalTransactionTokens::size() {
  MutexLock lock(mutex_);
  return entries_.size();
}

}  // namespace kumo::engine
