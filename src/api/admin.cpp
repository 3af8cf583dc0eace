#include "api/admin.h"

#include <charconv>
#include <cmath>
#include <optional>

#include "api/attribute_json.h"
#include "capacity/messages.h"

namespace kumo::api {
namespace {

constexpr std::string_view kJson = "application/json";
// What Prometheus scrapes: its text exposition format, version 0.0.4.
constexpr std::string_view kPrometheusText = "text/plain; version=0.0.4; charset=utf-8";
// The manual clock moves at most a year per call.
constexpr double kMaxAdvanceSeconds = 31'536'000;

AdminResponse error(int status, std::string_view message, std::string_view allow = {}) {
  JsonOut out;
  JsonWriter w(out);
  w.StartObject();
  write_key(w, "error");
  write_string(w, message);
  w.EndObject();
  return {status, std::string(kJson), json_text(out), std::string(allow)};
}

AdminResponse not_allowed(std::string_view method, std::string_view path, std::string_view allow) {
  return error(405,
               capacity::shown_path(method) + " is not allowed on " + capacity::shown_path(path) +
                   "; use " + std::string(allow),
               allow);
}

// {"<name>":<seconds>}, or with the mode first.
AdminResponse clock_body(std::string_view mode, double now) {
  JsonOut out;
  JsonWriter w(out);
  w.StartObject();
  if (!mode.empty()) {
    write_key(w, "mode");
    write_string(w, mode);
  }
  write_key(w, "now");
  w.Double(now);
  w.EndObject();
  return {200, std::string(kJson), json_text(out)};
}

// Epoch seconds of a clock reading, as exact as a double holds them: whole seconds and
// the fraction converted apart, so that a clock moved by 2.25 s reads .25 and not .2500002.
double epoch_seconds(std::int64_t ns) {
  constexpr std::int64_t kSecond = 1'000'000'000;
  return static_cast<double>(ns / kSecond) + static_cast<double>(ns % kSecond) / 1e9;
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::optional<std::string> percent_decoded(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '+') {
      out.push_back(' ');
    } else if (text[i] != '%') {
      out.push_back(text[i]);
    } else {
      if (i + 2 >= text.size()) return std::nullopt;
      const int high = hex_digit(text[i + 1]);
      const int low = hex_digit(text[i + 2]);
      if (high < 0 || low < 0) return std::nullopt;
      out.push_back(static_cast<char>(high * 16 + low));
      i += 2;
    }
  }
  return out;
}

// A whole decimal number of seconds, finite; nullopt for anything else.
std::optional<double> parse_seconds(std::string_view text) {
  double value = 0;
  const char* end = text.data() + text.size();
  const auto [at, ec] = std::from_chars(text.data(), end, value, std::chars_format::fixed);
  if (ec != std::errc() || at != end || !std::isfinite(value)) return std::nullopt;
  return value;
}

AdminResponse capacity_off() {
  return error(409, "capacity is off (kumo serve --capacity off): nothing is metered");
}

bool starts_path(std::string_view path, std::string_view prefix) {
  return path == prefix || (path.starts_with(prefix) && path[prefix.size()] == '/');
}

}  // namespace

std::optional<std::string> query_parameter(std::string_view query, std::string_view name) {
  while (!query.empty()) {
    const std::size_t amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
    const std::size_t eq = pair.find('=');
    const auto key = percent_decoded(pair.substr(0, eq));
    if (!key || *key != name) continue;
    return percent_decoded(eq == std::string_view::npos ? std::string_view{} : pair.substr(eq + 1));
  }
  return std::nullopt;
}

AdminResponse Admin::handle(const AdminRequest& request) const {
  const std::string_view method = request.method, path = request.path;
  const bool get = method == "GET";
  if (path == "/health")
    return get ? AdminResponse{200, std::string(kJson), R"({"status":"ok"})"}
               : not_allowed(method, path, "GET");
  if (path == "/clock") return get ? clock() : not_allowed(method, path, "GET");
  if (path == "/clock/advance")
    return method == "POST" ? advance(request.query) : not_allowed(method, path, "POST");
  if (path == "/metrics") return get ? metrics() : not_allowed(method, path, "GET");
  if (starts_path(path, "/tables") || path == "/report")
    return get ? capacity(path, request.query) : not_allowed(method, path, "GET");
  return error(404, "no such path: " + capacity::shown_path(path));
}

AdminResponse Admin::clock() const {
  const Clock& clock = engine_.clock();
  return clock_body(clock.manual() ? "manual" : "wall", epoch_seconds(clock.now_ns()));
}

AdminResponse Admin::advance(std::string_view query) const {
  if (!engine_.clock().manual())
    return error(409,
                 "the server runs on the wall clock, which cannot be advanced; start it with "
                 "--clock manual");
  const auto text = query_parameter(query, "seconds");
  const auto seconds = text ? parse_seconds(*text) : std::nullopt;
  if (!seconds || *seconds <= 0 || *seconds > kMaxAdvanceSeconds)
    return error(400,
                 "seconds must be a number greater than 0 and at most 31536000 (one year): "
                 "POST /clock/advance?seconds=S");
  engine_.advance_clock(*seconds);
  return clock_body({}, epoch_seconds(engine_.clock().now_ns()));
}

AdminResponse Admin::metrics() const {
  const capacity::CapacityManager* manager = engine_.capacity();
  if (manager == nullptr) return capacity_off();
  return {200, std::string(kPrometheusText), manager->metrics_text()};
}

AdminResponse Admin::capacity(std::string_view path, std::string_view query) const {
  const capacity::CapacityManager* manager = engine_.capacity();
  if (manager == nullptr) return capacity_off();
  capacity::AdminResult result = manager->admin_get(path, query);
  return {result.status, std::move(result.content_type), std::move(result.body)};
}

}  // namespace kumo::api
