#include "net/response_head.h"

#include <libdeflate.h>

#include <charconv>
#include <cstdio>
#include <ctime>
#include <thread>

#include "model/random_seed.h"

namespace kumo::net {
namespace {

// splitmix64: tiny, fast, and good enough for identifiers that only need to differ.
struct RequestIdGenerator {
  std::uint64_t state;
  RequestIdGenerator() {
    state = random_seed() ^ std::hash<std::thread::id>{}(std::this_thread::get_id());
  }
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
};

void append_number(std::string& out, std::uint64_t n) {
  char buf[24];
  auto end = std::to_chars(buf, buf + sizeof buf, n).ptr;
  out.append(buf, end);
}

std::string_view reason(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 400:
      return "Bad Request";
    case 404:
      return "Not Found";
    case 408:
      return "Request Timeout";
    case 413:
      return "Payload Too Large";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    case 503:
      return "Service Unavailable";
    default:
      return "Unknown";
  }
}

}  // namespace

RequestId make_request_id() {
  static constexpr char kAlphabet[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";
  thread_local RequestIdGenerator generator;
  RequestId id;
  // 36^12 < 2^64: twelve base-36 digits per 64-bit draw.
  for (std::size_t i = 0; i < id.size();) {
    std::uint64_t r = generator.next();
    for (int d = 0; d < 12 && i < id.size(); ++d, ++i) {
      id[i] = kAlphabet[r % 36];
      r /= 36;
    }
  }
  return id;
}

std::uint32_t body_crc32(std::string_view body) {
  return libdeflate_crc32(0, body.data(), body.size());
}

std::string_view http_date_now() {
  struct Cache {
    std::time_t second = -1;
    char text[64];
    std::size_t size = 0;
  };
  thread_local Cache cache;
  const std::time_t now = std::time(nullptr);
  if (now != cache.second) {
    static constexpr const char* kDays[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
    static constexpr const char* kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                              "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    std::tm tm{};
    gmtime_r(&now, &tm);
    const int n = std::snprintf(
        cache.text, sizeof cache.text, "%s, %02d %s %04d %02d:%02d:%02d GMT", kDays[tm.tm_wday],
        tm.tm_mday, kMonths[tm.tm_mon], tm.tm_year + 1900, tm.tm_hour, tm.tm_min, tm.tm_sec);
    cache.size = n > 0 ? static_cast<std::size_t>(n) : 0;
    cache.second = now;
  }
  return {cache.text, cache.size};
}

void append_response_head(std::string& out, const ResponseHead& head, std::string_view body) {
  out.append("HTTP/1.1 ");
  append_number(out, static_cast<std::uint64_t>(head.status));
  out.push_back(' ');
  out.append(reason(head.status));
  out.append("\r\nx-amzn-RequestId: ");
  out.append(head.request_id);
  if (!body.empty()) {
    out.append("\r\nx-amz-crc32: ");
    append_number(out, body_crc32(body));
  }
  if (!head.content_type.empty()) {
    out.append("\r\nContent-Type: ");
    out.append(head.content_type);
  }
  if (!head.content_encoding.empty()) {
    out.append("\r\nContent-Encoding: ");
    out.append(head.content_encoding);
  }
  out.append("\r\nContent-Length: ");
  append_number(out, body.size());
  out.append("\r\nDate: ");
  out.append(http_date_now());
  out.append("\r\nServer: Server");
  if (head.allow_any_origin) {
    out.append("\r\nAccess-Control-Allow-Origin: *");
    if (head.preflight) {
      if (!head.allow_headers.empty()) {
        out.append("\r\nAccess-Control-Allow-Headers: ");
        out.append(head.allow_headers);
      }
      if (!head.allow_methods.empty()) {
        out.append("\r\nAccess-Control-Allow-Methods: ");
        out.append(head.allow_methods);
      }
      out.append("\r\nAccess-Control-Max-Age: 172800");
    }
    // Lets browser clients read DynamoDB's response headers.
    out.append(
        "\r\nAccess-Control-Expose-Headers: "
        "x-amzn-RequestId,x-amzn-ErrorType,x-amz-request-id,x-amz-id-2,x-amzn-ErrorMessage,"
        "Date");
  }
  if (!head.keep_alive)
    out.append("\r\nConnection: close");
  else if (head.http10)
    out.append("\r\nConnection: keep-alive");
  out.append("\r\n\r\n");
}

}  // namespace kumo::net
