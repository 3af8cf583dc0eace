// kumo: the executable. `kumo serve` opens the storage, builds the engine and the DynamoDB
// service over it, and serves it over HTTP until SIGINT or SIGTERM.
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <csignal>
#include <cstdio>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "api/admin.h"
#include "api/service.h"
#include "capacity/manager.h"
#include "cli/data_commands.h"
#include "cli/report_command.h"
#include "cli/serve_options.h"
#include "engine/engine.h"
#include "net/admin_server.h"
#include "net/http_server.h"
#include "net/sigv4.h"
#include "storage/backends.h"
#include "storage/storage.h"

#ifndef KUMO_VERSION
#define KUMO_VERSION "0.1.0"
#endif

namespace kumo::cli {
namespace {

bool is_loopback(const std::string& address) {
  return address == "127.0.0.1" || address == "::1" || address == "localhost";
}

// host:port as clients reach this server (what DescribeEndpoints reports).
std::string endpoint_address(const net::Server& server) {
  const std::string& address = server.address();
  std::string host;
  if (address == "0.0.0.0" || address == "::")
    host = "localhost";
  else if (address.find(':') != std::string::npos)
    host = "[" + address + "]";
  else
    host = address;
  return host + ":" + std::to_string(server.port());
}

int serve(const ServeOptions& options) {
  // SIGINT and SIGTERM wait, blocked, until the server catches them (Server::run), so that
  // one arriving during start-up still stops it cleanly. Threads started meanwhile
  // (storage, engine) inherit the mask: only the serving thread ever takes them.
  sigset_t stopping;
  sigemptyset(&stopping);
  sigaddset(&stopping, SIGINT);
  sigaddset(&stopping, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stopping, nullptr);

  net::SigV4Verifier verifier;
  std::size_t keys = 0;
  if (!options.credentials_file.empty()) {
    try {
      net::Credentials credentials = net::load_credentials_file(options.credentials_file);
      keys = credentials.size();
      if (keys == 0) {
        spdlog::error("{} holds no credentials", options.credentials_file);
        return 1;
      }
      verifier = net::SigV4Verifier(std::move(credentials));
    } catch (const std::exception& e) {
      spdlog::error("{}", e.what());
      return 1;
    }
  }

  const storage::BackendChoice choice = cli::backend_choice(options);
  const storage::Backend& backend = storage::chosen_backend(choice);
  std::unique_ptr<storage::Storage> store;
  try {
    store = backend.open(choice);
  } catch (const std::exception& e) {
    spdlog::error("cannot open {}: {}", backend.what(choice), e.what());
    return 1;
  }
  // The engine's clock and, unless capacity is off, its meters.
  const capacity::CapacityOptions capacity_options = cli::capacity_options(options);
  const std::unique_ptr<Clock> clock = make_clock(options);
  std::optional<capacity::CapacityManager> meters;
  if (capacity_options.mode != capacity::Mode::kOff) meters.emplace(capacity_options, *clock);
  engine::EngineOptions engine_options;
  engine_options.item_collection_limit = options.item_collection_limit;
  engine_options.backup_sync_bytes = options.backup_sync_bytes;
  engine_options.pitr_lag = options.pitr_lag;
  engine_options.ttl_interval = options.ttl_interval;
  engine_options.stream_retention = options.stream_retention;
  engine_options.clock = clock.get();
  engine_options.manual_clock = clock->manual() ? static_cast<ManualClock*>(clock.get()) : nullptr;
  engine_options.capacity = meters ? &*meters : nullptr;
  engine_options.account_quota_read = capacity_options.account_quota_read;
  engine_options.account_quota_write = capacity_options.account_quota_write;
  engine_options.region = capacity_options.region;
  engine::Engine engine(std::move(store), engine_options);

  net::ServerOptions server_options;
  server_options.bind_address = options.bind;
  server_options.port = options.port;
  server_options.threads =
      options.threads != 0
          ? options.threads
          : std::max(1u, std::thread::hardware_concurrency()) * backend.io_threads_per_core;
  server_options.region = options.region;
  server_options.log_requests = options.log_requests;
  server_options.body_budget = options.body_budget_mb << 20;

  // The service needs the bound port (DescribeEndpoints), so it is built after the server
  // binds; the handler is not called before start().
  std::optional<api::Service> service;
  std::optional<net::Server> server;
  try {
    server.emplace(
        server_options, std::move(verifier),
        [&service](std::string_view target, std::string_view body, const api::Authenticator& auth) {
          return service->handle(target, body, auth);
        });
  } catch (const std::exception& e) {
    spdlog::error("cannot listen on {}:{}: {}", options.bind, options.port, e.what());
    return 1;
  }
  api::ServiceOptions service_options;
  service_options.region = options.region;
  service_options.endpoint_address = endpoint_address(*server);
  service_options.shard_iterator_lifetime = options.shard_iterator_lifetime;
  service_options.ttl_cooldown = options.ttl_cooldown;
  service_options.report_tables = options.log_requests;
  service_options.capacity = capacity_options;
  service_options.export_root = export_root_of(options);
  service_options.export_files = options.export_files;
  service.emplace(engine, service_options);

  const api::Admin admin(engine);
  std::optional<net::AdminServer> admin_server;
  if (options.admin_port) {
    try {
      admin_server.emplace(
          options.admin_bind, *options.admin_port,
          [&admin](const api::AdminRequest& request) { return admin.handle(request); });
    } catch (const std::exception& e) {
      spdlog::error("cannot listen on {}:{} (admin): {}", options.admin_bind, *options.admin_port,
                    e.what());
      return 1;
    }
  }

  // The socket listens from here on: a client that connects now is answered as soon as the
  // I/O threads run, and they start last, this thread being the first of them, so that
  // start-up work no longer competes with them for the core.
  spdlog::info("kumo {} listening on {}:{} ({}, {} I/O threads)", KUMO_VERSION, server->address(),
               server->port(), backend.where(choice), server->threads());
  if (admin_server) {
    spdlog::info("admin listening on {}:{} (no authentication; {} clock, capacity {})",
                 admin_server->address(), admin_server->port(), options.clock,
                 options.capacity_mode);
    admin_server->start();
  }
  if (is_loopback(options.bind))
    spdlog::info("reachable only from this machine{}",
                 options.bind_given ? "" : "; --bind 0.0.0.0 accepts other machines");
  if (keys > 0)
    spdlog::info("verifying signatures against {} access key(s) from {}", keys,
                 options.credentials_file);
  else
    spdlog::info("accepting any well-formed signature (no --credentials)");

  server->run({SIGINT, SIGTERM}, [](int signal_number) {
    spdlog::info("{} received, stopping", signal_number == SIGINT ? "SIGINT" : "SIGTERM");
  });
  server.reset();
  admin_server.reset();
  service.reset();
  spdlog::info("stopped");
  return 0;
}

}  // namespace
}  // namespace kumo::cli

int main(int argc, char** argv) {
  using namespace kumo::cli;
  auto logger = spdlog::stderr_color_mt("kumo");
  spdlog::set_default_logger(logger);
  spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ %v");

  CLI::App app("Kumo: a database server that speaks Amazon DynamoDB's wire protocol", "kumo");
  app.set_version_flag("--version", "kumo " KUMO_VERSION);
  app.require_subcommand(1);
  ServeOptions options;
  CLI::App* serve_command = add_serve_command(app, options);
  ReportOptions report_options;
  CLI::App* report_command = add_report_command(app, report_options);
  ExportOptions export_options;
  CLI::App* export_command = add_export_command(app, export_options);
  ImportOptions import_options;
  CLI::App* import_command = add_import_command(app, import_options);

  // CLI11 takes a vector in reverse order.
  std::vector<std::string> args =
      translate_dynamodb_local_args(std::vector<std::string>(argv + 1, argv + argc));
  if (args.empty()) {
    std::fputs(app.help().c_str(), stderr);
    return 2;
  }
  std::reverse(args.begin(), args.end());
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }

  try {
    if (serve_command->parsed()) return serve(options);
    if (report_command->parsed()) return run_report(report_options);
    if (export_command->parsed()) return run_export_command(export_options);
    if (import_command->parsed()) return run_import_command(import_options);
  } catch (const std::exception& e) {
    spdlog::critical("{}", e.what());
    return 1;
  }
  return 0;
}
