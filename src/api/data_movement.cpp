#include "api/data_movement.h"

#include <ctime>
#include <random>
#include <set>

#include <fmt/format.h>

#include "codec/key_codec.h"
#include "engine/backup_records.h"
#include "model/api_error.h"
#include "model/clock.h"
#include "model/random_seed.h"

namespace kumo::api {

std::string make_data_arn(std::string_view region, std::string_view account, std::string_view table,
                          std::string_view kind, std::string_view id) {
  return fmt::format("arn:aws:dynamodb:{}:{}:table/{}/{}/{}", region, account, table, kind, id);
}

DataArn parse_data_arn(std::string_view arn, std::string_view kind, std::string_view account) {
  const std::string invalid =
      fmt::format("Invalid {}{} ARN", static_cast<char>(kind[0] - 'a' + 'A'), kind.substr(1));
  // arn:aws:dynamodb:<region>:<account>:table/<name>/<kind>/<id>
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  for (int i = 0; i < 5; ++i) {
    const std::size_t colon = arn.find(':', start);
    if (colon == std::string_view::npos) throw ApiError::validation(invalid);
    parts.push_back(arn.substr(start, colon - start));
    start = colon + 1;
  }
  const std::string_view resource = arn.substr(start);
  if (parts[0] != "arn" || parts[1] != "aws" || parts[2] != "dynamodb" || parts[3].empty()) {
    throw ApiError::validation(invalid);
  }
  const std::string middle = "/" + std::string(kind) + "/";
  constexpr std::string_view kTable = "table/";
  const std::size_t at = resource.find(middle);
  if (!resource.starts_with(kTable) || at == std::string_view::npos) {
    throw ApiError::validation(invalid);
  }
  const std::string_view table = resource.substr(kTable.size(), at - kTable.size());
  const std::string_view id = resource.substr(at + middle.size());
  // Table names are 3 to 255 characters.
  if (table.size() < 3 || table.find('/') != std::string_view::npos || id.empty() ||
      id.find('/') != std::string_view::npos) {
    throw ApiError::validation(invalid);
  }
  if (parts[4] != account) throw ApiError::access_denied("Access is denied");
  return DataArn{std::string(parts[3]), std::string(parts[4]), std::string(table), std::string(id)};
}

std::string new_data_id(double now) {
  thread_local std::mt19937 random{static_cast<std::uint32_t>(random_seed())};
  return engine::backup_id(now, static_cast<std::uint32_t>(random()));
}

std::string random_uuid() {
  thread_local std::mt19937_64 random{random_seed()};
  std::uint64_t hi = random(), lo = random();
  hi = (hi & 0xFFFFFFFFFFFF0FFFULL) | 0x0000000000004000ULL;
  lo = (lo & 0x3FFFFFFFFFFFFFFFULL) | 0x8000000000000000ULL;
  return fmt::format("{:08x}-{:04x}-{:04x}-{:04x}-{:012x}", hi >> 32, (hi >> 16) & 0xFFFF,
                     hi & 0xFFFF, lo >> 48, lo & 0xFFFFFFFFFFFFULL);
}

namespace {
std::string iso_time(double seconds, bool with_ms) {
  const std::int64_t ms = epoch_milliseconds(seconds);
  const std::time_t t = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  return with_ms ? fmt::format("{}.{:03d}Z", buf, ms % 1000) : fmt::format("{}Z", buf);
}
}  // namespace

std::string iso_time_ms(double seconds) {
  return iso_time(seconds, true);
}

std::string iso_time_s(double seconds) {
  return iso_time(seconds, false);
}

std::string page_token(std::string_view kind, std::string_view id) {
  std::string text = std::string(kind) + ":" + std::string(id);
  std::string hex;
  for (unsigned char c : text) hex += fmt::format("{:02x}", c);
  // Padded with "00" pairs to a multiple of 16 digits, at least 112.
  while (hex.size() < 112 || hex.size() % 16 != 0) hex += "00";
  return hex;
}

std::optional<std::string> page_position(std::string_view kind, std::string_view token) {
  if (token.size() < 112 || token.size() % 16 != 0) return std::nullopt;
  std::string text;
  for (std::size_t i = 0; i < token.size(); i += 2) {
    auto digit = [](char c) -> int {
      if (c >= '0' && c <= '9') return c - '0';
      if (c >= 'a' && c <= 'f') return c - 'a' + 10;
      return -1;
    };
    const int hi = digit(token[i]), lo = digit(token[i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    const char c = static_cast<char>(hi * 16 + lo);
    if (c == '\0') break;
    text.push_back(c);
  }
  const std::string head = std::string(kind) + ":";
  if (!text.starts_with(head)) return std::nullopt;
  std::string id = text.substr(head.size());
  if (!engine::is_backup_id(id)) return std::nullopt;
  return id;
}

void put_record(engine::Engine& engine, const std::string& key, const std::string& json) {
  storage::WriteBatch batch;
  batch.put(key, json);
  engine.storage().write(batch);
}

std::optional<std::string> get_record(const engine::Engine& engine, const std::string& key) {
  return engine.storage().get(key);
}

std::vector<std::pair<std::string, std::string>> list_records(const engine::Engine& engine,
                                                              const std::string& prefix) {
  std::vector<std::pair<std::string, std::string>> out;
  auto it = engine.storage().iterator(prefix, codec::prefix_end(prefix));
  for (it->seek_to_first(); it->valid(); it->next()) {
    out.emplace_back(std::string(it->key()), std::string(it->value()));
  }
  return out;
}

std::optional<std::string> json_str(const rapidjson::Value& object, const char* name) {
  auto it = object.FindMember(name);
  if (it == object.MemberEnd() || !it->value.IsString()) return std::nullopt;
  return std::string(it->value.GetString(), it->value.GetStringLength());
}

std::optional<double> json_num(const rapidjson::Value& object, const char* name) {
  auto it = object.FindMember(name);
  if (it == object.MemberEnd() || !it->value.IsNumber()) return std::nullopt;
  return it->value.GetDouble();
}

void put_str(RecordWriter& w, const char* key, const std::optional<std::string>& value) {
  if (!value) return;
  w.Key(key);
  w.String(value->c_str(), static_cast<rapidjson::SizeType>(value->size()));
}

void put_job_members(RecordWriter& w, const JobRecord& r) {
  put_str(w, "id", r.id);
  put_str(w, "arn", r.arn);
  put_str(w, "table_name", r.table_name);
  put_str(w, "table_arn", r.table_arn);
  put_str(w, "table_id", r.table_id);
  w.Key("table_number");
  w.Uint(r.table_number);
  put_str(w, "status", r.status);
  w.Key("start");
  w.Double(r.start);
  if (r.end) {
    w.Key("end");
    w.Double(*r.end);
  }
  put_str(w, "client_token", r.client_token);
  put_str(w, "bucket", r.bucket);
  put_str(w, "failure_code", r.failure_code);
  put_str(w, "failure_message", r.failure_message);
}

void get_job_members(const rapidjson::Value& d, JobRecord* r) {
  r->id = json_str(d, "id").value_or("");
  r->arn = json_str(d, "arn").value_or("");
  r->table_name = json_str(d, "table_name").value_or("");
  r->table_arn = json_str(d, "table_arn").value_or("");
  r->table_id = json_str(d, "table_id").value_or("");
  r->table_number = static_cast<std::uint32_t>(json_num(d, "table_number").value_or(0));
  r->status = json_str(d, "status").value_or("FAILED");
  r->start = json_num(d, "start").value_or(0);
  r->end = json_num(d, "end");
  r->client_token = json_str(d, "client_token").value_or("");
  r->bucket = json_str(d, "bucket").value_or("");
  r->failure_code = json_str(d, "failure_code");
  r->failure_message = json_str(d, "failure_message");
}

bool record_expired(const JobRecord& r, double now) {
  if (r.status == "IN_PROGRESS") return false;
  return now > r.end.value_or(r.start) + kRecordSeconds;
}

bool token_expired(const JobRecord& first, double now) {
  return first.status != "IN_PROGRESS" && first.end && now > *first.end + kTokenSeconds;
}

std::size_t count_in_progress(const engine::Engine& engine, const std::string& prefix) {
  std::size_t running = 0;
  for (const auto& [key, value] : list_records(engine, prefix)) {
    rapidjson::Document d;
    d.Parse(value.data(), value.size());
    if (!d.HasParseError() && d.IsObject() && json_str(d, "status") == "IN_PROGRESS") ++running;
  }
  return running;
}

std::size_t expire_records(engine::Engine& engine, const std::string& prefix,
                           const std::string& token_prefix, double now) {
  std::set<std::string> expired;
  storage::WriteBatch batch;
  for (const auto& [key, value] : list_records(engine, prefix)) {
    rapidjson::Document d;
    d.Parse(value.data(), value.size());
    if (d.HasParseError() || !d.IsObject()) continue;
    JobRecord r;
    get_job_members(d, &r);
    if (!record_expired(r, now)) continue;
    expired.insert(key.substr(prefix.size()));
    batch.del(key);
  }
  if (expired.empty()) return 0;
  for (const auto& [key, id] : list_records(engine, token_prefix)) {
    if (expired.count(id)) batch.del(key);
  }
  engine.storage().write(batch);
  return expired.size();
}

}  // namespace kumo::api
