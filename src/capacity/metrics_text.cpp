// The meters in Prometheus' text format 0.0.4: CloudWatch's DynamoDB metrics under their
// names in snake case (dynamodb_*, counters ending _total) with their dimensions as labels,
// and Kumo's partition metrics (kumo_*). As in CloudWatch, a series labelled with the table
// alone excludes its GSIs.
#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <map>

#include "capacity/manager.h"
#include "capacity/manager_state.h"

namespace kumo::capacity {
namespace {

std::string escape(std::string_view v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == '"') out.push_back('\\');
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out.push_back(c);
  }
  return out;
}

std::string number(double v) {
  char buf[40];
  if (v == std::floor(v) && std::abs(v) < 1e15) {
    std::snprintf(buf, sizeof buf, "%" PRId64, static_cast<std::int64_t>(v));
  } else {
    std::snprintf(buf, sizeof buf, "%.9g", v);
  }
  return buf;
}

std::string milli(Milli m) {
  return number(to_units(m));
}

struct Label {
  std::string_view name;
  std::string value;
};
using Labels = std::vector<Label>;

class Text {
 public:
  // Declares a family: written in declaration order, each with its HELP and TYPE once.
  void family(std::string name, std::string_view type, std::string_view help) {
    index_[name] = families_.size();
    families_.push_back({std::move(name), std::string(type), std::string(help), {}});
  }
  void add(std::string_view name, const Labels& labels, const std::string& value,
           std::string_view suffix = {}) {
    Family& f = families_[index_.at(std::string(name))];
    f.samples += f.name;
    f.samples += suffix;
    if (!labels.empty()) {
      f.samples.push_back('{');
      for (std::size_t i = 0; i < labels.size(); ++i) {
        if (i != 0) f.samples.push_back(',');
        f.samples += labels[i].name;
        f.samples += "=\"";
        f.samples += escape(labels[i].value);
        f.samples.push_back('"');
      }
      f.samples.push_back('}');
    }
    f.samples.push_back(' ');
    f.samples += value;
    f.samples.push_back('\n');
  }
  std::string str() const {
    std::string out;
    for (const Family& f : families_) {
      if (f.samples.empty()) continue;
      out += "# HELP " + f.name + " " + f.help + "\n# TYPE " + f.name + " " + f.type + "\n";
      out += f.samples;
    }
    return out;
  }

 private:
  struct Family {
    std::string name, type, help, samples;
  };
  std::vector<Family> families_;
  std::map<std::string, std::size_t> index_;
};

constexpr std::string_view kDirNames[kDirs] = {"read", "write"};
constexpr std::string_view kLimitMetric[kLimitCount] = {
    "provisioned_throughput", "key_range_throughput", "account_limit", "max_on_demand_throughput"};

void declare(Text& t) {
  for (auto d : kDirNames) {
    t.family("dynamodb_consumed_" + std::string(d) + "_capacity_units_total", "counter",
             "Capacity units consumed");
  }
  for (auto d : kDirNames) {
    t.family("dynamodb_provisioned_" + std::string(d) + "_capacity_units", "gauge",
             "Provisioned capacity units");
  }
  for (auto d : kDirNames) {
    t.family("dynamodb_on_demand_max_" + std::string(d) + "_request_units", "gauge",
             "OnDemandThroughput maximum request units");
  }
  for (auto d : kDirNames) {
    t.family("dynamodb_" + std::string(d) + "_throttle_events_total", "counter",
             "Throttled events, any cause");
    for (auto l : kLimitMetric) {
      t.family("dynamodb_" + std::string(d) + "_" + std::string(l) + "_throttle_events_total",
               "counter", "Throttled events by cause");
    }
  }
  t.family("dynamodb_throttled_requests_total", "counter", "Requests with a throttled event");
  t.family("dynamodb_successful_request_latency_seconds", "histogram",
           "Latency of successful requests");
  t.family("dynamodb_returned_item_count_total", "counter", "Items returned");
  t.family("dynamodb_system_errors_total", "counter", "Requests answered with HTTP 500");
  t.family("dynamodb_conditional_check_failed_requests_total", "counter",
           "Failed condition checks");
  t.family("dynamodb_user_errors_total", "counter",
           "Requests answered with HTTP 400 other than throttles and failed conditions");
  for (auto d : kDirNames) {
    t.family("kumo_partition_consumed_" + std::string(d) + "_capacity_units_total", "counter",
             "Capacity units consumed by partition");
  }
  for (auto d : kDirNames) {
    t.family("kumo_partition_" + std::string(d) + "_throttle_events_total", "counter",
             "Throttled events by partition and reason");
  }
  t.family("kumo_partition_bytes", "gauge", "Bytes stored by partition (item sizes + 100 each)");
  t.family("kumo_partitions", "gauge", "Partitions of the table or GSI");
  t.family("kumo_partition_splits_total", "counter", "Partition splits by cause");
  t.family("kumo_write_events_total", "counter", "Write events (base writes or index writes)");
  t.family("kumo_bucket_level_units", "gauge", "Capacity units in the resource bucket");
  t.family("kumo_would_throttle_seconds_total", "counter",
           "Seconds a bucket would have throttled (report mode, one-second estimates)");
  t.family("kumo_clock_seconds", "gauge", "The engine clock, epoch seconds");
}

Labels resource_labels(const TableMeters& t, const ResourceMeter& r) {
  Labels labels{{"table_name", t.name}};
  if (r.gsi) labels.push_back({"global_secondary_index_name", r.index_name});
  return labels;
}

Labels with(Labels labels, std::string_view name, std::string value) {
  labels.push_back({name, std::move(value)});
  return labels;
}

void resource_metrics(Text& text, const TableMeters& t, const ResourceMeter& r, std::int64_t now) {
  const Labels labels = resource_labels(t, r);
  std::array<std::int64_t, ResourceMeter::kSlots> tot{};
  tally::sum(r.slots, tot.size(), tot.data());
  for (int d = 0; d < kDirs; ++d) {
    const std::string dn(kDirNames[d]);
    const int base = d * ResourceMeter::kPerDir;
    const auto& dir = r.dirs[d];
    text.add("dynamodb_consumed_" + dn + "_capacity_units_total", labels, milli(tot[base]));
    if (!dir.settings.on_demand) {
      text.add("dynamodb_provisioned_" + dn + "_capacity_units", labels,
               number(static_cast<double>(dir.settings.provisioned)));
    } else if (dir.settings.max) {
      text.add("dynamodb_on_demand_max_" + dn + "_request_units", labels,
               number(static_cast<double>(*dir.settings.max)));
    }
    std::int64_t all = 0;
    for (int l = 0; l < kLimitCount; ++l) {
      all += tot[base + 2 + l];
      text.add("dynamodb_" + dn + "_" + std::string(kLimitMetric[l]) + "_throttle_events_total",
               labels, number(static_cast<double>(tot[base + 2 + l])));
    }
    text.add("dynamodb_" + dn + "_throttle_events_total", labels, number(static_cast<double>(all)));
    text.add("kumo_bucket_level_units", with(labels, "direction", dn),
             milli(dir.bucket.level(now)));
  }
  text.add("kumo_write_events_total", labels,
           number(static_cast<double>(tot[ResourceMeter::kPerDir + 1])));
  for (int c = 0; c < 4; ++c) {
    if (r.splits[c] == 0) continue;
    text.add("kumo_partition_splits_total",
             with(labels, "cause", std::string(split_cause_name(static_cast<SplitCause>(c)))),
             number(static_cast<double>(r.splits[c])));
  }
  for (int i = 0; i < kReasonCount; ++i) {
    if (r.would_throttle[i] == 0) continue;
    text.add("kumo_would_throttle_seconds_total",
             with(labels, "reason", std::string(reason_name(reason_at(i)))),
             number(static_cast<double>(r.would_throttle[i])));
  }
  const LiveMap* map = r.live_map();
  text.add("kumo_partitions", labels,
           number(map == nullptr ? 0 : static_cast<double>(map->map.size())));
  if (map == nullptr) return;
  for (const PartitionMeter* p : map->parts) {
    const Labels pl = with(labels, "partition", std::to_string(p->range.id));
    std::array<std::int64_t, PartitionMeter::kSlots> pt{};
    tally::sum(p->slots, pt.size(), pt.data());
    for (int d = 0; d < kDirs; ++d) {
      const std::string dn(kDirNames[d]);
      text.add("kumo_partition_consumed_" + dn + "_capacity_units_total", pl,
               milli(pt[PartitionMeter::consumed(0, dir_at(d))]));
      for (int l = 0; l < kLimitCount; ++l) {
        const std::int64_t n = pt[PartitionMeter::throttles(0, dir_at(d), static_cast<Limit>(l))];
        if (n == 0) continue;
        const Reason reason{r.gsi, dir_at(d), static_cast<Limit>(l)};
        text.add("kumo_partition_" + dn + "_throttle_events_total",
                 with(pl, "reason", std::string(reason_name(reason))),
                 number(static_cast<double>(n)));
      }
    }
    text.add("kumo_partition_bytes", pl, number(static_cast<double>(pt[PartitionMeter::bytes(0)])));
  }
}

// Per-operation request metrics of a table; returns its user errors.
std::int64_t request_metrics(Text& text, const TableMeters& t) {
  std::array<std::int64_t, TableMeters::kOps * TableMeters::kPerOp> tot{};
  tally::sum(t.requests, tot.size(), tot.data());
  std::int64_t conditional = 0, user = 0;
  for (int op = 0; op < TableMeters::kOps; ++op) {
    const std::int64_t* c = tot.data() + op * TableMeters::kPerOp;
    conditional += c[TableMeters::kConditional];
    user += c[TableMeters::kUser];
    if (op == 0 || (c[TableMeters::kRequests] == 0 && c[TableMeters::kThrottled] == 0 &&
                    c[TableMeters::kSystem] == 0 && c[TableMeters::kReturned] == 0)) {
      continue;
    }
    const Labels labels{{"table_name", t.name},
                        {"operation", std::string(operation_name(static_cast<Operation>(op)))}};
    text.add("dynamodb_throttled_requests_total", labels,
             number(static_cast<double>(c[TableMeters::kThrottled])));
    text.add("dynamodb_returned_item_count_total", labels,
             number(static_cast<double>(c[TableMeters::kReturned])));
    text.add("dynamodb_system_errors_total", labels,
             number(static_cast<double>(c[TableMeters::kSystem])));
    std::int64_t cumulative = 0;
    for (int b = 0; b < TableMeters::kLatencyBuckets; ++b) {
      cumulative += c[TableMeters::kHistogram + b];
      const std::string le = b + 1 < TableMeters::kLatencyBuckets
                                 ? number(kLatencyBounds[static_cast<std::size_t>(b)])
                                 : "+Inf";
      text.add("dynamodb_successful_request_latency_seconds", with(labels, "le", le),
               number(static_cast<double>(cumulative)), "_bucket");
    }
    text.add("dynamodb_successful_request_latency_seconds", labels,
             number(static_cast<double>(c[TableMeters::kLatencyNs]) / 1e9), "_sum");
    text.add("dynamodb_successful_request_latency_seconds", labels,
             number(static_cast<double>(c[TableMeters::kRequests])), "_count");
  }
  text.add("dynamodb_conditional_check_failed_requests_total", {{"table_name", t.name}},
           number(static_cast<double>(conditional)));
  return user;
}

}  // namespace

std::string CapacityManager::metrics_text() const {
  Text text;
  declare(text);
  const std::int64_t now = clock_.now_ns();
  std::lock_guard lock(state_->mu);
  std::vector<const TableMeters*> tables;
  for (const auto& [serial, t] : state_->tables) tables.push_back(t.get());
  std::sort(tables.begin(), tables.end(), [](auto* a, auto* b) { return a->name < b->name; });
  std::int64_t user = tally::sum(state_->user_errors);
  for (const TableMeters* t : tables) {
    for (const ResourceMeter* r : live_resources(*t)) resource_metrics(text, *t, *r, now);
    user += request_metrics(text, *t);
  }
  text.add("dynamodb_user_errors_total", {}, number(static_cast<double>(user)));
  text.add("kumo_clock_seconds", {}, number(static_cast<double>(now) / 1e9));
  return text.str();
}

}  // namespace kumo::capacity
