// A test double for a storage that several front ends share (RADOS).
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "engine/forwarding_storage.h"
#include "storage/storage.h"

namespace kumo::engine {

// The memory store shared as a RADOS pool is: every expectation of a batch is checked
// with its write, atomically (WriteConflict when one fails), and so is each partition
// group's definition version against the table's last set_definition (DefinitionChanged
// when older; `definition_refusals` counts them). A test may have another front
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
    for (std::size_t g = 0; g < batch.groups().size(); ++g) {
      const std::optional<std::uint64_t> version = batch.definitions()[g];
      const std::string& item = batch.groups()[g];
      if (!version || item.size() < 4) continue;
      std::uint32_t table = 0;
      for (int i = 0; i < 4; ++i) table = (table << 8) | static_cast<unsigned char>(item[i]);
      auto it = definitions_.find(table);
      if (it != definitions_.end() && it->second > *version) {
        ++definition_refusals;
        throw storage::DefinitionChanged("the table's definition changed");
      }
    }
    for (const auto& e : batch.expectations()) {
      if (inner().get(e.key) != e.value) throw storage::WriteConflict("the key changed");
    }
    inner().write(numbered(batch));
  }
  bool shared() const override { return true; }
  void set_definition(std::uint32_t table, std::uint64_t version, bool) override {
    std::lock_guard lock(mutex_);
    std::uint64_t& set = definitions_[table];
    set = std::max(set, version);
  }

  // Stream records are numbered here, as a shared storage does: one partition, whose
  // records are all written when their batch's write returns.
  // (Or the partitions a test sets; `before_partitions`, set by a test, runs once first:
  // what another front end does between a reader's earlier reads and this one.)
  std::vector<StreamPartition> stream_partitions(std::uint32_t) override {
    if (before_partitions) std::exchange(before_partitions, nullptr)();
    std::lock_guard lock(mutex_);
    if (partitions) return *partitions;
    return {{0, last_number_}};
  }
  std::uint64_t stream_horizon(std::uint32_t, std::uint64_t,
                               std::optional<std::uint64_t>) override {
    std::lock_guard lock(mutex_);
    return last_number_;
  }

  // The splits whose shards no front end has split yet, as a test sets them.
  std::vector<UnnotedSplit> unnoted_splits() override {
    std::lock_guard lock(mutex_);
    return unnoted;
  }
  void split_noted(std::uint32_t table, std::uint64_t token) override {
    std::lock_guard lock(mutex_);
    std::erase_if(unnoted,
                  [&](const UnnotedSplit& s) { return s.table == table && s.token == token; });
  }

  std::vector<UnnotedSplit> unnoted;
  std::optional<std::vector<StreamPartition>> partitions;
  std::function<void()> before_partitions;
  std::function<void()> interleave;
  bool conflict_once = false;
  bool failing = false;
  int writes = 0;
  int definition_refusals = 0;

 private:
  // `batch` with its unnumbered stream records ([table][3][u64 0][u64 token]) numbered.
  storage::WriteBatch numbered(const storage::WriteBatch& batch) {
    storage::WriteBatch out;
    std::uint32_t group = storage::WriteBatch::kNoGroup;
    for (const storage::WriteBatch::Op& op : batch.ops()) {
      if (op.group != group && op.group != storage::WriteBatch::kNoGroup) {
        out.partition(batch.groups()[op.group]);
      }
      group = op.group;
      std::string key = op.key;
      if (key.size() == 21 && key[0] == 0 && key[4] == 3 &&
          key.substr(5, 8) == std::string(8, '\0')) {
        const std::uint64_t number = ++last_number_;
        for (int i = 0; i < 8; ++i) key[5 + i] = static_cast<char>(number >> (8 * (7 - i)));
      }
      using Type = storage::WriteBatch::OpType;
      if (op.type == Type::kAddCounter) {
        op.maintenance ? out.maintain_add_counter(key, op.delta) : out.add_counter(key, op.delta);
      } else if (op.type == Type::kDelete) {
        op.maintenance ? out.maintain_del(key) : out.del(key);
      } else {
        op.maintenance ? out.maintain_put(key, op.value) : out.put(key, op.value);
      }
    }
    return out;
  }

  std::mutex mutex_;
  std::uint64_t last_number_ = 0;
  std::map<std::uint32_t, std::uint64_t> definitions_;
};

}  // namespace kumo::engine
