// Service: DynamoDB's API over the engine. Takes one request (operation target and JSON
// body), answers one response (status and JSON body). Knows JSON; knows nothing of HTTP.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "capacity/options.h"
#include "engine/engine.h"
#include "model/api_error.h"

namespace kumo::api {

// Checks a request's authentication; net/ implements it over the HTTP headers (SigV4).
class Authenticator {
 public:
  virtual ~Authenticator() = default;
  // Throws ApiError (MissingAuthenticationToken, IncompleteSignature, InvalidSignature,
  // UnrecognizedClient) when the request may not proceed.
  virtual void authenticate() const = 0;
};

struct Response {
  int status = 200;
  std::string body;  // compact JSON
  // The tables the request names, joined by ',', when ServiceOptions::report_tables is
  // set (for an access log); empty otherwise.
  std::string tables = {};
};

struct ServiceOptions {
  std::string region = "us-east-1";
  std::string account_id = "000000000000";
  // What DescribeEndpoints reports: the host and port clients reach this server at.
  std::string endpoint_address = "localhost:8000";
  // Seconds a shard iterator stays valid (DynamoDB: 15 minutes).
  double shard_iterator_lifetime = 900;
  // Minimum seconds between two UpdateTimeToLive calls on a table (DynamoDB: one hour;
  // 0: no cool-down).
  double ttl_cooldown = 0;
  // Fill Response::tables. Off, a request spends nothing on it.
  bool report_tables = false;
  // Capacity figures the control plane checks and reports (quotas, on-demand initial
  // throughput, Contributor Insights' delay and rule quota), whatever the capacity mode.
  capacity::CapacityOptions capacity = {};
  // The local S3 of exports and imports: a bucket is the directory <export_root>/<bucket>
  // (docs/data-movement.md).
  std::string export_root = "./kumo-data/s3";
  // Data files an export writes: one per range of the table's token space.
  std::size_t export_files = 4;
  // DynamoDB exports only tables with point-in-time recovery. On (`kumo export`, offline,
  // where no window is kept), an export without ExportTime is of the table as it is.
  bool export_without_pitr = false;
  // Called by the jobs of exports and imports as they go, with `done` of `total` units (an
  // export's items, an import's source bytes): `kumo export` and `kumo import` draw their
  // progress bar with it. Empty: nothing is called.
  std::function<void(std::uint64_t done, std::uint64_t total)> data_progress;
};

class Service {
 public:
  Service(engine::Engine& engine, ServiceOptions options);
  ~Service();
  Service(const Service&) = delete;
  Service& operator=(const Service&) = delete;

  // Runs one call in DynamoDB's pre-dispatch order:
  // invalid JSON → SerializationException; missing/unknown target → UnknownOperation;
  // authentication; empty body → SerializationException; then the operation. `target` is
  // the X-Amz-Target header value (empty when absent). Every failure the client caused, or
  // that DynamoDB reports as an error, becomes an error response; an internal failure
  // (storage::StorageError or any other exception) is thrown for the caller to log and to
  // answer InternalServerError.
  Response handle(std::string_view target, std::string_view body, const Authenticator& auth) const;

  const ServiceOptions& options() const { return options_; }

 private:
  engine::Engine& engine_;
  ServiceOptions options_;
};

// The JSON error body DynamoDB sends for `error`.
Response error_response(const ApiError& error);

}  // namespace kumo::api
