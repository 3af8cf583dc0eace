// ItemLocks: a striped lock table over item keys. A read-modify-write of one item holds
// the stripe of its key from the read to the commit, so two writers of the same item never
// interleave. These locks guard items in storage, not members of an object, and which
// stripe a caller takes is known only at run time: they stay outside the compiler's lock
// analysis (model/mutex.h).
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <functional>
#include <mutex>
#include <string_view>
#include <vector>

namespace kumo::engine {

class ItemLocks {
 public:
  // Locks the stripe of `key` until the returned guard is destroyed.
  [[nodiscard]] std::unique_lock<std::mutex> lock(std::string_view key) {
    return std::unique_lock<std::mutex>(stripes_[stripe_of(key)].m);
  }

  // Locks the stripes of all `keys` in ascending stripe order, so that two callers locking
  // overlapping sets can never deadlock. Each stripe is locked once.
  [[nodiscard]] std::vector<std::unique_lock<std::mutex>> lock_all(
      const std::vector<std::string>& keys) {
    std::vector<std::size_t> stripes;
    for (const auto& key : keys) stripes.push_back(stripe_of(key));
    std::sort(stripes.begin(), stripes.end());
    stripes.erase(std::unique(stripes.begin(), stripes.end()), stripes.end());
    std::vector<std::unique_lock<std::mutex>> guards;
    for (std::size_t s : stripes) guards.emplace_back(stripes_[s].m);
    return guards;
  }

 private:
  static std::size_t stripe_of(std::string_view key) {
    return std::hash<std::string_view>{}(key) % kStripes;
  }
  // Two writers of different items share a stripe one time in 256, and then only wait for
  // a commit. The table is 16 KiB: it is zeroed as the engine is built, at every start, and
  // 1,024 stripes cost 64 KiB and sixteen page faults (30 us of start-up) for no gain with
  // the few I/O threads a server has.
  static constexpr std::size_t kStripes = 256;
  // Each mutex on its own cache line so unrelated keys do not contend on one line.
  struct alignas(64) Stripe {
    std::mutex m;
  };
  std::array<Stripe, kStripes> stripes_;
};

}  // namespace kumo::engine
