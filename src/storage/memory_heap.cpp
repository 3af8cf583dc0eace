#include "storage/memory_heap.h"

#include <sys/mman.h>

#include <new>

namespace kumo::storage::memory {

EntryHeap::~EntryHeap() {
  for (void* segment : segments_) ::munmap(segment, kSegmentSize);
}

EntryHeap::Page* EntryHeap::new_page(std::size_t size) {
  char* memory;
  if (empty_ != nullptr) {
    memory = reinterpret_cast<char*>(empty_);
    empty_ = empty_->next;
  } else {
    if (next_page_ == segment_end_) add_segment();
    memory = next_page_;
    next_page_ += kPageSize;
  }
  auto* page = new (memory) Page;
  page->block_size = static_cast<std::uint32_t>(size);
  page->bump = memory + kPageHeader;
  ASAN_POISON_MEMORY_REGION(page->bump, kPageSize - kPageHeader);
  return page;
}

void EntryHeap::add_segment() {
  const std::size_t mapped = kSegmentSize + kPageSize;
  void* memory =
      ::mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED) throw std::bad_alloc();
  const auto start = reinterpret_cast<std::uintptr_t>(memory);
  const std::uintptr_t aligned = (start + kPageSize - 1) & ~(kPageSize - 1);
  if (aligned != start) ::munmap(memory, aligned - start);
  if (aligned + kSegmentSize != start + mapped) {
    ::munmap(reinterpret_cast<void*>(aligned + kSegmentSize),
             start + mapped - aligned - kSegmentSize);
  }
  segments_.push_back(reinterpret_cast<void*>(aligned));
  next_page_ = reinterpret_cast<char*>(aligned);
  segment_end_ = next_page_ + kSegmentSize;
}

void EntryHeap::give_back(Page* page) {
  ::madvise(reinterpret_cast<char*>(page) + kSystemPage, kPageSize - kSystemPage, MADV_DONTNEED);
  page->block_size = 0;
  page->next = empty_;
  empty_ = page;
}

}  // namespace kumo::storage::memory
