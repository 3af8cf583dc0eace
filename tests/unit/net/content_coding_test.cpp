#include "net/content_coding.h"

#include <gtest/gtest.h>

#include <string>

namespace kumo::net {
namespace {

constexpr std::size_t kLimit = 16u << 20;

std::string compressed(Coding coding, std::string_view body) {
  std::string out;
  compress_body(coding, body, out);
  return out;
}

DecodeResult decode(std::string_view encoding, std::string_view body, std::string& out,
                    std::size_t limit = kLimit) {
  return decode_body(encoding, body, limit, out);
}

TEST(ContentCoding, GzipAndDeflateRoundTrip) {
  const std::string body = R"({"TableName":"t","Item":{"p":{"S":"x"}}})";
  for (const Coding coding : {Coding::kGzip, Coding::kDeflate}) {
    std::string out;
    ASSERT_EQ(decode(coding_name(coding), compressed(coding, body), out), DecodeResult::kOk);
    EXPECT_EQ(out, body);
  }
  // Tokens are case-insensitive; x-gzip is gzip.
  std::string out;
  EXPECT_EQ(decode(" GZip ", compressed(Coding::kGzip, body), out), DecodeResult::kOk);
  EXPECT_EQ(decode("x-gzip", compressed(Coding::kGzip, body), out), DecodeResult::kOk);
  EXPECT_EQ(out, body);
}

TEST(ContentCoding, GzipMembersFollowOneAnother) {
  std::string out;
  const std::string members =
      compressed(Coding::kGzip, R"({"TableName":)") + compressed(Coding::kGzip, R"("t"})");
  ASSERT_EQ(decode("gzip", members, out), DecodeResult::kOk);
  EXPECT_EQ(out, R"({"TableName":"t"})");
  // A zlib stream has nothing after its end.
  const std::string twice = compressed(Coding::kDeflate, "{}") + compressed(Coding::kDeflate, "");
  EXPECT_EQ(decode("deflate", twice, out), DecodeResult::kInvalid);
}

TEST(ContentCoding, SeveralCodingsAreUndoneLastFirst) {
  const std::string body = R"({"a":1})";
  std::string out;
  const std::string twice = compressed(Coding::kGzip, compressed(Coding::kDeflate, body));
  ASSERT_EQ(decode("deflate, gzip", twice, out), DecodeResult::kOk);
  EXPECT_EQ(out, body);
  EXPECT_EQ(decode("gzip, deflate", twice, out), DecodeResult::kInvalid);
  ASSERT_EQ(decode("identity", body, out), DecodeResult::kOk);
  EXPECT_EQ(out, body);
}

TEST(ContentCoding, BodiesThatDoNotDecodeAreInvalid) {
  const std::string gzip = compressed(Coding::kGzip, std::string(1000, 'x'));
  std::string out;
  EXPECT_EQ(decode("br", gzip, out), DecodeResult::kInvalid);
  EXPECT_EQ(decode("gzip, zstd", gzip, out), DecodeResult::kInvalid);
  EXPECT_EQ(decode("gzip", "", out), DecodeResult::kInvalid);
  EXPECT_EQ(decode("deflate", "", out), DecodeResult::kInvalid);
  EXPECT_EQ(decode("gzip", "{}", out), DecodeResult::kInvalid);
  EXPECT_EQ(decode("gzip", gzip.substr(0, gzip.size() - 4), out), DecodeResult::kInvalid);
  EXPECT_EQ(decode("gzip", gzip + "x", out), DecodeResult::kInvalid);
  // A deflate body in the gzip wrapper, and the other way round.
  EXPECT_EQ(decode("deflate", gzip, out), DecodeResult::kInvalid);
  EXPECT_EQ(decode("gzip", compressed(Coding::kDeflate, "{}"), out), DecodeResult::kInvalid);
  std::string corrupt = gzip;
  corrupt[corrupt.size() - 6] ^= 0x55;  // the CRC
  EXPECT_EQ(decode("gzip", corrupt, out), DecodeResult::kInvalid);
}

TEST(ContentCoding, InflatingStopsPastTheLimit) {
  constexpr std::size_t kSmallLimit = 1u << 20;
  const std::string zeros(4 * kSmallLimit, '\0');
  std::string out;
  for (const Coding coding : {Coding::kGzip, Coding::kDeflate}) {
    const std::string bomb = compressed(coding, zeros);
    ASSERT_LT(bomb.size(), 64u << 10);
    EXPECT_EQ(decode(coding_name(coding), bomb, out, kSmallLimit), DecodeResult::kTooLarge);
    EXPECT_LE(out.size(), kSmallLimit + 1);
  }
  const std::string at_limit = compressed(Coding::kGzip, std::string(1000, 'a'));
  EXPECT_EQ(decode("gzip", at_limit, out, 1000), DecodeResult::kOk);
  EXPECT_EQ(decode("gzip", at_limit, out, 999), DecodeResult::kTooLarge);
}

TEST(ContentCoding, NegotiatesTheAcceptedCoding) {
  struct Case {
    std::string_view accept;
    Coding expected;
  };
  const Case cases[] = {
      {"", Coding::kIdentity},
      {"gzip", Coding::kGzip},
      {"GZIP", Coding::kGzip},
      {"x-gzip", Coding::kGzip},
      {"deflate", Coding::kDeflate},
      {"gzip, deflate", Coding::kGzip},
      {"deflate, gzip", Coding::kDeflate},
      {"deflate;q=0.5, gzip;q=0.8", Coding::kGzip},
      {"gzip;q=0.5,deflate", Coding::kDeflate},
      {"gzip ; Q=0.9 , deflate;q=0.95", Coding::kDeflate},
      {"gzip;q=0", Coding::kIdentity},
      {"gzip;q=0.000", Coding::kIdentity},
      {"gzip;q=0.001", Coding::kGzip},
      {"gzip;q=1.000", Coding::kGzip},
      {"*", Coding::kGzip},
      {"*;q=0", Coding::kIdentity},
      {"gzip;q=0, *", Coding::kIdentity},
      {"deflate;q=0.5, *", Coding::kGzip},
      {"*, deflate", Coding::kDeflate},
      {"*;q=0.5, deflate;q=0.5", Coding::kDeflate},
      {"identity", Coding::kIdentity},
      {"identity, gzip", Coding::kIdentity},
      {"gzip, identity", Coding::kGzip},
      {"identity;q=0.5, gzip", Coding::kGzip},
      {"br", Coding::kIdentity},
      {"zstd", Coding::kIdentity},
      {"br, zstd, compress", Coding::kIdentity},
      {"br, gzip;q=0.5", Coding::kGzip},
      {"gzipx", Coding::kIdentity},
      {"gzip;q=2", Coding::kIdentity},
      {"gzip;q=0.5000", Coding::kIdentity},
      {"gzip;q=abc, deflate;q=0.1", Coding::kDeflate},
      {"gzip;q=0, gzip", Coding::kIdentity},
      {",, gzip ,", Coding::kGzip},
      {"gzip;level=9", Coding::kGzip},
  };
  for (const auto& c : cases) EXPECT_EQ(negotiate_coding(c.accept), c.expected) << c.accept;
}

}  // namespace
}  // namespace kumo::net
