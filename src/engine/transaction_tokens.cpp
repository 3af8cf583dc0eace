#include "engine/transaction_tokens.h"

namespace kumo::engine {

void TransactionTokens::expire(Clock::time_point now) {
  for (auto it = entries_.begin(); it != entries_.end();) {
    if (it->second.completed && now - it->second.completed_at > kLifetime) {
      it = entries_.erase(it);
    } else {
      ++it;
    }
  }
}

TransactionTokens::State TransactionTokens::begin(const std::string& token,
                                                  const std::string& fingerprint,
                                                  std::string* response) {
  std::lock_guard lock(mutex_);
  expire(Clock::now());
  auto it = entries_.find(token);
  if (it == entries_.end()) {
    entries_.emplace(token, Entry{fingerprint, false, {}, {}});
    return State::kNew;
  }
  if (it->second.fingerprint != fingerprint) return State::kMismatch;
  if (!it->second.completed) return State::kInProgress;
  *response = it->second.response;
  return State::kCompleted;
}

void TransactionTokens::complete(const std::string& token, std::string response) {
  std::lock_guard lock(mutex_);
  auto it = entries_.find(token);
  if (it == entries_.end()) return;
  it->second.completed = true;
  it->second.response = std::move(response);
  it->second.completed_at = Clock::now();
}

void TransactionTokens::abandon(const std::string& token) {
  std::lock_guard lock(mutex_);
  entries_.erase(token);
}

}  // namespace kumo::engine
