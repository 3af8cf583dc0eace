// `kumo report`: reads a running server's capacity report from its admin listener and
// prints it, optionally writing the HTML page and the raw JSON.
#pragma once

#include <CLI/App.hpp>

#include <optional>
#include <string>
#include <vector>

namespace kumo::cli {

struct ReportOptions {
  std::string admin = "127.0.0.1:8001";  // the admin listener, HOST:PORT
  std::vector<std::string> tables;       // only these; empty: all
  std::optional<unsigned> minutes;       // the window: the last N minutes; none: all kept
  std::string html, json;                // files to write; empty: none
};

// Adds the `report` subcommand to `app`; parsing fills `options`. Returns the subcommand.
CLI::App* add_report_command(CLI::App& app, ReportOptions& options);

// Runs it: 0 when the report was printed, 1 when the listener is unreachable or its answer
// unusable (or a file cannot be written), 2 for a table the server does not have.
int run_report(const ReportOptions& options);

}  // namespace kumo::cli
