#include "cli/data_commands.h"

#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <thread>

#include "api/json_reader.h"
#include "api/local_s3.h"
#include "api/operations.h"
#include "engine/engine.h"
#include "model/api_error.h"
#include "storage/backends.h"

namespace kumo::cli {
namespace {

namespace fs = std::filesystem;

constexpr const char* kAccount = "000000000000";
constexpr const char* kRegion = "us-east-1";

// A progress bar on stdout when it is a terminal: "[#####     ]  52%  1300/2500 <unit>".
class ProgressBar {
 public:
  explicit ProgressBar(std::string unit) : unit_(std::move(unit)), shown_(::isatty(1) == 1) {}
  void update(std::uint64_t done, std::uint64_t total) {
    if (!shown_) return;
    std::lock_guard lock(mutex_);
    constexpr int kWidth = 40;
    const double part = total == 0 ? 0 : std::min(1.0, static_cast<double>(done) / total);
    const int filled = static_cast<int>(part * kWidth);
    std::fprintf(stdout, "\r[%s%s] %3d%%  %llu/%llu %s", std::string(filled, '#').c_str(),
                 std::string(kWidth - filled, ' ').c_str(), static_cast<int>(part * 100),
                 static_cast<unsigned long long>(done), static_cast<unsigned long long>(total),
                 unit_.c_str());
    std::fflush(stdout);
    drawn_ = true;
  }
  void end() {
    if (shown_ && drawn_) std::fputs("\n", stdout);
  }

 private:
  std::string unit_;
  bool shown_;
  bool drawn_ = false;
  std::mutex mutex_;
};

std::unique_ptr<storage::Storage> open_storage(const std::string& data_dir) {
  storage::BackendChoice choice;
  choice.data_dir = data_dir;
  choice.options.sync = true;
  return storage::chosen_backend(choice).open(choice);
}

// Runs an operation of the API on a request written as JSON.
std::string call(api::Operation operation, const api::Context& ctx, const std::string& body) {
  api::JsonDocument doc;
  if (!doc.parse(body)) throw std::logic_error("bad request " + body);
  return operation(ctx, api::JsonObject(doc.root()));
}

rapidjson::Document parse(const std::string& text) {
  rapidjson::Document d;
  d.Parse(text.c_str());
  return d;
}

std::string json_string(const std::string& s) {
  rapidjson::StringBuffer b;
  rapidjson::Writer<rapidjson::StringBuffer> w(b);
  w.String(s.c_str(), static_cast<rapidjson::SizeType>(s.size()));
  return {b.GetString(), b.GetSize()};
}

// Polls `describe` until the status member leaves IN_PROGRESS; returns the description.
rapidjson::Document wait_for(api::Operation describe, const api::Context& ctx,
                             const std::string& request, const char* member, const char* status) {
  for (;;) {
    rapidjson::Document d = parse(call(describe, ctx, request));
    const rapidjson::Value& desc = d[member];
    if (std::string(desc[status].GetString()) != "IN_PROGRESS") {
      rapidjson::Document out;
      out.CopyFrom(desc, out.GetAllocator());
      return out;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

// DIR as the local S3 sees it: its parent is the root, its name the bucket.
std::pair<std::string, std::string> root_and_bucket(const std::string& dir) {
  const fs::path path = fs::absolute(fs::path(dir)).lexically_normal();
  fs::path p = path;
  if (!p.has_filename()) p = p.parent_path();
  const std::string bucket = p.filename().string();
  if (!api::valid_bucket_name(bucket)) {
    throw std::runtime_error(fmt::format(
        "{}: the directory's name must be a valid S3 bucket name ([a-zA-Z0-9] at both ends, "
        "[a-zA-Z0-9._-] between)",
        dir));
  }
  return {p.parent_path().string(), bucket};
}

std::string member_or(const rapidjson::Value& v, const char* name, const std::string& fallback) {
  auto it = v.FindMember(name);
  return it != v.MemberEnd() && it->value.IsString() ? it->value.GetString() : fallback;
}

// "pk:S" → ("pk", "S").
std::pair<std::string, std::string> attribute(const std::string& text) {
  const std::size_t colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0) {
    throw std::runtime_error("expected NAME:TYPE, got " + text);
  }
  std::string type = text.substr(colon + 1);
  if (type != "S" && type != "N" && type != "B") {
    throw std::runtime_error("a key attribute's type is S, N or B: " + text);
  }
  return {text.substr(0, colon), type};
}

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (;;) {
    const std::size_t at = text.find(separator, start);
    out.push_back(text.substr(start, at - start));
    if (at == std::string::npos) return out;
    start = at + 1;
  }
}

}  // namespace

CLI::App* add_export_command(CLI::App& app, ExportOptions& options) {
  CLI::App* cmd = app.add_subcommand(
      "export",
      "Export a table of a data directory (no server running on it) in the layout of "
      "DynamoDB's exports to S3");
  cmd->add_option("--data-dir", options.data_dir, "Directory of the on-disk database")
      ->capture_default_str();
  cmd->add_option("--table", options.table, "The table to export")->required();
  cmd->add_option("--to", options.to,
                  "Directory standing for the S3 bucket (made if missing); the export goes to "
                  "<DIR>/<prefix>/AWSDynamoDB/<export id>/")
      ->required();
  cmd->add_option("--prefix", options.prefix, "S3Prefix of the export");
  cmd->add_option("--format", options.format, "DYNAMODB_JSON or ION")
      ->capture_default_str()
      ->check(CLI::IsMember({"DYNAMODB_JSON", "ION"}));
  cmd->add_option("--files", options.files, "Data files (ranges of the table's token space)")
      ->capture_default_str()
      ->check(CLI::Range(std::size_t{1}, std::size_t{256}));
  return cmd;
}

CLI::App* add_import_command(CLI::App& app, ImportOptions& options) {
  CLI::App* cmd = app.add_subcommand(
      "import",
      "Import into a new table of a data directory (no server running on it), as ImportTable "
      "does; an export's directory (holding manifest-files.json) is checked against its "
      "manifest and its data files read");
  cmd->add_option("--data-dir", options.data_dir, "Directory of the on-disk database")
      ->capture_default_str();
  cmd->add_option("--from", options.from,
                  "Directory of source objects (all files below it are read), or an export's "
                  "directory .../AWSDynamoDB/<export id>")
      ->required();
  cmd->add_option("--table", options.table, "The table to create")->required();
  cmd->add_option("--key", options.key, "The table's key: NAME:TYPE[,NAME:TYPE] (TYPE S, N or B)")
      ->required();
  cmd->add_option("--gsi", options.gsis,
                  "A global secondary index (projection ALL): NAME:ATTR:TYPE[,ATTR:TYPE]");
  cmd->add_option("--format", options.format,
                  "DYNAMODB_JSON, ION or CSV [default: an export's own, else DYNAMODB_JSON]")
      ->check(CLI::IsMember({"DYNAMODB_JSON", "ION", "CSV"}));
  cmd->add_option("--compression", options.compression,
                  "GZIP, ZSTD or NONE [default: GZIP for an export, else NONE]")
      ->check(CLI::IsMember({"GZIP", "ZSTD", "NONE"}));
  cmd->add_option("--delimiter", options.delimiter, "CSV column delimiter")->capture_default_str();
  return cmd;
}

int run_export_command(const ExportOptions& options) {
  const auto [root, bucket] = root_and_bucket(options.to);
  fs::create_directories(fs::path(root) / bucket);
  engine::EngineOptions engine_options;
  engine_options.background_maintenance = false;
  engine::Engine engine(open_storage(options.data_dir), engine_options);
  ProgressBar bar("items");
  api::ServiceOptions service_options;
  service_options.region = kRegion;
  service_options.account_id = kAccount;
  service_options.export_root = root;
  service_options.export_files = options.files;
  service_options.export_without_pitr = true;
  service_options.data_progress = [&bar](std::uint64_t done, std::uint64_t total) {
    bar.update(done, total);
  };
  const api::Context ctx{engine, service_options};
  std::string request = fmt::format(
      R"({{"TableArn":{},"S3Bucket":{},"ExportFormat":{}{}}})",
      json_string(fmt::format("arn:aws:dynamodb:{}:{}:table/{}", kRegion, kAccount, options.table)),
      json_string(bucket), json_string(options.format),
      options.prefix.empty() ? "" : ",\"S3Prefix\":" + json_string(options.prefix));
  std::string arn;
  try {
    rapidjson::Document started = parse(call(api::export_table_to_point_in_time, ctx, request));
    arn = started["ExportDescription"]["ExportArn"].GetString();
  } catch (const ApiError& e) {
    std::fprintf(stderr, "kumo export: %s\n", e.what());
    return 1;
  }
  rapidjson::Document done =
      wait_for(api::describe_export, ctx, R"({"ExportArn":)" + json_string(arn) + "}",
               "ExportDescription", "ExportStatus");
  bar.end();
  if (std::string(done["ExportStatus"].GetString()) != "COMPLETED") {
    std::fprintf(stderr, "kumo export: FAILED %s: %s\n", member_or(done, "FailureCode", "").c_str(),
                 member_or(done, "FailureMessage", "").c_str());
    return 1;
  }
  std::printf("COMPLETED %s\nItemCount %lld\nExportManifest %s\n", arn.c_str(),
              static_cast<long long>(done["ItemCount"].GetInt64()),
              (fs::path(root) / bucket / done["ExportManifest"].GetString()).string().c_str());
  return 0;
}

int run_import_command(const ImportOptions& options) {
  auto [root, bucket] = root_and_bucket(options.from);
  std::string prefix;
  std::string format = options.format, compression = options.compression;
  const fs::path from = fs::path(root) / bucket;
  if (fs::exists(from / "manifest-files.json")) {
    // An export: its data files, checked against the manifest first.
    const api::LocalS3 s3(root);
    const std::string manifest = s3.get(bucket, "manifest-files.json");
    std::size_t files = 0;
    for (const std::string& line : split(manifest, '\n')) {
      if (line.empty()) continue;
      rapidjson::Document entry = parse(line);
      if (!entry.IsObject() || !entry.HasMember("dataFileS3Key")) {
        std::fprintf(stderr, "kumo import: manifest-files.json: bad line %s\n", line.c_str());
        return 1;
      }
      const std::string key = entry["dataFileS3Key"].GetString();
      const std::string name = "data/" + key.substr(key.rfind('/') + 1);
      const std::string bytes = s3.get(bucket, name);
      if (api::md5_base64(bytes) != member_or(entry, "md5Checksum", "")) {
        std::fprintf(stderr, "kumo import: %s: MD5 differs from manifest-files.json\n",
                     name.c_str());
        return 1;
      }
      const std::string text = api::decompress(bytes, api::Compression::kGzip);
      std::int64_t lines = 0;
      for (char c : text) lines += c == '\n';
      if (entry.HasMember("itemCount") && entry["itemCount"].GetInt64() != lines) {
        std::fprintf(stderr, "kumo import: %s: %lld items, manifest-files.json says %lld\n",
                     name.c_str(), static_cast<long long>(lines),
                     static_cast<long long>(entry["itemCount"].GetInt64()));
        return 1;
      }
      ++files;
    }
    std::printf("export checked: %zu data files match manifest-files.json\n", files);
    prefix = "data/";
    if (format.empty() && fs::exists(from / "manifest-summary.json")) {
      rapidjson::Document summary = parse(s3.get(bucket, "manifest-summary.json"));
      if (summary.IsObject()) format = member_or(summary, "outputFormat", "");
    }
    if (compression.empty()) compression = "GZIP";
  }
  if (format.empty()) format = "DYNAMODB_JSON";
  if (compression.empty()) compression = "NONE";

  // TableCreationParameters.
  std::vector<std::pair<std::string, std::string>> definitions;
  auto define = [&](const std::pair<std::string, std::string>& a) {
    for (const auto& d : definitions) {
      if (d.first == a.first) return;
    }
    definitions.push_back(a);
  };
  std::string key_schema;
  const std::vector<std::string> keys = split(options.key, ',');
  if (keys.empty() || keys.size() > 2) throw std::runtime_error("--key: one or two attributes");
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const auto a = attribute(keys[i]);
    define(a);
    key_schema += fmt::format(R"({}{{"AttributeName":{},"KeyType":"{}"}})", i ? "," : "",
                              json_string(a.first), i ? "RANGE" : "HASH");
  }
  std::string gsis;
  for (const std::string& gsi : options.gsis) {
    const std::size_t colon = gsi.find(':');
    if (colon == std::string::npos) throw std::runtime_error("--gsi NAME:ATTR:TYPE[,ATTR:TYPE]");
    const std::vector<std::string> parts = split(gsi.substr(colon + 1), ',');
    std::string schema;
    for (std::size_t i = 0; i < parts.size(); ++i) {
      const auto a = attribute(parts[i]);
      define(a);
      schema += fmt::format(R"({}{{"AttributeName":{},"KeyType":"{}"}})", i ? "," : "",
                            json_string(a.first), i ? "RANGE" : "HASH");
    }
    gsis += fmt::format(
        R"({}{{"IndexName":{},"KeySchema":[{}],"Projection":{{"ProjectionType":"ALL"}}}})",
        gsis.empty() ? "" : ",", json_string(gsi.substr(0, colon)), schema);
  }
  std::string attribute_definitions;
  for (const auto& [name, type] : definitions) {
    attribute_definitions +=
        fmt::format(R"({}{{"AttributeName":{},"AttributeType":"{}"}})",
                    attribute_definitions.empty() ? "" : ",", json_string(name), type);
  }
  const std::string csv = format == "CSV"
                              ? fmt::format(R"(,"InputFormatOptions":{{"Csv":{{"Delimiter":{}}}}})",
                                            json_string(std::string(1, options.delimiter)))
                              : "";
  const std::string request = fmt::format(
      R"({{"ClientToken":{},"S3BucketSource":{{"S3Bucket":{},"S3KeyPrefix":{}}},"InputFormat":{},"InputCompressionType":{}{},"TableCreationParameters":{{"TableName":{},"BillingMode":"PAY_PER_REQUEST","AttributeDefinitions":[{}],"KeySchema":[{}]{}}}}})",
      json_string("kumo-import-" + std::to_string(::getpid()) + "-" +
                  std::to_string(std::chrono::steady_clock::now().time_since_epoch().count())),
      json_string(bucket), json_string(prefix), json_string(format), json_string(compression), csv,
      json_string(options.table), attribute_definitions, key_schema,
      gsis.empty() ? "" : ",\"GlobalSecondaryIndexes\":[" + gsis + "]");

  engine::EngineOptions engine_options;
  engine_options.background_maintenance = false;
  engine::Engine engine(open_storage(options.data_dir), engine_options);
  ProgressBar bar("bytes");
  api::ServiceOptions service_options;
  service_options.region = kRegion;
  service_options.account_id = kAccount;
  service_options.export_root = root;
  service_options.data_progress = [&bar](std::uint64_t done, std::uint64_t total) {
    bar.update(done, total);
  };
  const api::Context ctx{engine, service_options};
  std::string arn;
  try {
    rapidjson::Document started = parse(call(api::import_table, ctx, request));
    arn = started["ImportTableDescription"]["ImportArn"].GetString();
  } catch (const ApiError& e) {
    std::fprintf(stderr, "kumo import: %s\n", e.what());
    return 1;
  }
  rapidjson::Document done =
      wait_for(api::describe_import, ctx, R"({"ImportArn":)" + json_string(arn) + "}",
               "ImportTableDescription", "ImportStatus");
  bar.end();
  const std::string status = done["ImportStatus"].GetString();
  std::printf("%s %s\nProcessedItemCount %lld\nImportedItemCount %lld\nErrorCount %lld\n",
              status.c_str(), arn.c_str(),
              static_cast<long long>(done["ProcessedItemCount"].GetInt64()),
              static_cast<long long>(done["ImportedItemCount"].GetInt64()),
              static_cast<long long>(done["ErrorCount"].GetInt64()));
  if (status != "COMPLETED") {
    std::fprintf(stderr, "kumo import: FAILED %s: %s\n", member_or(done, "FailureCode", "").c_str(),
                 member_or(done, "FailureMessage", "").c_str());
    return 1;
  }
  return 0;
}

}  // namespace kumo::cli
