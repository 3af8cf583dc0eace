// The status line and headers of every Kumo response, as DynamoDB sends them:
// x-amzn-RequestId, x-amz-crc32, Content-Type, Content-Encoding, Content-Length, Date, Server
// ("Server", as DynamoDB names itself), CORS and connection headers. Serialized into a
// caller-owned buffer so that a response goes out in one write.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace kumo::net {

inline constexpr std::size_t kRequestIdLength = 52;
using RequestId = std::array<char, kRequestIdLength>;

// A fresh request id: 52 characters of [0-9A-Z], as DynamoDB's. Random per call from a
// per-thread generator (unique in practice, not secret).
RequestId make_request_id();

// zlib CRC-32 of `body`, the value of x-amz-crc32.
std::uint32_t body_crc32(std::string_view body);

// The current time as an HTTP date ("Sun, 06 Nov 1994 08:49:37 GMT"). The view stays
// valid on this thread until the next call.
std::string_view http_date_now();

struct ResponseHead {
  int status = 200;
  std::string_view content_type;      // omitted when empty
  std::string_view content_encoding;  // "gzip" or "deflate"; omitted when empty
  std::string_view request_id;        // x-amzn-RequestId
  bool allow_any_origin = false;      // the request carried Origin
  bool preflight = false;             // answer to a CORS pre-flight (adds Allow-*, Max-Age)
  std::string_view allow_headers;     // echo of Access-Control-Request-Headers
  std::string_view allow_methods;     // echo of Access-Control-Request-Method
  bool keep_alive = true;             // false adds "Connection: close"
  bool http10 = false;                // HTTP/1.0 request: keep-alive must be explicit
};

// Appends the status line and headers for a response carrying `body` to `out`, ending
// with the blank line. x-amz-crc32 is added when the body is non-empty.
void append_response_head(std::string& out, const ResponseHead& head, std::string_view body);

}  // namespace kumo::net
