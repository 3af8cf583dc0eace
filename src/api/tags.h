// Tags: the rules TagResource and CreateTable's Tags share (tags.cpp).
#pragma once

#include <cstddef>
#include <vector>

#include "api/json_reader.h"
#include "model/table.h"

namespace kumo::api {

// Reads a Tags list, adding model-constraint violations (a missing or too long key or
// value) under "tags".
std::vector<Tag> read_tags(const JsonArray& tags, CoralErrors& coral);
// Checks tag keys and values, duplicates, and that the table's tags (`existing` of them
// kept) stay within DynamoDB's limit of 50. Throws ValidationException.
void check_tags(const std::vector<Tag>& tags, std::size_t existing);

}  // namespace kumo::api
