// A GET against Kumo's admin listener, for the commands that read it (`kumo report`).
#pragma once

#include <chrono>
#include <stdexcept>
#include <string>
#include <string_view>

namespace kumo::cli {

// The listener could not be reached or answered no HTTP.
class AdminUnreachable : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct AdminAddress {
  std::string host, port;
};

// "HOST:PORT", "[::1]:PORT"; throws std::invalid_argument otherwise.
AdminAddress parse_admin_address(std::string_view text);

struct AdminAnswer {
  unsigned status = 0;
  std::string body;
};

// GETs `target` ("/report?minutes=5"); throws AdminUnreachable when the connection fails
// or no full answer arrives within `timeout`.
AdminAnswer admin_get(const AdminAddress& address, const std::string& target,
                      std::chrono::seconds timeout = std::chrono::seconds(30));

}  // namespace kumo::cli
