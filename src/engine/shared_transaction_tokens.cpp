#include "engine/shared_transaction_tokens.h"

#include <openssl/evp.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <utility>
#include <vector>

namespace kumo::engine {

namespace {

constexpr char kEntryFormat = 1;
// Conflicts one begin() meets before it gives up: each means another front end changed the
// entry between this one's read and its write, which only requests with the same token do.
constexpr int kBeginAttempts = 64;

std::string sha256(std::string_view text) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_Digest(text.data(), text.size(), digest, &length, EVP_sha256(), nullptr);
  return std::string(reinterpret_cast<const char*>(digest), length);
}

void put_be64(std::string* out, std::uint64_t v) {
  for (int i = 7; i >= 0; --i) out->push_back(static_cast<char>(v >> (8 * i)));
}

std::uint64_t get_be64(std::string_view in) {
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | static_cast<unsigned char>(in[i]);
  return v;
}

std::string token_key(const std::string& token) {
  std::string key(SharedTransactionTokens::kPrefix);
  return key += token;
}

}  // namespace

// [format][0 running | 1 completed][u64 at_ms][u64 nonce][u8 n][n bytes digest][response]
std::string SharedTransactionTokens::encode(const Entry& entry) {
  std::string out;
  out.reserve(19 + entry.digest.size() + entry.response.size());
  out.push_back(kEntryFormat);
  out.push_back(entry.completed ? 1 : 0);
  put_be64(&out, static_cast<std::uint64_t>(entry.at_ms));
  put_be64(&out, entry.nonce);
  out.push_back(static_cast<char>(entry.digest.size()));
  out += entry.digest;
  out += entry.response;
  return out;
}

std::optional<SharedTransactionTokens::Entry> SharedTransactionTokens::decode(
    std::string_view value) {
  if (value.size() < 19 || value[0] != kEntryFormat) return std::nullopt;
  Entry entry;
  entry.completed = value[1] != 0;
  entry.at_ms = static_cast<std::int64_t>(get_be64(value.substr(2)));
  entry.nonce = get_be64(value.substr(10));
  const std::size_t digest = static_cast<unsigned char>(value[18]);
  if (value.size() < 19 + digest) return std::nullopt;
  entry.digest = value.substr(19, digest);
  entry.response = value.substr(19 + digest);
  return entry;
}

SharedTransactionTokens::SharedTransactionTokens(storage::Storage& storage, const Clock& clock)
    : storage_(storage), clock_(clock), random_(std::random_device{}()) {
  MutexLock lock(mutex_);
  next_walk_ms_ = now_ms() + kWalkEveryMs;
}

bool SharedTransactionTokens::live(const Entry& entry, std::int64_t now) {
  return now - entry.at_ms <= (entry.completed ? kLifetimeMs : kRunningLimitMs);
}

TransactionTokens::State SharedTransactionTokens::begin(const std::string& token,
                                                        const std::string& fingerprint,
                                                        std::string* response) {
  Entry mine;
  mine.digest = sha256(fingerprint);
  {
    MutexLock lock(mutex_);
    // Running here: the storage holds what this front end stored.
    auto it = running_.find(token);
    if (it != running_.end()) {
      const std::optional<Entry> entry = decode(it->second);
      return entry && entry->digest != mine.digest ? State::kMismatch : State::kInProgress;
    }
    mine.nonce = random_();
  }
  const std::string key = token_key(token);
  // Most tokens are new: the entry is stored expecting none, and read only when another is
  // there.
  std::optional<std::string> expected;
  for (int attempt = 1;; ++attempt) {
    mine.at_ms = now_ms();
    std::string value = encode(mine);
    storage::WriteBatch batch;
    batch.expect(key, expected);
    batch.put(key, value);
    bool held = false;
    try {
      storage_.write(batch);
      MutexLock lock(mutex_);
      running_[token] = std::move(value);
      return State::kNew;
    } catch (const storage::TransactionConflict&) {
      // The transaction that completes the entry holds it: it is in progress (committed,
      // or about to be, and not applied yet), however old the running entry.
      held = true;
      if (attempt >= kBeginAttempts) throw;
    } catch (const storage::WriteConflict&) {
      if (attempt >= kBeginAttempts) throw;
    }
    expected = storage_.get(key);
    if (!expected) continue;
    const std::optional<Entry> stored = decode(*expected);
    // An entry that expired, or whose front end died, is replaced; not one a transaction
    // held just now, whatever its age (completed meanwhile, or still in progress).
    if (!stored || (!held && !live(*stored, now_ms()))) continue;
    if (stored->digest != mine.digest) return State::kMismatch;
    if (!stored->completed) return State::kInProgress;
    *response = stored->response;
    return State::kCompleted;
  }
}

std::optional<std::string> SharedTransactionTokens::take_running(const std::string& token) {
  MutexLock lock(mutex_);
  auto it = running_.find(token);
  if (it == running_.end()) return std::nullopt;
  std::string running = std::move(it->second);
  running_.erase(it);
  return running;
}

void SharedTransactionTokens::seal(const std::string& token, std::string response,
                                   storage::WriteBatch* batch) {
  std::string running;
  {
    MutexLock lock(mutex_);
    auto it = running_.find(token);
    if (it == running_.end()) return;
    running = it->second;
  }
  std::optional<Completion> done = completed(token_key(token), running, std::move(response), batch);
  if (!done) return;
  MutexLock lock(mutex_);
  sealed_[token] = std::move(done->value);
}

void SharedTransactionTokens::complete(const std::string& token, std::string response) {
  std::optional<std::string> taken = take_running(token);
  if (!taken) return;
  std::string running = std::move(*taken);
  std::optional<std::string> sealed;
  {
    MutexLock lock(mutex_);
    if (auto it = sealed_.find(token); it != sealed_.end()) {
      sealed = std::move(it->second);
      sealed_.erase(it);
    }
  }
  const std::string key = token_key(token);
  if (sealed) {
    // Completed with the transaction: only a response that differs is stored again.
    std::optional<Entry> entry = decode(*sealed);
    if (!entry) return;
    if (entry->response == response) {
      MutexLock lock(mutex_);
      remember({entry->at_ms, key, std::move(*sealed)});
      return;
    }
    running = std::move(*sealed);
  }
  storage::WriteBatch batch;
  std::optional<Completion> done = completed(key, running, std::move(response), &batch);
  if (!done) return;
  try {
    storage_.write(batch);
  } catch (const storage::WriteConflict&) {
    // Another front end took the token over, its entry having run past kRunningLimitMs:
    // the entry is its own now.
    return;
  } catch (const std::exception& e) {
    // The running entry stays: a repeat is refused as in progress until it is taken as
    // abandoned.
    spdlog::warn("storing the result of ClientRequestToken {} failed: {}", token, e.what());
    return;
  }
  MutexLock lock(mutex_);
  remember(std::move(*done));
}

std::optional<SharedTransactionTokens::Completion> SharedTransactionTokens::completed(
    const std::string& key, const std::string& running, std::string response,
    storage::WriteBatch* batch) const {
  std::optional<Entry> entry = decode(running);
  if (!entry) return std::nullopt;
  entry->completed = true;
  entry->at_ms = now_ms();
  entry->response = std::move(response);
  Completion done{entry->at_ms, key, encode(*entry)};
  batch->expect(key, running);
  batch->put(key, done.value);
  return done;
}

void SharedTransactionTokens::remember(Completion done) {
  // Removed in this order: completion times never go back.
  if (!completions_.empty()) done.at_ms = std::max(done.at_ms, completions_.back().at_ms);
  completions_.push_back(std::move(done));
}

void SharedTransactionTokens::abandon(const std::string& token) {
  std::optional<std::string> taken = take_running(token);
  {
    MutexLock lock(mutex_);
    sealed_.erase(token);
  }
  if (!taken) return;
  const std::string running = std::move(*taken);
  try {
    // (A transaction that sealed the entry and then failed wrote nothing: it is running.)
    remove(token_key(token), running);
  } catch (const std::exception& e) {
    spdlog::warn("forgetting ClientRequestToken {} failed: {}", token, e.what());
  }
}

void SharedTransactionTokens::fail(const std::string& token) {
  take_running(token);
  MutexLock lock(mutex_);
  sealed_.erase(token);
}

bool SharedTransactionTokens::remove(const std::string& key, const std::string& value) {
  storage::WriteBatch batch;
  batch.expect(key, value);
  batch.del(key);
  try {
    storage_.write(batch);
    return true;
  } catch (const storage::WriteConflict&) {
    return false;  // another front end's entry now (or gone already)
  }
}

void SharedTransactionTokens::sweep() {
  const std::int64_t now = now_ms();
  std::deque<Completion> due;
  bool walk_due = false;
  {
    MutexLock lock(mutex_);
    while (!completions_.empty() && now - completions_.front().at_ms > kLifetimeMs) {
      due.push_back(std::move(completions_.front()));
      completions_.pop_front();
    }
    if (now >= next_walk_ms_) {
      walk_due = true;
      next_walk_ms_ = now + kWalkEveryMs;
    }
  }
  while (!due.empty()) {
    try {
      remove(due.front().key, due.front().value);
    } catch (const std::exception& e) {
      // The storage failed: the rest wait for the next sweep.
      spdlog::warn("removing expired ClientRequestTokens failed: {}", e.what());
      MutexLock lock(mutex_);
      completions_.insert(completions_.begin(), std::make_move_iterator(due.begin()),
                          std::make_move_iterator(due.end()));
      return;
    }
    due.pop_front();
  }
  if (walk_due) walk(now);
}

void SharedTransactionTokens::walk(std::int64_t now) {
  // What front ends that stopped left: their expired entries, and running ones that
  // nobody completes.
  std::string upper(kPrefix);
  upper.back() = static_cast<char>(upper.back() + 1);
  std::vector<std::pair<std::string, std::string>> expired;
  {
    auto it = storage_.iterator(std::string(kPrefix), upper);
    for (it->seek_to_first(); it->valid(); it->next()) {
      const std::optional<Entry> entry = decode(it->value());
      if (!entry || !live(*entry, now)) expired.emplace_back(it->key(), it->value());
    }
  }
  for (const auto& [key, value] : expired) remove(key, value);
}

}  // namespace kumo::engine
