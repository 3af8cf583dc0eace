#include "net/response_head.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "net/pre_dispatch.h"

namespace kumo::net {
namespace {

TEST(RequestId, FiftyTwoDigitsAndCapitals) {
  std::set<std::string> seen;
  for (int i = 0; i < 1000; ++i) {
    const RequestId id = make_request_id();
    const std::string text(id.data(), id.size());
    ASSERT_EQ(text.size(), 52u);
    for (char c : text) ASSERT_TRUE((c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z')) << text;
    seen.insert(text);
  }
  EXPECT_EQ(seen.size(), 1000u);
}

TEST(Crc32, DynamoDBWorkedValues) {
  EXPECT_EQ(body_crc32("{}"), 2745614147u);
  EXPECT_EQ(body_crc32(R"({"__type":"com.amazon.coral.service#SerializationException"})"),
            3948637019u);
  EXPECT_EQ(body_crc32(kUnknownOperationBody), 3552371480u);
  EXPECT_EQ(kUnknownOperationBody.size(), 29u);
}

TEST(HealthBody, UsEast1) {
  const std::string body = health_body(endpoint_host("us-east-1"));
  EXPECT_EQ(body, "healthy: dynamodb.us-east-1.amazonaws.com ");
  EXPECT_EQ(body.size(), 42u);
  EXPECT_EQ(body_crc32(body), 3128867991u);
}

TEST(HttpDate, ImfFixdate) {
  const std::string_view date = http_date_now();
  ASSERT_EQ(date.size(), 29u);
  EXPECT_EQ(date.substr(3, 2), ", ");
  EXPECT_EQ(date.substr(25), " GMT");
}

TEST(ResponseHead, Json) {
  std::string out;
  ResponseHead head;
  head.status = 400;
  head.content_type = "application/x-amz-json-1.0";
  head.request_id = "RID";
  append_response_head(out, head, "{}");
  const std::string date(http_date_now());
  EXPECT_EQ(out,
            "HTTP/1.1 400 Bad Request\r\nx-amzn-RequestId: RID\r\nx-amz-crc32: 2745614147\r\n"
            "Content-Type: application/x-amz-json-1.0\r\nContent-Length: 2\r\nDate: " +
                date + "\r\nServer: Server\r\n\r\n");
}

TEST(ResponseHead, ContentEncodingFollowsContentType) {
  std::string out;
  ResponseHead head;
  head.content_type = "application/json";
  head.content_encoding = "gzip";
  head.request_id = "RID";
  append_response_head(out, head, "{}");
  EXPECT_NE(out.find("\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\n"
                     "Content-Length: 2\r\n"),
            std::string::npos)
      << out;
}

TEST(ResponseHead, PreflightAndClose) {
  std::string out;
  ResponseHead head;
  head.request_id = "RID";
  head.allow_any_origin = true;
  head.preflight = true;
  head.allow_headers = "content-type,x-amz-target";
  head.allow_methods = "POST";
  head.keep_alive = false;
  append_response_head(out, head, "");
  EXPECT_EQ(out.find("x-amz-crc32"), std::string::npos);
  EXPECT_NE(out.find("\r\nContent-Length: 0\r\n"), std::string::npos);
  EXPECT_NE(out.find("\r\nAccess-Control-Allow-Origin: *\r\n"), std::string::npos);
  EXPECT_NE(out.find("\r\nAccess-Control-Allow-Headers: content-type,x-amz-target\r\n"),
            std::string::npos);
  EXPECT_NE(out.find("\r\nAccess-Control-Allow-Methods: POST\r\n"), std::string::npos);
  EXPECT_NE(out.find("\r\nAccess-Control-Max-Age: 172800\r\n"), std::string::npos);
  EXPECT_NE(out.find("\r\nAccess-Control-Expose-Headers: x-amzn-RequestId,"), std::string::npos);
  EXPECT_NE(out.find("\r\nServer: Server\r\n"), std::string::npos);
  EXPECT_NE(out.find("\r\nConnection: close\r\n\r\n"), std::string::npos);
}

TEST(PreDispatch, Order) {
  auto r = [](std::string_view method, std::string_view type, bool body, bool origin,
              std::string_view path = "/") {
    return route({method, path, type, body, origin});
  };
  EXPECT_EQ(r("GET", "text/html", true, true), Route::kHealth);
  EXPECT_EQ(r("GET", "", false, false, "/other"), Route::kUnknownOperation);
  EXPECT_EQ(r("PUT", "application/json", true, false), Route::kUnknownOperation);
  EXPECT_EQ(r("DELETE", "", false, false), Route::kUnknownOperation);
  EXPECT_EQ(r("OPTIONS", "", false, false), Route::kUnknownOperation);
  EXPECT_EQ(r("OPTIONS", "", false, true), Route::kCorsPreflight);
  EXPECT_EQ(r("OPTIONS", "text/plain", true, true), Route::kUnknownOperation);
  EXPECT_EQ(r("POST", "application/x-amz-json-1.1", true, false), Route::kUnknownOperation);
  EXPECT_EQ(r("POST", "text/plain", true, false), Route::kUnknownOperation);
  EXPECT_EQ(r("POST", "", true, false), Route::kUnknownOperation);
  EXPECT_EQ(r("POST", "text/plain", false, false), Route::kOperation);
  EXPECT_EQ(r("POST", "application/x-amz-json-1.0", true, false), Route::kOperation);
  EXPECT_EQ(r("POST", "Application/JSON; charset=utf-8", true, true), Route::kOperation);
  EXPECT_EQ(r("POST", " application/x-amz-json-1.0 ;x=y", true, false), Route::kOperation);
}

TEST(PreDispatch, ResponseContentType) {
  EXPECT_EQ(response_content_type("application/x-amz-json-1.0"), "application/x-amz-json-1.0");
  EXPECT_EQ(response_content_type("application/X-Amz-Json-1.0; charset=utf-8"),
            "application/x-amz-json-1.0");
  EXPECT_EQ(response_content_type("application/json"), "application/json");
  EXPECT_EQ(response_content_type(""), "application/json");
}

}  // namespace
}  // namespace kumo::net
