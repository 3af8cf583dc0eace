#include "cli/serve_options.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <memory>

namespace kumo::cli {
namespace {

// Width of the terminal the help is laid out for.
constexpr std::size_t kHelpWidth = 80;

// `text` broken at spaces into lines of at most `width` characters (a longer word keeps a
// line of its own), joined by '\n'.
std::string wrap(const std::string& text, std::size_t width) {
  std::string out;
  std::size_t line = 0;
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t space = std::min(text.find(' ', at), text.size());
    const std::size_t word = space - at;
    if (line > 0 && line + 1 + word > width) {
      out.push_back('\n');
      line = 0;
    } else if (line > 0) {
      out.push_back(' ');
      ++line;
    }
    out.append(text, at, word);
    line += word;
    at = space + 1;
  }
  return out;
}

// The help of `kumo serve` in two columns: each option with its value name, then its
// description wrapped to the terminal's width and, on lines of their own, its default and
// the options it cannot be given with.
class HelpFormatter : public CLI::Formatter {
 public:
  std::string make_option_opts(const CLI::Option* option) const override {
    if (option->get_type_size() == 0 || option->get_type_name().empty()) return {};
    return " " + option->get_type_name();
  }

  std::string make_option_desc(const CLI::Option* option) const override {
    std::string notes;
    if (!option->get_default_str().empty()) notes = "default: " + option->get_default_str();
    for (const CLI::Option* other : option->get_excludes()) {
      if (!notes.empty()) notes += "; ";
      notes += "not with " + other->get_name();
    }
    const std::size_t width = kHelpWidth - get_column_width();
    std::string text = wrap(option->get_description(), width);
    if (!notes.empty()) text += "\n" + wrap("(" + notes + ")", width);
    return text;
  }

  std::string make_footer(const CLI::App* app) const override {
    return app->get_footer().empty() ? std::string() : wrap(app->get_footer(), kHelpWidth) + "\n";
  }
};

}  // namespace

CLI::App* add_serve_command(CLI::App& app, ServeOptions& options) {
  CLI::App* serve = app.add_subcommand("serve", "Run the server");
  serve->formatter(std::make_shared<HelpFormatter>());
  serve->add_option("--port", options.port, "TCP port to listen on (0: any free port)")
      ->type_name("N")
      ->capture_default_str();
  serve
      ->add_option("--bind", options.bind,
                   "Address to listen on; 0.0.0.0 accepts connections from other machines")
      ->type_name("ADDRESS")
      ->capture_default_str()
      ->each([&options](const std::string&) { options.bind_given = true; });
  CLI::Option* data_dir =
      serve->add_option("--data-dir", options.data_dir, "Directory of the on-disk database")
          ->type_name("DIR")
          ->capture_default_str();
  serve->add_flag("--in-memory", options.in_memory, "Keep everything in memory; write nothing")
      ->excludes(data_dir);
  serve
      ->add_option("--credentials", options.credentials_file,
                   "Verify SigV4 signatures against the keys in FILE: one 'ACCESS_KEY_ID "
                   "SECRET' pair per line, blank lines and lines starting with # ignored. "
                   "Without it any well-formed signature is accepted")
      ->type_name("FILE")
      ->check(CLI::ExistingFile.description(""));
  serve->add_option("--region", options.region, "Region named in ARNs")
      ->type_name("REGION")
      ->capture_default_str();
  serve->add_option("--threads", options.threads, "I/O threads (0: one per core)")
      ->type_name("N")
      ->capture_default_str()
      ->check(CLI::Range(0u, 1024u).description(""));
  serve->add_flag("--sync", options.sync,
                  "fsync the write-ahead log on every write (survives power loss, slower)");
  serve->add_flag("--log-requests", options.log_requests,
                  "Log one line per request: method, operation, tables, HTTP status, error "
                  "type, latency and request id (internal errors are logged either way)");
  serve
      ->add_option("--body-budget-mb", options.body_budget_mb,
                   "MiB of request bodies all connections together may hold in memory at "
                   "once; past it a new request is refused, without reading its body, with "
                   "DynamoDB's ThrottlingException (HTTP 400), which the SDKs retry after a "
                   "back-off. Requests already holding their share go on")
      ->type_name("MIB")
      ->capture_default_str()
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 20).description(""));
  serve
      ->add_option("--block-cache-mb", options.block_cache_mb,
                   "MiB of the on-disk store's block cache: data blocks, index and filter "
                   "partitions read from its files")
      ->type_name("MIB")
      ->capture_default_str()
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 20).description(""));
  serve
      ->add_option("--write-buffer-mb", options.write_buffer_mb,
                   "MiB of each of the on-disk store's two memtables, where writes gather "
                   "before they are written to a file")
      ->type_name("MIB")
      ->capture_default_str()
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 16).description(""));
  serve
      ->add_option("--compaction-rate-mb", options.compaction_rate_mb,
                   "MiB/s the on-disk store's flushes and compactions may write, so that the "
                   "work after a bulk load leaves requests their share of the disk (0: no "
                   "limit)")
      ->type_name("MIB")
      ->capture_default_str()
      ->check(CLI::Range(std::uint64_t{0}, std::uint64_t{1} << 20).description(""));
  serve
      ->add_option("--item-collection-limit", options.item_collection_limit,
                   "Bytes at which an item collection (one partition key of a table with local "
                   "secondary indexes) is full")
      ->type_name("BYTES")
      ->capture_default_str();
  serve
      ->add_option("--ttl-interval", options.ttl_interval,
                   "Seconds between two passes of the Time to Live reaper, which deletes items "
                   "whose TTL attribute is in the past (DynamoDB: within days)")
      ->type_name("SECONDS")
      ->capture_default_str()
      ->check(CLI::Range(0.01, 3600.0).description(""));
  serve
      ->add_option("--ttl-cooldown", options.ttl_cooldown,
                   "Minimum seconds between two UpdateTimeToLive calls on one table "
                   "(DynamoDB: 3600; 0: none)")
      ->type_name("SECONDS")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber.description(""));
  serve
      ->add_option("--stream-retention", options.stream_retention,
                   "Seconds stream records are kept, and disabled streams listed")
      ->type_name("SECONDS")
      ->capture_default_str()
      ->check(CLI::PositiveNumber.description(""));
  serve
      ->add_option("--shard-iterator-lifetime", options.shard_iterator_lifetime,
                   "Seconds a stream shard iterator stays valid")
      ->type_name("SECONDS")
      ->capture_default_str()
      ->check(CLI::PositiveNumber.description(""));
  serve->footer(
      "DynamoDB Local's flags work too: -port N, -inMemory, -dbPath DIR; -sharedDb, -cors X, "
      "-delayTransientStatuses, -optimizeDbBeforeStartup and -disableTelemetry are accepted "
      "and ignored.");
  return serve;
}

std::vector<std::string> translate_dynamodb_local_args(const std::vector<std::string>& args) {
  std::vector<std::string> out;
  out.reserve(args.size() + 1);
  bool translated = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "-port") {
      out.push_back("--port");
    } else if (a == "-inMemory") {
      out.push_back("--in-memory");
    } else if (a == "-dbPath") {
      out.push_back("--data-dir");
    } else if (a == "-help") {
      out.push_back("--help");
      continue;
    } else if (a == "-cors") {
      if (i + 1 < args.size()) ++i;  // its value
    } else if (a == "-sharedDb" || a == "-delayTransientStatuses" ||
               a == "-optimizeDbBeforeStartup" || a == "-disableTelemetry") {
    } else {
      out.push_back(a);
      continue;
    }
    translated = true;
  }
  if (translated && (out.empty() || out.front() != "serve")) out.insert(out.begin(), "serve");
  return out;
}

}  // namespace kumo::cli
