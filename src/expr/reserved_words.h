// DynamoDB's reserved words: an unaliased name in any expression that equals one of them,
// ignoring case, must be written as a #placeholder.
#pragma once

#include <cstddef>
#include <string_view>

namespace kumo::expr {

// True when `word` is reserved (case-insensitive). REMOVE and the function names are not.
bool is_reserved_word(std::string_view word);

// Number of reserved words (573 on the Developer Guide page).
std::size_t reserved_word_count();

}  // namespace kumo::expr
