// AdminServer: the admin listener (kumo serve --admin-port), apart from the DynamoDB port.
// Plain HTTP/1.1 with keep-alive on one I/O thread of its own; no authentication, hence
// bound to the loopback address by default. Each request (body up to 64 KiB) goes to a
// handler, api::Admin in the server.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "api/admin.h"

namespace kumo::net {

using AdminHandler = std::function<api::AdminResponse(const api::AdminRequest&)>;

class AdminServer {
 public:
  // Larger request bodies are answered 413 and the connection closed.
  static constexpr std::size_t kBodyLimit = 64u << 10;

  // Binds and listens at once (a taken port throws boost::system::system_error, a
  // std::runtime_error); serves nothing until start(). Port 0 picks a free one.
  AdminServer(const std::string& bind, std::uint16_t port, AdminHandler handler);
  // Stops (as stop()) if still running.
  ~AdminServer();

  AdminServer(const AdminServer&) = delete;
  AdminServer& operator=(const AdminServer&) = delete;

  // Starts the I/O thread (kumo-admin) and returns. The calling thread's signal mask is
  // inherited.
  void start();
  // Closes the listener and every connection (a request being handled finishes first) and
  // joins the thread. Idempotent.
  void stop();

  // The port and address actually bound.
  std::uint16_t port() const { return port_; }
  const std::string& address() const { return address_; }

 private:
  struct State;
  std::unique_ptr<State> state_;
  std::string address_;
  std::uint16_t port_ = 0;
};

}  // namespace kumo::net
