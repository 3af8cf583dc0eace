#include "capacity/key_log.h"

#include <algorithm>
#include <cstring>

namespace kumo::capacity {
namespace {

// What a ring holds per access: this header, then the partition and sort key bytes, the
// whole padded to 8 bytes.
struct Header {
  std::uint64_t table;
  std::uint64_t token;
  Milli units;
  std::uint32_t index_id, partition;
  std::uint16_t pk_size, sk_size;
  Dir dir;
  std::uint8_t flags;
};

constexpr std::size_t kMaxKey = 0xFFFF;

std::size_t padded(std::size_t n) {
  return (n + 7) & ~std::size_t{7};
}

std::atomic<std::uint64_t> next_log_id{1};

}  // namespace

void KeyRing::copy_in(std::uint64_t at, const void* data, std::size_t n) {
  if (n == 0) return;  // an empty key: `data` may be null, which memcpy never accepts
  const std::size_t offset = at % kBytes;
  const std::size_t first = std::min(n, kBytes - offset);
  std::memcpy(buffer_.get() + offset, data, first);
  if (n > first) std::memcpy(buffer_.get(), static_cast<const char*>(data) + first, n - first);
}

void KeyRing::copy_out(std::uint64_t at, void* data, std::size_t n) const {
  if (n == 0) return;
  const std::size_t offset = at % kBytes;
  const std::size_t first = std::min(n, kBytes - offset);
  std::memcpy(data, buffer_.get() + offset, first);
  if (n > first) std::memcpy(static_cast<char*>(data) + first, buffer_.get(), n - first);
}

bool KeyRing::push(const KeyEvent& e) {
  const std::size_t pk = std::min(e.partition_key.size(), kMaxKey);
  const std::size_t sk = std::min(e.sort_key.size(), kMaxKey);
  const std::size_t size = padded(sizeof(Header) + pk + sk);
  const std::uint64_t head = head_.load(std::memory_order_relaxed);
  if (head + size - tail_.load(std::memory_order_acquire) > kBytes) {
    drops_.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  const Header h{e.table,
                 e.token,
                 e.units,
                 e.index_id,
                 e.partition,
                 static_cast<std::uint16_t>(pk),
                 static_cast<std::uint16_t>(sk),
                 e.dir,
                 e.flags};
  copy_in(head, &h, sizeof h);
  copy_in(head + sizeof h, e.partition_key.data(), pk);
  copy_in(head + sizeof h + pk, e.sort_key.data(), sk);
  head_.store(head + size, std::memory_order_release);
  return true;
}

std::uint64_t KeyRing::read(std::uint64_t at, KeyEvent* e, std::string* scratch) const {
  Header h;
  copy_out(at, &h, sizeof h);
  scratch->resize(std::size_t{h.pk_size} + h.sk_size);
  copy_out(at + sizeof h, scratch->data(), scratch->size());
  *e = {h.table,
        h.index_id,
        h.partition,
        h.token,
        h.units,
        h.dir,
        h.flags,
        std::string_view(*scratch).substr(0, h.pk_size),
        std::string_view(*scratch).substr(h.pk_size)};
  return at + padded(sizeof h + h.pk_size + h.sk_size);
}

KeyLog::KeyLog() : id_(next_log_id.fetch_add(1, std::memory_order_relaxed)) {}

KeyRing* KeyLog::own_ring() {
  // Most processes have one manager: one compare finds the ring.
  thread_local std::uint64_t cached_id = 0;
  thread_local KeyRing* cached = nullptr;
  thread_local std::vector<std::pair<std::uint64_t, KeyRing*>> others;
  if (cached_id == id_) return cached;
  KeyRing* ring = nullptr;
  for (const auto& [id, r] : others) {
    if (id == id_) ring = r;
  }
  if (ring == nullptr) {
    std::lock_guard lock(mu_);
    rings_.push_back(std::make_unique<KeyRing>());
    ring = rings_.back().get();
    others.emplace_back(id_, ring);
  }
  cached_id = id_;
  cached = ring;
  return ring;
}

void KeyLog::push(const KeyEvent& event) {
  own_ring()->push(event);
}

std::uint64_t KeyLog::drops() const {
  std::lock_guard lock(mu_);
  std::uint64_t total = 0;
  for (const auto& ring : rings_) total += ring->drops();
  return total;
}

}  // namespace kumo::capacity
