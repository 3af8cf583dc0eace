#include "engine/catalog.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>

#include "codec/item_codec.h"
#include "codec/key_codec.h"
#include "engine/record_fields.h"
#include "model/api_error.h"
#include "model/clock.h"
#include "model/random_seed.h"

namespace kumo::engine {
namespace {

// This thread's Deferrals alive, and whether a change stored under one is not announced yet.
thread_local int deferring = 0;
thread_local bool deferred = false;
// The definition versions this thread's last change raised (table id, version, dropped),
// set in the table's partitions before the change is announced.
struct Raised {
  std::uint32_t table;
  std::uint64_t version;
  bool dropped;
};
thread_local std::vector<Raised> raised;

// What a write of the table does besides its item: its indexes, its TTL attribute, its
// stream's view, point-in-time recovery. A change of any of these raises the table's
// definition version.
std::string write_shape(const TableDefinition& t) {
  std::string out;
  for (const auto* indexes : {&t.local_indexes, &t.global_indexes}) {
    for (const IndexDefinition& index : *indexes) {
      out += std::to_string(index.id) + ":" + index.name + ";";
    }
    out += "|";
  }
  if (t.ttl_enabled) out += "ttl:" + t.ttl_attribute;
  out += "|";
  if (t.stream && t.stream->enabled) out += "stream:" + t.stream->view_type;
  out += "|";
  if (t.pitr) out += "pitr";
  return out;
}

// Catalog records: meta/table/<name> → the definition as a binary attribute map;
// meta/next_table_id → the next id to hand out (ids are never reused, so data of a deleted
// table can never surface in a new one).
constexpr std::string_view kTablePrefix = "meta/table/";
constexpr std::string_view kNextIdKey = "meta/next_table_id";
// meta/catalog_version → the number of changes made to the catalog (decimal), which every
// change expects to be what it read and raises: of two front ends sharing one storage that
// change the catalog at once, one stores its change and the other reloads and tries again.
constexpr std::string_view kVersionKey = "meta/catalog_version";
// meta/drop/<id> → the name of a dropped table whose data is still to be removed: stored
// with the table's removal from the catalog, removed once its data is gone, so that a
// removal cut short (the process stopped) is done again, by this process or another one.
constexpr std::string_view kDropPrefix = "meta/drop/";
// Attempts of a change that meets another front end's changes.
constexpr int kChangeAttempts = 32;

AttributeValue num(double v) {
  Decimal d;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6f", v);
  Decimal::parse(buf, &d);
  return AttributeValue::number(d);
}
AttributeValue num(std::int64_t v) {
  return AttributeValue::number(Decimal::from_int(v));
}
AttributeValue flag(bool b) {
  return AttributeValue::boolean(b);
}

const AttributeValue* field(const Item& m, std::string_view name) {
  auto it = m.find(name);
  return it == m.end() ? nullptr : &it->second;
}
double get_double(const Item& m, std::string_view name) {
  const AttributeValue* v = field(m, name);
  return v && v->type() == AttrType::N ? std::stod(v->as_number().to_string()) : 0;
}
std::int64_t get_int(const Item& m, std::string_view name) {
  const AttributeValue* v = field(m, name);
  return v && v->type() == AttrType::N ? std::stoll(v->as_number().to_string()) : 0;
}
bool get_bool(const Item& m, std::string_view name) {
  const AttributeValue* v = field(m, name);
  return v && v->type() == AttrType::BOOL && v->as_bool();
}

ScalarType parse_scalar(std::string_view s) {
  return s == "N" ? ScalarType::N : s == "B" ? ScalarType::B : ScalarType::S;
}

AttributeValue definitions_value(const std::vector<AttributeDefinition>& defs) {
  AttributeList list;
  for (const auto& d : defs) {
    list.push_back(AttributeValue::map(
        {{"name", str(d.name)}, {"type", str(std::string(scalar_type_name(d.type)))}}));
  }
  return AttributeValue::list(std::move(list));
}

std::vector<AttributeDefinition> definitions_from(const Item& m, std::string_view field_name) {
  std::vector<AttributeDefinition> out;
  if (const AttributeValue* defs = field(m, field_name)) {
    for (const auto& d : defs->as_list()) {
      out.push_back({get_str(d.as_map(), "name"), parse_scalar(get_str(d.as_map(), "type"))});
    }
  }
  return out;
}

}  // namespace

AttributeValue key_schema_value(const std::vector<KeySchemaElement>& schema) {
  AttributeList keys;
  for (const auto& k : schema) {
    keys.push_back(AttributeValue::map(
        {{"name", str(k.name)}, {"type", str(k.type == KeyType::HASH ? "HASH" : "RANGE")}}));
  }
  return AttributeValue::list(std::move(keys));
}

std::vector<KeySchemaElement> key_schema_from(const Item& m) {
  std::vector<KeySchemaElement> out;
  if (const AttributeValue* keys = field(m, "key_schema")) {
    for (const auto& k : keys->as_list()) {
      out.push_back({get_str(k.as_map(), "name"),
                     get_str(k.as_map(), "type") == "HASH" ? KeyType::HASH : KeyType::RANGE});
    }
  }
  return out;
}

namespace {

AttributeValue strings_value(const std::vector<std::string>& strings) {
  AttributeList list;
  for (const auto& s : strings) list.push_back(str(s));
  return AttributeValue::list(std::move(list));
}

std::vector<std::string> strings_from(const Item& m, std::string_view field_name) {
  std::vector<std::string> out;
  if (const AttributeValue* list = field(m, field_name)) {
    for (const auto& s : list->as_list()) out.push_back(s.as_string());
  }
  return out;
}

// Capacity settings: OnDemandThroughput, WarmThroughput, the on-demand peak, the
// partition map, the split log and Contributor Insights. A record stored before these
// existed has none of them and loads with an empty map.
AttributeValue token_value(std::uint64_t token) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(token));
  return str(buf);
}
std::uint64_t token_from(const Item& m, std::string_view name) {
  return std::strtoull(get_str(m, name).c_str(), nullptr, 16);
}

AttributeValue capacity_value(const CapacitySettings& c) {
  Item r;
  if (c.max_read) r["max_read"] = num(*c.max_read);
  if (c.max_write) r["max_write"] = num(*c.max_write);
  r["warm_read"] = num(c.warm_read);
  r["warm_write"] = num(c.warm_write);
  r["peak_read"] = num(c.peak_read);
  r["peak_write"] = num(c.peak_write);
  r["peak_raised"] = num(c.peak_raised);
  AttributeList ranges;
  for (const auto& p : c.partitions.ranges) {
    ranges.push_back(AttributeValue::map({{"id", num(static_cast<std::int64_t>(p.id))},
                                          {"parent", num(static_cast<std::int64_t>(p.parent))},
                                          {"first", token_value(p.first_token)},
                                          {"cause", str(std::string(split_cause_name(p.cause)))},
                                          {"created", num(p.created)}}));
  }
  r["partitions"] = AttributeValue::list(std::move(ranges));
  AttributeList splits;
  for (const auto& s : c.splits) {
    splits.push_back(AttributeValue::map({{"time", num(s.time)},
                                          {"parent", num(static_cast<std::int64_t>(s.parent))},
                                          {"low", num(static_cast<std::int64_t>(s.low))},
                                          {"high", num(static_cast<std::int64_t>(s.high))},
                                          {"token", token_value(s.token)},
                                          {"cause", str(std::string(split_cause_name(s.cause)))}}));
  }
  r["splits"] = AttributeValue::list(std::move(splits));
  r["insights_state"] = num(static_cast<std::int64_t>(c.insights.state));
  r["insights_mode"] = str(c.insights.mode);
  r["insights_changed"] = num(c.insights.changed);
  r["insights_suffix"] = num(c.insights.rule_suffix_ms);
  r["insights_failed"] = flag(c.insights.failed);
  return AttributeValue::map(std::move(r));
}

CapacitySettings capacity_from(const Item& record) {
  CapacitySettings c;
  const AttributeValue* v = field(record, "capacity");
  if (!v || v->type() != AttrType::M) return c;
  const Item& r = v->as_map();
  if (field(r, "max_read")) c.max_read = get_int(r, "max_read");
  if (field(r, "max_write")) c.max_write = get_int(r, "max_write");
  c.warm_read = get_int(r, "warm_read");
  c.warm_write = get_int(r, "warm_write");
  c.peak_read = get_int(r, "peak_read");
  c.peak_write = get_int(r, "peak_write");
  c.peak_raised = get_double(r, "peak_raised");
  if (const AttributeValue* ranges = field(r, "partitions")) {
    for (const auto& p : ranges->as_list()) {
      const Item& m = p.as_map();
      c.partitions.ranges.push_back({static_cast<std::uint32_t>(get_int(m, "id")),
                                     static_cast<std::uint32_t>(get_int(m, "parent")),
                                     token_from(m, "first"), split_cause_from(get_str(m, "cause")),
                                     get_double(m, "created")});
    }
  }
  if (const AttributeValue* splits = field(r, "splits")) {
    for (const auto& p : splits->as_list()) {
      const Item& m = p.as_map();
      c.splits.push_back({get_double(m, "time"), static_cast<std::uint32_t>(get_int(m, "parent")),
                          static_cast<std::uint32_t>(get_int(m, "low")),
                          static_cast<std::uint32_t>(get_int(m, "high")), token_from(m, "token"),
                          split_cause_from(get_str(m, "cause"))});
    }
  }
  c.insights.state = static_cast<InsightsSettings::State>(get_int(r, "insights_state"));
  c.insights.mode = get_str(r, "insights_mode");
  c.insights.changed = get_double(r, "insights_changed");
  c.insights.rule_suffix_ms = get_int(r, "insights_suffix");
  c.insights.failed = get_bool(r, "insights_failed");
  return c;
}

AttributeValue index_value(const IndexDefinition& index) {
  Item r;
  r["name"] = str(index.name);
  r["global"] = flag(index.global);
  r["id"] = num(static_cast<std::int64_t>(index.id));
  r["key_schema"] = key_schema_value(index.key_schema);
  r["hash"] = definitions_value(index.hash);
  r["range"] = definitions_value(index.range);
  r["projection_type"] = str(std::string(projection_type_name(index.projection.type)));
  r["non_key_attributes"] = strings_value(index.projection.non_key_attributes);
  r["key_attributes"] = strings_value(index.key_attributes);
  r["rcu"] = num(index.throughput.read_capacity_units);
  r["wcu"] = num(index.throughput.write_capacity_units);
  r["decreases_today"] = num(index.throughput.number_of_decreases_today);
  r["backfilling"] = flag(index.backfilling);
  if (index.global) r["capacity"] = capacity_value(index.capacity);
  return AttributeValue::map(std::move(r));
}

IndexDefinition index_from(const Item& r) {
  IndexDefinition index;
  index.name = get_str(r, "name");
  index.global = get_bool(r, "global");
  index.id = static_cast<std::uint32_t>(get_int(r, "id"));
  index.key_schema = key_schema_from(r);
  index.hash = definitions_from(r, "hash");
  index.range = definitions_from(r, "range");
  const std::string type = get_str(r, "projection_type");
  index.projection.type = type == "KEYS_ONLY" ? ProjectionType::KEYS_ONLY
                          : type == "INCLUDE" ? ProjectionType::INCLUDE
                                              : ProjectionType::ALL;
  index.projection.non_key_attributes = strings_from(r, "non_key_attributes");
  index.key_attributes = strings_from(r, "key_attributes");
  index.throughput.read_capacity_units = get_int(r, "rcu");
  index.throughput.write_capacity_units = get_int(r, "wcu");
  index.throughput.number_of_decreases_today = get_int(r, "decreases_today");
  index.backfilling = get_bool(r, "backfilling");
  index.capacity = capacity_from(r);
  return index;
}

Item to_record(const TableDefinition& t) {
  Item r;
  r["name"] = str(t.name);
  r["id"] = num(static_cast<std::int64_t>(t.id));
  r["table_id"] = str(t.table_id);
  r["created"] = num(t.creation_date_time);
  AttributeList defs;
  for (const auto& d : t.attribute_definitions) {
    defs.push_back(AttributeValue::map(
        {{"name", str(d.name)}, {"type", str(std::string(scalar_type_name(d.type)))}}));
  }
  r["attribute_definitions"] = AttributeValue::list(std::move(defs));
  r["key_schema"] = key_schema_value(t.key.elements());
  r["billing_mode"] =
      str(t.billing_mode == BillingMode::PAY_PER_REQUEST ? "PAY_PER_REQUEST" : "PROVISIONED");
  r["billing_mode_given"] = flag(t.billing_mode_given);
  r["last_update_to_ppr"] = num(t.last_update_to_pay_per_request);
  r["rcu"] = num(t.throughput.read_capacity_units);
  r["wcu"] = num(t.throughput.write_capacity_units);
  r["decreases_today"] = num(t.throughput.number_of_decreases_today);
  r["last_increase"] = num(t.throughput.last_increase_date_time);
  r["last_decrease"] = num(t.throughput.last_decrease_date_time);
  if (t.stream) {
    r["stream_enabled"] = flag(t.stream->enabled);
    r["stream_view_type"] = str(t.stream->view_type);
  }
  r["latest_stream_label"] = str(t.latest_stream_label);
  r["ttl_attribute"] = str(t.ttl_attribute);
  r["ttl_enabled"] = flag(t.ttl_enabled);
  r["ttl_updated"] = num(t.ttl_updated);
  r["ttl_scheduling"] = flag(t.ttl_scheduling);
  r["table_class"] = str(t.table_class);
  r["table_class_given"] = flag(t.table_class_given);
  r["deletion_protection"] = flag(t.deletion_protection);
  r["sse_enabled"] = flag(t.sse_enabled);
  AttributeList tags;
  for (const auto& tag : t.tags) {
    tags.push_back(AttributeValue::map({{"key", str(tag.key)}, {"value", str(tag.value)}}));
  }
  r["tags"] = AttributeValue::list(std::move(tags));
  AttributeList lsis, gsis;
  for (const auto& index : t.local_indexes) lsis.push_back(index_value(index));
  for (const auto& index : t.global_indexes) gsis.push_back(index_value(index));
  r["local_indexes"] = AttributeValue::list(std::move(lsis));
  r["global_indexes"] = AttributeValue::list(std::move(gsis));
  r["next_index_id"] = num(static_cast<std::int64_t>(t.next_index_id));
  r["capacity"] = capacity_value(t.capacity);
  r["next_partition_id"] = num(static_cast<std::int64_t>(t.next_partition_id));
  if (t.definition_version != 0) {
    r["definition_version"] = num(static_cast<std::int64_t>(t.definition_version));
  }
  if (t.restore) {
    r["restore"] =
        AttributeValue::map({{"backup_id", str(t.restore->backup_id)},
                             {"backup_arn", str(t.restore->backup_arn)},
                             {"source_table_arn", str(t.restore->source_table_arn)},
                             {"time", num(t.restore->restore_date_time)},
                             {"source_id", num(static_cast<std::int64_t>(t.restore->source_id))}});
  }
  if (t.pitr) {
    r["pitr"] = AttributeValue::map({{"since", num(t.pitr->enabled_since)},
                                     {"days", num(static_cast<std::int64_t>(t.pitr->period_days))},
                                     {"floor", num(t.pitr->floor)},
                                     {"base_pending", flag(t.pitr->base_pending)}});
  }
  return r;
}

TableDefinition from_record(const Item& r) {
  TableDefinition t;
  t.name = get_str(r, "name");
  t.id = static_cast<std::uint32_t>(get_int(r, "id"));
  t.table_id = get_str(r, "table_id");
  t.creation_date_time = get_double(r, "created");
  if (const AttributeValue* defs = field(r, "attribute_definitions")) {
    for (const auto& d : defs->as_list()) {
      t.attribute_definitions.push_back(
          {get_str(d.as_map(), "name"), parse_scalar(get_str(d.as_map(), "type"))});
    }
  }
  auto definition_of = [&](const std::string& name) {
    for (const auto& d : t.attribute_definitions) {
      if (d.name == name) return d;
    }
    return AttributeDefinition{name, ScalarType::S};
  };
  for (const auto& k : key_schema_from(r)) {
    if (k.type == KeyType::HASH) {
      t.key.hash = definition_of(k.name);
    } else {
      t.key.range = definition_of(k.name);
    }
  }
  t.billing_mode = get_str(r, "billing_mode") == "PAY_PER_REQUEST" ? BillingMode::PAY_PER_REQUEST
                                                                   : BillingMode::PROVISIONED;
  t.billing_mode_given = get_bool(r, "billing_mode_given");
  t.last_update_to_pay_per_request = get_double(r, "last_update_to_ppr");
  t.throughput.read_capacity_units = get_int(r, "rcu");
  t.throughput.write_capacity_units = get_int(r, "wcu");
  t.throughput.number_of_decreases_today = get_int(r, "decreases_today");
  t.throughput.last_increase_date_time = get_double(r, "last_increase");
  t.throughput.last_decrease_date_time = get_double(r, "last_decrease");
  if (field(r, "stream_enabled")) {
    t.stream = StreamSpecification{get_bool(r, "stream_enabled"), get_str(r, "stream_view_type")};
  }
  t.latest_stream_label = get_str(r, "latest_stream_label");
  t.ttl_attribute = get_str(r, "ttl_attribute");
  t.ttl_enabled = get_bool(r, "ttl_enabled");
  t.ttl_updated = get_double(r, "ttl_updated");
  t.ttl_scheduling = get_bool(r, "ttl_scheduling");
  t.table_class = get_str(r, "table_class");
  t.table_class_given = get_bool(r, "table_class_given");
  t.deletion_protection = get_bool(r, "deletion_protection");
  t.sse_enabled = get_bool(r, "sse_enabled");
  if (const AttributeValue* tags = field(r, "tags")) {
    for (const auto& tag : tags->as_list()) {
      t.tags.push_back({get_str(tag.as_map(), "key"), get_str(tag.as_map(), "value")});
    }
  }
  if (const AttributeValue* lsis = field(r, "local_indexes")) {
    for (const auto& index : lsis->as_list()) t.local_indexes.push_back(index_from(index.as_map()));
  }
  if (const AttributeValue* gsis = field(r, "global_indexes")) {
    for (const auto& index : gsis->as_list())
      t.global_indexes.push_back(index_from(index.as_map()));
  }
  t.next_index_id =
      static_cast<std::uint32_t>(std::max<std::int64_t>(1, get_int(r, "next_index_id")));
  t.capacity = capacity_from(r);
  t.next_partition_id =
      static_cast<std::uint32_t>(std::max<std::int64_t>(1, get_int(r, "next_partition_id")));
  t.definition_version =
      static_cast<std::uint64_t>(std::max<std::int64_t>(0, get_int(r, "definition_version")));
  if (const AttributeValue* restore = field(r, "restore");
      restore && restore->type() == AttrType::M) {
    const Item& m = restore->as_map();
    t.restore = RestoreSource{get_str(m, "backup_id"), get_str(m, "backup_arn"),
                              get_str(m, "source_table_arn"), get_double(m, "time"),
                              static_cast<std::uint32_t>(get_int(m, "source_id"))};
  }
  if (const AttributeValue* pitr = field(r, "pitr"); pitr && pitr->type() == AttrType::M) {
    const Item& m = pitr->as_map();
    t.pitr = PitrSettings{get_double(m, "since"), static_cast<int>(get_int(m, "days")),
                          get_double(m, "floor"), get_bool(m, "base_pending")};
  }
  return t;
}

std::string random_uuid() {
  thread_local std::mt19937_64 rng{random_seed()};
  std::uint64_t hi = rng(), lo = rng();
  // Version 4, variant 1.
  hi = (hi & 0xFFFFFFFFFFFF0FFFULL) | 0x0000000000004000ULL;
  lo = (lo & 0x3FFFFFFFFFFFFFFFULL) | 0x8000000000000000ULL;
  char buf[37];
  std::snprintf(buf, sizeof buf, "%08x-%04x-%04x-%04x-%012llx", static_cast<unsigned>(hi >> 32),
                static_cast<unsigned>((hi >> 16) & 0xFFFF), static_cast<unsigned>(hi & 0xFFFF),
                static_cast<unsigned>(lo >> 48),
                static_cast<unsigned long long>(lo & 0xFFFFFFFFFFFFULL));
  return buf;
}

}  // namespace

Item table_record(const TableDefinition& definition) {
  return to_record(definition);
}

TableDefinition table_from_record(const Item& record) {
  return from_record(record);
}

Catalog::Catalog(storage::Storage& storage) : storage_(storage) {
  WriterLock lock(mutex_);
  load(nullptr);
}

void Catalog::load(const std::function<void(TableDefinition&)>* prepare) {
  std::optional<std::string> version = storage_.get(kVersionKey);
  version_ = version ? std::strtoull(version->c_str(), nullptr, 10) : 0;
  next_id_ =
      static_cast<std::uint32_t>(std::max<std::int64_t>(1, storage_.get_counter(kNextIdKey)));
  std::map<std::string, Loaded, std::less<>> tables;
  std::string lower(kTablePrefix);
  auto it = storage_.iterator(lower, codec::prefix_end(lower));
  for (it->seek_to_first(); it->valid(); it->next()) {
    const std::string name(it->key().substr(kTablePrefix.size()));
    auto known = tables_.find(name);
    if (known != tables_.end() && known->second.stored == it->value()) {
      // Unchanged: the definition in use stays (with what this process added to it). A
      // copy: a failure before the end leaves the catalog as it was.
      tables.emplace(name, known->second);
      continue;
    }
    Item record;
    if (!codec::decode_item(it->value(), &record)) {
      throw storage::StorageError("corrupt catalog record: " + std::string(it->key()));
    }
    TableDefinition definition = from_record(record);
    if (prepare) (*prepare)(definition);
    tables.emplace(name, Loaded{std::make_shared<const TableDefinition>(std::move(definition)),
                                std::string(it->value())});
  }
  for (const auto& [name, loaded] : tables) next_id_ = std::max(next_id_, loaded.table->id + 1);
  tables_ = std::move(tables);
}

std::vector<Catalog::Change> Catalog::reload(const std::function<void(TableDefinition&)>& prepare) {
  WriterLock lock(mutex_);
  std::map<std::string, TablePtr, std::less<>> before;
  for (const auto& [name, loaded] : tables_) before.emplace(name, loaded.table);
  load(&prepare);
  std::vector<Change> changes;
  for (const auto& [name, table] : before) {
    auto it = tables_.find(name);
    if (it == tables_.end()) {
      changes.push_back({table, nullptr});
    } else if (it->second.table != table) {
      // (A table deleted and created again under its name has another id.)
      if (it->second.table->id != table->id) changes.push_back({table, nullptr});
      changes.push_back({it->second.table->id != table->id ? nullptr : table, it->second.table});
    }
  }
  for (const auto& [name, loaded] : tables_) {
    if (!before.count(name)) changes.push_back({nullptr, loaded.table});
  }
  return changes;
}

TablePtr Catalog::find(std::string_view name) const {
  ReaderLock lock(mutex_);
  auto it = tables_.find(name);
  return it == tables_.end() ? nullptr : it->second.table;
}

bool Catalog::stale() const {
  std::optional<std::string> version = storage_.get(kVersionKey);
  const std::uint64_t stored = version ? std::strtoull(version->c_str(), nullptr, 10) : 0;
  ReaderLock lock(mutex_);
  return stored != version_;
}

std::string Catalog::store(const TableDefinition& definition, storage::WriteBatch* batch) const {
  std::string stored = codec::encode_item(to_record(definition));
  batch->put(std::string(kTablePrefix) + definition.name, stored);
  return stored;
}

void Catalog::guard(storage::WriteBatch* batch) const {
  batch->expect(
      std::string(kVersionKey),
      version_ == 0 ? std::nullopt : std::optional<std::string>(std::to_string(version_)));
  batch->put(std::string(kVersionKey), std::to_string(version_ + 1));
}

template <typename Attempt>
auto Catalog::change(const Attempt& attempt) -> decltype(attempt()) {
  for (int i = 0;; ++i) {
    try {
      raised.clear();
      auto result = attempt();
      // Every partition of a table whose definition changed what its writes do holds the
      // new version before any other front end is told: from then on, a write made with the
      // old definition (a request that took it just before its front end reloaded) is
      // refused and made again, and the change's next step (a GSI's backfill) never meets
      // one.
      for (const Raised& r : raised) storage_.set_definition(r.table, r.version, r.dropped);
      raised.clear();
      // The other front ends sharing the storage reload it before this change returns
      // (or before announce_deferred() does).
      if (result) {
        if (deferring > 0) {
          deferred = true;
        } else {
          storage_.notify_catalog();
        }
      }
      return result;
    } catch (const storage::WriteConflict&) {
      // Another front end changed the catalog since it was loaded here.
      if (i + 1 >= kChangeAttempts) throw;
      std::function<void()> reload;
      {
        ReaderLock lock(mutex_);
        reload = reload_;
      }
      if (reload) {
        reload();
      } else {
        WriterLock lock(mutex_);
        load(&prepare_loaded_);
      }
    }
  }
}

void Catalog::set_verify(Verify verify) {
  WriterLock lock(mutex_);
  verify_ = std::move(verify);
}

void Catalog::set_prepare_loaded(std::function<void(TableDefinition&)> prepare) {
  WriterLock lock(mutex_);
  prepare_loaded_ = std::move(prepare);
}

Catalog::Deferral::Deferral() {
  ++deferring;
}

Catalog::Deferral::~Deferral() {
  --deferring;
}

void Catalog::announce_deferred() {
  if (deferring > 0 || !deferred) return;
  deferred = false;
  storage_.notify_catalog();
}

void Catalog::set_reload(std::function<void()> reload) {
  WriterLock lock(mutex_);
  reload_ = std::move(reload);
}

void Catalog::verify(const TableDefinition* before, const TableDefinition& after) const {
  if (!verify_) return;
  std::vector<const TableDefinition*> others;
  others.reserve(tables_.size());
  for (const auto& [name, loaded] : tables_) {
    if (name != after.name) others.push_back(loaded.table.get());
  }
  verify_(before, after, others);
}

TablePtr Catalog::create(TableDefinition definition,
                         const std::function<void(TableDefinition&)>& prepare) {
  return change([&] {
    WriterLock lock(mutex_);
    if (auto it = tables_.find(definition.name); it != tables_.end()) {
      // A table being restored from a backup is "in use" rather than existing.
      throw ApiError::resource_in_use(
          (it->second.table->restore ? "Table is being used: " : "Table already exists: ") +
          definition.name);
    }
    TableDefinition made = definition;
    made.id = next_id_;
    made.table_id = random_uuid();
    if (made.creation_date_time == 0) made.creation_date_time = now_seconds();
    if (made.billing_mode == BillingMode::PAY_PER_REQUEST) {
      made.last_update_to_pay_per_request = made.creation_date_time;
    }
    if (prepare) prepare(made);
    verify(nullptr, made);
    storage::WriteBatch batch;
    std::string stored = store(made, &batch);
    guard(&batch);
    batch.add_counter(std::string(kNextIdKey),
                      static_cast<std::int64_t>(next_id_ + 1) - storage_.get_counter(kNextIdKey));
    storage_.write(batch);
    ++version_;
    ++next_id_;
    auto table = std::make_shared<const TableDefinition>(std::move(made));
    tables_.emplace(table->name, Loaded{table, std::move(stored)});
    return TablePtr(table);
  });
}

std::uint32_t Catalog::reserve_id(
    const std::function<void(std::uint32_t id, storage::WriteBatch& batch)>& with) {
  return change([&] {
    WriterLock lock(mutex_);
    const std::uint32_t id = next_id_;
    storage::WriteBatch batch;
    if (with) with(id, batch);
    guard(&batch);
    batch.add_counter(std::string(kNextIdKey),
                      static_cast<std::int64_t>(id + 1) - storage_.get_counter(kNextIdKey));
    storage_.write(batch);
    ++version_;
    ++next_id_;
    return id;
  });
}

TablePtr Catalog::update(std::string_view name,
                         const std::function<void(TableDefinition&)>& change_definition) {
  return change([&] {
    WriterLock lock(mutex_);
    auto it = tables_.find(name);
    if (it == tables_.end()) {
      throw ApiError::resource_not_found(
          "Requested resource not found: Table: " + std::string(name) + " not found");
    }
    TableDefinition copy = *it->second.table;
    change_definition(copy);
    verify(it->second.table.get(), copy);
    copy.definition_version = it->second.table->definition_version;
    if (write_shape(copy) != write_shape(*it->second.table)) {
      ++copy.definition_version;
      raised.push_back({copy.id, copy.definition_version, false});
    }
    storage::WriteBatch batch;
    std::string stored = store(copy, &batch);
    guard(&batch);
    storage_.write(batch);
    ++version_;
    it->second =
        Loaded{std::make_shared<const TableDefinition>(std::move(copy)), std::move(stored)};
    return it->second.table;
  });
}

void Catalog::amend_loaded(const std::function<void(TableDefinition&)>& change) {
  WriterLock lock(mutex_);
  for (auto& [name, loaded] : tables_) {
    TableDefinition copy = *loaded.table;
    change(copy);
    loaded.table = std::make_shared<const TableDefinition>(std::move(copy));
  }
}

TablePtr Catalog::find_id(std::uint32_t id) const {
  ReaderLock lock(mutex_);
  for (const auto& [name, loaded] : tables_) {
    if (loaded.table->id == id) return loaded.table;
  }
  return nullptr;
}

TablePtr Catalog::remove(std::string_view name) {
  return change([&] {
    WriterLock lock(mutex_);
    auto it = tables_.find(name);
    if (it == tables_.end()) return TablePtr();
    TablePtr table = it->second.table;
    // No write of the table is made any more, by any front end.
    raised.push_back({table->id, UINT64_MAX, true});
    storage::WriteBatch batch;
    batch.del(std::string(kTablePrefix) + table->name);
    batch.put(std::string(kDropPrefix) + std::to_string(table->id), table->name);
    guard(&batch);
    storage_.write(batch);
    ++version_;
    tables_.erase(it);
    return table;
  });
}

void Catalog::drop_data(std::uint32_t id) {
  // The table's id is never reused, so a write that raced with the removal cannot
  // reappear in a new table. Its stream records stay readable until their retention ends
  // (ChangeStreams::trim removes them). Erasing what is gone already does nothing, so a
  // removal may run again from the start.
  const std::string prefix = codec::table_prefix(id);
  const std::string stream = codec::space_prefix(id, codec::Space::kStream);
  storage_.erase_range(prefix, stream);
  storage_.erase_range(codec::prefix_end(stream), codec::prefix_end(prefix));
  storage::WriteBatch batch;
  batch.del(std::string(kDropPrefix) + std::to_string(id));
  storage_.write(batch);
}

std::vector<std::pair<std::uint32_t, std::string>> Catalog::pending_drops() const {
  std::vector<std::pair<std::uint32_t, std::string>> out;
  const std::string lower(kDropPrefix);
  auto it = storage_.iterator(lower, codec::prefix_end(lower));
  for (it->seek_to_first(); it->valid(); it->next()) {
    const std::string id(it->key().substr(kDropPrefix.size()));
    out.emplace_back(static_cast<std::uint32_t>(std::strtoul(id.c_str(), nullptr, 10)),
                     std::string(it->value()));
  }
  return out;
}

std::vector<std::string> Catalog::list(std::string_view exclusive_start, std::size_t limit,
                                       bool* more) const {
  ReaderLock lock(mutex_);
  std::vector<std::string> names;
  auto it = exclusive_start.empty() ? tables_.begin() : tables_.upper_bound(exclusive_start);
  for (; it != tables_.end() && names.size() < limit; ++it) names.push_back(it->first);
  *more = it != tables_.end();
  return names;
}

}  // namespace kumo::engine
