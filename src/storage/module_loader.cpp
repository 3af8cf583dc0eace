#include "storage/module_loader.h"

#include <dlfcn.h>

#include <filesystem>
#include <string>

#include "storage/storage.h"

namespace kumo::storage {

void throw_storage_error(const char* message) {
  throw StorageError(message);
}

void throw_write_conflict(const char* message) {
  throw WriteConflict(message);
}

void throw_table_gone(const char* message) {
  throw TableGone(message);
}

void* load_module_symbol(const char* file, const char* symbol, const char* what) {
  std::error_code error;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error) throw StorageError("cannot find the kumo executable: " + error.message());
  const std::filesystem::path path = exe.parent_path() / file;
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    // dlerror() names the file.
    throw StorageError(std::string("cannot load the ") + what + " back end (" + file +
                       ", built with kumo, belongs beside it): " + dlerror());
  }
  void* found = dlsym(handle, symbol);
  if (found == nullptr) throw StorageError(path.string() + " is not Kumo's " + what + " back end");
  return found;
}

}  // namespace kumo::storage
