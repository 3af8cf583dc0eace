// The per-second tick: per-second rings, per-minute history, on-demand peaks, report-mode
// bucket simulation, split decisions and Contributor Insights minutes.
#include <algorithm>
#include <cmath>
#include <map>

#include "capacity/manager.h"
#include "capacity/manager_state.h"

namespace kumo::capacity {
namespace {

constexpr std::int64_t kSecondNs = 1'000'000'000;
constexpr std::size_t kPartitionSeconds = 60;
constexpr std::size_t kInsightsTop = 25;

template <typename T>
void push_capped(std::deque<T>& ring, T value, std::size_t cap) {
  ring.push_back(std::move(value));
  while (ring.size() > cap) ring.pop_front();
}

// Seconds a resource's ring keeps: 60, or more when the peak or heat windows are longer.
std::size_t resource_seconds(const CapacityOptions& o) {
  const double longest =
      std::max({60.0, std::ceil(o.on_demand_sustain), std::ceil(o.split_heat_seconds)});
  return static_cast<std::size_t>(std::min(longest, 3600.0));
}

std::int64_t heat_seconds(const CapacityOptions& o) {
  return std::max<std::int64_t>(1, std::llround(o.split_heat_seconds));
}

bool insights_active(const ResourceMeter& r, double now, const CapacityOptions& o) {
  return r.insights.state == InsightsSettings::State::kEnabled &&
         now >= r.insights.changed + o.insights_delay;
}

// In report mode a bucket is run over the second just closed with the second's consumption
// as demand; a second whose demand exceeds the level is a would-be throttle, its excess
// counted and the level stopped at zero.
bool would_throttle(Bucket& bucket, Milli demand, std::int64_t end_ns, Milli* excess) {
  if (bucket.rate() <= 0) return false;
  const Milli level = bucket.level(end_ns);
  if (demand <= level) {
    bucket.take(demand, end_ns);
    return false;
  }
  *excess += demand - std::max<Milli>(level, 0);
  bucket.set_level(0, end_ns);
  return true;
}

std::vector<std::pair<std::string, std::int64_t>> top_list(const KeySummary& summary) {
  std::vector<std::pair<std::string, std::int64_t>> list;
  for (auto& [key, counts] : summary.top(kInsightsTop))
    list.emplace_back(key, summary.weight(counts));
  return list;
}

class Ticker {
 public:
  Ticker(const CapacityOptions& o, CapacityManager::State& s, std::int64_t second,
         std::int64_t idle, std::int64_t end_ns)
      : o_(o),
        s_(s),
        second_(second),
        idle_(idle),
        end_ns_(end_ns),
        now_(static_cast<double>(end_ns) / 1e9) {}

  void drain_keys();
  void resource(TableMeters& t, ResourceMeter& r);

 private:
  void route(const KeyEvent& e);
  void insights_event(ResourceMeter& r, const KeyEvent& e);
  void roll_minute(ResourceMeter& r);
  void roll_insights(ResourceMeter& r);
  void direction(ResourceMeter& r, int d,
                 const std::array<std::int64_t, ResourceMeter::kSlots>& tot);
  void partition(TableMeters& t, ResourceMeter& r, PartitionMeter& p,
                 std::array<bool, kDirs>* would);
  void add_minute(ResourceMeter& r, const PartitionMeter& p,
                  const std::array<std::int64_t, PartitionMeter::kSlots>& tot,
                  const std::array<Milli, kDirs>& units);
  void keep_keys(PartitionMeter& p);
  void cool(PartitionMeter& p, bool hot);
  void size_split(TableMeters& t, ResourceMeter& r, PartitionMeter& p, std::int64_t bytes);
  void heat_split(TableMeters& t, ResourceMeter& r, PartitionMeter& p, Dir dir);
  bool may_split(const ResourceMeter& r, PartitionMeter& p);
  void plan(TableMeters& t, ResourceMeter& r, PartitionMeter& p, std::optional<std::uint64_t> at,
            SplitCause cause);
  void peak(TableMeters& t, ResourceMeter& r);

  const CapacityOptions& o_;
  CapacityManager::State& s_;
  const std::int64_t second_, idle_, end_ns_;
  const double now_;
};

void Ticker::drain_keys() {
  s_.keys.drain([this](const KeyEvent& e) { route(e); });
}

void Ticker::route(const KeyEvent& e) {
  auto table = s_.tables.find(e.table);
  if (table == s_.tables.end()) return;  // detached since
  ResourceMeter* r = any_resource(*table->second, e.index_id);
  if (r == nullptr) return;
  if (e.flags & KeyEvent::kInsights) insights_event(*r, e);
  auto found = r->by_id.find(e.partition);
  if (found == r->by_id.end()) return;
  PartitionMeter& p = *found->second;
  const bool sample = (e.flags & KeyEvent::kSampled) != 0;
  const std::int64_t weight = sample ? std::max<std::uint32_t>(1, o_.key_sample) : 1;
  KeyCounts c;
  c.token = e.token;
  c.partition = e.partition;
  c.estimate = sample;
  const std::string key = summary_key(e.partition_key, e.sort_key);
  if (e.flags & KeyEvent::kRefused) {
    c.throttled = weight;
    p.pending_throttled.add(key, c);
  } else {
    if (sample) {
      c.sampled = e.units * weight;
    } else {
      (e.dir == Dir::kRead ? c.read : c.write) = e.units;
    }
    p.pending_accessed.add(key, c);
  }
}

void Ticker::insights_event(ResourceMeter& r, const KeyEvent& e) {
  if (!insights_active(r, now_, o_)) return;
  roll_insights(r);
  InsightsAccum& acc = r.insights_accum;
  acc.active = true;
  const std::string pk = summary_key(e.partition_key, {});
  const std::string full = summary_key(e.partition_key, e.sort_key);
  const bool sort = !r.range.empty();
  KeyCounts c;
  c.token = e.token;
  c.partition = e.partition;
  if (e.flags & KeyEvent::kRefused) {
    if (e.flags & KeyEvent::kBackpressure) return;
    c.throttled = 1;
    acc.pkt.add(pk, c);
    if (sort) acc.skt.add(full, c);
    return;
  }
  if (r.insights.mode == "THROTTLED_KEYS") return;
  (e.dir == Dir::kRead ? c.read : c.write) = e.units;
  acc.pkc.add(pk, c);
  if (sort) acc.skc.add(full, c);
}

void Ticker::roll_insights(ResourceMeter& r) {
  InsightsAccum& acc = r.insights_accum;
  const std::int64_t minute = minute_start(second_);
  if (acc.minute == minute) return;
  if (acc.minute >= 0 && acc.active) {
    InsightsMinute m{acc.minute, top_list(acc.pkc), top_list(acc.pkt), top_list(acc.skc),
                     top_list(acc.skt)};
    push_capped(r.insights_minutes, std::move(m), std::max<std::size_t>(1, o_.insights_minutes));
  }
  acc = InsightsAccum{};
  acc.minute = minute;
}

void Ticker::roll_minute(ResourceMeter& r) {
  const std::int64_t minute = minute_start(second_);
  if (r.minute.minute == minute) return;
  if (r.minute.minute >= 0) {
    push_capped(r.history, std::move(r.minute), std::max<std::size_t>(1, o_.history_minutes));
  }
  r.minute = MinuteStats{};
  r.minute.minute = minute;
}

void Ticker::resource(TableMeters& t, ResourceMeter& r) {
  roll_minute(r);
  roll_insights(r);
  if (insights_active(r, now_, o_)) r.insights_accum.active = true;
  std::array<std::int64_t, ResourceMeter::kSlots> tot{};
  tally::sum(r.slots, tot.size(), tot.data());
  for (int d = 0; d < kDirs; ++d) direction(r, d, tot);
  r.last = tot;
  r.observed_seconds += idle_ + 1;
  std::array<bool, kDirs> would{};
  if (const LiveMap* map = r.live_map()) {
    for (PartitionMeter* p : map->parts) partition(t, r, *p, &would);
  }
  for (int d = 0; d < kDirs; ++d) {
    if (!would[d]) continue;
    const int reason = reason_index({r.gsi, dir_at(d), Limit::kKeyRange});
    r.would_throttle[reason] += 1;
    r.minute.would_throttle[reason] += 1;
  }
  peak(t, r);
}

void Ticker::direction(ResourceMeter& r, int d,
                       const std::array<std::int64_t, ResourceMeter::kSlots>& tot) {
  auto& dir = r.dirs[d];
  const int base = d * ResourceMeter::kPerDir;
  const Milli units = tot[base] - r.last[base];
  const std::size_t cap = resource_seconds(o_);
  for (std::int64_t i = 0; i < std::min<std::int64_t>(idle_, static_cast<std::int64_t>(cap)); ++i) {
    push_capped<Milli>(dir.seconds, 0, cap);
  }
  push_capped<Milli>(dir.seconds, units, cap);
  r.minute.units[d] += units;
  if (d == 1) r.minute.write_events += tot[base + 1] - r.last[base + 1];
  r.minute.peak_second[d] = std::max(r.minute.peak_second[d], units);
  r.minute.limit[d] = dir.bucket.rate();
  for (int l = 0; l < kLimitCount; ++l) {
    const int slot = base + 2 + l;
    r.minute.throttles[reason_index({r.gsi, dir_at(d), static_cast<Limit>(l)})] +=
        tot[slot] - r.last[slot];
  }
  if (o_.mode == Mode::kReport &&
      would_throttle(dir.bucket, units, end_ns_, &dir.would_throttle_units)) {
    const int reason = reason_index({r.gsi, dir_at(d), dir.limit.binding});
    r.would_throttle[reason] += 1;
    r.minute.would_throttle[reason] += 1;
  }
}

void Ticker::partition(TableMeters& t, ResourceMeter& r, PartitionMeter& p,
                       std::array<bool, kDirs>* would) {
  std::array<std::int64_t, PartitionMeter::kSlots> tot{};
  tally::sum(p.slots, tot.size(), tot.data());
  std::array<Milli, kDirs> units{};
  bool warm = false;
  bool hot_now[kDirs] = {};
  for (int d = 0; d < kDirs; ++d) {
    const auto slot = static_cast<std::size_t>(d * PartitionMeter::kPerDir);
    units[d] = tot[slot] - p.last[slot];
    for (std::int64_t i = 0; i < std::min<std::int64_t>(idle_, kPartitionSeconds); ++i) {
      push_capped<Milli>(p.seconds[d], 0, kPartitionSeconds);
    }
    push_capped<Milli>(p.seconds[d], units[d], kPartitionSeconds);
    const Milli ceiling = partition_ceiling(o_, dir_at(d)) * 1000;
    warm = warm || units[d] * 2 >= ceiling;
    hot_now[d] =
        static_cast<double>(units[d]) >= o_.split_heat_fraction * static_cast<double>(ceiling);
    Milli ignored = 0;
    if (o_.mode == Mode::kReport && would_throttle(p.buckets[d], units[d], end_ns_, &ignored)) {
      (*would)[d] = true;
      p.would_throttle_seconds += 1;
    }
  }
  add_minute(r, p, tot, units);
  p.last = tot;
  p.warm.store(warm, std::memory_order_relaxed);
  keep_keys(p);
  cool(p, hot_now[0] || hot_now[1]);
  if (!o_.splits) return;
  size_split(t, r, p, tot[kDirs * PartitionMeter::kPerDir]);
  for (int d = 0; d < kDirs; ++d) {
    p.hot_seconds[d] = (hot_now[d] && idle_ == 0) ? p.hot_seconds[d] + 1 : (hot_now[d] ? 1 : 0);
    if (p.hot_seconds[d] >= heat_seconds(o_)) {
      p.hot_seconds[d] = 0;
      heat_split(t, r, p, dir_at(d));
    }
  }
}

void Ticker::add_minute(ResourceMeter& r, const PartitionMeter& p,
                        const std::array<std::int64_t, PartitionMeter::kSlots>& tot,
                        const std::array<Milli, kDirs>& units) {
  std::int64_t throttles = 0;
  for (int d = 0; d < kDirs; ++d) {
    for (int l = 0; l < kLimitCount; ++l) {
      const auto slot = PartitionMeter::throttles(0, dir_at(d), static_cast<Limit>(l));
      throttles += tot[slot] - p.last[slot];
    }
  }
  if (units[0] == 0 && units[1] == 0 && throttles == 0) return;
  auto& m = r.minute.partitions[p.range.id];
  m[0] += units[0];
  m[1] += units[1];
  m[2] += throttles;
}

void Ticker::keep_keys(PartitionMeter& p) {
  // This second's keys join the window.
  if (!p.pending_accessed.empty() || !p.pending_throttled.empty()) {
    SecondKeys keys;
    keys.second = second_;
    std::swap(keys.accessed, p.pending_accessed);
    std::swap(keys.throttled, p.pending_throttled);
    p.keys.push_back(std::move(keys));
  }
  const std::int64_t window = std::max<std::int64_t>(heat_seconds(o_), kPartitionSeconds);
  while (!p.keys.empty() && p.keys.front().second <= second_ - window) p.keys.pop_front();
}

void Ticker::cool(PartitionMeter& p, bool hot) {
  // A hot key's mark goes once the partition has been below the heat threshold for a window.
  p.cool_seconds = hot ? 0 : p.cool_seconds + 1 + idle_;
  if (p.status == PartitionStatus::kHotKey && p.cool_seconds >= heat_seconds(o_)) {
    p.status = PartitionStatus::kOk;
    p.hot_key.clear();
  }
}

bool Ticker::may_split(const ResourceMeter& r, PartitionMeter& p) {
  if (p.planned >= 0 && second_ - p.planned < heat_seconds(o_)) return false;  // on its way
  const LiveMap* map = r.live_map();
  if (map != nullptr && map->map.size() >= o_.max_partitions) {
    p.status = PartitionStatus::kSplitLimit;
    return false;
  }
  const unsigned __int128 end = p.end ? *p.end : (static_cast<unsigned __int128>(1) << 64);
  if (end - p.range.first_token < 2) {
    p.status = PartitionStatus::kUnsplittable;
    return false;
  }
  return true;
}

void Ticker::size_split(TableMeters& t, ResourceMeter& r, PartitionMeter& p, std::int64_t bytes) {
  const auto limit = static_cast<std::int64_t>(o_.partition_size_mb) * (std::int64_t{1} << 20);
  if (bytes <= limit || !may_split(r, p)) return;
  // Where the bytes reach half: the engine finds the token by walking the partition.
  plan(t, r, p, std::nullopt, SplitCause::kSize);
}

void Ticker::heat_split(TableMeters& t, ResourceMeter& r, PartitionMeter& p, Dir dir) {
  // The traffic of the window by partition key (one token each), in token order. A partition
  // this busy logs every access, so the sampled ones (before it was) are left out.
  std::map<std::uint64_t, std::pair<Milli, std::string>> by_token;
  Milli total = 0;
  for (const SecondKeys& keys : p.keys) {
    if (keys.second <= second_ - heat_seconds(o_)) continue;
    for (const auto& [key, c] : keys.accessed.entries()) {
      const Milli units = dir == Dir::kRead ? c.read : c.write;
      auto& slot = by_token[c.token];
      slot.first += units;
      if (slot.second.empty()) slot.second = summary_key(summary_partition_key(key), {});
      total += units;
    }
  }
  if (total <= 0) return;
  const auto top = std::max_element(
      by_token.begin(), by_token.end(),
      [](const auto& a, const auto& b) { return a.second.first < b.second.first; });
  if (top->second.first * 2 > total) {
    // One partition key carries more than half: splitting would not help.
    p.status = PartitionStatus::kHotKey;
    p.hot_key = top->second.second;
    p.hot_dir = dir;
    p.hot_share = static_cast<double>(top->second.first) / static_cast<double>(total);
    return;
  }
  if (!may_split(r, p)) return;
  // The token that halves the traffic, between two partition keys: the high child starts at
  // the first key past the point where the low side is closest to half.
  Milli prefix = 0;
  std::optional<std::uint64_t> at;
  Milli best = total;
  for (auto it = by_token.begin(); std::next(it) != by_token.end(); ++it) {
    prefix += it->second.first;
    const Milli off = std::abs(2 * prefix - total);
    if (off < best) {
      best = off;
      at = std::next(it)->first;
    }
  }
  if (!at || *at <= p.range.first_token) return;
  p.hot_key.clear();
  plan(t, r, p, at, SplitCause::kHeat);
}

void Ticker::plan(TableMeters& t, ResourceMeter& r, PartitionMeter& p,
                  std::optional<std::uint64_t> at, SplitCause cause) {
  s_.plans.push_back({t.table_id, r.index_id, p.range.id, at, cause});
  p.planned = second_;
  p.status = PartitionStatus::kOk;
}

void Ticker::peak(TableMeters& t, ResourceMeter& r) {
  // The sustained level is the least per-second consumption of the last --on-demand-sustain
  // seconds; above the previous peak, it becomes the peak once --on-demand-peak-window has
  // passed since the last raise (creation counting as one).
  if (!r.on_demand()) return;
  const auto sustain =
      static_cast<std::size_t>(std::max<std::int64_t>(1, std::llround(o_.on_demand_sustain)));
  if (r.observed_seconds < static_cast<std::int64_t>(sustain)) return;
  if (now_ - r.peak_anchor < o_.on_demand_peak_window) return;
  bool raised = false;
  for (auto& dir : r.dirs) {
    if (dir.seconds.size() < sustain) continue;
    const Milli level = *std::min_element(dir.seconds.end() - static_cast<std::ptrdiff_t>(sustain),
                                          dir.seconds.end());
    if (level / 1000 > dir.settings.peak) {
      dir.settings.peak = level / 1000;
      raised = true;
    }
  }
  if (!raised) return;
  r.peak_anchor = now_;
  for (int d = 0; d < kDirs; ++d) {
    auto& dir = r.dirs[d];
    dir.limit = resource_limit(o_, dir_at(d), dir.settings);
    dir.bucket.configure(dir.limit.rate, dir.limit.capacity_seconds, end_ns_);
    dir.binding.store(dir.limit.binding, std::memory_order_relaxed);
  }
  s_.raises.push_back(
      {t.table_id, r.index_id, r.dirs[0].settings.peak, r.dirs[1].settings.peak, now_});
}

}  // namespace

void CapacityManager::tick(std::int64_t second_end_ns) {
  if (options_.mode == Mode::kOff) return;
  std::lock_guard lock(state_->mu);
  const std::int64_t second = floor_div(second_end_ns - 1, kSecondNs);
  if (state_->last_second && second <= *state_->last_second) return;
  const std::int64_t idle = state_->last_second ? second - *state_->last_second - 1 : 0;
  if (!state_->first_second) state_->first_second = second;
  Ticker ticker(options_, *state_, second, idle, second_end_ns);
  ticker.drain_keys();
  for (auto& [serial, table] : state_->tables) {
    for (ResourceMeter* r : live_resources(*table)) ticker.resource(*table, *r);
  }
  state_->last_second = second;
}

}  // namespace kumo::capacity
