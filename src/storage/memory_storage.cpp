// The in-memory back end (--in-memory, tests). The entry layout and the two indexes are in
// memory_index.h, the entries' allocator in memory_heap.h.
//
// Design: a multi-version ordered store, laid out for few bytes per key beyond the key and
// value themselves. Every committed batch gets the next sequence number. Each version of a
// key (sequence, value or tombstone) is one Entry: a 16-byte header followed by the key
// bytes and the value bytes, in one block of the store's own EntryHeap. A snapshot is just
// a sequence number: reading at s picks the newest version with sequence <= s. Iterators
// take such a sequence too, so a scan is a consistent view even while writers go on.
//
// Two indexes hold the newest version of every key:
// - `tree_`, a B-tree of (first 8 key bytes, Entry*) ordered by key, for walks and seeks.
//   The leading bytes kept in the element decide most comparisons of a search without
//   loading the entry; a node holds 15 elements, so a search is a few nodes deep.
// - `index_`, a hash set of Entry* looked up by key, for every point read and write: a
//   search of the tree is one dependent cache miss or more per level, a probe of the hash
//   set one or two.
// Overwriting a key that no reader holds rewrites its entry in place when the new value
// fits the block (counters always do), so neither index changes; otherwise the new entry
// replaces the old one's pointer in both. 1,000,000 items of ~110 bytes (key and value)
// take about 70 bytes each beyond that: the entry header and its block's rounding (~20),
// the tree (~22), the hash set (~19 at this size, between 9 and 19 as it grows).
//
// Older versions are kept only while a live reader may need them, linked newest to oldest
// through `older_`, a side table keyed by the newer entry (a flag in the header says
// whether an entry has one), so entries pay nothing for versions that are rarely kept.
// Live sequences are counted in a multiset; a write to a key drops that key's versions no
// live reader can still see. Cleanup is lazy: versions kept for a reader that has since
// gone away stay until the key is written again (bounded by one per reader that was live
// across a write of the key).
//
// Locking: `mu_` (shared for readers, exclusive for a whole batch) guards the indexes, the
// entries, the heap and `older_`, so no reader sees part of a batch. `live_mu_` guards the
// live-sequence multiset; it is taken inside `mu_` by writers and snapshot creation, and
// alone when a reader goes away.
#include "storage/memory_storage.h"

#include <absl/container/flat_hash_map.h>

#include <algorithm>
#include <memory>
#include <set>
#include <vector>

#include "model/mutex.h"
#include "storage/counter.h"
#include "storage/memory_index.h"
#include "storage/storage.h"

namespace kumo::storage {
namespace {

using memory::Entry;
using memory::EntryHeap;
using memory::HashEntry;
using memory::HashIndex;
using memory::prefix_of;
using memory::Tree;
using memory::TreeEntry;
using memory::TreeOrder;
using memory::TreeProbe;

// `n` elements of T, on the stack when few (the usual batch), else on the heap.
template <typename T, std::size_t kLocal>
class SmallArray {
 public:
  explicit SmallArray(std::size_t n) {
    if (n > kLocal) {
      heap_ = std::make_unique<T[]>(n);
      data_ = heap_.get();
    }
  }
  T& operator[](std::size_t i) { return data_[i]; }
  T* data() { return data_; }

 private:
  T local_[kLocal];
  std::unique_ptr<T[]> heap_;
  T* data_ = local_;
};

class MemoryStorage;

class MemorySnapshot : public Snapshot {
 public:
  MemorySnapshot(MemoryStorage* owner, std::uint64_t seq) : owner_(owner), seq_(seq) {}
  ~MemorySnapshot() override;
  MemorySnapshot(const MemorySnapshot&) = delete;
  MemorySnapshot& operator=(const MemorySnapshot&) = delete;

  const MemoryStorage* owner() const { return owner_; }
  std::uint64_t seq() const { return seq_; }

 private:
  MemoryStorage* owner_;
  std::uint64_t seq_;
};

class MemoryStorage : public Storage {
 public:
  MemoryStorage() = default;
  MemoryStorage(const MemoryStorage&) = delete;
  MemoryStorage& operator=(const MemoryStorage&) = delete;
  // The heap's pages go all at once with it: only large entries are freed one by one.
  ~MemoryStorage() override {
    for (const HashEntry& e : index_) {
      for (Entry* version = e.entry; version != nullptr;) {
        Entry* older = older_of(version);
        if (version->large()) Entry::destroy(heap_, version);
        version = older;
      }
    }
  }

  std::optional<std::string> get(std::string_view key, const Snapshot* snapshot) override {
    ReaderLock lock(mu_);
    const auto found = index_.find(key);
    if (found == index_.end()) return std::nullopt;
    const Entry* entry = snapshot ? visible(found->entry, seq_of(snapshot)) : found->entry;
    if (entry == nullptr || entry->deleted()) return std::nullopt;
    return std::string(entry->value());
  }

  void write(const WriteBatch& batch) override {
    if (batch.empty()) return;
    const std::vector<WriteBatch::Op>& ops = batch.ops();
    const std::size_t n = ops.size();
    WriterLock lock(mu_);
    // Resolve the batch into final per-key values before touching the store, so a failure
    // (a counter over a non-counter value) leaves nothing half applied. The ops are taken
    // in key order, and in batch order within a key, so each key's ops apply in turn.
    SmallArray<std::uint32_t, 16> order(n);
    for (std::size_t i = 0; i < n; ++i) order[i] = static_cast<std::uint32_t>(i);
    if (n > 1) {
      std::sort(order.data(), order.data() + n, [&](std::uint32_t a, std::uint32_t b) {
        const int c = ops[a].key.compare(ops[b].key);
        return c < 0 || (c == 0 && a < b);
      });
    }
    SmallArray<Staged, 16> staged(n);
    std::size_t keys = 0;
    for (std::size_t i = 0; i < n;) {
      Staged& s = staged[keys++];
      s.key = ops[order[i]].key;
      bool from_store = true;  // no op of the batch has set the key yet
      for (; i < n && ops[order[i]].key == s.key; ++i) {
        const WriteBatch::Op& op = ops[order[i]];
        switch (op.type) {
          case WriteBatch::OpType::kPut:
            s = {s.key, true, false, op.value, 0};
            break;
          case WriteBatch::OpType::kDelete:
            s = {s.key, false, false, {}, 0};
            break;
          case WriteBatch::OpType::kAddCounter: {
            std::int64_t base = 0;
            if (from_store) {
              const auto found = index_.find(s.key);
              if (found != index_.end() && !found->entry->deleted()) {
                base = decode(found->entry->value());
              }
            } else if (s.present) {
              base = s.counter ? s.count : decode(s.value);
            }
            // Wraps like the RocksDB merge operator instead of overflowing.
            s = {s.key,
                 true,
                 true,
                 {},
                 static_cast<std::int64_t>(static_cast<std::uint64_t>(base) +
                                           static_cast<std::uint64_t>(op.delta))};
            break;
          }
        }
        from_store = false;
      }
    }
    const std::uint64_t seq = last_seq_ + 1;
    MutexLock live_lock(live_mu_);
    for (std::size_t k = 0; k < keys; ++k) {
      const Staged& s = staged[k];
      if (s.counter) {
        const std::string encoded = encode_counter(s.count);  // fits the string's own buffer
        apply(s.key, true, encoded, seq);
      } else {
        apply(s.key, s.present, s.value, seq);
      }
    }
    last_seq_ = seq;
  }

  std::unique_ptr<Snapshot> snapshot() override {
    return std::make_unique<MemorySnapshot>(this, acquire());
  }

  std::unique_ptr<Iterator> iterator(std::string lower, std::string upper,
                                     const Snapshot* snapshot) override;

  // One shared lock for the whole walk, and nothing copied: entries change only under
  // the exclusive lock, so the views stay good while `visit` runs.
  void visit_range(std::string lower, std::string upper, bool forward, const EntryVisitor& visit,
                   const Snapshot* snapshot) override {
    if (!upper.empty() && lower >= upper) return;
    ReaderLock lock(mu_);
    const std::uint64_t seq = snapshot ? seq_of(snapshot) : last_seq_;
    const Tree& tree = tree_;
    const auto first = tree.begin();
    const auto last = tree.end();
    // One search of the tree, at the end the walk starts from: each search is several
    // cache misses in a large store, a bound check on each step is not. Each element is
    // read once: first to prefetch its entry, then, a step later, to visit it.
    if (forward) {
      const TreeProbe end(upper);
      auto it = tree.lower_bound(TreeProbe(lower));
      if (it == last) return;
      TreeEntry current = *it;
      for (;;) {
        const bool more = ++it != last;
        TreeEntry next{};
        if (more) {
          next = *it;
          prefetch(next.entry);
        }
        if (!upper.empty() && TreeOrder()(current, end) >= 0) return;
        const Entry* entry = visible(current.entry, seq);
        if (entry != nullptr && !entry->deleted() && !visit(entry->key(), entry->value())) return;
        if (!more) return;
        current = next;
      }
    } else {
      const TreeProbe start(lower);
      auto it = upper.empty() ? last : tree.lower_bound(TreeProbe(upper));
      if (it == first) return;
      TreeEntry current = *--it;
      for (;;) {
        const bool more = it != first;
        TreeEntry previous{};
        if (more) {
          previous = *--it;
          prefetch(previous.entry);
        }
        if (TreeOrder()(current, start) < 0) return;
        const Entry* entry = visible(current.entry, seq);
        if (entry != nullptr && !entry->deleted() && !visit(entry->key(), entry->value())) return;
        if (!more) return;
        current = previous;
      }
    }
  }

  // Starts loading an entry's header, key and the start of its value, so that walking a
  // range waits for them while it visits the entry before.
  static void prefetch(const Entry* entry) {
    __builtin_prefetch(entry);
    __builtin_prefetch(reinterpret_cast<const char*>(entry) + 64);
  }

  // Registers a reader at the latest committed sequence; pair with release().
  std::uint64_t acquire() {
    ReaderLock lock(mu_);
    MutexLock live_lock(live_mu_);
    live_.insert(last_seq_);
    return last_seq_;
  }

  // Registers another reader at an existing live sequence.
  void acquire_at(std::uint64_t seq) {
    MutexLock live_lock(live_mu_);
    live_.insert(seq);
  }

  void release(std::uint64_t seq) {
    MutexLock live_lock(live_mu_);
    live_.erase(live_.find(seq));
  }

  std::uint64_t seq_of(const Snapshot* snapshot) const {
    const auto* mine = dynamic_cast<const MemorySnapshot*>(snapshot);
    if (mine == nullptr || mine->owner() != this) {
      throw StorageError("snapshot belongs to another storage");
    }
    return mine->seq();
  }

  MemoryUsage usage() const {
    ReaderLock lock(mu_);
    MemoryUsage usage;
    for (const HashEntry& e : index_) {
      ++usage.keys;
      for (const Entry* version = e.entry; version != nullptr; version = older_of(version)) {
        ++usage.versions;
        usage.data_bytes += version->data_size();
      }
    }
    return usage;
  }

 private:
  friend class MemoryIterator;

  // A key's final value in a batch: a put, a deletion or a counter.
  struct Staged {
    std::string_view key;
    bool present;
    bool counter;            // the value is `count`, encoded when applied
    std::string_view value;  // present and not a counter: a view of the op's value
    std::int64_t count;
  };

  static std::int64_t decode(std::string_view bytes) {
    std::int64_t value = 0;
    if (!decode_counter(bytes, &value)) throw StorageError("counter value is not 8 bytes");
    return value;
  }

  // The version of a key, whose newest is `entry`, as of sequence `seq`; null when the key
  // did not exist then. May be a tombstone. Caller holds mu_.
  const Entry* visible(const Entry* entry, std::uint64_t seq) const KUMO_REQUIRES_SHARED(mu_) {
    while (entry != nullptr && entry->seq() > seq) entry = older_of(entry);
    return entry;
  }

  Entry* older_of(const Entry* entry) const KUMO_REQUIRES_SHARED(mu_) {
    return entry->has_older() ? older_.find(entry)->second : nullptr;
  }

  // Detaches and returns the next older version of `entry`. Caller holds mu_ exclusively.
  Entry* take_older(Entry* entry) KUMO_REQUIRES(mu_) {
    if (!entry->has_older()) return nullptr;
    const auto found = older_.find(entry);
    Entry* older = found->second;
    older_.erase(found);
    entry->set_has_older(false);
    return older;
  }

  // Links `older` behind `entry`, which has none. Caller holds mu_ exclusively.
  void link_older(Entry* entry, Entry* older) KUMO_REQUIRES(mu_) {
    if (older == nullptr) return;
    older_.emplace(entry, older);
    entry->set_has_older(true);
  }

  // Caller holds mu_ exclusively and live_mu_.
  void apply(std::string_view key, bool present, std::string_view value, std::uint64_t seq)
      KUMO_REQUIRES(mu_, live_mu_) {
    const auto found = index_.find(key);
    if (found == index_.end()) {
      // Deleting an absent key changes nothing any reader can see.
      if (present) insert(key, value, seq);
      return;
    }
    Entry* old = found->entry;
    // Every live reader is below `seq`; one at or above the old version's sequence reads it.
    const bool old_needed = !live_.empty() && *live_.rbegin() >= old->seq();
    Entry* entry = old;
    if (!old_needed && old->fits(present, value)) {
      entry->set(seq, present, value);
    } else {
      entry = Entry::make(heap_, key, present, value, seq);
      // The search compares against the old entry: it goes only once replaced.
      tree_.find(TreeProbe(key))->entry = entry;
      found->entry = entry;
      if (old_needed) {
        link_older(entry, old);
      } else {
        link_older(entry, take_older(old));
        Entry::destroy(heap_, old);
      }
    }
    prune(entry);
    if (entry->deleted() && !entry->has_older()) {
      // A tombstone no reader needs: the key goes.
      index_.erase(found);
      tree_.erase(TreeProbe(key));
      Entry::destroy(heap_, entry);
      ++tree_epoch_;
      shrink(&index_);
    }
    if (older_.empty()) shrink(&older_);
  }

  // A hash table never shrinks by itself: after most of its elements went (a table was
  // deleted; a long reader's versions were dropped), it is rebuilt at its size.
  template <typename Table>
  static void shrink(Table* table) {
    if (table->capacity() > kMinShrinkCapacity && table->size() < table->capacity() / 16) {
      table->rehash(0);
    }
  }

  // Adds a key absent from the store. Caller holds mu_ exclusively.
  void insert(std::string_view key, std::string_view value, std::uint64_t seq) KUMO_REQUIRES(mu_) {
    Entry* entry = Entry::make(heap_, key, true, value, seq);
    try {
      tree_.insert(TreeEntry{prefix_of(key), entry});
      ++tree_epoch_;
      try {
        index_.insert(HashEntry{entry});
      } catch (...) {
        tree_.erase(TreeProbe(key));
        throw;
      }
    } catch (...) {
      Entry::destroy(heap_, entry);
      throw;
    }
  }

  // Drops the older versions behind `newest` that no live reader can see: one is needed by
  // a reader at s when its seq <= s < the next newer version's seq (the newest is needed
  // by future readers). The oldest versions kept are dropped too while they are
  // tombstones: a reader older than a tombstone sees nothing there anyway. Caller holds mu_
  // exclusively and live_mu_.
  void prune(Entry* newest) KUMO_REQUIRES(mu_, live_mu_) {
    if (!newest->has_older()) return;
    Entry* kept = newest;        // the oldest version kept so far
    Entry* last_value = newest;  // the oldest version kept that is not a tombstone
    std::uint64_t next = newest->seq();
    for (Entry* version = take_older(newest); version != nullptr;) {
      Entry* older = take_older(version);
      const std::uint64_t seq = version->seq();
      const auto reader = live_.lower_bound(seq);
      if (reader != live_.end() && *reader < next) {
        link_older(kept, version);
        kept = version;
        if (!version->deleted()) last_value = version;
      } else {
        Entry::destroy(heap_, version);
      }
      next = seq;
      version = older;
    }
    for (Entry* version = take_older(last_value); version != nullptr;) {
      Entry* older = take_older(version);
      Entry::destroy(heap_, version);
      version = older;
    }
  }

  static constexpr std::size_t kMinShrinkCapacity = 4096;

  mutable SharedMutex mu_;
  EntryHeap heap_ KUMO_GUARDED_BY(mu_);  // the entries' memory
  Tree tree_ KUMO_GUARDED_BY(mu_);
  HashIndex index_ KUMO_GUARDED_BY(mu_);
  // Each entry with an older version kept for a reader → that version.
  absl::flat_hash_map<const Entry*, Entry*> older_ KUMO_GUARDED_BY(mu_);
  std::uint64_t last_seq_ KUMO_GUARDED_BY(mu_) = 0;
  // Bumped whenever an element is added to or removed from `tree_`, which moves elements
  // between nodes; iterators keep their position in the tree across calls only while it
  // is unchanged.
  std::uint64_t tree_epoch_ KUMO_GUARDED_BY(mu_) = 0;

  Mutex live_mu_;
  std::multiset<std::uint64_t> live_ KUMO_GUARDED_BY(live_mu_);
};

MemorySnapshot::~MemorySnapshot() {
  owner_->release(seq_);
}

// Walks [lower, upper) as of one sequence. The current key and value are copied out, so
// views stay good while writers change the store.
class MemoryIterator : public Iterator {
 public:
  MemoryIterator(MemoryStorage* store, std::string lower, std::string upper,
                 const Snapshot* snapshot)
      : store_(store), lower_(std::move(lower)), upper_(std::move(upper)) {
    // Register our own reader even under a caller's snapshot, so versions we walk stay
    // alive if that snapshot is released first.
    if (snapshot != nullptr) {
      seq_ = store_->seq_of(snapshot);
      store_->acquire_at(seq_);
    } else {
      seq_ = store_->acquire();
    }
  }
  ~MemoryIterator() override { store_->release(seq_); }
  MemoryIterator(const MemoryIterator&) = delete;
  MemoryIterator& operator=(const MemoryIterator&) = delete;

  void seek(std::string_view target) override {
    ReaderLock lock(store_->mu_);
    forward_from(store_->tree_.lower_bound(TreeProbe(std::max(target, std::string_view(lower_)))));
  }

  void seek_for_prev(std::string_view target) override {
    ReaderLock lock(store_->mu_);
    if (!upper_.empty() && upper_ <= target) {
      backward_from(store_->tree_.lower_bound(TreeProbe(upper_)));
    } else {
      backward_from(store_->tree_.upper_bound(TreeProbe(target)));
    }
  }

  void seek_to_first() override { seek(lower_); }

  void seek_to_last() override {
    ReaderLock lock(store_->mu_);
    backward_from(upper_.empty() ? store_->tree_.end()
                                 : store_->tree_.lower_bound(TreeProbe(upper_)));
  }

  bool valid() const override { return valid_; }

  void next() override {
    if (!valid_) return;
    ReaderLock lock(store_->mu_);
    forward_from(epoch_ == store_->tree_epoch_ ? std::next(pos_)
                                               : store_->tree_.upper_bound(TreeProbe(key_)));
  }

  void prev() override {
    if (!valid_) return;
    ReaderLock lock(store_->mu_);
    backward_from(epoch_ == store_->tree_epoch_ ? pos_
                                                : store_->tree_.lower_bound(TreeProbe(key_)));
  }

  std::string_view key() const override { return key_; }
  std::string_view value() const override { return value_; }

 private:
  // Lands on the first visible key at or after `it`.
  void forward_from(Tree::const_iterator it) KUMO_REQUIRES_SHARED(store_->mu_) {
    const TreeProbe end(upper_);
    for (; it != store_->tree_.end(); ++it) {
      if (!upper_.empty() && TreeOrder()(*it, end) >= 0) break;
      if (land(it)) return;
    }
    valid_ = false;
  }

  // Lands on the last visible key strictly before `it`.
  void backward_from(Tree::const_iterator it) KUMO_REQUIRES_SHARED(store_->mu_) {
    const TreeProbe start(lower_);
    while (it != store_->tree_.begin()) {
      --it;
      if (TreeOrder()(*it, start) < 0) break;
      if (land(it)) return;
    }
    valid_ = false;
  }

  bool land(Tree::const_iterator it) KUMO_REQUIRES_SHARED(store_->mu_) {
    const Entry* entry = store_->visible(it->entry, seq_);
    if (entry == nullptr || entry->deleted()) return false;
    key_ = entry->key();
    value_ = entry->value();
    pos_ = it;
    epoch_ = store_->tree_epoch_;
    valid_ = true;
    return true;
  }

  MemoryStorage* store_;
  const std::string lower_;
  const std::string upper_;
  std::uint64_t seq_ = 0;
  bool valid_ = false;
  std::string key_;
  std::string value_;
  Tree::const_iterator pos_;
  std::uint64_t epoch_ = 0;
};

std::unique_ptr<Iterator> MemoryStorage::iterator(std::string lower, std::string upper,
                                                  const Snapshot* snapshot) {
  return std::make_unique<MemoryIterator>(this, std::move(lower), std::move(upper), snapshot);
}

}  // namespace

std::unique_ptr<Storage> open_memory() {
  return std::make_unique<MemoryStorage>();
}

MemoryUsage memory_usage(const Storage& storage) {
  const auto* memory = dynamic_cast<const MemoryStorage*>(&storage);
  if (memory == nullptr) throw StorageError("not an in-memory store");
  return memory->usage();
}

}  // namespace kumo::storage
