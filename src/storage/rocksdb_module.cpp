// open_rocksdb: loads the RocksDB back end, built as the module kumo-rocksdb.so next to the
// executable, on first use. RocksDB is most of the code a server would otherwise map and
// initialize at start-up; a server in memory never needs it (bench/README.md, start-up and
// idle memory).
#include "storage/module_loader.h"
#include "storage/rocksdb/module.h"
#include "storage/storage.h"

namespace kumo::storage {

std::unique_ptr<Storage> open_rocksdb(const Options& options) {
  using OpenFunction = decltype(&kumo_open_rocksdb);
  // Loaded once; a failed load throws and is tried again by the next call.
  static const auto open = reinterpret_cast<OpenFunction>(
      load_module_symbol("kumo-rocksdb.so", "kumo_open_rocksdb", "RocksDB"));
  return std::unique_ptr<Storage>(open(options, throw_storage_error));
}

}  // namespace kumo::storage
