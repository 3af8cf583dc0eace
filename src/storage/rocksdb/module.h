// The boundary between kumo and its RocksDB back end, the module kumo-rocksdb.so
// (rocksdb_storage.cpp), which storage::open_rocksdb loads (rocksdb_module.cpp).
#pragma once

#include "storage/storage.h"

extern "C" {

// Throws StorageError(message) from the executable; never returns. The module reports
// every error through it rather than throwing: kumo has its own copy of the C++ runtime,
// the module the shared one, and an exception must be thrown and caught by the same one.
using kumo_rocksdb_fail_function = void (*)(const char* message);

// Opens (creating if needed) the database at options.path. Errors, in opening and in any
// later call on the storage, go through `fail`. The caller owns the result.
kumo::storage::Storage* kumo_open_rocksdb(const kumo::storage::Options& options,
                                          kumo_rocksdb_fail_function fail);
}
