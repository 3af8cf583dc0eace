#include "storage/module_loader.h"

#include <dlfcn.h>

#include <filesystem>
#include <string>
#include <vector>

#include "storage/storage.h"

namespace kumo::storage {

void throw_storage_error(const char* message) {
  throw StorageError(message);
}

void throw_write_conflict(const char* message) {
  throw WriteConflict(message);
}

void throw_transaction_conflict(const char* keys) {
  // The held keys, each in hexadecimal, separated by spaces.
  std::vector<std::string> held;
  std::string key;
  auto digit = [](char c) { return c <= '9' ? c - '0' : c - 'a' + 10; };
  for (const char* at = keys; *at != '\0'; ++at) {
    if (*at == ' ') {
      held.push_back(std::move(key));
      key.clear();
    } else if (at[1] != '\0' && at[1] != ' ') {
      key.push_back(static_cast<char>(digit(at[0]) * 16 + digit(at[1])));
      ++at;
    }
  }
  if (!key.empty()) held.push_back(std::move(key));
  throw TransactionConflict("a transaction in progress holds the item", std::move(held));
}

void throw_table_gone(const char* message) {
  throw TableGone(message);
}

void throw_definition_changed(const char* message) {
  throw DefinitionChanged(message);
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
