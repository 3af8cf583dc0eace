#include "net/sigv4.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "model/api_error.h"
#include "net/http_text.h"

namespace kumo::net {
namespace {

using std::string_view;

constexpr string_view kAlgorithm = "AWS4-HMAC-SHA256";
constexpr string_view kService = "dynamodb";
constexpr string_view kTerminator = "aws4_request";
constexpr std::chrono::minutes kMaxSkew{15};
// A presigned URL is valid for X-Amz-Expires seconds from its X-Amz-Date, at most a week.
constexpr std::int64_t kMaxExpires = 604800;

void append_hex(std::string& out, const unsigned char* data, std::size_t n) {
  static constexpr char kDigits[] = "0123456789abcdef";
  for (std::size_t i = 0; i < n; ++i) {
    out.push_back(kDigits[data[i] >> 4]);
    out.push_back(kDigits[data[i] & 0xf]);
  }
}

using Digest = std::array<unsigned char, 32>;

Digest hmac(const unsigned char* key, std::size_t key_len, string_view data) {
  Digest out;
  unsigned int len = 0;
  HMAC(EVP_sha256(), key, static_cast<int>(key_len),
       reinterpret_cast<const unsigned char*>(data.data()), data.size(), out.data(), &len);
  return out;
}

Digest hmac(const Digest& key, string_view data) {
  return hmac(key.data(), key.size(), data);
}

// The SigV4 signing key for a scope. Clients sign every request of a day with the same
// key, so each thread remembers the last one it derived (four HMACs saved per request).
Digest signing_key(string_view secret, string_view date, string_view region, string_view service) {
  struct Cached {
    std::string secret, date, region, service;
    Digest key{};
    bool valid = false;
  };
  thread_local Cached cache;
  if (cache.valid && cache.secret == secret && cache.date == date && cache.region == region &&
      cache.service == service)
    return cache.key;
  std::string k_secret = "AWS4";
  k_secret.append(secret);
  Digest k = hmac(reinterpret_cast<const unsigned char*>(k_secret.data()), k_secret.size(), date);
  OPENSSL_cleanse(k_secret.data(), k_secret.size());
  k = hmac(k, region);
  k = hmac(k, service);
  k = hmac(k, kTerminator);
  cache.secret.assign(secret);
  cache.date.assign(date);
  cache.region.assign(region);
  cache.service.assign(service);
  cache.key = k;
  cache.valid = true;
  return k;
}

bool is_unreserved(unsigned char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '_' || c == '.' || c == '~';
}

// RFC 3986 percent-encoding as SigV4 defines it: everything but unreserved characters
// (and '/' when `keep_slash`) becomes %XX with upper-case hex.
void append_uri_encoded(std::string& out, string_view s, bool keep_slash) {
  static constexpr char kDigits[] = "0123456789ABCDEF";
  for (char ch : s) {
    auto c = static_cast<unsigned char>(ch);
    if (is_unreserved(c) || (keep_slash && c == '/')) {
      out.push_back(ch);
    } else {
      out.push_back('%');
      out.push_back(kDigits[c >> 4]);
      out.push_back(kDigits[c & 0xf]);
    }
  }
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string percent_decode(string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size()) {
      int hi = hex_value(s[i + 1]), lo = hex_value(s[i + 2]);
      if (hi >= 0 && lo >= 0) {
        out.push_back(static_cast<char>(hi * 16 + lo));
        i += 2;
        continue;
      }
    }
    out.push_back(s[i]);
  }
  return out;
}

struct QueryParam {
  std::string name;
  std::string value;
};

// The decoded name/value pairs of the query part of `target`, in order of appearance.
std::vector<QueryParam> query_params(string_view target) {
  std::vector<QueryParam> params;
  auto q = target.find('?');
  if (q == string_view::npos) return params;
  string_view query = target.substr(q + 1);
  while (!query.empty()) {
    auto amp = query.find('&');
    string_view pair = query.substr(0, amp);
    query = amp == string_view::npos ? string_view{} : query.substr(amp + 1);
    if (pair.empty()) continue;
    auto eq = pair.find('=');
    params.push_back(
        {percent_decode(pair.substr(0, eq)),
         eq == string_view::npos ? std::string{} : percent_decode(pair.substr(eq + 1))});
  }
  return params;
}

const QueryParam* find_param(const std::vector<QueryParam>& params, string_view name) {
  for (const auto& p : params)
    if (p.name == name) return &p;
  return nullptr;
}

// Parses an ISO-8601 basic time "YYYYMMDDTHHMMSSZ".
std::optional<std::time_t> parse_iso_basic(string_view s) {
  if (s.size() != 16 || s[8] != 'T' || s[15] != 'Z') return std::nullopt;
  auto num = [&](std::size_t pos, std::size_t len) {
    int v = 0;
    for (std::size_t i = pos; i < pos + len; ++i) {
      if (s[i] < '0' || s[i] > '9') return -1;
      v = v * 10 + (s[i] - '0');
    }
    return v;
  };
  std::tm tm{};
  int year = num(0, 4), month = num(4, 2), day = num(6, 2);
  int hour = num(9, 2), minute = num(11, 2), second = num(13, 2);
  if (year < 0 || month < 1 || month > 12 || day < 1 || day > 31 || hour < 0 || hour > 23 ||
      minute < 0 || minute > 59 || second < 0 || second > 60)
    return std::nullopt;
  tm.tm_year = year - 1900;
  tm.tm_mon = month - 1;
  tm.tm_mday = day;
  tm.tm_hour = hour;
  tm.tm_min = minute;
  tm.tm_sec = second;
  return timegm(&tm);
}

// Parses an HTTP date "Sun, 06 Nov 1994 08:49:37 GMT" (what a `Date` header carries).
std::optional<std::time_t> parse_http_date(string_view s) {
  std::string text(s);
  std::tm tm{};
  const char* end = strptime(text.c_str(), "%a, %d %b %Y %H:%M:%S GMT", &tm);
  if (end == nullptr || *end != '\0') return std::nullopt;
  return timegm(&tm);
}

std::string format_iso_basic(std::time_t t) {
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d%02d%02dT%02d%02d%02dZ", tm.tm_year + 1900, tm.tm_mon + 1,
                tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
  return buf;
}

// What the request says about its signature, from the Authorization header or, for a
// presigned URL, from the query string.
struct Signed {
  bool presigned = false;
  std::string algorithm;
  std::string credential;
  std::string signed_headers;
  std::string signature;
  std::string date;                     // as sent
  std::string amz_date;                 // the same instant in ISO-8601 basic format
  std::optional<std::int64_t> expires;  // presigned X-Amz-Expires, seconds
  std::time_t time = 0;
};

// DynamoDB splits the header after the algorithm at commas and spaces into key=value
// pairs; a key without a value counts as absent.
void parse_authorization(string_view header, Signed& out) {
  // find_first_of(", ") would call memchr once per character of the header.
  const auto find_separator = [](string_view text) -> std::size_t {
    const auto at =
        std::find_if(text.begin(), text.end(), [](char c) { return c == ',' || c == ' '; });
    return at == text.end() ? string_view::npos : static_cast<std::size_t>(at - text.begin());
  };
  auto first = find_separator(header);
  out.algorithm.assign(header.substr(0, first));
  if (first == string_view::npos) return;
  string_view rest = header.substr(first);
  while (!rest.empty()) {
    auto sep = find_separator(rest);
    string_view token = rest.substr(0, sep);
    rest = sep == string_view::npos ? string_view{} : rest.substr(sep + 1);
    auto eq = token.find('=');
    if (eq == string_view::npos) continue;
    string_view key = token.substr(0, eq), value = token.substr(eq + 1);
    if (key == "Credential")
      out.credential.assign(value);
    else if (key == "SignedHeaders")
      out.signed_headers.assign(value);
    else if (key == "Signature")
      out.signature.assign(value);
  }
}

// Splits `s` at '/' into exactly five parts, or returns false.
bool split_credential(string_view s, std::array<string_view, 5>& parts) {
  std::size_t n = 0;
  while (true) {
    auto slash = s.find('/');
    if (n == 5) return false;
    parts[n++] = s.substr(0, slash);
    if (slash == string_view::npos) break;
    s.remove_prefix(slash + 1);
  }
  return n == 5;
}

bool is_hex64(string_view s) {
  if (s.size() != 64) return false;
  for (char c : s)
    if (hex_value(c) < 0) return false;
  return true;
}

// The seconds of an X-Amz-Expires value: whole seconds, from 0 to a week; anything else is
// refused as AWS refuses it.
std::int64_t parse_expires(string_view text) {
  std::int64_t seconds = 0;
  const char* const end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, seconds);
  const bool number = !text.empty() && stop == end &&
                      (error == std::errc() || error == std::errc::result_out_of_range);
  if (!number) throw ApiError::incomplete_signature("X-Amz-Expires should be a number");
  if (text.front() == '-')
    throw ApiError::incomplete_signature("X-Amz-Expires must be non-negative");
  if (error != std::errc() || seconds > kMaxExpires)
    throw ApiError::incomplete_signature(
        "X-Amz-Expires must be less than a week (in seconds) that is 604800");
  return seconds;
}

}  // namespace

std::optional<std::string_view> find_header(std::span<const Header> headers,
                                            std::string_view name) {
  for (const auto& h : headers)
    if (iequals(h.name, name)) return h.value;
  return std::nullopt;
}

Credentials parse_credentials(std::string_view text) {
  Credentials credentials;
  std::size_t line_no = 0;
  while (!text.empty()) {
    auto nl = text.find('\n');
    string_view line = text.substr(0, nl);
    text = nl == string_view::npos ? string_view{} : text.substr(nl + 1);
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    line = trim_ows(line);
    if (line.empty() || line.front() == '#') continue;
    auto gap = line.find_first_of(" \t");
    string_view key = line.substr(0, gap);
    string_view secret = gap == string_view::npos ? string_view{} : trim_ows(line.substr(gap));
    if (secret.empty() || secret.find_first_of(" \t") != string_view::npos)
      throw std::invalid_argument("credentials line " + std::to_string(line_no) +
                                  ": expected ACCESS_KEY_ID SECRET");
    credentials.insert_or_assign(std::string(key), std::string(secret));
  }
  return credentials;
}

Credentials load_credentials_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read credentials file " + path);
  std::ostringstream text;
  text << in.rdbuf();
  return parse_credentials(text.str());
}

void SigV4Verifier::verify(const RequestView& request,
                           std::chrono::system_clock::time_point now) const {
  const auto authorization = find_header(request.headers, "authorization");
  const auto params = query_params(request.target);
  const QueryParam* algorithm_param = find_param(params, "X-Amz-Algorithm");

  if (authorization && algorithm_param)
    throw ApiError::invalid_signature(
        "Found both 'X-Amz-Algorithm' as a query-string param and 'Authorization' as HTTP "
        "header.");
  if (!algorithm_param && (!authorization || !authorization->starts_with("AWS4-")))
    throw ApiError::missing_authentication_token();

  Signed s;
  std::string missing;
  if (authorization) {
    parse_authorization(*authorization, s);
    if (s.credential.empty()) missing += "Authorization header requires 'Credential' parameter. ";
    if (s.signature.empty()) missing += "Authorization header requires 'Signature' parameter. ";
    if (s.signed_headers.empty())
      missing += "Authorization header requires 'SignedHeaders' parameter. ";
    auto date = find_header(request.headers, "x-amz-date");
    if (!date) date = find_header(request.headers, "date");
    if (date)
      s.date.assign(*date);
    else
      missing +=
          "Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' "
          "header. ";
    if (!missing.empty()) {
      missing += "Authorization=";
      missing += *authorization;
      throw ApiError::incomplete_signature(std::move(missing));
    }
  } else {
    s.presigned = true;
    static constexpr std::array<string_view, 5> kRequired = {"X-Amz-Algorithm", "X-Amz-Credential",
                                                             "X-Amz-Signature",
                                                             "X-Amz-SignedHeaders", "X-Amz-Date"};
    std::array<std::string*, 5> slots = {&s.algorithm, &s.credential, &s.signature,
                                         &s.signed_headers, &s.date};
    for (std::size_t i = 0; i < kRequired.size(); ++i) {
      const QueryParam* p = find_param(params, kRequired[i]);
      if (p == nullptr || p->value.empty()) {
        missing += "AWS query-string parameters must include '";
        missing += kRequired[i];
        missing += "'. ";
      } else {
        *slots[i] = p->value;
      }
    }
    if (!missing.empty()) {
      missing += "Re-examine the query-string parameters.";
      throw ApiError::incomplete_signature(std::move(missing));
    }
    if (const QueryParam* p = find_param(params, "X-Amz-Expires"))
      s.expires = parse_expires(p->value);
  }

  // The request time: ISO-8601 basic (X-Amz-Date, or Date in that form); an HTTP date in
  // a Date header is accepted too, as it is what HTTP clients put there.
  auto time = parse_iso_basic(s.date);
  if (time) {
    s.amz_date = s.date;
  } else if (!s.presigned && !find_header(request.headers, "x-amz-date") &&
             (time = parse_http_date(s.date))) {
    s.amz_date = format_iso_basic(*time);
  } else {
    throw ApiError::incomplete_signature("Date must be in ISO-8601 'basic format'. Got '" + s.date +
                                         "'. See http://en.wikipedia.org/wiki/ISO_8601");
  }
  s.time = *time;

  if (checks_signatures()) {
    const std::time_t now_t = std::chrono::system_clock::to_time_t(now);
    const std::int64_t skew = std::chrono::seconds(kMaxSkew).count();
    // A presigned URL with X-Amz-Expires is valid from its date for that many seconds;
    // any other signature for 15 minutes either side of its date.
    const std::int64_t window = s.expires.value_or(skew);
    if (s.time < now_t - window)
      throw ApiError::invalid_signature("Signature expired: " + s.amz_date +
                                        " is now earlier than " + format_iso_basic(now_t - window) +
                                        " (" + format_iso_basic(now_t) + " - " +
                                        std::to_string(window / 60) + " min.)");
    if (s.time > now_t + skew)
      throw ApiError::invalid_signature("Signature not yet current: " + s.amz_date +
                                        " is still later than " + format_iso_basic(now_t + skew) +
                                        " (" + format_iso_basic(now_t) + " + 15 min.)");
    bool host_signed = false;
    for (string_view list = s.signed_headers; !list.empty();) {
      auto semi = list.find(';');
      if (iequals(list.substr(0, semi), "host")) host_signed = true;
      list = semi == string_view::npos ? string_view{} : list.substr(semi + 1);
    }
    if (!host_signed)
      throw ApiError::invalid_signature(
          "'Host' must be a 'SignedHeader' in the AWS Authorization.");
  }

  if (s.algorithm != kAlgorithm)
    throw ApiError::incomplete_signature("Unsupported AWS 'algorithm': '" + s.algorithm +
                                         "' (only AWS4-HMAC-SHA256 for now). ");

  std::array<string_view, 5> scope;
  if (!split_credential(s.credential, scope))
    throw ApiError::incomplete_signature(
        "Credential must have exactly 5 slash-delimited elements, e.g. "
        "keyid/date/region/service/term, got '" +
        s.credential + "'");

  if (!checks_signatures()) return;

  std::string wrong_scope;
  if (scope[3] != kService)
    wrong_scope += "Credential should be scoped to correct service: 'dynamodb'. ";
  if (scope[4] != kTerminator)
    wrong_scope += "Credential should be scoped with a valid terminator: 'aws4_request', not '" +
                   std::string(scope[4]) + "'. ";
  if (!wrong_scope.empty()) throw ApiError::invalid_signature(std::move(wrong_scope));

  auto secret = credentials_->find(scope[0]);
  if (secret == credentials_->end()) throw ApiError::unrecognized_client();

  static constexpr string_view kMismatch =
      "The request signature we calculated does not match the signature you provided. Check "
      "your AWS Secret Access Key and signing method. Consult the service documentation for "
      "details.";
  std::string payload_hash = sigv4::sha256_hex(request.body);
  if (auto declared = find_header(request.headers, "x-amz-content-sha256")) {
    // A declared body hash is what the client signed; when it is a real hash it must also
    // be the hash of the body that arrived.
    if (is_hex64(*declared)) {
      if (!iequals(*declared, payload_hash))
        throw ApiError::invalid_signature(std::string(kMismatch));
    } else {
      payload_hash.assign(*declared);
    }
  }
  const std::string canonical = sigv4::canonical_request(request, s.signed_headers, payload_hash);
  const std::string scope_text(s.credential.substr(scope[0].size() + 1));
  const std::string to_sign = sigv4::string_to_sign(s.amz_date, scope_text, canonical);
  const std::string expected =
      sigv4::signature(secret->second, scope[1], scope[2], scope[3], to_sign);
  if (expected.size() != s.signature.size() ||
      CRYPTO_memcmp(expected.data(), s.signature.data(), expected.size()) != 0)
    throw ApiError::invalid_signature(std::string(kMismatch));
}

void RequestAuthenticator::authenticate() const {
  verifier_.verify(request_, std::chrono::system_clock::now());
}

namespace sigv4 {

std::string sha256_hex(std::string_view data) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(data.data()), data.size(), digest);
  std::string out;
  out.reserve(64);
  append_hex(out, digest, sizeof digest);
  return out;
}

std::string canonical_request(const RequestView& request, std::string_view signed_headers,
                              std::string_view payload_hash) {
  std::string out;
  out.reserve(256 + request.target.size());
  out.append(request.method);
  out.push_back('\n');

  // Canonical URI: the path, URI-encoded once more (SigV4 double-encodes for every service
  // but S3); an empty path is "/".
  const auto q = request.target.find('?');
  const string_view path = request.target.substr(0, q);
  if (path.empty())
    out.push_back('/');
  else
    append_uri_encoded(out, path, /*keep_slash=*/true);
  out.push_back('\n');

  // Canonical query string: encoded pairs sorted by name then value, without the
  // signature itself.
  auto params = query_params(request.target);
  std::erase_if(params, [](const QueryParam& p) { return p.name == "X-Amz-Signature"; });
  std::vector<std::pair<std::string, std::string>> encoded;
  encoded.reserve(params.size());
  for (const auto& p : params) {
    std::pair<std::string, std::string> e;
    append_uri_encoded(e.first, p.name, false);
    append_uri_encoded(e.second, p.value, false);
    encoded.push_back(std::move(e));
  }
  std::sort(encoded.begin(), encoded.end());
  for (std::size_t i = 0; i < encoded.size(); ++i) {
    if (i) out.push_back('&');
    out.append(encoded[i].first);
    out.push_back('=');
    out.append(encoded[i].second);
  }
  out.push_back('\n');

  // Canonical headers: "name:value\n" per signed header; values trimmed with inner runs of
  // spaces collapsed, repeated headers joined with ','.
  for (string_view list = signed_headers; !list.empty();) {
    auto semi = list.find(';');
    const string_view name = list.substr(0, semi);
    list = semi == string_view::npos ? string_view{} : list.substr(semi + 1);
    for (char c : name) out.push_back(ascii_lower(c));
    out.push_back(':');
    bool first_value = true;
    for (const auto& h : request.headers) {
      if (!iequals(h.name, name)) continue;
      if (!first_value) out.push_back(',');
      first_value = false;
      bool pending_space = false;
      for (char c : trim_ows(h.value)) {
        if (is_ows(c)) {
          pending_space = true;
          continue;
        }
        if (pending_space) out.push_back(' ');
        pending_space = false;
        out.push_back(c);
      }
    }
    out.push_back('\n');
  }
  out.push_back('\n');
  out.append(signed_headers);
  out.push_back('\n');
  out.append(payload_hash);
  return out;
}

std::string string_to_sign(std::string_view amz_date, std::string_view scope,
                           std::string_view canonical_request) {
  std::string out;
  out.reserve(kAlgorithm.size() + amz_date.size() + scope.size() + 68);
  out.append(kAlgorithm);
  out.push_back('\n');
  out.append(amz_date);
  out.push_back('\n');
  out.append(scope);
  out.push_back('\n');
  out.append(sha256_hex(canonical_request));
  return out;
}

std::string signature(std::string_view secret, std::string_view date, std::string_view region,
                      std::string_view service, std::string_view string_to_sign) {
  const Digest key = signing_key(secret, date, region, service);
  const Digest sig = hmac(key, string_to_sign);
  std::string out;
  out.reserve(64);
  append_hex(out, sig.data(), sig.size());
  return out;
}

}  // namespace sigv4
}  // namespace kumo::net
