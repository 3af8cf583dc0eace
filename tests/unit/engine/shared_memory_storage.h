// A test double for a storage that several front ends share (RADOS): the memory store,
// with every expectation of a batch checked with its write.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

#include "storage/storage.h"

namespace kumo::engine {

// The memory store shared as a RADOS pool is: every expectation of a batch is checked
// with its write, atomically (WriteConflict when one fails). A test may have another front
// end write just before the next write is checked (`interleave`), have the next write
// fail with WriteConflict once although nothing changed (`conflict_once`), or have writes
// fail (`failing`).
class SharedMemoryStorage : public storage::Storage {
 public:
  SharedMemoryStorage() : inner_(storage::open_memory()) {}

  std::optional<std::string> get(std::string_view key, const storage::Snapshot* snapshot) override {
    return inner_->get(key, snapshot);
  }
  void write(const storage::WriteBatch& batch) override {
    if (interleave) std::exchange(interleave, nullptr)();
    if (failing) throw storage::StorageError("the cluster is unreachable");
    std::lock_guard lock(mutex_);
    ++writes;
    if (std::exchange(conflict_once, false)) throw storage::WriteConflict("conflict");
    for (const auto& e : batch.expectations()) {
      if (inner_->get(e.key) != e.value) throw storage::WriteConflict("the key changed");
    }
    inner_->write(batch);
  }
  std::unique_ptr<storage::Snapshot> snapshot() override { return inner_->snapshot(); }
  std::unique_ptr<storage::Iterator> iterator(std::string lower, std::string upper,
                                              const storage::Snapshot* snapshot) override {
    return inner_->iterator(std::move(lower), std::move(upper), snapshot);
  }
  bool shared() const override { return true; }

  std::function<void()> interleave;
  bool conflict_once = false;
  bool failing = false;
  int writes = 0;

 private:
  std::unique_ptr<storage::Storage> inner_;
  std::mutex mutex_;
};

}  // namespace kumo::engine
