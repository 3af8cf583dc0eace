// The requests the load generator sends, and how each response is judged.
//
// A workload is one function that fills in the next request, plus the data set it needs
// loaded first. Adding one means writing its make function, and a data set if none fits,
// and listing it in workloads().
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace kumo::bench {

// A small, fast generator (xoshiro256**), seeded from splitmix64 as its authors advise.
class Rng {
 public:
  explicit Rng(std::uint64_t seed);
  std::uint64_t next();
  // Uniform in [0, bound).
  std::uint64_t below(std::uint64_t bound);

 private:
  std::uint64_t s_[4];
};

// What a response must look like, besides HTTP status 200 (always required).
enum class Expect : std::uint8_t {
  kAnyBody,       // the health check; anything answered with 200
  kEmptyObject,   // "{}": a write without ReturnValues
  kItem,          // an "Item" carrying the requested key (and `fragment`, if any)
  kCount10,       // a Query page of exactly 10 items ("Count":10)
  kAllProcessed,  // a BatchWriteItem answer with no UnprocessedItems left
  kPage,          // a Query or Scan page, of any length
  kActiveTable,   // a DescribeTable answer for a table that is ACTIVE
  kRow,           // an ExecuteStatement answer of one row carrying the requested key
  kNoRows,        // an ExecuteStatement write without RETURNING: {"Items":[]}
};

// One request. Buffers are reused from request to request.
struct Operation {
  std::string_view target;  // X-Amz-Target; empty means a plain GET / (health check)
  std::string body;
  Expect expect = Expect::kAnyBody;
  std::string key;  // for kItem: the partition key value the item must carry
  // For kItem, when not empty: text the answer must also hold (the item's sort key).
  std::string fragment;
};

struct WorkloadConfig {
  std::string table = "bench";
  std::uint64_t items = 10000;   // key space: keys 0..items-1 exist after the preload
  std::size_t item_bytes = 200;  // approximate item size as DynamoDB counts it
  // Differs from one run of kumo-bench to the next, so that the ClientRequestTokens of
  // transact-put never repeat those of an earlier run against the same server.
  std::uint64_t run_nonce = 0;
  // When set, the table is created with this WarmThroughput (read and write units per
  // second), so that a server enforcing DynamoDB's limits has enough partitions and
  // on-demand throughput for the load: the benchmark then measures the cost of the
  // checks, not throttling.
  std::int64_t warm_throughput = 0;
  // When set, the table is created with its stream enabled, of this view type: every
  // write then also writes a stream record.
  std::string stream_view;
};

// A table and the items to load into it before a workload runs.
struct Dataset {
  std::string_view name;
  // Appended to --table, so data sets of different shapes never share a table.
  std::string_view table_suffix;
  // The CreateTable request body.
  std::string (*create_table)(const WorkloadConfig& config);
  // Fills `op` with the preload request number `index` (0 <= index < items).
  void (*load)(const WorkloadConfig& config, std::uint64_t index, Operation& op);
};

struct Workload {
  std::string_view name;
  std::string_view summary;
  const Dataset* dataset;  // nullptr: needs no data
  // Fills `op` with the next request, drawing keys from `rng`.
  void (*make)(const WorkloadConfig& config, Rng& rng, Operation& op);
};

// Every workload, in the order the help text lists them.
std::span<const Workload> workloads();
// The workload called `name`, or nullptr.
const Workload* find_workload(std::string_view name);

// The most PutRequests a BatchWriteItem may carry.
inline constexpr std::uint64_t kMaxBatchWrite = 25;
// Fills `op` with a BatchWriteItem of the preload requests first .. first+count-1 of
// `dataset` (count <= kMaxBatchWrite); every write must be processed.
void make_load_batch(const Dataset& dataset, const WorkloadConfig& config, std::uint64_t first,
                     std::uint64_t count, Operation& op);

// The request bodies for setting up and inspecting a table.
std::string describe_table_body(const WorkloadConfig& config);
std::string list_tables_body();
inline constexpr std::string_view kTargetPrefix = "DynamoDB_20120810.";

// Empty when `body` (received with status 200) is right for `op`; otherwise why not.
std::string_view check_body(const Operation& op, std::string_view body);

}  // namespace kumo::bench
