// The `kumo serve` command line: its options with their defaults, and the translation of
// DynamoDB Local's single-dash flags so that scripts written for it run unchanged.
#pragma once

#include <CLI/App.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "capacity/options.h"
#include "model/clock.h"
#include "storage/backends.h"

namespace kumo::cli {

struct ServeOptions {
  // TCP port to listen on; 0 picks a free one.
  std::uint16_t port = 8000;
  // Address to listen on; the default keeps the server reachable only from this machine.
  std::string bind = "127.0.0.1";
  // True when --bind was given (the start-up log then says nothing about reachability).
  bool bind_given = false;
  // Directory of the RocksDB database.
  std::string data_dir = "./kumo-data";
  // Keep everything in memory instead (nothing is written to disk).
  bool in_memory = false;
  // Keep everything in this pool of a Ceph RADOS cluster instead, whose monitors and
  // authentication `ceph_conf` names (empty: Ceph's default search).
  std::string rados_pool;
  std::string ceph_conf;
  // Prefix of the RADOS namespaces this deployment's objects go to (several deployments
  // share a pool with different ones).
  std::string rados_namespace;
  // Keys (items and index entries) past which a partition's RADOS object splits in two.
  std::uint64_t rados_partition_keys = storage::kDefaultRadosPartitionKeys;
  unsigned rados_lease_seconds = storage::kDefaultRadosLeaseSeconds;
  // File of access keys whose signatures are verified; empty: any well-formed signature.
  std::string credentials_file;
  // Region the server names in ARNs (and in the health check of a request without Host).
  std::string region = "us-east-1";
  // I/O threads; 0 means one per core.
  unsigned threads = 0;
  // fsync the write-ahead log on every write.
  bool sync = false;
  // Log one line per request.
  bool log_requests = false;
  // MiB of request bodies all connections together may hold at once; past it new requests
  // are refused with ThrottlingException.
  std::uint64_t body_budget_mb = 256;
  // On a data directory: MiB of RocksDB's block cache (data blocks, index and filter
  // partitions), MiB of each of its two memtables, and MiB/s that flushes and compactions
  // may write (0: no limit). Resident memory stays within about the cache plus the two
  // memtables whatever the amount of data.
  std::uint64_t block_cache_mb = 128;
  std::uint64_t write_buffer_mb = 32;
  std::uint64_t compaction_rate_mb = 64;
  // Size at which an item collection (a partition of a table with LSIs) is full; DynamoDB's
  // 10 GB by default. Lower it to see ItemCollectionSizeLimitExceededException early.
  std::uint64_t item_collection_limit = std::uint64_t{10} << 30;
  // CreateBackup copies tables up to this size before it answers, larger ones in the
  // background.
  std::uint64_t backup_sync_bytes = std::uint64_t{1} << 20;
  // Seconds LatestRestorableDateTime stays behind the current time (DynamoDB: about 5
  // minutes; tests use 0).
  double pitr_lag = 300;
  // The local S3 of exports and imports (a bucket is <export_root>/<bucket>); empty:
  // <data-dir>/s3, or ./kumo-s3 with --in-memory or --rados (export_root_of).
  std::string export_root;
  // Data files per export (one per range of the table's token space).
  std::size_t export_files = 4;
  // Seconds between two passes of the TTL reaper.
  double ttl_interval = 1.0;
  // Minimum seconds between two UpdateTimeToLive calls on one table (0: none).
  double ttl_cooldown = 0;
  // Seconds stream records are kept (DynamoDB: 24 hours).
  double stream_retention = 86400;
  // Seconds a shard iterator stays valid (DynamoDB: 15 minutes).
  double shard_iterator_lifetime = 900;

  // Capacity (docs/capacity.md): "off", "report" or "enforce".
  std::string capacity_mode = "report";
  // The engine's clock: "wall", or "manual" (moved only by POST /clock/advance), starting at
  // clock_start when given, else at the wall time rounded down to a whole second.
  std::string clock = "wall";
  std::optional<std::int64_t> clock_start;
  // The admin listener; none without a port (0 picks a free one).
  std::optional<std::uint16_t> admin_port;
  std::string admin_bind = "127.0.0.1";
  // Size and heat splits: "on" or "off".
  std::string splits = "on";
  // The exception of an account-limit throttle: "ThrottlingException" or
  // "RequestLimitExceeded".
  std::string account_limit_exception = "ThrottlingException";
  // The other capacity figures, set by their flags as they are (mode, splits, the
  // account-limit exception and the region come from the members above).
  capacity::CapacityOptions capacity;
};

// The capacity options the flags describe.
capacity::CapacityOptions capacity_options(const ServeOptions& options);
// The back end the options choose, and its settings.
storage::BackendChoice backend_choice(const ServeOptions& options);

// The engine's clock as the flags describe it (a ManualClock when --clock manual).
std::unique_ptr<Clock> make_clock(const ServeOptions& options);

// Adds the `serve` subcommand to `app`; parsing fills `options`. Returns the subcommand.
CLI::App* add_serve_command(CLI::App& app, ServeOptions& options);

// Rewrites DynamoDB Local's flags in `args` (the arguments after the program name):
// -port N → --port N, -inMemory → --in-memory, -dbPath DIR → --data-dir DIR, -help →
// --help; -sharedDb, -cors X, -delayTransientStatuses, -optimizeDbBeforeStartup and
// -disableTelemetry are dropped (they mean nothing here). When such a flag was seen and no
// subcommand was named, `serve` is put in front, as DynamoDB Local has no subcommands.
std::vector<std::string> translate_dynamodb_local_args(const std::vector<std::string>& args);

// The directory exports write to and imports read from, --export-root or its default.
std::string export_root_of(const ServeOptions& options);

}  // namespace kumo::cli
