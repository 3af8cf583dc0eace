// The back ends a server can run on, each chosen by one option of `kumo serve`:
//   --data-dir DIR             RocksDB on this machine (the default, ./kumo-data)
//   --in-memory                memory only; nothing is written
//   --rados POOL --ceph-conf F a Ceph RADOS cluster's pool (when built with librados);
//                              --rados-namespace NS keeps several deployments in one pool
// main() asks for the chosen one and opens it; adding a back end adds a row here.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "storage/storage.h"

namespace kumo::storage {

// Ceph warns past 200,000 keys in one object; a partition splits well before.
constexpr std::uint64_t kDefaultRadosPartitionKeys = 100000;
// Seconds a RADOS front end's lease lasts unless renewed; past it, the other front ends
// finish what it left (docs/scale-out.md, "Leases").
// Longer than the time a Ceph cluster takes to mark a failed OSD down (20 s of heartbeat
// grace by default): a renewal waiting on a placement group of that OSD must not outlast
// the lease.
constexpr unsigned kDefaultRadosLeaseSeconds = 30;

// What the options say about storage.
struct BackendChoice {
  std::string data_dir = "./kumo-data";
  bool in_memory = false;
  std::string rados_pool;       // non-empty: the RADOS back end
  std::string ceph_conf;        // the cluster's ceph.conf (monitors, authentication)
  std::string rados_namespace;  // prefix of the RADOS namespaces this deployment uses
  // Keys (items and index entries) past which a partition's object splits; 0: never.
  std::uint64_t rados_partition_keys = kDefaultRadosPartitionKeys;
  unsigned rados_lease_seconds = kDefaultRadosLeaseSeconds;
  unsigned io_threads = 1;  // the server's I/O threads (RocksDB tunes its allocator by them)
  Options options;          // RocksDB's tuning; options.path is data_dir
};

struct Backend {
  const char* name;  // "rocksdb", "memory", "rados"
  bool (*chosen)(const BackendChoice& choice);
  std::unique_ptr<Storage> (*open)(const BackendChoice& choice);
  // Where the data is, for the start-up log: "data: ./kumo-data", "in memory", ...
  std::string (*where)(const BackendChoice& choice);
  // What failed to open, for the error: "data directory ./kumo-data", ...
  std::string (*what)(const BackendChoice& choice);
  // I/O threads per core when --threads is not given. An I/O thread waits for the back
  // end during each request: on a remote store it waits for the network most of the time,
  // so more threads keep more requests in flight.
  unsigned io_threads_per_core;
};

std::span<const Backend> backends();
// The back end the choice names (the first row whose `chosen` holds; RocksDB otherwise).
const Backend& chosen_backend(const BackendChoice& choice);

// Opens the RADOS back end (storage/rados/), loaded as the module kumo-rados.so from
// beside the executable; throws StorageError when Kumo was built without librados.
std::unique_ptr<Storage> open_rados(const std::string& pool, const std::string& ceph_conf,
                                    const std::string& prefix, std::uint64_t partition_keys,
                                    unsigned lease_seconds = kDefaultRadosLeaseSeconds);

}  // namespace kumo::storage
