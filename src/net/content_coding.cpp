#include "net/content_coding.h"

#include <libdeflate.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <new>
#include <optional>
#include <utility>

#include "net/http_text.h"

namespace kumo::net {
namespace {

// More codings than this on one body are refused as unknown.
constexpr std::size_t kMaxCodings = 4;
// zlib's window: 2^15 bytes, the most DEFLATE allows. Adding 16 reads the gzip wrapper
// instead of the zlib one.
constexpr int kZlibWindowBits = 15;
constexpr int kGzipWindowBits = 15 + 16;
// The first output buffer for an inflated body, as a multiple of the compressed size.
constexpr std::size_t kFirstInflateRatio = 4;
constexpr std::size_t kMinInflateBuffer = 16u << 10;
// libdeflate's fastest level: answers are compressed on the I/O thread, before the write.
constexpr int kCompressionLevel = 1;

// The coding named by `token`: gzip (also spelled x-gzip), deflate or identity (no coding
// at all); nullopt for any other (br, zstd, compress, ...), which Kumo neither reads nor
// writes.
std::optional<Coding> named_coding(std::string_view token) {
  if (iequals(token, "gzip") || iequals(token, "x-gzip")) return Coding::kGzip;
  if (iequals(token, "deflate")) return Coding::kDeflate;
  if (iequals(token, "identity")) return Coding::kIdentity;
  return std::nullopt;
}

// Calls `f` with each element of a comma-separated header value, trimmed; empty elements
// are skipped.
template <typename F>
void for_each_element(std::string_view list, F&& f) {
  while (!list.empty()) {
    const std::size_t comma = list.find(',');
    const std::string_view element = trim_ows(list.substr(0, comma));
    if (!element.empty()) f(element);
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
}

struct InflateStream {
  z_stream z{};
  explicit InflateStream(int window_bits) {
    if (inflateInit2(&z, window_bits) != Z_OK) throw std::bad_alloc();
  }
  ~InflateStream() { inflateEnd(&z); }
  InflateStream(const InflateStream&) = delete;
  InflateStream& operator=(const InflateStream&) = delete;
};

// Inflates `in` (one zlib stream, or gzip members one after another) into `out`, stopping
// as soon as more than `limit` bytes have come out.
DecodeResult inflate_body(Coding coding, std::string_view in, std::size_t limit, std::string& out) {
  const bool gzip = coding == Coding::kGzip;
  InflateStream stream(gzip ? kGzipWindowBits : kZlibWindowBits);
  z_stream& z = stream.z;
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  out.clear();
  std::size_t size = 0;
  for (;;) {
    if (size == out.size()) {
      const std::size_t wanted =
          std::max({out.size() * 2, in.size() * kFirstInflateRatio, kMinInflateBuffer});
      out.resize(std::min(wanted, limit + 1));
    }
    z.next_out = reinterpret_cast<Bytef*>(out.data() + size);
    z.avail_out = static_cast<uInt>(out.size() - size);
    const int rc = inflate(&z, Z_NO_FLUSH);
    size = out.size() - z.avail_out;
    if (size > limit) return DecodeResult::kTooLarge;
    if (rc == Z_MEM_ERROR) throw std::bad_alloc();
    if (rc == Z_STREAM_END) {
      if (z.avail_in == 0) break;
      // Another gzip member follows; a zlib stream has nothing after its end.
      if (!gzip || inflateReset(&z) != Z_OK) return DecodeResult::kInvalid;
      continue;
    }
    // Z_BUF_ERROR: the input ended before the stream did.
    if (rc != Z_OK) return DecodeResult::kInvalid;
  }
  out.resize(size);
  return DecodeResult::kOk;
}

// A q-value in thousandths: "0", "0.5", "1", "1.000" (at most three decimals, at most 1),
// or nullopt when it is not one.
std::optional<int> parse_qvalue(std::string_view text) {
  if (text.empty() || (text[0] != '0' && text[0] != '1')) return std::nullopt;
  int value = (text[0] - '0') * 1000;
  if (text.size() == 1) return value;
  if (text[1] != '.' || text.size() > 5) return std::nullopt;
  int scale = 100;
  for (const char c : text.substr(2)) {
    if (c < '0' || c > '9') return std::nullopt;
    value += (c - '0') * scale;
    scale /= 10;
  }
  if (value > 1000) return std::nullopt;
  return value;
}

// The weight of one Accept-Encoding element's parameters (";q=0.5"), in thousandths; 1000
// when no q is given, nullopt when the q is malformed.
std::optional<int> element_weight(std::string_view params) {
  int weight = 1000;
  while (!params.empty()) {
    const std::size_t semi = params.find(';');
    const std::string_view param = params.substr(0, semi);
    const std::size_t eq = param.find('=');
    if (eq != std::string_view::npos && iequals(trim_ows(param.substr(0, eq)), "q")) {
      const auto q = parse_qvalue(trim_ows(param.substr(eq + 1)));
      if (!q) return std::nullopt;
      weight = *q;
    }
    if (semi == std::string_view::npos) break;
    params.remove_prefix(semi + 1);
  }
  return weight;
}

// One coding a client named in Accept-Encoding (or "*"): its weight and place in the list.
struct Offer {
  int weight = -1;  // -1: not named
  std::size_t position = 0;
  bool wildcard = false;  // gzip offered through "*"
  bool named() const { return weight >= 0; }
  // The higher weight wins; at equal weight a coding named itself beats "*", then the one
  // named first wins.
  bool beats(const Offer& other) const {
    if (weight != other.weight) return weight > other.weight;
    if (wildcard != other.wildcard) return !wildcard;
    return position < other.position;
  }
};

struct Offers {
  Offer gzip, deflate, identity, any;
};

Offer* offer_for(Offers& offers, std::string_view token) {
  if (token == "*") return &offers.any;
  const auto coding = named_coding(token);
  if (!coding) return nullptr;
  switch (*coding) {
    case Coding::kGzip:
      return &offers.gzip;
    case Coding::kDeflate:
      return &offers.deflate;
    case Coding::kIdentity:
      break;
  }
  return &offers.identity;
}

struct Compressor {
  libdeflate_compressor* compressor = libdeflate_alloc_compressor(kCompressionLevel);
  Compressor() {
    if (compressor == nullptr) throw std::bad_alloc();
  }
  ~Compressor() { libdeflate_free_compressor(compressor); }
  Compressor(const Compressor&) = delete;
  Compressor& operator=(const Compressor&) = delete;
};

}  // namespace

DecodeResult decode_body(std::string_view content_encoding, std::string_view body,
                         std::size_t limit, std::string& out) {
  std::array<Coding, kMaxCodings> codings;
  std::size_t count = 0;
  bool known = true;
  for_each_element(content_encoding, [&](std::string_view token) {
    const auto coding = named_coding(token);
    if (!coding || (*coding != Coding::kIdentity && count == codings.size())) {
      known = false;
    } else if (*coding != Coding::kIdentity) {
      codings[count++] = *coding;
    }
  });
  if (!known) return DecodeResult::kInvalid;
  if (count == 0) {
    out.assign(body);
    return DecodeResult::kOk;
  }
  // The last coding listed was applied last, so it is undone first.
  std::string previous;
  std::string_view in = body;
  for (std::size_t i = count; i-- > 0;) {
    if (in.empty()) return DecodeResult::kInvalid;
    std::string next;
    const DecodeResult result = inflate_body(codings[i], in, limit, i == 0 ? out : next);
    if (result != DecodeResult::kOk) return result;
    previous = std::move(next);
    in = previous;
  }
  return DecodeResult::kOk;
}

Coding negotiate_coding(std::string_view accept_encoding) {
  Offers offers;
  std::size_t position = 0;
  for_each_element(accept_encoding, [&](std::string_view element) {
    const std::size_t semi = element.find(';');
    Offer* offer = offer_for(offers, trim_ows(element.substr(0, semi)));
    const auto weight = element_weight(semi == std::string_view::npos ? std::string_view{}
                                                                      : element.substr(semi + 1));
    ++position;
    // A coding named twice keeps its first weight.
    if (offer == nullptr || !weight || offer->named()) return;
    offer->weight = *weight;
    offer->position = position;
  });
  // "*" stands for gzip unless gzip is named itself.
  Offer gzip = offers.gzip;
  if (!gzip.named()) {
    gzip = offers.any;
    gzip.wildcard = true;
  }
  const std::array<std::pair<Coding, Offer>, 3> candidates = {
      {{Coding::kGzip, gzip},
       {Coding::kDeflate, offers.deflate},
       {Coding::kIdentity, offers.identity}}};
  Coding best = Coding::kIdentity;
  std::optional<Offer> best_offer;
  for (const auto& [coding, offer] : candidates) {
    if (offer.weight <= 0) continue;  // not named, or q=0
    if (!best_offer || offer.beats(*best_offer)) {
      best = coding;
      best_offer = offer;
    }
  }
  return best;
}

std::string_view coding_name(Coding coding) {
  switch (coding) {
    case Coding::kGzip:
      return "gzip";
    case Coding::kDeflate:
      return "deflate";
    case Coding::kIdentity:
      break;
  }
  return "identity";
}

void compress_body(Coding coding, std::string_view body, std::string& out) {
  thread_local Compressor compressor;
  libdeflate_compressor* c = compressor.compressor;
  const bool gzip = coding == Coding::kGzip;
  out.resize(gzip ? libdeflate_gzip_compress_bound(c, body.size())
                  : libdeflate_zlib_compress_bound(c, body.size()));
  const std::size_t size =
      gzip ? libdeflate_gzip_compress(c, body.data(), body.size(), out.data(), out.size())
           : libdeflate_zlib_compress(c, body.data(), body.size(), out.data(), out.size());
  out.resize(size);
}

}  // namespace kumo::net
