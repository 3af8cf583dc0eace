#include "capacity/manager.h"

#include <algorithm>
#include <unordered_set>
#include <utility>

#include "capacity/manager_state.h"
#include "capacity/messages.h"

namespace kumo::capacity {
namespace {

// One access in --key-sample is logged for the top-keys lists.
bool sampled(std::uint32_t every) {
  thread_local std::uint32_t count = 0;
  if (every == 0) return false;
  if (++count < every) return false;
  count = 0;
  return true;
}

PartitionMeter* partition_for(const ResourceMeter& r, std::uint64_t token) {
  const LiveMap* map = r.live_map();
  return map == nullptr ? nullptr : map->find(token);
}

}  // namespace

ResourceMeter* any_resource(const TableMeters& meters, std::uint32_t index_id) {
  for (const auto& r : meters.resources) {
    if (r->index_id == index_id) return r.get();
  }
  return nullptr;
}

std::vector<ResourceMeter*> live_resources(const TableMeters& meters) {
  std::vector<ResourceMeter*> all{meters.table};
  if (const auto* gsis = meters.gsis.load(std::memory_order_acquire)) {
    all.insert(all.end(), gsis->begin(), gsis->end());
  }
  return all;
}

std::string_view partition_status_name(PartitionStatus status) {
  switch (status) {
    case PartitionStatus::kOk:
      return "ok";
    case PartitionStatus::kHotKey:
      return "hot-key";
    case PartitionStatus::kUnsplittable:
      return "unsplittable";
    case PartitionStatus::kSplitLimit:
      return "split-limit";
  }
  return "ok";
}

CapacityManager::CapacityManager(CapacityOptions options, const Clock& clock)
    : options_(std::move(options)), clock_(clock), state_(std::make_unique<State>()) {}
CapacityManager::~CapacityManager() = default;

std::shared_ptr<TableMeters> CapacityManager::attach(const TableDefinition& table) {
  auto meters = std::make_shared<TableMeters>();
  std::lock_guard lock(state_->mu);
  meters->serial = state_->next_serial++;
  meters->table_id = table.id;
  meters->name = table.name;
  meters->requests = tally::allocate(TableMeters::kOps * TableMeters::kPerOp);
  auto own = std::make_unique<ResourceMeter>();
  own->table = meters.get();
  own->slots = tally::allocate(ResourceMeter::kSlots);
  meters->table = own.get();
  meters->resources.push_back(std::move(own));
  configure_locked(*meters, table, true);
  state_->tables[meters->serial] = meters;
  return meters;
}

void CapacityManager::configure(TableMeters& meters, const TableDefinition& table) {
  std::lock_guard lock(state_->mu);
  configure_locked(meters, table, false);
}

void CapacityManager::configure_locked(TableMeters& meters, const TableDefinition& table,
                                       bool created) {
  meters.definition = table;
  meters.definition.meters.reset();  // no cycle: the definition's meters are these
  meters.provisioned.store(table.billing_mode == BillingMode::PROVISIONED,
                           std::memory_order_relaxed);
  ResourceMeter& own = *meters.table;
  own.hash = {table.key.hash};
  own.range.clear();
  if (table.key.range) own.range.push_back(*table.key.range);
  configure_resource(own, table, table.capacity, table.throughput, created);

  auto gsis = std::make_unique<std::vector<ResourceMeter*>>();
  for (const auto& index : table.global_indexes) {
    ResourceMeter* r = any_resource(meters, index.id);
    const bool fresh = r == nullptr;
    if (fresh) {
      auto made = std::make_unique<ResourceMeter>();
      made->table = &meters;
      made->index_id = index.id;
      made->index_name = index.name;
      made->gsi = true;
      made->slots = tally::allocate(ResourceMeter::kSlots);
      r = made.get();
      meters.resources.push_back(std::move(made));
    }
    r->hash = index.hash;
    r->range = index.range;
    configure_resource(*r, table, index.capacity, index.throughput, fresh);
    gsis->push_back(r);
  }
  const auto* current = meters.gsis.load(std::memory_order_relaxed);
  if (current == nullptr || *current != *gsis) {
    meters.gsis.store(gsis.get(), std::memory_order_release);
    meters.gsi_lists.push_back(std::move(gsis));  // earlier lists live on for racing readers
  }
}

void CapacityManager::configure_resource(ResourceMeter& r, const TableDefinition& table,
                                         const CapacitySettings& settings,
                                         const ProvisionedThroughput& throughput, bool created) {
  const std::int64_t now = clock_.now_ns();
  const bool on_demand = table.billing_mode == BillingMode::PAY_PER_REQUEST;
  for (int d = 0; d < kDirs; ++d) {
    auto& dir = r.dirs[d];
    const bool read = d == 0;
    ResourceSettings s;
    s.on_demand = on_demand;
    s.provisioned = read ? throughput.read_capacity_units : throughput.write_capacity_units;
    if (on_demand) s.max = read ? settings.max_read : settings.max_write;
    s.warm = read ? settings.warm_read : settings.warm_write;
    // The previous peak never decreases, also while a raise is on its way to the catalog.
    s.peak = std::max(dir.settings.peak, read ? settings.peak_read : settings.peak_write);
    dir.settings = s;
    dir.limit = resource_limit(options_, dir_at(d), s);
    if (created) {
      dir.bucket.configure(dir.limit.rate, dir.limit.capacity_seconds, now, dir.limit.start_level);
    } else {
      dir.bucket.configure(dir.limit.rate, dir.limit.capacity_seconds, now);
    }
    dir.binding.store(dir.limit.binding, std::memory_order_relaxed);
  }
  r.peak_anchor = std::max(r.peak_anchor, settings.peak_raised);
  if (r.peak_anchor <= 0) {
    // Creation counts as a raise of the peak: the engine clock's time when the meters were
    // made (the catalog's creation time is on the wall clock).
    r.peak_anchor = static_cast<double>(now) / 1e9;
  }
  r.insights = settings.insights;
  r.insights_on.store(settings.insights.state == InsightsSettings::State::kEnabled,
                      std::memory_order_relaxed);
  const LiveMap* live = r.live_map();
  if (!settings.partitions.ranges.empty()) {
    if (live == nullptr || live->map != settings.partitions) install(r, settings.partitions);
  } else if (live == nullptr) {
    // A definition without partitions (never stored by the engine): the initial count, with
    // ids of their own.
    std::uint32_t next = 0x80000000u;
    install(r,
            even_partitions(partitions_needed(!on_demand, throughput.read_capacity_units,
                                              throughput.write_capacity_units, r.dirs[0].limit.warm,
                                              r.dirs[1].limit.warm, options_.partition),
                            static_cast<double>(now) / 1e9, &next));
  }
}

namespace {

// After a throughput split (partitions doubled by UpdateTable), a retired partition's bytes
// go in equal shares to the partitions now covering its range. Size and heat splits walk
// the parent's range, and the walk gives the children their bytes (add_bytes).
void inherit_bytes(const LiveMap& old, const LiveMap& live,
                   const std::vector<PartitionMeter*>& fresh) {
  const std::unordered_set<const PartitionMeter*> kept(live.parts.begin(), live.parts.end());
  for (PartitionMeter* parent : old.parts) {
    if (kept.count(parent) != 0) continue;
    std::vector<PartitionMeter*> children;
    for (PartitionMeter* child : fresh) {
      if (child->range.cause == SplitCause::kThroughput &&
          child->range.first_token >= parent->range.first_token &&
          (!parent->end || child->range.first_token < *parent->end)) {
        children.push_back(child);
      }
    }
    if (children.empty()) continue;
    const std::int64_t bytes = tally::sum(PartitionMeter::bytes(parent->slots));
    const auto share = bytes / static_cast<std::int64_t>(children.size());
    for (std::size_t c = 0; c < children.size(); ++c) {
      const std::int64_t rest = bytes - share * static_cast<std::int64_t>(children.size());
      tally::add(PartitionMeter::bytes(children[c]->slots),
                 share + (c + 1 == children.size() ? rest : 0));
    }
  }
}

}  // namespace

void CapacityManager::install(ResourceMeter& r, const PartitionMap& map) {
  const std::int64_t now = clock_.now_ns();
  const LiveMap* old = r.live_map();
  auto live = std::make_unique<LiveMap>();
  live->map = map;
  std::vector<PartitionMeter*> fresh;
  for (std::size_t i = 0; i < map.ranges.size(); ++i) {
    const PartitionRange& range = map.ranges[i];
    PartitionMeter*& p = r.by_id[range.id];
    if (p == nullptr) {
      // A new partition starts with full buckets and empty rings.
      auto made = std::make_unique<PartitionMeter>();
      made->slots = tally::allocate(PartitionMeter::kSlots);
      for (int d = 0; d < kDirs; ++d) {
        const auto ceiling = static_cast<double>(partition_ceiling(options_, dir_at(d)));
        made->buckets[d].configure(ceiling, 1, now, static_cast<Milli>(ceiling * 1000));
      }
      p = made.get();
      // A partition's range never changes (a split makes new ones), so requests may read it.
      made->range = range;
      made->end = map.end_token(i);
      r.partitions.push_back(std::move(made));
      fresh.push_back(p);
    }
    live->parts.push_back(p);
    live->firsts.push_back(range.first_token);
  }
  if (old != nullptr) {
    inherit_bytes(*old, *live, fresh);
    if (map.size() > old->map.size() && !fresh.empty()) {
      r.splits[static_cast<std::size_t>(fresh.back()->range.cause)] +=
          static_cast<std::int64_t>(map.size() - old->map.size());
    }
  }
  r.live.store(live.get(), std::memory_order_release);
  r.maps.push_back(std::move(live));  // retired maps live on: a request may still hold one
}

void CapacityManager::detach(TableMeters& meters) {
  std::lock_guard lock(state_->mu);
  meters.detached = true;
  state_->tables.erase(meters.serial);
}

ResourceMeter* CapacityManager::resource(TableMeters& meters, std::uint32_t index_id) {
  if (index_id == 0) return meters.table;
  const auto* gsis = meters.gsis.load(std::memory_order_acquire);
  if (gsis == nullptr) return nullptr;
  for (ResourceMeter* r : *gsis) {
    if (r->index_id == index_id) return r;
  }
  return nullptr;
}

void CapacityManager::admit(const Access& access, Operation, bool insights) {
  if (!enforcing() || access.resource == nullptr) return;
  ResourceMeter& r = *access.resource;
  const std::int64_t now = clock_.now_ns();
  const int d = dir_index(access.dir);
  PartitionMeter* p = partition_for(r, access.token);
  // The resource first, then the partition for the key: the first refusal is reported.
  if (!r.dirs[d].bucket.can_take(access.min, now)) {
    refuse(r, p, access, r.dirs[d].binding.load(std::memory_order_relaxed), insights);
  }
  if (p != nullptr && !p->buckets[d].can_take(access.min, now)) {
    refuse(r, p, access, Limit::kKeyRange, insights);
  }
}

void CapacityManager::refuse(ResourceMeter& r, PartitionMeter* p, const Access& access, Limit limit,
                             bool insights) {
  tally::add(r.throttles(access.dir, limit), 1);
  if (p != nullptr) tally::add(PartitionMeter::throttles(p->slots, access.dir, limit), 1);
  log_key(r, p, access, 0, true, insights);
  throw throttle_error(Reason{r.gsi, access.dir, limit},
                       r.table->provisioned.load(std::memory_order_relaxed),
                       resource_arn(options_, r.table->name, r.index_name), options_);
}

void CapacityManager::log_key(ResourceMeter& r, PartitionMeter* p, const Access& access,
                              Milli units, bool refused, bool insights) {
  if (p == nullptr || (access.partition_key.empty() && access.key.empty())) return;
  std::uint8_t flags = refused ? KeyEvent::kRefused : 0;
  // A base write held back by a GSI counts against no key in Contributor Insights.
  const bool backpressure = refused && r.gsi && access.dir == Dir::kWrite;
  if (backpressure) flags |= KeyEvent::kBackpressure;
  if (insights && r.insights_on.load(std::memory_order_relaxed)) flags |= KeyEvent::kInsights;
  if (flags == 0 && !p->warm.load(std::memory_order_relaxed)) {
    if (!sampled(options_.key_sample)) return;
    flags |= KeyEvent::kSampled;
  }
  std::string_view partition_key = access.partition_key, sort_key = access.sort_key;
  if (partition_key.empty() && access.cutter.cut != nullptr) {
    access.cutter.cut(access.cutter.shape, access.key, &partition_key, &sort_key);
  }
  if (partition_key.empty()) return;
  state_->keys.push({r.table->serial, r.index_id, p->range.id, access.token, units, access.dir,
                     flags, partition_key, sort_key});
}

void CapacityManager::charge(const Access& access, Milli units, Operation, bool insights) {
  if (options_.mode == Mode::kOff || access.resource == nullptr) return;
  ResourceMeter& r = *access.resource;
  tally::add(r.consumed(access.dir), units);
  if (access.dir == Dir::kWrite) tally::add(r.events(Dir::kWrite), 1);
  PartitionMeter* p = partition_for(r, access.token);
  if (p != nullptr) tally::add(PartitionMeter::consumed(p->slots, access.dir), units);
  if (enforcing()) {
    const std::int64_t now = clock_.now_ns();
    const int d = dir_index(access.dir);
    r.dirs[d].bucket.take(units, now);
    if (p != nullptr) p->buckets[d].take(units, now);
  }
  log_key(r, p, access, units, false, insights);
}

void CapacityManager::charge_page(ResourceMeter& r, Dir dir, std::span<const TokenBytes> parts,
                                  Milli units, Operation, bool insights, KeyCutter cutter) {
  if (options_.mode == Mode::kOff) return;
  tally::add(r.consumed(dir), units);
  const bool enforce = enforcing();
  const std::int64_t now = enforce ? clock_.now_ns() : 0;
  const int d = dir_index(dir);
  if (enforce) r.dirs[d].bucket.take(units, now);
  const LiveMap* map = r.live_map();
  if (map == nullptr || map->parts.empty()) return;
  auto debit = [&](std::uint64_t token, Milli share, const std::string* key) {
    PartitionMeter* p = map->find(token);
    tally::add(PartitionMeter::consumed(p->slots, dir), share);
    if (enforce) p->buckets[d].take(share, now);
    if (key != nullptr && !key->empty() && cutter.cut != nullptr) {
      Access access;
      access.resource = &r;
      access.token = token;
      access.dir = dir;
      access.key = *key;
      access.cutter = cutter;
      log_key(r, p, access, share, false, insights);
    }
  };
  if (parts.empty()) return debit(0, units, nullptr);
  // Shares in proportion to the bytes read, rounded down, the remainder to the last.
  std::size_t total = 0;
  for (const auto& part : parts) total += part.bytes;
  Milli given = 0;
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    const Milli share =
        total == 0
            ? 0
            : static_cast<Milli>(static_cast<unsigned __int128>(units) * parts[i].bytes / total);
    if (share != 0) debit(parts[i].token, share, &parts[i].key);
    given += share;
  }
  debit(parts.back().token, units - given, &parts.back().key);
}

void CapacityManager::add_bytes(ResourceMeter& r, std::uint64_t token, std::int64_t delta) {
  if (options_.mode == Mode::kOff) return;
  if (PartitionMeter* p = partition_for(r, token))
    tally::add(PartitionMeter::bytes(p->slots), delta);
}

void CapacityManager::record_request(TableMeters* meters, const RequestOutcome& o) {
  if (options_.mode == Mode::kOff) return;
  if (meters == nullptr) {
    if (o.user_error) tally::add(state_->user_errors, 1);
    return;
  }
  auto count = [&](int counter, std::int64_t n) {
    if (n != 0) tally::add(meters->counter(o.op, counter), n);
  };
  count(TableMeters::kThrottled, o.throttled ? 1 : 0);
  count(TableMeters::kConditional, o.conditional_check_failed ? 1 : 0);
  count(TableMeters::kUser, o.user_error ? 1 : 0);
  count(TableMeters::kSystem, o.system_error ? 1 : 0);
  count(TableMeters::kReturned, static_cast<std::int64_t>(o.returned_items));
  if (o.throttled || o.conditional_check_failed || o.user_error || o.system_error) return;
  count(TableMeters::kRequests, 1);
  count(TableMeters::kLatencyNs, o.latency_ns);
  const auto bound =
      std::lower_bound(kLatencyBoundsNs.begin(), kLatencyBoundsNs.end(), o.latency_ns);
  count(TableMeters::kHistogram + static_cast<int>(bound - kLatencyBoundsNs.begin()), 1);
}

std::vector<SplitPlan> CapacityManager::take_split_plans() {
  std::lock_guard lock(state_->mu);
  return std::exchange(state_->plans, {});
}

std::vector<PeakRaise> CapacityManager::take_peak_raises() {
  std::lock_guard lock(state_->mu);
  return std::exchange(state_->raises, {});
}

void CapacityManager::set_item_count_source(
    std::function<std::optional<std::int64_t>(std::uint32_t)> source) {
  std::lock_guard lock(state_->mu);
  state_->item_count = std::move(source);
}

}  // namespace kumo::capacity
