#include "storage/backends.h"

#include <malloc.h>

#include <array>
#include <filesystem>

namespace kumo::storage {
namespace {

std::unique_ptr<Storage> open_on_disk(const BackendChoice& choice) {
  // Resident memory stays within the configured caches only if what RocksDB frees goes
  // back to the system. glibc gives threads arenas of their own, up to eight per core, and
  // an arena keeps what its threads freed: RocksDB's flush and compaction threads, each
  // with its own, left about 12 MiB more resident after a load of 3,000,000 items than with
  // two. So: one arena per I/O thread, and one for the back end's threads. And memtables
  // are allocated in blocks of an eighth of --write-buffer-mb; glibc raises its mmap
  // threshold to the size of the largest block freed, after which the blocks come from the
  // arenas and stay resident as free space once their memtable is flushed. A fixed
  // threshold of 1 MiB keeps them mapped and returned whole: the RSS after that load fell
  // from 143 MiB to 124 MiB.
  mallopt(M_ARENA_MAX, static_cast<int>(choice.io_threads + 1));
  mallopt(M_MMAP_THRESHOLD, 1 << 20);
  std::error_code error;
  std::filesystem::create_directories(choice.data_dir, error);
  if (error) throw StorageError("cannot create " + choice.data_dir + ": " + error.message());
  Options options = choice.options;
  options.path = choice.data_dir;
  return open_rocksdb(options);
}

const std::array<Backend, 3> kBackends{{
    {"memory", [](const BackendChoice& c) { return c.in_memory; },
     [](const BackendChoice&) { return open_memory(); },
     [](const BackendChoice&) { return std::string("in memory"); },
     [](const BackendChoice&) { return std::string("the memory store"); }, 1},
    {"rados", [](const BackendChoice& c) { return !c.rados_pool.empty(); },
     [](const BackendChoice& c) {
       return open_rados(c.rados_pool, c.ceph_conf, c.rados_namespace, c.rados_partition_keys,
                         c.rados_lease_seconds);
     },
     [](const BackendChoice& c) {
       return "RADOS pool " + c.rados_pool +
              (c.rados_namespace.empty() ? "" : ", namespace " + c.rados_namespace) +
              (c.ceph_conf.empty() ? "" : " (" + c.ceph_conf + ")");
     },
     [](const BackendChoice& c) { return "RADOS pool " + c.rados_pool; }, 8},
    {"rocksdb", [](const BackendChoice&) { return true; }, open_on_disk,
     [](const BackendChoice& c) { return "data: " + c.data_dir; },
     [](const BackendChoice& c) { return "data directory " + c.data_dir; }, 1},
}};

}  // namespace

std::span<const Backend> backends() {
  return kBackends;
}

const Backend& chosen_backend(const BackendChoice& choice) {
  for (const Backend& backend : kBackends) {
    if (backend.chosen(choice)) return backend;
  }
  return kBackends.back();
}

}  // namespace kumo::storage
