// Accesses whose keys the tick needs (Contributor Insights, heat splits, top keys, refusals,
// one request in --key-sample), copied by the request path into a ring of the calling
// thread: one writer (the thread), one reader (the tick), no lock. A full ring drops the
// access and counts the drop.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "capacity/meters.h"

namespace kumo::capacity {

struct KeyEvent {
  enum Flag : std::uint8_t {
    kRefused = 1,       // a throttle event (units 0)
    kBackpressure = 2,  // a base write refused by a GSI: counted against no key by insights
    kInsights = 4,      // Contributor Insights counts it
    kSampled = 8,       // logged only as one of --key-sample accesses
  };
  std::uint64_t table = 0;  // the table meters' serial
  std::uint32_t index_id = 0;
  std::uint32_t partition = 0;  // partition id
  std::uint64_t token = 0;
  Milli units = 0;
  Dir dir = Dir::kRead;
  std::uint8_t flags = 0;
  std::string_view partition_key, sort_key;  // encoded
};

// One thread's ring.
class KeyRing {
 public:
  static constexpr std::size_t kBytes = std::size_t{1} << 20;
  KeyRing() : buffer_(new char[kBytes]) {}
  bool push(const KeyEvent& event);
  // Calls f(const KeyEvent&) for every access pushed so far, oldest first.
  template <typename F>
  void drain(F&& f) {
    const std::uint64_t head = head_.load(std::memory_order_acquire);
    std::uint64_t tail = tail_.load(std::memory_order_relaxed);
    std::string scratch;
    while (tail < head) {
      KeyEvent event;
      tail = read(tail, &event, &scratch);
      f(static_cast<const KeyEvent&>(event));
    }
    tail_.store(tail, std::memory_order_release);
  }
  std::uint64_t drops() const { return drops_.load(std::memory_order_relaxed); }

 private:
  void copy_in(std::uint64_t at, const void* data, std::size_t n);
  void copy_out(std::uint64_t at, void* data, std::size_t n) const;
  std::uint64_t read(std::uint64_t at, KeyEvent* event, std::string* scratch) const;

  std::unique_ptr<char[]> buffer_;
  std::atomic<std::uint64_t> head_{0};  // written by the thread
  std::atomic<std::uint64_t> tail_{0};  // written by the reader
  std::atomic<std::uint64_t> drops_{0};
};

// The rings of every thread that logged keys for one manager.
class KeyLog {
 public:
  KeyLog();
  void push(const KeyEvent& event);
  template <typename F>
  void drain(F&& f) {
    std::lock_guard lock(mu_);
    for (auto& ring : rings_) ring->drain(f);
  }
  std::uint64_t drops() const;

 private:
  KeyRing* own_ring();

  const std::uint64_t id_;
  mutable std::mutex mu_;
  std::vector<std::unique_ptr<KeyRing>> rings_;
};

}  // namespace kumo::capacity
