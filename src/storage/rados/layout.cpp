#include "storage/rados/layout.h"

namespace kumo::storage::rados {

std::string encode_ops(const std::vector<const Resolved*>& ops) {
  std::string out;
  put_u32(&out, static_cast<std::uint32_t>(ops.size()));
  for (const Resolved* op : ops) {
    out.push_back(op->del ? 1 : 0);
    for (const std::string* s : {&op->object.ns, &op->object.oid, &op->key, &op->value}) {
      put_u32(&out, static_cast<std::uint32_t>(s->size()));
      out += *s;
    }
  }
  return out;
}
bool decode_ops(std::string_view in, std::vector<Resolved>* ops) {
  auto take = [&in](std::size_t n, std::string_view* out) {
    if (in.size() < n) return false;
    *out = in.substr(0, n);
    in.remove_prefix(n);
    return true;
  };
  std::string_view field;
  if (!take(4, &field)) return false;
  const std::uint64_t count = get_be(field, 4);
  for (std::uint64_t i = 0; i < count; ++i) {
    Resolved op;
    if (!take(1, &field)) return false;
    op.del = field[0] != 0;
    for (std::string* s : {&op.object.ns, &op.object.oid, &op.key, &op.value}) {
      if (!take(4, &field)) return false;
      const std::uint64_t n = get_be(field, 4);
      if (!take(n, &field)) return false;
      s->assign(field);
    }
    ops->push_back(std::move(op));
  }
  return in.empty();
}

std::string counter_prefix(std::string_view counter) {
  std::string out = kCounterPrefix;
  put_u16(&out, static_cast<std::uint16_t>(counter.size()));
  out.append(counter);
  return out;
}

}  // namespace kumo::storage::rados
