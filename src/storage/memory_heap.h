// EntryHeap: the memory the in-memory back end keeps its entries in (memory_storage.cpp).
#pragma once

#include <sanitizer/asan_interface.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace kumo::storage::memory {

// Memory for entries, apart from the rest of the process's heap. Blocks of up to
// kMaxBlock bytes come from 64 KiB pages that each hold blocks of one size (a multiple of
// 8), carved from 2 MiB segments (larger entries use malloc). Compared with malloc for
// every entry: no 8-byte header per block and 8-byte instead of 16-byte rounding, and no
// holes left between entries by a request's short-lived allocations of other sizes, which
// malloc cannot give to entries (1,000,000 items of ~110 bytes: 93 → 68 bytes per item
// beyond its key and value). A page whose last block is freed gives its memory back to the
// system and can then serve any size. Not thread-safe: the store uses it under its
// exclusive lock.
class EntryHeap {
 public:
  static constexpr std::size_t kMaxBlock = 2048;

  EntryHeap() = default;
  EntryHeap(const EntryHeap&) = delete;
  EntryHeap& operator=(const EntryHeap&) = delete;
  ~EntryHeap();

  // A block of at least `size` (<= kMaxBlock) bytes, 8-byte aligned.
  void* allocate(std::size_t size) {
    size = std::max<std::size_t>((size + kGranule - 1) & ~(kGranule - 1), kMinBlock);
    Page*& available = available_[size / kGranule];
    if (available == nullptr) link(&available, new_page(size));
    Page* page = available;
    char* block;
    if (page->free != nullptr) {
      block = page->free;
      ASAN_UNPOISON_MEMORY_REGION(block, size);
      page->free = *reinterpret_cast<char**>(block);
    } else {
      block = page->bump;
      ASAN_UNPOISON_MEMORY_REGION(block, size);
      page->bump += size;
    }
    ++page->used;
    if (page->full()) unlink(&available, page);
    return block;
  }

  void release(void* pointer) {
    char* block = static_cast<char*>(pointer);
    Page* page = page_of(block);
    Page*& available = available_[page->block_size / kGranule];
    if (page->full()) link(&available, page);
    *reinterpret_cast<char**>(block) = page->free;
    page->free = block;
    ASAN_POISON_MEMORY_REGION(block, page->block_size);
    if (--page->used == 0 && (page->next != nullptr || page->prev != nullptr)) {
      // Empty, and not its size's only page (which stays, for a key written and deleted
      // over and over): its memory goes back to the system, the page to any size.
      unlink(&available, page);
      give_back(page);
    }
  }

  // The size of a block from allocate().
  static std::size_t capacity(const void* block) { return page_of(block)->block_size; }

 private:
  static constexpr std::size_t kGranule = 8;
  static constexpr std::size_t kMinBlock = 16;
  static constexpr std::size_t kPageSize = std::size_t{64} << 10;
  static constexpr std::size_t kSegmentSize = std::size_t{2} << 20;
  static constexpr std::size_t kSystemPage = 4096;

  // At the start of each page, in its first system page (never given back while the page
  // is mapped).
  struct Page {
    std::uint32_t block_size = 0;  // 0 while empty
    std::uint32_t used = 0;
    char* free = nullptr;  // freed blocks, each holding the next one's address
    char* bump = nullptr;  // blocks from here on were never used
    Page* next = nullptr;  // in its size's list of pages with room, or in the empty list
    Page* prev = nullptr;

    bool full() const {
      return free == nullptr && bump + block_size > reinterpret_cast<const char*>(this) + kPageSize;
    }
  };
  static constexpr std::size_t kPageHeader = (sizeof(Page) + 15) & ~std::size_t{15};

  static Page* page_of(const void* block) {
    return reinterpret_cast<Page*>(reinterpret_cast<std::uintptr_t>(block) & ~(kPageSize - 1));
  }

  static void link(Page** list, Page* page) {
    page->prev = nullptr;
    page->next = *list;
    if (*list != nullptr) (*list)->prev = page;
    *list = page;
  }

  static void unlink(Page** list, Page* page) {
    if (page->prev != nullptr) {
      page->prev->next = page->next;
    } else {
      *list = page->next;
    }
    if (page->next != nullptr) page->next->prev = page->prev;
    page->next = page->prev = nullptr;
  }

  // An empty page set up for blocks of `size`.
  Page* new_page(std::size_t size);
  // Maps a segment aligned to kPageSize, so a block's page is found from its address.
  void add_segment();
  // Gives an empty page's memory back to the system and keeps the page for any size.
  void give_back(Page* page);

  Page* available_[kMaxBlock / kGranule + 1] = {};  // by block size / 8
  Page* empty_ = nullptr;
  char* next_page_ = nullptr;  // pages of the last segment not handed out yet
  char* segment_end_ = nullptr;
  std::vector<void*> segments_;
};

}  // namespace kumo::storage::memory
