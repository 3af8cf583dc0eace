#include "capacity/tally.h"

#include <array>
#include <memory>
#include <mutex>
#include <vector>

namespace kumo::capacity::tally {
namespace {

using detail::Cell;
using detail::kChunkBits;
using detail::kChunkCells;
constexpr std::size_t kMaxChunks = 4096;  // 16 M slots
constexpr std::size_t kMaxSlots = kChunkCells * kMaxChunks;

// One thread's cells, in chunks allocated on first use.
struct Slab {
  std::array<detail::Chunks, kMaxChunks> chunks{};
  ~Slab() {
    for (auto& c : chunks) delete[] c.load(std::memory_order_relaxed);
  }
};

// Every slab ever made: a thread's slab outlives the thread so its counts stay in the sums.
struct Registry {
  std::mutex mu;
  std::vector<std::unique_ptr<Slab>> slabs;
  std::atomic<std::size_t> next{0};
};

Registry& registry() {
  static Registry* r = new Registry();  // never destroyed: threads may count at exit
  return *r;
}

}  // namespace

namespace detail {

Chunks* own_chunks() {
  if (chunks == nullptr) {
    Registry& r = registry();
    std::lock_guard lock(r.mu);
    r.slabs.push_back(std::make_unique<Slab>());
    chunks = r.slabs.back()->chunks.data();
  }
  return chunks;
}

Cell* make_chunk(Chunks* slab, std::size_t i) {
  Cell* c = new Cell[kChunkCells]();
  slab[i].store(c, std::memory_order_release);
  return c;
}

}  // namespace detail

Slot allocate(std::size_t count) {
  std::size_t first = registry().next.fetch_add(count, std::memory_order_relaxed);
  // Past the last slot, counters wrap onto earlier ones: wrong counts, never a crash.
  if (first + count > kMaxSlots) first %= (kMaxSlots - count);
  return static_cast<Slot>(first);
}

void sum(Slot first, std::size_t count, std::int64_t* out) {
  for (std::size_t i = 0; i < count; ++i) out[i] = 0;
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  for (const auto& slab : r.slabs) {
    for (std::size_t i = 0; i < count; ++i) {
      const std::size_t s = first + i;
      const Cell* chunk = slab->chunks[s >> kChunkBits].load(std::memory_order_acquire);
      if (chunk != nullptr) out[i] += chunk[s & (kChunkCells - 1)].load(std::memory_order_relaxed);
    }
  }
}

std::int64_t sum(Slot slot) {
  std::int64_t total = 0;
  sum(slot, 1, &total);
  return total;
}

}  // namespace kumo::capacity::tally
