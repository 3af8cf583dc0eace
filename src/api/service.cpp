#include "api/service.h"

#include <array>
#include <utility>

#include "api/operations.h"
#include "model/api_error.h"
#include "storage/storage.h"

namespace kumo::api {
namespace {

constexpr std::string_view kTargetPrefix = "DynamoDB_20120810.";
constexpr std::string_view kStreamsTargetPrefix = "DynamoDBStreams_20120810.";

struct Entry {
  std::string_view name;
  Operation operation;
};

// Operations Kumo answers; any other target is UnknownOperationException, as DynamoDB
// answers an operation it does not have.
constexpr std::array kOperations{
    Entry{"BatchGetItem", batch_get_item},
    Entry{"BatchWriteItem", batch_write_item},
    Entry{"CreateTable", create_table},
    Entry{"DeleteTable", delete_table},
    Entry{"DeleteItem", delete_item},
    Entry{"DescribeEndpoints", describe_endpoints},
    Entry{"DescribeLimits", describe_limits},
    Entry{"DescribeTable", describe_table},
    Entry{"DescribeTimeToLive", describe_time_to_live},
    Entry{"GetItem", get_item},
    Entry{"ListTables", list_tables},
    Entry{"ListTagsOfResource", list_tags_of_resource},
    Entry{"PutItem", put_item},
    Entry{"Query", query},
    Entry{"Scan", scan},
    Entry{"TagResource", tag_resource},
    Entry{"TransactGetItems", transact_get_items},
    Entry{"TransactWriteItems", transact_write_items},
    Entry{"UntagResource", untag_resource},
    Entry{"UpdateItem", update_item},
    Entry{"UpdateTable", update_table},
    Entry{"UpdateTimeToLive", update_time_to_live},
};

// DynamoDB Streams, answered on the same endpoint.
constexpr std::array kStreamsOperations{
    Entry{"DescribeStream", describe_stream},
    Entry{"GetRecords", get_records},
    Entry{"GetShardIterator", get_shard_iterator},
    Entry{"ListStreams", list_streams},
};

template <std::size_t N>
Operation find_in(const std::array<Entry, N>& operations, std::string_view name) {
  for (const auto& e : operations) {
    if (e.name == name) return e.operation;
  }
  return nullptr;
}

Operation find_operation(std::string_view target) {
  if (target.substr(0, kTargetPrefix.size()) == kTargetPrefix) {
    return find_in(kOperations, target.substr(kTargetPrefix.size()));
  }
  if (target.substr(0, kStreamsTargetPrefix.size()) == kStreamsTargetPrefix) {
    return find_in(kStreamsOperations, target.substr(kStreamsTargetPrefix.size()));
  }
  return nullptr;
}

}  // namespace

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
  } catch (const storage::StorageError& e) {
    return error_response(ApiError::internal());
  } catch (const std::exception& e) {
    return error_response(ApiError::internal());
  }
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
