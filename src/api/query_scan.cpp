// Query and Scan: key conditions, filters, pagination at 1 MB, Select and capacity.
#include <algorithm>

#include <fmt/format.h>

#include "api/capacity.h"
#include "api/expressions.h"
#include "api/operations.h"
#include "api/stored_item_json.h"
#include "api/table_names.h"
#include "expr/messages.h"
#include "model/api_error.h"
#include "model/capacity.h"

namespace kumo::api {
namespace {

enum class Kind { kQuery, kScan };

// Members both operations read, decoded and checked in DynamoDB's order.
struct ReadRequest {
  std::optional<std::string_view> table_name;
  std::optional<std::string_view> index_name;
  std::optional<std::string_view> select;
  std::optional<std::int64_t> limit;
  bool consistent = false;
  bool forward = true;
  std::string_view capacity_mode = "NONE";
  std::optional<Item> exclusive_start_key;
  std::optional<std::int64_t> segment;
  std::optional<std::int64_t> total_segments;
};

void check_select(Kind kind, const ReadRequest& r, const JsonObject& request) {
  // Query words these with the write envelope's prefix; Scan does not.
  auto fail = [&](std::string message) {
    if (kind == Kind::kQuery) {
      throw ApiError::coral_validation("1 validation error detected: " + message);
    }
    throw ApiError::validation(std::move(message));
  };
  const bool expression = request.has("ProjectionExpression");
  const bool attributes = request.has("AttributesToGet");
  const std::string_view select = r.select.value_or("");
  if (select == "SPECIFIC_ATTRIBUTES" && !expression && !attributes) {
    fail(
        "Must specify the AttributesToGet or ProjectionExpression when choosing to get "
        "SPECIFIC_ATTRIBUTES");
  }
  if (r.select && select != "SPECIFIC_ATTRIBUTES" && (expression || attributes)) {
    fail(fmt::format("Cannot specify the {} when choosing to get {}",
                     attributes ? "AttributesToGet" : "ProjectionExpression",
                     select == "COUNT" ? "only the Count" : select));
  }
  if (select == "ALL_PROJECTED_ATTRIBUTES" && !r.index_name) {
    fail("ALL_PROJECTED_ATTRIBUTES can be used only when Querying using an IndexName");
  }
}

ReadRequest read_request(Kind kind, const JsonObject& request, RequestExpressions& expressions) {
  ReadRequest r;
  r.table_name = request.string("TableName");
  r.index_name = request.string("IndexName");
  r.select = request.string("Select");
  r.limit = request.integer("Limit");
  r.consistent = request.boolean("ConsistentRead").value_or(false);
  r.forward = request.boolean("ScanIndexForward").value_or(true);
  r.capacity_mode = request.string("ReturnConsumedCapacity").value_or("NONE");
  if (kind == Kind::kScan) {
    r.segment = request.integer("Segment");
    r.total_segments = request.integer("TotalSegments");
  }
  if (auto list = request.array("AttributesToGet")) list->strings();
  const DuplicateWording duplicates =
      kind == Kind::kQuery ? DuplicateWording::kQuoted : DuplicateWording::kPlain;
  Validation start_validation(duplicates);
  if (auto start = request.element("ExclusiveStartKey")) {
    r.exclusive_start_key = decode_item(*start, start_validation);
  }
  Validation validation(duplicates);
  expressions.read_maps(request, validation);

  CoralErrors coral;
  check_item_table_name(coral, r.table_name, "tableName");
  coral.check_table_name(r.index_name, "indexName", false);
  check_attributes_to_get(request, "attributesToGet", coral);
  if (r.limit && *r.limit < 1) {
    // Query names the member as the request does, without its value; Scan as before.
    constexpr std::string_view kMinimum = "Member must have value greater than or equal to 1";
    if (kind == Kind::kQuery) {
      coral.add_without_value("Limit", kMinimum);
    } else {
      coral.add(std::to_string(*r.limit), "limit", kMinimum);
    }
  }
  coral.check_enum(r.select, "select",
                   {"SPECIFIC_ATTRIBUTES", "COUNT", "ALL_ATTRIBUTES", "ALL_PROJECTED_ATTRIBUTES"});
  check_return_consumed_capacity(request, coral);
  coral.check_enum(request.string("ConditionalOperator"), "conditionalOperator", {"OR", "AND"});
  if (r.segment && *r.segment < 0) {
    coral.add(std::to_string(*r.segment), "segment",
              "Member must have value greater than or equal to 0");
  }
  if (r.segment && *r.segment > 999999) {
    coral.add(std::to_string(*r.segment), "segment",
              "Member must have value less than or equal to 999999");
  }
  if (r.total_segments && *r.total_segments < 1) {
    coral.add(std::to_string(*r.total_segments), "totalSegments",
              "Member must have value greater than or equal to 1");
  }
  if (r.total_segments && *r.total_segments > 1000000) {
    coral.add(std::to_string(*r.total_segments), "totalSegments",
              "Member must have value less than or equal to 1000000");
  }
  coral.throw_if_any();

  if (kind == Kind::kScan) {
    if (r.segment && !r.total_segments) {
      throw ApiError::validation(
          "The TotalSegments parameter is required but was not present in the request when "
          "Segment parameter is present");
    }
    if (r.total_segments && !r.segment) {
      throw ApiError::validation(
          "The Segment parameter is required but was not present in the request when parameter "
          "TotalSegments is present");
    }
    if (r.segment && *r.segment >= *r.total_segments) {
      throw ApiError::validation(fmt::format(
          "The Segment parameter is zero-based and must be less than parameter TotalSegments: "
          "Segment: {} is not less than TotalSegments: {}",
          *r.segment, *r.total_segments));
    }
  }
  check_select(kind, r, request);
  // A bad value inside ExclusiveStartKey: number and duplicate messages stand alone, the
  // others are introduced as an invalid starting key.
  if (start_validation.failed()) {
    const std::string& m = *start_validation.message();
    const bool bare = m.find("numeric") != std::string::npos ||
                      m.find("Number") != std::string::npos ||
                      m.find("significant digits") != std::string::npos ||
                      m.find("duplicates") != std::string::npos;
    throw ApiError::validation(bare ? m : "The provided starting key is invalid: " + m);
  }
  validation.throw_if_failed();
  if (kind == Kind::kQuery) {
    expressions.compile(
        request, {.projection = true,
                  .filter = true,
                  .key_condition = true,
                  .values_null_tail = "FilterExpression and KeyConditionExpression are null"});
    if (!expressions.key_condition) {
      throw ApiError::validation(
          "Either the KeyConditions or KeyConditionExpression parameter must be specified in the "
          "request.");
    }
  } else {
    expressions.compile(
        request,
        {.projection = true, .filter = true, .values_null_tail = "FilterExpression is null"});
  }
  return r;
}

// A read of a global secondary index asks only for attributes the index projects (a
// local index fetches the others from the table).
void check_projected(const IndexDefinition& index, const RequestExpressions& expressions) {
  if (!index.global || index.projection.type == ProjectionType::ALL) return;
  auto projected = [&](std::string_view name) {
    auto among = [&](const std::vector<std::string>& names) {
      return std::find(names.begin(), names.end(), name) != names.end();
    };
    return among(index.key_attributes) || among(index.projection.non_key_attributes);
  };
  auto check = [&](std::string_view name) {
    if (projected(name)) return;
    throw ApiError::validation(fmt::format(
        "One or more parameter values were invalid: Attribute {} is not projected into global "
        "secondary index {}",
        name, index.name));
  };
  if (expressions.projection) {
    for (std::string_view name : expressions.projection->attribute_names()) check(name);
  } else if (expressions.attributes_to_get) {
    for (const std::string& name : *expressions.attributes_to_get) check(name);
  }
}

// The index a read names, with the checks that depend on it.
const IndexDefinition* read_index(const TableDefinition& table, const ReadRequest& r,
                                  const RequestExpressions& expressions) {
  if (!r.index_name) return nullptr;
  const IndexDefinition* index = table.find_index(*r.index_name);
  if (!index) {
    throw ApiError::validation("The table does not have the specified index: " +
                               std::string(*r.index_name));
  }
  if (index->backfilling) {
    throw ApiError::validation("Cannot read from backfilling global secondary index: " +
                               index->name);
  }
  if (index->global && r.consistent) {
    throw ApiError::validation("Consistent reads are not supported on global secondary indexes");
  }
  if (index->global && r.select == "ALL_ATTRIBUTES" &&
      index->projection.type != ProjectionType::ALL) {
    throw ApiError::validation(fmt::format(
        "One or more parameter values were invalid: Select type ALL_ATTRIBUTES is not "
        "supported for global secondary index {} because its projection type is not ALL",
        index->name));
  }
  check_projected(*index, expressions);
  return index;
}

// Whether the page's items must be built: to filter or project them, or to replace LSI
// entries with the table's items (on an LSI whose projection is partial, ALL_ATTRIBUTES or
// a projection reads the items from the table). Otherwise the response is written straight
// from the stored items.
bool fetches_from_table(const IndexDefinition* index, const ReadRequest& r,
                        const RequestExpressions& expressions) {
  return index && !index->global && index->projection.type != ProjectionType::ALL &&
         (r.select == "ALL_ATTRIBUTES" || expressions.projects());
}

struct BuiltItems {
  std::vector<Item> items;
  std::size_t table_bytes = 0;  // bytes read from the table, which the read pays for
};

std::optional<BuiltItems> build_items(const Context& ctx, const TableDefinition& table,
                                      const IndexDefinition* index, const ReadRequest& r,
                                      const RequestExpressions& expressions,
                                      const engine::Page& page) {
  const bool fetch = fetches_from_table(index, r, expressions);
  if (!fetch && !expressions.filter && !expressions.projects()) return std::nullopt;
  BuiltItems built;
  built.items.reserve(page.items.size());
  for (const auto& stored : page.items) built.items.push_back(stored.decode());
  if (!fetch) return built;
  for (auto& entry : built.items) {
    Item key;
    key.emplace(table.key.hash.name, entry.at(table.key.hash.name));
    if (table.key.range) key.emplace(table.key.range->name, entry.at(table.key.range->name));
    if (std::optional<Item> item = ctx.engine.get_item(table, key)) {
      built.table_bytes += item_size(*item);
      entry = std::move(*item);
    }
  }
  return built;
}

// What a page cost: the sizes read summed and rounded up once; a GSI read is charged to the
// index (eventually consistent), an LSI read to the index plus any items fetched from the
// table.
ConsumedCapacity page_capacity(const ReadRequest& r, const IndexDefinition* index,
                               const engine::Page& page, std::size_t table_bytes) {
  ConsumedCapacity capacity{std::string(*r.table_name), 0, {}};
  if (!index) {
    capacity.table = read_capacity_units(page.bytes_read, r.consistent);
    return capacity;
  }
  capacity.indexes.push_back(
      {index->name, index->global, read_capacity_units(page.bytes_read, r.consistent)});
  if (table_bytes) capacity.table = read_capacity_units(table_bytes, r.consistent);
  return capacity;
}

// ExclusiveStartKey of an index read: exactly the index key components and the table key.
void check_index_start_key(const IndexDefinition& index, const Item& key) {
  if (key.size() != index.key_attributes.size()) {
    throw ApiError::validation("The provided starting key is invalid");
  }
  for (const auto& name : index.key_attributes) {
    if (!key.count(name)) throw ApiError::validation("The provided starting key is invalid");
  }
  for (const auto* components : {&index.hash, &index.range}) {
    for (const auto& d : *components) {
      if (key.at(d.name).type() != to_attr_type(d.type)) {
        throw ApiError::validation(
            "The provided starting key is invalid: The provided key element does not match the "
            "schema");
      }
    }
  }
}

// ExclusiveStartKey must be exactly the table's key.
void check_start_key(const TableDefinition& table, const Item& key) {
  const std::size_t expected = table.key.range ? 2 : 1;
  if (key.size() != expected || !key.count(table.key.hash.name) ||
      (table.key.range && !key.count(table.key.range->name))) {
    throw ApiError::validation("The provided starting key is invalid");
  }
  auto typed = [&](const AttributeDefinition& d) {
    return key.at(d.name).type() == to_attr_type(d.type);
  };
  if (!typed(table.key.hash) || (table.key.range && !typed(*table.key.range))) {
    throw ApiError::validation(
        "The provided starting key is invalid: The provided key element does not match the schema");
  }
}

// A query of a table without a sort key reads at most one item: it has no next page.
void check_start_key_restartable(const TableDefinition& table, const Item& key) {
  if (table.key.range) return;
  const AttributeValue& value = key.at(table.key.hash.name);
  throw ApiError::validation(
      fmt::format("The provided exclusive start key is invalid: ExclusiveStartKey: {{{}={}}}",
                  table.key.hash.name, expr::msg::render_value(value)));
}

std::vector<std::string> key_names(const TableDefinition& table) {
  std::vector<std::string> names{table.key.hash.name};
  if (table.key.range) names.push_back(table.key.range->name);
  return names;
}

// The response to a page: from the built items when there are (filter, projection),
// else straight from the stored ones.
std::string page_response(const ReadRequest& r, const RequestExpressions& expressions,
                          const engine::Page& page, const std::optional<BuiltItems>& built,
                          const ConsumedCapacity& capacity) {
  const bool count_only = r.select == "COUNT";
  JsonOut out(nullptr, json_capacity(count_only ? 0 : page.bytes_read));
  JsonWriter w(out);
  w.StartObject();
  std::size_t count = 0;
  if (!count_only) {
    write_key(w, "Items");
    w.StartArray();
  }
  if (built) {
    for (const auto& item : built->items) {
      if (expressions.filter && !expressions.filter->matches(item)) continue;
      ++count;
      if (!count_only) write_item(w, expressions.projects() ? expressions.project(item) : item);
    }
  } else {
    count = page.items.size();
    if (!count_only) {
      for (const auto& stored : page.items) write_item(w, stored);
    }
  }
  if (!count_only) w.EndArray();
  engine::RequestScope::returned(count);
  write_key(w, "Count");
  w.Uint64(count);
  write_key(w, "ScannedCount");
  w.Uint64(page.items.size());
  if (page.last_evaluated_key) {
    write_key(w, "LastEvaluatedKey");
    write_item(w, *page.last_evaluated_key);
  }
  write_consumed_capacity(w, r.capacity_mode, capacity);
  w.EndObject();
  return json_text(out);
}

engine::PageOptions page_options(const ReadRequest& r) {
  engine::PageOptions options;
  options.forward = r.forward;
  options.limit = r.limit ? static_cast<std::size_t>(*r.limit) : 0;
  options.exclusive_start_key = r.exclusive_start_key;
  options.consistent = r.consistent;
  return options;
}

engine::SortCondition to_sort_condition(const expr::KeyTerm& term) {
  engine::SortCondition sort;
  using Op = engine::SortCondition::Op;
  switch (term.op) {
    case expr::KeyOperator::kEq:
      sort.op = Op::kEq;
      break;
    case expr::KeyOperator::kLt:
      sort.op = Op::kLt;
      break;
    case expr::KeyOperator::kLe:
      sort.op = Op::kLe;
      break;
    case expr::KeyOperator::kGt:
      sort.op = Op::kGt;
      break;
    case expr::KeyOperator::kGe:
      sort.op = Op::kGe;
      break;
    case expr::KeyOperator::kBetween:
      sort.op = Op::kBetween;
      break;
    case expr::KeyOperator::kBeginsWith:
      sort.op = Op::kBeginsWith;
      break;
  }
  sort.value = term.value;
  sort.value2 = term.upper;
  return sort;
}

}  // namespace

std::string query(const Context& ctx, const JsonObject& request) {
  RequestExpressions expressions;
  ReadRequest r = read_request(Kind::kQuery, request, expressions);
  engine::TablePtr table = data_table(ctx, *r.table_name);
  const IndexDefinition* index = read_index(*table, r, expressions);
  if (auto conditions = request.object("KeyConditions");
      conditions && !request.has("KeyConditionExpression") && !(index && index->global) &&
      conditions->size() > 2) {
    throw ApiError::validation("Conditions can be of length 1 or 2 only");
  }
  expr::KeyCondition key = index ? expressions.key_condition->resolve(index->hash, index->range)
                                 : expressions.key_condition->resolve(table->key);
  std::vector<std::string> keys;
  if (index) {
    for (const auto& d : index->hash) keys.push_back(d.name);
    for (const auto& d : index->range) keys.push_back(d.name);
  } else {
    keys = key_names(*table);
  }
  if (auto query_filter = request.object("QueryFilter")) {
    for (auto [name, value] : *query_filter) {
      (void)value;
      if (std::find(keys.begin(), keys.end(), name) != keys.end()) {
        throw ApiError::validation(fmt::format(
            "QueryFilter can only contain non-primary key attributes: Primary key attribute: {}",
            name));
      }
    }
  } else if (expressions.filter) {
    expressions.filter->check_no_key_attributes(keys);
  }

  // Equality on a prefix of the RANGE components; the last constrained one may be a range.
  std::vector<AttributeValue> hash, range_equal;
  for (const auto& term : key.hash) hash.push_back(term.value);
  engine::SortCondition sort;
  for (std::size_t i = 0; i < key.range.size(); ++i) {
    if (i + 1 < key.range.size()) {
      range_equal.push_back(key.range[i].value);
    } else {
      sort = to_sort_condition(key.range[i]);
    }
  }
  if (r.exclusive_start_key) {
    const Item& start = *r.exclusive_start_key;
    if (index) {
      check_index_start_key(*index, start);
    } else {
      check_start_key(*table, start);
      check_start_key_restartable(*table, start);
    }
    for (const auto& term : key.hash) {
      if (!(start.at(term.attribute) == term.value)) {
        throw ApiError::validation(
            "The provided starting key is outside query boundaries based on provided conditions");
      }
    }
    for (const auto& term : key.range) {
      if (!term.matches(start.at(term.attribute))) {
        throw ApiError::validation(
            "The provided starting key does not match the range key predicate");
      }
    }
    if (!index && sort.op == engine::SortCondition::Op::kEq) {
      throw ApiError::validation("The query can return at most one row and cannot be restarted");
    }
  }
  const engine::Metering metering{.op = capacity::Operation::kQuery};
  engine::Page page = index
                          ? ctx.engine.query_index(*table, *index, hash, range_equal, sort,
                                                   page_options(r), metering)
                          : ctx.engine.query(*table, hash.front(), sort, page_options(r), metering);
  const auto built = build_items(ctx, *table, index, r, expressions, page);
  const std::size_t table_bytes = built ? built->table_bytes : 0;
  ctx.engine.charge_read(*table, page, table_bytes, r.consistent, metering);
  return page_response(r, expressions, page, built, page_capacity(r, index, page, table_bytes));
}

std::string scan(const Context& ctx, const JsonObject& request) {
  RequestExpressions expressions;
  ReadRequest r = read_request(Kind::kScan, request, expressions);
  engine::TablePtr table = data_table(ctx, *r.table_name);
  const IndexDefinition* index = read_index(*table, r, expressions);
  const auto segment = static_cast<std::uint32_t>(r.segment.value_or(0));
  const auto total = static_cast<std::uint32_t>(r.total_segments.value_or(1));
  if (r.exclusive_start_key) {
    if (index) {
      check_index_start_key(*index, *r.exclusive_start_key);
    } else {
      check_start_key(*table, *r.exclusive_start_key);
    }
    if (ctx.engine.segment_of(*table, *r.exclusive_start_key, total, index) != segment) {
      throw ApiError::validation(
          fmt::format("The provided starting key is invalid: Invalid ExclusiveStartKey. Please use "
                      "ExclusiveStartKey with correct Segment. TotalSegments: {} Segment: {}",
                      total, segment));
    }
  }
  const engine::Metering metering{.op = capacity::Operation::kScan};
  engine::Page page =
      index ? ctx.engine.scan_index(*table, *index, segment, total, page_options(r), metering)
            : ctx.engine.scan(*table, segment, total, page_options(r), metering);
  const auto built = build_items(ctx, *table, index, r, expressions, page);
  const std::size_t table_bytes = built ? built->table_bytes : 0;
  ctx.engine.charge_read(*table, page, table_bytes, r.consistent, metering);
  return page_response(r, expressions, page, built, page_capacity(r, index, page, table_bytes));
}

}  // namespace kumo::api
