// Back ends whose libraries are large (RocksDB, librados) are built as modules beside the
// executable and loaded the first time they are opened: a server that never uses one
// never maps or initialises it (docs/storage.md).
#pragma once

namespace kumo::storage {

// Loads `file` from the directory of the running executable and returns its `symbol`;
// throws StorageError naming the file and `what` (the back end) when either is missing.
// A module is never unloaded: the storages it makes live until the process ends.
void* load_module_symbol(const char* file, const char* symbol, const char* what);

// Throws StorageError(message). Modules report failures through it: they use the shared
// C++ runtime and kumo its own, and an exception must be thrown and caught by one runtime.
[[noreturn]] void throw_storage_error(const char* message);
// Throws WriteConflict(message), likewise.
[[noreturn]] void throw_write_conflict(const char* message);
// Throws TransactionConflict naming the held keys: `keys` holds each in hexadecimal,
// separated by spaces.
[[noreturn]] void throw_transaction_conflict(const char* keys);
// Throws TableGone(message), likewise.
[[noreturn]] void throw_table_gone(const char* message);
// Throws DefinitionChanged(message), likewise.
[[noreturn]] void throw_definition_changed(const char* message);

}  // namespace kumo::storage
