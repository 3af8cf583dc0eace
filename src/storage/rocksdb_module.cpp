// open_rocksdb: loads the RocksDB back end, built as the module kumo-rocksdb.so next to the
// executable, on first use. RocksDB is most of the code a server would otherwise map and
// initialize at start-up; a server in memory never needs it (bench/README.md, start-up and
// idle memory).
#include <dlfcn.h>

#include <filesystem>
#include <string>

#include "storage/rocksdb/module.h"
#include "storage/storage.h"

namespace kumo::storage {
namespace {

using OpenFunction = decltype(&kumo_open_rocksdb);

[[noreturn]] void throw_storage_error(const char* message) {
  throw StorageError(message);
}

// Where the module is: beside the running executable.
std::filesystem::path module_path() {
  std::error_code error;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error) throw StorageError("cannot find the kumo executable: " + error.message());
  return exe.parent_path() / "kumo-rocksdb.so";
}

OpenFunction load() {
  const std::filesystem::path path = module_path();
  // Never unloaded: the storages it makes live until the process ends.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    // dlerror() names the file.
    throw StorageError(std::string("cannot load the RocksDB back end (kumo-rocksdb.so, built "
                                   "with kumo, belongs beside it): ") +
                       dlerror());
  }
  auto open = reinterpret_cast<OpenFunction>(dlsym(handle, "kumo_open_rocksdb"));
  if (open == nullptr) throw StorageError(path.string() + " is not Kumo's RocksDB back end");
  return open;
}

}  // namespace

std::unique_ptr<Storage> open_rocksdb(const Options& options) {
  // Loaded once; a failed load throws and is tried again by the next call.
  static const OpenFunction open = load();
  return std::unique_ptr<Storage>(open(options, throw_storage_error));
}

}  // namespace kumo::storage
