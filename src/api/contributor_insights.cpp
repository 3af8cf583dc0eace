// UpdateContributorInsights, DescribeContributorInsights, ListContributorInsights. The
// settings are kept per table and GSI in the catalog; the status shown follows from them and
// the engine's clock (model/insights.h). The key lists the rules stand for are kept by the
// capacity layer while a resource's insights are ENABLED.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/operations.h"
#include "api/table_names.h"
#include "model/api_error.h"
#include "model/insights.h"
#include "model/mutex.h"

namespace kumo::api {
namespace {

constexpr std::int64_t kMaxListResults = 100;

constexpr std::string_view kRuleLimitDescription =
    "Amazon CloudWatch Contributor Insights rule limit reached. Please disable Contributor "
    "Insights for other tables/indexes OR disable other CloudWatch Contributor Insights rules "
    "before retrying.";

// Enables are serialised so that two of them cannot both take the last room under the
// account's rule quota.
Mutex& update_mutex() {
  static Mutex mutex;
  return mutex;
}

[[noreturn]] void throw_index_not_found(const TableDefinition& table, std::string_view index) {
  throw ApiError::resource_not_found("Requested resource not found: Index: " + std::string(index) +
                                     " not found for table: " + table.name);
}

// The GSI `index` names on `table` (null for the table itself). An unknown index or a
// local secondary index is ResourceNotFoundException.
const IndexDefinition* resource_index(const TableDefinition& table,
                                      std::optional<std::string_view> index) {
  if (!index) return nullptr;
  const IndexDefinition* found = table.find_index(*index);
  if (!found || !found->global) throw_index_not_found(table, *index);
  return found;
}

// The settings to change in a copy of the table's definition.
InsightsSettings& settings_in(TableDefinition& table, std::optional<std::string_view> index) {
  if (!index) return table.capacity.insights;
  for (auto& gsi : table.global_indexes) {
    if (gsi.name == *index) return gsi.capacity.insights;
  }
  throw_index_not_found(table, *index);
}

const InsightsSettings& settings_of(const TableDefinition& table, const IndexDefinition* index) {
  return index ? index->capacity.insights : table.capacity.insights;
}

// A sort key gives a resource the partition + sort key rules.
bool has_sort_key(const TableDefinition& table, const IndexDefinition* index) {
  return index ? !index->range.empty() : table.key.range.has_value();
}

std::vector<engine::TablePtr> all_tables(const Context& ctx) {
  bool more = false;
  std::vector<engine::TablePtr> tables;
  for (const auto& name :
       ctx.engine.catalog().list("", std::numeric_limits<std::size_t>::max(), &more)) {
    if (engine::TablePtr table = ctx.engine.catalog().find(name)) tables.push_back(table);
  }
  return tables;
}

// The rules every table and GSI holds, except those of the resource being changed.
std::size_t rules_in_use(const Context& ctx, std::string_view table_name,
                         const IndexDefinition* except) {
  std::size_t rules = 0;
  for (const auto& table : all_tables(ctx)) {
    const bool same_table = table->name == table_name;
    if (!(same_table && !except)) {
      rules += insights_rules_held(table->capacity.insights, has_sort_key(*table, nullptr));
    }
    for (const auto& gsi : table->global_indexes) {
      if (same_table && except && gsi.name == except->name) continue;
      rules += insights_rules_held(gsi.capacity.insights, has_sort_key(*table, &gsi));
    }
  }
  return rules;
}

double clock_now(const Context& ctx) {
  return ctx.engine.clock().now();
}

double insights_delay(const Context& ctx) {
  return ctx.options.capacity.insights_delay;
}

std::string_view mode_name(const InsightsSettings& settings) {
  return settings.mode.empty() ? kAccessedAndThrottledKeys : std::string_view(settings.mode);
}

void write_resource(JsonWriter& w, const TableDefinition& table, const IndexDefinition* index) {
  write_key(w, "TableName");
  write_string(w, table.name);
  if (index) {
    write_key(w, "IndexName");
    write_string(w, index->name);
  }
}

void check_resource_members(CoralErrors& coral, std::optional<std::string_view> table,
                            std::optional<std::string_view> index) {
  check_table_name_or_arn(coral, table, "tableName");
  coral.check_table_name(index, "indexName", false);
}

// --- UpdateContributorInsights ---

struct UpdateRequest {
  std::string_view table;
  std::optional<std::string_view> index;
  bool enable = false;
  std::string_view mode;  // as given, else ACCESSED_AND_THROTTLED_KEYS
};

UpdateRequest read_update(const JsonObject& request) {
  CoralErrors coral;
  auto table = request.string("TableName");
  auto index = request.string("IndexName");
  auto action = request.string("ContributorInsightsAction");
  auto mode = request.string("ContributorInsightsMode");
  check_resource_members(coral, table, index);
  coral.require(action.has_value(), "contributorInsightsAction");
  coral.check_enum(action, "contributorInsightsAction", {"ENABLE", "DISABLE"});
  coral.check_enum(mode, "contributorInsightsMode", {kAccessedAndThrottledKeys, kThrottledKeys});
  coral.throw_if_any();
  return {*table, index, *action == "ENABLE", mode.value_or(kAccessedAndThrottledKeys)};
}

// Applies the request to the resource's settings; returns the status to answer and the
// settings as they are afterwards.
InsightsStatus apply_update(const Context& ctx, const UpdateRequest& req,
                            const TableDefinition& table, const IndexDefinition* index,
                            InsightsSettings& settings) {
  // Changes are dated to the millisecond, as DynamoDB dates them (and names rules).
  const std::int64_t now_ms = ctx.engine.clock().now_ns() / 1'000'000;
  const double now = static_cast<double>(now_ms) / 1000;
  if (!req.enable) return insights_disable(settings, now, insights_delay(ctx));
  if (index && index->backfilling) {
    throw ApiError::validation(
        "Table or Index is not in a valid state to update Key Access Insights: IndexStatus must "
        "be ACTIVE to enable ContributorInsights.");
  }
  const std::size_t wanted = insights_rule_count(req.mode, has_sort_key(table, index));
  const bool room =
      rules_in_use(ctx, table.name, index) + wanted <= ctx.options.capacity.insights_rule_quota;
  return insights_enable(settings, req.mode, room, now, now_ms, insights_delay(ctx));
}

// --- ListContributorInsights ---

// A listed resource: its table and GSI (empty for the table itself), tables in name order,
// each before its GSIs in name order. A NextToken is the last one listed, "<table>" or
// "<table>/<index>".
struct Position {
  std::string_view table, index;
  bool operator<(const Position& o) const {
    return table != o.table ? table < o.table : index < o.index;
  }
};

std::string token_of(const Position& p) {
  return p.index.empty() ? std::string(p.table) : std::string(p.table) + "/" + std::string(p.index);
}

bool name_ok(std::string_view name) {
  CoralErrors coral;
  coral.check_table_name(name, "name");
  return coral.empty();
}

Position position_of(std::string_view token) {
  const std::size_t slash = token.find('/');
  Position p{token.substr(0, slash),
             slash == std::string_view::npos ? std::string_view() : token.substr(slash + 1)};
  if (!name_ok(p.table) || (slash != std::string_view::npos && !name_ok(p.index))) {
    throw ApiError::validation("Invalid NextToken provided: " + std::string(token));
  }
  return p;
}

struct Listed {
  const TableDefinition* table;
  const IndexDefinition* index;
  InsightsStatus status;
};

// The table's resources whose status is not DISABLED, in list order.
void add_listed(const Context& ctx, const TableDefinition& table, std::vector<Listed>& out) {
  const double now = clock_now(ctx);
  std::vector<const IndexDefinition*> gsis;
  for (const auto& gsi : table.global_indexes) gsis.push_back(&gsi);
  std::sort(gsis.begin(), gsis.end(), [](auto* a, auto* b) { return a->name < b->name; });
  gsis.insert(gsis.begin(), nullptr);
  for (const IndexDefinition* index : gsis) {
    const InsightsStatus status =
        insights_status(settings_of(table, index), now, insights_delay(ctx));
    if (status != InsightsStatus::kDisabled) out.push_back({&table, index, status});
  }
}

Position position(const Listed& entry) {
  return {entry.table->name, entry.index ? std::string_view(entry.index->name) : ""};
}

void write_summary(JsonWriter& w, const Listed& entry) {
  w.StartObject();
  write_resource(w, *entry.table, entry.index);
  write_key(w, "ContributorInsightsStatus");
  write_string(w, insights_status_name(entry.status));
  write_key(w, "ContributorInsightsMode");
  write_string(w, mode_name(settings_of(*entry.table, entry.index)));
  w.EndObject();
}

}  // namespace

std::string update_contributor_insights(const Context& ctx, const JsonObject& request) {
  const UpdateRequest req = read_update(request);
  MutexLock lock(update_mutex());
  engine::TablePtr table = control_table(ctx, req.table);
  const IndexDefinition* index = resource_index(*table, req.index);
  InsightsSettings settings = settings_of(*table, index);
  const InsightsStatus status = apply_update(ctx, req, *table, index, settings);
  if (settings != settings_of(*table, index)) {
    ctx.engine.update_table(table->name,
                            [&](TableDefinition& t) { settings_in(t, req.index) = settings; });
  }
  JsonOut out;
  JsonWriter w(out);
  w.StartObject();
  write_resource(w, *table, index);
  write_key(w, "ContributorInsightsStatus");
  write_string(w, insights_status_name(status));
  write_key(w, "ContributorInsightsMode");
  write_string(w, mode_name(settings));
  w.EndObject();
  return json_text(out);
}

std::string describe_contributor_insights(const Context& ctx, const JsonObject& request) {
  CoralErrors coral;
  auto name = request.string("TableName");
  auto index_name = request.string("IndexName");
  check_resource_members(coral, name, index_name);
  coral.throw_if_any();
  engine::TablePtr table = control_table(ctx, *name);
  const IndexDefinition* index = resource_index(*table, index_name);
  const InsightsSettings& settings = settings_of(*table, index);
  const InsightsStatus status = insights_status(settings, clock_now(ctx), insights_delay(ctx));
  const bool configured = settings.state != InsightsSettings::State::kNever;
  JsonOut out;
  JsonWriter w(out);
  w.StartObject();
  write_resource(w, *table, index);
  if (settings.state == InsightsSettings::State::kEnabled) {  // ENABLING or ENABLED
    write_key(w, "ContributorInsightsRuleList");
    w.StartArray();
    for (const auto& rule :
         insights_rule_names(table->name, index ? std::string_view(index->name) : "", settings.mode,
                             has_sort_key(*table, index), settings.rule_suffix_ms)) {
      write_string(w, rule);
    }
    w.EndArray();
  }
  write_key(w, "ContributorInsightsStatus");
  write_string(w, insights_status_name(status));
  if (configured) {
    write_key(w, "LastUpdateDateTime");
    w.Double(settings.changed);
  }
  if (settings.failed &&
      (status == InsightsStatus::kFailed || status == InsightsStatus::kDisabling)) {
    write_key(w, "FailureException");
    w.StartObject();
    write_key(w, "ExceptionName");
    write_string(w, "LimitExceededException");
    write_key(w, "ExceptionDescription");
    write_string(w, kRuleLimitDescription);
    w.EndObject();
  }
  if (configured) {
    write_key(w, "ContributorInsightsMode");
    write_string(w, mode_name(settings));
  }
  w.EndObject();
  return json_text(out);
}

std::string list_contributor_insights(const Context& ctx, const JsonObject& request) {
  CoralErrors coral;
  auto name = request.string("TableName");
  auto next_token = request.string("NextToken");
  auto max_results = request.integer("MaxResults");
  if (name) check_table_name_or_arn(coral, name, "tableName");
  if (max_results && *max_results > kMaxListResults) {
    coral.add(std::to_string(*max_results), "maxResults",
              "Member must have value less than or equal to 100");
  }
  coral.throw_if_any();
  std::optional<Position> after;
  if (next_token) after = position_of(*next_token);
  std::vector<engine::TablePtr> tables;
  if (name) {
    tables.push_back(control_table(ctx, *name));
  } else {
    tables = all_tables(ctx);
  }
  std::vector<Listed> entries;
  for (const auto& table : tables) add_listed(ctx, *table, entries);
  std::erase_if(entries, [&](const Listed& e) { return after && !(*after < position(e)); });
  // A table's resources are one page; the account's are paged by MaxResults (default and
  // at most 100; a value below 1 is taken as the default).
  std::size_t page = entries.size();
  if (!name) {
    const std::int64_t limit = max_results && *max_results > 0 ? *max_results : kMaxListResults;
    page = std::min(page, static_cast<std::size_t>(limit));
  }
  JsonOut out;
  JsonWriter w(out);
  w.StartObject();
  write_key(w, "ContributorInsightsSummaries");
  w.StartArray();
  for (std::size_t i = 0; i < page; ++i) write_summary(w, entries[i]);
  w.EndArray();
  if (page < entries.size()) {
    write_key(w, "NextToken");
    write_string(w, token_of(position(entries[page - 1])));
  }
  w.EndObject();
  return json_text(out);
}

}  // namespace kumo::api
