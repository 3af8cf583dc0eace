// DynamoDB's HTTP-level checks, made before a request reaches an operation: health check,
// unknown operation, CORS pre-flight (the body limit that follows is the server's).
#pragma once

#include <string>
#include <string_view>

namespace kumo::net {

// Where a request goes after the HTTP-level checks.
enum class Route {
  kHealth,            // GET /: 200 "healthy: <host> "
  kUnknownOperation,  // 404 "<UnknownOperationException/>\n"
  kCorsPreflight,     // OPTIONS with Origin: 200, empty body, CORS headers
  kOperation,         // POST with an acceptable body: hand to the service
};

// The request facts the checks look at.
struct RequestHead {
  std::string_view method;        // e.g. "POST"
  std::string_view path;          // the request-target before any '?', e.g. "/"
  std::string_view content_type;  // Content-Type header value, empty when absent
  bool has_body = false;          // the body is non-empty (or of unknown length)
  bool has_origin = false;        // an Origin header is present
};

// Applies DynamoDB's order: GET of the root path is a health check (a GET of any other
// path is an unknown operation); a method other than POST (OPTIONS only without Origin),
// or a non-empty body of a media type other than application/json or
// application/x-amz-json-1.0, is an unknown operation; OPTIONS with Origin is a CORS
// pre-flight; everything else is an operation.
Route route(const RequestHead& head);

// The path of a request-target: the part before any '?'.
std::string_view request_path(std::string_view target);

// The media type of a Content-Type value: the part before any ';', trimmed. Compared
// case-insensitively by the functions below.
std::string_view media_type(std::string_view content_type);

// The Content-Type of a JSON response: DynamoDB echoes application/x-amz-json-1.0 when the
// request used it, and answers application/json otherwise.
std::string_view response_content_type(std::string_view request_content_type);

// The host a client of `region`'s endpoint asks for: "dynamodb.<region>.amazonaws.com".
std::string endpoint_host(std::string_view region);

// The health-check body: DynamoDB names the host the client asked for (its Host header),
// trailing space included.
std::string health_body(std::string_view host);

inline constexpr std::string_view kUnknownOperationBody = "<UnknownOperationException/>\n";

}  // namespace kumo::net
