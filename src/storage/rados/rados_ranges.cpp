// The RADOS back end's partition ranges: each partition object holds its range, which every
// write to it compares and every read of it checks, so that a front end whose map is stale
// (another front end split the partition, or dropped the table) finds out before it writes.
#include <algorithm>
#include <cerrno>

#include "storage/rados/rados_storage.h"

namespace kumo::storage::rados {

std::string RadosStorage::range_value(const std::vector<std::uint64_t>& starts,
                                      std::uint64_t start) {
  std::string value;
  put_u64(&value, start);
  auto next = std::upper_bound(starts.begin(), starts.end(), start);
  value.push_back(next == starts.end() ? '\0' : '\1');
  put_u64(&value, next == starts.end() ? 0 : *next);
  return value;
}

std::string RadosStorage::expected_range(const ObjectRef& object) {
  if (object.oid.size() != 17 || object.oid[0] != 'p' || object.ns == prefix_) return {};
  const std::uint64_t start = std::stoull(object.oid.substr(1), nullptr, 16);
  const Starts starts = partition_starts(table_of(object));
  if (!std::binary_search(starts->begin(), starts->end(), start)) return {};
  return range_value(*starts, start);
}

bool RadosStorage::in_range(std::string_view range, std::string_view key) {
  if (key.compare(0, kReserved.size(), kReserved) == 0) return true;
  const std::uint64_t token = key_token(key);
  return token >= get_be(range, 8) && (range[8] == '\0' || token < get_be(range.substr(9), 8));
}

bool RadosStorage::range_fits(std::string_view found, std::string_view expected) {
  if (found == expected) return true;
  // Frozen: [range]['F'][u64 middle]. The partition still holds its whole range, so it
  // fits the map from before the split and the lower half's range of the map after.
  if (found.size() != 26 || found[17] != 'F' || expected.size() != 17) return false;
  if (found.substr(0, 17) == expected) return true;
  std::string lower(found.substr(0, 8));
  lower.push_back('\1');
  lower.append(found.substr(18, 8));
  return lower == expected;
}

void RadosStorage::check_range(const ObjectRef& object, const std::string& expected) {
  std::map<std::string, librados::bufferlist> out;
  librados::ObjectReadOperation op;
  int rv = 0;
  op.omap_get_vals_by_keys({kRangeKey}, &out, &rv);
  const int r = io(object.ns).operate(object.oid, &op, nullptr);
  if (r == -ENOENT) throw LayoutChanged{table_of(object), false, true};
  check(r, "read");
  auto it = out.find(kRangeKey);
  const std::string found = it == out.end() ? std::string() : it->second.to_str();
  if (found == expected) return;
  throw LayoutChanged{table_of(object), range_fits(found, expected), false};
}

std::uint32_t RadosStorage::table_of(const ObjectRef& object) const {
  return static_cast<std::uint32_t>(std::stoul(object.ns.substr(prefix_.size() + 1)));
}

void RadosStorage::refresh_map(std::uint32_t table) {
  forget_partitions(table);
  splits_published_.fetch_add(1, std::memory_order_release);
}

void RadosStorage::ensure_ranges(std::uint32_t table, const std::vector<std::uint64_t>& starts) {
  const std::shared_ptr<Connection> on = connection();  // (held until the ops completed)
  std::vector<librados::AioCompletion*> done;
  std::vector<librados::ObjectWriteOperation> ops(starts.size());
  std::vector<int> cmp(starts.size());
  for (std::size_t i = 0; i < starts.size(); ++i) {
    // Set only where there is none: a range already there is the newer one.
    librados::bufferlist absent, value;
    value.append(range_value(starts, starts[i]));
    ops[i].create(false);
    ops[i].omap_cmp({{kRangeKey, {absent, LIBRADOS_CMPXATTR_OP_EQ}}}, &cmp[i]);
    ops[i].omap_set({{kRangeKey, value}});
    done.push_back(librados::Rados::aio_create_completion());
    check(io(on, table_namespace(table)).aio_operate("p" + hex16(starts[i]), done.back(), &ops[i]),
          "write");
  }
  int failed = 0;
  for (librados::AioCompletion* c : done) {
    c->wait_for_complete();
    const int r = c->get_return_value();
    c->release();
    if (r < 0 && r != -ECANCELED && failed == 0) failed = r;
  }
  check(failed, "cannot set the ranges of table " + std::to_string(table) + "'s partitions");
}

}  // namespace kumo::storage::rados
