// The entries of the in-memory back end and the two indexes over them (memory_storage.cpp):
// one block per version of a key, a B-tree ordered by key and a hash set by key.
#pragma once

#include <absl/container/btree_set.h>
#include <absl/container/flat_hash_set.h>
#include <absl/hash/hash.h>
#include <malloc.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>
#include <string_view>

#include "storage/memory_heap.h"
#include "storage/storage.h"

namespace kumo::storage::memory {

// One version of a key: this header, then the key bytes, then the value bytes (none for a
// tombstone), in one block of the store's EntryHeap (malloc for large ones).
class Entry {
 public:
  Entry(const Entry&) = delete;
  Entry& operator=(const Entry&) = delete;

  // A new version: the value when `present`, else a tombstone.
  static Entry* make(EntryHeap& heap, std::string_view key, bool present, std::string_view value,
                     std::uint64_t seq) {
    if (key.size() > kMaxSize || value.size() > kMaxSize) {
      throw StorageError("key or value too large for the memory store");
    }
    const std::size_t size = sizeof(Entry) + key.size() + (present ? value.size() : 0);
    const bool large = size > EntryHeap::kMaxBlock;
    void* memory = large ? std::malloc(size) : heap.allocate(size);
    if (memory == nullptr) throw std::bad_alloc();
    auto* entry = new (memory) Entry(static_cast<std::uint32_t>(key.size()), large);
    std::memcpy(entry->bytes(), key.data(), key.size());
    entry->set(seq, present, value);
    return entry;
  }

  // Frees `entry`, which no index, side table or chain refers to any more.
  static void destroy(EntryHeap& heap, Entry* entry) {
    const bool large = entry->large_;
    entry->~Entry();
    if (large) {
      std::free(entry);
    } else {
      heap.release(entry);
    }
  }

  // Whether this entry's block can take `value` (or a tombstone) in place: it fits, and
  // leaves few bytes unused.
  bool fits(bool present, std::string_view value) const {
    if (!present) return true;
    const std::size_t needed = sizeof(Entry) + key_size_ + value.size();
    const std::size_t usable =
        large_ ? malloc_usable_size(const_cast<Entry*>(this)) : EntryHeap::capacity(this);
    return needed <= usable && usable - needed < kMaxSlack;
  }

  // Makes this entry the version (seq, value or tombstone) of its key; fits() was true.
  void set(std::uint64_t seq, bool present, std::string_view value) {
    seq_ = seq;
    deleted_ = !present;
    value_size_ = present ? static_cast<std::uint32_t>(value.size()) : 0;
    if (present && !value.empty()) std::memcpy(bytes() + key_size_, value.data(), value.size());
  }

  std::uint64_t seq() const { return seq_; }
  bool deleted() const { return deleted_; }
  bool has_older() const { return has_older_; }
  bool large() const { return large_; }
  void set_has_older(bool has) { has_older_ = has; }
  std::string_view key() const { return {bytes(), key_size_}; }
  std::string_view value() const { return {bytes() + key_size_, value_size_}; }
  // Bytes of key and value: what the store holds beyond its own structures.
  std::size_t data_size() const { return std::size_t{key_size_} + value_size_; }

 private:
  static constexpr std::size_t kMaxSize = std::numeric_limits<std::uint32_t>::max();
  // An overwrite in place that would leave more than this unused reallocates instead, so a
  // large value replaced by a small one gives its memory back.
  static constexpr std::size_t kMaxSlack = 64;

  Entry(std::uint32_t key_size, bool large) : large_(large), key_size_(key_size) {}
  ~Entry() = default;

  char* bytes() { return reinterpret_cast<char*>(this + 1); }
  const char* bytes() const { return reinterpret_cast<const char*>(this + 1); }

  std::uint64_t seq_ : 61 = 0;
  std::uint64_t deleted_ : 1 = 0;
  // Set while `older_` (in MemoryStorage) holds the next older version of this one.
  std::uint64_t has_older_ : 1 = 0;
  std::uint64_t large_ : 1;  // from malloc rather than the EntryHeap
  std::uint32_t key_size_;
  std::uint32_t value_size_ = 0;
};
static_assert(sizeof(Entry) == 16);

// The first 8 bytes of `key` (zeros past its end) as a number whose order is the bytes'
// order: keys whose prefixes differ compare as their prefixes do.
inline std::uint64_t prefix_of(std::string_view key) {
  std::uint64_t word = 0;
  if (key.size() >= 8) {
    std::memcpy(&word, key.data(), 8);
  } else if (!key.empty()) {
    std::memcpy(&word, key.data(), key.size());
  }
  if constexpr (std::endian::native == std::endian::little) word = __builtin_bswap64(word);
  return word;
}

// An element of the ordered index: the key's newest version and its leading bytes. The
// pointer changes in place when a new version replaces the newest: the key, so the
// element's place, stays.
struct TreeEntry {
  std::uint64_t prefix;
  mutable Entry* entry;
};
// A key looked up in the ordered index.
struct TreeProbe {
  explicit TreeProbe(std::string_view k) : prefix(prefix_of(k)), key(k) {}
  std::uint64_t prefix;
  std::string_view key;
};

// The order of two 8-byte words of keys, as loaded from memory: by their bytes in turn.
inline absl::weak_ordering word_order(std::uint64_t a, std::uint64_t b) {
  if constexpr (std::endian::native == std::endian::little) {
    a = __builtin_bswap64(a);
    b = __builtin_bswap64(b);
  }
  return a < b ? absl::weak_ordering::less : absl::weak_ordering::greater;
}

// The order of two keys whose prefixes are equal, so that the bytes both have among the
// first 8 are equal. Compares 8 bytes at a time: keys are a few dozen bytes, so this is a
// handful of steps, cheaper than a call to memcmp.
[[gnu::always_inline]] inline absl::weak_ordering compare_past_prefix(std::string_view a,
                                                                      std::string_view b) {
  const std::size_t common = std::min(a.size(), b.size());
  if (common > 8) {
    std::uint64_t x;
    std::uint64_t y;
    for (std::size_t i = 8; i + 8 < common; i += 8) {
      std::memcpy(&x, a.data() + i, 8);
      std::memcpy(&y, b.data() + i, 8);
      if (x != y) return word_order(x, y);
    }
    // The last 8 bytes both have, overlapping bytes already compared (equal).
    std::memcpy(&x, a.data() + common - 8, 8);
    std::memcpy(&y, b.data() + common - 8, 8);
    if (x != y) return word_order(x, y);
  }
  // Equal over the bytes both have (all in the prefix when one is 8 bytes or shorter).
  return a.size() < b.size()   ? absl::weak_ordering::less
         : a.size() > b.size() ? absl::weak_ordering::greater
                               : absl::weak_ordering::equivalent;
}

// Byte order of keys, three-way, so a search in a node stops at an equal key. The entry is
// loaded only when the prefixes are equal.
struct TreeOrder {
  using is_transparent = void;
  [[gnu::always_inline]] absl::weak_ordering operator()(const TreeEntry& a,
                                                        const TreeEntry& b) const {
    if (a.prefix != b.prefix) return by_prefix(a.prefix, b.prefix);
    return compare_past_prefix(a.entry->key(), b.entry->key());
  }
  [[gnu::always_inline]] absl::weak_ordering operator()(const TreeEntry& a,
                                                        const TreeProbe& b) const {
    if (a.prefix != b.prefix) return by_prefix(a.prefix, b.prefix);
    return compare_past_prefix(a.entry->key(), b.key);
  }
  [[gnu::always_inline]] absl::weak_ordering operator()(const TreeProbe& a,
                                                        const TreeEntry& b) const {
    if (a.prefix != b.prefix) return by_prefix(a.prefix, b.prefix);
    return compare_past_prefix(a.key, b.entry->key());
  }
  static absl::weak_ordering by_prefix(std::uint64_t a, std::uint64_t b) {
    return a < b ? absl::weak_ordering::less : absl::weak_ordering::greater;
  }
};
using Tree = absl::btree_set<TreeEntry, TreeOrder>;

// An element of the hash index: the key's newest version, replaced in place as the tree's.
struct HashEntry {
  mutable Entry* entry;
};
struct HashByKey {
  using is_transparent = void;
  std::size_t operator()(std::string_view key) const {
    return absl::Hash<absl::string_view>()(absl::string_view(key.data(), key.size()));
  }
  std::size_t operator()(const HashEntry& e) const { return (*this)(e.entry->key()); }
};
struct SameKey {
  using is_transparent = void;
  static std::string_view key(std::string_view key) { return key; }
  static std::string_view key(const HashEntry& e) { return e.entry->key(); }
  template <typename A, typename B>
  bool operator()(const A& a, const B& b) const {
    return key(a) == key(b);
  }
};
using HashIndex = absl::flat_hash_set<HashEntry, HashByKey, SameKey>;

}  // namespace kumo::storage::memory
