// A cache of parses keyed by (kind, text), so that a hot request does not parse its text
// again: what the expression cache (cache.h) and PartiQL's statement cache are made of.
// Parses are immutable and shared. Lookups go through a small per-thread cache first, then a
// sharded map behind one mutex per shard. Errors are not cached.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include "model/mutex.h"

namespace kumo::expr {

// `Kinds` kinds of text, numbered 0 to Kinds - 1, each with its own namespace of texts.
template <typename Parsed, std::size_t Kinds>
class ParseCache {
 public:
  // Holds at most about `capacity` parses; beyond that, inserting drops an arbitrary older
  // entry of the same shard.
  explicit ParseCache(std::size_t capacity)
      : per_shard_(std::max<std::size_t>(1, capacity / kShards)) {}

  // The parse of `text` as `kind`, from the cache or made now by `parse(text)`, which
  // returns a std::shared_ptr<const Parsed> or throws (the error is not cached).
  // Thread-safe; `parse` runs outside every lock.
  template <typename Parse>
  std::shared_ptr<const Parsed> get(std::size_t kind, std::string_view text, const Parse& parse) {
    const std::size_t hash = Hash{}(text);
    LocalSlot& local = local_slots()[(hash + kind * 0x9E3779B9u) % kLocalSlots];
    if (local.owner == this && local.kind == kind && local.text == text) return local.parsed;
    std::shared_ptr<const Parsed> parsed = get_shared(hash, kind, text, parse);
    local.owner = this;
    local.kind = kind;
    local.text.assign(text);
    local.parsed = parsed;
    return parsed;
  }

  std::size_t size() const {
    std::size_t n = 0;
    for (const Shard& shard : shards_) {
      MutexLock lock(shard.mutex);
      n += shard.size;
    }
    return n;
  }

  void clear() {
    for (Shard& shard : shards_) {
      MutexLock lock(shard.mutex);
      for (Map& m : shard.by_kind) m.clear();
      shard.size = 0;
    }
  }

 private:
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  using Map = std::unordered_map<std::string, std::shared_ptr<const Parsed>, Hash, std::equal_to<>>;
  static constexpr std::size_t kShards = 16;
  struct Shard {
    mutable Mutex mutex;
    std::array<Map, Kinds> by_kind KUMO_GUARDED_BY(mutex);
    std::size_t size KUMO_GUARDED_BY(mutex) = 0;
  };

  // A small direct-mapped cache per thread in front of the shared one: a hot text is found
  // without touching any lock shared between threads. Entries are pure functions of (kind,
  // text), so a stale one is still correct.
  struct LocalSlot {
    const ParseCache* owner = nullptr;
    std::size_t kind = 0;
    std::string text;
    std::shared_ptr<const Parsed> parsed;
  };
  static constexpr std::size_t kLocalSlots = 64;
  static std::array<LocalSlot, kLocalSlots>& local_slots() {
    thread_local std::array<LocalSlot, kLocalSlots> slots;
    return slots;
  }

  template <typename Parse>
  std::shared_ptr<const Parsed> get_shared(std::size_t hash, std::size_t kind,
                                           std::string_view text, const Parse& parse) {
    Shard& shard = shards_[hash % kShards];
    {
      MutexLock lock(shard.mutex);
      const Map& map = shard.by_kind[kind];
      if (auto it = map.find(text); it != map.end()) return it->second;
    }
    // Parse outside the lock; a concurrent parse of the same text is harmless (the first one
    // inserted wins and both results are equivalent).
    std::shared_ptr<const Parsed> parsed = parse(text);
    MutexLock lock(shard.mutex);
    Map& map = shard.by_kind[kind];
    if (auto it = map.find(text); it != map.end()) return it->second;
    if (shard.size >= per_shard_) {
      for (Map& m : shard.by_kind) {
        if (!m.empty()) {
          m.erase(m.begin());
          --shard.size;
          break;
        }
      }
    }
    map.emplace(std::string(text), parsed);
    ++shard.size;
    return parsed;
  }

  std::size_t per_shard_;
  std::array<Shard, kShards> shards_;
};

}  // namespace kumo::expr
