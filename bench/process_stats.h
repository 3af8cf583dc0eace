// CPU time and memory of the server under test, read from /proc, and of this process.
// A server may be several processes (nginx's master and worker), so each figure is the
// sum over a process and all its descendants.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace kumo::bench {

// `root` and every process descended from it, alive now. Empty if `root` is gone.
std::vector<pid_t> process_tree(pid_t root);

// User plus system CPU time used so far by `pids` (threads included); processes that have
// exited count as zero.
std::chrono::nanoseconds cpu_time(const std::vector<pid_t>& pids);

// The CPU time `pids` have used so far, read two ways: from each process's counters in
// /proc/PID/stat, which keep the time of threads that have exited but count in clock ticks
// (10 ms), and from each thread's own counter in nanoseconds (/proc/PID/task/TID/schedstat).
struct CpuSample {
  std::chrono::nanoseconds ticks{0};
  std::chrono::nanoseconds threads{0};
  std::vector<pid_t> thread_ids;  // sorted; empty when a thread's counter could not be read
};
CpuSample cpu_sample(const std::vector<pid_t>& pids);

// The CPU time used between two samples: to the nanosecond when the same threads were
// there at both (so no thread took its time away with it), else from the tick counts. A
// run of a few thousand requests uses 100 ms or so, which ticks measure to 10%.
std::chrono::nanoseconds cpu_between(const CpuSample& before, const CpuSample& after);

// Time the threads of `pids` have spent so far ready to run but waiting for a core, added
// up (/proc/PID/task/TID/schedstat): while it grows, something else holds the core the
// server wants. Threads that have exited count as zero.
std::chrono::nanoseconds run_queue_wait(const std::vector<pid_t>& pids);

// One thread of any process on the machine, kernel threads included, and the CPU time it
// has used so far (/proc/PID/task/TID/schedstat, in nanoseconds).
struct ThreadTime {
  pid_t process = 0;
  pid_t thread = 0;
  std::string name;  // the thread's command name, e.g. "kdamond.0" or "ksoftirqd/0"
  std::chrono::nanoseconds on_cpu{0};
};

// Every thread alive now, in no particular order.
std::vector<ThreadTime> all_thread_times();

// The threads outside `excluded` (process ids) that used CPU between two snapshots from
// all_thread_times(), the busiest first, each with the CPU it used in between. A thread
// that exited in between is missed; one that started in between counts all its time.
std::vector<ThreadTime> busiest_threads_between(const std::vector<ThreadTime>& before,
                                                const std::vector<ThreadTime>& after,
                                                const std::vector<pid_t>& excluded);

// Resident set size of `pids` added up, in KiB. Shared pages are counted once per
// process, so for several processes this overstates a little.
std::uint64_t rss_kib(const std::vector<pid_t>& pids);

// User plus system CPU time used so far by this process, all threads.
std::chrono::nanoseconds own_cpu_time();

// CPU time every core of the machine has spent busy (not idle or waiting for I/O) since
// boot, added up: what the server and the client used, and whatever else ran beside them.
std::chrono::nanoseconds machine_busy_time();

}  // namespace kumo::bench
