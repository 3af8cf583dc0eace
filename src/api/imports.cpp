// ImportTable, DescribeImport and ListImports, and the job that reads the local S3 into a
// new table (docs/data-movement.md).
//
// An import is its record, meta/import/<id> (JSON), and meta/import_token/<ClientToken> →
// id. ImportTable creates the table at once, CREATING: its `restore` member marks it as the
// import's ("import/<id>"), which keeps it CREATING the way a restore's target is, until the
// catalog change that clears it. A background job reads every object under the key prefix
// and writes the items through the engine's write path (indexes and counters as for any
// write), a few dozen to a batch, then makes the table ACTIVE and the record COMPLETED
// (FAILED when items were refused). Writing an item again is harmless, so a job cut by a
// stop is run again, whole, at the next start: the table is never ACTIVE with part of its
// items. The job runs at a low CPU priority, so that it takes what requests leave.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <thread>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <spdlog/spdlog.h>

#include <fmt/format.h>

#include "api/data_lines.h"
#include "api/data_movement.h"
#include "api/exports.h"
#include "api/item_checks.h"
#include "api/item_writes.h"
#include "api/local_s3.h"
#include "api/operations.h"
#include "api/table_names.h"
#include "api/table_requests.h"
#include "model/api_error.h"
#include "model/mutex.h"

namespace kumo::api {
namespace {

constexpr std::string_view kImportPrefix = "meta/import/";
constexpr std::string_view kImportTokenPrefix = "meta/import_token/";
// Items written between two checks of the fault hook and of a stop.
constexpr std::size_t kImportPage = 256;
// Items written in one batch (Engine::transact_write): one commit, one write-ahead log
// write. Small, because the batch holds its items' lock stripes (a few dozen of the 256)
// until it is committed, and a request writing an item of another table may share one.
constexpr std::size_t kImportBatch = 32;
static_assert(kImportPage % kImportBatch == 0);
constexpr std::string_view kItemValidationMessage =
    "Some of the items failed validation checks and were not imported. Please check "
    "CloudWatch error logs for more details.";

Mutex& imports_mutex() {
  static Mutex mutex;
  return mutex;
}

struct ImportRecord : JobRecord {
  std::string bucket_owner;
  std::optional<std::string> key_prefix;
  std::string format, compression = "NONE";
  std::optional<std::string> format_options;  // InputFormatOptions as sent (JSON)
  std::string creation_parameters;            // TableCreationParameters as sent (JSON)
  std::int64_t processed = 0, imported = 0, errors = 0, processed_bytes = 0;
};

std::string encode_import(const ImportRecord& r) {
  rapidjson::StringBuffer out;
  RecordWriter w(out);
  w.StartObject();
  put_job_members(w, r);
  put_str(w, "bucket_owner", r.bucket_owner);
  put_str(w, "key_prefix", r.key_prefix);
  put_str(w, "format", r.format);
  put_str(w, "compression", r.compression);
  put_str(w, "format_options", r.format_options);
  put_str(w, "creation_parameters", r.creation_parameters);
  for (const auto& [key, value] :
       {std::pair{"processed", r.processed}, std::pair{"imported", r.imported},
        std::pair{"errors", r.errors}, std::pair{"processed_bytes", r.processed_bytes}}) {
    w.Key(key);
    w.Int64(value);
  }
  w.EndObject();
  return {out.GetString(), out.GetSize()};
}

ImportRecord decode_import(std::string_view json) {
  rapidjson::Document d;
  d.Parse(json.data(), json.size());
  if (d.HasParseError() || !d.IsObject()) throw storage::StorageError("corrupt import record");
  ImportRecord r;
  get_job_members(d, &r);
  r.bucket_owner = json_str(d, "bucket_owner").value_or("");
  r.key_prefix = json_str(d, "key_prefix");
  r.format = json_str(d, "format").value_or("DYNAMODB_JSON");
  r.compression = json_str(d, "compression").value_or("NONE");
  r.format_options = json_str(d, "format_options");
  r.creation_parameters = json_str(d, "creation_parameters").value_or("{}");
  r.processed = static_cast<std::int64_t>(json_num(d, "processed").value_or(0));
  r.imported = static_cast<std::int64_t>(json_num(d, "imported").value_or(0));
  r.errors = static_cast<std::int64_t>(json_num(d, "errors").value_or(0));
  r.processed_bytes = static_cast<std::int64_t>(json_num(d, "processed_bytes").value_or(0));
  return r;
}

std::string import_key(std::string_view id) {
  return std::string(kImportPrefix) + std::string(id);
}

std::string import_token_key(std::string_view token) {
  return std::string(kImportTokenPrefix) + std::string(token);
}

// The import's record; nullopt when there is none or it expired.
std::optional<ImportRecord> find_import(const engine::Engine& engine, std::string_view id) {
  return find_live_record(engine, import_key(id), decode_import);
}

void expire_imports(engine::Engine& engine) {
  MutexLock lock(imports_mutex());
  expire_records(engine, std::string(kImportPrefix), std::string(kImportTokenPrefix),
                 engine.clock().now_ms());
}

void store_import(engine::Engine& engine, const ImportRecord& r) {
  put_record(engine, import_key(r.id), encode_import(r));
}

// The `restore` marker of a table being imported, and the name of the import's job, claimed
// by the process that runs it (Engine::claim_data_job).
std::string marker(std::string_view id) {
  return "import/" + std::string(id);
}

std::string json_of(const JsonValue& value) {
  rapidjson::StringBuffer out;
  rapidjson::Writer<rapidjson::StringBuffer> w(out);
  value.Accept(w);
  return {out.GetString(), out.GetSize()};
}

Compression compression_of(std::string_view name) {
  if (name == "GZIP") return Compression::kGzip;
  if (name == "ZSTD") return Compression::kZstd;
  return Compression::kNone;
}

// ---- the job ----

// What an import's items must be: the table's key with its types (check_item_key), index
// key attributes of their defined types, within the item size limit.
void check_imported_item(const TableDefinition& t, const Item& item) {
  check_item_key(t, item);
  for (const IndexDefinition& index : t.global_indexes) {
    for (const auto* part : {&index.hash, &index.range}) {
      for (const AttributeDefinition& a : *part) {
        auto it = item.find(a.name);
        if (it != item.end() && it->second.type() != to_attr_type(a.type)) {
          throw ApiError::validation(fmt::format(
              "One or more parameter values were invalid: Type mismatch for Index Key {} "
              "Expected: {} Actual: {} IndexName: {}",
              a.name, scalar_type_name(a.type), type_name(it->second.type()), index.name));
        }
      }
    }
  }
  check_put_size(item);
}

// Where an item came from: its source object and its place among that object's items
// (from 0).
struct ItemPointer {
  const std::string* object = nullptr;
  std::uint64_t index = 0;
};

// The errors log of an import. DynamoDB writes one CloudWatch Logs event per item it could
// not import, in the log group /aws-dynamodb/imports, log stream <import id>/error, the
// import id being the last element of the ImportArn. Each event's message is a JSON object:
// {"itemS3Pointer":{"bucket":..., "key":..., "itemIndex":...}, "importArn":...,
// "errorMessages":[...]}. Kumo keeps that log group in the export root, in a directory no
// bucket can be (a bucket's name begins with a lowercase letter or a digit):
// .cloudwatch/aws-dynamodb/imports/<import id>/error, one event message per line. A run of
// the job writes it anew (a job cut by a stop runs again whole); an import without errors
// leaves none.
class ErrorLog {
 public:
  ErrorLog(const std::string& root, const ImportRecord& r)
      : path_(root + "/.cloudwatch/aws-dynamodb/imports/" + r.id + "/error"),
        arn_(r.arn),
        bucket_(r.bucket) {
    std::error_code ignored;
    std::filesystem::remove(path_, ignored);
  }

  void add(const ItemPointer& where, std::string_view message) {
    if (!out_.is_open()) {
      std::error_code ignored;
      std::filesystem::create_directories(std::filesystem::path(path_).parent_path(), ignored);
      out_.open(path_, std::ios::binary | std::ios::trunc);
    }
    rapidjson::StringBuffer text;
    rapidjson::Writer<rapidjson::StringBuffer> w(text);
    w.StartObject();
    w.Key("itemS3Pointer");
    w.StartObject();
    w.Key("bucket");
    w.String(bucket_.data(), static_cast<rapidjson::SizeType>(bucket_.size()));
    w.Key("key");
    const std::string& key = where.object ? *where.object : std::string();
    w.String(key.data(), static_cast<rapidjson::SizeType>(key.size()));
    w.Key("itemIndex");
    w.Uint64(where.index);
    w.EndObject();
    w.Key("importArn");
    w.String(arn_.data(), static_cast<rapidjson::SizeType>(arn_.size()));
    w.Key("errorMessages");
    w.StartArray();
    w.String(message.data(), static_cast<rapidjson::SizeType>(message.size()));
    w.EndArray();
    w.EndObject();
    out_.write(text.GetString(), static_cast<std::streamsize>(text.GetSize()));
    out_.put('\n');
  }

  // Flushed and closed (the log is complete once the import's record says it ended). A
  // log that could not be written is reported in the server's log; the import goes on.
  void close() {
    if (!out_.is_open()) return;
    out_.flush();
    const bool good = out_.good();
    out_.close();
    if (!good) spdlog::warn("the errors log {} could not be written whole", path_);
  }

 private:
  std::string path_, arn_, bucket_;
  std::ofstream out_;  // opened at the first error
};

struct ImportCounts {
  std::int64_t processed = 0, imported = 0, errors = 0, bytes = 0;
};

// Writes one item; an item the write path refuses for good is counted as an error.
void write_one(engine::Engine& engine, const TableDefinition& table, Item item,
               const ItemPointer& where, ImportCounts& counts, ErrorLog& log) {
  try {
    engine.put_item(table, std::move(item));
    ++counts.imported;
  } catch (const ApiError& e) {
    if (e.code() == ApiError::Code::kInternal) throw;
    ++counts.errors;
    log.add(where, e.what());
  }
}

// The items checked and waiting for their batch, of distinct keys.
struct PendingItems {
  std::vector<Item> items;
  std::vector<std::string> keys;
  std::vector<ItemPointer> where;

  bool holds(const std::string& key) const {
    return std::find(keys.begin(), keys.end(), key) != keys.end();
  }
};

// Writes the pending items in one batch (on a storage other processes share, one by one:
// one partition per write), then empties it. Nothing of a batch that is refused is
// written: its items are then written one by one, each refusal counted.
void write_pending(engine::Engine& engine, const TableDefinition& table, PendingItems& pending,
                   ImportCounts& counts, ErrorLog& log) {
  if (pending.items.empty()) return;
  bool written = false;
  if (!engine.storage().shared() && pending.items.size() > 1) {
    std::vector<engine::TransactWrite> writes(pending.items.size());
    for (std::size_t i = 0; i < writes.size(); ++i) {
      writes[i].table = &table;
      writes[i].storage_key = pending.keys[i];
      writes[i].mutation = [item = &pending.items[i]](const std::optional<Item>&) {
        return std::optional<Item>(*item);
      };
    }
    std::vector<engine::WriteResult> results;
    std::vector<std::exception_ptr> failures;
    try {
      written = engine.transact_write(writes, &results, &failures);
    } catch (const ApiError& e) {
      if (e.code() == ApiError::Code::kInternal) throw;
    }
  }
  if (written) {
    counts.imported += static_cast<std::int64_t>(pending.items.size());
  } else {
    for (std::size_t i = 0; i < pending.items.size(); ++i) {
      write_one(engine, table, std::move(pending.items[i]), pending.where[i], counts, log);
    }
  }
  pending.items.clear();
  pending.keys.clear();
  pending.where.clear();
  // What the batch's commit woke (a request waiting for a stripe) runs before the next
  // batch, and the storage's flushes keep up with the job.
  std::this_thread::yield();
  engine.pace_bulk_writes();
}

// Reads every source object into the table. Throws S3Error.
using Progress = std::function<void(std::uint64_t done, std::uint64_t total)>;

void read_sources(engine::Engine& engine, const LocalS3& s3, const ImportRecord& r,
                  const engine::TablePtr& table, ImportCounts& counts, ErrorLog& log,
                  const Progress& progress) {
  const std::vector<std::string> keys = s3.list(r.bucket, r.key_prefix.value_or(""));
  std::uint64_t total = 0, read = 0;
  for (const std::string& key : keys) total += s3.size(r.bucket, key);
  CsvOptions csv;
  if (r.format == "CSV") {
    for (const AttributeDefinition& a : table->attribute_definitions) {
      csv.types.emplace_back(a.name, a.type);
    }
    if (r.format_options) {
      rapidjson::Document d;
      d.Parse(r.format_options->c_str());
      if (d.IsObject() && d.HasMember("Csv") && d["Csv"].IsObject()) {
        const rapidjson::Value& c = d["Csv"];
        if (auto delimiter = json_str(c, "Delimiter"); delimiter && !delimiter->empty()) {
          csv.delimiter = (*delimiter)[0];
        }
        if (c.HasMember("HeaderList") && c["HeaderList"].IsArray()) {
          std::vector<std::string> header;
          for (const auto& h : c["HeaderList"].GetArray()) {
            if (h.IsString()) header.emplace_back(h.GetString(), h.GetStringLength());
          }
          csv.header = std::move(header);
        }
      }
    }
  }
  std::size_t since_check = 0;
  PendingItems pending;
  ItemPointer at;  // the item being read
  const LineSink sink = [&](LineOutcome outcome) {
    ++counts.processed;
    if (outcome.item) {
      try {
        check_imported_item(*table, *outcome.item);
        std::string key = engine.item_key(*table, *outcome.item);
        // Two writes of one item are never in one batch: the second must see the first.
        if (pending.holds(key)) write_pending(engine, *table, pending, counts, log);
        pending.items.push_back(std::move(*outcome.item));
        pending.keys.push_back(std::move(key));
        pending.where.push_back(at);
      } catch (const ApiError& e) {
        if (e.code() == ApiError::Code::kInternal) throw;
        ++counts.errors;
        log.add(at, e.what());
      }
    } else {
      ++counts.errors;
      log.add(at, outcome.error);
    }
    ++at.index;
    if (pending.items.size() == kImportBatch) write_pending(engine, *table, pending, counts, log);
    if (++since_check == kImportPage) {
      since_check = 0;
      write_pending(engine, *table, pending, counts, log);
      if (engine.stopping()) throw std::runtime_error("the server is stopping");
      const auto done = static_cast<std::size_t>(counts.processed);
      engine.data_job_fault("import", done - kImportPage, done);
    }
  };
  for (const std::string& key : keys) {
    const std::string bytes = s3.get(r.bucket, key);
    read += bytes.size();
    at = {&key, 0};
    std::string text;
    try {
      text = decompress(bytes, compression_of(r.compression));
    } catch (const std::runtime_error& e) {
      // An object that is not of the declared compression: one error.
      ++counts.processed;
      ++counts.errors;
      log.add(at, e.what());
      continue;
    }
    counts.bytes += static_cast<std::int64_t>(text.size());
    if (r.format == "ION") {
      read_ion_lines(text, sink);
    } else if (r.format == "CSV") {
      read_csv(text, csv, sink);
    } else {
      read_json_lines(text, sink);
    }
    write_pending(engine, *table, pending, counts, log);
    if (progress) progress(read, total);
  }
}

void run_import(engine::Engine& engine, const std::string& root, ImportRecord r,
                const Progress& progress) {
  engine::TablePtr table = engine.catalog().find(r.table_name);
  if (!table || table->id != r.table_number || !table->restore ||
      table->restore->backup_id != marker(r.id)) {
    // The table went (or was never made): nothing to import into.
    r.status = "FAILED";
    r.failure_code = "UNKNOWN";
    r.failure_message = "The table being imported into no longer exists";
    r.end = engine.clock().now_ms();
    MutexLock lock(imports_mutex());
    store_import(engine, r);
    return;
  }
  ImportCounts counts;
  const LocalS3 s3(root);
  ErrorLog log(root, r);
  try {
    if (!s3.bucket_exists(r.bucket)) throw_no_such_bucket();
    read_sources(engine, s3, r, table, counts, log, progress);
    log.close();
  } catch (const S3Error& e) {
    // The table is not made.
    try {
      engine.delete_table(r.table_name);
    } catch (const ApiError&) {
    }
    r.status = "FAILED";
    r.failure_code = e.code();
    r.failure_message = e.what();
    r.end = engine.clock().now_ms();
    MutexLock lock(imports_mutex());
    store_import(engine, r);
    return;
  } catch (const std::exception& e) {
    // The server stops, or the storage failed: run again at the next start.
    spdlog::warn("import {} stopped: {}", r.id, e.what());
    return;
  }
  engine.finish_import(r.table_name, r.table_number);
  r.processed = counts.processed;
  r.imported = counts.imported;
  r.errors = counts.errors;
  r.processed_bytes = counts.bytes;
  r.end = engine.clock().now_ms();
  if (counts.errors == 0) {
    r.status = "COMPLETED";
  } else {
    r.status = "FAILED";
    r.failure_code = "ItemValidationError";
    r.failure_message = std::string(kItemValidationMessage);
  }
  MutexLock lock(imports_mutex());
  store_import(engine, r);
}

// Runs the import `r`, whose job the caller claimed.
void start_import(engine::Engine& engine, const ServiceOptions& options, const ImportRecord& r) {
  const std::string root = options.export_root;
  const Progress progress = options.data_progress;
  engine.start_job("kumo-import", [&engine, root, r, progress] {
    // Given back when done; a job cut short by a stop keeps its claim in the storage until
    // the process is gone, when another process claims it and runs it again.
    struct Release {
      engine::Engine& engine;
      std::string job;
      ~Release() { engine.release_data_job(job, !engine.stopping()); }
    } release{engine, marker(r.id)};
    engine::lower_job_priority();
    run_import(engine, root, r, progress);
  });
}

// ---- answers ----

std::string log_group_arn(const Context& ctx) {
  return fmt::format("arn:aws:logs:{}:{}:log-group:/aws-dynamodb/imports:*", ctx.options.region,
                     ctx.options.account_id);
}

void write_bucket_source(JsonWriter& w, const ImportRecord& r) {
  write_key(w, "S3BucketSource");
  w.StartObject();
  write_key(w, "S3BucketOwner");
  write_string(w, r.bucket_owner);
  write_key(w, "S3Bucket");
  write_string(w, r.bucket);
  if (r.key_prefix) {
    write_key(w, "S3KeyPrefix");
    write_string(w, *r.key_prefix);
  }
  w.EndObject();
}

void write_raw(JsonWriter& w, const std::string& json) {
  w.RawValue(json.c_str(), json.size(), rapidjson::kObjectType);
}

std::string import_description(const Context& ctx, const ImportRecord& r) {
  JsonOut out;
  JsonWriter w(out);
  w.StartObject();
  write_key(w, "ImportTableDescription");
  w.StartObject();
  auto str = [&](std::string_view key, std::string_view value) {
    write_key(w, key);
    write_string(w, value);
  };
  str("ImportArn", r.arn);
  str("ImportStatus", r.status);
  str("TableArn", r.table_arn);
  str("TableId", r.table_id);
  str("ClientToken", r.client_token);
  write_bucket_source(w, r);
  write_key(w, "ErrorCount");
  w.Int64(r.errors);
  str("CloudWatchLogGroupArn", log_group_arn(ctx));
  str("InputFormat", r.format);
  if (r.format_options) {
    write_key(w, "InputFormatOptions");
    write_raw(w, *r.format_options);
  }
  str("InputCompressionType", r.compression);
  write_key(w, "TableCreationParameters");
  write_raw(w, r.creation_parameters);
  write_key(w, "StartTime");
  w.Double(r.start);
  if (r.end) {
    write_key(w, "EndTime");
    w.Double(*r.end);
  }
  if (r.end && r.processed_bytes > 0) {
    write_key(w, "ProcessedSizeBytes");
    w.Int64(r.processed_bytes);
  }
  write_key(w, "ProcessedItemCount");
  w.Int64(r.processed);
  write_key(w, "ImportedItemCount");
  w.Int64(r.imported);
  if (r.failure_code) str("FailureCode", *r.failure_code);
  if (r.failure_message) str("FailureMessage", *r.failure_message);
  w.EndObject();
  w.EndObject();
  return json_text(out);
}

}  // namespace

std::string import_table(const Context& ctx, const JsonObject& request) {
  CoralErrors coral;
  auto token = request.string("ClientToken");
  auto source = request.object("S3BucketSource");
  auto format = request.string("InputFormat");
  auto options = request.object("InputFormatOptions");
  auto compression = request.string("InputCompressionType");
  auto parameters = request.object("TableCreationParameters");
  std::optional<std::string_view> bucket, owner, prefix;
  if (source) {
    bucket = source->string("S3Bucket");
    owner = source->string("S3BucketOwner");
    prefix = source->string("S3KeyPrefix");
  }
  std::optional<std::string_view> delimiter;
  std::optional<JsonArray> header;
  if (options) {
    if (auto csv = options->object("Csv")) {
      delimiter = csv->string("Delimiter");
      header = csv->array("HeaderList");
    }
  }
  coral.require(token.has_value(), "clientToken");
  if (token && (token->empty() || token->find('$') != std::string_view::npos)) {
    coral.add(*token, "clientToken", "Member must satisfy regular expression pattern: ^[^\\$]+$");
  }
  coral.require(source.has_value(), "s3BucketSource");
  if (source) {
    coral.require(bucket.has_value(), "s3BucketSource.s3Bucket");
    if (bucket && bucket->size() > 255) {
      coral.add(*bucket, "s3BucketSource.s3Bucket",
                "Member must have length less than or equal to 255");
    }
    if (bucket && !valid_bucket_name(*bucket)) {
      coral.add(*bucket, "s3BucketSource.s3Bucket",
                "Member must satisfy regular expression pattern: "
                "^[a-z0-9A-Z]+[\\.\\-\\w]*[a-z0-9A-Z]+$");
    }
    if (owner &&
        (owner->size() != 12 || owner->find_first_not_of("0123456789") != std::string_view::npos)) {
      coral.add(*owner, "s3BucketSource.s3BucketOwner",
                "Member must satisfy regular expression pattern: [0-9]{12}");
    }
    if (prefix && prefix->size() > 1024) {
      coral.add(*prefix, "s3BucketSource.s3KeyPrefix",
                "Member must have length less than or equal to 1024");
    }
  }
  coral.require(format.has_value(), "inputFormat");
  coral.check_enum(format, "inputFormat", {"DYNAMODB_JSON", "ION", "CSV"});
  coral.check_enum(compression, "inputCompressionType", {"ZSTD", "NONE", "GZIP"});
  if (delimiter) {
    if (delimiter->size() != 1) {
      coral.add(*delimiter, "inputFormatOptions.csv.delimiter",
                delimiter->empty() ? "Member must have length greater than or equal to 1"
                                   : "Member must have length less than or equal to 1");
    }
    if (delimiter->size() != 1 ||
        std::string_view(",;:|\t ").find((*delimiter)[0]) == std::string_view::npos) {
      coral.add(*delimiter, "inputFormatOptions.csv.delimiter",
                "Member must satisfy regular expression pattern: [,;:|\\t ]");
    }
  }
  std::vector<std::string> header_names;
  if (header) {
    if (header->size() < 1 || header->size() > 255) {
      coral.add(std::nullopt, "inputFormatOptions.csv.headerList",
                header->size() < 1 ? "Member must have length greater than or equal to 1"
                                   : "Member must have length less than or equal to 255");
    }
    for (const auto& name : header->strings()) {
      if (name) header_names.emplace_back(*name);
    }
  }
  coral.require(parameters.has_value(), "tableCreationParameters");
  const double now = ctx.engine.clock().now_ms();
  if (!parameters) coral.throw_if_any();
  // (Throws the model's violations of the whole request first.)
  TableDefinition def = table_creation_parameters(*parameters, coral, ctx.options, now);
  if (prefix && !valid_object_key(*prefix)) {
    throw ApiError::validation(
        "One or more parameter values were invalid: S3KeyPrefix must not contain '..' "
        "segments, start with '/' or contain NUL");
  }
  if (options && format != "CSV") {
    throw ApiError::validation(fmt::format(
        "Invalid Request: Unsupported InputFormatOptions for the given input format: {}.",
        *format));
  }

  ImportRecord r;
  r.table_name = def.name;
  r.table_arn = table_arn(ctx, def.name);
  r.client_token = std::string(*token);
  r.bucket = std::string(*bucket);
  r.bucket_owner = owner ? std::string(*owner) : ctx.options.account_id;
  if (prefix) r.key_prefix = std::string(*prefix);
  r.format = std::string(*format);
  if (compression) r.compression = std::string(*compression);
  if (options) r.format_options = json_of(options->raw());
  r.creation_parameters = json_of(parameters->raw());

  MutexLock lock(imports_mutex());
  engine::TablePtr existing = ctx.engine.catalog().find(def.name);
  // A table made by an import still running is not visible yet: its name is not taken.
  const bool being_imported = existing && existing->restore && existing->restore->imports();
  if (existing && !being_imported) {
    throw ApiError::resource_in_use("Table already exists: " + def.name);
  }
  if (std::optional<std::string> id = get_record(ctx.engine, import_token_key(r.client_token))) {
    std::optional<ImportRecord> first = find_import(ctx.engine, *id);
    if (first && !token_expired(*first, now)) {
      if (first->table_name != r.table_name) {
        throw ApiError::import_conflict(
            "Import conflict: Duplicate request detected with conflicting parameters");
      }
      return import_description(ctx, *first);
    }
  }
  const std::size_t limit = ctx.engine.options().import_limit;
  if (count_in_progress(ctx.engine, std::string(kImportPrefix)) >= limit) {
    throw ApiError::limit_exceeded(fmt::format(
        "Subscriber limit exceeded: Only {} import operations can be done simultaneously", limit));
  }
  r.start = now;
  do {
    r.id = new_data_id(now);
  } while (get_record(ctx.engine, import_key(r.id)));
  r.arn = r.table_arn + "/import/" + r.id;
  if (being_imported) {
    // Another import makes the table: this one loses the race for the name.
    r.table_id = random_uuid();
    ImportRecord failed = r;
    failed.status = "FAILED";
    failed.failure_code = "TableAlreadyExists";
    failed.failure_message = "Table already exists: " + def.name;
    failed.end = now;
    storage::WriteBatch batch;
    batch.put(import_key(r.id), encode_import(failed));
    batch.put(import_token_key(r.client_token), r.id);
    ctx.engine.storage().write(batch);
    return import_description(ctx, r);
  }
  // Claimed first: no other process takes the job for one that stopped. Then the record: a
  // table marked as an import's always has one.
  ctx.engine.claim_data_job(marker(r.id));
  {
    storage::WriteBatch batch;
    batch.put(import_key(r.id), encode_import(r));
    batch.put(import_token_key(r.client_token), r.id);
    ctx.engine.storage().write(batch);
  }
  def.restore = RestoreSource{marker(r.id), "", "", 0};
  engine::TablePtr table = ctx.engine.create_table(std::move(def));
  r.table_id = table->table_id;
  r.table_number = table->id;
  store_import(ctx.engine, r);
  start_import(ctx.engine, ctx.options, r);
  return import_description(ctx, r);
}

std::string describe_import(const Context& ctx, const JsonObject& request) {
  CoralErrors coral;
  auto arn = request.string("ImportArn");
  coral.require(arn.has_value(), "importArn");
  if (arn) coral.check_length(*arn, "importArn", 37, 1024);
  coral.throw_if_any();
  const DataArn parsed = parse_data_arn(*arn, "import", ctx.options.account_id);
  std::optional<ImportRecord> r;
  if (parsed.region == ctx.options.region && engine::is_backup_id(parsed.id)) {
    r = find_import(ctx.engine, parsed.id);
  }
  if (!r || r->table_name != parsed.table) {
    throw ApiError::import_not_found("Import not found: " + std::string(*arn));
  }
  return import_description(ctx, *r);
}

std::string list_imports(const Context& ctx, const JsonObject& request) {
  CoralErrors coral;
  auto table_arn_sent = request.string("TableArn");
  auto size = request.integer("PageSize");
  auto next = request.string("NextToken");
  if (table_arn_sent) coral.check_length(*table_arn_sent, "tableArn", 1, 1024);
  if (size && *size < 1) {
    coral.add(std::to_string(*size), "pageSize",
              "Member must have value greater than or equal to 1");
  }
  if (size && *size > 25) {
    coral.add(std::to_string(*size), "pageSize", "Member must have value less than or equal to 25");
  }
  if (next) {
    if (next->size() < 112) {
      coral.add(*next, "nextToken", "Member must have length greater than or equal to 112");
    } else if (next->size() > 1024) {
      coral.add(*next, "nextToken", "Member must have length less than or equal to 1024");
    }
  }
  coral.throw_if_any();
  std::optional<std::string> after;
  if (next) {
    after = page_position("import", *next);
    if (!after) {
      throw ApiError::validation("Invalid Request: Provided nextToken is invalid: " +
                                 std::string(*next));
    }
  }
  const std::size_t limit = size ? static_cast<std::size_t>(*size) : 10;
  const std::string arn_prefix = table_arn_sent ? std::string(*table_arn_sent) + "/import/" : "";
  expire_imports(ctx.engine);
  const double now = ctx.engine.clock().now_ms();
  auto records = list_records(ctx.engine, std::string(kImportPrefix));
  JsonOut out;
  JsonWriter w(out);
  w.StartObject();
  write_key(w, "ImportSummaryList");
  w.StartArray();
  std::size_t count = 0;
  std::optional<std::string> last;
  bool more = false;
  for (auto it = records.rbegin(); it != records.rend(); ++it) {
    const ImportRecord r = decode_import(it->second);
    if (record_expired(r, now)) continue;
    if (after && r.id >= *after) continue;
    if (!arn_prefix.empty() && !r.arn.starts_with(arn_prefix)) continue;
    if (count == limit) {
      more = true;
      break;
    }
    w.StartObject();
    write_key(w, "ImportArn");
    write_string(w, r.arn);
    write_key(w, "ImportStatus");
    write_string(w, r.status);
    write_key(w, "TableArn");
    write_string(w, r.table_arn);
    write_bucket_source(w, r);
    write_key(w, "CloudWatchLogGroupArn");
    write_string(w, log_group_arn(ctx));
    write_key(w, "InputFormat");
    write_string(w, r.format);
    write_key(w, "StartTime");
    w.Double(r.start);
    if (r.end) {
      write_key(w, "EndTime");
      w.Double(*r.end);
    }
    w.EndObject();
    ++count;
    last = r.id;
  }
  w.EndArray();
  if (more && last) {
    write_key(w, "NextToken");
    write_string(w, page_token("import", *last));
  }
  w.EndObject();
  return json_text(out);
}

void resume_imports(engine::Engine& engine, const ServiceOptions& options) {
  // Each import in progress is run here only when its job can be claimed: not while it runs
  // here already or in another live process sharing the storage.
  expire_imports(engine);
  std::vector<ImportRecord> running;
  std::set<std::string> live;
  for (const auto& [key, value] : list_records(engine, std::string(kImportPrefix))) {
    ImportRecord r = decode_import(value);
    if (r.status != "IN_PROGRESS") continue;
    live.insert(marker(r.id));
    if (engine.claim_data_job(marker(r.id))) running.push_back(std::move(r));
  }
  // A table marked as an import's whose import is over (or whose record was never stored),
  // once no process runs that import.
  bool more = false;
  for (const std::string& name : engine.catalog().list("", SIZE_MAX, &more)) {
    engine::TablePtr table = engine.catalog().find(name);
    if (!table || !table->restore || !table->restore->imports() ||
        live.count(table->restore->backup_id)) {
      continue;
    }
    // (The marker is also the name of the import's job.)
    const std::string job = table->restore->backup_id;
    if (!engine.claim_data_job(job)) continue;
    try {
      engine.delete_table(name);
    } catch (const ApiError&) {
      // Deleted meanwhile.
    }
    engine.release_data_job(job, true);
  }
  for (ImportRecord& r : running) {
    if (r.table_number == 0) {
      // Stopped between its record and its table.
      r.status = "FAILED";
      r.failure_code = "UNKNOWN";
      r.failure_message = "The import was interrupted: the server stopped before it started";
      r.end = engine.clock().now_ms();
      store_import(engine, r);
      engine.release_data_job(marker(r.id), true);
      continue;
    }
    start_import(engine, options, r);
  }
}

}  // namespace kumo::api
