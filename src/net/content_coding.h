// HTTP content codings: request bodies a client sent compressed (Content-Encoding) and
// responses compressed for a client that asks for it (Accept-Encoding). DynamoDB decodes
// gzip (one member or several) and deflate (the zlib format) bodies, and compresses answers
// of 4,096 bytes and more with gzip or deflate when the client accepts one of them.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace kumo::net {

enum class Coding { kIdentity, kGzip, kDeflate };

// Responses smaller than this are sent as they are, whatever the client accepts.
inline constexpr std::size_t kCompressThreshold = 4096;

enum class DecodeResult {
  kOk,        // `out` holds the decoded body
  kInvalid,   // an unknown coding, or bytes that do not decode to the end (truncated, empty)
  kTooLarge,  // the decoded body would exceed the limit; decoding stopped there
};

// Decodes `body`, sent with the Content-Encoding value `content_encoding` (codings listed
// in the order they were applied; "identity" is no coding), into `out`. Never holds more
// than `limit` + 1 decoded bytes, however much the body would inflate to.
DecodeResult decode_body(std::string_view content_encoding, std::string_view body,
                         std::size_t limit, std::string& out);

// The coding to answer with for the Accept-Encoding value `accept_encoding`, parsed as HTTP
// does: tokens are case-insensitive and "*" stands for gzip unless gzip is named itself; the
// highest q-value wins and q=0 excludes; at equal q-values a named coding beats "*", then
// the one listed first wins. identity, and codings Kumo does not produce (br, zstd, ...),
// give kIdentity.
Coding negotiate_coding(std::string_view accept_encoding);

// The Content-Encoding value for `coding` ("gzip" or "deflate").
std::string_view coding_name(Coding coding);

// Compresses `body` with `coding` (kGzip or kDeflate) into `out`.
void compress_body(Coding coding, std::string_view body, std::string& out);

}  // namespace kumo::net
