// kumo-rados-ceiling: what a Ceph pool itself serves of the work one GetItem and one
// PutItem of Kumo's RADOS back end ask of it, with no Kumo in between: the ceiling Kumo
// over RADOS is measured against (bench/README.md).
//
//   getitem: one omap_get_vals_by_keys of one item key of a partition object;
//   putitem: one guarded compound op on it: omap_cmp (the partition is open) + omap_set of
//            the item (about --item-bytes).
//
// --concurrency threads each run one operation after another (as Kumo's I/O threads do),
// for --duration seconds after a --warmup; items are spread over --partitions objects as
// Kumo spreads them over a table's partitions.
#include <rados/librados.hpp>

#include <CLI/CLI.hpp>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

struct Settings {
  std::string conf;
  std::string pool = "kumo";
  std::string workload = "getitem";
  unsigned concurrency = 16;
  double duration = 10;
  double warmup = 2;
  unsigned items = 10000;
  unsigned item_bytes = 200;
  unsigned partitions = 4;
};

std::string item_key(unsigned i) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "item-%08u", i);
  return buf;
}

std::string object_of(unsigned i, unsigned partitions) {
  return "ceiling.p" + std::to_string(std::hash<std::string>{}(item_key(i)) % partitions);
}

int fail(const char* what, int r) {
  std::fprintf(stderr, "kumo-rados-ceiling: %s: error %d\n", what, r);
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  Settings s;
  CLI::App app{"The librados ceiling for Kumo's GetItem and PutItem (see bench/README.md)"};
  app.add_option("--ceph-conf", s.conf, "The cluster's ceph.conf")->required();
  app.add_option("--pool", s.pool, "Pool")->capture_default_str();
  app.add_option("--workload", s.workload, "getitem or putitem")
      ->check(CLI::IsMember({"getitem", "putitem"}))
      ->capture_default_str();
  app.add_option("--concurrency", s.concurrency, "Threads, each one op at a time")
      ->capture_default_str();
  app.add_option("--duration", s.duration, "Measured seconds")->capture_default_str();
  app.add_option("--warmup", s.warmup, "Unmeasured seconds before")->capture_default_str();
  app.add_option("--items", s.items, "Items preloaded")->capture_default_str();
  app.add_option("--item-bytes", s.item_bytes, "Bytes of each item's value")->capture_default_str();
  app.add_option("--partitions", s.partitions, "Objects the items are spread over")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  librados::Rados cluster;
  if (int r = cluster.init2("client.admin", "ceph", 0); r < 0) return fail("init", r);
  if (int r = cluster.conf_read_file(s.conf.c_str()); r < 0) return fail("conf", r);
  if (int r = cluster.connect(); r < 0) return fail("connect", r);
  librados::IoCtx io;
  if (int r = cluster.ioctx_create(s.pool.c_str(), io); r < 0) return fail("pool", r);
  io.set_namespace("kumo-rados-ceiling");

  const std::string value(s.item_bytes, 'v');
  // Preload: each partition open, every item present.
  for (unsigned p = 0; p < s.partitions; ++p) {
    librados::ObjectWriteOperation op;
    librados::bufferlist open;
    open.append("open");
    op.omap_set({{"~state", open}});
    if (int r = io.operate("ceiling.p" + std::to_string(p), &op); r < 0) return fail("preload", r);
  }
  for (unsigned i = 0; i < s.items;) {
    // 100 items per op, per object.
    std::vector<std::map<std::string, librados::bufferlist>> sets(s.partitions);
    for (unsigned n = 0; n < 100 && i < s.items; ++n, ++i) {
      const std::string object = object_of(i, s.partitions);
      sets[std::stoul(object.substr(9))][item_key(i)].append(value);
    }
    for (unsigned p = 0; p < s.partitions; ++p) {
      if (sets[p].empty()) continue;
      librados::ObjectWriteOperation op;
      op.omap_set(sets[p]);
      if (int r = io.operate("ceiling.p" + std::to_string(p), &op); r < 0) {
        return fail("preload", r);
      }
    }
  }

  std::atomic<bool> measuring{false}, stop{false};
  std::atomic<std::uint64_t> done{0}, errors{0};
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < s.concurrency; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(t + 1);
      std::uniform_int_distribution<unsigned> pick(0, s.items - 1);
      librados::bufferlist open, item;
      open.append("open");
      item.append(value);
      while (!stop.load(std::memory_order_relaxed)) {
        const unsigned i = pick(rng);
        const std::string key = item_key(i);
        int r = 0;
        if (s.workload == "getitem") {
          librados::ObjectReadOperation op;
          std::map<std::string, librados::bufferlist> out;
          int rv = 0;
          op.omap_get_vals_by_keys({key}, &out, &rv);
          r = io.operate(object_of(i, s.partitions), &op, nullptr);
        } else {
          librados::ObjectWriteOperation op;
          int cmp = 0;
          op.omap_cmp({{"~state", {open, LIBRADOS_CMPXATTR_OP_EQ}}}, &cmp);
          op.omap_set({{key, item}});
          r = io.operate(object_of(i, s.partitions), &op);
        }
        if (!measuring.load(std::memory_order_relaxed)) continue;
        (r < 0 ? errors : done).fetch_add(1, std::memory_order_relaxed);
      }
    });
  }
  std::this_thread::sleep_for(std::chrono::duration<double>(s.warmup));
  measuring = true;
  const Clock::time_point start = Clock::now();
  std::this_thread::sleep_for(std::chrono::duration<double>(s.duration));
  measuring = false;
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  stop = true;
  for (auto& thread : threads) thread.join();
  std::printf(
      "kumo-rados-ceiling: %s, concurrency %u: %.0f ops/s (%llu ops, %llu errors, %.1f s)\n",
      s.workload.c_str(), s.concurrency, static_cast<double>(done) / seconds,
      static_cast<unsigned long long>(done.load()), static_cast<unsigned long long>(errors.load()),
      seconds);
  for (unsigned p = 0; p < s.partitions; ++p) io.remove("ceiling.p" + std::to_string(p));
  io.close();
  cluster.shutdown();
  return errors == 0 ? 0 : 1;
}
