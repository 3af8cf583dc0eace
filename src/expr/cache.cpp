#include "expr/cache.h"

#include "expr/parser.h"

namespace kumo::expr {

std::shared_ptr<const ParsedExpression> ExpressionCache::get(ExpressionKind kind,
                                                             std::string_view text) {
  return cache_.get(static_cast<std::size_t>(kind), text, [this, kind](std::string_view t) {
    return limits_ == TextLimits::kApply ? parse_expression(kind, t)
                                         : parse_generated_expression(kind, t);
  });
}

ExpressionCache& expression_cache() {
  static ExpressionCache cache;
  return cache;
}

std::shared_ptr<const ParsedExpression> parse(ExpressionKind kind, std::string_view text) {
  return expression_cache().get(kind, text);
}

std::shared_ptr<const ParsedExpression> parse_generated(ExpressionKind kind,
                                                        std::string_view text) {
  static ExpressionCache cache(2048, TextLimits::kIgnore);
  return cache.get(kind, text);
}

}  // namespace kumo::expr
