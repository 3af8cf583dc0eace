#include "capacity/tally.h"

#include <array>
#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

namespace kumo::capacity::tally {
namespace {

constexpr unsigned kChunkBits = 12;
constexpr std::size_t kChunkCells = std::size_t{1} << kChunkBits;
constexpr std::size_t kMaxChunks = 4096;  // 16 M slots
constexpr std::size_t kMaxSlots = kChunkCells * kMaxChunks;

using Cell = std::atomic<std::int64_t>;

// One thread's cells, in chunks allocated on first use.
struct Slab {
  std::array<std::atomic<Cell*>, kMaxChunks> chunks{};
  ~Slab() {
    for (auto& c : chunks) delete[] c.load(std::memory_order_relaxed);
  }
  Cell* chunk(std::size_t i) {
    Cell* c = chunks[i].load(std::memory_order_acquire);
    if (c != nullptr) return c;
    c = new Cell[kChunkCells]();
    chunks[i].store(c, std::memory_order_release);
    return c;
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

Slab* own_slab() {
  thread_local Slab* slab = nullptr;
  if (slab == nullptr) {
    Registry& r = registry();
    std::lock_guard lock(r.mu);
    r.slabs.push_back(std::make_unique<Slab>());
    slab = r.slabs.back().get();
  }
  return slab;
}

}  // namespace

Slot allocate(std::size_t count) {
  std::size_t first = registry().next.fetch_add(count, std::memory_order_relaxed);
  // Past the last slot, counters wrap onto earlier ones: wrong counts, never a crash.
  if (first + count > kMaxSlots) first %= (kMaxSlots - count);
  return static_cast<Slot>(first);
}

void add(Slot slot, std::int64_t delta) {
  Cell& cell = own_slab()->chunk(slot >> kChunkBits)[slot & (kChunkCells - 1)];
  cell.store(cell.load(std::memory_order_relaxed) + delta, std::memory_order_relaxed);
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
