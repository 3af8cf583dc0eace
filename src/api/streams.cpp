// The DynamoDB Streams API: ListStreams, DescribeStream, GetShardIterator, GetRecords.
// A stream's shards and records come from the engine's change streams: one shard at first,
// and two children for a shard whose range of the table's partitions split.
#include <fmt/format.h>
#include <xxhash.h>

#include <algorithm>
#include <tuple>

#include "api/operations.h"
#include "api/table_names.h"
#include "model/api_error.h"
#include "model/clock.h"

namespace kumo::api {
namespace {

// GetRecords answers at most 1 MB of records.
constexpr std::size_t kRecordsPageBytes = 1 << 20;

struct StreamName {
  std::string table;
  std::string label;
};

// "arn:aws:dynamodb:<region>:<account>:table/<name>/stream/<label>" → name and label.
std::optional<StreamName> parse_stream_arn(std::string_view arn) {
  constexpr std::string_view kTable = ":table/", kStream = "/stream/";
  if (arn.substr(0, 4) != "arn:" || arn.find(":dynamodb:") == std::string_view::npos) {
    return std::nullopt;
  }
  const std::size_t table = arn.find(kTable);
  if (table == std::string_view::npos) return std::nullopt;
  const std::size_t stream = arn.find(kStream, table + kTable.size());
  if (stream == std::string_view::npos) return std::nullopt;
  StreamName name{std::string(arn.substr(table + kTable.size(), stream - table - kTable.size())),
                  std::string(arn.substr(stream + kStream.size()))};
  if (name.table.empty() || name.label.empty()) return std::nullopt;
  return name;
}

// An ARN has six parts: arn:<partition>:<service>:<region>:<account>:<resource>.
bool is_arn(std::string_view text) {
  return text.substr(0, 4) == "arn:" && std::ranges::count(text, ':') >= 5;
}

// A stream ARN member that is no ARN at all is invalid; one that names no stream of this
// server is not found.
void check_is_arn(std::string_view arn) {
  if (!is_arn(arn)) throw ApiError::validation("Invalid StreamArn");
}

engine::StreamInfo find_stream(const Context& ctx, std::string_view arn) {
  check_is_arn(arn);
  std::optional<StreamName> name = parse_stream_arn(arn);
  std::optional<engine::StreamInfo> stream;
  // Only the ARN this server hands out names the stream (not another region's or account's).
  if (name && arn == stream_arn(ctx, name->table, name->label)) {
    stream = ctx.engine.streams().find(name->table, name->label);
  }
  if (!stream) {
    throw ApiError::resource_not_found(
        fmt::format("Requested resource not found: Stream: {} not found", arn));
  }
  return *stream;
}

void check_stream_arn(CoralErrors& coral, std::optional<std::string_view> arn,
                      std::string_view path, bool required) {
  if (required) coral.require(arn.has_value(), path);
  if (arn) coral.check_length(*arn, path, 37, 1024);
}

void check_shard_id(CoralErrors& coral, std::optional<std::string_view> id, std::string_view path,
                    bool required) {
  if (required) coral.require(id.has_value(), path);
  if (id) coral.check_length(*id, path, 28, 65);
}

void check_limit(CoralErrors& coral, std::optional<std::int64_t> limit, std::int64_t max) {
  if (limit && *limit < 1) {
    coral.add(std::to_string(*limit), "limit", "Member must have value greater than or equal to 1");
  }
  if (limit && *limit > max) {
    coral.add(std::to_string(*limit), "limit",
              fmt::format("Member must have value less than or equal to {}", max));
  }
}

// ---- Shard iterators --------------------------------------------------------------------
//
// "<stream arn>|<shard id>|<next sequence>|<issued, epoch ms>|<check>": opaque to clients,
// with a checksum so that a damaged or made-up iterator is refused rather than misread.

struct Iterator {
  std::string arn;
  std::string shard_id;
  std::uint64_t position = 0;
  std::int64_t issued_ms = 0;
};

std::string checksum(std::string_view text) {
  return fmt::format("{:08x}", static_cast<std::uint32_t>(XXH3_64bits(text.data(), text.size())));
}

// An iterator issued at `now` (the engine's clock, epoch seconds).
std::string make_iterator(std::string_view arn, std::string_view shard_id, std::uint64_t position,
                          double now) {
  const std::int64_t issued = epoch_milliseconds(now);
  std::string text = fmt::format("{}|{}|{}|{}", arn, shard_id, position, issued);
  return text + "|" + checksum(text);
}

std::optional<Iterator> parse_iterator(std::string_view text) {
  const std::size_t check = text.rfind('|');
  if (check == std::string_view::npos ||
      checksum(text.substr(0, check)) != text.substr(check + 1)) {
    return std::nullopt;
  }
  text = text.substr(0, check);
  const std::size_t issued = text.rfind('|');
  if (issued == std::string_view::npos || issued == 0) return std::nullopt;
  const std::size_t position = text.rfind('|', issued - 1);
  if (position == std::string_view::npos || position == 0) return std::nullopt;
  const std::size_t shard = text.rfind('|', position - 1);
  if (shard == std::string_view::npos) return std::nullopt;
  Iterator it;
  it.arn = std::string(text.substr(0, shard));
  it.shard_id = std::string(text.substr(shard + 1, position - shard - 1));
  try {
    it.position = std::stoull(std::string(text.substr(position + 1, issued - position - 1)));
    it.issued_ms = std::stoll(std::string(text.substr(issued + 1)));
  } catch (const std::exception&) {
    return std::nullopt;
  }
  return it;
}

// ---- Output ---------------------------------------------------------------------------------

std::string_view event_name(engine::StreamEvent event) {
  switch (event) {
    case engine::StreamEvent::kInsert:
      return "INSERT";
    case engine::StreamEvent::kModify:
      return "MODIFY";
    case engine::StreamEvent::kRemove:
      return "REMOVE";
  }
  return "MODIFY";
}

// `identity`: what makes the record's number unique, the stream's ARN, or its shard's id
// too where shards number their records each on their own (shared storage).
void write_record(JsonWriter& w, const Context& ctx, const std::string& identity,
                  const engine::StreamRecord& r) {
  w.StartObject();
  write_key(w, "eventID");
  write_string(
      w, fmt::format("{:016x}{:016x}", XXH3_64bits(identity.data(), identity.size()), r.sequence));
  write_key(w, "eventName");
  write_string(w, event_name(r.event));
  write_key(w, "eventVersion");
  write_string(w, "1.1");
  write_key(w, "eventSource");
  write_string(w, "aws:dynamodb");
  write_key(w, "awsRegion");
  write_string(w, ctx.options.region);
  write_key(w, "dynamodb");
  w.StartObject();
  write_key(w, "ApproximateCreationDateTime");
  w.Int64(r.created_ms / 1000);
  write_key(w, "Keys");
  write_item(w, r.keys);
  if (r.new_image) {
    write_key(w, "NewImage");
    write_item(w, *r.new_image);
  }
  if (r.old_image) {
    write_key(w, "OldImage");
    write_item(w, *r.old_image);
  }
  write_key(w, "SequenceNumber");
  write_string(w, engine::format_sequence(r.sequence));
  write_key(w, "SizeBytes");
  w.Uint64(r.size_bytes);
  write_key(w, "StreamViewType");
  write_string(w, r.view_type);
  w.EndObject();
  if (r.by_service) {
    write_key(w, "userIdentity");
    w.StartObject();
    // The Streams API's member names (Lambda's event format spells them in lower case).
    write_key(w, "PrincipalId");
    write_string(w, "dynamodb.amazonaws.com");
    write_key(w, "Type");
    write_string(w, "Service");
    w.EndObject();
  }
  w.EndObject();
}

void write_shard(JsonWriter& w, const engine::StreamInfo& stream,
                 const engine::StreamShard& shard) {
  w.StartObject();
  write_key(w, "ShardId");
  write_string(w, stream.shard_id(shard));
  if (shard.parent) {
    write_key(w, "ParentShardId");
    write_string(w, stream.shard_id(stream.shards.at(*shard.parent)));
  }
  write_key(w, "SequenceNumberRange");
  w.StartObject();
  write_key(w, "StartingSequenceNumber");
  write_string(w, engine::format_sequence(shard.start));
  if (shard.end) {
    write_key(w, "EndingSequenceNumber");
    write_string(w, engine::format_sequence(*shard.end));
  }
  w.EndObject();
  w.EndObject();
}

}  // namespace

std::string list_streams(const Context& ctx, const JsonObject& request) {
  CoralErrors coral;
  auto table_name = request.string("TableName");
  auto limit = request.integer("Limit");
  auto start = request.string("ExclusiveStartStreamArn");
  coral.check_table_name(table_name, "tableName", false);
  check_limit(coral, limit, 100);
  check_stream_arn(coral, start, "exclusiveStartStreamArn", false);
  coral.throw_if_any();
  if (start) check_is_arn(*start);
  std::vector<engine::StreamInfo> streams = ctx.engine.streams().list(table_name);
  if (table_name && streams.empty()) control_table(ctx, *table_name);
  JsonOut out;
  JsonWriter w(out);
  w.StartObject();
  write_key(w, "Streams");
  w.StartArray();
  const auto max = static_cast<std::size_t>(limit.value_or(100));
  std::size_t written = 0;
  // Resume after the place of ExclusiveStartStreamArn in the order, whether or not that
  // stream is still listed (it may have expired meanwhile).
  std::optional<StreamName> after;
  if (start) after = parse_stream_arn(*start);
  std::string last;
  bool more = false;
  for (const auto& stream : streams) {
    if (after &&
        std::tie(stream.table_name, stream.label) <= std::tie(after->table, after->label)) {
      continue;
    }
    const std::string arn = stream_arn(ctx, stream.table_name, stream.label);
    if (written == max) {
      more = true;
      break;
    }
    w.StartObject();
    write_key(w, "StreamArn");
    write_string(w, arn);
    write_key(w, "TableName");
    write_string(w, stream.table_name);
    write_key(w, "StreamLabel");
    write_string(w, stream.label);
    w.EndObject();
    last = arn;
    ++written;
  }
  w.EndArray();
  if (more) {
    write_key(w, "LastEvaluatedStreamArn");
    write_string(w, last);
  }
  w.EndObject();
  return json_text(out);
}

std::string describe_stream(const Context& ctx, const JsonObject& request) {
  CoralErrors coral;
  auto arn = request.string("StreamArn");
  auto limit = request.integer("Limit");
  auto start = request.string("ExclusiveStartShardId");
  auto filter = request.object("ShardFilter");
  check_stream_arn(coral, arn, "streamArn", true);
  check_limit(coral, limit, 100);
  check_shard_id(coral, start, "exclusiveStartShardId", false);
  std::optional<std::string_view> filter_type, filter_shard;
  if (filter) {
    filter_type = filter->string("Type");
    filter_shard = filter->string("ShardId");
    coral.require(filter_type.has_value(), "shardFilter.type");
    coral.check_enum(filter_type, "shardFilter.type", {"CHILD_SHARDS"});
    check_shard_id(coral, filter_shard, "shardFilter.shardId", true);
  }
  coral.throw_if_any();
  const engine::StreamInfo stream = find_stream(ctx, *arn);
  // The shards in order (parents before children): with ShardFilter, the children of its
  // shard; after ExclusiveStartShardId, those that follow it (none when it is unknown).
  std::vector<const engine::StreamShard*> shards;
  for (const engine::StreamShard& shard : stream.shards) {
    if (filter_shard &&
        !(shard.parent && stream.shard_id(stream.shards.at(*shard.parent)) == *filter_shard)) {
      continue;
    }
    shards.push_back(&shard);
  }
  if (start) {
    auto at = std::find_if(shards.begin(), shards.end(), [&](const engine::StreamShard* s) {
      return stream.shard_id(*s) == *start;
    });
    shards.erase(shards.begin(), at == shards.end() ? at : at + 1);
  }
  const auto max = static_cast<std::size_t>(limit.value_or(100));
  const bool more = shards.size() > max;
  if (more) shards.resize(max);

  JsonOut out;
  JsonWriter w(out);
  w.StartObject();
  write_key(w, "StreamDescription");
  w.StartObject();
  write_key(w, "StreamArn");
  write_string(w, *arn);
  write_key(w, "StreamLabel");
  write_string(w, stream.label);
  write_key(w, "StreamStatus");
  write_string(w, stream.open() ? "ENABLED" : "DISABLED");
  write_key(w, "StreamViewType");
  write_string(w, stream.view_type);
  write_key(w, "CreationRequestDateTime");
  w.Double(stream.created);
  write_key(w, "TableName");
  write_string(w, stream.table_name);
  write_key(w, "KeySchema");
  write_key_schema(w, stream.key_schema);
  write_key(w, "Shards");
  w.StartArray();
  for (const engine::StreamShard* shard : shards) write_shard(w, stream, *shard);
  w.EndArray();
  if (more) {
    write_key(w, "LastEvaluatedShardId");
    write_string(w, stream.shard_id(*shards.back()));
  }
  w.EndObject();
  w.EndObject();
  return json_text(out);
}

std::string get_shard_iterator(const Context& ctx, const JsonObject& request) {
  CoralErrors coral;
  auto arn = request.string("StreamArn");
  auto shard_id = request.string("ShardId");
  auto type = request.string("ShardIteratorType");
  auto sequence = request.string("SequenceNumber");
  check_stream_arn(coral, arn, "streamArn", true);
  check_shard_id(coral, shard_id, "shardId", true);
  coral.require(type.has_value(), "shardIteratorType");
  coral.check_enum(type, "shardIteratorType",
                   {"TRIM_HORIZON", "LATEST", "AT_SEQUENCE_NUMBER", "AFTER_SEQUENCE_NUMBER"});
  if (sequence) coral.check_length(*sequence, "sequenceNumber", 21, 40);
  coral.throw_if_any();
  const engine::StreamInfo stream = find_stream(ctx, *arn);
  const engine::StreamShard* shard = stream.find_shard(*shard_id);
  if (!shard) {
    throw ApiError::resource_not_found(fmt::format(
        "Requested resource not found: Shard does not exist: {} in Stream: {}", *shard_id, *arn));
  }
  // The last number the shard may hold yet: this process's last, or on shared storage
  // the partition's horizon.
  const std::uint64_t last = shard->end ? *shard->end
                             : stream.numbered_by_storage
                                 ? ctx.engine.streams().horizon(stream, *shard)
                                 : ctx.engine.streams().next_sequence() - 1;
  std::uint64_t position = 0;
  if ((*type == "TRIM_HORIZON" || *type == "LATEST") && sequence) {
    throw ApiError::validation(
        fmt::format("A SequenceNumber is not allowed for ShardIteratorType {}", *type));
  }
  if (*type == "TRIM_HORIZON") {
    position = stream.trim_horizon(*shard);
  } else if (*type == "LATEST") {
    // Just after the last record written: one still being written below it is read too.
    position = shard->end ? *shard->end + 1 : ctx.engine.streams().horizon(stream, *shard) + 1;
  } else {
    if (!sequence) {
      throw ApiError::validation(
          fmt::format("A SequenceNumber is required for ShardIteratorType {}", *type));
    }
    std::optional<std::uint64_t> number = engine::parse_sequence(*sequence);
    // The shard's StartingSequenceNumber is a position even before any record.
    if (!number || *number < shard->start || *number > std::max(last, shard->start)) {
      throw ApiError::validation(
          fmt::format("Invalid SequenceNumber {} for ShardId {}", *sequence, *shard_id));
    }
    if (*number < stream.trim_horizon(*shard)) throw ApiError::trimmed_data_access();
    position = *type == "AT_SEQUENCE_NUMBER" ? *number : *number + 1;
  }
  JsonOut out;
  JsonWriter w(out);
  w.StartObject();
  write_key(w, "ShardIterator");
  write_string(w, make_iterator(*arn, *shard_id, position, ctx.engine.clock().now_ms()));
  w.EndObject();
  return json_text(out);
}

std::string get_records(const Context& ctx, const JsonObject& request) {
  CoralErrors coral;
  auto text = request.string("ShardIterator");
  auto limit = request.integer("Limit");
  coral.require(text.has_value(), "shardIterator");
  if (text) coral.check_length(*text, "shardIterator", 1, 2048);
  check_limit(coral, limit, 1000);
  coral.throw_if_any();
  std::optional<Iterator> iterator = parse_iterator(*text);
  if (!iterator) throw ApiError::validation("Invalid ShardIterator");
  const double age = ctx.engine.clock().now_ms() - static_cast<double>(iterator->issued_ms) / 1000;
  if (age > ctx.options.shard_iterator_lifetime) throw ApiError::expired_iterator();
  const engine::StreamInfo stream = find_stream(ctx, iterator->arn);
  const engine::StreamShard* shard = stream.find_shard(iterator->shard_id);
  if (!shard) throw ApiError::validation("Invalid ShardIterator");
  if (iterator->position < stream.trim_horizon(*shard)) throw ApiError::trimmed_data_access();
  engine::StreamPage page =
      ctx.engine.streams().read(stream, *shard, iterator->position,
                                static_cast<std::size_t>(limit.value_or(1000)), kRecordsPageBytes);
  JsonOut out;
  JsonWriter w(out);
  w.StartObject();
  write_key(w, "Records");
  w.StartArray();
  const std::string identity =
      stream.numbered_by_storage ? iterator->arn + "/" + iterator->shard_id : iterator->arn;
  for (const auto& record : page.records) write_record(w, ctx, identity, record);
  w.EndArray();
  // A closed shard read to its end has no next iterator.
  if (!shard->end || page.next <= *shard->end) {
    write_key(w, "NextShardIterator");
    write_string(w, make_iterator(iterator->arn, iterator->shard_id, page.next,
                                  ctx.engine.clock().now_ms()));
  }
  w.EndObject();
  return json_text(out);
}

}  // namespace kumo::api
