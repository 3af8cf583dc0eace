// kumo-bench: a load generator for servers that speak DynamoDB's protocol.
//
//   kumo-bench --endpoint 127.0.0.1:8000 --workload getitem [--rate R] ...
//       loads the data the workload needs, then runs it and reports throughput, latency
//       percentiles, errors and the CPU used by the server and by itself.
//   kumo-bench launch --endpoint 127.0.0.1:8000 -- COMMAND...
//       starts a server, reports the time to its first right answer and its idle memory,
//       and leaves it running.
//
// See bench/README.md.
#include <fcntl.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "http_client.h"
#include "load_runner.h"
#include "process_stats.h"
#include "workloads.h"

extern char** environ;

namespace kumo::bench {
namespace {

using std::chrono::milliseconds;
using std::chrono::nanoseconds;

// "10s", "500ms", "2m", "1.5s" or a bare number of seconds.
milliseconds parse_duration(const std::string& text) {
  double value = 0;
  const char* end = text.data() + text.size();
  const auto [rest, error] = std::from_chars(text.data(), end, value);
  const std::string_view unit(rest, static_cast<std::size_t>(end - rest));
  double scale = 0;
  if (unit.empty() || unit == "s") scale = 1000;
  if (unit == "ms") scale = 1;
  if (unit == "m") scale = 60000;
  if (error != std::errc{} || scale == 0 || value < 0) {
    throw std::invalid_argument(fmt::format("'{}' is not a duration (e.g. 10s, 500ms)", text));
  }
  return milliseconds(static_cast<std::int64_t>(value * scale));
}

double seconds(nanoseconds span) {
  return static_cast<double>(span.count()) / 1e9;
}
double to_ms(std::uint64_t ns) {
  return static_cast<double>(ns) / 1e6;
}

struct Settings {
  std::string endpoint = "127.0.0.1:8000";
  std::string workload = "getitem";
  unsigned connections = 64;
  unsigned threads = 1;
  std::string duration = "10s";
  std::string warmup = "2s";
  double rate = 0;
  // Non-zero: the measured window is this many requests (after --warmup) instead of
  // --duration.
  std::uint64_t requests = 0;
  WorkloadConfig config;
  bool preload = true;
  unsigned preload_connections = 0;  // 0: as --connections
  // Items per preload request: 1 sends PutItems, more a BatchWriteItem of that many.
  unsigned preload_batch = 1;
  bool check_body = true;
  pid_t server_pid = 0;
  std::uint64_t seed = 1;
  std::string label;
  bool json = false;
};

// Creates the data set's table unless it exists, and waits until it is ACTIVE (dynalite,
// for one, keeps a new table CREATING for a while).
void ensure_table(const Endpoint& endpoint, const WorkloadConfig& config, const Dataset& dataset,
                  SigV4Signer& signer) {
  BlockingClient client(endpoint);
  Operation op;
  op.target = "DynamoDB_20120810.CreateTable";
  op.body = dataset.create_table(config);
  if (config.warm_throughput > 0 && !op.body.empty() && op.body.back() == '}') {
    op.body.pop_back();
    op.body +=
        fmt::format(R"(,"WarmThroughput":{{"ReadUnitsPerSecond":{0},"WriteUnitsPerSecond":{0}}}}})",
                    config.warm_throughput);
  }
  if (!config.stream_view.empty() && !op.body.empty() && op.body.back() == '}') {
    op.body.pop_back();
    op.body +=
        fmt::format(R"(,"StreamSpecification":{{"StreamEnabled":true,"StreamViewType":"{}"}}}})",
                    config.stream_view);
  }
  const auto created = client.send(op, signer, std::chrono::seconds(30));
  if (!created) throw std::runtime_error("CreateTable: no answer from " + endpoint.authority);
  if (created->status != 200 && created->body.find("ResourceInUseException") == std::string::npos) {
    throw std::runtime_error(
        fmt::format("CreateTable: HTTP {}: {}", created->status, created->body));
  }
  op.target = "DynamoDB_20120810.DescribeTable";
  op.body = describe_table_body(config);
  const auto deadline = Clock::now() + std::chrono::seconds(60);
  while (Clock::now() < deadline) {
    const auto described = client.send(op, signer, std::chrono::seconds(30));
    if (described && described->status == 200) {
      rapidjson::Document document;
      document.Parse(described->body.data(), described->body.size());
      if (!document.HasParseError() && document.IsObject() && document.HasMember("Table") &&
          document["Table"].IsObject() && document["Table"].HasMember("TableStatus") &&
          document["Table"]["TableStatus"] == "ACTIVE") {
        return;
      }
    }
    std::this_thread::sleep_for(milliseconds(50));
  }
  throw std::runtime_error("table " + config.table + " did not become ACTIVE within 60 s");
}

// Runs `options` on `threads` threads, each with its own connections, event loop, signer
// and share of the rate, and adds up what they saw. `make_source(t)` gives thread t's
// request source.
RunResult run_threads(const RunOptions& options, unsigned threads,
                      const std::function<OperationSource(unsigned)>& make_source,
                      const std::function<std::uint64_t(unsigned)>& count_for) {
  std::vector<RunResult> results(threads);
  std::vector<std::thread> workers;
  for (unsigned t = 0; t < threads; ++t) {
    RunOptions mine = options;
    mine.connections = options.connections / threads + (t < options.connections % threads);
    mine.rate = options.rate / threads;
    mine.count = count_for(t);
    workers.emplace_back([&, t, mine] {
      SigV4Signer signer{SigV4Credentials{}};
      const OperationSource source = make_source(t);
      results[t] = run_load(mine, source, signer);
    });
  }
  for (auto& worker : workers) worker.join();
  RunResult total;
  for (const auto& result : results) total.merge(result);
  return total;
}

// Returns the seconds the items took to load.
double preload(const Settings& settings, const Endpoint& endpoint, const Dataset& dataset) {
  SigV4Signer signer{SigV4Credentials{}};
  ensure_table(endpoint, settings.config, dataset, signer);
  const std::uint64_t items = settings.config.items;
  const std::uint64_t batch = settings.preload_batch;
  // Request r loads items r*batch .. r*batch+batch-1 (fewer in the last request).
  const std::uint64_t requests = (items + batch - 1) / batch;
  // A thread with no request to send would run until the deadline instead.
  const unsigned threads = static_cast<unsigned>(
      std::min<std::uint64_t>(settings.threads, std::max<std::uint64_t>(requests, 1)));
  RunOptions options;
  options.endpoint = endpoint;
  options.connections =
      settings.preload_connections ? settings.preload_connections : settings.connections;
  options.check_body = settings.check_body;
  options.start = Clock::now();
  options.measure_until = options.start + std::chrono::minutes(30);
  const auto began = Clock::now();
  const RunResult result = run_threads(
      options, threads,
      [&](unsigned t) {
        return [&settings, &dataset, t, threads, batch, items](std::uint64_t index, Operation& op) {
          const std::uint64_t request = index * threads + t;
          if (batch == 1) {
            dataset.load(settings.config, request, op);
          } else {
            const std::uint64_t first = request * batch;
            make_load_batch(dataset, settings.config, first, std::min(batch, items - first), op);
          }
        };
      },
      [&](unsigned t) { return requests > t ? (requests - t + threads - 1) / threads : 0; });
  if (result.errors > 0 || result.unfinished > 0 || result.ok != requests) {
    std::string why;
    for (const auto& sample : result.error_samples) why += "\n  " + sample;
    throw std::runtime_error(
        fmt::format("preload of {} items: {} of {} requests stored, {} errors{}", items, result.ok,
                    requests, result.errors, why));
  }
  const double took = seconds(Clock::now() - began);
  if (!settings.json) {
    fmt::print(stderr, "preloaded {} items into {} in {:.1f} s ({:.0f} items/s, {} per request)\n",
               items, settings.config.table, took, static_cast<double>(items) / took, batch);
  }
  return took;
}

struct Measured {
  RunResult result;
  double window_s = 0;
  std::optional<double> server_cpu_s;
  // Time the server was ready to run but waited for a core held by something else.
  std::optional<double> server_wait_s;
  std::uint64_t server_rss_kib = 0;        // at the end
  std::uint64_t server_rss_start_kib = 0;  // when the measured window opened
  std::uint64_t server_rss_max_kib = 0;    // highest of the samples, one a second
  double client_cpu_s = 0;
  double machine_cpu_s = 0;  // all cores, everything that ran
  // Threads of other processes, kernel threads included, that ran during the window, the
  // busiest first: what took the server's core when it waited.
  std::vector<ThreadTime> others;

  // CPU time used by processes other than the server and this one: a measure of how far
  // the figures were disturbed. Meaningful only when the server's pid is known. The
  // machine's counters are in ticks but see processes that came and went within the
  // window; the threads' own counters are exact but miss those, so the larger counts.
  double others_cpu_s() const {
    double threads_s = 0;
    for (const auto& thread : others) threads_s += seconds(thread.on_cpu);
    return std::max({0.0, machine_cpu_s - client_cpu_s - server_cpu_s.value_or(0), threads_s});
  }
};

// A request source for `workload`, thread `t`. `phase` gives the warm-up of a counted run
// its own random draws, so that its requests (and their ClientRequestTokens) differ from
// the measured ones.
std::function<OperationSource(unsigned)> workload_sources(const Settings& settings,
                                                          const Workload& workload,
                                                          std::uint64_t phase) {
  return [&settings, &workload, phase](unsigned t) -> OperationSource {
    return [&settings, &workload,
            rng = std::make_shared<Rng>(settings.seed * 1000003 + t + phase * 7919)](
               std::uint64_t, Operation& op) { workload.make(settings.config, *rng, op); };
  };
}

Measured measure(const Settings& settings, const Endpoint& endpoint, const Workload& workload) {
  const auto warmup = parse_duration(settings.warmup);
  const auto duration = parse_duration(settings.duration);
  const bool counted = settings.requests > 0;
  RunOptions options;
  options.endpoint = endpoint;
  options.connections = settings.connections;
  options.rate = settings.rate;
  options.check_body = settings.check_body;
  options.start = Clock::now() + milliseconds(20);
  options.measure_from = options.start + warmup;
  options.measure_until = options.measure_from + duration;

  std::vector<pid_t> server;
  if (settings.server_pid > 0) {
    server = process_tree(settings.server_pid);
    if (server.empty()) {
      throw std::runtime_error(fmt::format("no process {} (--server-pid)", settings.server_pid));
    }
  }

  Measured measured;
  // The counters at the window's edges. Every thread's CPU time takes about 2 ms of /proc
  // reading on the client's core: it is read a little before the window opens, so that
  // the window does not pay for it. The busiest threads then cover those milliseconds too.
  std::vector<ThreadTime> threads_before;
  CpuSample server_before;
  nanoseconds server_wait_before{}, client_before{}, machine_before{};
  Clock::time_point from;
  const auto open_window = [&] {
    server_before = cpu_sample(server);
    server_wait_before = run_queue_wait(server);
    client_before = own_cpu_time();
    machine_before = machine_busy_time();
    from = Clock::now();
    if (!server.empty()) {
      measured.server_rss_start_kib = rss_kib(server);
      measured.server_rss_max_kib = measured.server_rss_start_kib;
    }
  };
  const auto close_window = [&] {
    const auto server_after = cpu_sample(server);
    const auto server_wait_after = run_queue_wait(server);
    const auto client_after = own_cpu_time();
    const auto machine_after = machine_busy_time();
    const auto threads_after = all_thread_times();
    measured.window_s = seconds(Clock::now() - from);
    if (!server.empty()) {
      measured.server_cpu_s = seconds(cpu_between(server_before, server_after));
      measured.server_wait_s = seconds(server_wait_after - server_wait_before);
    }
    measured.client_cpu_s = seconds(client_after - client_before);
    measured.machine_cpu_s = seconds(machine_after - machine_before);
    std::vector<pid_t> excluded = server;
    excluded.push_back(getpid());
    measured.others = busiest_threads_between(threads_before, threads_after, excluded);
  };
  // RSS once a second through the window, until `until` or until the window is closed: a
  // soak shows whether memory stays flat.
  std::mutex window_mutex;
  std::condition_variable window_closed;
  bool closed = false;
  const auto sample_rss = [&](Clock::time_point until) {
    if (server.empty()) return;
    std::unique_lock lock(window_mutex);
    for (auto next = from + milliseconds(1000); next < until; next += milliseconds(1000)) {
      if (window_closed.wait_until(lock, next, [&] { return closed; })) return;
      measured.server_rss_max_kib = std::max(measured.server_rss_max_kib, rss_kib(server));
    }
  };

  if (!counted) {
    std::thread sampler([&] {
      // Samples at the window's edges, from a thread that is otherwise asleep.
      std::this_thread::sleep_until(options.measure_from - milliseconds(100));
      threads_before = all_thread_times();
      std::this_thread::sleep_until(options.measure_from);
      open_window();
      sample_rss(options.measure_until);
      std::this_thread::sleep_until(options.measure_until);
      close_window();
    });
    measured.result =
        run_threads(options, settings.threads, workload_sources(settings, workload, 0),
                    [](unsigned) { return std::uint64_t{0}; });
    sampler.join();
  } else {
    // A warm-up by time, none of it counted (an empty window), then exactly
    // settings.requests requests, all counted; the window is the time they took.
    RunResult warm;
    if (warmup.count() > 0) {
      RunOptions warm_options = options;
      warm_options.measure_from = warm_options.measure_until = options.measure_from;
      warm = run_threads(warm_options, settings.threads, workload_sources(settings, workload, 1),
                         [](unsigned) { return std::uint64_t{0}; });
    }
    const unsigned threads = settings.threads;
    options.start = Clock::now();
    options.measure_from = options.start;
    // A deadline only, so that a server that stops answering cannot hold the run forever.
    options.measure_until = options.start + std::chrono::minutes(30);
    threads_before = all_thread_times();
    open_window();
    std::thread sampler([&] { sample_rss(Clock::time_point::max()); });
    measured.result =
        run_threads(options, threads, workload_sources(settings, workload, 0), [&](unsigned t) {
          return settings.requests / threads + (t < settings.requests % threads ? 1 : 0);
        });
    {
      std::lock_guard lock(window_mutex);
      closed = true;
    }
    window_closed.notify_all();
    sampler.join();
    close_window();
    // The warm-up counted nothing in its window; its failures and give-up still count.
    measured.result.merge(warm);
  }
  if (!server.empty()) {
    measured.server_rss_kib = rss_kib(process_tree(settings.server_pid));
    measured.server_rss_max_kib = std::max(measured.server_rss_max_kib, measured.server_rss_kib);
  }
  return measured;
}

void print_human(const Settings& settings, const Measured& m) {
  const auto& r = m.result;
  const double ops = static_cast<double>(r.ok) / m.window_s;
  const auto& h = r.latency;
  fmt::print(
      "{}{}, {}, {} connections, {} thread(s), {} after {} warm-up, endpoint {}\n",
      settings.label.empty() ? "" : settings.label + ": ", settings.workload,
      settings.rate > 0 ? fmt::format("open loop at {:.0f}/s", settings.rate)
                        : std::string("closed loop"),
      settings.connections, settings.threads,
      settings.requests > 0 ? fmt::format("{} requests", settings.requests) : settings.duration,
      settings.warmup, settings.endpoint);
  fmt::print("  throughput  {:.0f} ops/s ({} right answers in {:.2f} s)\n", ops, r.ok, m.window_s);
  fmt::print("  latency     p50 {:.3f} ms  p99 {:.3f} ms  p99.9 {:.3f} ms  max {:.3f} ms{}\n",
             to_ms(h.percentile(50)), to_ms(h.percentile(99)), to_ms(h.percentile(99.9)),
             to_ms(h.max()), settings.rate > 0 ? "  (from due time)" : "");
  fmt::print("  errors      {} in window, {} in warm-up/drain, {} unanswered at the end\n",
             r.errors, r.errors_outside, r.unfinished);
  if (r.unsent > 0) {
    fmt::print("  behind      {} requests fell due but were never sent: the rate is too high\n",
               r.unsent);
  }
  if (settings.rate > 0) {
    fmt::print("  sender      late by up to {:.3f} ms on its own (a connection was free)\n",
               to_ms(static_cast<std::uint64_t>(r.client_late_max.count())));
  }
  if (r.gave_up) fmt::print("  stopped early: no connection to the server for 5 s\n");
  for (const auto& [kind, count] : r.error_kinds) fmt::print("    {:>8}  {}\n", count, kind);
  for (const auto& sample : r.error_samples) fmt::print("    e.g. {}\n", sample);
  if (m.server_cpu_s) {
    fmt::print("  server CPU  {:.1f}% of a core, {:.1f} us per answer\n",
               100 * *m.server_cpu_s / m.window_s,
               r.ok ? 1e6 * *m.server_cpu_s / static_cast<double>(r.ok) : 0.0);
    fmt::print(
        "  server RSS  {:.1f} MiB at the start of the window, {:.1f} MiB at its end, "
        "{:.1f} MiB at most\n",
        static_cast<double>(m.server_rss_start_kib) / 1024,
        static_cast<double>(m.server_rss_kib) / 1024,
        static_cast<double>(m.server_rss_max_kib) / 1024);
  }
  if (m.server_cpu_s) {
    fmt::print("  others CPU  {:.1f}% of a core used by other processes meanwhile{}\n",
               100 * m.others_cpu_s() / m.window_s,
               m.others_cpu_s() > 0.1 * m.window_s ? " (the figures are disturbed)" : "");
    std::string busiest;
    for (std::size_t i = 0; i < m.others.size() && i < 4 && m.others[i].on_cpu >= milliseconds(1);
         ++i) {
      busiest += fmt::format("{}{} {:.1f} ms", i ? ", " : "", m.others[i].name,
                             1e3 * seconds(m.others[i].on_cpu));
    }
    if (!busiest.empty()) fmt::print("              busiest: {}\n", busiest);
    fmt::print("  core taken  {:.1f} ms: the server was ready but waited for its core\n",
               1e3 * m.server_wait_s.value_or(0));
  }
  const double client_pct = 100 * m.client_cpu_s / m.window_s;
  fmt::print("  client CPU  {:.1f}% of a core, {:.1f} us per answer{}\n", client_pct,
             r.ok ? 1e6 * m.client_cpu_s / static_cast<double>(r.ok) : 0.0,
             settings.rate > 0                      ? "  (an open loop spins between requests)"
             : client_pct > 90.0 * settings.threads ? "  (the load generator was the bottleneck)"
                                                    : "");
}

void print_json(const Settings& settings, const Measured& m) {
  const auto& r = m.result;
  const auto& h = r.latency;
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
  const auto num = [&w](const char* key, double value) {
    w.Key(key);
    w.Double(value);
  };
  const auto u64 = [&w](const char* key, std::uint64_t value) {
    w.Key(key);
    w.Uint64(value);
  };
  w.StartObject();
  w.Key("kind");
  w.String("run");
  w.Key("label");
  w.String(settings.label.c_str());
  w.Key("workload");
  w.String(settings.workload.c_str());
  w.Key("endpoint");
  w.String(settings.endpoint.c_str());
  w.Key("mode");
  w.String(settings.rate > 0 ? "open" : "closed");
  num("rate", settings.rate);
  if (settings.requests > 0) u64("requests", settings.requests);
  u64("connections", settings.connections);
  u64("threads", settings.threads);
  num("window_s", m.window_s);
  u64("ok", r.ok);
  num("ops_per_s", static_cast<double>(r.ok) / m.window_s);
  u64("errors", r.errors);
  u64("errors_outside_window", r.errors_outside);
  u64("unfinished", r.unfinished);
  u64("unsent", r.unsent);
  if (settings.rate > 0)
    num("client_late_max_ms", to_ms(static_cast<std::uint64_t>(r.client_late_max.count())));
  u64("reconnects", r.reconnects);
  w.Key("gave_up");
  w.Bool(r.gave_up);
  w.Key("error_kinds");
  w.StartObject();
  for (const auto& [kind, count] : r.error_kinds) {
    w.Key(kind.c_str());
    w.Uint64(count);
  }
  w.EndObject();
  w.Key("error_samples");
  w.StartArray();
  for (const auto& sample : r.error_samples) w.String(sample.c_str());
  w.EndArray();
  w.Key("latency_ms");
  w.StartObject();
  num("p50", to_ms(h.percentile(50)));
  num("p90", to_ms(h.percentile(90)));
  num("p99", to_ms(h.percentile(99)));
  num("p999", to_ms(h.percentile(99.9)));
  num("max", to_ms(h.max()));
  num("mean", h.mean() / 1e6);
  w.EndObject();
  if (m.server_cpu_s) {
    num("server_cpu_pct", 100 * *m.server_cpu_s / m.window_s);
    num("server_cpu_us_per_op", r.ok ? 1e6 * *m.server_cpu_s / static_cast<double>(r.ok) : 0);
    u64("server_rss_kib", m.server_rss_kib);
    u64("server_rss_start_kib", m.server_rss_start_kib);
    u64("server_rss_max_kib", m.server_rss_max_kib);
    num("others_cpu_pct", 100 * m.others_cpu_s() / m.window_s);
    num("server_wait_ms", 1e3 * m.server_wait_s.value_or(0));
    w.Key("others_busiest");
    w.StartArray();
    for (std::size_t i = 0; i < m.others.size() && i < 8; ++i) {
      w.StartObject();
      w.Key("name");
      w.String(m.others[i].name.c_str());
      num("cpu_ms", 1e3 * seconds(m.others[i].on_cpu));
      w.EndObject();
    }
    w.EndArray();
  }
  num("client_cpu_pct", 100 * m.client_cpu_s / m.window_s);
  num("client_cpu_us_per_op", r.ok ? 1e6 * m.client_cpu_s / static_cast<double>(r.ok) : 0);
  w.EndObject();
  std::cout << buffer.GetString() << std::endl;
}

int run(Settings& settings) {
  const Endpoint endpoint = parse_endpoint(settings.endpoint);
  const Workload* workload = find_workload(settings.workload);
  if (workload == nullptr) throw std::invalid_argument("unknown workload " + settings.workload);
  if (settings.threads == 0 || settings.connections < settings.threads) {
    throw std::invalid_argument("need --threads >= 1 and --connections >= --threads");
  }
  if (workload->dataset && settings.config.items == 0) {
    throw std::invalid_argument("--items must be at least 1 for " + settings.workload);
  }
  if (settings.preload_batch < 1 || settings.preload_batch > kMaxBatchWrite) {
    throw std::invalid_argument(
        fmt::format("--preload-batch must be between 1 and {}", kMaxBatchWrite));
  }
  if (settings.requests > 0 && (settings.rate > 0 || settings.requests < settings.threads)) {
    throw std::invalid_argument("--requests needs a closed loop (no --rate) and >= --threads");
  }
  if (workload->dataset) settings.config.table += workload->dataset->table_suffix;
  double preload_s = 0;
  if (workload->dataset && settings.preload) {
    preload_s = preload(settings, endpoint, *workload->dataset);
  }
  if (settings.requests == 0 && parse_duration(settings.duration).count() == 0) {
    // A preload alone: report the server's memory with the data loaded.
    if (settings.server_pid > 0) {
      const auto kib = rss_kib(process_tree(settings.server_pid));
      if (settings.json) {
        fmt::print(
            "{{\"kind\":\"loaded\",\"label\":\"{}\",\"items\":{},\"seconds\":{:.3f},"
            "\"items_per_s\":{:.0f},\"preload_batch\":{},\"server_rss_kib\":{}}}\n",
            settings.label, settings.config.items, preload_s,
            preload_s > 0 ? static_cast<double>(settings.config.items) / preload_s : 0.0,
            settings.preload_batch, kib);
      } else {
        fmt::print("server RSS with {} items loaded: {:.1f} MiB\n", settings.config.items,
                   static_cast<double>(kib) / 1024);
      }
    }
    return 0;
  }
  const Measured measured = measure(settings, endpoint, *workload);
  if (settings.json) {
    print_json(settings, measured);
  } else {
    print_human(settings, measured);
  }
  // Exit status: 2 when the server could not be reached, 3 when any answer was wrong or
  // missing (so a smoke run fails loudly), 0 otherwise.
  if (measured.result.gave_up) return 2;
  const RunResult& r = measured.result;
  return r.errors + r.errors_outside + r.unfinished > 0 || r.ok == 0 ? 3 : 0;
}

struct LaunchSettings {
  std::string endpoint = "127.0.0.1:8000";
  std::string probe = "listtables";
  std::string timeout = "120s";
  std::string settle = "1s";
  std::string pid_file;
  std::string log = "/dev/null";
  std::string label;
  bool json = false;
  int cpu = -1;
  std::vector<std::string> command;
};

// Where a server's standard streams go: stdin from /dev/null, stdout and stderr to `log`.
// The files are opened before the server's start is timed: truncating a log that an earlier
// start filled took 0.3 ms here, which was counted as the server's start-up.
class ServerStreams {
 public:
  explicit ServerStreams(const std::string& log)
      : null_fd_(::open("/dev/null", O_RDONLY | O_CLOEXEC)),
        log_fd_(::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) {
    if (null_fd_ < 0 || log_fd_ < 0) {
      const std::string why = std::strerror(errno);
      close();
      throw std::runtime_error(fmt::format("cannot open {} for the server's output: {}", log, why));
    }
  }
  ServerStreams(const ServerStreams&) = delete;
  ServerStreams& operator=(const ServerStreams&) = delete;
  ~ServerStreams() { close(); }

  int input() const { return null_fd_; }
  int output() const { return log_fd_; }

 private:
  void close() {
    for (const int fd : {null_fd_, log_fd_}) {
      if (fd >= 0) ::close(fd);
    }
  }
  int null_fd_;
  int log_fd_;
};

// Starts `argv` with `streams`, pinned to `cpu` unless it is negative. The child pins itself
// between vfork and exec: were this thread to narrow its own affinity around the spawn, as
// taskset would, it would then have to run on the server's core to widen it again,
// competing with the server's start for a scheduler slice (up to a millisecond here) before
// it could send its first probe.
pid_t spawn_server(std::vector<char*>& argv, const ServerStreams& streams, int cpu) {
  cpu_set_t only;
  CPU_ZERO(&only);
  if (cpu >= 0) CPU_SET(cpu, &only);
  int failure[2] = {-1, -1};  // the child's errno if it cannot run the server
  if (::pipe2(failure, O_CLOEXEC) != 0) {
    throw std::runtime_error(fmt::format("cannot start {}: {}", argv[0], std::strerror(errno)));
  }
  // Between vfork and exec the child shares this process's memory, so it only makes system
  // calls (as posix_spawn's own child does); this thread resumes once it has exec'd.
  const pid_t pid = ::vfork();
  if (pid == 0) {
    int error = 0;
    if (cpu >= 0 && ::sched_setaffinity(0, sizeof only, &only) != 0) error = errno;
    if (error == 0 && (::dup2(streams.input(), 0) < 0 || ::dup2(streams.output(), 1) < 0 ||
                       ::dup2(streams.output(), 2) < 0)) {
      error = errno;
    }
    if (error == 0) {
      ::execvp(argv[0], argv.data());
      error = errno;
    }
    (void)!::write(failure[1], &error, sizeof error);
    ::_exit(127);
  }
  const int vfork_error = errno;
  ::close(failure[1]);
  // The pipe closes empty on a successful exec; otherwise it holds the child's errno.
  int error = pid < 0 ? vfork_error : 0;
  if (pid > 0 && ::read(failure[0], &error, sizeof error) == sizeof error) {
    ::waitpid(pid, nullptr, 0);
  }
  ::close(failure[0]);
  if (error != 0) {
    const std::string where = cpu >= 0 ? fmt::format(" on CPU {}", cpu) : "";
    throw std::runtime_error(
        fmt::format("cannot start {}{}: {}", argv[0], where, std::strerror(error)));
  }
  return pid;
}

// Starts the server, then polls as fast as loopback allows (a refused connect costs a few
// microseconds) until it answers the probe correctly, so a start-up of a millisecond or
// two is measured as such.
int launch(const LaunchSettings& settings) {
  const Endpoint endpoint = parse_endpoint(settings.endpoint);
  if (settings.probe != "listtables" && settings.probe != "health") {
    throw std::invalid_argument("--probe must be listtables or health");
  }
  Operation probe;
  if (settings.probe == "listtables") {
    probe.target = "DynamoDB_20120810.ListTables";
    probe.body = list_tables_body();
  }
  SigV4Signer signer{SigV4Credentials{}};
  // The probe's first-use costs on this side (deriving the day's signing key, OpenSSL's
  // first HMAC, Beast's response parser) are paid before the server starts, so that they
  // are not counted as the server's start-up.
  {
    std::string request;
    append_request(request, endpoint, probe, signer);
    std::string body;
    ResponseParser parser(body);
    constexpr std::string_view kResponse =
        "HTTP/1.1 200 OK\r\nContent-Type: application/x-amz-json-1.0\r\nContent-Length: "
        "17\r\n\r\n{\"TableNames\":[]}";
    boost::beast::error_code error;
    parser.put(boost::asio::buffer(kResponse.data(), kResponse.size()), error);
  }
  {
    BlockingClient taken(endpoint);
    if (taken.connect()) {
      throw std::runtime_error("something already listens on " + endpoint.authority);
    }
  }

  std::vector<char*> argv;
  for (const auto& arg : settings.command) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);

  Clock::time_point started;
  const pid_t pid = [&] {
    const ServerStreams streams(settings.log);
    started = Clock::now();
    return spawn_server(argv, streams, settings.cpu);
  }();

  const auto deadline = started + parse_duration(settings.timeout);
  std::string last = "no connection accepted";
  for (;;) {
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) {
      throw std::runtime_error(fmt::format("{} exited (status {}) before answering; see {}",
                                           argv[0], status, settings.log));
    }
    if (Clock::now() > deadline) {
      kill(pid, SIGTERM);
      throw std::runtime_error(
          fmt::format("no right answer within {}: {}", settings.timeout, last));
    }
    BlockingClient client(endpoint);
    if (client.connect()) {
      const auto reply = client.send(probe, signer, std::chrono::seconds(5));
      if (reply && reply->status == 200 &&
          (probe.target.empty() || reply->body.find("TableNames") != std::string::npos)) {
        break;
      }
      last = reply ? fmt::format("HTTP {}: {}", reply->status, reply->body.substr(0, 200))
                   : "connection closed without an answer";
    }
    // Spin for the first 100 ms (what a fast server needs), then poll each millisecond.
    if (Clock::now() - started > milliseconds(100)) std::this_thread::sleep_for(milliseconds(1));
  }
  const double startup_ms = seconds(Clock::now() - started) * 1e3;

  std::this_thread::sleep_for(parse_duration(settings.settle));
  const auto tree = process_tree(pid);
  const auto rss = rss_kib(tree);
  if (!settings.pid_file.empty()) std::ofstream(settings.pid_file) << pid << "\n";
  if (settings.json) {
    fmt::print(
        "{{\"kind\":\"startup\",\"label\":\"{}\",\"pid\":{},\"processes\":{},"
        "\"startup_ms\":{:.3f},\"idle_rss_kib\":{}}}\n",
        settings.label, pid, tree.size(), startup_ms, rss);
  } else {
    fmt::print(
        "started pid {} ({} process(es)): first right answer after {:.3f} ms, idle RSS "
        "{:.1f} MiB\n",
        pid, tree.size(), startup_ms, static_cast<double>(rss) / 1024);
  }
  return 0;
}

}  // namespace
}  // namespace kumo::bench

int main(int argc, char** argv) {
  using namespace kumo::bench;
  CLI::App app{"Load generator for servers speaking DynamoDB's protocol (see bench/README.md)"};
  app.require_subcommand(0, 1);
  Settings s;
  std::string workload_help = "Workload:";
  for (const auto& w : workloads()) {
    workload_help += fmt::format("\n  {:14} {}", w.name, w.summary);
  }
  app.add_option("--endpoint", s.endpoint, "Server address, IPV4:PORT")->capture_default_str();
  app.add_option("--workload", s.workload, workload_help)->capture_default_str();
  app.add_option("--connections", s.connections, "Keep-alive connections")->capture_default_str();
  app.add_option("--threads", s.threads, "Event-loop threads (connections are split)")
      ->capture_default_str();
  app.add_option("--duration", s.duration, "Measured time (0: preload only)")
      ->capture_default_str();
  app.add_option("--requests", s.requests,
                 "Measure this many requests (closed loop) instead of --duration");
  app.add_option("--warmup", s.warmup, "Unmeasured time before it")->capture_default_str();
  app.add_option("--rate", s.rate, "Open loop at this many requests/s (default: closed loop)");
  app.add_option("--items", s.config.items, "Keys 0..items-1, preloaded")->capture_default_str();
  app.add_option("--item-bytes", s.config.item_bytes, "Approximate item size")
      ->capture_default_str();
  app.add_option("--table", s.config.table, "Table name")->capture_default_str();
  app.add_option("--warm-throughput", s.config.warm_throughput,
                 "Create the table with this WarmThroughput (units/s, read and write)");
  app.add_option("--stream", s.config.stream_view,
                 "Create the table with its stream enabled, of this view type")
      ->check(CLI::IsMember({"KEYS_ONLY", "NEW_IMAGE", "OLD_IMAGE", "NEW_AND_OLD_IMAGES"}));
  app.add_flag("!--no-preload", s.preload, "Skip creating and loading the table");
  app.add_option("--preload-connections", s.preload_connections,
                 "Connections for the preload (default: --connections)");
  app.add_option("--preload-batch", s.preload_batch,
                 "Items per preload request: 1 sends PutItems, 2-25 BatchWriteItems")
      ->capture_default_str();
  app.add_flag("!--status-only", s.check_body,
               "Check only the HTTP status (for a server that answers a fixed body)");
  app.add_option("--server-pid", s.server_pid, "Server process, for its CPU time and memory");
  app.add_option("--seed", s.seed, "Random seed")->capture_default_str();
  app.add_option("--label", s.label, "Name printed with the results");
  app.add_flag("--json", s.json, "Print one JSON object");

  LaunchSettings l;
  auto* launch_cmd = app.add_subcommand(
      "launch", "Start a server, report time to its first right answer and its idle RSS");
  launch_cmd->add_option("--endpoint", l.endpoint, "Where it will listen")->capture_default_str();
  launch_cmd->add_option("--probe", l.probe, "listtables (DynamoDB) or health (GET /)")
      ->capture_default_str();
  launch_cmd->add_option("--timeout", l.timeout, "Give up after")->capture_default_str();
  launch_cmd->add_option("--settle", l.settle, "Wait before reading idle RSS")
      ->capture_default_str();
  launch_cmd->add_option("--pid-file", l.pid_file, "Write the server's pid here");
  launch_cmd->add_option("--log", l.log, "Server's stdout and stderr")->capture_default_str();
  launch_cmd->add_option("--cpu", l.cpu, "Pin the server to this CPU");
  launch_cmd->add_option("--label", l.label, "Name printed with the results");
  launch_cmd->add_flag("--json", l.json, "Print one JSON object");
  launch_cmd->add_option("command", l.command, "Server command line, after --")->required();

  CLI11_PARSE(app, argc, argv);
  // Tells this run's ClientRequestTokens from those of earlier runs against the server.
  s.config.run_nonce =
      static_cast<std::uint64_t>(std::chrono::system_clock::now().time_since_epoch() /
                                 std::chrono::nanoseconds(1)) ^
      (static_cast<std::uint64_t>(::getpid()) << 40);
  try {
    return launch_cmd->parsed() ? launch(l) : run(s);
  } catch (const std::exception& error) {
    fmt::print(stderr, "kumo-bench: {}\n", error.what());
    return 1;
  }
}
