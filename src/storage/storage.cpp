#include "storage/storage.h"

#include <stdexcept>
#include <utility>

#include "storage/counter.h"

namespace kumo::storage {

void Storage::erase_range(const std::string& lower, const std::string& upper) {
  constexpr std::size_t kBatchKeys = 1000;
  for (;;) {
    WriteBatch batch;
    {
      auto it = iterator(lower, upper);
      for (it->seek_to_first(); it->valid() && batch.ops().size() < kBatchKeys; it->next()) {
        batch.del(std::string(it->key()));
      }
    }
    if (batch.empty()) return;
    write(batch);
  }
}

std::int64_t Storage::get_counter(std::string_view key) {
  std::optional<std::string> value = get(key, nullptr);
  if (!value) return 0;
  std::int64_t v = 0;
  if (!decode_counter(*value, &v)) throw StorageError("counter value is not 8 bytes");
  return v;
}

void Storage::visit_range(std::string lower, std::string upper, bool forward,
                          const EntryVisitor& visit, const Snapshot* snapshot) {
  auto it = iterator(std::move(lower), std::move(upper), snapshot);
  if (forward) {
    it->seek_to_first();
  } else {
    it->seek_to_last();
  }
  for (; it->valid(); forward ? it->next() : it->prev()) {
    if (!visit(it->key(), it->value())) return;
  }
}

std::vector<Storage::StreamPartition> Storage::stream_partitions(std::uint32_t table) {
  (void)table;
  throw std::logic_error("stream records are numbered by the storage only when it is shared");
}

std::uint64_t Storage::stream_horizon(std::uint32_t table, std::uint64_t first_token,
                                      std::optional<std::uint64_t> end_token) {
  (void)table;
  (void)first_token;
  (void)end_token;
  throw std::logic_error("stream records are numbered by the storage only when it is shared");
}

std::unique_ptr<Iterator> Storage::stream_records(std::uint32_t table, std::uint64_t first_token,
                                                  std::string lower, std::string upper) {
  (void)table;
  (void)first_token;
  return iterator(std::move(lower), std::move(upper));
}

void Storage::erase_stream_records(std::uint32_t table, std::uint64_t first_token,
                                   const std::string& lower, const std::string& upper) {
  (void)table;
  (void)first_token;
  erase_range(lower, upper);
}

}  // namespace kumo::storage
