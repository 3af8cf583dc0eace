#include <algorithm>

#include <fmt/format.h>

#include "api/table_names.h"
#include "model/api_error.h"

namespace kumo::api {

std::string table_arn(const Context& ctx, std::string_view table_name) {
  return fmt::format("arn:aws:dynamodb:{}:{}:table/{}", ctx.options.region, ctx.options.account_id,
                     table_name);
}

std::string stream_arn(const Context& ctx, std::string_view table_name, std::string_view label) {
  return fmt::format("{}/stream/{}", table_arn(ctx, table_name), label);
}

std::string table_name_of(std::string_view name_or_arn) {
  if (name_or_arn.substr(0, 4) != "arn:") return std::string(name_or_arn);
  // arn:<partition>:dynamodb:<region>:<account>:table/<name>. Tables are shared across
  // regions and accounts, so those parts are not compared.
  std::size_t colons = 0, pos = 0;
  for (; pos < name_or_arn.size() && colons < 5; ++pos) {
    if (name_or_arn[pos] == ':') ++colons;
  }
  std::string_view resource = name_or_arn.substr(pos);
  if (colons == 5 && resource.substr(0, 6) == "table/" && resource.size() > 6 &&
      resource.find('/', 6) == std::string_view::npos &&
      name_or_arn.substr(0, pos).find(":dynamodb:") != std::string_view::npos) {
    return std::string(resource.substr(6));
  }
  throw ApiError::validation(
      fmt::format("Invalid TableArn: Invalid ResourceArn provided as input {}", name_or_arn));
}

void check_table_name_or_arn(CoralErrors& coral, std::optional<std::string_view> value,
                             std::string_view path) {
  if (value && value->substr(0, 4) == "arn:") {
    coral.check_length(*value, path, 1, 1024);
    return;
  }
  coral.check_table_name(value, path);
}

void check_item_table_name(CoralErrors& coral, std::optional<std::string_view> value,
                           std::string_view path) {
  if (value && value->empty()) {
    coral.add(*value, path, "Member must have length greater than or equal to 1");
    return;
  }
  check_table_name_or_arn(coral, value, path);
}

void require_table_name(std::optional<std::string_view> name) {
  if (!name) {
    throw ApiError::validation(
        "The parameter 'TableName' is required but was not present in the request");
  }
}

engine::TablePtr data_table(const Context& ctx, std::string_view name_or_arn) {
  engine::TablePtr table = ctx.engine.find_table(table_name_of(name_or_arn));
  // A table still being restored (CREATING) cannot be read or written yet.
  if (!table || table->restore) throw ApiError::resource_not_found();
  return table;
}

engine::TablePtr control_table(const Context& ctx, std::string_view name_or_arn) {
  engine::TablePtr table = described_table(ctx, name_or_arn);
  if (table->restore) throw table_not_found_error(table->name);
  return table;
}

engine::TablePtr described_table(const Context& ctx, std::string_view name_or_arn) {
  std::string name = table_name_of(name_or_arn);
  engine::TablePtr table = ctx.engine.find_table(name);
  if (!table) throw table_not_found_error(name);
  return table;
}

engine::TablePtr changed_table(const Context& ctx, std::string_view name_or_arn) {
  engine::TablePtr table = described_table(ctx, name_or_arn);
  if (table->restore && table->restore->imports()) throw table_being_created_error(table->name);
  if (table->restore) throw table_not_found_error(table->name);
  return table;
}

ApiError table_being_created_error(std::string_view name) {
  return ApiError::resource_in_use(
      "Attempt to change a resource which is still in use: Table is being created: " +
      std::string(name));
}

ApiError table_not_found_error(std::string_view name) {
  return ApiError::resource_not_found("Requested resource not found: Table: " + std::string(name) +
                                      " not found");
}

void write_key_schema(JsonWriter& w, const std::vector<KeySchemaElement>& schema) {
  w.StartArray();
  for (const auto& k : schema) {
    w.StartObject();
    write_key(w, "AttributeName");
    write_string(w, k.name);
    write_key(w, "KeyType");
    write_string(w, k.type == KeyType::HASH ? "HASH" : "RANGE");
    w.EndObject();
  }
  w.EndArray();
}

void write_provisioned_throughput(JsonWriter& w, const ProvisionedThroughput& throughput) {
  w.StartObject();
  if (throughput.last_increase_date_time > 0) {
    write_key(w, "LastIncreaseDateTime");
    w.Double(throughput.last_increase_date_time);
  }
  if (throughput.last_decrease_date_time > 0) {
    write_key(w, "LastDecreaseDateTime");
    w.Double(throughput.last_decrease_date_time);
  }
  write_key(w, "NumberOfDecreasesToday");
  w.Int64(throughput.number_of_decreases_today);
  write_key(w, "ReadCapacityUnits");
  w.Int64(throughput.read_capacity_units);
  write_key(w, "WriteCapacityUnits");
  w.Int64(throughput.write_capacity_units);
  w.EndObject();
}

}  // namespace kumo::api
