#include "cli/report_model.h"

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>

#include <algorithm>
#include <cstdlib>
#include <numeric>

namespace kumo::cli {
namespace {

using Value = rapidjson::Value;

const Value* member(const Value& object, const char* name) {
  if (!object.IsObject()) return nullptr;
  auto it = object.FindMember(name);
  if (it == object.MemberEnd() || it->value.IsNull()) return nullptr;
  return &it->value;
}

std::optional<double> opt_number(const Value& object, const char* name) {
  const Value* v = member(object, name);
  if (v == nullptr) return std::nullopt;
  if (!v->IsNumber()) throw ReportError(std::string("\"") + name + "\" is not a number");
  return v->GetDouble();
}

double number(const Value& object, const char* name) {
  return opt_number(object, name).value_or(0);
}

std::optional<std::string> opt_string(const Value& object, const char* name) {
  const Value* v = member(object, name);
  if (v == nullptr) return std::nullopt;
  if (!v->IsString()) throw ReportError(std::string("\"") + name + "\" is not a string");
  return std::string(v->GetString(), v->GetStringLength());
}

std::string string(const Value& object, const char* name) {
  return opt_string(object, name).value_or("");
}

Value::ConstArray array(const Value& object, const char* name) {
  static const Value empty(rapidjson::kArrayType);
  const Value* v = member(object, name);
  if (v == nullptr) return empty.GetArray();
  if (!v->IsArray()) throw ReportError(std::string("\"") + name + "\" is not an array");
  return v->GetArray();
}

std::uint32_t id_of(const Value& object, const char* name) {
  const double id = number(object, name);
  if (!(id >= 0 && id <= 4294967295.0))
    throw ReportError(std::string("\"") + name + "\" is not a partition id");
  return static_cast<std::uint32_t>(id);
}

ReasonCounts reasons(const Value& object, const char* name) {
  ReasonCounts counts;
  const Value* v = member(object, name);
  if (v == nullptr) return counts;
  if (!v->IsObject()) throw ReportError(std::string("\"") + name + "\" is not an object");
  for (const auto& m : v->GetObject()) {
    if (!m.value.IsNumber()) throw ReportError(std::string("\"") + name + "\" holds a non-number");
    counts.emplace_back(m.name.GetString(), m.value.GetDouble());
  }
  return counts;
}

std::vector<double> numbers(const Value& object, const char* name) {
  std::vector<double> out;
  for (const Value& v : array(object, name)) out.push_back(v.IsNumber() ? v.GetDouble() : 0);
  return out;
}

// An attribute value of a key as it reads in the report: strings quoted, numbers bare,
// binaries in their base64.
std::string value_text(const Value& typed) {
  if (!typed.IsObject() || typed.MemberCount() != 1) return "?";
  const auto& m = *typed.MemberBegin();
  std::string text = m.value.IsString() ? m.value.GetString() : "?";
  return std::string_view(m.name.GetString()) == "S" ? "\"" + text + "\"" : text;
}

// A key in DynamoDB JSON as `name="value"`, attributes separated by spaces.
std::string key_text(const Value* key) {
  if (key == nullptr || !key->IsObject()) return "?";
  std::string text;
  for (const auto& m : key->GetObject()) {
    if (!text.empty()) text += ' ';
    text += m.name.GetString();
    text += '=';
    text += value_text(m.value);
  }
  return text;
}

DirectionReport direction(const Value& resource, const char* name) {
  DirectionReport d;
  const Value* v = member(resource, name);
  if (v == nullptr) return d;
  d.rate = number(*v, "rate");
  d.binding = string(*v, "binding");
  d.provisioned = opt_number(*v, "provisioned");
  d.max_on_demand = opt_number(*v, "max_on_demand");
  d.warm = number(*v, "warm");
  d.peak = number(*v, "peak");
  d.level = number(*v, "level");
  d.consumed = number(*v, "consumed");
  d.peak_second = number(*v, "peak_second");
  return d;
}

PartitionReport partition(const Value& v) {
  PartitionReport p;
  p.id = id_of(v, "id");
  p.first_token = string(v, "first_token");
  p.end_token = string(v, "end_token");
  p.bytes = opt_number(v, "bytes");
  p.status = opt_string(v, "status").value_or("ok");
  if (const Value* hot = member(v, "hot_key")) {
    p.hot_key = HotKey{key_text(member(*hot, "key")), string(*hot, "dir"), number(*hot, "share")};
  }
  p.read_per_second = numbers(v, "read_per_second");
  p.write_per_second = numbers(v, "write_per_second");
  p.throttle_events = reasons(v, "throttle_events");
  return p;
}

SplitReport split(const Value& v) {
  return SplitReport{number(v, "time"), id_of(v, "parent"), id_of(v, "low"),
                     id_of(v, "high"),  string(v, "cause"), string(v, "at")};
}

// `partitions` maps a partition id to [read units, write units] and, optionally, the
// minute's throttle events.
std::vector<PartitionMinute> partition_minutes(const Value& minute) {
  std::vector<PartitionMinute> out;
  const Value* v = member(minute, "partitions");
  if (v == nullptr || !v->IsObject()) return out;
  for (const auto& m : v->GetObject()) {
    PartitionMinute p;
    p.id = static_cast<std::uint32_t>(std::strtoul(m.name.GetString(), nullptr, 10));
    if (m.value.IsArray()) {
      const auto a = m.value.GetArray();
      auto at = [&a](rapidjson::SizeType i) {
        return i < a.Size() && a[i].IsNumber() ? a[i].GetDouble() : 0.0;
      };
      p.read = at(0);
      p.write = at(1);
      p.throttles = at(2);
    }
    out.push_back(p);
  }
  return out;
}

MinuteReport minute(const Value& v) {
  MinuteReport m;
  m.minute = number(v, "minute");
  m.read = number(v, "read");
  m.write = number(v, "write");
  m.peak_read_second = number(v, "peak_read_second");
  m.peak_write_second = number(v, "peak_write_second");
  m.read_limit = number(v, "read_limit");
  m.write_limit = number(v, "write_limit");
  m.throttle_events = reasons(v, "throttle_events");
  m.would_throttle_seconds = reasons(v, "would_throttle_seconds");
  m.partitions = partition_minutes(v);
  return m;
}

std::vector<TopKey> top_keys(const Value& resource, const char* kind, const char* value) {
  std::vector<TopKey> keys;
  const Value* top = member(resource, "top_keys");
  if (top == nullptr) return keys;
  for (const Value& k : array(*top, kind)) {
    const Value* estimate = member(k, "estimate");
    keys.push_back(TopKey{key_text(member(k, "key")), id_of(k, "partition"), number(k, value),
                          estimate != nullptr && estimate->IsTrue()});
  }
  return keys;
}

ResourceReport resource(const Value& v) {
  ResourceReport r;
  r.index = opt_string(v, "index");
  r.read = direction(v, "read");
  r.write = direction(v, "write");
  r.write_events = opt_number(v, "write_events");
  r.index_write_events = opt_number(v, "index_write_events");
  r.throttle_events = reasons(v, "throttle_events");
  r.would_throttle_seconds = reasons(v, "would_throttle_seconds");
  for (const Value& p : array(v, "partitions")) r.partitions.push_back(partition(p));
  std::stable_sort(r.partitions.begin(), r.partitions.end(),
                   [](const auto& a, const auto& b) { return a.first_token < b.first_token; });
  for (const Value& s : array(v, "splits")) r.splits.push_back(split(s));
  for (const Value& m : array(v, "history")) r.history.push_back(minute(m));
  r.accessed = top_keys(v, "accessed", "units");
  r.throttled = top_keys(v, "throttled", "events");
  r.accessed_partition_keys = top_keys(v, "accessed_partition_keys", "units");
  r.throttled_partition_keys = top_keys(v, "throttled_partition_keys", "events");
  return r;
}

TableReport table(const Value& v) {
  TableReport t;
  t.name = string(v, "name");
  t.billing_mode = string(v, "billing_mode");
  t.item_count = number(v, "item_count");
  t.size_bytes = opt_number(v, "size_bytes");
  for (const Value& r : array(v, "resources")) t.resources.push_back(resource(r));
  // The table first, then its GSIs in the server's order.
  std::stable_partition(t.resources.begin(), t.resources.end(),
                        [](const ResourceReport& r) { return !r.index; });
  return t;
}

}  // namespace

double total(const ReasonCounts& counts) {
  return std::accumulate(counts.begin(), counts.end(), 0.0,
                         [](double sum, const auto& c) { return sum + c.second; });
}

const TableReport* Report::find(std::string_view name) const {
  for (const TableReport& t : tables)
    if (t.name == name) return &t;
  return nullptr;
}

Report parse_report(std::string_view json) {
  rapidjson::Document doc;
  doc.Parse(json.data(), json.size());
  if (doc.HasParseError())
    throw ReportError(std::string("not JSON: ") + rapidjson::GetParseError_En(doc.GetParseError()));
  if (!doc.IsObject()) throw ReportError("not a JSON object");
  Report report;
  report.kumo_version = string(doc, "kumo_version");
  report.capacity_mode = string(doc, "capacity_mode");
  if (const Value* clock = member(doc, "clock")) {
    report.clock_mode = string(*clock, "mode");
    report.now = number(*clock, "now");
  }
  if (const Value* window = member(doc, "window")) {
    report.window_start = number(*window, "start");
    report.window_seconds = number(*window, "seconds");
  }
  if (const Value* limits = member(doc, "partition_limits")) {
    // A ceiling of zero would make every share infinite: such a value is ignored.
    report.partition_read_units =
        std::max(1.0, opt_number(*limits, "read").value_or(report.partition_read_units));
    report.partition_write_units =
        std::max(1.0, opt_number(*limits, "write").value_or(report.partition_write_units));
  }
  if (member(doc, "tables") == nullptr) throw ReportError("no \"tables\"");
  for (const Value& t : array(doc, "tables")) report.tables.push_back(table(t));
  return report;
}

}  // namespace kumo::cli
