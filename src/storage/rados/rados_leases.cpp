// The RADOS back end's leases: each front end sharing a pool holds a lease (an exclusive
// RADOS lock with a duration on an object of its own, `kumo.fe.<instance>`), renewed every
// quarter of its length. What a front end leaves in the pool while it works (outbox
// entries, transaction records, split keys) names it; another front end finishes them only
// once it holds that front end's lock itself, which RADOS grants only when the lease has
// lapsed. Before it finishes any of that work, it blocklists the client of the front end
// whose lease lapsed (its address is listed in the catalog with its lease): the OSDs then
// refuse every op that one still sends, even one it checked its lease for before a pause.
// A front end writes only while its lease has at least a third of its length left by its
// own clock; one that finds it lapsed (paused past it, cut off, or blocklisted) writes
// nothing more under it and goes on under a new instance, lease and client.
#include <pthread.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <random>
#include <thread>

#include "storage/rados/rados_storage.h"

namespace kumo::storage::rados {

namespace {

const std::string kLeaseLock = "live";

// How long a fenced client stays blocklisted: far longer than any request of it could
// still be waiting to be sent (its lease checks by its own clock refuse it after that).
constexpr double kBlocklistSeconds = 3600;

std::int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

std::int64_t RadosStorage::tick_gap() const {
  // The tick thread ticks every 100 ms. A gap of a third of the lease (2 s at least, so
  // that a busy machine's scheduling is not taken for a stop) means the process was stopped:
  // a stop that takes a process past its lease lasts at least 5/12 of it.
  return std::max<std::int64_t>(2'000'000'000LL, lease_seconds_ * 1'000'000'000LL / 3);
}

std::string RadosStorage::lease_object(std::uint64_t instance) {
  return kLeasePrefix + hex16(instance);
}

void RadosStorage::forget_front_end(std::uint64_t instance) {
  remove_object({prefix_, lease_object(instance)});
  std::string key = kFrontEndPrefix;
  put_u64(&key, instance);
  remove_keys({prefix_, kCatalogObject}, {key});
  // Its claims go with it: a job still to do is claimed again by whoever looks for it, and
  // one whose work is gone (a table dropped meanwhile) leaves nothing behind. Each removal
  // is guarded on the claim still naming it.
  std::string holder;
  put_u64(&holder, instance);
  for (const auto& [job, owner] : read_prefix({prefix_, kCatalogObject}, kJobPrefix)) {
    // (Held by it, or being handed over by it: the front end it went to claims it anew.)
    if (owner.compare(0, holder.size(), holder) != 0) continue;
    librados::ObjectWriteOperation op;
    librados::bufferlist expected;
    expected.append(owner);
    int cmp = 0;
    op.omap_cmp({{job, {expected, LIBRADOS_CMPXATTR_OP_EQ}}}, &cmp);
    op.omap_rm_keys({job});
    const int r = catalog_io().operate(kCatalogObject, &op);
    if (r != -ECANCELED) check(r, "cannot remove the claims of front end " + hex16(instance));
  }
}

int RadosStorage::lock_lease(std::uint64_t instance, std::uint64_t cookie, std::uint8_t flags) {
  timeval duration{static_cast<time_t>(lease_seconds_), 0};
  return catalog_io().lock_exclusive(lease_object(instance), kLeaseLock, hex16(cookie),
                                     "kumo front end", &duration, flags);
}

void RadosStorage::take_lease() {
  for (;;) {
    const std::int64_t sent = steady_ns();
    const int r = lock_lease(instance_, instance_, 0);
    if (r == 0) {
      lease_until_.store(sent + lease_seconds_ * 2'000'000'000LL / 3, std::memory_order_release);
      renewed_.store(sent, std::memory_order_release);
      // Listed in the catalog, where the others find the leases to watch, with the
      // address of the client it writes through (which they blocklist to fence it).
      std::string key = kFrontEndPrefix;
      put_u64(&key, instance_);
      librados::bufferlist address;
      address.append(connection()->address);
      librados::ObjectWriteOperation op;
      op.omap_set({{key, address}});
      check(catalog_io().operate(kCatalogObject, &op), "cannot list this front end");
      renewals_.store(0, std::memory_order_release);
      note_renewal();
      return;
    }
    // (An instance is random: one taken already is drawn again.)
    if (r != -EBUSY && r != -EEXIST) check(r, "cannot take this front end's lease");
    std::random_device random;
    instance_ = (std::uint64_t{random()} << 32) ^ random();
  }
}

void RadosStorage::check_lease() {
  if (loaded_generation_.load(std::memory_order_acquire) <
      generation_.load(std::memory_order_acquire)) {
    fail("this front end reloads its catalog on its new client");
  }
  const std::int64_t now = steady_ns();
  const std::int64_t until = lease_until_.load(std::memory_order_acquire);
  if (now < until) return;
  // A renewal sent while the lease held and still waiting on the cluster (the lease
  // object's placement group is down: an OSD failed and is not yet marked down), while
  // this process runs: nobody can take the lease meanwhile, since that too goes through
  // the same placement group. A process that was itself stopped (its ticks stopped) since
  // the renewal was sent gets no such grace.
  // Only up to a whole lease after the last renewal that succeeded was sent: the lock
  // expires no earlier than that in the cluster.
  const std::int64_t sent = renew_sent_.load(std::memory_order_acquire);
  const std::int64_t lease = std::int64_t{lease_seconds_} * 1'000'000'000LL;
  if (sent != 0 && sent < until && now - last_tick_.load(std::memory_order_acquire) < tick_gap() &&
      stall_seen_.load(std::memory_order_acquire) < sent &&
      now < renewed_.load(std::memory_order_acquire) + lease) {
    return;
  }

  // Paused, or cut off from the cluster, past the lease: what this process has in flight
  // may be finished by another front end already. Nothing more is written under it.
  lease_lost_.store(true, std::memory_order_release);
  { std::unique_lock lock(lease_mutex_); }
  lease_wake_.notify_all();
  fail("this front end's lease lapsed; it goes on under a new one");
}

void RadosStorage::start_leases() {
  last_tick_.store(steady_ns(), std::memory_order_release);
  lease_thread_ = std::thread([this] {
    pthread_setname_np(pthread_self(), "kumo-lease");
    lease_loop();
  });
  // Every lease's length, the work of front ends whose leases lapsed is finished: on a
  // thread of its own, so that renewals never wait behind it.
  takeover_thread_ = std::thread([this] {
    pthread_setname_np(pthread_self(), "kumo-takeover");
    for (;;) {
      {
        std::unique_lock lock(lease_mutex_);
        if (lease_wake_.wait_for(lock, std::chrono::seconds(lease_seconds_),
                                 [&] { return lease_stopping_; })) {
          return;
        }
      }
      // (Not before the recovery at open has run: it finishes what lapsed front ends left
      // before this one serves, and their locks must be its own to take.)
      if (!opened_.load(std::memory_order_acquire)) continue;
      try {
        take_over();
      } catch (...) {
        // (Thrown by kumo's runtime: only `...` catches it here.) Tried again next time.
        log("finishing the work of front ends whose leases lapsed failed; tried again");
      }
    }
  });
  tick_thread_ = std::thread([this] {
    pthread_setname_np(pthread_self(), "kumo-tick");
    std::uint64_t blocklisted = blocklisted_answers();
    for (;;) {
      {
        std::unique_lock lock(lease_mutex_);
        if (lease_wake_.wait_for(lock, std::chrono::milliseconds(100),
                                 [&] { return lease_stopping_; })) {
          return;
        }
      }
      const std::int64_t now = steady_ns();
      if (now - last_tick_.load(std::memory_order_acquire) >= tick_gap()) {
        stall_seen_.store(now, std::memory_order_release);
      }
      last_tick_.store(now, std::memory_order_release);
      if (blocklisted_answers() != blocklisted) {
        blocklisted = blocklisted_answers();
        renew_now_.store(true, std::memory_order_release);
        { std::unique_lock lock(lease_mutex_); }
        lease_wake_.notify_all();
      }
    }
  });
}

void RadosStorage::stop_leases() {
  {
    std::unique_lock lock(lease_mutex_);
    if (!lease_thread_.joinable()) return;
    lease_stopping_ = true;
  }
  lease_wake_.notify_all();
  lease_thread_.join();
  takeover_thread_.join();
  tick_thread_.join();
}

void RadosStorage::lease_loop() {
  // Renewals are sent a quarter of the lease apart, counted from the last one sent: a
  // renewal the cluster answered slowly (an OSD failing) is followed at once by the next.
  const auto renew_every = std::chrono::milliseconds(lease_seconds_ * 1000 / 4);
  auto next = std::chrono::steady_clock::now() + renew_every;
  for (;;) {
    {
      std::unique_lock lock(lease_mutex_);
      lease_wake_.wait_until(lock, next, [&] {
        return lease_stopping_ || lease_lost_.load(std::memory_order_acquire) ||
               renew_now_.load(std::memory_order_acquire);
      });
      if (lease_stopping_) return;
    }
    renew_now_.store(false, std::memory_order_release);
    next = std::chrono::steady_clock::now() + renew_every;
    try {
      // A write was refused for a lapsed lease: what it left half done is for the others to
      // finish, under the old instance.
      const bool lost = lease_lost_.load(std::memory_order_acquire);
      const std::int64_t sent = steady_ns();
      renew_sent_.store(sent, std::memory_order_release);
      const int r =
          lost ? -ETIMEDOUT : lock_lease(instance_, instance_, LIBRADOS_LOCK_FLAG_MUST_RENEW);
      if (r == 0) {
        // (Before the renewal stops counting as in flight: a write checking in between
        // sees one or the other.)
        lease_until_.store(sent + lease_seconds_ * 2'000'000'000LL / 3, std::memory_order_release);
        renewed_.store(sent, std::memory_order_release);
        renew_sent_.store(0, std::memory_order_release);
        note_renewal();
      } else {
        renew_sent_.store(0, std::memory_order_release);
        renew_instance();
      }
    } catch (...) {
      // (Thrown by kumo's runtime: only `...` catches it here.) Tried again after a second.
      renew_sent_.store(0, std::memory_order_release);
      log("the lease round failed; it is tried again");
      std::unique_lock lock(lease_mutex_);
      lease_wake_.wait_for(lock, std::chrono::seconds(1), [&] { return lease_stopping_; });
      next = std::chrono::steady_clock::now();
    }
  }
}

void RadosStorage::renew_instance() {
  // A new client first: the old one may be blocklisted already, and will be once another
  // front end takes over the old instance's work.
  std::shared_ptr<Connection> fresh = connect();
  // (The old client goes once the ops that still hold it returned, and not under layout_.)
  std::shared_ptr<Connection> retired;
  // Writes wait while the instance changes: none may name the old one from here on.
  std::unique_lock<std::shared_mutex> layout(layout_);
  const std::uint64_t old = instance_;
  {
    std::unique_lock lock(records_mutex_);
    records_.clear();  // the old instance's records are for others to finish
  }
  const std::string address = fresh->address;
  retired = replace_connection(std::move(fresh));
  // Nothing is written on the new client before the catalog is loaded on it: a change
  // announced while this front end was stopped may have been missed.
  generation_.fetch_add(1, std::memory_order_acq_rel);
  std::random_device random;
  instance_ = (std::uint64_t{random()} << 32) ^ random();
  take_lease();
  lease_lost_.store(false, std::memory_order_release);
  // The watch is set again on the new client, and the catalog reloaded.
  queue_notify({0, 0, {}, true});
  log("the lease of front end " + hex16(old) + " lapsed; this process goes on as " +
      hex16(instance_) + ", client " + address);
}

void RadosStorage::await_client() {
  auto renewing = [this] {
    return lease_lost_.load(std::memory_order_acquire) ||
           loaded_generation_.load(std::memory_order_acquire) <
               generation_.load(std::memory_order_acquire);
  };
  if (!renewing()) return;
  // The request's batch was made with the definitions held before: it fails (and is tried
  // again by the client), once the new client is ready, so that the next attempt does not
  // fail too.
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(std::min(lease_seconds_, 5u));
  while (renewing() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  fail("this front end goes on under a new client and catalog");
}

std::string RadosStorage::listed_address(std::uint64_t instance) {
  std::string key = kFrontEndPrefix, address;
  put_u64(&key, instance);
  read_key({prefix_, kCatalogObject}, key, &address);
  return address;
}

void RadosStorage::fence(std::uint64_t instance, const std::string& address) {
  if (address.empty()) return;  // (listed before addresses were)
  const std::shared_ptr<Connection> on = connection();
  librados::Rados& cluster = on->cluster;
  check(cluster.blocklist_add(address, kBlocklistSeconds),
        "cannot blocklist front end " + hex16(instance));
  check(cluster.wait_for_latest_osdmap(), "cannot read the cluster's map");
  log("front end " + hex16(instance) + " (client " + address + ") is blocklisted");
}

void RadosStorage::note_renewal() {
  std::string value;
  put_u64(&value, renewals_.fetch_add(1, std::memory_order_acq_rel) + 1);
  librados::bufferlist count;
  count.append(value);
  librados::ObjectWriteOperation op;
  op.assert_exists();
  op.omap_set({{kRenewalsKey, count}});
  const int r = catalog_io().operate(lease_object(instance_), &op);
  if (r != -ENOENT) check(r, "cannot count this front end's renewals");
}

std::optional<std::uint64_t> RadosStorage::renewals_of(std::uint64_t instance) {
  std::string value;
  if (!read_key({prefix_, lease_object(instance)}, kRenewalsKey, &value) || value.size() != 8) {
    return std::nullopt;
  }
  return get_be(value, 8);
}

bool RadosStorage::owner_gone(std::uint64_t owner, std::map<std::uint64_t, bool>* known,
                              bool wait) {
  if (owner == instance_) return false;
  auto it = known->find(owner);
  if (it != known->end()) return it->second;
  // Holding its lock is proof it is gone (RADOS grants it only once its lease lapsed), and
  // makes this front end the one that finishes its work. With `wait`, for up to a lease's
  // length: a front end that left work behind and renews its lease no longer is alive.
  // One seen renewing it (its count of renewals moves: a renewal is sent every quarter of
  // the lease) is alive, and finishes its own work: it is not waited for longer.
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(lease_seconds_ * 1000 + 500);
  const std::optional<std::uint64_t> first = wait ? renewals_of(owner) : std::nullopt;
  const bool counted = first.has_value();
  const std::uint64_t renewals = first.value_or(0);
  for (;;) {
    const int r = lock_lease(owner, instance_, 0);
    if (r != 0 && r != -EBUSY && r != -EEXIST) check(r, "cannot look at a front end's lease");
    // Fenced before anything of its work is finished: an op it sends from now on (one it
    // checked its lease for before a pause) is refused, so none lands after this front
    // end's ops on the same objects.
    if (r == 0) fence(owner, listed_address(owner));
    if (r == 0 || !wait || std::chrono::steady_clock::now() >= deadline) {
      return known->emplace(owner, r == 0).first->second;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
    if (counted && renewals_of(owner).value_or(renewals) != renewals) {
      log("front end " + hex16(owner) + " renews its lease: what it left is its own to finish");
      return known->emplace(owner, false).first->second;
    }
  }
}

void RadosStorage::take_over() {
  std::vector<std::uint64_t> owners;
  for (const auto& [k, v] : read_prefix({prefix_, kCatalogObject}, kFrontEndPrefix)) {
    if (k.size() == kFrontEndPrefix.size() + 8) owners.push_back(get_be(k.substr(2), 8));
  }
  std::map<std::uint64_t, bool> known;
  bool any = false;
  for (std::uint64_t owner : owners) any = owner_gone(owner, &known, false) || any;
  if (any) recover(&known);
  // And the transactions of this front end that failed midway (on one client, as in
  // recover()).
  std::shared_lock<std::shared_mutex> layout(layout_);
  finish_leftovers();
}

bool RadosStorage::claim_job(const std::string& name) {
  const std::string key = kJobPrefix + name;
  const ObjectRef catalog{prefix_, kCatalogObject};
  for (int attempt = 0; attempt < 3; ++attempt) {
    std::string owner;
    const bool claimed = read_key(catalog, key, &owner);
    const std::uint64_t self = instance_.load();
    if (claimed && (owner.size() == 8 || owner.size() == 16)) {
      const std::uint64_t holder = get_be(owner, 8);
      // (Held here, being handed over or not: the holder keeps the job until the taker
      // holds it.)
      if (holder == self) return true;
      const bool taker = owner.size() == 16 && get_be(std::string_view(owner).substr(8), 8) == self;
      // Listed: alive, or gone and not yet taken over (then it is soon). Unless it hands
      // the job to this front end.
      std::string listed = kFrontEndPrefix, ignored;
      put_u64(&listed, holder);
      if (!taker && read_key(catalog, listed, &ignored)) return false;
    }
    librados::ObjectWriteOperation op;
    librados::bufferlist expected, mine;
    if (claimed) expected.append(owner);
    std::string value;
    put_u64(&value, self);
    mine.append(value);
    int cmp = 0;
    op.omap_cmp({{key, {expected, LIBRADOS_CMPXATTR_OP_EQ}}}, &cmp);
    op.omap_set({{key, mine}});
    const int r = catalog_io().operate(kCatalogObject, &op);
    if (r == -ECANCELED) continue;  // claimed meanwhile: looked at again
    check(r, "cannot claim job " + name);
    return true;
  }
  return false;
}

std::vector<std::uint64_t> RadosStorage::live_processes() {
  const std::uint64_t self = instance_.load();
  std::vector<std::uint64_t> listed;
  for (const auto& [k, v] : read_prefix({prefix_, kCatalogObject}, kFrontEndPrefix)) {
    if (k.size() == kFrontEndPrefix.size() + 8) listed.push_back(get_be(k.substr(2), 8));
  }
  std::map<std::uint64_t, std::optional<std::uint64_t>> counts;
  for (std::uint64_t instance : listed) {
    if (instance != self) counts[instance] = renewals_of(instance);
  }
  // A live front end renews every quarter of its lease: one whose count stayed the same
  // for one and a half of those periods (3/8 of the lease) has stopped (killed, paused or
  // cut off), and its lease lapses soon.
  const std::int64_t now = steady_ns();
  const std::int64_t stopped_after = std::int64_t{lease_seconds_} * 3'000'000'000LL / 8;
  std::vector<std::uint64_t> live{self};
  std::unique_lock lock(renewals_mutex_);
  std::map<std::uint64_t, Renewals> seen;
  for (const auto& [instance, count] : counts) {
    Renewals renewals{count, now};
    auto it = seen_renewals_.find(instance);
    if (it != seen_renewals_.end() && it->second.count == count) renewals = it->second;
    if (now - renewals.since < stopped_after) live.push_back(instance);
    seen.emplace(instance, renewals);
  }
  seen_renewals_.swap(seen);
  return live;
}

std::vector<std::pair<std::string, Storage::JobClaim>> RadosStorage::job_claims(
    const std::string& prefix) {
  std::vector<std::pair<std::string, JobClaim>> out;
  for (const auto& [key, value] : read_prefix({prefix_, kCatalogObject}, kJobPrefix + prefix)) {
    if (value.size() != 8 && value.size() != 16) continue;
    JobClaim claim;
    claim.holder = get_be(value, 8);
    if (value.size() == 16) claim.taker = get_be(std::string_view(value).substr(8), 8);
    out.emplace_back(key.substr(kJobPrefix.size()), claim);
  }
  return out;
}

bool RadosStorage::hand_over_job(const std::string& name, std::uint64_t taker) {
  const std::string key = kJobPrefix + name;
  const std::uint64_t self = instance_.load();
  for (int attempt = 0; attempt < 3; ++attempt) {
    std::string owner;
    if (!read_key({prefix_, kCatalogObject}, key, &owner) || owner.size() < 8 ||
        get_be(owner, 8) != self) {
      return false;
    }
    std::string value;
    put_u64(&value, self);
    if (taker != 0) put_u64(&value, taker);
    if (value == owner) return true;
    librados::ObjectWriteOperation op;
    librados::bufferlist expected, next;
    expected.append(owner);
    next.append(value);
    int cmp = 0;
    op.omap_cmp({{key, {expected, LIBRADOS_CMPXATTR_OP_EQ}}}, &cmp);
    op.omap_set({{key, next}});
    const int r = catalog_io().operate(kCatalogObject, &op);
    if (r == -ECANCELED) continue;  // taken meanwhile: looked at again
    check(r, "cannot hand over job " + name);
    return true;
  }
  return false;
}

bool RadosStorage::take_job(const std::string& name, std::uint64_t holder) {
  const std::string key = kJobPrefix + name;
  std::string owner;
  if (!read_key({prefix_, kCatalogObject}, key, &owner) || owner.size() < 8 ||
      get_be(owner, 8) != holder) {
    return claim_job(name);
  }
  librados::ObjectWriteOperation op;
  librados::bufferlist expected, mine;
  expected.append(owner);
  std::string value;
  put_u64(&value, instance_.load());
  mine.append(value);
  int cmp = 0;
  op.omap_cmp({{key, {expected, LIBRADOS_CMPXATTR_OP_EQ}}}, &cmp);
  op.omap_set({{key, mine}});
  const int r = catalog_io().operate(kCatalogObject, &op);
  if (r == -ECANCELED) return false;  // claimed or handed over meanwhile
  check(r, "cannot take job " + name);
  return true;
}

void RadosStorage::release_job(const std::string& name) {
  // Held here, being handed over or not.
  std::string held;
  if (!read_key({prefix_, kCatalogObject}, kJobPrefix + name, &held) || held.size() < 8 ||
      get_be(held, 8) != instance_.load()) {
    return;
  }
  librados::ObjectWriteOperation op;
  librados::bufferlist mine;
  mine.append(held);
  int cmp = 0;
  op.omap_cmp({{kJobPrefix + name, {mine, LIBRADOS_CMPXATTR_OP_EQ}}}, &cmp);
  op.omap_rm_keys({kJobPrefix + name});
  const int r = catalog_io().operate(kCatalogObject, &op);
  if (r != -ECANCELED) check(r, "cannot release job " + name);
}

}  // namespace kumo::storage::rados
