// What exports (exports.cpp) and imports (imports.cpp) share: their ARNs, ids, page tokens,
// times as the manifests write them, and their records, kept as JSON under meta/export/<id>
// and meta/import/<id> (docs/data-movement.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "engine/engine.h"

namespace kumo::api {

// arn:aws:dynamodb:<region>:<account>:table/<table>/<kind>/<id>, kind "export" or "import".
struct DataArn {
  std::string region, account, table, id;
};
std::string make_data_arn(std::string_view region, std::string_view account, std::string_view table,
                          std::string_view kind, std::string_view id);
// Reads an export or import ARN sent by a client: ValidationException "Invalid Export ARN"
// ("Invalid Import ARN") when it is not one (a table ARN, an ARN of the other kind, text),
// AccessDeniedException "Access is denied" when it names another account.
DataArn parse_data_arn(std::string_view arn, std::string_view kind, std::string_view account);

// A new export or import id: the time in epoch milliseconds (14 digits), '-', 8 random
// lowercase hex digits.
std::string new_data_id(double now);

// A random version-4 UUID (a ClientToken for a request that sent none).
std::string random_uuid();

// "2020-11-04T07:28:34.028Z": a time as the manifests write it.
std::string iso_time_ms(double seconds);
// "2020-11-04T07:28:34Z".
std::string iso_time_s(double seconds);

// The NextToken of a ListExports or ListImports page that ended at record `id`: hex digits in
// groups of 16, at least 112 of them; and back (nullopt when it is not a token of that kind).
std::string page_token(std::string_view kind, std::string_view id);
std::optional<std::string> page_position(std::string_view kind, std::string_view token);

// A record as JSON text, kept in the storage.
void put_record(engine::Engine& engine, const std::string& key, const std::string& json);
std::optional<std::string> get_record(const engine::Engine& engine, const std::string& key);
// (key, value) of every record under `prefix`, in key order.
std::vector<std::pair<std::string, std::string>> list_records(const engine::Engine& engine,
                                                              const std::string& prefix);

// The writer of a record's JSON, and its optional string members (absent: not written).
using RecordWriter = rapidjson::Writer<rapidjson::StringBuffer>;
void put_str(RecordWriter& w, const char* key, const std::optional<std::string>& value);

// What an export's record and an import's share, kept as the same JSON members.
struct JobRecord {
  std::string id, arn, table_name, table_arn, table_id;
  std::uint32_t table_number = 0;  // the table's id in the storage
  std::string status = "IN_PROGRESS";
  double start = 0;  // epoch seconds
  std::optional<double> end;
  std::string client_token, bucket;
  std::optional<std::string> failure_code, failure_message;
};
// Writes those members into the record being written; reads them back from its JSON.
void put_job_members(RecordWriter& w, const JobRecord& r);
void get_job_members(const rapidjson::Value& d, JobRecord* r);

// An export's or import's record is kept 90 days after its job ended (one in progress is
// kept). Past that, DescribeExport and DescribeImport answer as for an id never issued and
// the listings leave it out.
inline constexpr double kRecordSeconds = 90 * 86400.0;
bool record_expired(const JobRecord& r, double now);
// The record under `key`, read by `decode` (JSON text → Record, a JobRecord); nullopt when
// there is none or it expired.
template <typename Decode>
auto find_live_record(const engine::Engine& engine, const std::string& key, Decode decode)
    -> std::optional<decltype(decode(std::string()))> {
  std::optional<std::string> stored = get_record(engine, key);
  if (!stored) return std::nullopt;
  auto r = decode(*stored);
  if (record_expired(r, engine.clock().now_ms())) return std::nullopt;
  return r;
}
// A ClientToken of ExportTableToPointInTime or ImportTable is valid for 8 hours after the
// first request that used it completed (its job ended): a request repeating it within
// them gets that job; one after them starts a new job. Whether that is over by `now`.
inline constexpr double kTokenSeconds = 8 * 3600.0;
bool token_expired(const JobRecord& first, double now);
// How many records under `prefix` are of a job still IN_PROGRESS: the exports or imports
// running in the account, for their limits (EngineOptions::export_limit, import_limit).
std::size_t count_in_progress(const engine::Engine& engine, const std::string& prefix);
// Deletes the records under `prefix` that expired by `now`, with the ClientToken records
// under `token_prefix` that name them. Returns how many records went.
std::size_t expire_records(engine::Engine& engine, const std::string& prefix,
                           const std::string& token_prefix, double now);

// Members of a rapidjson object, read leniently (absent: nullopt).
std::optional<std::string> json_str(const rapidjson::Value& object, const char* name);
std::optional<double> json_num(const rapidjson::Value& object, const char* name);

}  // namespace kumo::api
