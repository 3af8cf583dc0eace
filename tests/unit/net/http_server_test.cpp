#include "net/http_server.h"

#include <gtest/gtest.h>

#include <atomic>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>

#include "model/api_error.h"
#include "net/content_coding.h"
#include "net/pre_dispatch.h"
#include "net/response_head.h"

namespace kumo::net {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using namespace std::chrono_literals;

using Response = http::response<http::string_body>;

// A stand-in for api::Service: echoes what it was given, and exercises the authenticator
// and failure paths on request.
api::Response fake_handler(std::string_view target, std::string_view body,
                           const api::Authenticator& auth) {
  if (target == "Test.Throw") throw std::runtime_error("boom");
  if (target == "Test.Echo") return {200, std::string(body)};
  if (target == "Test.Big") return {200, std::string(32u << 20, 'x')};
  if (target == "Test.Auth") {
    try {
      auth.authenticate();
    } catch (const ApiError& e) {
      return {e.http_status(), R"({"__type":")" + e.type() + R"("})"};
    }
  }
  return {200, R"({"target":")" + std::string(target) + R"(","size":)" +
                   std::to_string(body.size()) + "}"};
}

class HttpServerTest : public ::testing::Test {
 protected:
  void SetUp() override { start({}); }

  void start(ServerOptions options) {
    if (server_) server_->stop();
    options.port = 0;
    options.threads = 2;
    server_ = std::make_unique<Server>(options, SigV4Verifier(), fake_handler);
    server_->start();
  }

  std::unique_ptr<Server> server_;
};

struct Client {
  explicit Client(std::uint16_t port) {
    socket.connect({asio::ip::make_address("127.0.0.1"), port});
  }

  void send(std::string_view raw) { asio::write(socket, asio::buffer(raw.data(), raw.size())); }

  Response read() {
    http::response_parser<http::string_body> parser;
    parser.body_limit(64u << 20);
    http::read(socket, buffer, parser);
    return parser.release();
  }

  Response round_trip(std::string_view raw) {
    send(raw);
    return read();
  }

  // True when the server has closed the connection (after any pending bytes).
  bool closed_by_server() {
    boost::system::error_code ec;
    char c;
    socket.read_some(asio::buffer(&c, 1), ec);
    return ec == asio::error::eof || ec == asio::error::connection_reset;
  }

  asio::io_context io;
  tcp::socket socket{io};
  beast::flat_buffer buffer;
};

std::string post(std::string_view target, std::string_view body,
                 std::string_view content_type = "application/x-amz-json-1.0",
                 std::string_view extra = "") {
  std::string raw = "POST / HTTP/1.1\r\nHost: localhost\r\n";
  if (!target.empty()) raw += "X-Amz-Target: " + std::string(target) + "\r\n";
  if (!content_type.empty()) raw += "Content-Type: " + std::string(content_type) + "\r\n";
  raw += extra;
  raw += "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n";
  raw += body;
  return raw;
}

void expect_dynamodb_headers(const Response& res) {
  const std::string id(res["x-amzn-RequestId"]);
  EXPECT_EQ(id.size(), 52u);
  EXPECT_FALSE(res["Date"].empty());
  EXPECT_EQ(res["Content-Length"], std::to_string(res.body().size()));
  if (!res.body().empty()) {
    EXPECT_EQ(res["x-amz-crc32"], std::to_string(body_crc32(res.body())));
  }
}

TEST_F(HttpServerTest, BindsAFreePort) {
  EXPECT_NE(server_->port(), 0);
  EXPECT_EQ(server_->address(), "127.0.0.1");
  EXPECT_EQ(server_->threads(), 2u);
}

TEST_F(HttpServerTest, KeepAliveRoundTrips) {
  Client client(server_->port());
  for (int i = 0; i < 3; ++i) {
    const Response res = client.round_trip(post("DynamoDB_20120810.ListTables", "{}"));
    EXPECT_EQ(res.result_int(), 200);
    EXPECT_EQ(res.body(), R"({"target":"DynamoDB_20120810.ListTables","size":2})");
    EXPECT_EQ(res["Content-Type"], "application/x-amz-json-1.0");
    EXPECT_TRUE(res.keep_alive());
    expect_dynamodb_headers(res);
  }
  // Two requests written at once are answered in order.
  client.send(post("A", "{}", "application/json") + post("B", "{\"x\":1}", "application/json"));
  const Response a = client.read();
  const Response b = client.read();
  EXPECT_EQ(a.body(), R"({"target":"A","size":2})");
  EXPECT_EQ(a["Content-Type"], "application/json");
  EXPECT_EQ(b.body(), R"({"target":"B","size":7})");
}

TEST_F(HttpServerTest, RequestIdsDiffer) {
  Client client(server_->port());
  const Response a = client.round_trip(post("X", "{}"));
  const Response b = client.round_trip(post("X", "{}"));
  EXPECT_NE(a["x-amzn-RequestId"], b["x-amzn-RequestId"]);
}

TEST_F(HttpServerTest, HealthCheck) {
  Client client(server_->port());
  const Response res =
      client.round_trip("GET / HTTP/1.1\r\nHost: dynamodb.us-east-1.amazonaws.com\r\n\r\n");
  EXPECT_EQ(res.result_int(), 200);
  EXPECT_EQ(res.body(), "healthy: dynamodb.us-east-1.amazonaws.com ");
  EXPECT_EQ(res["x-amz-crc32"], "3128867991");
  expect_dynamodb_headers(res);
  EXPECT_EQ(client.round_trip("GET /?x=1 HTTP/1.1\r\nHost: localhost:8000\r\n\r\n").body(),
            "healthy: localhost:8000 ");
}

TEST_F(HttpServerTest, HealthCheckIsTheRootPathOnly) {
  Client client(server_->port());
  const Response res = client.round_trip("GET /anything HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(res.result_int(), 404);
  EXPECT_EQ(res.body(), kUnknownOperationBody);
}

TEST_F(HttpServerTest, HealthCheckWithoutHostNamesTheRegion) {
  ServerOptions options;
  options.region = "eu-central-1";
  start(options);
  Client client(server_->port());
  EXPECT_EQ(client.round_trip("GET / HTTP/1.0\r\n\r\n").body(),
            "healthy: dynamodb.eu-central-1.amazonaws.com ");
}

TEST_F(HttpServerTest, UnknownOperationFor404Cases) {
  Client client(server_->port());
  for (const std::string& raw :
       {std::string("PUT / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}"),
        std::string("DELETE / HTTP/1.1\r\nHost: x\r\n\r\n"),
        std::string("OPTIONS / HTTP/1.1\r\nHost: x\r\n\r\n"),
        post("DynamoDB_20120810.ListTables", "{}", "application/x-amz-json-1.1"),
        post("DynamoDB_20120810.ListTables", "{}", "text/plain"),
        post("DynamoDB_20120810.ListTables", "{}", "")}) {
    const Response res = client.round_trip(raw);
    EXPECT_EQ(res.result_int(), 404) << raw;
    EXPECT_EQ(res.body(), "<UnknownOperationException/>\n");
    EXPECT_EQ(res["x-amz-crc32"], "3552371480");
    expect_dynamodb_headers(res);
  }
  // The connection is still usable.
  EXPECT_EQ(client.round_trip(post("T", "{}")).result_int(), 200);
}

TEST_F(HttpServerTest, EmptyBodyIsDispatchedWhateverItsType) {
  Client client(server_->port());
  const Response res = client.round_trip(post("T", "", "text/plain"));
  EXPECT_EQ(res.result_int(), 200);
  EXPECT_EQ(res["Content-Type"], "application/json");
}

TEST_F(HttpServerTest, CorsPreflight) {
  Client client(server_->port());
  const Response res = client.round_trip(
      "OPTIONS / HTTP/1.1\r\nHost: x\r\nOrigin: http://example.com\r\n"
      "Access-Control-Request-Method: POST\r\n"
      "Access-Control-Request-Headers: content-type,x-amz-target\r\n\r\n");
  EXPECT_EQ(res.result_int(), 200);
  EXPECT_TRUE(res.body().empty());
  EXPECT_EQ(res["Access-Control-Allow-Origin"], "*");
  EXPECT_EQ(res["Access-Control-Allow-Methods"], "POST");
  EXPECT_EQ(res["Access-Control-Allow-Headers"], "content-type,x-amz-target");
  EXPECT_EQ(res["Access-Control-Max-Age"], "172800");
  EXPECT_EQ(res["x-amzn-RequestId"].size(), 52u);

  const Response op =
      client.round_trip(post("T", "{}", "application/json", "Origin: http://example.com\r\n"));
  EXPECT_EQ(op.result_int(), 200);
  EXPECT_EQ(op["Access-Control-Allow-Origin"], "*");
  const Response no_origin = client.round_trip(post("T", "{}"));
  EXPECT_EQ(no_origin.count("Access-Control-Allow-Origin"), 0u);
}

TEST_F(HttpServerTest, BodyOverLimitDeclaredIs413) {
  Client client(server_->port());
  const Response res = client.round_trip(
      "POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-amz-json-1.0\r\n"
      "Content-Length: " +
      std::to_string((16u << 20) + 1) + "\r\n\r\n");
  EXPECT_EQ(res.result_int(), 413);
  EXPECT_FALSE(res.keep_alive());
  expect_dynamodb_headers(res);
  EXPECT_TRUE(client.closed_by_server());
}

TEST_F(HttpServerTest, BodyOverLimitSentIs413) {
  Client client(server_->port());
  const std::string body((16u << 20) + 1, ' ');
  std::thread writer([&] {
    boost::system::error_code ec;
    const std::string raw = post("T", body);
    asio::write(client.socket, asio::buffer(raw), ec);
  });
  const Response res = client.read();
  writer.join();
  EXPECT_EQ(res.result_int(), 413);
}

TEST_F(HttpServerTest, ChunkedBodyOverLimitIs413) {
  Client client(server_->port());
  std::thread writer([&] {
    boost::system::error_code ec;
    std::string raw =
        "POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        "Transfer-Encoding: chunked\r\n\r\n";
    asio::write(client.socket, asio::buffer(raw), ec);
    const std::string chunk = "100000\r\n" + std::string(1u << 20, 'x') + "\r\n";
    for (int i = 0; i < 17 && !ec; ++i) asio::write(client.socket, asio::buffer(chunk), ec);
    asio::write(client.socket, asio::buffer(std::string_view("0\r\n\r\n")), ec);
  });
  const Response res = client.read();
  writer.join();
  EXPECT_EQ(res.result_int(), 413);
}

TEST_F(HttpServerTest, BodyAtLimitIsAccepted) {
  Client client(server_->port());
  const std::string body(16u << 20, ' ');
  std::thread writer([&] { client.send(post("T", body)); });
  const Response res = client.read();
  writer.join();
  EXPECT_EQ(res.result_int(), 200);
  EXPECT_EQ(res.body(), R"({"target":"T","size":16777216})");
}

TEST_F(HttpServerTest, ExpectContinue) {
  Client client(server_->port());
  client.send(
      "POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nX-Amz-Target: T\r\n"
      "Expect: 100-continue\r\nContent-Length: 2\r\n\r\n");
  std::string interim(25, '\0');
  asio::read(client.socket, asio::buffer(interim));
  EXPECT_EQ(interim, "HTTP/1.1 100 Continue\r\n\r\n");
  const Response res = client.round_trip("{}");
  EXPECT_EQ(res.result_int(), 200);
  EXPECT_EQ(res.body(), R"({"target":"T","size":2})");
}

TEST_F(HttpServerTest, AuthenticatorSeesTheRequestHeaders) {
  Client client(server_->port());
  const Response missing = client.round_trip(post("Test.Auth", "{}"));
  EXPECT_EQ(missing.result_int(), 400);
  EXPECT_EQ(missing.body(),
            R"({"__type":"com.amazon.coral.service#MissingAuthenticationTokenException"})");
  const Response signed_request = client.round_trip(
      post("Test.Auth", "{}", "application/x-amz-json-1.0",
           "X-Amz-Date: 20260115T101500Z\r\nAuthorization: AWS4-HMAC-SHA256 "
           "Credential=k/20260115/us-east-1/dynamodb/aws4_request, SignedHeaders=host, "
           "Signature=00\r\n"));
  EXPECT_EQ(signed_request.result_int(), 200);
}

TEST_F(HttpServerTest, HandlerExceptionIsInternalServerError) {
  Client client(server_->port());
  const Response res = client.round_trip(post("Test.Throw", "{}"));
  EXPECT_EQ(res.result_int(), 500);
  EXPECT_EQ(res.body(), R"({"__type":"com.amazonaws.dynamodb.v20120810#InternalServerError",)"
                        R"("message":"Internal server error"})");
  expect_dynamodb_headers(res);
  EXPECT_EQ(client.round_trip(post("T", "{}")).result_int(), 200);
}

TEST_F(HttpServerTest, MalformedRequestIs400AndCloses) {
  Client client(server_->port());
  const Response res =
      client.round_trip("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: zz\r\n\r\n");
  EXPECT_EQ(res.result_int(), 400);
  EXPECT_TRUE(client.closed_by_server());
}

TEST_F(HttpServerTest, ConnectionCloseIsHonoured) {
  Client client(server_->port());
  const Response res =
      client.round_trip(post("T", "{}", "application/json", "Connection: close\r\n"));
  EXPECT_EQ(res.result_int(), 200);
  EXPECT_FALSE(res.keep_alive());
  EXPECT_TRUE(client.closed_by_server());
}

TEST_F(HttpServerTest, Http10KeepAlive) {
  Client client(server_->port());
  const Response res = client.round_trip(
      "POST / HTTP/1.0\r\nConnection: keep-alive\r\nContent-Type: application/json\r\n"
      "Content-Length: 2\r\n\r\n{}");
  EXPECT_EQ(res.result_int(), 200);
  EXPECT_EQ(res["Connection"], "keep-alive");
  EXPECT_EQ(client.round_trip(post("T", "{}")).result_int(), 200);
}

TEST_F(HttpServerTest, IdleConnectionsTimeOut) {
  ServerOptions options;
  options.idle_timeout = 200ms;
  start(options);
  Client client(server_->port());
  EXPECT_EQ(client.round_trip(post("T", "{}")).result_int(), 200);
  const auto begin = std::chrono::steady_clock::now();
  EXPECT_TRUE(client.closed_by_server());
  EXPECT_LT(std::chrono::steady_clock::now() - begin, 5s);
}

TEST_F(HttpServerTest, StopClosesIdleConnectionsPromptly) {
  Client a(server_->port());
  Client b(server_->port());
  EXPECT_EQ(a.round_trip(post("T", "{}")).result_int(), 200);
  EXPECT_EQ(b.round_trip(post("T", "{}")).result_int(), 200);
  const auto begin = std::chrono::steady_clock::now();
  server_->stop();
  EXPECT_LT(std::chrono::steady_clock::now() - begin, 2s);
  EXPECT_TRUE(a.closed_by_server());
  EXPECT_TRUE(b.closed_by_server());
  server_->stop();  // idempotent
}

TEST_F(HttpServerTest, StopLetsARequestInProgressFinish) {
  Client client(server_->port());
  // Head sent, body not yet: the request is in progress when stop() begins.
  client.send(
      "POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nX-Amz-Target: T\r\n"
      "Content-Length: 2\r\n\r\n");
  std::this_thread::sleep_for(100ms);
  std::thread stopper([&] { server_->stop(); });
  std::this_thread::sleep_for(100ms);
  const Response res = client.round_trip("{}");
  stopper.join();
  EXPECT_EQ(res.result_int(), 200);
  EXPECT_FALSE(res.keep_alive());
}

TEST_F(HttpServerTest, HeadOverSixteenKiBIs400) {
  Client client(server_->port());
  const std::string head = post("T", "", "application/json");
  // 16 KiB exactly, blank line included, is accepted.
  const std::string filler =
      "X-Filler: " + std::string((16u << 10) - head.size() - 12, 'a') + "\r\n";
  const Response at_limit = client.round_trip(post("T", "{}", "application/json", filler));
  EXPECT_EQ(at_limit.result_int(), 200);
  const Response over = client.round_trip(post("T", "{}", "application/json", filler + "Y: \r\n"));
  EXPECT_EQ(over.result_int(), 400);
  EXPECT_EQ(over.body(), "Bad Request\n");
  EXPECT_TRUE(client.closed_by_server());

  Client long_path(server_->port());
  const Response res = long_path.round_trip("POST /" + std::string(16u << 10, 'p') +
                                            " HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n");
  EXPECT_EQ(res.result_int(), 400);
  EXPECT_EQ(res.body(), "Bad Request\n");
}

TEST_F(HttpServerTest, CompressedBodiesAreDecoded) {
  Client client(server_->port());
  const std::string body = R"({"TableName":"t"})";
  for (const Coding coding : {Coding::kGzip, Coding::kDeflate}) {
    std::string sent;
    compress_body(coding, body, sent);
    const std::string encoding = "Content-Encoding: " + std::string(coding_name(coding)) + "\r\n";
    const Response res = client.round_trip(post("Test.Echo", sent, "application/json", encoding));
    EXPECT_EQ(res.result_int(), 200);
    EXPECT_EQ(res.body(), body);
  }
}

TEST_F(HttpServerTest, UndecodableBodiesAre500) {
  Client client(server_->port());
  for (const std::string& raw :
       {post("Test.Echo", "{}", "application/json", "Content-Encoding: br\r\n"),
        post("Test.Echo", "{}", "application/json", "Content-Encoding: gzip\r\n"),
        post("Test.Echo", "", "application/json", "Content-Encoding: deflate\r\n")}) {
    const Response res = client.round_trip(raw);
    EXPECT_EQ(res.result_int(), 500) << raw;
    EXPECT_EQ(res.body(), R"({"__type":"com.amazonaws.dynamodb.v20120810#InternalServerError",)"
                          R"("message":"Internal server error"})");
    expect_dynamodb_headers(res);
  }
  // The connection is still usable.
  EXPECT_EQ(client.round_trip(post("T", "{}")).result_int(), 200);
}

TEST_F(HttpServerTest, BodyDecodingPastTheLimitIs413) {
  Client client(server_->port());
  std::string bomb;
  compress_body(Coding::kGzip, std::string((16u << 20) + 1, ' '), bomb);
  const Response res =
      client.round_trip(post("Test.Echo", bomb, "application/json", "Content-Encoding: gzip\r\n"));
  EXPECT_EQ(res.result_int(), 413);
}

TEST_F(HttpServerTest, LargeAnswersAreCompressedForClientsThatAcceptIt) {
  Client client(server_->port());
  const std::string large(kCompressThreshold, 'x');
  const std::string small(kCompressThreshold - 1, 'x');
  for (const Coding coding : {Coding::kGzip, Coding::kDeflate}) {
    const std::string accept = "Accept-Encoding: " + std::string(coding_name(coding)) + "\r\n";
    const Response res = client.round_trip(post("Test.Echo", large, "application/json", accept));
    EXPECT_EQ(res.result_int(), 200);
    EXPECT_EQ(std::string(res["Content-Encoding"]), coding_name(coding));
    expect_dynamodb_headers(res);  // the CRC covers the compressed bytes
    std::string decoded;
    ASSERT_EQ(decode_body(coding_name(coding), res.body(), 1u << 20, decoded), DecodeResult::kOk);
    EXPECT_EQ(decoded, large);
    const Response plain = client.round_trip(post("Test.Echo", small, "application/json", accept));
    EXPECT_EQ(plain.count("Content-Encoding"), 0u);
    EXPECT_EQ(plain.body(), small);
  }
  // Only the first Accept-Encoding header counts.
  const Response res =
      client.round_trip(post("Test.Echo", large, "application/json",
                             "Accept-Encoding: identity\r\nAccept-Encoding: gzip\r\n"));
  EXPECT_EQ(res.count("Content-Encoding"), 0u);
  EXPECT_EQ(res.body(), large);
}

TEST_F(HttpServerTest, UnsentAnswersHoldBackNewRequests) {
  ServerOptions options;
  options.unsent_limit = 1u << 20;
  start(options);
  // A answers 32 MiB, more than the socket buffers take, and its client does not read yet.
  Client a(server_->port());
  a.send(post("Test.Big", "{}"));
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while (a.socket.available() == 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(1ms);
  }
  ASSERT_GT(a.socket.available(), 0u);
  Client b(server_->port());
  b.send(post("T", "{}"));
  // B's request waits while A's answer holds more than the limit...
  std::this_thread::sleep_for(200ms);
  EXPECT_EQ(b.socket.available(), 0u);
  // ... and is served once A's client has read its answer.
  EXPECT_EQ(a.read().body().size(), 32u << 20);
  const Response res = b.read();
  EXPECT_EQ(res.result_int(), 200);
  EXPECT_EQ(res.body(), R"({"target":"T","size":2})");
}

TEST(HttpServer, TakenPortFailsAtConstruction) {
  ServerOptions options;
  options.port = 0;
  Server first(options, SigV4Verifier(), fake_handler);
  options.port = first.port();
  EXPECT_ANY_THROW(Server(options, SigV4Verifier(), fake_handler));
}

}  // namespace
}  // namespace kumo::net
