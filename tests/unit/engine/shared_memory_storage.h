// A test double for a storage that several front ends share (RADOS).
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

#include "engine/forwarding_storage.h"
#include "storage/storage.h"

namespace kumo::engine {

// The memory store shared as a RADOS pool is: every expectation of a batch is checked
// with its write, atomically (WriteConflict when one fails). A test may have another front
// end write just before the next write is checked (`interleave`), have the next write
// fail with WriteConflict once although nothing changed (`conflict_once`), or have writes
// fail (`failing`).
class SharedMemoryStorage : public ForwardingStorage {
 public:
  SharedMemoryStorage() : ForwardingStorage(storage::open_memory()) {}

  void write(const storage::WriteBatch& batch) override {
    if (interleave) std::exchange(interleave, nullptr)();
    if (failing) throw storage::StorageError("the cluster is unreachable");
    std::lock_guard lock(mutex_);
    ++writes;
    if (std::exchange(conflict_once, false)) throw storage::WriteConflict("conflict");
    for (const auto& e : batch.expectations()) {
      if (inner().get(e.key) != e.value) throw storage::WriteConflict("the key changed");
    }
    inner().write(batch);
  }
  bool shared() const override { return true; }

  std::function<void()> interleave;
  bool conflict_once = false;
  bool failing = false;
  int writes = 0;

 private:
  std::mutex mutex_;
};

}  // namespace kumo::engine
