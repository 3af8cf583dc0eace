// Admin: the routes of the admin listener (kumo serve --admin-port; docs/capacity.md, the
// admin listener). Health, the engine clock (read, and advanced when it is manual), and
// the capacity meters as JSON and as Prometheus metrics. Knows nothing of HTTP beyond a
// method, a path, a query string and a status.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "engine/engine.h"

namespace kumo::api {

struct AdminRequest {
  std::string_view method;  // "GET", "POST", ...
  std::string_view path;    // the target up to '?', as sent
  std::string_view query;   // after '?', as sent (percent-encoded); empty when absent
  std::string_view body;
};

struct AdminResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  // The methods a path accepts, for the Allow header of a 405 answer; empty otherwise.
  std::string allow = {};
};

class Admin {
 public:
  explicit Admin(engine::Engine& engine) : engine_(engine) {}

  // Answers one request. Errors are JSON {"error":"..."}: 404 for an unknown path, 405 for
  // a method the path does not take, 400 for a bad parameter, 409 for what the server's
  // configuration does not allow (advancing the wall clock; meters under --capacity off).
  // Thread-safe.
  AdminResponse handle(const AdminRequest& request) const;

 private:
  AdminResponse clock() const;
  AdminResponse advance(std::string_view query) const;
  AdminResponse metrics() const;
  AdminResponse capacity(std::string_view path, std::string_view query) const;

  engine::Engine& engine_;
};

// The value of parameter `name` in a query string ("a=1&b=x%20y"), percent-decoded ('+'
// is a space); nullopt when absent or not validly encoded. The first occurrence wins.
std::optional<std::string> query_parameter(std::string_view query, std::string_view name);

}  // namespace kumo::api
