#include "cli/serve_options.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <memory>
#include <optional>
#include <thread>
#include <tuple>
#include <utility>

namespace kumo::cli {
namespace {

// Width of the terminal the help is laid out for.
constexpr std::size_t kHelpWidth = 80;

// `text` broken at spaces into lines of at most `width` characters (a longer word keeps a
// line of its own), joined by '\n'.
std::string wrap(const std::string& text, std::size_t width) {
  std::string out;
  std::size_t line = 0;
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t space = std::min(text.find(' ', at), text.size());
    const std::size_t word = space - at;
    if (line > 0 && line + 1 + word > width) {
      out.push_back('\n');
      line = 0;
    } else if (line > 0) {
      out.push_back(' ');
      ++line;
    }
    out.append(text, at, word);
    line += word;
    at = space + 1;
  }
  return out;
}

// The help of `kumo serve` in two columns: each option with its value name, then its
// description wrapped to the terminal's width and, on lines of their own, its default and
// the options it cannot be given with.
class HelpFormatter : public CLI::Formatter {
 public:
  std::string make_option_opts(const CLI::Option* option) const override {
    if (option->get_type_size() == 0 || option->get_type_name().empty()) return {};
    return " " + option->get_type_name();
  }

  std::string make_option_desc(const CLI::Option* option) const override {
    std::string notes;
    if (!option->get_default_str().empty()) notes = "default: " + option->get_default_str();
    std::string excluded;
    for (const CLI::Option* other : option->get_excludes()) {
      excluded += (excluded.empty() ? "not with " : " or ") + other->get_name();
    }
    if (!excluded.empty()) notes += (notes.empty() ? "" : "; ") + excluded;
    const std::size_t width = kHelpWidth - get_column_width();
    std::string text = wrap(option->get_description(), width);
    if (!notes.empty()) text += "\n" + wrap("(" + notes + ")", width);
    return text;
  }

  std::string make_footer(const CLI::App* app) const override {
    return app->get_footer().empty() ? std::string() : wrap(app->get_footer(), kHelpWidth) + "\n";
  }
};

// The latest --clock-start: 2100-01-01, far from where nanoseconds overflow.
constexpr std::int64_t kLastClockStart = 4'102'444'800;
// The largest figure an R:W flag takes.
constexpr std::int64_t kMaxUnits = 1'000'000'000;

std::string number_text(double value) {
  std::string text = std::to_string(value);
  text.erase(text.find_last_not_of('0') + 1);
  if (text.back() == '.') text.pop_back();
  return text;
}

// A number from `min` to `max`, both included (not nan or infinite).
CLI::Validator number_range(double min, double max) {
  const std::string expected =
      "must be a number from " + number_text(min) + " to " + number_text(max);
  return CLI::Validator(
      [min, max, expected](std::string& text) -> std::string {
        double value = 0;
        if (!CLI::detail::lexical_cast(text, value) || !std::isfinite(value) || value < min ||
            value > max)
          return text + " " + expected;
        return {};
      },
      "");
}

// "R:W": two whole numbers from 1 to kMaxUnits.
std::optional<std::pair<std::int64_t, std::int64_t>> units_pair(std::string_view text) {
  const std::size_t colon = text.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  std::int64_t values[2] = {0, 0};
  const std::string_view parts[2] = {text.substr(0, colon), text.substr(colon + 1)};
  for (int i = 0; i < 2; ++i) {
    const char* end = parts[i].data() + parts[i].size();
    const auto [at, ec] = std::from_chars(parts[i].data(), end, values[i]);
    if (ec != std::errc() || at != end || values[i] < 1 || values[i] > kMaxUnits)
      return std::nullopt;
  }
  return std::make_pair(values[0], values[1]);
}

// Adds `name` R:W, which sets `read` and `write`.
void add_units_option(CLI::App* serve, const std::string& name, std::int64_t& read,
                      std::int64_t& write, const std::string& description) {
  serve
      ->add_option_function<std::string>(
          name,
          [&read, &write](const std::string& text) {
            std::tie(read, write) = units_pair(text).value();
          },
          description)
      ->type_name("R:W")
      ->default_str(std::to_string(read) + ":" + std::to_string(write))
      ->check(CLI::Validator(
          [](std::string& text) -> std::string {
            if (units_pair(text)) return {};
            return text + " must be READ:WRITE, two whole numbers from 1 to " +
                   std::to_string(kMaxUnits);
          },
          ""));
}

// One of `values`, given as the type name (a|b|c).
CLI::Option* add_choice(CLI::App* serve, const std::string& name, std::string& value,
                        const std::vector<std::string>& values, const std::string& description) {
  std::string names;
  for (const std::string& v : values) names += (names.empty() ? "" : "|") + v;
  return serve->add_option(name, value, description)
      ->type_name(names)
      ->capture_default_str()
      ->check(CLI::IsMember(values).description(""));
}

// The flags of docs/capacity.md: the mode, the clock, the admin listener and DynamoDB's
// capacity figures.
void add_capacity_options(CLI::App* serve, ServeOptions& options) {
  capacity::CapacityOptions& c = options.capacity;
  add_choice(serve, "--capacity", options.capacity_mode, {"off", "report", "enforce"},
             "off: ConsumedCapacity only, as before; report: every unit metered per table, "
             "index and partition, shown on the admin listener, nothing refused; enforce: "
             "throttled as DynamoDB throttles");
  CLI::Option* clock = add_choice(
      serve, "--clock", options.clock, {"wall", "manual"},
      "The clock capacity runs on; manual moves only by POST /clock/advance?seconds=S on the "
      "admin listener, for tests");
  serve
      ->add_option("--clock-start", options.clock_start,
                   "Epoch seconds the manual clock starts at (default: now, rounded down to a "
                   "whole second)")
      ->type_name("EPOCH")
      ->check(CLI::Range(std::int64_t{0}, kLastClockStart).description(""));
  serve->final_callback([&options, clock] {
    if (options.clock_start && options.clock != "manual")
      throw CLI::ValidationError("--clock-start", "needs " + clock->get_name() + " manual");
  });
  CLI::Option* admin_port =
      serve
          ->add_option("--admin-port", options.admin_port,
                       "Port of the admin listener: health, the clock, capacity as JSON, "
                       "Prometheus metrics (0: any free port; none without this flag). It "
                       "has no authentication")
          ->type_name("N");
  serve->add_option("--admin-bind", options.admin_bind, "Address the admin listener binds")
      ->type_name("ADDRESS")
      ->capture_default_str()
      ->needs(admin_port);
  serve
      ->add_option("--burst-seconds", c.burst_seconds,
                   "Seconds of unused provisioned throughput a table or index keeps for "
                   "bursts (0: one second's worth)")
      ->type_name("S")
      ->capture_default_str()
      ->check(number_range(0, 86400));
  serve
      ->add_option("--partition-read-units", c.partition.read_units,
                   "Read units a partition serves per second")
      ->type_name("N")
      ->capture_default_str()
      ->check(CLI::Range(std::int64_t{1}, kMaxUnits).description(""));
  serve
      ->add_option("--partition-write-units", c.partition.write_units,
                   "Write units a partition serves per second")
      ->type_name("N")
      ->capture_default_str()
      ->check(CLI::Range(std::int64_t{1}, kMaxUnits).description(""));
  serve
      ->add_option("--partition-size-mb", c.partition_size_mb,
                   "MiB of data at which a partition splits in two")
      ->type_name("MIB")
      ->capture_default_str()
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 30).description(""));
  serve
      ->add_option("--split-heat-fraction", c.split_heat_fraction,
                   "Share of its ceiling a partition must use, for --split-heat-seconds, to "
                   "split in two")
      ->type_name("F")
      ->capture_default_str()
      ->check(number_range(0.01, 1));
  serve
      ->add_option("--split-heat-seconds", c.split_heat_seconds,
                   "Consecutive seconds a partition must stay hot to split")
      ->type_name("S")
      ->capture_default_str()
      ->check(number_range(1, 86400));
  add_choice(serve, "--splits", options.splits, {"on", "off"},
             "Split partitions by size and heat (off: they split only when throughput is "
             "raised)");
  serve
      ->add_option("--max-partitions", c.max_partitions,
                   "Most partitions a table or index splits into")
      ->type_name("N")
      ->capture_default_str()
      ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 20).description(""));
  add_units_option(serve, "--on-demand-initial", c.on_demand_initial_read,
                   c.on_demand_initial_write,
                   "Read and write units per second a new on-demand table or index serves");
  serve
      ->add_option("--on-demand-peak-window", c.on_demand_peak_window,
                   "Seconds after an on-demand peak raise before the next may come")
      ->type_name("S")
      ->capture_default_str()
      ->check(number_range(1, 31'536'000));
  serve
      ->add_option("--on-demand-sustain", c.on_demand_sustain,
                   "Seconds an on-demand level must last to count as a peak")
      ->type_name("S")
      ->capture_default_str()
      ->check(number_range(1, 86400));
  add_units_option(serve, "--table-quota", c.table_quota_read, c.table_quota_write,
                   "Most read and write units per second of one table or index (the "
                   "account's per-table quota)");
  add_units_option(serve, "--account-quota", c.account_quota_read, c.account_quota_write,
                   "Most read and write units per second of all tables together (the "
                   "account's quota)");
  add_choice(serve, "--account-limit-exception", options.account_limit_exception,
             {"ThrottlingException", "RequestLimitExceeded"},
             "The exception of a request refused by an account quota");
  serve
      ->add_option("--key-sample", c.key_sample,
                   "One request in N is recorded for the top keys (1: every one)")
      ->type_name("N")
      ->capture_default_str()
      ->check(CLI::Range(std::uint32_t{1}, std::uint32_t{1} << 20).description(""));
  serve
      ->add_option("--history-minutes", c.history_minutes,
                   "Minutes of per-minute capacity history kept")
      ->type_name("N")
      ->capture_default_str()
      ->check(CLI::Range(std::uint32_t{1}, std::uint32_t{10080}).description(""));
  serve
      ->add_option("--insights-delay", c.insights_delay,
                   "Seconds Contributor Insights stays ENABLING or DISABLING")
      ->type_name("S")
      ->capture_default_str()
      ->check(number_range(0, 3600));
  serve
      ->add_option("--insights-rule-quota", c.insights_rule_quota,
                   "Contributor Insights rules the account may have")
      ->type_name("N")
      ->capture_default_str()
      ->check(CLI::Range(std::uint32_t{0}, std::uint32_t{1'000'000}).description(""));
  serve
      ->add_option("--insights-minutes", c.insights_minutes,
                   "Minutes of Contributor Insights' per-minute lists kept")
      ->type_name("N")
      ->capture_default_str()
      ->check(CLI::Range(std::uint32_t{1}, std::uint32_t{10080}).description(""));
}

}  // namespace

storage::BackendChoice backend_choice(const ServeOptions& options) {
  storage::BackendChoice choice;
  choice.data_dir = options.data_dir;
  choice.in_memory = options.in_memory;
  choice.rados_pool = options.rados_pool;
  choice.ceph_conf = options.ceph_conf;
  choice.rados_namespace = options.rados_namespace;
  choice.rados_partition_keys = options.rados_partition_keys;
  choice.rados_lease_seconds = options.rados_lease_seconds;
  choice.io_threads =
      options.threads != 0 ? options.threads : std::max(1u, std::thread::hardware_concurrency());
  choice.options.sync = options.sync;
  choice.options.block_cache_bytes = options.block_cache_mb << 20;
  choice.options.write_buffer_bytes = options.write_buffer_mb << 20;
  choice.options.compaction_bytes_per_second = options.compaction_rate_mb << 20;
  return choice;
}

capacity::CapacityOptions capacity_options(const ServeOptions& options) {
  capacity::CapacityOptions c = options.capacity;
  c.mode = options.capacity_mode == "off"       ? capacity::Mode::kOff
           : options.capacity_mode == "enforce" ? capacity::Mode::kEnforce
                                                : capacity::Mode::kReport;
  c.splits = options.splits == "on";
  c.account_limit_request_limit_exceeded =
      options.account_limit_exception == "RequestLimitExceeded";
  c.region = options.region;
  return c;
}

std::unique_ptr<Clock> make_clock(const ServeOptions& options) {
  if (options.clock != "manual") return std::make_unique<SystemClock>();
  using namespace std::chrono;
  const std::int64_t start = options.clock_start.value_or(
      duration_cast<seconds>(system_clock::now().time_since_epoch()).count());
  return std::make_unique<ManualClock>(start * 1'000'000'000);
}

CLI::App* add_serve_command(CLI::App& app, ServeOptions& options) {
  CLI::App* serve = app.add_subcommand("serve", "Run the server");
  serve->formatter(std::make_shared<HelpFormatter>());
  serve->add_option("--port", options.port, "TCP port to listen on (0: any free port)")
      ->type_name("N")
      ->capture_default_str();
  serve
      ->add_option("--bind", options.bind,
                   "Address to listen on; 0.0.0.0 accepts connections from other machines")
      ->type_name("ADDRESS")
      ->capture_default_str()
      ->each([&options](const std::string&) { options.bind_given = true; });
  CLI::Option* data_dir =
      serve->add_option("--data-dir", options.data_dir, "Directory of the on-disk database")
          ->type_name("DIR")
          ->capture_default_str();
  CLI::Option* in_memory =
      serve->add_flag("--in-memory", options.in_memory, "Keep everything in memory; write nothing")
          ->excludes(data_dir);
  CLI::Option* rados =
      serve
          ->add_option("--rados", options.rados_pool,
                       "Keep everything in this pool of a Ceph RADOS cluster (see --ceph-conf)")
          ->type_name("POOL")
          ->excludes(data_dir)
          ->excludes(in_memory);
  serve
      ->add_option("--ceph-conf", options.ceph_conf,
                   "The Ceph cluster's configuration file (monitors, authentication)")
      ->type_name("FILE")
      ->needs(rados)
      ->check(CLI::ExistingFile.description(""));
  serve
      ->add_option("--rados-namespace", options.rados_namespace,
                   "Keep this deployment's objects in RADOS namespaces starting with NS, apart "
                   "from other deployments in the same pool")
      ->type_name("NS")
      ->needs(rados);
  serve
      ->add_option("--rados-partition-keys", options.rados_partition_keys,
                   "Split a partition whose object holds more keys (items and index entries) "
                   "than this (0: never; Ceph warns past 200,000 keys in one object)")
      ->type_name("N")
      ->capture_default_str()
      ->needs(rados);
  serve
      ->add_option("--rados-lease-seconds", options.rados_lease_seconds,
                   "Seconds this front end's lease lasts unless renewed; once it lapses, the "
                   "other front ends sharing the pool finish what it left, and it writes no "
                   "more under it")
      ->type_name("S")
      ->capture_default_str()
      ->check(CLI::Range(1u, 3600u))
      ->needs(rados);
  serve
      ->add_option("--credentials", options.credentials_file,
                   "Verify SigV4 signatures against the keys in FILE: one 'ACCESS_KEY_ID "
                   "SECRET' pair per line, blank lines and lines starting with # ignored. "
                   "Without it any well-formed signature is accepted")
      ->type_name("FILE")
      ->check(CLI::ExistingFile.description(""));
  serve->add_option("--region", options.region, "Region named in ARNs")
      ->type_name("REGION")
      ->capture_default_str();
  serve
      ->add_option("--threads", options.threads,
                   "I/O threads (0: one per core, eight per core with --rados)")
      ->type_name("N")
      ->capture_default_str()
      ->check(CLI::Range(0u, 1024u).description(""));
  serve->add_flag("--sync", options.sync,
                  "fsync the write-ahead log on every write (survives power loss, slower)");
  serve->add_flag("--log-requests", options.log_requests,
                  "Log one line per request: method, operation, tables, HTTP status, error "
                  "type, latency and request id (internal errors are logged either way)");
  serve
      ->add_option("--body-budget-mb", options.body_budget_mb,
                   "MiB of request bodies all connections together may hold in memory at "
                   "once; past it a new request is refused, without reading its body, with "
                   "DynamoDB's ThrottlingException (HTTP 400), which the SDKs retry after a "
                   "back-off. Requests already holding their share go on")
      ->type_name("MIB")
      ->capture_default_str()
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 20).description(""));
  serve
      ->add_option("--block-cache-mb", options.block_cache_mb,
                   "MiB of the on-disk store's block cache: data blocks, index and filter "
                   "partitions read from its files")
      ->type_name("MIB")
      ->capture_default_str()
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 20).description(""));
  serve
      ->add_option("--write-buffer-mb", options.write_buffer_mb,
                   "MiB of each of the on-disk store's two memtables, where writes gather "
                   "before they are written to a file")
      ->type_name("MIB")
      ->capture_default_str()
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 16).description(""));
  serve
      ->add_option("--compaction-rate-mb", options.compaction_rate_mb,
                   "MiB/s the on-disk store's flushes and compactions may write, so that the "
                   "work after a bulk load leaves requests their share of the disk (0: no "
                   "limit)")
      ->type_name("MIB")
      ->capture_default_str()
      ->check(CLI::Range(std::uint64_t{0}, std::uint64_t{1} << 20).description(""));
  serve
      ->add_option("--item-collection-limit", options.item_collection_limit,
                   "Bytes at which an item collection (one partition key of a table with local "
                   "secondary indexes) is full")
      ->type_name("BYTES")
      ->capture_default_str();
  serve
      ->add_option("--backup-sync-bytes", options.backup_sync_bytes,
                   "CreateBackup copies a table of at most this many bytes before it answers; "
                   "a larger one is copied in the background (the backup is CREATING "
                   "meanwhile)")
      ->type_name("BYTES")
      ->capture_default_str();
  serve
      ->add_option("--pitr-lag", options.pitr_lag,
                   "Seconds LatestRestorableDateTime stays behind the current time on a table "
                   "with point-in-time recovery (DynamoDB: about 5 minutes)")
      ->type_name("SECONDS")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 86400.0).description(""));
  serve
      ->add_option("--export-root", options.export_root,
                   "Directory standing for S3 in ExportTableToPointInTime and ImportTable: a "
                   "bucket is its subdirectory <DIR>/<bucket> [default: <data-dir>/s3; "
                   "./kumo-s3 with --in-memory or --rados]")
      ->type_name("DIR");
  serve
      ->add_option("--export-files", options.export_files,
                   "Data files an export writes, one per range of the table's token space "
                   "(empty ones included)")
      ->type_name("N")
      ->capture_default_str()
      ->check(CLI::Range(std::size_t{1}, std::size_t{256}).description(""));
  serve
      ->add_option("--ttl-interval", options.ttl_interval,
                   "Seconds between two passes of the Time to Live reaper, which deletes items "
                   "whose TTL attribute is in the past (DynamoDB: within days)")
      ->type_name("SECONDS")
      ->capture_default_str()
      ->check(CLI::Range(0.01, 3600.0).description(""));
  serve
      ->add_option("--ttl-cooldown", options.ttl_cooldown,
                   "Minimum seconds between two UpdateTimeToLive calls on one table "
                   "(DynamoDB: 3600; 0: none)")
      ->type_name("SECONDS")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber.description(""));
  serve
      ->add_option("--stream-retention", options.stream_retention,
                   "Seconds stream records are kept, and disabled streams listed")
      ->type_name("SECONDS")
      ->capture_default_str()
      ->check(CLI::PositiveNumber.description(""));
  serve
      ->add_option("--shard-iterator-lifetime", options.shard_iterator_lifetime,
                   "Seconds a stream shard iterator stays valid")
      ->type_name("SECONDS")
      ->capture_default_str()
      ->check(CLI::PositiveNumber.description(""));
  add_capacity_options(serve, options);
  serve->footer(
      "DynamoDB Local's flags work too: -port N, -inMemory, -dbPath DIR; -sharedDb, -cors X, "
      "-delayTransientStatuses, -optimizeDbBeforeStartup and -disableTelemetry are accepted "
      "and ignored.");
  return serve;
}

std::vector<std::string> translate_dynamodb_local_args(const std::vector<std::string>& args) {
  std::vector<std::string> out;
  out.reserve(args.size() + 1);
  bool translated = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "-port") {
      out.push_back("--port");
    } else if (a == "-inMemory") {
      out.push_back("--in-memory");
    } else if (a == "-dbPath") {
      out.push_back("--data-dir");
    } else if (a == "-help") {
      out.push_back("--help");
      continue;
    } else if (a == "-cors") {
      if (i + 1 < args.size()) ++i;  // its value
    } else if (a == "-sharedDb" || a == "-delayTransientStatuses" ||
               a == "-optimizeDbBeforeStartup" || a == "-disableTelemetry") {
    } else {
      out.push_back(a);
      continue;
    }
    translated = true;
  }
  if (translated && (out.empty() || out.front() != "serve")) out.insert(out.begin(), "serve");
  return out;
}

std::string export_root_of(const ServeOptions& options) {
  if (!options.export_root.empty()) return options.export_root;
  if (options.in_memory || !options.rados_pool.empty()) return "./kumo-s3";
  return options.data_dir + "/s3";
}

}  // namespace kumo::cli
