#include "net/http_server.h"

#include <pthread.h>
#include <signal.h>
#include <spdlog/spdlog.h>

#include <array>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <limits>
#include <memory_resource>
#include <optional>
#include <thread>

#include "net/beast_util.h"
#include "net/content_coding.h"
#include "net/endpoint.h"
#include "net/http_text.h"
#include "net/pre_dispatch.h"
#include "net/response_head.h"

namespace kumo::net {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using error_code = boost::system::error_code;

// Request heads are parsed into a per-connection arena, reset between requests, so that a
// typical request allocates nothing for its headers.
using HeadAllocator = std::pmr::polymorphic_allocator<char>;
// Sockets bound to their worker's io_context by type, which spares the type-erased
// executor's cost on every operation.
using Executor = asio::io_context::executor_type;
using Socket = asio::basic_stream_socket<tcp, Executor>;
using Stream = beast::basic_stream<tcp, Executor, beast::unlimited_rate_policy>;
using Parser = http::request_parser<http::string_body, HeadAllocator>;

constexpr std::string_view kInternalErrorBody =
    R"({"__type":"com.amazonaws.dynamodb.v20120810#InternalServerError",)"
    R"("message":"Internal server error"})";
constexpr std::string_view kThrottlingBody =
    R"({"__type":"com.amazonaws.dynamodb.v20120810#ThrottlingException",)"
    R"("message":"Rate of requests exceeds the allowed throughput."})";
constexpr std::string_view kTooLargeBody = "Request Entity Too Large\n";
constexpr std::string_view kBadRequestBody = "Bad Request\n";
constexpr std::string_view kTextPlain = "text/plain";
constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
// Buffers grown past this by one large request are given back afterwards.
constexpr std::size_t kRetainedCapacity = 1u << 20;
// How often a connection held back by unsent answers (ServerOptions::unsent_limit) looks
// again.
constexpr auto kUnsentRetry = std::chrono::milliseconds(10);
// After a failed accept (typically out of file descriptors) the listener waits before the
// next one, twice as long after each failure in a row, from the first to the last delay;
// the failures are logged once per interval, with their count.
constexpr auto kFirstAcceptDelay = std::chrono::milliseconds(10);
constexpr auto kLastAcceptDelay = std::chrono::seconds(1);
constexpr auto kAcceptReportInterval = std::chrono::seconds(10);

// The error type a response body names, for the access log: the part of a JSON error's
// __type after '#', or the element name of an XML one ("<UnknownOperationException/>");
// "-" when there is none.
std::string_view error_type(int status, std::string_view body) {
  if (status < 400) return "-";
  static constexpr std::string_view kJsonType = R"({"__type":")";
  if (body.starts_with(kJsonType)) {
    body.remove_prefix(kJsonType.size());
    body = body.substr(0, body.find('"'));
    return body.substr(body.find('#') + 1);
  }
  if (body.starts_with('<')) {
    const auto end = body.find("/>");
    if (end != std::string_view::npos) return body.substr(1, end - 1);
  }
  return "-";
}

}  // namespace

struct Server::Worker {
  Worker() { drain_timer.emplace(io); }
  ~Worker() {
    guard.reset();
    drain_timer.reset();
  }

  std::thread thread;
  // Connections living on this thread; touched only from it.
  Connection* first = nullptr;
  std::size_t connections = 0;
  bool stopping = false;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> guard;
  std::optional<asio::steady_timer> drain_timer;
  // Last, so destroyed first: the connections its pending handlers own unlink themselves
  // from the members above while they still exist.
  asio::io_context io{1};
};

// Accepts on the first worker's loop and hands each connection to the next worker in
// turn; a connection never moves afterwards.
class Server::Listener {
 public:
  Listener(Server& server, const tcp::endpoint& endpoint)
      : server_(server), acceptor_(server.workers_[0]->io), retry_(server.workers_[0]->io) {
    acceptor_.open(endpoint.protocol());
    acceptor_.set_option(asio::socket_base::reuse_address(true));
    acceptor_.bind(endpoint);
    acceptor_.listen(asio::socket_base::max_listen_connections);
  }

  tcp::endpoint local_endpoint() const { return acceptor_.local_endpoint(); }
  void start() { accept(); }
  // On the first worker's thread.
  void close() {
    error_code ec;
    acceptor_.close(ec);
    retry_.cancel();
  }

 private:
  void accept();
  // Logs (once per interval) and waits before accepting again.
  void back_off(error_code ec);
  // Ends a run of failed accepts.
  void recovered();

  Server& server_;
  tcp::acceptor acceptor_;
  asio::steady_timer retry_;
  std::size_t next_ = 0;
  // The current run of failed accepts: the delay before the next attempt (zero when the
  // last accept succeeded), the failures not yet logged and in all, and when the last
  // report was logged.
  std::chrono::milliseconds delay_{0};
  std::size_t unreported_ = 0;
  std::size_t failures_ = 0;
  std::chrono::steady_clock::time_point reported_;
  std::optional<Socket> peer_;  // the socket being accepted into
};

class Server::Connection : public std::enable_shared_from_this<Connection> {
 public:
  // Takes `socket` on `worker`'s thread and starts serving it.
  static void open(Server& server, Worker& worker, Socket socket) {
    if (worker.stopping) {
      error_code ec;
      socket.close(ec);
      return;
    }
    auto connection = std::make_shared<Connection>(server, worker, std::move(socket));
    connection->read_head();
  }

  Connection(Server& server, Worker& worker, Socket socket)
      : server_(server),
        worker_(worker),
        options_(server.options_),
        stream_(std::move(socket)),
        arena_(arena_storage_.data(), arena_storage_.size()) {
    error_code ec;
    stream_.socket().set_option(tcp::no_delay(true), ec);
    next_ = worker_.first;
    if (next_ != nullptr) next_->prev_ = this;
    worker_.first = this;
    ++worker_.connections;
  }

  ~Connection() {
    release_unsent();
    release_body();
    if (prev_ != nullptr)
      prev_->next_ = next_;
    else
      worker_.first = next_;
    if (next_ != nullptr) next_->prev_ = prev_;
    if (--worker_.connections == 0 && worker_.stopping && worker_.drain_timer)
      worker_.drain_timer->cancel();
  }

  Connection* next() const { return next_; }

  // Closes the connection if it is waiting for a request (used by stop()).
  void close_if_idle() {
    if (idle_) cut();
  }

  // Closes the connection now; pending operations complete with an error.
  void cut() {
    stream_.close();
    if (unsent_wait_) unsent_wait_->cancel();
  }

 private:
  void read_head() {
    if (worker_.stopping) return cut();
    reset_parser();
    idle_ = true;
    await_head();
  }

  // Reads the next request's head, once the answers other connections are still writing
  // hold no more than the limit; until then the request waits in the socket.
  void await_head() {
    if (worker_.stopping) return cut();
    if (server_.unsent_bytes_.load(std::memory_order_relaxed) > options_.unsent_limit) {
      if (!unsent_wait_) unsent_wait_.emplace(worker_.io);
      unsent_wait_->expires_after(kUnsentRetry);
      unsent_wait_->async_wait([self = shared_from_this()](error_code ec) {
        if (!ec) self->await_head();
      });
      return;
    }
    stream_.expires_after(options_.idle_timeout);
    http::async_read_header(stream_, buffer_, *parser_,
                            [self = shared_from_this()](error_code ec, std::size_t head_size) {
                              self->on_head(ec, head_size);
                            });
  }

  void reset_parser() {
    if (parser_) {
      body_spare_ = std::move(parser_->get().body());
      body_spare_.clear();
      if (body_spare_.capacity() > kRetainedCapacity) std::string().swap(body_spare_);
      parser_.reset();
    }
    headers_.clear();
    content_type_ = {};
    has_origin_ = false;
    route_ = Route::kOperation;
    arena_.release();
    parser_.emplace(std::piecewise_construct, std::make_tuple(std::move(body_spare_)),
                    std::make_tuple(HeadAllocator(&arena_)));
    parser_->header_limit(options_.header_limit);
    // The limit is set once the head is in: Beast would otherwise fail the head itself
    // when Content-Length is over it, before the checks that DynamoDB makes first.
    parser_->body_limit(std::numeric_limits<std::uint64_t>::max());
    if (buffer_.capacity() > kRetainedCapacity) buffer_.shrink_to_fit();
  }

  void on_head(error_code ec, std::size_t head_size) {
    idle_ = false;
    // Beast bounds the request line and the header fields each on its own; the limit is on
    // the two together.
    if (!ec && head_size > options_.header_limit) ec = http::error::header_limit;
    if (options_.log_requests) started_ = std::chrono::steady_clock::now();
    if (ec) return on_read_error(ec);
    const auto& request = parser_->get();
    for (const auto& field : request)
      headers_.push_back({sv(field.name_string()), sv(field.value())});
    keep_alive_ = request.keep_alive();
    http10_ = request.version() < 11;
    content_type_ = find_header(headers_, "content-type").value_or(std::string_view{});
    has_origin_ = find_header(headers_, "origin").has_value();

    // HTTP/1.1 framing (RFC 9112): a Transfer-Encoding must end in chunked and comes without
    // a Content-Length; a request framed any other way cannot be delimited safely (its body
    // could be read as a second, smuggled request), so it is refused and the connection
    // closed.
    if (find_header(headers_, "transfer-encoding") &&
        (!parser_->chunked() || find_header(headers_, "content-length"))) {
      keep_alive_ = false;
      return send(400, kTextPlain, kBadRequestBody);
    }
    const auto length = parser_->content_length();
    const bool has_body = length ? *length > 0 : parser_->chunked();
    route_ = route_for(has_body);
    if (length && *length > options_.body_limit) return refuse_oversize();
    // A body of known length takes its whole size at once (the parser reserves it); a
    // chunked one, chunk by chunk.
    if (length && !reserve_body(*length)) return refuse_overload();
    if (parser_->chunked()) parser_->on_chunk_body(chunk_body_);
    parser_->body_limit(options_.body_limit);
    if (parser_->is_done()) return on_body({});

    const auto expect = find_header(headers_, "expect");
    if (expect && iequals(*expect, "100-continue")) {
      // The client waits for a go-ahead before sending the body. Other answers do not
      // need the body: give them without it and close.
      if (route_ != Route::kOperation) {
        keep_alive_ = false;
        return respond();
      }
      stream_.expires_after(options_.write_timeout);
      asio::async_write(stream_, asio::buffer(kContinue.data(), kContinue.size()),
                        [self = shared_from_this()](error_code ec, std::size_t) {
                          if (ec) return self->cut();
                          self->read_body();
                        });
      return;
    }
    read_body();
  }

  void read_body() {
    stream_.expires_after(options_.body_timeout);
    http::async_read(
        stream_, buffer_, *parser_,
        [self = shared_from_this()](error_code ec, std::size_t) { self->on_body(ec); });
  }

  void on_body(error_code ec) {
    if (ec == http::error::body_limit) return refuse_oversize();
    if (ec == asio::error::no_buffer_space) return refuse_overload();
    if (ec) return on_read_error(ec);
    route_ = route_for(!parser_->get().body().empty());
    respond();
  }

  void on_read_error(error_code ec) {
    // A broken request (not a vanished or slow client) gets an answer before closing. A
    // head over the limit is one: DynamoDB answers 400, before looking at the path or the
    // signature.
    if (ec.category() == http::make_error_code(http::error::bad_method).category() &&
        ec != http::error::end_of_stream && ec != http::error::partial_message) {
      keep_alive_ = false;
      return send(400, kTextPlain, kBadRequestBody);
    }
    cut();
  }

  Route route_for(bool has_body) const {
    const auto& request = parser_->get();
    RequestHead head;
    head.method = sv(request.method_string());
    head.path = request_path(sv(request.target()));
    head.content_type = content_type_;
    head.has_body = has_body;
    head.has_origin = has_origin_;
    return net::route(head);
  }

  // Takes `bytes` of the server's budget for request bodies, or returns false when they
  // would pass it.
  bool reserve_body(std::size_t bytes) {
    if (bytes == 0) return true;
    const std::size_t budget = options_.body_budget;
    std::size_t held = server_.body_bytes_.load(std::memory_order_relaxed);
    do {
      if (held > budget || bytes > budget - held) return false;
    } while (
        !server_.body_bytes_.compare_exchange_weak(held, held + bytes, std::memory_order_relaxed));
    reserved_ += bytes;
    return true;
  }

  // Gives back what this request took of the budget.
  void release_body() {
    if (reserved_ == 0) return;
    server_.body_bytes_.fetch_sub(reserved_, std::memory_order_relaxed);
    reserved_ = 0;
  }

  // Stores each piece of a chunked body, once the budget has room for it.
  struct ChunkBody {
    Connection& connection;
    std::size_t operator()(std::uint64_t, beast::string_view data, error_code& ec) {
      if (!connection.reserve_body(data.size())) {
        ec = asio::error::no_buffer_space;
        return 0;
      }
      connection.parser_->get().body().append(data.data(), data.size());
      return data.size();
    }
  };

  // Answers a request without reading (the rest of) its body, so the connection closes: an
  // operation gets `status` and `body`, while the earlier checks (health, unknown
  // operation, pre-flight) still win.
  void refuse_body(int status, std::string_view content_type, std::string_view body) {
    keep_alive_ = false;
    if (route_ == Route::kOperation) return send(status, content_type, body);
    respond();
  }

  // DynamoDB answers 413 to an operation whose body is over the limit.
  void refuse_oversize() { refuse_body(413, kTextPlain, kTooLargeBody); }

  // Past the budget for request bodies, DynamoDB's answer to overload.
  void refuse_overload() {
    refuse_body(400, response_content_type(content_type_), kThrottlingBody);
  }

  void respond() {
    switch (route_) {
      case Route::kHealth: {
        // A request without a Host header (HTTP/1.0) is taken to have asked for the
        // endpoint of the server's region.
        const auto host = find_header(headers_, "host");
        response_.body = health_body(host && !host->empty() ? *host : server_.default_host_);
        return send(200, kTextPlain, response_.body);
      }
      case Route::kUnknownOperation:
        return send(404, kTextPlain, kUnknownOperationBody);
      case Route::kCorsPreflight:
        return send(200, {}, {});
      case Route::kOperation:
        break;
    }
    const auto& request = parser_->get();
    // The signature covers the body as sent; the operation reads it decoded.
    const std::string_view sent = request.body();
    std::string_view body = sent;
    if (const auto encoding = find_header(headers_, "content-encoding")) {
      switch (decode_body(*encoding, sent, options_.body_limit, decoded_)) {
        case DecodeResult::kOk:
          body = decoded_;
          break;
        case DecodeResult::kTooLarge:
          return send(413, kTextPlain, kTooLargeBody);
        case DecodeResult::kInvalid:
          return send(500, response_content_type(content_type_), kInternalErrorBody);
      }
    }
    const RequestView view{sv(request.method_string()), sv(request.target()), headers_, sent};
    const RequestAuthenticator authenticator(server_.verifier_, view);
    const std::string_view target =
        find_header(headers_, "x-amz-target").value_or(std::string_view{});
    request_id_ = make_request_id();
    try {
      response_ = server_.handler_(target, body, authenticator);
    } catch (const std::exception& e) {
      // The one place an internal failure is logged: the request id is the one the client
      // gets in x-amzn-RequestId.
      spdlog::error("request {} ({}): {}", std::string_view(request_id_.data(), request_id_.size()),
                    target, e.what());
      response_.status = 500;
      response_.body.assign(kInternalErrorBody);
    }
    write_compressible(response_.status, response_content_type(content_type_), response_.body);
  }

  // Sends `body`, compressed when it is large enough and the client accepts gzip or
  // deflate (the first Accept-Encoding header decides). Small answers cost one comparison.
  void write_compressible(int status, std::string_view content_type, std::string_view body) {
    Coding coding = Coding::kIdentity;
    if (body.size() >= kCompressThreshold) {
      if (const auto accept = find_header(headers_, "accept-encoding"))
        coding = negotiate_coding(*accept);
    }
    if (coding == Coding::kIdentity) return write(status, content_type, body, /*fresh_id=*/false);
    compress_body(coding, body, compressed_);
    write(status, content_type, compressed_, /*fresh_id=*/false, coding_name(coding));
  }

  void send(int status, std::string_view content_type, std::string_view body) {
    write(status, content_type, body, /*fresh_id=*/true);
  }

  // Sends one response with a single gathered write; `body` must stay valid until the
  // write completes (it is static, the server's, response_.body or compressed_).
  void write(int status, std::string_view content_type, std::string_view body, bool fresh_id,
             std::string_view content_encoding = {}) {
    release_body();
    if (fresh_id) request_id_ = make_request_id();
    if (options_.log_requests)
      log_request(status, body, fresh_id ? std::string_view{} : response_.tables);
    if (worker_.stopping) keep_alive_ = false;
    ResponseHead head;
    head.status = status;
    head.content_type = content_type;
    head.content_encoding = content_encoding;
    head.request_id = std::string_view(request_id_.data(), request_id_.size());
    head.allow_any_origin = has_origin_;
    head.preflight = route_ == Route::kCorsPreflight && status == 200;
    if (head.preflight) {
      head.allow_headers =
          find_header(headers_, "access-control-request-headers").value_or(std::string_view{});
      head.allow_methods =
          find_header(headers_, "access-control-request-method").value_or(std::string_view{});
    }
    head.keep_alive = keep_alive_;
    head.http10 = http10_;
    out_head_.clear();
    append_response_head(out_head_, head, body);
    const std::array<asio::const_buffer, 2> buffers = {
        asio::buffer(out_head_.data(), out_head_.size()), asio::buffer(body.data(), body.size())};
    unsent_ = out_head_.size() + body.size();
    server_.unsent_bytes_.fetch_add(unsent_, std::memory_order_relaxed);
    stream_.expires_after(options_.write_timeout);
    asio::async_write(stream_, buffers, [self = shared_from_this()](error_code ec, std::size_t) {
      self->on_write(ec);
    });
  }

  void release_unsent() {
    server_.unsent_bytes_.fetch_sub(unsent_, std::memory_order_relaxed);
    unsent_ = 0;
  }

  // One access-log line; `tables` is empty for answers the server gives itself.
  void log_request(int status, std::string_view body, std::string_view tables) const {
    const auto& request = parser_->get();
    std::string_view operation = find_header(headers_, "x-amz-target").value_or(std::string_view{});
    operation = operation.substr(operation.find('.') + 1);
    const std::chrono::duration<double, std::milli> latency =
        std::chrono::steady_clock::now() - started_;
    const std::string_view method = sv(request.method_string());
    spdlog::info("{} {} table={} status={} error={} latency={:.3f}ms id={}",
                 method.empty() ? "-" : method, operation.empty() ? "-" : operation,
                 tables.empty() ? "-" : tables, status, error_type(status, body), latency.count(),
                 std::string_view(request_id_.data(), request_id_.size()));
  }

  void on_write(error_code ec) {
    release_unsent();
    if (ec) return cut();
    for (std::string* buffer : {&response_.body, &decoded_, &compressed_})
      if (buffer->capacity() > kRetainedCapacity) std::string().swap(*buffer);
    if (!keep_alive_) return linger_close();
    read_head();
  }

  // Half-closes and reads until the client closes too (or a short timeout), so that a
  // client still sending a body sees the response instead of a connection reset.
  void linger_close() {
    error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ec);
    if (ec) return cut();
    // While stopping, only wait for bytes that are already on their way.
    if (worker_.stopping && stream_.socket().available(ec) == 0) return cut();
    stream_.expires_after(kLingerTimeout);
    drain();
  }

  void drain() {
    buffer_.consume(buffer_.size());
    stream_.async_read_some(buffer_.prepare(16384),
                            [self = shared_from_this()](error_code ec, std::size_t) {
                              if (ec) return self->cut();
                              self->drain();
                            });
  }

  Server& server_;
  Worker& worker_;
  const ServerOptions& options_;
  Stream stream_;
  beast::flat_buffer buffer_;
  std::array<std::byte, 4096> arena_storage_;
  std::pmr::monotonic_buffer_resource arena_;
  std::optional<Parser> parser_;   // after arena_: its fields live there
  std::string body_spare_;         // body storage reused by the next request
  std::vector<Header> headers_;    // views into parser_'s fields
  std::string_view content_type_;  // of the current request; empty when absent
  bool has_origin_ = false;
  std::string out_head_;
  std::string decoded_;  // the body of a compressed request, decoded
  api::Response response_;
  std::string compressed_;  // response_.body compressed for the client
  RequestId request_id_{};
  std::size_t unsent_ = 0;  // bytes of the answer being written, counted in unsent_bytes_
  std::optional<asio::steady_timer> unsent_wait_;
  std::chrono::steady_clock::time_point started_;  // head read; set when logging requests
  std::size_t reserved_ = 0;                       // of the server's body budget
  ChunkBody chunk_body_{*this};
  Route route_ = Route::kOperation;
  bool idle_ = false;
  bool keep_alive_ = true;
  bool http10_ = false;
  Connection* prev_ = nullptr;
  Connection* next_ = nullptr;
};

void Server::Listener::accept() {
  Worker& worker = *server_.workers_[next_];
  next_ = (next_ + 1) % server_.workers_.size();
  peer_.emplace(worker.io.get_executor());
  acceptor_.async_accept(*peer_, [this, &worker](error_code ec) {
    if (!acceptor_.is_open()) return;
    if (ec) return back_off(ec);
    if (failures_ > 0) recovered();
    asio::post(worker.io, [&server = server_, &worker, socket = std::move(*peer_)]() mutable {
      Connection::open(server, worker, std::move(socket));
    });
    accept();
  });
}

void Server::Listener::back_off(error_code ec) {
  ++failures_;
  ++unreported_;
  const auto now = std::chrono::steady_clock::now();
  if (failures_ == 1) {
    spdlog::warn("accept failed: {}; backing off (failures are counted and logged every {} s)",
                 ec.message(), kAcceptReportInterval.count());
    unreported_ = 0;
    reported_ = now;
  } else if (now - reported_ >= kAcceptReportInterval) {
    spdlog::warn("accept failed {} more times: {}", unreported_, ec.message());
    unreported_ = 0;
    reported_ = now;
  }
  delay_ = delay_.count() == 0 ? kFirstAcceptDelay
                               : std::min<std::chrono::milliseconds>(delay_ * 2, kLastAcceptDelay);
  retry_.expires_after(delay_);
  retry_.async_wait([this](error_code ec) {
    if (!ec && acceptor_.is_open()) accept();
  });
}

void Server::Listener::recovered() {
  spdlog::info("accepting again after {} failed accepts", failures_);
  failures_ = 0;
  unreported_ = 0;
  delay_ = std::chrono::milliseconds(0);
}

Server::Server(ServerOptions options, SigV4Verifier verifier, Handler handler)
    : options_(std::move(options)),
      verifier_(std::move(verifier)),
      handler_(std::move(handler)),
      default_host_(endpoint_host(options_.region)) {
  unsigned threads = options_.threads;
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  workers_.reserve(threads);
  for (unsigned i = 0; i < threads; ++i) workers_.push_back(std::make_unique<Worker>());
  listener_ =
      std::make_unique<Listener>(*this, resolve_endpoint(options_.bind_address, options_.port));
  const auto endpoint = listener_->local_endpoint();
  address_ = endpoint.address().to_string();
  port_ = endpoint.port();
}

Server::~Server() {
  stop();
}

namespace {

// Runs a worker's loop until it runs out of work; a handler that throws is logged and the
// loop goes on.
void run_loop(asio::io_context& io, std::size_t index) {
  for (;;) {
    try {
      io.run();
      return;
    } catch (const std::exception& e) {
      spdlog::error("I/O thread {}: {}", index, e.what());
    }
  }
}

}  // namespace

void Server::start_threads(std::size_t first) {
  started_ = true;
  listener_->start();
  for (std::size_t i = 0; i < workers_.size(); ++i) {
    Worker& worker = *workers_[i];
    worker.guard.emplace(worker.io.get_executor());
    if (i < first) continue;
    worker.thread = std::thread([&worker, i] {
      const std::string name = "kumo-io-" + std::to_string(i);
      pthread_setname_np(pthread_self(), name.c_str());
      run_loop(worker.io, i);
    });
  }
}

void Server::start() {
  if (started_ || stopped_) return;
  start_threads(0);
}

void Server::run(const std::vector<int>& signals, const std::function<void(int)>& on_signal) {
  if (started_ || stopped_) return;
  asio::signal_set caught(workers_[0]->io);
  sigset_t mask;
  sigemptyset(&mask);
  for (const int signal : signals) {
    caught.add(signal);
    sigaddset(&mask, signal);
  }
  caught.async_wait([this, &on_signal](error_code ec, int signal) {
    if (ec) return;
    on_signal(signal);
    stopped_ = true;
    request_stop();
  });
  start_threads(1);
  // The threads just started keep the signals blocked; this one takes them from now on.
  pthread_sigmask(SIG_UNBLOCK, &mask, nullptr);
  run_loop(workers_[0]->io, 0);
  pthread_sigmask(SIG_BLOCK, &mask, nullptr);
  join_threads();
}

void Server::stop() {
  if (stopped_) return;
  stopped_ = true;
  if (!started_) return;
  request_stop();
  join_threads();
}

void Server::request_stop() {
  asio::post(workers_[0]->io, [this] { listener_->close(); });
  const auto drain = options_.drain_timeout;
  for (auto& w : workers_) {
    Worker& worker = *w;
    asio::post(worker.io, [&worker, drain] {
      worker.stopping = true;
      for (Connection* c = worker.first; c != nullptr; c = c->next()) c->close_if_idle();
      worker.guard.reset();
      if (worker.connections == 0) return;
      worker.drain_timer->expires_after(drain);
      worker.drain_timer->async_wait([&worker](error_code ec) {
        if (ec) return;
        for (Connection* c = worker.first; c != nullptr; c = c->next()) c->cut();
      });
    });
  }
}

void Server::join_threads() {
  for (auto& w : workers_)
    if (w->thread.joinable()) w->thread.join();
}

}  // namespace kumo::net
