// `kumo export` and `kumo import`: an export of a table, or an import into a new table, on a
// data directory with no server running, through the same code as ExportTableToPointInTime
// and ImportTable (api/exports.cpp, api/imports.cpp), with a progress bar on a terminal.
#pragma once

#include <CLI/App.hpp>

#include <string>
#include <vector>

namespace kumo::cli {

struct ExportOptions {
  std::string data_dir = "./kumo-data";
  std::string table;
  std::string to;  // the directory standing for the bucket
  std::string prefix;
  std::string format = "DYNAMODB_JSON";
  std::size_t files = 4;
};

struct ImportOptions {
  std::string data_dir = "./kumo-data";
  std::string from;  // a directory of source objects, or an export's directory
  std::string table;
  std::string key;                // pk:S[,sk:N]
  std::vector<std::string> gsis;  // NAME:ATTR:TYPE[,ATTR:TYPE]
  std::string format;             // default DYNAMODB_JSON (an export: its outputFormat)
  std::string compression;        // default NONE (an export: GZIP)
  char delimiter = ',';
};

CLI::App* add_export_command(CLI::App& app, ExportOptions& options);
CLI::App* add_import_command(CLI::App& app, ImportOptions& options);

// 0 when the export (import) completed; 1 otherwise, with the reason on stderr.
int run_export_command(const ExportOptions& options);
int run_import_command(const ImportOptions& options);

}  // namespace kumo::cli
