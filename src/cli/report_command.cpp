#include "cli/report_command.h"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <fstream>
#include <iostream>

#include "cli/admin_client.h"
#include "cli/report_model.h"
#include "cli/report_render.h"

namespace kumo::cli {
namespace {

bool write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (out) return true;
  std::cerr << "kumo report: cannot write " << path << "\n";
  return false;
}

// Keeps the tables named in `names`, in the order named; false when one is not there.
bool select_tables(Report& report, const std::vector<std::string>& names) {
  if (names.empty()) return true;
  std::vector<TableReport> selected;
  for (const std::string& name : names) {
    const TableReport* table = report.find(name);
    if (table == nullptr) {
      std::string known;
      for (const TableReport& t : report.tables) known += (known.empty() ? "" : ", ") + t.name;
      std::cerr << "kumo report: no table " << name
                << " (tables: " << (known.empty() ? "none" : known) << ")\n";
      return false;
    }
    selected.push_back(*table);
  }
  report.tables = std::move(selected);
  return true;
}

}  // namespace

CLI::App* add_report_command(CLI::App& app, ReportOptions& options) {
  CLI::App* report = app.add_subcommand(
      "report", "Print the capacity report of a running server (its admin listener)");
  report->add_option("--admin", options.admin, "Admin listener of the server, HOST:PORT")
      ->capture_default_str()
      ->check([](const std::string& value) -> std::string {
        try {
          parse_admin_address(value);
          return "";
        } catch (const std::invalid_argument& e) {
          return e.what();
        }
      });
  report->add_option("--table", options.tables, "Report only this table (repeatable)");
  report->add_option("--minutes", options.minutes, "Window: the last N minutes (default: all kept)")
      ->check(CLI::Range(1u, 100000u));
  report->add_option("--html", options.html, "Also write the report as one HTML page to FILE");
  report->add_option("--json", options.json, "Also write the server's JSON answer to FILE");
  return report;
}

int run_report(const ReportOptions& options) {
  std::string target = "/report";
  if (options.minutes) target += "?minutes=" + std::to_string(*options.minutes);
  AdminAnswer answer;
  try {
    answer = admin_get(parse_admin_address(options.admin), target);
  } catch (const AdminUnreachable& e) {
    std::cerr << "kumo report: " << e.what() << " (is kumo serve running with --admin-port?)\n";
    return 1;
  }
  if (answer.status != 200) {
    std::cerr << "kumo report: GET " << target << " answered " << answer.status << ": "
              << answer.body << "\n";
    return 1;
  }
  Report report;
  try {
    report = parse_report(answer.body);
  } catch (const ReportError& e) {
    std::cerr << "kumo report: unusable answer from " << options.admin << ": " << e.what() << "\n";
    return 1;
  }
  if (!select_tables(report, options.tables)) return 2;
  if (!options.json.empty() && !write_file(options.json, answer.body)) return 1;
  if (!options.html.empty() && !write_file(options.html, render_html(report))) return 1;
  std::fputs(render_text(report).c_str(), stdout);
  return 0;
}

}  // namespace kumo::cli
