// Server: the HTTP/1.1 front of Kumo. Accepts connections on one address, answers
// DynamoDB's HTTP-level checks itself (health check, unknown operation, CORS pre-flight,
// body limit, in DynamoDB's order) and hands every other request to a Handler together
// with an Authenticator for its SigV4 signature.
//
// A fixed pool of I/O threads, each with its own event loop; a connection stays on one
// thread, and a request runs start to finish there (there is no worker pool). Connections
// are kept alive; an idle or slow one is closed after a timeout.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "api/service.h"
#include "net/sigv4.h"

namespace kumo::net {

// Runs one operation: `target` is the X-Amz-Target value (empty when absent), `body` the
// request body. Called concurrently from every I/O thread; must be thread-safe. An
// exception it throws is an internal failure: the server logs it with the request id and
// answers 500 InternalServerError.
using Handler = std::function<api::Response(std::string_view target, std::string_view body,
                                            const api::Authenticator& auth)>;

struct ServerOptions {
  // Address to listen on; "127.0.0.1" keeps the server reachable only from this machine.
  std::string bind_address = "127.0.0.1";
  // Port to listen on; 0 picks a free one (see Server::port()).
  std::uint16_t port = 8000;
  // I/O threads; 0 means one per core.
  unsigned threads = 0;
  // Region whose endpoint the health check names when the request has no Host header
  // ("healthy: dynamodb.<region>.amazonaws.com ").
  std::string region = "us-east-1";
  // Larger request bodies are refused with 413, as DynamoDB does above 16 MiB; so are
  // compressed bodies that decode to more.
  std::size_t body_limit = 16u << 20;
  // Bytes of request bodies all connections together may hold at once, from the arrival of
  // a request's head until it is answered. A request whose body would pass it is refused
  // without reading its body, with ThrottlingException, DynamoDB's answer when it sheds
  // load (the SDKs back off and retry); the requests already holding their share go on.
  std::size_t body_budget = 256u << 20;
  // Request line plus headers, blank line included; larger heads get 400, as DynamoDB
  // refuses a head (or a path) over 16 KiB.
  std::uint32_t header_limit = 16u << 10;
  // How long a kept-alive connection may wait for its next request, and how long the
  // request line and headers may take to arrive.
  std::chrono::milliseconds idle_timeout = std::chrono::seconds(60);
  // How long the body of a started request may take to arrive.
  std::chrono::milliseconds body_timeout = std::chrono::seconds(60);
  // How long a response may take to be written.
  std::chrono::milliseconds write_timeout = std::chrono::seconds(60);
  // Answers being written, across all connections: while they hold more bytes than this
  // (their clients read slowly or not at all), connections start no new request, so that
  // slow readers cannot make the server hold unbounded memory.
  std::size_t unsent_limit = 64u << 20;
  // On stop(), how long requests in progress may take before their connections are cut.
  std::chrono::milliseconds drain_timeout = std::chrono::seconds(5);
  // Log one line per request (method, operation, tables, status, error type, latency and
  // request id). Off, a request spends nothing on it. Internal failures are logged
  // either way.
  bool log_requests = false;
};

class Server {
 public:
  // Binds and listens at once (so a taken port fails here, with boost::system::system_error,
  // a std::runtime_error), but
  // serves nothing until start().
  Server(ServerOptions options, SigV4Verifier verifier, Handler handler);
  // Stops (as stop()) if still running.
  ~Server();

  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Starts the I/O threads and returns.
  void start();
  // Serves on the calling thread, as I/O thread 0, and on threads - 1 threads of its own,
  // until one of `signals` arrives; then calls on_signal with it, stops as stop() does and
  // returns. The caller blocks `signals` beforehand in every thread (so that one arriving
  // during start-up waits); they are unblocked on this thread once caught. A server whose
  // single I/O thread is the main one starts without creating any.
  void run(const std::vector<int>& signals, const std::function<void(int)>& on_signal);
  // Stops accepting, closes idle connections, lets requests in progress answer (their
  // connections then close) for up to drain_timeout, and joins the I/O threads. Idempotent.
  // Call from a thread that is not one of the server's.
  void stop();

  // The port actually bound (the chosen one when options.port was 0).
  std::uint16_t port() const { return port_; }
  // The address actually bound.
  const std::string& address() const { return address_; }
  // The number of I/O threads.
  unsigned threads() const { return static_cast<unsigned>(workers_.size()); }

 private:
  struct Worker;
  class Listener;
  class Connection;

  // Starts accepting and the I/O threads of workers [first, threads()).
  void start_threads(std::size_t first);
  // Asks every worker to stop, without waiting: the part of stop() a server thread may do.
  void request_stop();
  void join_threads();

  ServerOptions options_;
  SigV4Verifier verifier_;
  Handler handler_;
  std::string default_host_;
  std::atomic<std::size_t> unsent_bytes_{0};  // of the answers being written
  // Bytes of request bodies held now, within options_.body_budget.
  std::atomic<std::size_t> body_bytes_{0};
  std::vector<std::unique_ptr<Worker>> workers_;
  std::unique_ptr<Listener> listener_;
  std::string address_;
  std::uint16_t port_ = 0;
  bool started_ = false;
  bool stopped_ = false;
};

}  // namespace kumo::net
