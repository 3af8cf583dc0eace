// A process-wide cache of parsed statements keyed by their text, as expressions are cached
// (expr/parse_cache.h): a hot statement is parsed once, and only its parameters and the
// checks of check.h are redone per request. Errors are not cached.
#pragma once

#include <cstddef>
#include <memory>
#include <string_view>

#include "expr/parse_cache.h"
#include "partiql/ast.h"

namespace kumo::partiql {

class StatementCache {
 public:
  explicit StatementCache(std::size_t capacity = 2048) : cache_(capacity) {}

  // The parse of `text`, from the cache or parsed now (parser.h lists the errors thrown).
  // Thread-safe.
  std::shared_ptr<const Statement> get(std::string_view text);

  std::size_t size() const { return cache_.size(); }
  void clear() { cache_.clear(); }

 private:
  expr::ParseCache<Statement, 1> cache_;
};

// The process-wide cache.
StatementCache& statement_cache();

// Shorthand for statement_cache().get(text).
std::shared_ptr<const Statement> parse(std::string_view text);

}  // namespace kumo::partiql
