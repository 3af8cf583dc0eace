#include "api/service.h"

#include <utility>

#include "api/dispatch.h"
#include "api/operations.h"
#include "model/api_error.h"

namespace kumo::api {

Service::Service(engine::Engine& engine, ServiceOptions options)
    : engine_(engine), options_(std::move(options)) {}

Response Service::handle(std::string_view target, std::string_view body,
                         const Authenticator& auth) const {
  try {
    // One document per I/O thread: it keeps its memory between requests.
    thread_local JsonDocument document;
    struct Release {
      ~Release() { document.clear(); }
    } release;
    if (!body.empty() && !document.parse(body)) throw ApiError::serialization();
    Operation operation = find_operation(target);
    if (!operation) throw ApiError::unknown_operation();
    auth.authenticate();
    if (body.empty()) throw ApiError::serialization();
    if (!document.root().IsObject()) {
      throw ApiError::serialization("Start of list found where not expected");
    }
    Context ctx{engine_, options_};
    return Response{200, operation(ctx, JsonObject(document.root()))};
  } catch (const ApiError& e) {
    return error_response(e);
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
  w.EndObject();
  response.body = json_text(out);
  return response;
}

}  // namespace kumo::api
