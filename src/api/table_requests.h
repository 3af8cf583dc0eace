// What CreateTable and UpdateTable share: their throughput, stream and table class members,
// and the TableDescription both answer with (tables.cpp, create_table.cpp,
// update_table.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/attribute_json.h"
#include "api/json_reader.h"
#include "api/operations.h"
#include "model/table.h"

namespace kumo::api {

// ImportTable's TableCreationParameters, read and checked as CreateTable reads and checks
// its request (create_table.cpp): the table it makes, or a ValidationException. Its model
// constraints are added to `coral`, the violations of the rest of ImportTable's request,
// with paths under "tableCreationParameters.", and all thrown together.
TableDefinition table_creation_parameters(const JsonObject& parameters, CoralErrors& coral,
                                          const ServiceOptions& options, double now);

std::string_view billing_mode_name(BillingMode mode);

// An AttributeDefinitions or KeySchema element as the request wrote it.
struct RawAttribute {
  std::optional<std::string_view> name;
  std::optional<std::string_view> type;  // AttributeType, or KeyType
};

// Reads an AttributeDefinitions or KeySchema list, adding each element's model-constraint
// violations under `path` ("attributeDefinitions" or "keySchema").
std::vector<RawAttribute> read_attributes(const JsonArray& list, std::string_view path,
                                          std::string_view type_member,
                                          std::initializer_list<std::string_view> types,
                                          CoralErrors& coral);
// An AttributeType already checked to be "S", "N" or "B".
ScalarType scalar_type_of(std::string_view type);

struct ThroughputRequest {
  std::optional<std::int64_t> read;
  std::optional<std::int64_t> write;
};

// The ProvisionedThroughput member, with its model constraints added to `coral`.
std::optional<ThroughputRequest> read_throughput(const JsonObject& request, CoralErrors& coral);

struct StreamRequest {
  std::optional<bool> enabled;
  std::optional<std::string_view> view_type;
};

// The StreamSpecification member, with its model constraints added to `coral`.
std::optional<StreamRequest> read_stream(const JsonObject& request, CoralErrors& coral);

// TableClass is STANDARD or STANDARD_INFREQUENT_ACCESS.
void check_table_class(std::optional<std::string_view> table_class);

// The status of a table DeleteTable answers for.
inline constexpr std::string_view kDeleting = "DELETING";

// Which WarmThroughput members a description shows: DescribeTable's and UpdateTable's
// every one; CreateTable's the table's only when the request set it, and no index's.
enum class WarmShown : std::uint8_t { kAll, kTable, kNone };

// {"StreamEnabled": true, "StreamViewType": ...} as `member`, when the table's stream is
// enabled (DescribeTable's StreamSpecification, DescribeBackup's StreamDescription).
void write_stream_enabled(JsonWriter& w, std::string_view member, const TableDefinition& t);

// SSEDescription, when the table's encryption is a KMS key (a table encrypted with the
// owned key has none).
void write_sse_description(JsonWriter& w, const Context& ctx, const TableDefinition& t);

// {"<member>": TableDescription} of the table, in status `status`.
std::string table_description_response(const Context& ctx, const TableDefinition& t,
                                       std::string_view member, std::string_view status,
                                       WarmShown warm = WarmShown::kAll);

}  // namespace kumo::api
