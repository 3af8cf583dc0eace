// Fuzzes the HTTP front of the server (framing, limits, routing and signature checks). The
// server's parsing lives inside its connection class, so this target repeats it step by
// step on an in-memory stream: a Beast request_parser of the server's type with its header
// and body limits, fed the bytes in pieces as a socket would deliver them, then the
// pre-dispatch routing, the decoding of a compressed body and the SigV4 check of an
// operation, and the response head. The first byte sets the size of the pieces (0: all at
// once); the rest is what the client sends.
// Checked: the parser and routing never crash, and every response head Kumo would write
// parses back as one HTTP response with the status and body length it was given.
#include <algorithm>
#include <array>
#include <boost/asio/buffer.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <limits>
#include <memory_resource>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/api_error.h"
#include "net/content_coding.h"
#include "net/http_server.h"
#include "net/http_text.h"
#include "net/pre_dispatch.h"
#include "net/response_head.h"
#include "net/sigv4.h"

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using error_code = boost::system::error_code;
using namespace kumo;
using namespace kumo::net;

// As http_server.cpp: heads in a per-request arena, bodies in a std::string.
using HeadAllocator = std::pmr::polymorphic_allocator<char>;
using Parser = http::request_parser<http::string_body, HeadAllocator>;

// Enough for several pipelined requests with bodies; larger inputs only repeat paths.
constexpr std::size_t kMaxInput = 256 << 10;

[[noreturn]] void fail(const char* what, std::string_view detail = {}) {
  std::fprintf(stderr, "fuzz_http: %s\n%.*s\n", what, static_cast<int>(detail.size()),
               detail.data());
  std::abort();
}

std::string_view sv(beast::string_view s) {
  return {s.data(), s.size()};
}

// The bytes a client sent, delivered `piece` at a time as reads from a socket would.
class Stream {
 public:
  Stream(std::string_view bytes, std::size_t piece) : bytes_(bytes), piece_(piece) {}

  // The bytes received and not yet consumed by the parser.
  asio::const_buffer pending() const {
    return asio::buffer(bytes_.data() + consumed_, received_ - consumed_);
  }
  void consume(std::size_t n) { consumed_ += n; }
  // Receives the next piece; false at the end of the stream.
  bool receive() {
    if (received_ == bytes_.size()) return false;
    received_ += std::min(piece_, bytes_.size() - received_);
    return true;
  }
  bool exhausted() const { return consumed_ == bytes_.size(); }
  std::size_t consumed() const { return consumed_; }

 private:
  std::string_view bytes_;
  std::size_t piece_;
  std::size_t received_ = 0;
  std::size_t consumed_ = 0;
};

// Feeds the parser until `done` holds, as Beast's read and read_header do. Returns the
// parser's error; end_of_stream when the stream ended before any byte of the message.
error_code read_until(Parser& parser, Stream& stream, bool (Parser::*done)() const) {
  error_code ec;
  while (!(parser.*done)()) {
    if (asio::buffer_size(stream.pending()) > 0) {
      stream.consume(parser.put(stream.pending(), ec));
      if (ec != http::error::need_more) {
        if (ec) return ec;
        continue;
      }
      ec = {};
    }
    if (!stream.receive()) {
      if (parser.got_some()) {
        parser.put_eof(ec);
        return ec ? ec : http::error::partial_message;
      }
      return http::error::end_of_stream;
    }
  }
  return ec;
}

// Parses `head` + `body` as a response and checks it is what Kumo meant to send.
void check_response(const std::string& head, std::string_view body, int status) {
  http::response_parser<http::string_body> parser;
  parser.eager(true);
  error_code ec;
  const std::size_t used = parser.put(asio::buffer(head), ec);
  if (ec && ec != http::error::need_more) fail("response head does not parse", head);
  if (used != head.size()) fail("response head has bytes after its blank line", head);
  if (!parser.is_header_done()) fail("response head is incomplete", head);
  if (parser.get().result_int() != static_cast<unsigned>(status)) fail("wrong status", head);
  if (!parser.content_length() || *parser.content_length() != body.size()) {
    fail("Content-Length does not match the body", head);
  }
}

std::chrono::system_clock::time_point fixed_now() {
  std::tm tm{};
  tm.tm_year = 2026 - 1900;
  tm.tm_mon = 0;
  tm.tm_mday = 15;
  tm.tm_hour = 10;
  tm.tm_min = 15;
  return std::chrono::system_clock::from_time_t(timegm(&tm));
}

bool is_disconnect(error_code ec) {
  return ec == http::error::end_of_stream || ec == http::error::partial_message;
}

// Reads the rest of a request whose head is in, and decides its answer in `head` (and
// `body`), as Server::Connection does from on_head on. Returns false when the client went
// away mid-request: nothing is answered then.
bool answer(Parser& parser, Stream& stream, const ServerOptions& options,
            const SigV4Verifier& verifier, ResponseHead& head, std::string_view& body) {
  const auto& request = parser.get();
  std::vector<Header> headers;
  for (const auto& field : request) headers.push_back({sv(field.name_string()), sv(field.value())});
  head.keep_alive = request.keep_alive();
  head.http10 = request.version() < 11;
  const std::string_view content_type =
      find_header(headers, "content-type").value_or(std::string_view{});
  const bool has_origin = find_header(headers, "origin").has_value();
  head.allow_any_origin = has_origin;
  RequestHead request_head{sv(request.method_string()), request_path(sv(request.target())),
                           content_type, false, has_origin};

  const auto length = parser.content_length();
  request_head.has_body = length ? *length > 0 : parser.chunked();
  Route route = net::route(request_head);
  bool oversize = length && *length > options.body_limit;
  if (!oversize) {
    parser.body_limit(options.body_limit);
    const auto expect = find_header(headers, "expect");
    // A client waiting for 100-continue gets the answers that need no body at once.
    const bool skip_body = !parser.is_done() && expect && iequals(*expect, "100-continue") &&
                           route != Route::kOperation;
    if (skip_body) {
      head.keep_alive = false;
    } else {
      const error_code ec = read_until(parser, stream, &Parser::is_done);
      if (ec == http::error::body_limit) {
        oversize = true;
      } else if (is_disconnect(ec)) {
        return false;
      } else if (ec) {
        head.status = 400;
        head.keep_alive = false;
        return true;
      } else {
        request_head.has_body = !request.body().empty();
        route = net::route(request_head);
      }
    }
  }
  if (oversize) {
    head.keep_alive = false;
    if (route == Route::kOperation) {
      head.status = 413;
      return true;
    }
  }
  switch (route) {
    case Route::kHealth:
      break;
    case Route::kUnknownOperation:
      head.status = 404;
      body = kUnknownOperationBody;
      break;
    case Route::kCorsPreflight:
      head.preflight = true;
      head.allow_headers =
          find_header(headers, "access-control-request-headers").value_or(std::string_view{});
      head.allow_methods =
          find_header(headers, "access-control-request-method").value_or(std::string_view{});
      break;
    case Route::kOperation: {
      head.content_type = response_content_type(content_type);
      // A compressed body is decoded before anything else, bounded by the body limit.
      if (const auto encoding = find_header(headers, "content-encoding")) {
        static std::string decoded;
        const DecodeResult result =
            decode_body(*encoding, request.body(), options.body_limit, decoded);
        if (result != DecodeResult::kOk) {
          head.status = result == DecodeResult::kTooLarge ? 413 : 500;
          break;
        }
      }
      const RequestView view{sv(request.method_string()), sv(request.target()), headers,
                             request.body()};
      try {
        verifier.verify(view, fixed_now());
      } catch (const ApiError& e) {
        head.status = e.http_status();
      }
      find_header(headers, "x-amz-target");
      break;
    }
  }
  return true;
}

// One request of a connection. Returns false when the connection closes after it.
bool serve_one(Stream& stream, const ServerOptions& options, const SigV4Verifier& verifier) {
  std::array<std::byte, 4096> arena_storage;
  std::pmr::monotonic_buffer_resource arena(arena_storage.data(), arena_storage.size());
  Parser parser(std::piecewise_construct, std::make_tuple(),
                std::make_tuple(HeadAllocator(&arena)));
  parser.header_limit(options.header_limit);
  // As the server: the body limit is set once the head is in.
  parser.body_limit(std::numeric_limits<std::uint64_t>::max());

  ResponseHead head;
  std::string_view body;
  const std::size_t start = stream.consumed();
  error_code ec = read_until(parser, stream, &Parser::is_header_done);
  if (is_disconnect(ec)) return false;
  // As the server: the request line and the fields count together against the limit.
  if (!ec && stream.consumed() - start > options.header_limit) ec = http::error::header_limit;
  if (ec) {
    // A broken request, a head over the limit included, gets 400 and the connection closes.
    head.status = 400;
    head.keep_alive = false;
  } else if (!answer(parser, stream, options, verifier, head, body)) {
    return false;
  }
  // Every header value Kumo echoes must still give a well-formed response.
  const RequestId id = make_request_id();
  head.request_id = std::string_view(id.data(), id.size());
  std::string out;
  append_response_head(out, head, body);
  check_response(out, body, head.status);
  return head.keep_alive;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1 || size > kMaxInput) return 0;
  static const ServerOptions options;
  static const SigV4Verifier verifier;
  const std::size_t piece = data[0] == 0 ? size : data[0];
  Stream stream(std::string_view(reinterpret_cast<const char*>(data + 1), size - 1), piece);
  // Kept-alive requests follow one another on the connection until it closes.
  for (int requests = 0; requests < 16 && !stream.exhausted(); ++requests) {
    if (!serve_one(stream, options, verifier)) break;
  }
  return 0;
}
