// Partitions of tables and GSIs (docs/capacity.md): their initial maps, the doubling a
// throughput raise needs, splits by size and heat, the bytes each partition holds, and the
// per-second capacity tick on the kumo-capacity thread.
#include <pthread.h>
#include <spdlog/spdlog.h>

#include <algorithm>

#include "codec/key_codec.h"
#include "engine/engine.h"
#include "engine/index_keys.h"

namespace kumo::engine {
namespace {

constexpr std::int64_t kSecondNs = 1'000'000'000;

const capacity::CapacityOptions& default_options() {
  static const capacity::CapacityOptions options;
  return options;
}

// The partitions a table or GSI needs: its provisioned throughput and its warm throughput,
// which is at least the initial on-demand throughput (on-demand) or the provisioned
// throughput.
std::size_t needed_partitions(bool provisioned, const ProvisionedThroughput& throughput,
                              const CapacitySettings& settings,
                              const capacity::CapacityOptions& options) {
  const std::int64_t rcu = throughput.read_capacity_units;
  const std::int64_t wcu = throughput.write_capacity_units;
  const std::int64_t warm_read =
      std::max(settings.warm_read, provisioned ? rcu : options.on_demand_initial_read);
  const std::int64_t warm_write =
      std::max(settings.warm_write, provisioned ? wcu : options.on_demand_initial_write);
  return std::min(
      partitions_needed(provisioned, rcu, wcu, warm_read, warm_write, options.partition),
      std::max<std::size_t>(1, options.max_partitions));
}

// Gives a resource without partitions its initial map; with `grow`, doubles an existing
// map until it has what the throughput needs (never beyond the most allowed).
void fit(CapacitySettings& settings, std::size_t needed, bool grow, double now,
         std::uint32_t* next_id, std::size_t max_partitions) {
  PartitionMap& map = settings.partitions;
  if (map.ranges.empty()) {
    map = even_partitions(needed, now, next_id);
    return;
  }
  if (!grow) return;
  while (map.size() < needed && map.size() * 2 <= max_partitions) {
    const std::size_t before = map.size();
    doubled(map, now, next_id, &settings.splits);
    if (map.size() == before) break;  // nothing could split
  }
}

CapacitySettings* settings_of(TableDefinition& table, std::uint32_t index_id) {
  if (index_id == 0) return &table.capacity;
  for (auto& index : table.global_indexes) {
    if (index.id == index_id) return &index.capacity;
  }
  return nullptr;
}

const CapacitySettings* settings_of(const TableDefinition& table, std::uint32_t index_id) {
  return settings_of(const_cast<TableDefinition&>(table), index_id);
}

// The index in `map` of partition `id`, or nullopt.
std::optional<std::size_t> position(const PartitionMap& map, std::uint32_t id) {
  for (std::size_t i = 0; i < map.ranges.size(); ++i) {
    if (map.ranges[i].id == id) return i;
  }
  return std::nullopt;
}

// The first token at which the bytes before it reach half of the whole; nullopt when the
// range holds fewer than two partition keys (it cannot split).
std::optional<std::uint64_t> half_token(const std::vector<capacity::TokenBytes>& runs,
                                        std::uint64_t total) {
  std::uint64_t below = 0;
  for (std::size_t i = 1; i < runs.size(); ++i) {
    below += runs[i - 1].bytes;
    if (below * 2 >= total) return runs[i].token;
  }
  return runs.size() >= 2 ? std::optional<std::uint64_t>(runs.back().token) : std::nullopt;
}

}  // namespace

std::vector<std::uint64_t> new_boundaries(const PartitionMap* before, const PartitionMap& after) {
  std::vector<std::uint64_t> out;
  for (const PartitionRange& range : after.ranges) {
    if (range.first_token == 0) continue;
    const bool known = before && std::any_of(before->ranges.begin(), before->ranges.end(),
                                             [&](const PartitionRange& r) {
                                               return r.first_token == range.first_token;
                                             });
    if (!known) out.push_back(range.first_token);
  }
  return out;
}

void Engine::fit_partitions(TableDefinition& table, bool grow) const {
  const capacity::CapacityOptions& options = capacity() ? capacity()->options() : default_options();
  const bool provisioned = table.billing_mode == BillingMode::PROVISIONED;
  const double now = clock_->now();
  fit(table.capacity, needed_partitions(provisioned, table.throughput, table.capacity, options),
      grow, now, &table.next_partition_id, options.max_partitions);
  for (auto& index : table.global_indexes) {
    fit(index.capacity, needed_partitions(provisioned, index.throughput, index.capacity, options),
        grow, now, &table.next_partition_id, options.max_partitions);
  }
}

void Engine::attach_meters(TableDefinition& table) const {
  if (capacity()) table.meters = capacity()->attach(table);
}

TablePtr Engine::configure_meters(TablePtr table) const {
  if (capacity() && table && table->meters) capacity()->configure(*table->meters, *table);
  return table;
}

std::uint64_t Engine::partition_walk(const TableDefinition& table, std::uint32_t index_id,
                                     std::uint64_t first, std::optional<std::uint64_t> end,
                                     std::vector<capacity::TokenBytes>* runs) const {
  const std::string prefix = index_id == 0 ? codec::space_prefix(table.id, codec::Space::kItems)
                                           : index_prefix(table, index_id);
  std::string lower = prefix, upper = prefix;
  codec::append_u64(&lower, first);
  if (end) {
    codec::append_u64(&upper, *end);
  } else {
    upper = codec::prefix_end(prefix);
  }
  std::uint64_t total = 0;
  storage_->visit_range(std::move(lower), std::move(upper), true,
                        [&](std::string_view key, std::string_view value) {
                          std::optional<StoredItem> item = StoredItem::from_bytes(value);
                          if (!item || key.size() < prefix.size() + 8) return true;
                          const std::uint64_t bytes = item->size() + kItemOverheadBytes;
                          total += bytes;
                          if (!runs) return true;
                          const std::uint64_t token = codec::read_u64(key.substr(prefix.size()));
                          if (runs->empty() || runs->back().token != token) {
                            runs->push_back({token, 0, {}});
                          }
                          runs->back().bytes += bytes;
                          return true;
                        });
  return total;
}

void Engine::walk_partition_sizes() {
  capacity::CapacityManager* manager = capacity();
  if (!manager) return;
  bool more = false;
  for (const auto& name : catalog_.list("", SIZE_MAX, &more)) {
    TablePtr table = catalog_.find(name);
    if (!table || !table->meters) continue;
    std::vector<std::uint32_t> resources{0};
    for (const auto& index : table->global_indexes) resources.push_back(index.id);
    for (std::uint32_t id : resources) {
      capacity::ResourceMeter* resource = capacity::CapacityManager::resource(*table->meters, id);
      const CapacitySettings* settings = settings_of(*table, id);
      if (!resource || !settings) continue;
      const PartitionMap& map = settings->partitions;
      for (std::size_t i = 0; i < map.size(); ++i) {
        const std::uint64_t first = map.ranges[i].first_token;
        const std::uint64_t bytes = partition_walk(*table, id, first, map.end_token(i), nullptr);
        if (bytes) manager->add_bytes(*resource, first, static_cast<std::int64_t>(bytes));
      }
    }
  }
}

void Engine::split_partition(const capacity::SplitPlan& plan) {
  TablePtr table = catalog_.find_id(plan.table_id);
  const CapacitySettings* settings = table ? settings_of(*table, plan.index_id) : nullptr;
  if (!settings) return;
  const std::optional<std::size_t> i = position(settings->partitions, plan.partition);
  const std::size_t max_partitions =
      capacity() ? capacity()->options().max_partitions : default_options().max_partitions;
  if (!i || settings->partitions.size() >= max_partitions) return;
  const std::uint64_t first = settings->partitions.ranges[*i].first_token;
  const std::optional<std::uint64_t> end = settings->partitions.end_token(*i);
  std::vector<capacity::TokenBytes> runs;
  const std::uint64_t total = partition_walk(*table, plan.index_id, first, end, &runs);
  const std::optional<std::uint64_t> at = plan.at ? plan.at : half_token(runs, total);
  if (!at || *at <= first || (end && *at >= *end)) return;
  const double now = clock_->now();
  bool split = false;
  TablePtr after = catalog_.update(table->name, [&](TableDefinition& t) {
    CapacitySettings* c = t.id == plan.table_id ? settings_of(t, plan.index_id) : nullptr;
    const std::optional<std::size_t> n = c ? position(c->partitions, plan.partition) : std::nullopt;
    if (!n) return;
    c->splits.push_back(split_at(c->partitions, *n, *at, plan.cause, now, &t.next_partition_id));
    if (c->splits.size() > kSplitLog) c->splits.erase(c->splits.begin());
    split = true;
  });
  if (!split) return;
  if (plan.index_id == 0) {
    // The table's items split with it: the storage's partition of them (its own layout),
    // and the stream's shard (on shared storage, when the storage reports its split: the
    // shards follow the partitions that number their records).
    storage_->split_partition(plan.table_id, *at);
    if (!storage_->shared()) note_partition_split(plan.table_id, *at);
  }
  if (!capacity() || !after->meters) return;
  capacity()->configure(*after->meters, *after);
  // The children start with the bytes the walk found on each side of the split.
  capacity::ResourceMeter* resource =
      capacity::CapacityManager::resource(*after->meters, plan.index_id);
  if (!resource) return;
  std::int64_t low = 0;
  for (const auto& run : runs) {
    if (run.token < *at) low += static_cast<std::int64_t>(run.bytes);
  }
  if (low) capacity()->add_bytes(*resource, first, low);
  if (static_cast<std::int64_t>(total) > low) {
    capacity()->add_bytes(*resource, *at, static_cast<std::int64_t>(total) - low);
  }
}

void Engine::run_capacity_plans() {
  capacity::CapacityManager* manager = capacity();
  for (const capacity::SplitPlan& plan : manager->take_split_plans()) {
    try {
      split_partition(plan);
    } catch (const std::exception& e) {
      spdlog::warn("split of partition {} of table {} failed: {}", plan.partition, plan.table_id,
                   e.what());
    }
  }
  for (const capacity::PeakRaise& raise : manager->take_peak_raises()) {
    TablePtr table = catalog_.find_id(raise.table_id);
    if (!table) continue;
    try {
      TablePtr after = catalog_.update(table->name, [&](TableDefinition& t) {
        CapacitySettings* c = t.id == raise.table_id ? settings_of(t, raise.index_id) : nullptr;
        if (!c) return;
        c->peak_read = std::max(c->peak_read, raise.peak_read);
        c->peak_write = std::max(c->peak_write, raise.peak_write);
        c->peak_raised = raise.raised;
      });
      if (after->meters) manager->configure(*after->meters, *after);
    } catch (const std::exception& e) {
      spdlog::warn("storing the peak of table {} failed: {}", table->name, e.what());
    }
  }
}

double Engine::advance_clock(double seconds) {
  if (!options_.manual_clock) throw std::logic_error("the clock is not manual");
  MutexLock lock(clock_mutex_);
  const std::int64_t before = options_.manual_clock->now_ns();
  const std::int64_t after =
      options_.manual_clock->advance(static_cast<std::int64_t>(seconds * 1e9 + 0.5));
  if (capacity()) {
    // Every whole second crossed is closed in order, and what it decided done before the
    // next; beyond an hour, the earlier seconds were idle as far as anything kept is
    // concerned, so only the last hour is ticked.
    std::int64_t first = before / kSecondNs + 1;
    const std::int64_t last = after / kSecondNs;
    if (last - first > 3600) first = last - 3600;
    for (std::int64_t s = first; s <= last; ++s) {
      capacity()->tick(s * kSecondNs);
      run_capacity_plans();
    }
  }
  {
    MutexLock wake(maintenance_mutex_);
    clock_moved_ = true;
  }
  maintenance_wake_.notify_all();
  return static_cast<double>(after) / 1e9;
}

void Engine::run_capacity_clock() {
  pthread_setname_np(pthread_self(), "kumo-capacity");
  walk_partition_sizes();
  std::int64_t next = clock_->now_ns() / kSecondNs * kSecondNs + kSecondNs;
  for (;;) {
    {
      MutexLock lock(maintenance_mutex_);
      while (!stopping_) {
        const std::int64_t wait = next - clock_->now_ns();
        if (wait <= 0) break;
        maintenance_wake_.wait_for(lock, std::chrono::nanoseconds(wait));
      }
      if (stopping_) return;
    }
    MutexLock clock_lock(clock_mutex_);
    capacity()->tick(next);
    run_capacity_plans();
    next += kSecondNs;
    // Seconds missed while the machine was suspended are idle: tick from the current one.
    const std::int64_t now = clock_->now_ns();
    if (now - next > 3600 * kSecondNs) next = now / kSecondNs * kSecondNs;
  }
}

}  // namespace kumo::engine
