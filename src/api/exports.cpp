// ExportTableToPointInTime, DescribeExport and ListExports, and the job that writes an
// export's files into the local S3 (docs/data-movement.md).
//
// An export is its record, meta/export/<id> (JSON), and meta/export_token/<ClientToken> →
// id. DynamoDB exports only tables with point-in-time recovery, at a time in its window:
// - a full export without ExportTime (or with the request's own millisecond) is of the
//   present: the request takes a storage snapshot before it answers, so the export is the
//   table as it was at StartTime (= ExportTime), whatever is written afterwards;
// - a full export at a past ExportTime reads the table as it was then from the
//   point-in-time recovery log (Engine::read_table_at);
// - an incremental export writes, for each item changed in [ExportFromTime, ExportToTime),
//   its last change (Engine::changes_between), with the image from before ExportFromTime
//   when the view or a delete needs it.
// A background job writes, as DynamoDB does, <prefix>/AWSDynamoDB/<id>/_started, the
// gzipped data files (one per range of the table's token space, empty ones included; an
// incremental export's go to the folder <prefix>/AWSDynamoDB/data/ that all incremental
// exports share), then manifest-files.json and its .md5, then manifest-summary.json and its
// .md5; the record turns COMPLETED only after the summary is durable. A job cut by a stop
// has lost its snapshot: the next start turns its record FAILED.
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <spdlog/spdlog.h>

#include <fmt/format.h>

#include <random>

#include "api/data_lines.h"
#include "api/data_movement.h"
#include "api/exports.h"
#include "api/local_s3.h"
#include "api/operations.h"
#include "api/table_names.h"
#include "codec/key_codec.h"
#include "model/api_error.h"
#include "model/mutex.h"
#include "model/random_seed.h"

namespace kumo::api {
namespace {

constexpr std::string_view kExportPrefix = "meta/export/";
constexpr std::string_view kExportTokenPrefix = "meta/export_token/";
// Items read per step of the job (and between two checks of the fault hook).
constexpr std::size_t kExportPage = 256;

// Serialises the reservation of client tokens.
Mutex& exports_mutex() {
  static Mutex mutex;
  return mutex;
}

struct ExportRecord : JobRecord {
  double export_time = 0;
  std::optional<std::string> bucket_owner, prefix, kms_key, export_type;
  // An incremental export's period [from, to) and ExportViewType.
  std::optional<double> from_time, to_time;
  std::optional<std::string> view;
  std::string sse_algorithm = "AES256", format = "DYNAMODB_JSON";
  std::int64_t item_count = 0, billed_size = 0;
  std::string manifest;  // the key of manifest-summary.json
  // The parameters that made it, for a request repeating its ClientToken.
  std::string request;

  std::string type() const { return export_type.value_or("FULL_EXPORT"); }
  bool incremental() const { return type() == "INCREMENTAL_EXPORT"; }
  // <prefix>/AWSDynamoDB/<id>/: the prefix joined with one '/'.
  std::string base() const {
    std::string p = prefix.value_or("");
    while (!p.empty() && p.back() == '/') p.pop_back();
    return (p.empty() ? "" : p + "/") + "AWSDynamoDB/" + id + "/";
  }
  // Where the data files go: the export's own folder, or for an incremental export the
  // <prefix>/AWSDynamoDB/data/ folder all of them share.
  std::string data_folder() const {
    if (!incremental()) return base() + "data/";
    std::string p = prefix.value_or("");
    while (!p.empty() && p.back() == '/') p.pop_back();
    return (p.empty() ? "" : p + "/") + "AWSDynamoDB/data/";
  }
};

std::string encode(const ExportRecord& r) {
  rapidjson::StringBuffer out;
  RecordWriter w(out);
  w.StartObject();
  put_job_members(w, r);
  w.Key("export_time");
  w.Double(r.export_time);
  put_str(w, "bucket_owner", r.bucket_owner);
  put_str(w, "prefix", r.prefix);
  put_str(w, "kms_key", r.kms_key);
  put_str(w, "export_type", r.export_type);
  if (r.from_time) {
    w.Key("from_time");
    w.Double(*r.from_time);
  }
  if (r.to_time) {
    w.Key("to_time");
    w.Double(*r.to_time);
  }
  put_str(w, "view", r.view);
  put_str(w, "sse_algorithm", r.sse_algorithm);
  put_str(w, "format", r.format);
  w.Key("item_count");
  w.Int64(r.item_count);
  w.Key("billed_size");
  w.Int64(r.billed_size);
  put_str(w, "manifest", r.manifest);
  put_str(w, "request", r.request);
  w.EndObject();
  return {out.GetString(), out.GetSize()};
}

ExportRecord decode(std::string_view json) {
  rapidjson::Document d;
  d.Parse(json.data(), json.size());
  if (d.HasParseError() || !d.IsObject()) {
    throw storage::StorageError("corrupt export record");
  }
  ExportRecord r;
  get_job_members(d, &r);
  r.export_time = json_num(d, "export_time").value_or(0);
  r.bucket_owner = json_str(d, "bucket_owner");
  r.prefix = json_str(d, "prefix");
  r.kms_key = json_str(d, "kms_key");
  r.export_type = json_str(d, "export_type");
  r.from_time = json_num(d, "from_time");
  r.to_time = json_num(d, "to_time");
  r.view = json_str(d, "view");
  r.sse_algorithm = json_str(d, "sse_algorithm").value_or("AES256");
  r.format = json_str(d, "format").value_or("DYNAMODB_JSON");
  r.item_count = static_cast<std::int64_t>(json_num(d, "item_count").value_or(0));
  r.billed_size = static_cast<std::int64_t>(json_num(d, "billed_size").value_or(0));
  r.manifest = json_str(d, "manifest").value_or("");
  r.request = json_str(d, "request").value_or("");
  return r;
}

// The export's job, claimed by the process that runs it (Engine::claim_data_job).
std::string export_job(const std::string& id) {
  return "export/" + id;
}

std::string record_key(std::string_view id) {
  return std::string(kExportPrefix) + std::string(id);
}

std::string token_key(std::string_view token) {
  return std::string(kExportTokenPrefix) + std::string(token);
}

// The export's record; nullopt when there is none or it expired.
std::optional<ExportRecord> find_export(const engine::Engine& engine, std::string_view id) {
  return find_live_record(engine, record_key(id), decode);
}

void expire_exports(engine::Engine& engine) {
  MutexLock lock(exports_mutex());
  expire_records(engine, std::string(kExportPrefix), std::string(kExportTokenPrefix),
                 engine.clock().now_ms());
}

void store(engine::Engine& engine, const ExportRecord& r) {
  put_record(engine, record_key(r.id), encode(r));
}

// ---- the job ----

// A data file's name: 26 random characters of lowercase base32.
std::string data_file_name() {
  thread_local std::mt19937_64 random{random_seed()};
  static constexpr char kAlphabet[] = "abcdefghijklmnopqrstuvwxyz234567";
  std::string name;
  for (int i = 0; i < 26; ++i) name.push_back(kAlphabet[random() % 32]);
  return name;
}

struct DataFile {
  std::string key, md5, etag;
  std::int64_t items = 0;
};

void append_json_string(std::string* out, std::string_view key, std::string_view value,
                        bool comma = true) {
  rapidjson::StringBuffer b;
  rapidjson::Writer<rapidjson::StringBuffer> w(b);
  w.String(value.data(), static_cast<rapidjson::SizeType>(value.size()));
  *out += fmt::format("{}\"{}\":{}", comma ? "," : "", key,
                      std::string_view(b.GetString(), b.GetSize()));
}

std::string manifest_summary(const ExportRecord& r) {
  std::string out = r.incremental() ? "{\"version\":\"2023-08-01\"" : "{\"version\":\"2020-06-30\"";
  append_json_string(&out, "exportArn", r.arn);
  append_json_string(&out, "startTime", iso_time_ms(r.start));
  append_json_string(&out, "endTime", iso_time_ms(*r.end));
  append_json_string(&out, "tableArn", r.table_arn);
  append_json_string(&out, "tableId", r.table_id);
  if (r.incremental()) {
    append_json_string(&out, "exportFromTime", iso_time_ms(*r.from_time));
    append_json_string(&out, "exportToTime", iso_time_ms(*r.to_time));
  } else {
    append_json_string(&out, "exportTime", iso_time_ms(r.export_time));
  }
  append_json_string(&out, "s3Bucket", r.bucket);
  if (r.prefix) {
    append_json_string(&out, "s3Prefix", *r.prefix);
  } else {
    out += ",\"s3Prefix\":null";
  }
  append_json_string(&out, "s3SseAlgorithm", r.sse_algorithm);
  if (r.kms_key) {
    append_json_string(&out, "s3SseKmsKeyId", *r.kms_key);
  } else {
    out += ",\"s3SseKmsKeyId\":null";
  }
  append_json_string(&out, "manifestFilesS3Key", r.base() + "manifest-files.json");
  out += fmt::format(",\"billedSizeBytes\":{},\"itemCount\":{}", r.billed_size, r.item_count);
  append_json_string(&out, "outputFormat", r.format);
  if (r.incremental()) {
    append_json_string(&out, "outputView", r.view.value_or("NEW_AND_OLD_IMAGES"));
    append_json_string(&out, "exportType", r.type());
  }
  out += "}";
  return out;
}

// The lines of an export's data, in token order: `row` takes each line with its item's
// token and the bytes it bills. A source throws to stop.
using RowSink = std::function<void(std::uint64_t token, std::string_view line, std::int64_t bytes)>;
using RowSource = std::function<void(const RowSink& row)>;

// Writes the export's files; returns the record as completed. Throws S3Error.
using Progress = std::function<void(std::uint64_t done, std::uint64_t total)>;

void write_export(engine::Engine& engine, const LocalS3& s3, ExportRecord& r,
                  const RowSource& source, std::size_t files, const Progress& progress,
                  std::uint64_t total) {
  if (!s3.bucket_exists(r.bucket)) throw_no_such_bucket();
  const std::string base = r.base();
  s3.put(r.bucket, base + "_started", "");
  const std::string folder = r.data_folder();
  const char* extension = r.format == "ION" ? ".ion.gz" : ".json.gz";
  std::vector<DataFile> written;
  std::size_t done = 0, page = 0, f = 0;
  std::int64_t bytes = 0;
  const std::uint64_t step = files <= 1 ? 0 : UINT64_MAX / files + 1;
  DataFile file;
  std::unique_ptr<LocalS3::GzipWriter> writer;
  std::string chunk;
  auto open = [&] {
    file = DataFile{};
    file.key = folder + data_file_name() + extension;
    writer = s3.gzip_writer(r.bucket, file.key);
  };
  auto close = [&] {
    writer->write(chunk);
    chunk.clear();
    engine.data_job_fault("export", done, done + page);
    done += page;
    page = 0;
    writer->finish();
    file.md5 = writer->md5_base64();
    file.etag = writer->md5_hex();
    writer.reset();
    written.push_back(std::move(file));
  };
  open();
  source([&](std::uint64_t token, std::string_view line, std::int64_t size) {
    // One file per range of the token space.
    const std::size_t target = step == 0 ? 0 : static_cast<std::size_t>(token / step);
    while (f < target) {
      close();
      ++f;
      open();
    }
    chunk += line;
    bytes += size;
    ++file.items;
    if (++page == kExportPage) {
      writer->write(chunk);
      chunk.clear();
      if (engine.stopping()) throw std::runtime_error("the server is stopping");
      engine.data_job_fault("export", done, done + page);
      done += page;
      page = 0;
      if (progress) progress(done, total);
    }
  });
  for (;;) {
    close();
    if (++f >= files) break;
    open();
  }
  std::string files_manifest;
  for (const DataFile& data : written) {
    files_manifest += fmt::format("{{\"itemCount\":{},\"md5Checksum\":\"{}\",\"etag\":\"{}\"",
                                  data.items, data.md5, data.etag);
    append_json_string(&files_manifest, "dataFileS3Key", data.key);
    files_manifest += "}\n";
  }
  s3.put(r.bucket, base + "manifest-files.json", files_manifest);
  s3.put(r.bucket, base + "manifest-files.md5", md5_base64(files_manifest));
  r.item_count = static_cast<std::int64_t>(done);
  // An incremental export bills at least 10 MB.
  r.billed_size = r.incremental() ? std::max<std::int64_t>(bytes, 10'000'000) : bytes;
  r.end = engine.clock().now_ms();
  r.manifest = base + "manifest-summary.json";
  const std::string summary = manifest_summary(r);
  s3.put(r.bucket, base + "manifest-summary.json", summary);
  s3.put(r.bucket, base + "manifest-summary.md5", md5_base64(summary));
  r.status = "COMPLETED";
  if (progress) progress(done, done);
}

// The token of an item's storage key.
std::uint64_t key_token(std::string_view storage_key, std::size_t items_prefix) {
  return codec::read_u64(storage_key.substr(items_prefix));
}

std::string storage_key_of(const TableDefinition& table, const Item& item) {
  const AttributeValue* sort = table.key.range ? &item.at(table.key.range->name) : nullptr;
  return codec::item_key(table.id, item.at(table.key.hash.name), sort);
}

void append_item_line(bool ion, const Item& item, std::string* out) {
  if (ion) {
    append_ion_line(item, out);
  } else {
    append_json_line(item, out);
  }
}

// The table as the snapshot holds it.
RowSource snapshot_rows(engine::Engine& engine, const ExportRecord& r,
                        std::shared_ptr<storage::Snapshot> snapshot) {
  return [&engine, r, snapshot](const RowSink& row) {
    const bool ion = r.format == "ION";
    const std::string items = codec::space_prefix(r.table_number, codec::Space::kItems);
    auto it = engine.storage().iterator(items, codec::prefix_end(items), snapshot.get());
    std::string line;
    for (it->seek_to_first(); it->valid(); it->next()) {
      std::optional<engine::StoredItem> stored = engine::StoredItem::from_bytes(it->value());
      if (!stored) throw storage::StorageError("corrupt item in table " + r.table_name);
      line.clear();
      append_item_line(ion, stored->decode(), &line);
      row(key_token(it->key(), items.size()), line, static_cast<std::int64_t>(stored->size()));
    }
  };
}

[[noreturn]] void throw_log_gone(const ExportRecord& r) {
  throw std::runtime_error("point-in-time recovery of table " + r.table_name +
                           " was disabled or the table deleted during the export");
}

// The table as it was at ExportTime, from the point-in-time recovery log.
RowSource past_rows(engine::Engine& engine, const ExportRecord& r, engine::TablePtr table) {
  return [&engine, r, table](const RowSink& row) {
    const bool ion = r.format == "ION";
    const std::size_t items = codec::space_prefix(r.table_number, codec::Space::kItems).size();
    std::string line;
    const bool read = engine.read_table_at(r.table_name, epoch_milliseconds(r.export_time),
                                           [&](const Item& item) {
                                             line.clear();
                                             append_item_line(ion, item, &line);
                                             row(key_token(storage_key_of(*table, item), items),
                                                 line, static_cast<std::int64_t>(item_size(item)));
                                             return true;
                                           });
    if (!read) throw_log_gone(r);
  };
}

// Each item's last change in [ExportFromTime, ExportToTime), compacted to one line.
RowSource change_rows(engine::Engine& engine, const ExportRecord& r, engine::TablePtr table,
                      std::int64_t earliest_ms) {
  return [&engine, r, table, earliest_ms](const RowSink& row) {
    const bool ion = r.format == "ION";
    const bool old_images = r.view.value_or("NEW_AND_OLD_IMAGES") == "NEW_AND_OLD_IMAGES";
    const std::size_t items = codec::space_prefix(r.table_number, codec::Space::kItems).size();
    const std::int64_t from_ms = epoch_milliseconds(*r.from_time);
    const std::int64_t to_ms = epoch_milliseconds(*r.to_time);
    // The items as they were right before ExportFromTime (the window's start holds the
    // state at its first instant): an item changed without one was created in the period.
    std::map<std::string, Item, std::less<>> before;
    const bool read = engine.read_table_at(r.table_name, std::max(from_ms - 1, earliest_ms),
                                           [&](const Item& item) {
                                             before.emplace(storage_key_of(*table, item), item);
                                             return true;
                                           });
    if (!read) throw_log_gone(r);
    std::string line;
    const bool changed = engine.changes_between(
        r.table_name, from_ms - 1, to_ms - 1, [&](const engine::PitrChange& change) {
          const std::string key = storage_key_of(*table, change.key);
          auto old = before.find(key);
          const Item* old_image = old == before.end() ? nullptr : &old->second;
          // Created and deleted within the period: no line.
          if (!change.new_image && !old_image) return true;
          const Item* new_image = change.new_image ? &*change.new_image : nullptr;
          if (!old_images) old_image = nullptr;
          line.clear();
          if (ion) {
            append_ion_change_line(change.time_us, change.key, new_image, old_image, &line);
          } else {
            append_json_change_line(change.time_us, change.key, new_image, old_image, &line);
          }
          const Item& billed = new_image ? *new_image : change.key;
          row(key_token(key, items), line, static_cast<std::int64_t>(item_size(billed)));
          return true;
        });
    if (!changed) throw_log_gone(r);
  };
}

void run_export(engine::Engine& engine, const std::string& root, std::size_t files, ExportRecord r,
                const RowSource& source, const Progress& progress, std::uint64_t total) {
  try {
    write_export(engine, LocalS3(root), r, source, files, progress, total);
  } catch (const S3Error& e) {
    r.status = "FAILED";
    r.failure_code = e.code();
    r.failure_message = e.what();
    r.end = engine.clock().now_ms();
  } catch (const std::exception& e) {
    if (engine.stopping()) return;  // turned FAILED at the next start
    spdlog::warn("export {} failed: {}", r.id, e.what());
    r.status = "FAILED";
    r.failure_code = "UNKNOWN";
    r.failure_message = e.what();
    r.end = engine.clock().now_ms();
  }
  MutexLock lock(exports_mutex());
  store(engine, r);
}

// ---- answers ----

void write_description(JsonWriter& w, const ExportRecord& r) {
  w.StartObject();
  auto str = [&](std::string_view key, std::string_view value) {
    write_key(w, key);
    write_string(w, value);
  };
  str("ExportArn", r.arn);
  str("ExportStatus", r.status);
  write_key(w, "StartTime");
  w.Double(r.start);
  if (r.end && r.status != "IN_PROGRESS") {
    write_key(w, "EndTime");
    w.Double(*r.end);
  }
  if (r.status == "COMPLETED") str("ExportManifest", r.manifest);
  str("TableArn", r.table_arn);
  str("TableId", r.table_id);
  if (r.incremental()) {
    write_key(w, "IncrementalExportSpecification");
    w.StartObject();
    write_key(w, "ExportFromTime");
    w.Double(*r.from_time);
    write_key(w, "ExportToTime");
    w.Double(*r.to_time);
    str("ExportViewType", r.view.value_or("NEW_AND_OLD_IMAGES"));
    w.EndObject();
  } else {
    write_key(w, "ExportTime");
    w.Double(r.export_time);
  }
  str("ClientToken", r.client_token);
  str("S3Bucket", r.bucket);
  if (r.bucket_owner) str("S3BucketOwner", *r.bucket_owner);
  if (r.prefix) str("S3Prefix", *r.prefix);
  str("S3SseAlgorithm", r.sse_algorithm);
  if (r.kms_key) str("S3SseKmsKeyId", *r.kms_key);
  if (r.failure_code) str("FailureCode", *r.failure_code);
  if (r.failure_message) str("FailureMessage", *r.failure_message);
  str("ExportFormat", r.format);
  if (r.status == "COMPLETED") {
    write_key(w, "BilledSizeBytes");
    w.Int64(r.billed_size);
    write_key(w, "ItemCount");
    w.Int64(r.item_count);
  }
  if (r.export_type) str("ExportType", *r.export_type);
  w.EndObject();
}

std::string description_response(const ExportRecord& r) {
  JsonOut out;
  JsonWriter w(out);
  w.StartObject();
  write_key(w, "ExportDescription");
  write_description(w, r);
  w.EndObject();
  return json_text(out);
}

bool matches_pattern_bucket(std::string_view bucket) {
  return valid_bucket_name(bucket);
}

// The table an ExportTableToPointInTime TableArn names, checked as DynamoDB does.
std::string export_table_name(const Context& ctx, std::string_view arn) {
  if (!arn.starts_with("arn:")) {
    throw ApiError::validation(
        "One or more parameter values were invalid: tableArn is not a valid ARN");
  }
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  for (int i = 0; i < 5; ++i) {
    const std::size_t colon = arn.find(':', start);
    if (colon == std::string_view::npos) {
      throw ApiError::validation(
          "One or more parameter values were invalid: tableArn is not a valid ARN");
    }
    parts.push_back(arn.substr(start, colon - start));
    start = colon + 1;
  }
  const std::string_view resource = arn.substr(start);
  if (parts[2] != "dynamodb" || !resource.starts_with("table/") ||
      resource.find('/', 6) != std::string_view::npos || resource.size() == 6) {
    throw ApiError::validation("Invalid Request: Table ARN is invalid.");
  }
  // (The region is not looked at: the name is looked up in the endpoint's region.)
  if (parts[4] != ctx.options.account_id) throw ApiError::access_denied("Access is denied");
  return std::string(resource.substr(6));
}

// Checks a full export's time as DynamoDB does: the table must have point-in-time recovery,
// and ExportTime (default: the request's time) must lie in its window. Returns whether the
// export is of a past time, to be read from the log (false: the present, read from a
// snapshot). An ExportTime in the request's own millisecond is the present.
bool check_export_time(const Context& ctx, const TableDefinition& table,
                       const std::optional<engine::PitrWindow>& w,
                       std::optional<double> export_time, double now) {
  // `kumo export` exports a table as it is, whatever its recovery state.
  if (ctx.options.export_without_pitr && !export_time) return false;
  if (!w) {
    throw ApiError::point_in_time_recovery_unavailable(
        fmt::format("Point in time recovery is not enabled for table '{}'", table.name));
  }
  if (!export_time) return false;
  const std::int64_t at = epoch_milliseconds(*export_time);
  const std::int64_t now_ms = epoch_milliseconds(now);
  // In the future, or before the window's start (the enable time, or the start of the
  // recovery period once it has passed).
  if (at > now_ms || at < w->earliest_ms) {
    throw ApiError::invalid_export_time("Export Time is invalid");
  }
  if (at == now_ms) return false;
  // In the past but after LatestRestorableDateTime.
  if (at > w->latest_ms) {
    throw ApiError::invalid_export_time(
        "Point in Time Recovery is not available for specified export time");
  }
  return true;
}

// Checks an incremental export's period as DynamoDB does, in its order; returns [from, to)
// with ExportToTime's default (the latest time with data: LatestRestorableDateTime).
std::pair<double, double> check_export_period(const TableDefinition& table,
                                              const std::optional<engine::PitrWindow>& w,
                                              std::optional<double> export_time, double from,
                                              std::optional<double> to_sent, double now) {
  const double to = to_sent.value_or(w ? static_cast<double>(w->latest_ms) / 1000.0 : now);
  // The period starts no earlier than the log: the window's start (the table's creation
  // time when recovery is off). DynamoDB answers the same for an ExportTime given with an
  // incremental export and for a period that ends before it starts.
  const double floor = w ? static_cast<double>(w->earliest_ms) / 1000.0 : table.creation_date_time;
  if (!w || export_time || epoch_milliseconds(from) < epoch_milliseconds(floor) || to < from) {
    throw ApiError::invalid_export_time(fmt::format(
        "Incremental export period from time cannot be less than the table creation time : {}",
        iso_time_s(floor)));
  }
  if (epoch_milliseconds(to) > epoch_milliseconds(now)) {
    throw ApiError::invalid_export_time(fmt::format(
        "Incremental export period to time cannot be greater than the current time : {}",
        iso_time_s(now)));
  }
  const std::int64_t length_ms = epoch_milliseconds(to) - epoch_milliseconds(from);
  if (length_ms < 15 * 60 * 1000) {
    throw ApiError::invalid_export_time(
        "Difference between export period from time and export period to time is less than 15 "
        "minutes");
  }
  if (length_ms > 24 * 3600 * 1000) {
    throw ApiError::invalid_export_time(
        "Difference between export period from time and export period to time is greater "
        "than 24 hours");
  }
  return {from, to};
}

std::string canonical_request(const std::vector<std::pair<std::string, std::string>>& members) {
  std::string out;
  for (const auto& [key, value] : members) out += key + "=" + value + "\n";
  return out;
}

std::string timestamp_text(std::optional<double> t) {
  return t ? std::to_string(epoch_milliseconds(*t)) : "";
}

}  // namespace

std::string export_table_to_point_in_time(const Context& ctx, const JsonObject& request) {
  CoralErrors coral;
  auto table_arn_sent = request.string("TableArn");
  auto bucket = request.string("S3Bucket");
  auto owner = request.string("S3BucketOwner");
  auto prefix = request.string("S3Prefix");
  auto export_time = request.timestamp("ExportTime");
  auto token = request.string("ClientToken");
  auto sse = request.string("S3SseAlgorithm");
  auto kms = request.string("S3SseKmsKeyId");
  auto format = request.string("ExportFormat");
  auto type = request.string("ExportType");
  auto spec = request.object("IncrementalExportSpecification");
  std::optional<double> from_time, to_time;
  std::optional<std::string_view> view;
  if (spec) {
    from_time = spec->timestamp("ExportFromTime");
    to_time = spec->timestamp("ExportToTime");
    view = spec->string("ExportViewType");
  }
  coral.require(table_arn_sent.has_value(), "tableArn");
  if (table_arn_sent) coral.check_length(*table_arn_sent, "tableArn", 1, 1024);
  coral.require(bucket.has_value(), "s3Bucket");
  if (bucket) {
    if (bucket->size() > 255) {
      coral.add(*bucket, "s3Bucket", "Member must have length less than or equal to 255");
    }
    if (!matches_pattern_bucket(*bucket)) {
      coral.add(*bucket, "s3Bucket",
                "Member must satisfy regular expression pattern: "
                "^[a-z0-9A-Z]+[\\.\\-\\w]*[a-z0-9A-Z]+$");
    }
  }
  if (owner &&
      (owner->size() != 12 || owner->find_first_not_of("0123456789") != std::string_view::npos)) {
    coral.add(*owner, "s3BucketOwner", "Member must satisfy regular expression pattern: [0-9]{12}");
  }
  if (prefix && prefix->size() > 1024) {
    coral.add(*prefix, "s3Prefix", "Member must have length less than or equal to 1024");
  }
  if (token && (token->empty() || token->find('$') != std::string_view::npos)) {
    coral.add(*token, "clientToken", "Member must satisfy regular expression pattern: ^[^\\$]+$");
  }
  coral.check_enum(sse, "s3SseAlgorithm", {"AES256", "KMS"});
  if (kms) coral.check_length(*kms, "s3SseKmsKeyId", 1, 2048);
  coral.check_enum(format, "exportFormat", {"DYNAMODB_JSON", "ION"});
  coral.check_enum(type, "exportType", {"FULL_EXPORT", "INCREMENTAL_EXPORT"});
  coral.check_enum(view, "incrementalExportSpecification.exportViewType",
                   {"NEW_IMAGE", "NEW_AND_OLD_IMAGES"});
  coral.throw_if_any();
  // Object keys must stay inside the bucket's directory.
  if (prefix && !valid_object_key(*prefix)) {
    throw ApiError::validation(
        "One or more parameter values were invalid: S3Prefix must not contain '..' segments, "
        "start with '/' or contain NUL");
  }

  const std::string table_name = export_table_name(ctx, *table_arn_sent);
  if (kms && sse != "KMS") {
    throw ApiError::validation(
        "Invalid Request: KMS Key Id is not supported for this encryption type");
  }
  const bool incremental = type == "INCREMENTAL_EXPORT";
  if (spec && !type) {
    throw ApiError::validation(
        "Invalid Request: Export Type expected to be Incremental Export when incremental "
        "export specification is provided");
  }
  if (spec && type == "FULL_EXPORT") {
    throw ApiError::validation(
        "Invalid Request: When Export Type is Full Export , Incremental Export Specification "
        "should not be provided");
  }
  if (incremental && !spec) {
    throw ApiError::validation(
        "Invalid Request: Incremental Export Specification expected when export type is set "
        "as Incremental Export");
  }
  if (incremental && !from_time) {
    throw ApiError::validation(
        "Invalid Request: ExportFromTime must be provided in IncrementalExportSpecification");
  }
  engine::TablePtr table = ctx.engine.catalog().find(table_name);
  if (!table || table->restore) throw ApiError::table_not_found(*table_arn_sent);
  const double now = ctx.engine.clock().now_ms();
  const std::optional<engine::PitrWindow> window = ctx.engine.pitr_window(*table);
  bool past = false;
  std::pair<double, double> period;
  if (incremental) {
    period = check_export_period(*table, window, export_time, *from_time, to_time, now);
  } else {
    past = check_export_time(ctx, *table, window, export_time, now);
  }

  ExportRecord r;
  r.table_name = table->name;
  r.table_arn = table_arn(ctx, table->name);
  r.table_id = table->table_id;
  r.table_number = table->id;
  r.client_token = token ? std::string(*token) : random_uuid();
  r.bucket = std::string(*bucket);
  if (owner) r.bucket_owner = std::string(*owner);
  if (prefix) r.prefix = std::string(*prefix);
  if (kms) r.kms_key = std::string(*kms);
  if (type) r.export_type = std::string(*type);
  if (incremental) {
    r.from_time = period.first;
    r.to_time = period.second;
    r.view = std::string(view.value_or("NEW_AND_OLD_IMAGES"));
  }
  if (sse) r.sse_algorithm = std::string(*sse);
  if (format) r.format = std::string(*format);
  r.request = canonical_request({{"TableArn", r.table_arn},
                                 {"S3Bucket", r.bucket},
                                 {"S3BucketOwner", r.bucket_owner.value_or("")},
                                 {"S3Prefix", r.prefix.value_or("")},
                                 {"ExportTime", timestamp_text(export_time)},
                                 {"S3SseAlgorithm", std::string(sse.value_or(""))},
                                 {"S3SseKmsKeyId", r.kms_key.value_or("")},
                                 {"ExportFormat", r.format},
                                 {"ExportType", r.type()},
                                 {"ExportFromTime", timestamp_text(from_time)},
                                 {"ExportToTime", timestamp_text(to_time)},
                                 {"ExportViewType", std::string(view.value_or(""))}});

  std::shared_ptr<storage::Snapshot> snapshot;
  {
    MutexLock lock(exports_mutex());
    if (std::optional<std::string> id = get_record(ctx.engine, token_key(r.client_token))) {
      std::optional<ExportRecord> first = find_export(ctx.engine, *id);
      if (first && !token_expired(*first, now)) {
        if (first->request != r.request) {
          throw ApiError::export_conflict(
              "Export conflict: Duplicate request detected with conflicting parameters");
        }
        return description_response(*first);
      }
    }
    const std::size_t limit = ctx.engine.options().export_limit;
    if (count_in_progress(ctx.engine, std::string(kExportPrefix)) >= limit) {
      throw ApiError::limit_exceeded(fmt::format(
          "Subscriber limit exceeded: Only {} export operations can be done simultaneously",
          limit));
    }
    // The instant a full export of the present is of.
    if (!incremental && !past && !ctx.engine.storage().shared()) {
      snapshot = ctx.engine.storage().snapshot();
    }
    r.start = now;
    r.export_time = export_time.value_or(now);
    do {
      r.id = new_data_id(now);
    } while (get_record(ctx.engine, record_key(r.id)));
    r.arn = make_data_arn(ctx.options.region, ctx.options.account_id, table->name, "export", r.id);
    // Claimed before its record is stored: no other process takes it for one that stopped.
    ctx.engine.claim_data_job(export_job(r.id));
    storage::WriteBatch batch;
    batch.put(record_key(r.id), encode(r));
    batch.put(token_key(r.client_token), r.id);
    ctx.engine.storage().write(batch);
  }
  engine::Engine& engine = ctx.engine;
  const std::string root = ctx.options.export_root;
  const std::size_t files = std::max<std::size_t>(1, ctx.options.export_files);
  const Progress progress = ctx.options.data_progress;
  const auto total =
      static_cast<std::uint64_t>(std::max<std::int64_t>(0, engine.item_count(*table)));
  RowSource source = incremental ? change_rows(engine, r, table, window->earliest_ms)
                     : past      ? past_rows(engine, r, table)
                                 : snapshot_rows(engine, r, snapshot);
  engine.start_job("kumo-export", [&engine, root, files, r, source, progress, total] {
    // Given back when done; a job cut short by a stop keeps its claim in the storage until
    // the process is gone, when another process ends it FAILED.
    struct Release {
      engine::Engine& engine;
      std::string job;
      ~Release() { engine.release_data_job(job, !engine.stopping()); }
    } release{engine, export_job(r.id)};
    engine::lower_job_priority();
    run_export(engine, root, files, r, source, progress, total);
  });
  return description_response(r);
}

std::string describe_export(const Context& ctx, const JsonObject& request) {
  CoralErrors coral;
  auto arn = request.string("ExportArn");
  coral.require(arn.has_value(), "exportArn");
  if (arn) coral.check_length(*arn, "exportArn", 37, 1024);
  coral.throw_if_any();
  const DataArn parsed = parse_data_arn(*arn, "export", ctx.options.account_id);
  if (parsed.region != ctx.options.region) {
    throw ApiError::export_not_found("Export not found: Invalid export arn");
  }
  std::optional<ExportRecord> r;
  if (engine::is_backup_id(parsed.id)) r = find_export(ctx.engine, parsed.id);
  if (!r || r->table_name != parsed.table) {
    throw ApiError::export_not_found("Export not found: Export not found: " + std::string(*arn));
  }
  return description_response(*r);
}

std::string list_exports(const Context& ctx, const JsonObject& request) {
  CoralErrors coral;
  auto table_arn_sent = request.string("TableArn");
  auto max = request.integer("MaxResults");
  auto next = request.string("NextToken");
  if (table_arn_sent) coral.check_length(*table_arn_sent, "tableArn", 1, 1024);
  if (max && *max < 1) {
    coral.add(std::to_string(*max), "maxResults",
              "Member must have value greater than or equal to 1");
  }
  if (max && *max > 25) {
    coral.add(std::to_string(*max), "maxResults",
              "Member must have value less than or equal to 25");
  }
  coral.throw_if_any();
  std::optional<std::string> after;
  if (next) {
    after = page_position("export", *next);
    if (!after) {
      throw ApiError::validation("Invalid Request: Provided nextToken is invalid: " +
                                 std::string(*next));
    }
  }
  // The filter is bound to the table that has the name now.
  std::optional<std::string> table_id;
  if (table_arn_sent) {
    engine::TablePtr table = ctx.engine.catalog().find(table_name_of(*table_arn_sent));
    table_id = table ? table->table_id : std::string("-");
  }
  const std::size_t limit = max ? static_cast<std::size_t>(*max) : 10;
  expire_exports(ctx.engine);
  const double now = ctx.engine.clock().now_ms();
  auto records = list_records(ctx.engine, std::string(kExportPrefix));
  JsonOut out;
  JsonWriter w(out);
  w.StartObject();
  write_key(w, "ExportSummaries");
  w.StartArray();
  std::size_t count = 0;
  std::optional<std::string> last;
  bool more = false;
  // Newest first.
  for (auto it = records.rbegin(); it != records.rend(); ++it) {
    const ExportRecord r = decode(it->second);
    if (record_expired(r, now)) continue;
    if (after && r.id >= *after) continue;
    if (table_id && r.table_id != *table_id) continue;
    if (count == limit) {
      more = true;
      break;
    }
    w.StartObject();
    write_key(w, "ExportArn");
    write_string(w, r.arn);
    write_key(w, "ExportStatus");
    write_string(w, r.status);
    write_key(w, "ExportType");
    write_string(w, r.type());
    w.EndObject();
    ++count;
    last = r.id;
  }
  w.EndArray();
  if (more && last) {
    write_key(w, "NextToken");
    write_string(w, page_token("export", *last));
  }
  w.EndObject();
  return json_text(out);
}

void resume_exports(engine::Engine& engine) {
  expire_exports(engine);
  MutexLock lock(exports_mutex());
  for (const auto& [key, value] : list_records(engine, std::string(kExportPrefix))) {
    ExportRecord r = decode(value);
    if (r.status != "IN_PROGRESS") continue;
    // Still running, here or in another live process sharing the storage.
    if (!engine.claim_data_job(export_job(r.id))) continue;
    // Its process stopped: the snapshot it read did not outlive it.
    r.status = "FAILED";
    r.failure_code = "UNKNOWN";
    r.failure_message = "The export was interrupted: the server stopped before it completed";
    r.end = engine.clock().now_ms();
    store(engine, r);
    engine.release_data_job(export_job(r.id), true);
  }
}

}  // namespace kumo::api
