// Counters on the request path that no two threads share a cache line for. Each thread
// that counts owns a slab of cells; a counter is a slot number, the same in every slab;
// adding is a relaxed load and store in the calling thread's slab, and reading a counter
// sums the slot over all slabs. Counters only grow (or move by signed deltas) and are never
// reset: readers keep the last total they saw and take differences.
#pragma once

#include <cstddef>
#include <cstdint>

namespace kumo::capacity::tally {

using Slot = std::uint32_t;

// `count` consecutive new slots, all zero; never reused.
Slot allocate(std::size_t count);
// Adds `delta` to the slot in the calling thread's slab.
void add(Slot slot, std::int64_t delta);
// The slot's total over all threads.
std::int64_t sum(Slot slot);
// Totals of `count` consecutive slots from `first` into out[0..count).
void sum(Slot first, std::size_t count, std::int64_t* out);

}  // namespace kumo::capacity::tally
