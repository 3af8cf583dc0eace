#include "net/admin_server.h"

#include <pthread.h>
#include <spdlog/spdlog.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <optional>
#include <thread>

#include "net/beast_util.h"
#include "net/endpoint.h"

namespace kumo::net {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using error_code = boost::system::error_code;

// How long a kept-alive connection may wait for its next request (and a request take to
// arrive), and an answer take to be written.
constexpr auto kIdleTimeout = std::chrono::seconds(60);
constexpr auto kWriteTimeout = std::chrono::seconds(60);
// Request line plus headers.
constexpr std::uint32_t kHeaderLimit = 16u << 10;
// After a failed accept (typically out of file descriptors), the wait before the next.
constexpr auto kAcceptRetry = std::chrono::milliseconds(100);

api::AdminResponse error_answer(int status, std::string_view message) {
  return {status, "application/json", R"({"error":")" + std::string(message) + R"("})"};
}

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(const AdminHandler& handler, tcp::socket socket)
      : handler_(handler), stream_(std::move(socket)) {}

  void read() {
    parser_.emplace();
    parser_->header_limit(kHeaderLimit);
    parser_->body_limit(AdminServer::kBodyLimit);
    stream_.expires_after(kIdleTimeout);
    http::async_read(
        stream_, buffer_, *parser_,
        [self = shared_from_this()](error_code ec, std::size_t) { self->on_read(ec); });
  }

 private:
  void on_read(error_code ec) {
    if (ec == http::error::body_limit)
      return send(error_answer(413, "request body over 64 KiB"), false);
    // A broken request (not a vanished or slow client) gets an answer before closing.
    if (ec.category() == http::make_error_code(http::error::bad_method).category() &&
        ec != http::error::end_of_stream && ec != http::error::partial_message)
      return send(error_answer(400, "malformed HTTP request"), false);
    if (ec) return close();
    const auto& request = parser_->get();
    const std::string_view target = sv(request.target());
    const std::size_t mark = target.find('?');
    api::AdminRequest admin;
    admin.method = sv(request.method_string());
    admin.path = target.substr(0, mark);
    admin.query = mark == std::string_view::npos ? std::string_view{} : target.substr(mark + 1);
    admin.body = request.body();
    api::AdminResponse answer;
    try {
      answer = handler_(admin);
    } catch (const std::exception& e) {
      spdlog::error("admin {} {}: {}", admin.method, admin.path, e.what());
      answer = error_answer(500, "internal error; see the server's log");
    }
    // A HEAD request would be answered with a body: the connection cannot go on after it.
    send(std::move(answer), request.keep_alive() && admin.method != "HEAD");
  }

  void send(api::AdminResponse answer, bool keep_alive) {
    response_ = {};
    response_.result(static_cast<unsigned>(answer.status));
    response_.version(11);
    response_.set(http::field::content_type, answer.content_type);
    if (!answer.allow.empty()) response_.set(http::field::allow, answer.allow);
    response_.body() = std::move(answer.body);
    response_.keep_alive(keep_alive);
    response_.prepare_payload();
    stream_.expires_after(kWriteTimeout);
    http::async_write(stream_, response_, [self = shared_from_this()](error_code ec, std::size_t) {
      if (ec) return self->close();
      if (!self->response_.keep_alive()) return self->linger_close();
      self->read();
    });
  }

  // Half-closes and reads until the client closes too (or a short timeout), so that a
  // client still sending a body sees the answer instead of a connection reset.
  void linger_close() {
    error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ec);
    if (ec) return close();
    stream_.expires_after(kLingerTimeout);
    drain();
  }

  void drain() {
    buffer_.clear();
    stream_.async_read_some(buffer_.prepare(16384),
                            [self = shared_from_this()](error_code ec, std::size_t) {
                              if (ec) return self->close();
                              self->drain();
                            });
  }

  void close() {
    error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ec);
    stream_.close();
  }

  const AdminHandler& handler_;
  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  http::response<http::string_body> response_;
};

}  // namespace

struct AdminServer::State {
  explicit State(AdminHandler h) : handler(std::move(h)) {}

  void accept() {
    acceptor.async_accept([this](error_code ec, tcp::socket socket) {
      if (!acceptor.is_open()) return;
      if (ec) {
        spdlog::warn("admin listener: accept failed: {}", ec.message());
        retry.expires_after(kAcceptRetry);
        retry.async_wait([this](error_code wait) {
          if (!wait) accept();
        });
        return;
      }
      std::make_shared<Connection>(handler, std::move(socket))->read();
      accept();
    });
  }

  AdminHandler handler;
  // Before the sockets: destroyed after them (pending handlers own the connections).
  asio::io_context io{1};
  tcp::acceptor acceptor{io};
  asio::steady_timer retry{io};
  std::thread thread;
  bool started = false;
  bool stopped = false;
};

AdminServer::AdminServer(const std::string& bind, std::uint16_t port, AdminHandler handler)
    : state_(std::make_unique<State>(std::move(handler))) {
  const tcp::endpoint endpoint = resolve_endpoint(bind, port);
  tcp::acceptor& acceptor = state_->acceptor;
  acceptor.open(endpoint.protocol());
  acceptor.set_option(asio::socket_base::reuse_address(true));
  acceptor.bind(endpoint);
  acceptor.listen(asio::socket_base::max_listen_connections);
  const tcp::endpoint bound = acceptor.local_endpoint();
  address_ = bound.address().to_string();
  port_ = bound.port();
}

AdminServer::~AdminServer() {
  stop();
}

void AdminServer::start() {
  if (state_->started || state_->stopped) return;
  state_->started = true;
  state_->accept();
  state_->thread = std::thread([state = state_.get()] {
    pthread_setname_np(pthread_self(), "kumo-admin");
    for (;;) {
      try {
        state->io.run();
        return;
      } catch (const std::exception& e) {
        spdlog::error("admin listener: {}", e.what());
      }
    }
  });
}

void AdminServer::stop() {
  if (state_->stopped) return;
  state_->stopped = true;
  state_->io.stop();
  if (state_->thread.joinable()) state_->thread.join();
  error_code ec;
  state_->acceptor.close(ec);
}

}  // namespace kumo::net
