// Counters on the request path that no two threads share a cache line for. Each thread
// that counts owns a slab of cells; a counter is a slot number, the same in every slab;
// adding is a relaxed load and store in the calling thread's slab, and reading a counter
// sums the slot over all slabs. Counters only grow (or move by signed deltas) and are never
// reset: readers keep the last total they saw and take differences.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace kumo::capacity::tally {

using Slot = std::uint32_t;

namespace detail {

using Cell = std::atomic<std::int64_t>;
// A slab is an array of chunks of cells, each chunk allocated on first use.
constexpr unsigned kChunkBits = 12;
constexpr std::size_t kChunkCells = std::size_t{1} << kChunkBits;
using Chunks = std::atomic<Cell*>;
// The calling thread's chunk array; null until its first count.
inline thread_local Chunks* chunks = nullptr;
// Makes the calling thread's slab (and sets `chunks`).
Chunks* own_chunks();
// Allocates chunk `i` of the calling thread's slab.
Cell* make_chunk(Chunks* chunks, std::size_t i);

}  // namespace detail

// `count` consecutive new slots, all zero; never reused.
Slot allocate(std::size_t count);
// Adds `delta` to the slot in the calling thread's slab: a relaxed load and store, inline
// on the request path.
inline void add(Slot slot, std::int64_t delta) {
  detail::Chunks* chunks = detail::chunks != nullptr ? detail::chunks : detail::own_chunks();
  const std::size_t i = slot >> detail::kChunkBits;
  detail::Cell* chunk = chunks[i].load(std::memory_order_acquire);
  if (chunk == nullptr) chunk = detail::make_chunk(chunks, i);
  detail::Cell& cell = chunk[slot & (detail::kChunkCells - 1)];
  cell.store(cell.load(std::memory_order_relaxed) + delta, std::memory_order_relaxed);
}
// The slot's total over all threads.
std::int64_t sum(Slot slot);
// Totals of `count` consecutive slots from `first` into out[0..count).
void sum(Slot first, std::size_t count, std::int64_t* out);

}  // namespace kumo::capacity::tally
