// Fuzzes the admin listener's routes: api::Admin::handle over an in-memory engine on a
// manual clock, holding one on-demand table (orders) with a GSI (by_status). The first
// byte picks the method (its low three bits: GET, POST, PUT, DELETE, HEAD, an empty one,
// "get", "PATCH") and whether capacity is on (bit 3 clear: report mode; set: off); the rest
// is the request target (path and query string), then after the first '\n' the body. Every
// run starts from a fresh engine. Checked: the status is one the admin gives (200, 400,
// 404, 405, 409), a JSON answer is a JSON document and an error is {"error": a string}, a
// 405 names the methods allowed, and the clock never goes backwards.

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "api/admin.h"
#include "api/json_reader.h"
#include "api/service.h"
#include "capacity/manager.h"
#include "engine/engine.h"
#include "model/clock.h"
#include "storage/storage.h"

namespace {

using namespace kumo;

// Past the listener's body limit nothing reaches the handler.
constexpr std::size_t kMaxInput = 1 + (16u << 10) + (64u << 10);
constexpr std::int64_t kStartNs = 1'767'225'600LL * 1'000'000'000;

constexpr std::array<std::string_view, 8> kMethods{"GET",  "POST", "PUT", "DELETE",
                                                   "HEAD", "",     "get", "PATCH"};

constexpr std::string_view kCreateTable =
    R"({"TableName":"orders","BillingMode":"PAY_PER_REQUEST",)"
    R"("AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"},)"
    R"({"AttributeName":"gk","AttributeType":"S"}],)"
    R"("KeySchema":[{"AttributeName":"pk","KeyType":"HASH"}],)"
    R"("GlobalSecondaryIndexes":[{"IndexName":"by_status",)"
    R"("KeySchema":[{"AttributeName":"gk","KeyType":"HASH"}],)"
    R"("Projection":{"ProjectionType":"ALL"}}]})";

class AllowAll final : public api::Authenticator {
 public:
  void authenticate() const override {}
};

[[noreturn]] void fail(const char* what, const api::AdminRequest& request,
                       const api::AdminResponse& response) {
  std::fprintf(stderr, "fuzz_admin: %s\nrequest: %.*s %.*s?%.*s\nresponse %d (%s): %s\n", what,
               static_cast<int>(request.method.size()), request.method.data(),
               static_cast<int>(request.path.size()), request.path.data(),
               static_cast<int>(request.query.size()), request.query.data(), response.status,
               response.content_type.c_str(), response.body.c_str());
  std::abort();
}

void check_response(const api::AdminRequest& request, const api::AdminResponse& response) {
  switch (response.status) {
    case 200:
    case 400:
    case 404:
    case 405:
    case 409:
      break;
    default:
      fail("unexpected status", request, response);
  }
  if (response.status == 405 && response.allow.empty())
    fail("405 without Allow", request, response);
  if (response.content_type != "application/json") return;
  api::JsonDocument document;
  if (!document.parse(response.body)) fail("answer is not JSON", request, response);
  if (response.status == 200) return;
  if (!document.root().IsObject()) fail("error is not an object", request, response);
  if (!api::JsonObject(document.root()).string("error"))
    fail("error without an error string", request, response);
}

engine::EngineOptions engine_options(ManualClock& clock, capacity::CapacityManager* manager) {
  engine::EngineOptions options;
  options.background_maintenance = false;
  options.clock = &clock;
  options.manual_clock = &clock;
  options.capacity = manager;
  return options;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1 || size > kMaxInput) return 0;
  const std::string_view method = kMethods[data[0] & 7];
  const bool capacity_on = (data[0] & 8) == 0;
  const std::string_view rest(reinterpret_cast<const char*>(data + 1), size - 1);
  const std::size_t newline = rest.find('\n');
  const std::string_view target = rest.substr(0, newline);
  const std::size_t mark = target.find('?');

  ManualClock clock(kStartNs);
  std::optional<capacity::CapacityManager> manager;
  if (capacity_on) manager.emplace(capacity::CapacityOptions{}, clock);
  engine::Engine engine(storage::open_memory(),
                        engine_options(clock, manager ? &*manager : nullptr));
  const api::Response created =
      api::Service(engine, api::ServiceOptions{})
          .handle("DynamoDB_20120810.CreateTable", kCreateTable, AllowAll{});
  if (created.status != 200) {
    std::fprintf(stderr, "fuzz_admin: CreateTable failed: %s\n", created.body.c_str());
    std::abort();
  }

  api::AdminRequest request;
  request.method = method;
  request.path = target.substr(0, mark);
  request.query = mark == std::string_view::npos ? std::string_view{} : target.substr(mark + 1);
  request.body = newline == std::string_view::npos ? std::string_view{} : rest.substr(newline + 1);
  const std::int64_t before = clock.now_ns();
  check_response(request, api::Admin(engine).handle(request));
  if (clock.now_ns() < before) fail("the clock went backwards", request, {});
  return 0;
}
