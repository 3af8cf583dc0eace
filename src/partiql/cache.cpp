#include "partiql/cache.h"

#include "partiql/parser.h"

namespace kumo::partiql {

std::shared_ptr<const Statement> StatementCache::get(std::string_view text) {
  return cache_.get(0, text, [](std::string_view t) { return parse_statement(t); });
}

StatementCache& statement_cache() {
  static StatementCache cache;
  return cache;
}

std::shared_ptr<const Statement> parse(std::string_view text) {
  return statement_cache().get(text);
}

}  // namespace kumo::partiql
