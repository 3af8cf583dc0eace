#include "expr/cache.h"

#include <algorithm>

#include "expr/parser.h"

namespace kumo::expr {
namespace {

// A small direct-mapped cache per thread in front of the shared one: a hot expression is
// found without touching any lock shared between threads. Entries are pure functions of
// (kind, text), so a stale one is still correct.
struct LocalSlot {
  const ExpressionCache* owner = nullptr;
  ExpressionKind kind = ExpressionKind::kCondition;
  std::string text;
  std::shared_ptr<const ParsedExpression> parsed;
};
constexpr std::size_t kLocalSlots = 64;
thread_local std::array<LocalSlot, kLocalSlots> local_slots;

}  // namespace

ExpressionCache::ExpressionCache(std::size_t capacity, TextLimits limits)
    : per_shard_(std::max<std::size_t>(1, capacity / kShards)), limits_(limits) {}

std::shared_ptr<const ParsedExpression> ExpressionCache::get(ExpressionKind kind,
                                                             std::string_view text) {
  const std::size_t hash = Hash{}(text);
  LocalSlot& local =
      local_slots[(hash + static_cast<std::size_t>(kind) * 0x9E3779B9u) % kLocalSlots];
  if (local.owner == this && local.kind == kind && local.text == text) return local.parsed;
  std::shared_ptr<const ParsedExpression> parsed = get_shared(hash, kind, text);
  local.owner = this;
  local.kind = kind;
  local.text.assign(text);
  local.parsed = parsed;
  return parsed;
}

std::shared_ptr<const ParsedExpression> ExpressionCache::get_shared(std::size_t hash,
                                                                    ExpressionKind kind,
                                                                    std::string_view text) {
  Shard& shard = shards_[hash % kShards];
  const auto k = static_cast<std::size_t>(kind);
  {
    MutexLock lock(shard.mutex);
    const Map& map = shard.by_kind[k];
    if (auto it = map.find(text); it != map.end()) return it->second;
  }
  // Parse outside the lock; a concurrent parse of the same text is harmless (the first one
  // inserted wins and both results are equivalent).
  std::shared_ptr<const ParsedExpression> parsed = limits_ == TextLimits::kApply
                                                       ? parse_expression(kind, text)
                                                       : parse_generated_expression(kind, text);
  MutexLock lock(shard.mutex);
  Map& map = shard.by_kind[k];
  if (auto it = map.find(text); it != map.end()) return it->second;
  if (shard.size >= per_shard_) {
    for (Map& m : shard.by_kind) {
      if (!m.empty()) {
        m.erase(m.begin());
        --shard.size;
        break;
      }
    }
  }
  map.emplace(std::string(text), parsed);
  ++shard.size;
  return parsed;
}

std::size_t ExpressionCache::size() const {
  std::size_t n = 0;
  for (const Shard& shard : shards_) {
    MutexLock lock(shard.mutex);
    n += shard.size;
  }
  return n;
}

void ExpressionCache::clear() {
  for (Shard& shard : shards_) {
    MutexLock lock(shard.mutex);
    for (Map& m : shard.by_kind) m.clear();
    shard.size = 0;
  }
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
