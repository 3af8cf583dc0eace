#include "net/pre_dispatch.h"

namespace kumo::net {
namespace {

constexpr std::string_view kAmzJson = "application/x-amz-json-1.0";
constexpr std::string_view kJson = "application/json";

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    char x = a[i], y = b[i];
    if (x >= 'A' && x <= 'Z') x = static_cast<char>(x + 32);
    if (y >= 'A' && y <= 'Z') y = static_cast<char>(y + 32);
    if (x != y) return false;
  }
  return true;
}

}  // namespace

std::string_view media_type(std::string_view content_type) {
  content_type = content_type.substr(0, content_type.find(';'));
  while (!content_type.empty() && (content_type.front() == ' ' || content_type.front() == '\t'))
    content_type.remove_prefix(1);
  while (!content_type.empty() && (content_type.back() == ' ' || content_type.back() == '\t'))
    content_type.remove_suffix(1);
  return content_type;
}

Route route(const RequestHead& head) {
  if (head.method == "GET") return Route::kHealth;
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

std::string health_body(std::string_view region) {
  std::string body = "healthy: dynamodb.";
  body.append(region);
  body.append(".amazonaws.com ");
  return body;
}

}  // namespace kumo::net
