#include "capacity/key_summary.h"

#include <algorithm>

namespace kumo::capacity {

std::string summary_key(std::string_view partition_key, std::string_view sort_key) {
  std::string key;
  key.reserve(2 + partition_key.size() + sort_key.size());
  key.push_back(static_cast<char>(partition_key.size() >> 8));
  key.push_back(static_cast<char>(partition_key.size() & 0xFF));
  key.append(partition_key);
  key.append(sort_key);
  return key;
}

namespace {
std::size_t pk_size(std::string_view key) {
  if (key.size() < 2) return 0;
  const std::size_t n = (static_cast<std::size_t>(static_cast<unsigned char>(key[0])) << 8) |
                        static_cast<unsigned char>(key[1]);
  return std::min(n, key.size() - 2);
}
}  // namespace

std::string_view summary_partition_key(std::string_view key) {
  return key.substr(std::min<std::size_t>(2, key.size()), pk_size(key));
}

std::string_view summary_sort_key(std::string_view key) {
  return key.substr(std::min<std::size_t>(key.size(), 2 + pk_size(key)));
}

std::int64_t KeySummary::weight(const KeyCounts& c) const {
  switch (by_) {
    case By::kUnits:
      return c.units();
    case By::kThrottles:
      return c.throttled;
    case By::kInsightsUnits:
      return 3 * c.write + c.read;
  }
  return 0;
}

void KeySummary::add(std::string_view key, const KeyCounts& counts) {
  auto it = entries_.find(std::string(key));
  if (it == entries_.end() && entries_.size() >= capacity_) {
    auto least = std::min_element(
        entries_.begin(), entries_.end(),
        [&](const auto& a, const auto& b) { return weight(a.second) < weight(b.second); });
    KeyCounts inherited = least->second;
    inherited.estimate = true;
    entries_.erase(least);
    it = entries_.emplace(std::string(key), inherited).first;
  } else if (it == entries_.end()) {
    it = entries_.emplace(std::string(key), KeyCounts{}).first;
  }
  KeyCounts& c = it->second;
  c.token = counts.token;
  c.partition = counts.partition;
  c.read += counts.read;
  c.write += counts.write;
  c.sampled += counts.sampled;
  c.throttled += counts.throttled;
  c.estimate = c.estimate || counts.estimate;
}

void KeySummary::merge(const KeySummary& other) {
  for (const auto& [key, counts] : other.entries_) add(key, counts);
}

std::vector<std::pair<std::string, KeyCounts>> KeySummary::top(std::size_t n) const {
  std::vector<std::pair<std::string, KeyCounts>> all(entries_.begin(), entries_.end());
  std::sort(all.begin(), all.end(), [&](const auto& a, const auto& b) {
    const std::int64_t wa = weight(a.second), wb = weight(b.second);
    return wa != wb ? wa > wb : a.first < b.first;
  });
  all.erase(
      std::remove_if(all.begin(), all.end(), [&](const auto& e) { return weight(e.second) <= 0; }),
      all.end());
  if (all.size() > n) all.resize(n);
  return all;
}

}  // namespace kumo::capacity
