// A process-wide cache of parsed expressions keyed by (kind, text), so a hot request does
// not parse its expressions again. Parsed expressions are immutable and shared; only the
// per-request binding of placeholders (binding.h) is redone each time. Lookups go through a
// small per-thread cache first, then a sharded map behind one mutex per shard.
#pragma once

#include <array>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include "expr/ast.h"
#include "expr/parser.h"
#include "model/mutex.h"

namespace kumo::expr {

class ExpressionCache {
 public:
  // Holds at most about `capacity` expressions; beyond that, inserting drops an arbitrary
  // older entry of the same shard. Parses with or without the text limits: a text past
  // them must never be found in a cache that applies them.
  explicit ExpressionCache(std::size_t capacity = 2048, TextLimits limits = TextLimits::kApply);

  // The parse of `text` as `kind`, from the cache or parsed now (see parser.h for the
  // errors thrown). Errors are not cached. Thread-safe.
  std::shared_ptr<const ParsedExpression> get(ExpressionKind kind, std::string_view text);

  std::size_t size() const;
  void clear();

 private:
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  using Map = std::unordered_map<std::string, std::shared_ptr<const ParsedExpression>, Hash,
                                 std::equal_to<>>;
  static constexpr std::size_t kShards = 16;
  static constexpr std::size_t kKinds = 5;
  struct Shard {
    mutable Mutex mutex;
    std::array<Map, kKinds> by_kind KUMO_GUARDED_BY(mutex);
    std::size_t size KUMO_GUARDED_BY(mutex) = 0;
  };

  std::shared_ptr<const ParsedExpression> get_shared(std::size_t hash, ExpressionKind kind,
                                                     std::string_view text);

  std::size_t per_shard_;
  TextLimits limits_;
  std::array<Shard, kShards> shards_;
};

// The process-wide cache.
ExpressionCache& expression_cache();

// Shorthand for expression_cache().get(kind, text).
std::shared_ptr<const ParsedExpression> parse(ExpressionKind kind, std::string_view text);

// The same for text Kumo generates from legacy parameters, through a second process-wide
// cache that does not apply the text limits.
std::shared_ptr<const ParsedExpression> parse_generated(ExpressionKind kind, std::string_view text);

}  // namespace kumo::expr
