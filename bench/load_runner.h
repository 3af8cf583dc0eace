// The load loop: N keep-alive connections on one Boost.Asio event loop (one thread),
// each carrying one request at a time.
//
// Closed loop: a connection sends its next request as soon as the previous answer is in;
// latency runs from send to answer. Open loop: requests are due at a fixed rate,
// request i at start + i/rate, whether or not a connection is free; latency runs from the
// time a request was due, so time spent queued behind a slow server counts, as a user
// would feel it (the "coordinated omission" a closed loop hides). An open loop spins
// rather than sleeps between requests, so it keeps its core fully busy.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "histogram.h"
#include "http_client.h"
#include "workloads.h"

namespace kumo::bench {

using Clock = std::chrono::steady_clock;

struct RunOptions {
  Endpoint endpoint;
  unsigned connections = 64;
  // Requests per second for an open loop; 0 for a closed loop.
  double rate = 0;
  // Timed run: from `start`, answers completing in [measure_from, measure_until) are
  // counted; no request is sent after measure_until.
  Clock::time_point start;
  Clock::time_point measure_from;
  Clock::time_point measure_until;
  // Counted run (preloading) instead, when non-zero: exactly this many requests, closed
  // loop, all counted; only measure_until applies, as a deadline.
  std::uint64_t count = 0;
  // When false only the status is checked (for servers that answer a fixed body).
  bool check_body = true;
  // How long answers still in flight at the end are waited for.
  std::chrono::milliseconds drain = std::chrono::milliseconds(2000);
};

struct RunResult {
  std::uint64_t ok = 0;                              // right answers in the window
  std::uint64_t errors = 0;                          // failures in the window
  std::uint64_t errors_outside = 0;                  // failures during warm-up or drain
  std::map<std::string, std::uint64_t> error_kinds;  // e.g. "HTTP 400" → count
  std::vector<std::string> error_samples;            // the first few, with their bodies
  std::uint64_t unfinished = 0;  // requests still unanswered when the run gave up
  std::uint64_t unsent = 0;      // open loop: requests due by the end but never sent
  // Open loop: the longest time a request due in the window waited for the load generator
  // itself, with a connection free (not for the server): when the generator loses its
  // core, the requests it sends late count that delay as the server's latency.
  std::chrono::nanoseconds client_late_max{0};
  std::uint64_t reconnects = 0;
  // True when the run stopped early because no connection could be made for seconds.
  bool gave_up = false;
  LatencyHistogram latency;  // of right answers in the window, nanoseconds

  void merge(const RunResult& other);
};

// Makes request number `index` (counted per run, from 0) into `op`.
using OperationSource = std::function<void(std::uint64_t index, Operation& op)>;

// Runs the load on the calling thread and returns what it saw. `signer` is used by this
// thread only.
RunResult run_load(const RunOptions& options, const OperationSource& source, SigV4Signer& signer);

}  // namespace kumo::bench
