#include "api/service.h"

#include "api/exports.h"

#include <utility>

#include "api/dispatch.h"
#include "api/operations.h"
#include "model/api_error.h"

namespace kumo::api {
namespace {

// A transaction cancelled because one of its actions was throttled counts as a throttled
// request, as the throttle would if it had answered alone.
bool cancelled_by_throttle(const ApiError& e) {
  if (e.code() != ApiError::Code::kTransactionCanceled) return false;
  for (const auto& reason : e.cancellation_reasons()) {
    if (reason.code == "ProvisionedThroughputExceeded" || reason.code == "ThrottlingError") {
      return true;
    }
  }
  return false;
}

// Appends `name` to the ','-separated `list` unless it is there already.
void add_table(std::string& list, const JsonValue& name) {
  if (!name.IsString()) return;
  const std::string_view text = json_string(name);
  for (std::string_view rest = list; !rest.empty();) {
    const auto comma = rest.find(',');
    if (rest.substr(0, comma) == text) return;
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
  }
  if (!list.empty()) list.push_back(',');
  list.append(text);
}

// The tables a request names: its TableName, ResourceArn or StreamArn, the keys of
// RequestItems (batch operations) and the TableName of each TransactItems action. Members
// of the wrong type are skipped: the operation reports them.
std::string request_tables(const JsonValue& root) {
  std::string tables;
  for (const char* key : {"TableName", "ResourceArn", "StreamArn"}) {
    const auto member = root.FindMember(key);
    if (member != root.MemberEnd()) add_table(tables, member->value);
  }
  const auto items = root.FindMember("RequestItems");
  if (items != root.MemberEnd() && items->value.IsObject()) {
    for (const auto& table : items->value.GetObject()) add_table(tables, table.name);
  }
  const auto actions = root.FindMember("TransactItems");
  if (actions != root.MemberEnd() && actions->value.IsArray()) {
    for (const auto& action : actions->value.GetArray()) {
      if (!action.IsObject()) continue;
      for (const auto& kind : action.GetObject()) {
        if (!kind.value.IsObject()) continue;
        const auto name = kind.value.FindMember("TableName");
        if (name != kind.value.MemberEnd()) add_table(tables, name->value);
      }
    }
  }
  return tables;
}

// Records the request's outcome on every table whose meters it used; an error before any
// table was used is recorded on none (the account's UserErrors).
void record_outcome(capacity::CapacityManager& manager, const capacity::RequestOutcome& outcome) {
  const auto tables = engine::RequestScope::tables();
  if (tables.empty() && (outcome.user_error || outcome.system_error)) {
    manager.record_request(nullptr, outcome);
  }
  for (const auto& meters : tables) manager.record_request(meters.get(), outcome);
  engine::RequestScope::clear();
}

}  // namespace

Service::Service(engine::Engine& engine, ServiceOptions options)
    : engine_(engine), options_(std::move(options)) {
  // Exports and imports a stopped process left in progress: at start, and on a storage that
  // other processes share, also as they stop (their jobs are claimed: docs/data-movement.md).
  resume_exports(engine_);
  resume_imports(engine_, options_);
  if (engine_.storage().shared()) {
    engine_.set_data_job_hook([&engine = engine_, options = options_] {
      resume_exports(engine);
      resume_imports(engine, options);
    });
  }
}

Service::~Service() {
  engine_.set_data_job_hook(nullptr);
}

Response Service::handle(std::string_view target, std::string_view body,
                         const Authenticator& auth) const {
  std::string tables;
  const Found found = find_operation(target);
  capacity::CapacityManager* const manager = engine_.capacity();
  std::int64_t start_ns = 0;
  if (manager) {
    engine::RequestScope::clear();
    start_ns = engine_.clock().now_ns();
  }
  try {
    // One document per I/O thread: it keeps its memory between requests.
    thread_local JsonDocument document;
    struct Release {
      ~Release() { document.clear(); }
    } release;
    if (!body.empty() && !document.parse(body)) throw ApiError::serialization();
    if (!found.answer) throw ApiError::unknown_operation();
    auth.authenticate();
    if (body.empty()) throw ApiError::serialization();
    if (!document.root().IsObject()) {
      throw ApiError::serialization("Start of list found where not expected");
    }
    if (options_.report_tables) tables = request_tables(document.root());
    Context ctx{engine_, options_};
    Response response{200, found.answer(ctx, JsonObject(document.root())), std::move(tables)};
    if (manager) {
      capacity::RequestOutcome outcome{.op = found.metered};
      outcome.latency_ns = engine_.clock().now_ns() - start_ns;
      outcome.returned_items = engine::RequestScope::returned_items();
      record_outcome(*manager, outcome);
    }
    return response;
  } catch (const ApiError& e) {
    Response response = error_response(e);
    response.tables = std::move(tables);
    if (manager) {
      capacity::RequestOutcome outcome{.op = found.metered};
      outcome.throttled = e.throttle() || cancelled_by_throttle(e);
      outcome.conditional_check_failed = e.code() == ApiError::Code::kConditionalCheckFailed;
      outcome.system_error = response.status >= 500;
      outcome.user_error =
          !outcome.throttled && !outcome.conditional_check_failed && !outcome.system_error;
      record_outcome(*manager, outcome);
    }
    return response;
  }
  // Anything else (a StorageError, bad_alloc) is an internal failure: it reaches the HTTP
  // server, which logs it with the request id and answers InternalServerError.
}

Response error_response(const ApiError& error) {
  Response response;
  response.status = error.http_status();
  JsonOut out;
  JsonWriter w(out);
  w.StartObject();
  write_key(w, "__type");
  write_string(w, error.type());
  if (error.message()) {
    write_key(w, error.message_member());
    write_string(w, *error.message());
  }
  if (error.item()) {
    write_key(w, "Item");
    write_item(w, *error.item());
  }
  if (!error.cancellation_reasons().empty()) {
    write_key(w, "CancellationReasons");
    w.StartArray();
    for (const auto& reason : error.cancellation_reasons()) {
      w.StartObject();
      write_key(w, "Code");
      write_string(w, reason.code);
      if (reason.message) {
        write_key(w, "Message");
        write_string(w, *reason.message);
      }
      if (reason.item) {
        write_key(w, "Item");
        write_item(w, *reason.item);
      }
      w.EndObject();
    }
    w.EndArray();
  }
  if (!error.throttling_reasons().empty()) {
    // ThrottlingException's model names the member throttlingReasons; the other two
    // exceptions' ThrottlingReasons. ThrottlingException carries both spellings, so a
    // client reading either finds it (SDKs ignore members they do not model).
    auto write_reasons = [&](const char* member) {
      write_key(w, member);
      w.StartArray();
      for (const auto& reason : error.throttling_reasons()) {
        w.StartObject();
        write_key(w, "reason");
        write_string(w, reason.reason);
        write_key(w, "resource");
        write_string(w, reason.resource);
        w.EndObject();
      }
      w.EndArray();
    };
    if (error.code() == ApiError::Code::kThrottling) write_reasons("throttlingReasons");
    write_reasons("ThrottlingReasons");
  }
  w.EndObject();
  response.body = json_text(out);
  return response;
}

}  // namespace kumo::api
