// The admin listener's JSON views of the meters, and /report, the shape `kumo report` reads.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <functional>
#include <map>

#include "capacity/key_json.h"
#include "capacity/manager.h"
#include "capacity/manager_state.h"
#include "capacity/messages.h"

namespace kumo::capacity {
namespace {

using Params = std::vector<std::pair<std::string, std::string>>;
using Result = CapacityManager::AdminResult;
using ItemCounts = std::map<std::uint32_t, std::optional<std::int64_t>>;

constexpr std::size_t kTopKeys = 25;
constexpr std::int64_t kKeySeconds = 60;

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string percent_decode(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '+') {
      out.push_back(' ');
    } else if (s[i] == '%' && i + 2 < s.size() && hex_digit(s[i + 1]) >= 0 &&
               hex_digit(s[i + 2]) >= 0) {
      out.push_back(static_cast<char>(hex_digit(s[i + 1]) * 16 + hex_digit(s[i + 2])));
      i += 2;
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

Params parse_query(std::string_view query) {
  Params params;
  while (!query.empty()) {
    const std::size_t amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
    if (pair.empty()) continue;
    const std::size_t eq = pair.find('=');
    params.emplace_back(
        percent_decode(pair.substr(0, eq)),
        eq == std::string_view::npos ? std::string() : percent_decode(pair.substr(eq + 1)));
  }
  return params;
}

const std::string* param(const Params& params, std::string_view name) {
  for (const auto& [k, v] : params) {
    if (k == name) return &v;
  }
  return nullptr;
}

// A positive integer parameter no larger than `max`; `fallback` when absent; nullopt when bad.
std::optional<std::int64_t> int_param(const Params& params, std::string_view name,
                                      std::int64_t fallback, std::int64_t max) {
  const std::string* text = param(params, name);
  if (text == nullptr) return fallback;
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), v);
  if (ec != std::errc() || end != text->data() + text->size() || v < 1 || v > max)
    return std::nullopt;
  return v;
}

Result error(int status, std::string_view message) {
  rapidjson::StringBuffer buf;
  JsonWriter w(buf);
  w.StartObject();
  w.Key("error");
  w.String(message.data(), static_cast<rapidjson::SizeType>(message.size()));
  w.EndObject();
  return {status, "application/json", buf.GetString()};
}

bool str(JsonWriter& w, std::string_view s) {
  return w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
}

// Units as a JSON number: an integer when whole.
void units(JsonWriter& w, Milli milli) {
  if (milli % 1000 == 0) {
    w.Int64(milli / 1000);
  } else {
    w.Double(to_units(milli));
  }
}

void rate(JsonWriter& w, double r) {
  units(w, static_cast<Milli>(std::llround(r * 1000)));
}

// {"<reason>":n} for every reason counted.
void reasons(JsonWriter& w, const ReasonCounts& counts) {
  w.StartObject();
  for (int i = 0; i < kReasonCount; ++i) {
    if (counts[i] == 0) continue;
    str(w, reason_name(reason_at(i)));
    w.Int64(counts[i]);
  }
  w.EndObject();
}

std::string_view mode_name(Mode mode) {
  switch (mode) {
    case Mode::kOff:
      return "off";
    case Mode::kReport:
      return "report";
    case Mode::kEnforce:
      return "enforce";
  }
  return "report";
}

// A resource's consumption over the window: its minutes from the window's first minute, and
// what was counted since the last tick.
struct Sums {
  std::array<Milli, kDirs> units{}, peak{};
  std::int64_t write_events = 0;
  ReasonCounts throttles{}, would{};
  void add(const MinuteStats& m) {
    for (int d = 0; d < kDirs; ++d) {
      units[d] += m.units[d];
      peak[d] = std::max(peak[d], m.peak_second[d]);
    }
    write_events += m.write_events;
    for (int i = 0; i < kReasonCount; ++i) {
      throttles[i] += m.throttles[i];
      would[i] += m.would_throttle[i];
    }
  }
};

class Views {
 public:
  Views(const CapacityManager& manager, const CapacityManager::State& state, ItemCounts counts)
      : m_(manager),
        s_(state),
        item_counts_(std::move(counts)),
        o_(manager.options()),
        now_ns_(manager.clock().now_ns()),
        now_(static_cast<double>(now_ns_) / 1e9) {}

  Result route(std::string_view path, const Params& params);

 private:
  struct Target {
    const TableMeters* table = nullptr;
    const ResourceMeter* resource = nullptr;
    std::optional<Result> error;
  };
  Target target(std::string_view name, const Params& params) const;
  Result tables() const;
  Result table(const TableMeters& t) const;
  Result partitions(const TableMeters& t, const ResourceMeter& r) const;
  Result top_keys(const TableMeters& t, const ResourceMeter& r, const Params& params) const;
  Result history(const TableMeters& t, const ResourceMeter& r) const;
  Result insights(const TableMeters& t, const ResourceMeter& r, const Params& params) const;
  Result report(const Params& params);

  void head(JsonWriter& w, const TableMeters& t, const ResourceMeter& r) const;
  // The table and its GSIs as /report has them; `admin` adds the metering mode and the key
  // log's drops (/tables/{t}).
  void table_object(JsonWriter& w, const TableMeters& t, bool admin) const;
  void resource_object(JsonWriter& w, const TableMeters& t, const ResourceMeter& r,
                       bool admin) const;
  void direction(JsonWriter& w, const ResourceMeter& r, int d, const Sums& sums, bool admin) const;
  void partition(JsonWriter& w, const ResourceMeter& r, const PartitionMeter& p, bool full) const;
  void hot_key(JsonWriter& w, const ResourceMeter& r, const PartitionMeter& p, bool full) const;
  void splits(JsonWriter& w, const TableMeters& t, const ResourceMeter& r) const;
  void minutes(JsonWriter& w, const ResourceMeter& r) const;
  void minute(JsonWriter& w, const MinuteStats& m) const;
  // The top keys of the last `seconds`: items (partition and sort key), or partition keys
  // (`by_partition_key`: each the sum of its items).
  void keys(JsonWriter& w, const ResourceMeter& r, bool throttled, std::int64_t seconds,
            bool by_partition_key = false) const;
  void insights_minutes(JsonWriter& w, const ResourceMeter& r, std::size_t count) const;
  void key_list(JsonWriter& w, const ResourceMeter& r,
                const std::vector<std::pair<std::string, std::int64_t>>& list, bool units) const;
  Sums sums(const ResourceMeter& r) const;
  void set_window(std::optional<std::int64_t> minutes);

  const CapacityManager& m_;
  const CapacityManager::State& s_;
  const ItemCounts item_counts_;
  const CapacityOptions& o_;
  const std::int64_t now_ns_;
  const double now_;
  double window_start_ = 0;
  std::int64_t first_minute_ = 0;
};

std::vector<const TableMeters*> sorted_tables(const CapacityManager::State& s) {
  std::vector<const TableMeters*> all;
  for (const auto& [serial, t] : s.tables) all.push_back(t.get());
  std::sort(all.begin(), all.end(), [](auto* a, auto* b) { return a->name < b->name; });
  return all;
}

std::string_view billing_name(const TableMeters& t) {
  return t.definition.billing_mode == BillingMode::PAY_PER_REQUEST ? "PAY_PER_REQUEST"
                                                                   : "PROVISIONED";
}

const CapacitySettings& settings_of(const TableMeters& t, const ResourceMeter& r) {
  for (const auto& index : t.definition.global_indexes) {
    if (index.id == r.index_id && r.gsi) return index.capacity;
  }
  return t.definition.capacity;
}

void Views::set_window(std::optional<std::int64_t> minutes) {
  window_start_ = now_;
  if (s_.first_second) {
    window_start_ = static_cast<double>(*s_.first_second);
    // History keeps --history-minutes whole minutes before the current one.
    const auto kept = static_cast<double>(minute_start(*s_.last_second) -
                                          static_cast<std::int64_t>(o_.history_minutes) * 60);
    window_start_ = std::max(window_start_, kept);
  }
  if (minutes) window_start_ = std::max(window_start_, now_ - static_cast<double>(*minutes) * 60);
  first_minute_ = minute_start(static_cast<std::int64_t>(std::floor(window_start_)));
}

Sums Views::sums(const ResourceMeter& r) const {
  Sums sums;
  for (const MinuteStats& m : r.history) {
    if (m.minute >= first_minute_) sums.add(m);
  }
  if (r.minute.minute >= first_minute_) sums.add(r.minute);
  std::array<std::int64_t, ResourceMeter::kSlots> tot{};
  tally::sum(r.slots, tot.size(), tot.data());
  for (int d = 0; d < kDirs; ++d) {
    const int base = d * ResourceMeter::kPerDir;
    sums.units[d] += tot[base] - r.last[base];
    if (d == 1) sums.write_events += tot[base + 1] - r.last[base + 1];
    for (int l = 0; l < kLimitCount; ++l) {
      sums.throttles[reason_index({r.gsi, dir_at(d), static_cast<Limit>(l)})] +=
          tot[base + 2 + l] - r.last[base + 2 + l];
    }
  }
  return sums;
}

Views::Target Views::target(std::string_view name, const Params& params) const {
  Target t;
  t.table = s_.find_table(name);
  if (t.table == nullptr) {
    t.error = error(404, "Table not found: " + shown_path(name));
    return t;
  }
  const std::string* index = param(params, "index");
  if (index == nullptr || index->empty()) {
    t.resource = t.table->table;
    return t;
  }
  for (const ResourceMeter* r : live_resources(*t.table)) {
    if (r->gsi && r->index_name == *index) t.resource = r;
  }
  if (t.resource == nullptr) {
    t.error =
        error(404, "Index not found: " + shown_path(*index) + " for table: " + shown_path(name));
  }
  return t;
}

Result Views::route(std::string_view path, const Params& params) {
  if (path == "/report") return report(params);
  constexpr std::string_view kTables = "/tables";
  if (path.substr(0, kTables.size()) != kTables ||
      (path.size() > kTables.size() && path[kTables.size()] != '/')) {
    return error(404, "Not found: " + shown_path(path));
  }
  if (o_.mode == Mode::kOff) return error(409, "Capacity metering is off (--capacity off)");
  set_window(std::nullopt);
  std::string_view rest = path.substr(kTables.size());
  if (rest.empty() || rest == "/") return tables();
  rest.remove_prefix(1);
  const std::size_t slash = rest.find('/');
  const std::string name = percent_decode(rest.substr(0, slash));
  const std::string_view view = slash == std::string_view::npos ? "" : rest.substr(slash + 1);
  if (view != "" && view != "partitions" && view != "top-keys" && view != "history" &&
      view != "insights") {
    return error(404, "Not found: " + shown_path(path));
  }
  Target t = target(name, params);
  if (t.error) return *t.error;
  if (view.empty()) return table(*t.table);
  if (view == "partitions") return partitions(*t.table, *t.resource);
  if (view == "top-keys") return top_keys(*t.table, *t.resource, params);
  if (view == "history") return history(*t.table, *t.resource);
  return insights(*t.table, *t.resource, params);
}

Result Views::tables() const {
  rapidjson::StringBuffer buf;
  JsonWriter w(buf);
  w.StartObject();
  w.Key("capacity_mode");
  str(w, mode_name(o_.mode));
  w.Key("tables");
  w.StartArray();
  for (const TableMeters* t : sorted_tables(s_)) {
    w.StartObject();
    w.Key("name");
    str(w, t->name);
    w.Key("billing_mode");
    str(w, billing_name(*t));
    w.Key("resources");
    w.StartArray();
    for (const ResourceMeter* r : live_resources(*t)) {
      w.StartObject();
      w.Key("index");
      r->gsi ? str(w, r->index_name) : w.Null();
      w.Key("partitions");
      const LiveMap* map = r->live_map();
      w.Uint64(map == nullptr ? 0 : map->map.size());
      for (int d = 0; d < kDirs; ++d) {
        w.Key(d == 0 ? "read" : "write");
        w.StartObject();
        w.Key("rate");
        rate(w, r->dirs[d].limit.rate);
        w.Key("binding");
        str(w, limit_name(r->dirs[d].limit.binding));
        w.EndObject();
      }
      w.EndObject();
    }
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return {200, "application/json", buf.GetString()};
}

Result Views::table(const TableMeters& t) const {
  rapidjson::StringBuffer buf;
  JsonWriter w(buf);
  table_object(w, t, true);
  return {200, "application/json", buf.GetString()};
}

void Views::table_object(JsonWriter& w, const TableMeters& t, bool admin) const {
  w.StartObject();
  w.Key("name");
  str(w, t.name);
  if (admin) {
    w.Key("capacity_mode");
    str(w, mode_name(o_.mode));
    w.Key("key_log_drops");
    w.Uint64(s_.keys.drops());
  }
  w.Key("billing_mode");
  str(w, billing_name(t));
  w.Key("item_count");
  const auto items = item_counts_.find(t.table_id);
  items != item_counts_.end() && items->second ? w.Int64(*items->second) : w.Null();
  w.Key("size_bytes");
  std::int64_t bytes = 0;
  if (const LiveMap* map = t.table->live_map()) {
    for (const PartitionMeter* p : map->parts) bytes += tally::sum(PartitionMeter::bytes(p->slots));
  }
  w.Int64(bytes);
  w.Key("resources");
  w.StartArray();
  for (const ResourceMeter* r : live_resources(t)) resource_object(w, t, *r, admin);
  w.EndArray();
  w.EndObject();
}

void Views::resource_object(JsonWriter& w, const TableMeters& t, const ResourceMeter& r,
                            bool admin) const {
  const Sums s = sums(r);
  w.StartObject();
  w.Key("index");
  r.gsi ? str(w, r.index_name) : w.Null();
  for (int d = 0; d < kDirs; ++d) {
    w.Key(d == 0 ? "read" : "write");
    direction(w, r, d, s, admin);
  }
  // The table's write events are base writes, a GSI's index writes: a GSI's amplification
  // is its index_write_events per the table's write_events.
  w.Key("write_events");
  r.gsi ? w.Null() : w.Int64(s.write_events);
  w.Key("index_write_events");
  r.gsi ? w.Int64(s.write_events) : w.Null();
  w.Key("throttle_events");
  reasons(w, s.throttles);
  w.Key("would_throttle_seconds");
  reasons(w, s.would);
  w.Key("partitions");
  w.StartArray();
  if (const LiveMap* map = r.live_map()) {
    for (const PartitionMeter* p : map->parts) partition(w, r, *p, false);
  }
  w.EndArray();
  w.Key("splits");
  splits(w, t, r);
  w.Key("history");
  minutes(w, r);
  w.Key("top_keys");
  w.StartObject();
  w.Key("accessed");
  keys(w, r, false, kKeySeconds);
  w.Key("throttled");
  keys(w, r, true, kKeySeconds);
  if (!r.range.empty()) {
    // With a sort key, items and partition keys differ: a partition key is as hot as all
    // of its items together, and only it is bound by the per-partition-key limit.
    w.Key("accessed_partition_keys");
    keys(w, r, false, kKeySeconds, true);
    w.Key("throttled_partition_keys");
    keys(w, r, true, kKeySeconds, true);
  }
  w.EndObject();
  w.Key("insights");
  if (r.insights.state == InsightsSettings::State::kNever && r.insights_minutes.empty()) {
    w.Null();
  } else {
    w.StartObject();
    w.Key("minutes");
    insights_minutes(w, r, r.insights_minutes.size());
    w.EndObject();
  }
  w.EndObject();
}

void Views::direction(JsonWriter& w, const ResourceMeter& r, int d, const Sums& sums,
                      bool admin) const {
  const auto& dir = r.dirs[d];
  w.StartObject();
  w.Key("rate");
  rate(w, dir.limit.rate);
  w.Key("binding");
  str(w, limit_name(dir.limit.binding));
  w.Key("provisioned");
  dir.settings.on_demand ? w.Null() : w.Int64(dir.settings.provisioned);
  w.Key("max_on_demand");
  dir.settings.max ? w.Int64(*dir.settings.max) : w.Null();
  w.Key("warm");
  w.Int64(dir.limit.warm);
  w.Key("peak");
  w.Int64(dir.settings.peak);
  w.Key("level");
  units(w, dir.bucket.level(now_ns_));
  w.Key("consumed");
  units(w, sums.units[d]);
  w.Key("peak_second");
  units(w, sums.peak[d]);
  if (admin) {
    // Report mode: units beyond the simulated bucket's level in would-be throttle seconds.
    w.Key("would_throttle_units");
    units(w, dir.would_throttle_units);
  }
  w.EndObject();
}

void Views::partition(JsonWriter& w, const ResourceMeter& r, const PartitionMeter& p,
                      bool full) const {
  w.StartObject();
  w.Key("id");
  w.Uint(p.range.id);
  w.Key("first_token");
  str(w, token_hex(p.range.first_token));
  w.Key("end_token");  // the last token of the range
  str(w, token_hex(p.end ? *p.end - 1 : ~std::uint64_t{0}));
  w.Key("bytes");
  w.Int64(tally::sum(PartitionMeter::bytes(p.slots)));
  if (full) {
    w.Key("parent");
    w.Uint(p.range.parent);
    w.Key("cause");
    str(w, split_cause_name(p.range.cause));
    w.Key("created");
    w.Double(p.range.created);
  }
  w.Key("status");
  str(w, partition_status_name(p.status));
  hot_key(w, r, p, full);
  for (int d = 0; d < kDirs; ++d) {
    w.Key(d == 0 ? "read_per_second" : "write_per_second");
    w.StartArray();
    for (Milli u : p.seconds[d]) units(w, u);
    w.EndArray();
  }
  w.Key("throttle_events");
  std::array<std::int64_t, PartitionMeter::kSlots> tot{};
  tally::sum(p.slots, tot.size(), tot.data());
  ReasonCounts counts{};
  for (int d = 0; d < kDirs; ++d) {
    for (int l = 0; l < kLimitCount; ++l) {
      counts[reason_index({r.gsi, dir_at(d), static_cast<Limit>(l)})] =
          tot[PartitionMeter::throttles(0, dir_at(d), static_cast<Limit>(l))];
    }
  }
  reasons(w, counts);
  if (full) {
    w.Key("read_level");
    units(w, p.buckets[0].level(now_ns_));
    w.Key("write_level");
    units(w, p.buckets[1].level(now_ns_));
    w.Key("would_throttle_seconds");
    w.Int64(p.would_throttle_seconds);
  }
  w.EndObject();
}

// The key carrying more than half of a partition's traffic: the key itself in /partitions
// (with its direction and share beside it), {"key","dir","share"} in /report.
void Views::hot_key(JsonWriter& w, const ResourceMeter& r, const PartitionMeter& p,
                    bool full) const {
  w.Key("hot_key");
  if (p.status != PartitionStatus::kHotKey || p.hot_key.empty()) {
    w.Null();
    return;
  }
  auto key = [&] { write_key(w, r.hash, r.range, summary_partition_key(p.hot_key), {}); };
  const std::string_view dir = p.hot_dir == Dir::kRead ? "read" : "write";
  if (full) {
    key();
    w.Key("hot_key_dir");
    str(w, dir);
    w.Key("hot_key_share");
    w.Double(p.hot_share);
    return;
  }
  w.StartObject();
  w.Key("key");
  key();
  w.Key("dir");
  str(w, dir);
  w.Key("share");
  w.Double(p.hot_share);
  w.EndObject();
}

void Views::splits(JsonWriter& w, const TableMeters& t, const ResourceMeter& r) const {
  w.StartArray();
  for (const SplitRecord& s : settings_of(t, r).splits) {
    w.StartObject();
    w.Key("time");
    w.Double(s.time);
    w.Key("parent");
    w.Uint(s.parent);
    w.Key("low");
    w.Uint(s.low);
    w.Key("high");
    w.Uint(s.high);
    w.Key("cause");
    str(w, split_cause_name(s.cause));
    w.Key("at");
    str(w, token_hex(s.token));
    w.EndObject();
  }
  w.EndArray();
}

void Views::minute(JsonWriter& w, const MinuteStats& m) const {
  w.StartObject();
  w.Key("minute");
  w.Int64(m.minute);
  w.Key("read");
  units(w, m.units[0]);
  w.Key("write");
  units(w, m.units[1]);
  w.Key("peak_read_second");
  units(w, m.peak_second[0]);
  w.Key("peak_write_second");
  units(w, m.peak_second[1]);
  w.Key("read_limit");
  rate(w, m.limit[0]);
  w.Key("write_limit");
  rate(w, m.limit[1]);
  w.Key("throttle_events");
  reasons(w, m.throttles);
  w.Key("would_throttle_seconds");
  reasons(w, m.would_throttle);
  w.Key("partitions");
  w.StartObject();
  for (const auto& [id, u] : m.partitions) {
    str(w, std::to_string(id));
    w.StartArray();
    units(w, u[0]);
    units(w, u[1]);
    w.Int64(u[2]);
    w.EndArray();
  }
  w.EndObject();
  w.EndObject();
}

void Views::minutes(JsonWriter& w, const ResourceMeter& r) const {
  w.StartArray();
  for (const MinuteStats& m : r.history) {
    if (m.minute >= first_minute_) minute(w, m);
  }
  if (r.minute.minute >= first_minute_) minute(w, r.minute);
  w.EndArray();
}

void Views::keys(JsonWriter& w, const ResourceMeter& r, bool throttled, std::int64_t seconds,
                 bool by_partition_key) const {
  const KeySummary::By by = throttled ? KeySummary::By::kThrottles : KeySummary::By::kUnits;
  KeySummary merged(1024, by);
  const std::int64_t last = s_.last_second.value_or(0);
  for (const auto& p : r.partitions) {
    for (const SecondKeys& k : p->keys) {
      if (k.second > last - seconds) merged.merge(throttled ? k.throttled : k.accessed);
    }
  }
  if (by_partition_key) {
    // Each partition key carries the sum of its items; an estimate if any of them is.
    KeySummary grouped(1024, by);
    for (const auto& [key, c] : merged.entries()) {
      grouped.add(summary_key(summary_partition_key(key), {}), c);
    }
    merged = std::move(grouped);
  }
  w.StartArray();
  for (const auto& [key, c] : merged.top(kTopKeys)) {
    w.StartObject();
    w.Key("key");
    write_key(w, r.hash, r.range, summary_partition_key(key), summary_sort_key(key));
    w.Key("partition");
    w.Uint(c.partition);
    if (throttled) {
      w.Key("events");
      w.Int64(c.throttled);
    } else {
      w.Key("units");
      units(w, c.units());
    }
    w.Key("estimate");
    w.Bool(c.estimate);
    w.EndObject();
  }
  w.EndArray();
}

void Views::key_list(JsonWriter& w, const ResourceMeter& r,
                     const std::vector<std::pair<std::string, std::int64_t>>& list,
                     bool as_units) const {
  w.StartArray();
  for (const auto& [key, value] : list) {
    w.StartObject();
    w.Key("key");
    write_key(w, r.hash, r.range, summary_partition_key(key), summary_sort_key(key));
    w.Key("value");
    as_units ? units(w, value) : static_cast<void>(w.Int64(value));
    w.EndObject();
  }
  w.EndArray();
}

void Views::insights_minutes(JsonWriter& w, const ResourceMeter& r, std::size_t count) const {
  // THROTTLED_KEYS keeps only the throttled lists; the sort-key lists need a sort key.
  const bool accessed = r.insights.mode != "THROTTLED_KEYS";
  const bool sort = !r.range.empty();
  w.StartArray();
  const std::size_t skip = r.insights_minutes.size() - std::min(count, r.insights_minutes.size());
  for (std::size_t i = skip; i < r.insights_minutes.size(); ++i) {
    const InsightsMinute& m = r.insights_minutes[i];
    w.StartObject();
    w.Key("minute");
    w.Int64(m.minute);
    if (accessed) {
      w.Key("PKC");
      key_list(w, r, m.pkc, true);
    }
    w.Key("PKT");
    key_list(w, r, m.pkt, false);
    if (sort && accessed) {
      w.Key("SKC");
      key_list(w, r, m.skc, true);
    }
    if (sort) {
      w.Key("SKT");
      key_list(w, r, m.skt, false);
    }
    w.EndObject();
  }
  w.EndArray();
}

void Views::head(JsonWriter& w, const TableMeters& t, const ResourceMeter& r) const {
  w.Key("table");
  str(w, t.name);
  w.Key("index");
  r.gsi ? str(w, r.index_name) : w.Null();
}

Result Views::partitions(const TableMeters& t, const ResourceMeter& r) const {
  rapidjson::StringBuffer buf;
  JsonWriter w(buf);
  w.StartObject();
  head(w, t, r);
  w.Key("partitions");
  w.StartArray();
  if (const LiveMap* map = r.live_map()) {
    for (const PartitionMeter* p : map->parts) partition(w, r, *p, true);
  }
  w.EndArray();
  w.EndObject();
  return {200, "application/json", buf.GetString()};
}

Result Views::top_keys(const TableMeters& t, const ResourceMeter& r, const Params& params) const {
  const std::string* kind = param(params, "kind");
  if (kind != nullptr && *kind != "accessed" && *kind != "throttled") {
    return error(400, "kind must be accessed or throttled");
  }
  const std::optional<std::int64_t> seconds =
      int_param(params, "seconds", kKeySeconds, kKeySeconds);
  if (!seconds) return error(400, "seconds must be an integer from 1 to 60");
  const bool throttled = kind != nullptr && *kind == "throttled";
  const std::string* by = param(params, "by");
  if (by != nullptr && *by != "item" && *by != "partition-key") {
    return error(400, "by must be item or partition-key");
  }
  const bool by_partition_key = by != nullptr && *by == "partition-key";
  rapidjson::StringBuffer buf;
  JsonWriter w(buf);
  w.StartObject();
  head(w, t, r);
  w.Key("kind");
  str(w, throttled ? "throttled" : "accessed");
  w.Key("seconds");
  w.Int64(*seconds);
  w.Key("by");
  str(w, by_partition_key ? "partition-key" : "item");
  w.Key("keys");
  keys(w, r, throttled, *seconds, by_partition_key);
  w.EndObject();
  return {200, "application/json", buf.GetString()};
}

Result Views::history(const TableMeters& t, const ResourceMeter& r) const {
  rapidjson::StringBuffer buf;
  JsonWriter w(buf);
  w.StartObject();
  head(w, t, r);
  w.Key("minutes");
  minutes(w, r);
  w.EndObject();
  return {200, "application/json", buf.GetString()};
}

Result Views::insights(const TableMeters& t, const ResourceMeter& r, const Params& params) const {
  const std::optional<std::int64_t> count =
      int_param(params, "minutes", static_cast<std::int64_t>(o_.insights_minutes), 1'000'000);
  if (!count) return error(400, "minutes must be a positive integer");
  rapidjson::StringBuffer buf;
  JsonWriter w(buf);
  w.StartObject();
  head(w, t, r);
  w.Key("minutes");
  insights_minutes(w, r, static_cast<std::size_t>(*count));
  w.EndObject();
  return {200, "application/json", buf.GetString()};
}

Result Views::report(const Params& params) {
  const std::optional<std::int64_t> minutes = int_param(params, "minutes", 0, 1'000'000);
  if (!minutes) return error(400, "minutes must be a positive integer");
  set_window(param(params, "minutes") ? minutes : std::nullopt);
  std::vector<const TableMeters*> chosen;
  for (const auto& [k, v] : params) {
    if (k != "table") continue;
    const TableMeters* t = s_.find_table(v);
    if (t == nullptr) return error(404, "Table not found: " + shown_path(v));
    chosen.push_back(t);
  }
  if (chosen.empty()) chosen = sorted_tables(s_);
  rapidjson::StringBuffer buf;
  JsonWriter w(buf);
  w.StartObject();
  w.Key("kumo_version");
  o_.server_version.empty() ? w.Null() : str(w, o_.server_version);
  w.Key("capacity_mode");
  str(w, mode_name(o_.mode));
  w.Key("clock");
  w.StartObject();
  w.Key("mode");
  str(w, m_.clock().manual() ? "manual" : "wall");
  w.Key("now");
  w.Double(now_);
  w.EndObject();
  w.Key("window");
  w.StartObject();
  w.Key("start");
  w.Double(window_start_);
  w.Key("seconds");
  units(w, std::llround(std::max(0.0, now_ - window_start_) * 1000));
  w.EndObject();
  w.Key("partition_limits");
  w.StartObject();
  w.Key("read");
  w.Int64(o_.partition.read_units);
  w.Key("write");
  w.Int64(o_.partition.write_units);
  w.EndObject();
  w.Key("tables");
  w.StartArray();
  for (const TableMeters* t : chosen) table_object(w, *t, false);
  w.EndArray();
  w.EndObject();
  return {200, "application/json", buf.GetString()};
}

}  // namespace

CapacityManager::AdminResult CapacityManager::admin_get(std::string_view path,
                                                        std::string_view query) const {
  // Item counts come from the engine, asked without the manager's lock held: the engine may
  // be configuring a table under its own locks meanwhile.
  ItemCounts counts;
  std::function<std::optional<std::int64_t>(std::uint32_t)> source;
  {
    std::lock_guard lock(state_->mu);
    source = state_->item_count;
    if (source) {
      for (const auto& [serial, t] : state_->tables) counts[t->table_id];
    }
  }
  for (auto& [id, count] : counts) count = source(id);
  std::lock_guard lock(state_->mu);
  Views views(*this, *state_, std::move(counts));
  return views.route(path, parse_query(query));
}

}  // namespace kumo::capacity
