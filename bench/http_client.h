// The HTTP/1.1 pieces the load generator shares: writing a signed DynamoDB request,
// parsing a response (with Boost.Beast's parser, into reused buffers), and a small
// blocking client for set-up and start-up probes, where speed does not matter.
#pragma once

#include <boost/beast/http/basic_parser.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "sigv4_signer.h"
#include "workloads.h"

namespace kumo::bench {

struct Endpoint {
  std::string host;  // numeric address
  std::uint16_t port = 0;
  std::string authority;  // "host:port", the Host header
};

// Parses "HOST:PORT" (HOST a numeric IPv4 address or "localhost"). Throws
// std::invalid_argument on anything else.
Endpoint parse_endpoint(std::string_view text);

// Appends to `out` the bytes of `op` as an HTTP/1.1 request to `endpoint`: a SigV4-signed
// POST / for a DynamoDB operation, or a plain GET / when op.target is empty.
void append_request(std::string& out, const Endpoint& endpoint, const Operation& op,
                    SigV4Signer& signer);

// Collects a response's status and body, appending the body to a caller's buffer so that
// no memory is allocated per response once that buffer has grown.
class ResponseParser final : public boost::beast::http::basic_parser<false> {
 public:
  explicit ResponseParser(std::string& body) : body_(body) {
    body_.clear();
    eager(true);
    body_limit(std::uint64_t{64} << 20);
  }

  unsigned status() const { return status_; }

 private:
  using error_code = boost::beast::error_code;
  using string_view = boost::beast::string_view;

  void on_request_impl(boost::beast::http::verb, string_view, string_view, int,
                       error_code&) override {}
  void on_response_impl(int code, string_view, int, error_code&) override {
    status_ = static_cast<unsigned>(code);
  }
  void on_field_impl(boost::beast::http::field, string_view, string_view, error_code&) override {}
  void on_header_impl(error_code&) override {}
  void on_body_init_impl(const boost::optional<std::uint64_t>& length, error_code&) override {
    if (length) body_.reserve(static_cast<std::size_t>(*length));
  }
  std::size_t on_body_impl(string_view piece, error_code&) override {
    body_.append(piece.data(), piece.size());
    return piece.size();
  }
  void on_chunk_header_impl(std::uint64_t, string_view, error_code&) override {}
  std::size_t on_chunk_body_impl(std::uint64_t, string_view piece, error_code&) override {
    body_.append(piece.data(), piece.size());
    return piece.size();
  }
  void on_finish_impl(error_code&) override {}

  std::string& body_;
  unsigned status_ = 0;
};

struct HttpReply {
  unsigned status = 0;
  std::string body;
};

// One blocking keep-alive connection, for set-up requests and probes.
class BlockingClient {
 public:
  explicit BlockingClient(Endpoint endpoint) : endpoint_(std::move(endpoint)) {}
  ~BlockingClient();
  BlockingClient(const BlockingClient&) = delete;
  BlockingClient& operator=(const BlockingClient&) = delete;

  // Connects if not connected. False if the connection is refused or fails.
  bool connect();
  // Sends `op` and waits up to `timeout` for the reply. nullopt (and the connection
  // closed) on any transport or parse failure.
  std::optional<HttpReply> send(const Operation& op, SigV4Signer& signer,
                                std::chrono::milliseconds timeout);
  void close();

 private:
  Endpoint endpoint_;
  int fd_ = -1;
  std::string out_;
  std::string in_;
};

}  // namespace kumo::bench
