// Fuzzes the SigV4 verifier in both modes: accepting any
// well-formed signature, and checking signatures against a known secret. The input is the
// first byte (which optional headers the request carries) followed by up to five fields
// separated by '\n': Authorization, the date header's value, the request target (path and
// query string, where a presigned request carries its signature), the body, and an extra
// value used as X-Amz-Content-Sha256 and parsed as a credentials file. ApiError is the
// expected way to refuse a request; anything else escaping is a finding.
#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <ctime>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "model/api_error.h"
#include "net/sigv4.h"

namespace {

using namespace kumo;
using namespace kumo::net;

// Header values of a few KiB reach every path; the server bounds the whole head at 16 KiB.
constexpr std::size_t kMaxInput = 16 << 10;

// 2026-01-15T10:15:00Z: the verifier's clock, fixed so that a run does not depend on when
// it happens. Seeds sign at this time.
std::chrono::system_clock::time_point now() {
  std::tm tm{};
  tm.tm_year = 2026 - 1900;
  tm.tm_mon = 0;
  tm.tm_mday = 15;
  tm.tm_hour = 10;
  tm.tm_min = 15;
  return std::chrono::system_clock::from_time_t(timegm(&tm));
}

const SigV4Verifier& any_signature() {
  static const SigV4Verifier verifier;
  return verifier;
}

const SigV4Verifier& known_secret() {
  static const SigV4Verifier verifier(Credentials{{"AKIDKUMO", "kumoSecretKey/123+abc"}});
  return verifier;
}

void verify(const SigV4Verifier& verifier, const RequestView& request) {
  try {
    verifier.verify(request, now());
  } catch (const ApiError&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1 || size > kMaxInput) return 0;
  const std::uint8_t flags = data[0];
  std::string_view rest(reinterpret_cast<const char*>(data + 1), size - 1);
  std::array<std::string_view, 5> fields;
  for (std::size_t i = 0; i < fields.size() && !rest.empty(); ++i) {
    const std::size_t nl = i + 1 < fields.size() ? rest.find('\n') : std::string_view::npos;
    fields[i] = rest.substr(0, nl);
    rest = nl == std::string_view::npos ? std::string_view{} : rest.substr(nl + 1);
  }
  const auto [authorization, date, target, body, extra] = fields;

  std::vector<Header> headers{
      {"Host", "localhost:8000"},
      {"Content-Type", "application/x-amz-json-1.0"},
      {"X-Amz-Target", "DynamoDB_20120810.DescribeTable"},
  };
  if (flags & 1) headers.push_back({"Authorization", authorization});
  // The request time comes from X-Amz-Date, or else from Date (ISO-8601 or an HTTP date).
  if (flags & 2) headers.push_back({"X-Amz-Date", date});
  if (flags & 4) headers.push_back({"Date", date});
  if (flags & 8) headers.push_back({"X-Amz-Content-Sha256", extra});
  if (flags & 16) headers.push_back({"authorization", extra});
  const RequestView request{(flags & 32) ? "GET" : "POST", target.empty() ? "/" : target, headers,
                            body};

  verify(any_signature(), request);
  verify(known_secret(), request);
  find_header(headers, extra);
  try {
    parse_credentials(extra);
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
