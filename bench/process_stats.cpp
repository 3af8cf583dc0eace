#include "process_stats.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <unordered_map>

namespace kumo::bench {
namespace {

// The fields of /proc/PID/stat after the command name, which is in parentheses and may
// itself hold spaces and parentheses: field 3 (state) comes first.
std::vector<std::string> stat_fields(pid_t pid) {
  std::ifstream file("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(file, line)) return {};
  const auto close = line.rfind(')');
  if (close == std::string::npos) return {};
  std::istringstream rest(line.substr(close + 1));
  std::vector<std::string> fields;
  for (std::string field; rest >> field;) fields.push_back(field);
  return fields;
}

std::uint64_t to_u64(const std::string& text) {
  std::uint64_t value = 0;
  std::from_chars(text.data(), text.data() + text.size(), value);
  return value;
}

}  // namespace

std::vector<pid_t> process_tree(pid_t root) {
  std::unordered_map<pid_t, std::vector<pid_t>> children;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", error)) {
    const std::string name = entry.path().filename();
    if (name.empty() || !std::all_of(name.begin(), name.end(), ::isdigit)) continue;
    const pid_t pid = static_cast<pid_t>(std::stol(name));
    const auto fields = stat_fields(pid);
    if (fields.size() > 1) children[static_cast<pid_t>(std::stol(fields[1]))].push_back(pid);
  }
  std::vector<pid_t> tree;
  if (stat_fields(root).empty()) return tree;
  tree.push_back(root);
  for (std::size_t i = 0; i < tree.size(); ++i) {
    for (const pid_t child : children[tree[i]]) tree.push_back(child);
  }
  return tree;
}

std::chrono::nanoseconds cpu_time(const std::vector<pid_t>& pids) {
  static const long ticks_per_second = sysconf(_SC_CLK_TCK);
  std::uint64_t ticks = 0;
  for (const pid_t pid : pids) {
    // utime and stime are fields 14 and 15, so 11 and 12 counting from the state.
    const auto fields = stat_fields(pid);
    if (fields.size() > 12) ticks += to_u64(fields[11]) + to_u64(fields[12]);
  }
  return std::chrono::nanoseconds(
      static_cast<std::int64_t>(ticks * 1'000'000'000ULL / ticks_per_second));
}

CpuSample cpu_sample(const std::vector<pid_t>& pids) {
  CpuSample sample;
  sample.ticks = cpu_time(pids);
  bool complete = true;
  for (const pid_t pid : pids) {
    std::error_code error;
    const std::string tasks = "/proc/" + std::to_string(pid) + "/task";
    for (const auto& task : std::filesystem::directory_iterator(tasks, error)) {
      std::ifstream file(task.path() / "schedstat");
      std::uint64_t on_cpu = 0;
      if (!(file >> on_cpu)) {
        complete = false;
        continue;
      }
      sample.threads += std::chrono::nanoseconds(static_cast<std::int64_t>(on_cpu));
      sample.thread_ids.push_back(static_cast<pid_t>(std::stol(task.path().filename())));
    }
    if (error) complete = false;
  }
  std::sort(sample.thread_ids.begin(), sample.thread_ids.end());
  if (!complete) sample.thread_ids.clear();
  return sample;
}

std::chrono::nanoseconds cpu_between(const CpuSample& before, const CpuSample& after) {
  if (!before.thread_ids.empty() && before.thread_ids == after.thread_ids) {
    return after.threads - before.threads;
  }
  return after.ticks - before.ticks;
}

std::chrono::nanoseconds run_queue_wait(const std::vector<pid_t>& pids) {
  std::uint64_t waited = 0;
  for (const pid_t pid : pids) {
    std::error_code error;
    const std::string tasks = "/proc/" + std::to_string(pid) + "/task";
    for (const auto& task : std::filesystem::directory_iterator(tasks, error)) {
      // Time on the CPU, time waiting on a run queue (both in ns), time slices.
      std::ifstream file(task.path() / "schedstat");
      std::uint64_t on_cpu = 0, waiting = 0;
      if (file >> on_cpu >> waiting) waited += waiting;
    }
  }
  return std::chrono::nanoseconds(static_cast<std::int64_t>(waited));
}

std::vector<ThreadTime> all_thread_times() {
  std::vector<ThreadTime> threads;
  std::error_code error;
  for (const auto& process : std::filesystem::directory_iterator("/proc", error)) {
    const std::string pid = process.path().filename();
    if (pid.empty() || !std::all_of(pid.begin(), pid.end(), ::isdigit)) continue;
    std::error_code task_error;
    for (const auto& task :
         std::filesystem::directory_iterator(process.path() / "task", task_error)) {
      ThreadTime thread;
      thread.process = static_cast<pid_t>(std::stol(pid));
      thread.thread = static_cast<pid_t>(std::stol(task.path().filename()));
      std::ifstream schedstat(task.path() / "schedstat");
      std::uint64_t on_cpu = 0;
      if (!(schedstat >> on_cpu)) continue;  // exited meanwhile
      thread.on_cpu = std::chrono::nanoseconds(static_cast<std::int64_t>(on_cpu));
      std::ifstream comm(task.path() / "comm");
      std::getline(comm, thread.name);
      threads.push_back(std::move(thread));
    }
  }
  return threads;
}

std::vector<ThreadTime> busiest_threads_between(const std::vector<ThreadTime>& before,
                                                const std::vector<ThreadTime>& after,
                                                const std::vector<pid_t>& excluded) {
  std::unordered_map<pid_t, std::chrono::nanoseconds> earlier;
  for (const auto& thread : before) earlier[thread.thread] = thread.on_cpu;
  std::vector<ThreadTime> busy;
  for (const auto& thread : after) {
    if (std::find(excluded.begin(), excluded.end(), thread.process) != excluded.end()) continue;
    const auto found = earlier.find(thread.thread);
    ThreadTime used = thread;
    if (found != earlier.end()) used.on_cpu -= found->second;
    if (used.on_cpu.count() > 0) busy.push_back(std::move(used));
  }
  std::sort(busy.begin(), busy.end(),
            [](const ThreadTime& a, const ThreadTime& b) { return a.on_cpu > b.on_cpu; });
  return busy;
}

std::uint64_t rss_kib(const std::vector<pid_t>& pids) {
  std::uint64_t total = 0;
  for (const pid_t pid : pids) {
    std::ifstream file("/proc/" + std::to_string(pid) + "/status");
    for (std::string line; std::getline(file, line);) {
      if (line.rfind("VmRSS:", 0) == 0) {
        std::istringstream value(line.substr(6));
        std::uint64_t kib = 0;
        value >> kib;
        total += kib;
        break;
      }
    }
  }
  return total;
}

std::chrono::nanoseconds machine_busy_time() {
  static const long ticks_per_second = sysconf(_SC_CLK_TCK);
  std::ifstream file("/proc/stat");
  std::string cpu;
  file >> cpu;  // "cpu": the sum over all cores
  // user nice system idle iowait irq softirq steal; guest time is inside user already.
  std::uint64_t ticks[8] = {};
  for (auto& value : ticks) file >> value;
  const std::uint64_t busy = ticks[0] + ticks[1] + ticks[2] + ticks[5] + ticks[6] + ticks[7];
  return std::chrono::nanoseconds(
      static_cast<std::int64_t>(busy * 1'000'000'000ULL / ticks_per_second));
}

std::chrono::nanoseconds own_cpu_time() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const auto to_ns = [](const timeval& t) {
    return std::chrono::seconds(t.tv_sec) + std::chrono::microseconds(t.tv_usec);
  };
  return std::chrono::duration_cast<std::chrono::nanoseconds>(to_ns(usage.ru_utime) +
                                                              to_ns(usage.ru_stime));
}

}  // namespace kumo::bench
