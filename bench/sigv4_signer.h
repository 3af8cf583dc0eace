// Client-side AWS Signature Version 4 for DynamoDB's JSON protocol, computed the way the
// AWS SDKs do: one signature per request, over the body's SHA-256, with the derived
// signing key cached for the day. The load generator signs every request itself so that
// the server under test pays its real verification cost and the client pays an SDK's.
//
// It is independent of the server's own SigV4 code on purpose: a benchmark that linked
// the server's signer would not notice if both sides drifted from AWS's rules together.
#pragma once

#include <openssl/evp.h>

#include <chrono>
#include <ctime>
#include <memory>
#include <string>
#include <string_view>

namespace kumo::bench {

struct SigV4Credentials {
  std::string access_key = "bench";
  std::string secret_key = "bench";
  std::string region = "us-east-1";
  std::string service = "dynamodb";
};

// Signs POST / requests carrying X-Amz-Target. Holds OpenSSL contexts that are reused
// across calls, so one signer serves one thread.
class SigV4Signer {
 public:
  explicit SigV4Signer(SigV4Credentials credentials);
  ~SigV4Signer();
  SigV4Signer(const SigV4Signer&) = delete;
  SigV4Signer& operator=(const SigV4Signer&) = delete;

  // The headers the signature covers, in the order the canonical request lists them.
  static constexpr std::string_view kSignedHeaders = "content-type;host;x-amz-date;x-amz-target";
  static constexpr std::string_view kContentType = "application/x-amz-json-1.0";

  // Computes the signature for a request to `host` (the Host header, "addr:port") with
  // X-Amz-Target `target` and `body`, timestamped `now`. Afterwards amz_date() is the
  // X-Amz-Date value to send and authorization() the Authorization value; both stay
  // valid until the next call.
  void sign(std::string_view host, std::string_view target, std::string_view body,
            std::chrono::system_clock::time_point now);

  std::string_view amz_date() const { return {amz_date_, 16}; }
  std::string_view authorization() const { return authorization_; }

 private:
  // Updates the date strings and, on a new day, the signing key.
  void set_time(std::time_t seconds);
  void sha256_hex(std::string_view data, char* out64);

  SigV4Credentials credentials_;
  EVP_MD* sha256_ = nullptr;
  EVP_MD_CTX* digest_ = nullptr;
  EVP_MAC* hmac_ = nullptr;
  EVP_MAC_CTX* signing_ = nullptr;  // keyed with the day's signing key
  std::time_t second_ = -1;
  std::string day_;         // YYYYMMDD of the key in signing_
  char amz_date_[17] = {};  // YYYYMMDDTHHMMSSZ
  std::string scope_;
  std::string canonical_;
  std::string to_sign_;
  std::string authorization_;
};

}  // namespace kumo::bench
