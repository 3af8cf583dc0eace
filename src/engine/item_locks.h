// ItemLocks: a striped lock table over item keys. A read-modify-write of one item holds
// the stripe of its key from the read to the commit, so two writers of the same item never
// interleave (architecture.md "Atomicity and concurrency").
#pragma once

#include <array>
#include <cstddef>
#include <functional>
#include <mutex>
#include <string_view>

namespace kumo::engine {

class ItemLocks {
 public:
  // Locks the stripe of `key` until the returned guard is destroyed.
  [[nodiscard]] std::unique_lock<std::mutex> lock(std::string_view key) {
    return std::unique_lock<std::mutex>(stripes_[std::hash<std::string_view>{}(key) % kStripes].m);
  }

 private:
  static constexpr std::size_t kStripes = 1024;
  // Each mutex on its own cache line so unrelated keys do not contend on one line.
  struct alignas(64) Stripe {
    std::mutex m;
  };
  std::array<Stripe, kStripes> stripes_;
};

}  // namespace kumo::engine
