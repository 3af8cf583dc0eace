// What the in-memory back end (storage::open_memory) holds, for tests and measurements.
#pragma once

#include <cstddef>

#include "storage/storage.h"

namespace kumo::storage {

struct MemoryUsage {
  std::size_t keys = 0;        // keys present, tombstones kept for a reader included
  std::size_t versions = 0;    // versions of those keys, the newest included
  std::size_t data_bytes = 0;  // Σ key and value bytes of those versions
};

// Walks the whole store under its shared lock. Throws StorageError when `storage` was not
// opened by open_memory().
MemoryUsage memory_usage(const Storage& storage);

}  // namespace kumo::storage
