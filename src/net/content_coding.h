// HTTP content codings: request bodies a client sent compressed (Content-Encoding).
// DynamoDB decodes gzip (one member or several) and deflate (the zlib format) bodies.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace kumo::net {

enum class Coding { kIdentity, kGzip, kDeflate };

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

// The Content-Encoding value for `coding` ("gzip" or "deflate").
std::string_view coding_name(Coding coding);

// Compresses `body` with `coding` (kGzip or kDeflate) into `out`.
void compress_body(Coding coding, std::string_view body, std::string& out);

}  // namespace kumo::net
