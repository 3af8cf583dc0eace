// TagResource, UntagResource, ListTagsOfResource, and the tag rules CreateTable shares
// (keys 1–128 and values 0–256 characters, at most 50 tags per table). TagResource and
// UntagResource answer success with an empty body (not an empty JSON object), as DynamoDB
// does.
#include <set>

#include <fmt/format.h>

#include "api/tags.h"

#include "api/operations.h"
#include "api/table_names.h"
#include "model/api_error.h"

namespace kumo::api {
namespace {

constexpr std::size_t kMaxTags = 50;

// Tag keys and values allow letters, digits, white space and _ . : / = + - @ (any
// non-ASCII UTF-8 counts as a letter).
bool tag_text_ok(std::string_view text) {
  for (unsigned char c : text) {
    if (c >= 0x80 || std::isalnum(c) || std::isspace(c)) continue;
    if (std::string_view("_.:/=+-@").find(static_cast<char>(c)) == std::string_view::npos) {
      return false;
    }
  }
  return true;
}

// The table a tag operation's ResourceArn designates.
engine::TablePtr tagged_table(const Context& ctx, std::string_view arn) {
  if (arn.substr(0, 4) != "arn:") {
    throw ApiError::validation(
        fmt::format("{}ARNs must start with 'arn:': {}", kInvalidParameters, arn));
  }
  // arn:partition:service:region:account:resource
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  for (int i = 0; i < 5; ++i) {
    std::size_t colon = arn.find(':', start);
    if (colon == std::string_view::npos) {
      throw ApiError::validation(
          fmt::format("Invalid TableArn: Invalid ResourceArn provided as input {}", arn));
    }
    parts.push_back(arn.substr(start, colon - start));
    start = colon + 1;
  }
  std::string_view resource = arn.substr(start);
  if (parts[2] == "dynamodb" && parts[3] != ctx.options.region) {
    throw ApiError::validation(
        fmt::format("Invalid TableArn: Invalid ResourceArn provided as input {}", arn));
  }
  if (parts[2] != "dynamodb") {
    throw ApiError::validation(
        fmt::format("{}Provided Arn is not a DynamoDB resource arn: {}", kInvalidParameters, arn));
  }
  if (resource.substr(0, 6) != "table/" || resource.size() == 6) {
    throw ApiError::validation(
        fmt::format("{}Invalid resource arn provided, only table or stream is accepted. "
                    "Provided resource arn: {}",
                    kInvalidParameters, arn));
  }
  std::string_view name = resource.substr(6);
  if (name.find('/') != std::string_view::npos) {
    throw ApiError::validation(
        fmt::format("{}Invalid resource arn provided, only table or stream is accepted. "
                    "Provided resource arn: {}",
                    kInvalidParameters, arn));
  }
  // A table of another account is not Kumo's to show: DynamoDB refuses the caller.
  if (parts[4] != ctx.options.account_id) throw ApiError::access_denied();
  engine::TablePtr table = ctx.engine.find_table(name);
  if (!table) {
    throw ApiError::resource_not_found(
        fmt::format("Requested resource not found: ResourcArn: {} not found", arn));
  }
  // A table being restored from a backup is not found by its name yet.
  if (table->restore) throw table_not_found_error(table->name);
  return table;
}

std::optional<std::string_view> read_arn(const JsonObject& request, CoralErrors& coral) {
  auto arn = request.string("ResourceArn");
  coral.require(arn.has_value(), "resourceArn");
  if (arn) coral.check_length(*arn, "resourceArn", 1, 1283);
  return arn;
}

}  // namespace

std::vector<Tag> read_tags(const JsonArray& tags, CoralErrors& coral) {
  std::vector<Tag> out;
  std::size_t i = 0;
  for (const auto& t : tags.objects()) {
    ++i;
    std::optional<std::string_view> key, value;
    if (t) {
      key = t->string("Key");
      value = t->string("Value");
    }
    std::string path = fmt::format("tags.{}.member", i);
    coral.require(key.has_value(), path + ".key");
    if (key) coral.check_length(*key, path + ".key", 1, 128);
    coral.require(value.has_value(), path + ".value");
    if (value) coral.check_length(*value, path + ".value", 0, 256);
    out.push_back({std::string(key.value_or("")), std::string(value.value_or(""))});
  }
  return out;
}

void check_tags(const std::vector<Tag>& tags, std::size_t existing) {
  std::set<std::string_view> keys;
  for (const auto& tag : tags) {
    if (!tag_text_ok(tag.key)) {
      throw ApiError::validation("The Tag Key provided is invalid, Key: " + tag.key);
    }
    if (!tag_text_ok(tag.value)) {
      throw ApiError::validation("The Tag Value provided is invalid, Value: " + tag.value);
    }
    if (tag.key.substr(0, 4) == "aws:") {
      throw ApiError::validation("Tag Key cannot be prefixed with aws:, Key: " + tag.key);
    }
    if (!keys.insert(tag.key).second) {
      throw ApiError::validation("Duplicate Tag Keys provided as input: Duplicate Tag Key found " +
                                 tag.key);
    }
  }
  if (existing + tags.size() > kMaxTags) {
    throw ApiError::validation(
        "Number of Tags exceed the current limit for the provided ResourceArn");
  }
}

std::string tag_resource(const Context& ctx, const JsonObject& request) {
  CoralErrors coral;
  auto arn = read_arn(request, coral);
  auto tags_json = request.array("Tags");
  coral.require(tags_json.has_value(), "tags");
  std::vector<Tag> tags;
  if (tags_json) tags = read_tags(*tags_json, coral);
  coral.throw_if_any();
  engine::TablePtr table = tagged_table(ctx, *arn);
  if (tags.empty()) throw ApiError::validation("Atleast one Tag needs to be provided as Input.");
  ctx.engine.update_table(table->name, [&](TableDefinition& t) {
    std::size_t added = 0;
    for (const auto& tag : tags) {
      bool exists = false;
      for (const auto& old : t.tags) exists |= old.key == tag.key;
      added += !exists;
    }
    check_tags(tags, t.tags.size() + added - tags.size());
    for (const auto& tag : tags) {
      bool replaced = false;
      for (auto& old : t.tags) {
        if (old.key == tag.key) {
          old.value = tag.value;
          replaced = true;
        }
      }
      if (!replaced) t.tags.push_back(tag);
    }
  });
  return {};
}

std::string untag_resource(const Context& ctx, const JsonObject& request) {
  CoralErrors coral;
  auto arn = read_arn(request, coral);
  auto keys_json = request.array("TagKeys");
  coral.require(keys_json.has_value(), "tagKeys");
  std::vector<std::string> keys;
  if (keys_json) {
    std::size_t i = 0;
    for (const auto& k : keys_json->strings()) {
      ++i;
      std::string path = fmt::format("tagKeys.{}.member", i);
      coral.require(k.has_value(), path);
      if (k) coral.check_length(*k, path, 1, 128);
      keys.emplace_back(k.value_or(""));
    }
  }
  coral.throw_if_any();
  engine::TablePtr table = tagged_table(ctx, *arn);
  if (keys.empty())
    throw ApiError::validation("Atleast one Tag Key needs to be provided as Input.");
  ctx.engine.update_table(table->name, [&](TableDefinition& t) {
    std::erase_if(t.tags, [&](const Tag& tag) {
      return std::find(keys.begin(), keys.end(), tag.key) != keys.end();
    });
  });
  return {};
}

std::string list_tags_of_resource(const Context& ctx, const JsonObject& request) {
  CoralErrors coral;
  auto arn = read_arn(request, coral);
  auto next_token = request.string("NextToken");
  coral.throw_if_any();
  engine::TablePtr table = tagged_table(ctx, *arn);
  // All of a table's tags (at most 50) fit one page; a NextToken is an index into them.
  std::size_t start = 0;
  if (next_token) {
    try {
      start = std::stoul(std::string(*next_token));
    } catch (const std::exception&) {
      throw ApiError::validation("Invalid NextToken provided: " + std::string(*next_token));
    }
  }
  JsonOut out;
  JsonWriter w(out);
  w.StartObject();
  write_key(w, "Tags");
  w.StartArray();
  for (std::size_t i = start; i < table->tags.size(); ++i) {
    w.StartObject();
    write_key(w, "Key");
    write_string(w, table->tags[i].key);
    write_key(w, "Value");
    write_string(w, table->tags[i].value);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return json_text(out);
}

}  // namespace kumo::api
