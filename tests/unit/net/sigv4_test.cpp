#include "net/sigv4.h"

#include <gtest/gtest.h>

#include <ctime>
#include <vector>

#include "model/api_error.h"

namespace kumo::net {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::system_clock;

// 2026-01-15T10:15:00Z, the X-Amz-Date of the signed examples below.
Clock::time_point example_time() {
  std::tm tm{};
  tm.tm_year = 2026 - 1900;
  tm.tm_mon = 0;
  tm.tm_mday = 15;
  tm.tm_hour = 10;
  tm.tm_min = 15;
  return Clock::from_time_t(timegm(&tm));
}

constexpr std::string_view kSecret = "kumoSecretKey/123+abc";
constexpr std::string_view kBody = R"({"TableName":"Music"})";
// Signed by botocore 1.43 (SigV4Auth, dynamodb, eu-west-1) and independently with
// Python's hmac/hashlib.
constexpr std::string_view kAuthorization =
    "AWS4-HMAC-SHA256 Credential=AKIDKUMO/20260115/eu-west-1/dynamodb/aws4_request, "
    "SignedHeaders=content-type;host;x-amz-date;x-amz-target, "
    "Signature=6e848b4088518029aa157bbd12ee1f0df38cb7b71979fed3a55029a593abfe9b";

// A DynamoDB request as botocore sends it; tests edit the headers.
struct Request {
  std::string method = "POST";
  std::string target = "/";
  std::vector<std::pair<std::string, std::string>> headers = {
      {"Host", "localhost:8000"},
      {"Content-Type", "application/x-amz-json-1.0"},
      {"X-Amz-Target", "DynamoDB_20120810.DescribeTable"},
      {"X-Amz-Date", "20260115T101500Z"},
      {"Authorization", std::string(kAuthorization)},
  };
  std::string body = std::string(kBody);

  void set(const std::string& name, const std::string& value) {
    for (auto& h : headers)
      if (h.first == name) {
        h.second = value;
        return;
      }
    headers.emplace_back(name, value);
  }
  void remove(const std::string& name) {
    std::erase_if(headers, [&](const auto& h) { return h.first == name; });
  }

  // Views valid until this Request changes.
  RequestView view() {
    views.clear();
    for (const auto& h : headers) views.push_back({h.first, h.second});
    return {method, target, views, body};
  }
  std::vector<Header> views;
};

SigV4Verifier verifying() {
  return SigV4Verifier(Credentials{{"AKIDKUMO", std::string(kSecret)}});
}

// The ApiError `verify` throws (type without namespace, message), or {"", ""} if none.
std::pair<std::string, std::string> outcome(const SigV4Verifier& verifier, Request& request,
                                            Clock::time_point now = example_time()) {
  try {
    verifier.verify(request.view(), now);
    return {"", ""};
  } catch (const ApiError& e) {
    return {e.type().substr(e.type().find('#') + 1), e.message().value_or("")};
  }
}

TEST(SigV4, AwsGetVanillaTestVector) {
  // The "get-vanilla" case of AWS's SigV4 test suite.
  const std::vector<Header> headers = {{"Host", "example.amazonaws.com"},
                                       {"X-Amz-Date", "20150830T123600Z"}};
  const RequestView request{"GET", "/", headers, ""};
  const std::string canonical =
      sigv4::canonical_request(request, "host;x-amz-date", sigv4::sha256_hex(""));
  EXPECT_EQ(canonical,
            "GET\n/\n\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\n"
            "host;x-amz-date\ne3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sigv4::sha256_hex(canonical),
            "bb579772317eb040ac9ed261061d46c1f17a8133879d6129b6e1c25292927e63");
  const std::string to_sign = sigv4::string_to_sign(
      "20150830T123600Z", "20150830/us-east-1/service/aws4_request", canonical);
  EXPECT_EQ(sigv4::signature("wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", "20150830", "us-east-1",
                             "service", to_sign),
            "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31");
}

TEST(SigV4, CanonicalHeadersTrimCollapseAndJoin) {
  const std::vector<Header> headers = {{"Host", "h"},
                                       {"My-Header1", "  a   b   c  "},
                                       {"my-header2", "\"a   b   c\""},
                                       {"My-Header1", "d"}};
  const RequestView request{"POST", "/path%20x?b=2&a=1&a=0", headers, ""};
  EXPECT_EQ(sigv4::canonical_request(request, "host;my-header1;my-header2", "HASH"),
            "POST\n/path%2520x\na=0&a=1&b=2\nhost:h\nmy-header1:a b c,d\n"
            "my-header2:\"a b c\"\n\nhost;my-header1;my-header2\nHASH");
}

TEST(SigV4, VerifiesBotocoreSignature) {
  Request request;
  EXPECT_EQ(outcome(verifying(), request), std::make_pair(std::string(), std::string()));
  // Within the 15-minute window either way.
  EXPECT_EQ(outcome(verifying(), request, example_time() + 14min).first, "");
  EXPECT_EQ(outcome(verifying(), request, example_time() - 14min).first, "");
}

TEST(SigV4, VerifiesPresignedQuery) {
  Request request;
  request.remove("Authorization");
  request.remove("X-Amz-Date");
  request.body = "{}";
  request.target =
      "/?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIDKUMO%2F20260115%2Fus-west-2%2F"
      "dynamodb%2Faws4_request&X-Amz-Date=20260115T101500Z&X-Amz-Expires=3600&"
      "X-Amz-SignedHeaders=host&X-Amz-Signature="
      "5910eae134463cb5a9a7de105bb6557703073d276649487081790e8a7bc04837";
  EXPECT_EQ(outcome(verifying(), request).first, "");
  EXPECT_EQ(outcome(verifying(), request, example_time() + 50min).first, "");
  EXPECT_EQ(outcome(verifying(), request, example_time() + 61min).first,
            "InvalidSignatureException");
  request.body = "{ }";
  EXPECT_EQ(outcome(verifying(), request).first, "InvalidSignatureException");
}

constexpr std::string_view kMismatch =
    "The request signature we calculated does not match the signature you provided. Check "
    "your AWS Secret Access Key and signing method. Consult the service documentation for "
    "details.";

TEST(SigV4, SignatureMismatch) {
  Request request;
  request.body = R"({"TableName":"Musik"})";
  EXPECT_EQ(outcome(verifying(), request),
            std::make_pair(std::string("InvalidSignatureException"), std::string(kMismatch)));

  Request other_target;
  other_target.set("X-Amz-Target", "DynamoDB_20120810.DeleteTable");
  EXPECT_EQ(outcome(verifying(), other_target).first, "InvalidSignatureException");

  Request wrong_secret;
  EXPECT_EQ(outcome(SigV4Verifier(Credentials{{"AKIDKUMO", "other"}}), wrong_secret).first,
            "InvalidSignatureException");

  // A declared body hash must be the hash of the body received.
  Request declared;
  declared.set("x-amz-content-sha256", std::string(64, 'a'));
  EXPECT_EQ(outcome(verifying(), declared).second, kMismatch);
}

TEST(SigV4, UnknownAccessKey) {
  Request request;
  const SigV4Verifier verifier(Credentials{{"SOMEONEELSE", "x"}});
  EXPECT_EQ(outcome(verifier, request),
            std::make_pair(std::string("UnrecognizedClientException"),
                           std::string("The security token included in the request is invalid.")));
}

TEST(SigV4, ClockSkew) {
  Request request;
  EXPECT_EQ(outcome(verifying(), request, example_time() + 16min),
            std::make_pair(std::string("InvalidSignatureException"),
                           std::string("Signature expired: 20260115T101500Z is now earlier than "
                                       "20260115T101600Z (20260115T103100Z - 15 min.)")));
  EXPECT_EQ(
      outcome(verifying(), request, example_time() - 16min),
      std::make_pair(std::string("InvalidSignatureException"),
                     std::string("Signature not yet current: 20260115T101500Z is still "
                                 "later than 20260115T101400Z (20260115T095900Z + 15 min.)")));
  // Accepting any signature means not knowing the client's clock either.
  EXPECT_EQ(outcome(SigV4Verifier(), request, example_time() + 24h).first, "");
}

TEST(SigV4, HostMustBeSigned) {
  Request request;
  request.set("Authorization",
              "AWS4-HMAC-SHA256 Credential=AKIDKUMO/20260115/eu-west-1/dynamodb/aws4_request, "
              "SignedHeaders=content-type;x-amz-date, Signature=abc");
  EXPECT_EQ(
      outcome(verifying(), request),
      std::make_pair(std::string("InvalidSignatureException"),
                     std::string("'Host' must be a 'SignedHeader' in the AWS Authorization.")));
  EXPECT_EQ(outcome(SigV4Verifier(), request).first, "");
}

TEST(SigV4, WrongScope) {
  Request request;
  request.set("Authorization",
              "AWS4-HMAC-SHA256 Credential=AKIDKUMO/20260115/eu-west-1/s3/aws4_request2, "
              "SignedHeaders=host, Signature=abc");
  EXPECT_EQ(outcome(verifying(), request),
            std::make_pair(std::string("InvalidSignatureException"),
                           std::string("Credential should be scoped to correct service: "
                                       "'dynamodb'. Credential should be scoped with a valid "
                                       "terminator: 'aws4_request', not 'aws4_request2'. ")));
}

TEST(SigV4, DevModeAcceptsAnyWellFormedSignature) {
  const SigV4Verifier dev;
  EXPECT_FALSE(dev.checks_signatures());
  Request request;
  request.set("Authorization",
              "AWS4-HMAC-SHA256 Credential=any+key!/20200101/mars-north-9/dynamodb/aws4_request, "
              "SignedHeaders=host, Signature=0000");
  EXPECT_EQ(outcome(dev, request).first, "");
  request.remove("X-Amz-Date");
  request.set("Date", "Thu, 15 Jan 2026 10:15:00 GMT");
  EXPECT_EQ(outcome(dev, request).first, "");
}

TEST(SigV4, MissingAuthenticationToken) {
  const std::pair<std::string, std::string> missing = {"MissingAuthenticationTokenException",
                                                       "Request is missing Authentication Token"};
  Request none;
  none.remove("Authorization");
  EXPECT_EQ(outcome(SigV4Verifier(), none), missing);
  EXPECT_EQ(outcome(verifying(), none), missing);
  Request basic;
  basic.set("Authorization", "Basic dXNlcjpwYXNz");
  EXPECT_EQ(outcome(SigV4Verifier(), basic), missing);
}

TEST(SigV4, BothHeaderAndQuery) {
  Request request;
  request.target = "/?X-Amz-Algorithm=AWS4-HMAC-SHA256";
  EXPECT_EQ(outcome(SigV4Verifier(), request),
            std::make_pair(std::string("InvalidSignatureException"),
                           std::string("Found both 'X-Amz-Algorithm' as a query-string param and "
                                       "'Authorization' as HTTP header.")));
}

TEST(SigV4, IncompleteSignatureMessages) {
  const SigV4Verifier dev;
  auto message = [&](const std::string& authorization, bool with_date = true) {
    Request request;
    request.set("Authorization", authorization);
    if (!with_date) request.remove("X-Amz-Date");
    auto [type, text] = outcome(dev, request);
    EXPECT_EQ(type, "IncompleteSignatureException") << authorization;
    return text;
  };
  EXPECT_EQ(message("AWS4-HMAC-SHA256"),
            "Authorization header requires 'Credential' parameter. Authorization header requires "
            "'Signature' parameter. Authorization header requires 'SignedHeaders' parameter. "
            "Authorization=AWS4-HMAC-SHA256");
  EXPECT_EQ(message("AWS4-HMAC-SHA256 Credential=a/b/c/d/e, SignedHeaders=host"),
            "Authorization header requires 'Signature' parameter. "
            "Authorization=AWS4-HMAC-SHA256 Credential=a/b/c/d/e, SignedHeaders=host");
  EXPECT_EQ(message("AWS4-HMAC-SHA256 Credential=a/b/c/d/e,SignedHeaders=host,Signature=", false),
            "Authorization header requires 'Signature' parameter. Authorization header requires "
            "existence of either a 'X-Amz-Date' or a 'Date' header. "
            "Authorization=AWS4-HMAC-SHA256 Credential=a/b/c/d/e,SignedHeaders=host,Signature=");
  EXPECT_EQ(
      message("AWS4-HMAC-SHA256 Credential=a/b/c/d/e, SignedHeaders=host, Signature=x", false),
      "Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' "
      "header. Authorization=AWS4-HMAC-SHA256 Credential=a/b/c/d/e, SignedHeaders=host, "
      "Signature=x");
  EXPECT_EQ(message("AWS4-HMAC-SHA512 Credential=a/b/c/d/e, SignedHeaders=host, Signature=x"),
            "Unsupported AWS 'algorithm': 'AWS4-HMAC-SHA512' (only AWS4-HMAC-SHA256 for now). ");
  EXPECT_EQ(message("AWS4-HMAC-SHA256 Credential=a/b/c/d, SignedHeaders=host, Signature=x"),
            "Credential must have exactly 5 slash-delimited elements, e.g. "
            "keyid/date/region/service/term, got 'a/b/c/d'");
  EXPECT_EQ(message("AWS4-HMAC-SHA256 Credential=a/b/c/d/e/f, SignedHeaders=host, Signature=x"),
            "Credential must have exactly 5 slash-delimited elements, e.g. "
            "keyid/date/region/service/term, got 'a/b/c/d/e/f'");
}

TEST(SigV4, BadDateFormat) {
  Request request;
  request.set("X-Amz-Date", "2026-01-15T10:15:00Z");
  EXPECT_EQ(outcome(SigV4Verifier(), request),
            std::make_pair(std::string("IncompleteSignatureException"),
                           std::string("Date must be in ISO-8601 'basic format'. Got "
                                       "'2026-01-15T10:15:00Z'. See "
                                       "http://en.wikipedia.org/wiki/ISO_8601")));
}

TEST(SigV4, PresignedMissingParameters) {
  Request request;
  request.remove("Authorization");
  request.target = "/?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Date=20260115T101500Z";
  EXPECT_EQ(outcome(SigV4Verifier(), request),
            std::make_pair(std::string("IncompleteSignatureException"),
                           std::string("AWS query-string parameters must include "
                                       "'X-Amz-Credential'. AWS query-string parameters must "
                                       "include 'X-Amz-Signature'. AWS query-string parameters "
                                       "must include 'X-Amz-SignedHeaders'. Re-examine the "
                                       "query-string parameters.")));
}

// A presigned request dated at example_time(), valid for `expires` (a wrong signature: the
// checks below come before the signature's).
Request presigned(std::string_view expires) {
  Request request;
  request.remove("Authorization");
  request.remove("X-Amz-Date");
  request.target =
      "/?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIDKUMO%2F20260115%2Fus-west-2%2F"
      "dynamodb%2Faws4_request&X-Amz-Date=20260115T101500Z&X-Amz-SignedHeaders=host&"
      "X-Amz-Signature=" +
      std::string(64, '0') + "&X-Amz-Expires=" + std::string(expires);
  return request;
}

TEST(SigV4, PresignedExpiresAtMostAWeek) {
  const std::string week = "X-Amz-Expires must be less than a week (in seconds) that is 604800";
  for (const SigV4Verifier& verifier : {SigV4Verifier(), verifying()}) {
    Request over = presigned("604801");
    EXPECT_EQ(outcome(verifier, over),
              std::make_pair(std::string("IncompleteSignatureException"), week));
    Request huge = presigned("99999999999999999999999");
    EXPECT_EQ(outcome(verifier, huge).second, week);
    Request negative = presigned("-1");
    EXPECT_EQ(outcome(verifier, negative).second, "X-Amz-Expires must be non-negative");
    for (const std::string_view text : {"", "12s", "+5", " 5", "1e3"}) {
      Request bad = presigned(text);
      EXPECT_EQ(outcome(verifier, bad).second, "X-Amz-Expires should be a number") << text;
    }
  }
  Request week_long = presigned("604800");
  EXPECT_EQ(outcome(SigV4Verifier(), week_long).first, "");
  EXPECT_EQ(outcome(verifying(), week_long, example_time() + 604800s).second, kMismatch);
  EXPECT_EQ(outcome(verifying(), week_long, example_time() + 604801s).first,
            "InvalidSignatureException");
  EXPECT_NE(outcome(verifying(), week_long, example_time() + 604801s).second, kMismatch);
}

TEST(SigV4, PresignedValidForExpiresSecondsFromItsDate) {
  Request request = presigned("60");
  EXPECT_EQ(outcome(verifying(), request, example_time() + 60s).second, kMismatch);
  EXPECT_EQ(outcome(verifying(), request, example_time() + 61s),
            std::make_pair(std::string("InvalidSignatureException"),
                           std::string("Signature expired: 20260115T101500Z is now earlier than "
                                       "20260115T101501Z (20260115T101601Z - 1 min.)")));
  // Not yet current, as any signature, more than 15 minutes ahead.
  EXPECT_EQ(outcome(verifying(), request, example_time() - 14min).second, kMismatch);
  EXPECT_EQ(outcome(verifying(), request, example_time() - 16min).first,
            "InvalidSignatureException");
}

TEST(SigV4, RequestAuthenticatorRunsTheVerifier) {
  Request request;
  request.remove("Authorization");
  const SigV4Verifier dev;
  const RequestView view = request.view();
  const RequestAuthenticator auth(dev, view);
  EXPECT_THROW(auth.authenticate(), ApiError);
}

TEST(Credentials, ParsesFile) {
  const Credentials c = parse_credentials(
      "# Kumo credentials\n\nAKID1 secret/one\r\n  AKID2\t secret+two  \n# end\n");
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c.at("AKID1"), "secret/one");
  EXPECT_EQ(c.at("AKID2"), "secret+two");
  EXPECT_THROW(parse_credentials("AKID1\n"), std::invalid_argument);
  EXPECT_THROW(parse_credentials("AKID1 a b\n"), std::invalid_argument);
  EXPECT_THROW(load_credentials_file("/nonexistent/kumo-credentials"), std::runtime_error);
}

TEST(FindHeader, IsCaseInsensitive) {
  const std::vector<Header> headers = {{"X-Amz-Target", "T"}, {"x-amz-target", "U"}};
  EXPECT_EQ(find_header(headers, "x-AMZ-target"), "T");
  EXPECT_FALSE(find_header(headers, "origin").has_value());
}

}  // namespace
}  // namespace kumo::net
