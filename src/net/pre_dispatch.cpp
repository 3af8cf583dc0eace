#include "net/pre_dispatch.h"

#include "net/http_text.h"

namespace kumo::net {
namespace {

constexpr std::string_view kAmzJson = "application/x-amz-json-1.0";
constexpr std::string_view kJson = "application/json";

}  // namespace

std::string_view request_path(std::string_view target) {
  return target.substr(0, target.find('?'));
}

std::string_view media_type(std::string_view content_type) {
  return trim_ows(content_type.substr(0, content_type.find(';')));
}

Route route(const RequestHead& head) {
  if (head.method == "GET") return head.path == "/" ? Route::kHealth : Route::kUnknownOperation;
  const bool preflight = head.method == "OPTIONS" && head.has_origin;
  if (head.method != "POST" && !preflight) return Route::kUnknownOperation;
  if (head.has_body) {
    const std::string_view type = media_type(head.content_type);
    if (!iequals(type, kJson) && !iequals(type, kAmzJson)) return Route::kUnknownOperation;
  }
  return preflight ? Route::kCorsPreflight : Route::kOperation;
}

std::string_view response_content_type(std::string_view request_content_type) {
  return iequals(media_type(request_content_type), kAmzJson) ? kAmzJson : kJson;
}

std::string endpoint_host(std::string_view region) {
  std::string host = "dynamodb.";
  host.append(region);
  host.append(".amazonaws.com");
  return host;
}

std::string health_body(std::string_view host) {
  std::string body = "healthy: ";
  body.append(host);
  body.push_back(' ');
  return body;
}

}  // namespace kumo::net
