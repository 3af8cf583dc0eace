// A process-wide cache of parsed expressions keyed by (kind, text), so a hot request does
// not parse its expressions again. Parsed expressions are immutable and shared; only the
// per-request binding of placeholders (binding.h) is redone each time (see parse_cache.h).
#pragma once

#include <cstddef>
#include <memory>
#include <string_view>

#include "expr/ast.h"
#include "expr/parse_cache.h"
#include "expr/parser.h"

namespace kumo::expr {

class ExpressionCache {
 public:
  // Holds at most about `capacity` expressions; beyond that, inserting drops an arbitrary
  // older entry of the same shard. Parses with or without the text limits: a text past
  // them must never be found in a cache that applies them.
  explicit ExpressionCache(std::size_t capacity = 2048, TextLimits limits = TextLimits::kApply)
      : cache_(capacity), limits_(limits) {}

  // The parse of `text` as `kind`, from the cache or parsed now (see parser.h for the
  // errors thrown). Errors are not cached. Thread-safe.
  std::shared_ptr<const ParsedExpression> get(ExpressionKind kind, std::string_view text);

  std::size_t size() const { return cache_.size(); }
  void clear() { cache_.clear(); }

 private:
  static constexpr std::size_t kKinds = 5;
  ParseCache<ParsedExpression, kKinds> cache_;
  TextLimits limits_;
};

// The process-wide cache.
ExpressionCache& expression_cache();

// Shorthand for expression_cache().get(kind, text).
std::shared_ptr<const ParsedExpression> parse(ExpressionKind kind, std::string_view text);

// The same for text Kumo generates from legacy parameters, through a second process-wide
// cache that does not apply the text limits.
std::shared_ptr<const ParsedExpression> parse_generated(ExpressionKind kind, std::string_view text);

}  // namespace kumo::expr
