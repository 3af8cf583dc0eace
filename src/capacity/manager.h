// CapacityManager: the meters, token buckets and partition statistics of every table and
// GSI. The engine asks it to admit each access before reading or writing, and charges it
// what the access consumed; once per second of the engine's clock it closes the second
// (rings, history, on-demand peaks, report-mode simulation, split decisions). It knows
// tables only as definitions and keys only as tokens and encoded bytes: it never touches
// storage.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "capacity/meters.h"
#include "capacity/options.h"
#include "model/clock.h"
#include "model/partition_map.h"
#include "model/table.h"

namespace kumo::capacity {

class TableMeters;     // a table's resources: the table itself and each GSI
class ResourceMeter;   // one table or GSI: its buckets, consumption and partitions
class PartitionMeter;  // one partition of a resource

// How an encoded key (after its token) is cut into partition key and sort key, for the key
// statistics: `cut` with `shape`, which describes the key (the table's or an index's).
struct KeyCutter {
  using Cut = void (*)(const void* shape, std::string_view key, std::string_view* partition_key,
                       std::string_view* sort_key);
  Cut cut = nullptr;
  const void* shape = nullptr;
};

// One access to one partition of one resource.
struct Access {
  ResourceMeter* resource = nullptr;
  std::uint64_t token = 0;  // the token of the encoded partition key (codec::token)
  Dir dir = Dir::kRead;
  // The least this access can charge: it is admitted when the bucket holds at least this
  // (0.5 for an eventually consistent read, 1 for a strongly consistent read or a write,
  // 2 in a transaction).
  Milli min = 1000;
  // The encoded partition and sort key, for the key statistics; may be empty.
  std::string_view partition_key, sort_key;
  // Or, left for the key statistics to cut only when they keep this access: the encoded key
  // after its token, and how to cut it into partition_key and sort_key.
  std::string_view key;
  KeyCutter cutter;
};

// Bytes a page read from the partition key whose token is `token`, and that key: the
// encoded key after its token of the first entry read there (empty: none), which the
// page's KeyCutter cuts for the key statistics.
struct TokenBytes {
  std::uint64_t token = 0;
  std::size_t bytes = 0;
  std::string key;
};

// What one request did, for the per-operation metrics (CloudWatch's ThrottledRequests,
// SuccessfulRequestLatency, ReturnedItemCount, ConditionalCheckFailedRequests, UserErrors,
// SystemErrors).
struct RequestOutcome {
  Operation op = Operation::kNone;
  std::int64_t latency_ns = 0;  // successful requests
  bool throttled = false;       // the request failed with a throttle (a batch: all refused)
  bool conditional_check_failed = false;
  bool user_error = false;  // any other 400
  bool system_error = false;
  std::size_t returned_items = 0;
};

// A split the per-second tick decided; the engine performs it (Engine::split_partition).
struct SplitPlan {
  std::uint32_t table_id = 0;
  std::uint32_t index_id = 0;       // 0: the table
  std::uint32_t partition = 0;      // the partition's id
  std::optional<std::uint64_t> at;  // nullopt: where its bytes reach half (a walk)
  SplitCause cause = SplitCause::kSize;
};

// An on-demand resource's previous peak, raised by the tick; the engine stores it.
struct PeakRaise {
  std::uint32_t table_id = 0;
  std::uint32_t index_id = 0;
  std::int64_t peak_read = 0, peak_write = 0;
  double raised = 0;
};

class CapacityManager {
 public:
  CapacityManager(CapacityOptions options, const Clock& clock);
  ~CapacityManager();
  CapacityManager(const CapacityManager&) = delete;
  CapacityManager& operator=(const CapacityManager&) = delete;

  const CapacityOptions& options() const { return options_; }
  const Clock& clock() const { return clock_; }
  bool enforcing() const { return options_.mode == Mode::kEnforce; }

  // Meters for a table: at CreateTable and for each table loaded at start.
  std::shared_ptr<TableMeters> attach(const TableDefinition& table);
  // After any change of the definition: throughput, billing mode, OnDemandThroughput,
  // WarmThroughput, GSIs added or removed, partition maps, Contributor Insights.
  void configure(TableMeters& meters, const TableDefinition& table);
  // The table was deleted: its meters stop being reported.
  void detach(TableMeters& meters);
  // The table's own resource (index_id 0) or one of its GSIs; null when unknown.
  static ResourceMeter* resource(TableMeters& meters, std::uint32_t index_id);

  // In enforce mode, throws the throttling ApiError (capacity::throttle_error) when the
  // access would exceed its resource's or its partition's limit, and counts the throttle
  // event. Does nothing otherwise.
  void admit(const Access& access, Operation op, bool insights);
  // Records `units` consumed by the access: meters, buckets (debited after the fact, so a
  // level may go below zero), key statistics.
  void charge(const Access& access, Milli units, Operation op, bool insights);
  // A Query or Scan page over several partitions: `units` spread over them by bytes, and
  // over the partition keys read for the key statistics (when `cutter` cuts them).
  void charge_page(ResourceMeter& resource, Dir dir, std::span<const TokenBytes> parts, Milli units,
                   Operation op, bool insights = false, KeyCutter cutter = {});
  // A committed write changed the bytes stored in the partition holding `token`.
  void add_bytes(ResourceMeter& resource, std::uint64_t token, std::int64_t delta);

  // Records a request's outcome on each table it touched (`meters` null: an error before
  // any table was known, counted only in the account's UserErrors).
  void record_request(TableMeters* meters, const RequestOutcome& outcome);

  // Closes the engine-clock second ending at `second_end_ns`.
  void tick(std::int64_t second_end_ns);
  std::vector<SplitPlan> take_split_plans();
  std::vector<PeakRaise> take_peak_raises();

  // The admin listener's JSON views (docs/capacity.md, the admin listener and kumo report):
  // /tables, /tables/{t}, /tables/{t}/partitions, /tables/{t}/top-keys,
  // /tables/{t}/history, /tables/{t}/insights and /report. `query` is the URL's query
  // string, still percent-encoded. Unknown tables and indexes answer 404, bad parameters
  // 400, /tables* under --capacity off 409, other paths 404.
  struct AdminResult {
    int status = 200;
    std::string content_type = "application/json";
    std::string body;
  };
  AdminResult admin_get(std::string_view path, std::string_view query) const;
  // Every meter in Prometheus' text format 0.0.4, CloudWatch's metric names in snake case.
  std::string metrics_text() const;
  // Where /report finds a table's item count by table id (the engine knows it); unset: null.
  // Called without the manager's lock held.
  void set_item_count_source(std::function<std::optional<std::int64_t>(std::uint32_t)> source);

  // The manager's internal state (manager_state.h).
  struct State;

 private:
  [[noreturn]] void refuse(ResourceMeter& resource, PartitionMeter* partition, const Access& access,
                           Limit limit, bool insights);
  void log_key(ResourceMeter& resource, PartitionMeter* partition, const Access& access,
               Milli units, bool refused, bool insights);
  void configure_locked(TableMeters& meters, const TableDefinition& table, bool created);
  void configure_resource(ResourceMeter& resource, const TableDefinition& table,
                          const CapacitySettings& settings, const ProvisionedThroughput& throughput,
                          bool created);
  void install(ResourceMeter& resource, const PartitionMap& map);

  CapacityOptions options_;
  const Clock& clock_;
  std::unique_ptr<State> state_;
};

// An answer of the admin listener's capacity endpoints.
using AdminResult = CapacityManager::AdminResult;

}  // namespace kumo::capacity
