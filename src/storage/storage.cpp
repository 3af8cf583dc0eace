#include "storage/storage.h"

namespace kumo::storage {

void erase_range(Storage& storage, const std::string& lower, const std::string& upper) {
  constexpr std::size_t kBatchKeys = 1000;
  for (;;) {
    WriteBatch batch;
    {
      auto it = storage.iterator(lower, upper);
      for (it->seek_to_first(); it->valid() && batch.ops().size() < kBatchKeys; it->next()) {
        batch.del(std::string(it->key()));
      }
    }
    if (batch.empty()) return;
    storage.write(batch);
  }
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

}  // namespace kumo::storage
