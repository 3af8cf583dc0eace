// AWS Signature Version 4 checks for incoming requests, failing with DynamoDB's errors in
// DynamoDB's check order.
//
// Two modes. Without credentials (the default) any well-formed signature is accepted, with
// any access key and region, as DynamoDB Local does; a missing or malformed one is still
// refused with DynamoDB's error (so is a presigned URL's X-Amz-Expires over a week). With
// credentials, the access key must be known and the signature must match the one computed
// with its secret. The region in the credential scope is never checked: tables are shared
// across keys and regions.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>

#include "api/service.h"

namespace kumo::net {

// One HTTP header as received: name in any case, value as the parser left it.
struct Header {
  std::string_view name;
  std::string_view value;
};

// The parts of an HTTP request a signature covers. Every view points into the request and
// is valid as long as the request is.
struct RequestView {
  std::string_view method;  // e.g. "POST"
  std::string_view target;  // request-target as sent: path, optionally followed by "?query"
  std::span<const Header> headers;
  std::string_view body;
};

// The value of the first header called `name` (ASCII case-insensitive), or nullopt.
std::optional<std::string_view> find_header(std::span<const Header> headers, std::string_view name);

struct StringHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

// Access key id → secret access key.
using Credentials = std::unordered_map<std::string, std::string, StringHash, std::equal_to<>>;

// Parses a credentials file: one "ACCESS_KEY_ID SECRET" pair per line, separated by spaces
// or tabs; blank lines and lines whose first non-blank character is '#' are ignored.
// Throws std::invalid_argument naming the first malformed line.
Credentials parse_credentials(std::string_view text);
// Reads and parses the file at `path`. Throws std::runtime_error if it cannot be read, or
// std::invalid_argument as parse_credentials does.
Credentials load_credentials_file(const std::string& path);

class SigV4Verifier {
 public:
  // Accepts any well-formed signature (no secrets known).
  SigV4Verifier() = default;
  // Accepts only requests signed with one of `credentials`, within 15 minutes of now (a
  // presigned URL with X-Amz-Expires: from its date for that many seconds).
  explicit SigV4Verifier(Credentials credentials) : credentials_(std::move(credentials)) {}

  // True when signatures are checked against secrets.
  bool checks_signatures() const { return credentials_.has_value(); }

  // Returns if `request` may proceed at time `now`; otherwise throws the ApiError DynamoDB
  // sends (MissingAuthenticationToken, IncompleteSignature, InvalidSignature,
  // UnrecognizedClient), checking in DynamoDB's order.
  void verify(const RequestView& request, std::chrono::system_clock::time_point now) const;

 private:
  std::optional<Credentials> credentials_;
};

// The api::Authenticator for one HTTP request: runs the verifier over the request when the
// service asks (after the target and JSON checks, as DynamoDB does). Holds references only;
// `verifier` and the request must outlive it.
class RequestAuthenticator final : public api::Authenticator {
 public:
  RequestAuthenticator(const SigV4Verifier& verifier, const RequestView& request)
      : verifier_(verifier), request_(request) {}
  void authenticate() const override;

 private:
  const SigV4Verifier& verifier_;
  const RequestView& request_;
};

// SigV4 building blocks, exposed for tests.
namespace sigv4 {

// Lower-case hex SHA-256 of `data`.
std::string sha256_hex(std::string_view data);

// The canonical request: method, canonical URI, canonical query string (without
// X-Amz-Signature), canonical headers for `signed_headers` (';'-separated lower-case
// names), the signed header list, and `payload_hash`, joined by '\n'.
std::string canonical_request(const RequestView& request, std::string_view signed_headers,
                              std::string_view payload_hash);

// "AWS4-HMAC-SHA256\n<amz_date>\n<scope>\n<hex sha256 of canonical_request>".
std::string string_to_sign(std::string_view amz_date, std::string_view scope,
                           std::string_view canonical_request);

// Lower-case hex HMAC-SHA256 of `string_to_sign` under the key derived from `secret` and
// the scope's date, region and service.
std::string signature(std::string_view secret, std::string_view date, std::string_view region,
                      std::string_view service, std::string_view string_to_sign);

}  // namespace sigv4
}  // namespace kumo::net
