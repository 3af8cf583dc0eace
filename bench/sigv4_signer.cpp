#include "sigv4_signer.h"

#include <openssl/core_names.h>
#include <openssl/params.h>

#include <array>
#include <stdexcept>

namespace kumo::bench {
namespace {

constexpr char kHex[] = "0123456789abcdef";

void to_hex(const unsigned char* data, std::size_t size, char* out) {
  for (std::size_t i = 0; i < size; ++i) {
    out[2 * i] = kHex[data[i] >> 4];
    out[2 * i + 1] = kHex[data[i] & 0xf];
  }
}

void check(int ok, const char* what) {
  if (ok != 1) throw std::runtime_error(std::string("OpenSSL: ") + what + " failed");
}

// HMAC-SHA256 of `data` under `key`, for the once-a-day key derivation.
std::array<unsigned char, 32> hmac(std::string_view key, std::string_view data) {
  std::array<unsigned char, 32> out{};
  std::size_t size = 0;
  if (EVP_Q_mac(nullptr, "HMAC", nullptr, "SHA256", nullptr, key.data(), key.size(),
                reinterpret_cast<const unsigned char*>(data.data()), data.size(), out.data(),
                out.size(), &size) == nullptr) {
    throw std::runtime_error("OpenSSL: HMAC-SHA256 failed");
  }
  return out;
}

std::string_view as_view(const std::array<unsigned char, 32>& bytes) {
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

}  // namespace

SigV4Signer::SigV4Signer(SigV4Credentials credentials) : credentials_(std::move(credentials)) {
  // Fetching the algorithms once avoids OpenSSL 3's per-call lookup, which would cost
  // more than the hashing itself for bodies of a few hundred bytes.
  sha256_ = EVP_MD_fetch(nullptr, "SHA256", nullptr);
  digest_ = EVP_MD_CTX_new();
  hmac_ = EVP_MAC_fetch(nullptr, "HMAC", nullptr);
  if (sha256_ == nullptr || digest_ == nullptr || hmac_ == nullptr) {
    throw std::runtime_error("OpenSSL: SHA-256 or HMAC unavailable");
  }
  signing_ = EVP_MAC_CTX_new(hmac_);
  if (signing_ == nullptr) throw std::runtime_error("OpenSSL: EVP_MAC_CTX_new failed");
}

SigV4Signer::~SigV4Signer() {
  EVP_MAC_CTX_free(signing_);
  EVP_MAC_free(hmac_);
  EVP_MD_CTX_free(digest_);
  EVP_MD_free(sha256_);
}

void SigV4Signer::sha256_hex(std::string_view data, char* out64) {
  unsigned char hash[32];
  unsigned int size = 0;
  check(EVP_DigestInit_ex2(digest_, sha256_, nullptr), "SHA-256 init");
  check(EVP_DigestUpdate(digest_, data.data(), data.size()), "SHA-256 update");
  check(EVP_DigestFinal_ex(digest_, hash, &size), "SHA-256 final");
  to_hex(hash, sizeof hash, out64);
}

void SigV4Signer::set_time(std::time_t seconds) {
  if (seconds == second_) return;
  second_ = seconds;
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  std::strftime(amz_date_, sizeof amz_date_, "%Y%m%dT%H%M%SZ", &utc);
  const std::string_view day(amz_date_, 8);
  if (day == day_) return;

  // The signing key depends only on the secret, the day, the region and the service, so
  // SDKs derive it once a day and reuse it; so does this signer.
  day_ = day;
  const auto k_date = hmac("AWS4" + credentials_.secret_key, day_);
  const auto k_region = hmac(as_view(k_date), credentials_.region);
  const auto k_service = hmac(as_view(k_region), credentials_.service);
  const auto k_signing = hmac(as_view(k_service), "aws4_request");
  char digest_name[] = "SHA256";
  const OSSL_PARAM params[] = {
      OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest_name, 0),
      OSSL_PARAM_construct_end()};
  check(EVP_MAC_init(signing_, k_signing.data(), k_signing.size(), params), "HMAC init");
  scope_ = day_ + "/" + credentials_.region + "/" + credentials_.service + "/aws4_request";
}

void SigV4Signer::sign(std::string_view host, std::string_view target, std::string_view body,
                       std::chrono::system_clock::time_point now) {
  set_time(std::chrono::system_clock::to_time_t(now));
  const std::string_view date(amz_date_, 16);

  // Canonical request: method, URI, empty query, the signed headers (names lower case,
  // sorted), a blank line ending them, the signed header list, the body's hash.
  char hash[64];
  sha256_hex(body, hash);
  canonical_.clear();
  canonical_.append("POST\n/\n\ncontent-type:").append(kContentType);
  canonical_.append("\nhost:").append(host);
  canonical_.append("\nx-amz-date:").append(date);
  canonical_.append("\nx-amz-target:").append(target);
  canonical_.append("\n\n").append(kSignedHeaders).append("\n").append(hash, sizeof hash);

  sha256_hex(canonical_, hash);
  to_sign_.clear();
  to_sign_.append("AWS4-HMAC-SHA256\n").append(date).append("\n").append(scope_);
  to_sign_.append("\n").append(hash, sizeof hash);

  // Re-initialising with no key keeps the day's signing key.
  unsigned char mac[32];
  std::size_t mac_size = 0;
  check(EVP_MAC_init(signing_, nullptr, 0, nullptr), "HMAC reinit");
  check(EVP_MAC_update(signing_, reinterpret_cast<const unsigned char*>(to_sign_.data()),
                       to_sign_.size()),
        "HMAC update");
  check(EVP_MAC_final(signing_, mac, &mac_size, sizeof mac), "HMAC final");
  char signature[64];
  to_hex(mac, sizeof mac, signature);

  authorization_.clear();
  authorization_.append("AWS4-HMAC-SHA256 Credential=").append(credentials_.access_key);
  authorization_.append("/").append(scope_);
  authorization_.append(", SignedHeaders=").append(kSignedHeaders);
  authorization_.append(", Signature=").append(signature, sizeof signature);
}

}  // namespace kumo::bench
