// The RADOS back end's catalog watch: every front end sharing a pool watches the catalog
// object; a front end that changed the catalog notifies it, and each other front end
// reloads its catalog before acknowledging, so the change is everywhere once the notify
// returns. The acknowledgement is sent from a thread of the back end's own (kumo-watch),
// not from librados's callback, since the reload reads the pool; it carries the front
// end's instance. A front end listed in the catalog that did not acknowledge in time
// (paused, cut off, or slow to reload) is only logged: a change that alters what a write
// of a table does has set the table's new definition version in its partitions before it
// is announced, so such a front end's writes made with the old definition are refused
// there and made again (storage::DefinitionChanged). One that stays silent for good loses
// its lease, and the front end that takes its work over blocklists it.
#include <pthread.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <set>
#include <thread>

#include "storage/rados/rados_storage.h"

namespace kumo::storage::rados {

namespace {

// How long a notify waits for the other front ends' acknowledgements.
constexpr std::uint64_t kNotifyTimeoutMs = 3000;

// The instances that acknowledged a notify, from its reply: [u32 acks]{[u64 gid][u64 cookie]
// [u32 length][payload]}[u32 timeouts]{[u64 gid][u64 cookie]}, little-endian; each payload
// is an instance. False when the reply cannot be read.
bool acknowledged_by(const librados::bufferlist& reply, std::set<std::uint64_t>* instances) {
  const std::string bytes = reply.to_str();
  std::size_t at = 0;
  auto take = [&](std::size_t size, std::uint64_t* value) {
    if (bytes.size() - at < size) return false;
    *value = 0;
    for (std::size_t i = 0; i < size; ++i) {
      *value |= std::uint64_t{static_cast<unsigned char>(bytes[at + i])} << (8 * i);
    }
    at += size;
    return true;
  };
  std::uint64_t acks = 0, ignored = 0, length = 0;
  if (!take(4, &acks)) return false;
  for (std::uint64_t n = 0; n < acks; ++n) {
    if (!take(8, &ignored) || !take(8, &ignored) || !take(4, &length)) return false;
    if (bytes.size() - at < length) return false;
    if (length == 8) instances->insert(get_be(bytes.substr(at, 8), 8));
    at += length;
  }
  return true;
}

}  // namespace

void CatalogWatch::handle_notify(std::uint64_t notify_id, std::uint64_t cookie,
                                 std::uint64_t notifier, librados::bufferlist& bl) {
  (void)notifier;
  storage_.queue_notify({notify_id, cookie, bl.to_str(), false});
}

void CatalogWatch::handle_error(std::uint64_t cookie, int err) {
  (void)cookie;
  (void)err;
  storage_.queue_notify({0, 0, {}, true});
}

void RadosStorage::start_watch() {
  watch_ctx_ = std::make_unique<CatalogWatch>(*this);
  watch_connection_ = connection();
  check(watch_connection_->catalog.watch2(kCatalogObject, &watch_handle_, watch_ctx_.get()),
        "cannot watch the catalog");
  watching_ = true;
  watch_thread_ = std::thread([this] {
    pthread_setname_np(pthread_self(), "kumo-watch");
    watch_loop();
  });
}

void RadosStorage::stop_watch() {
  {
    std::unique_lock lock(watch_mutex_);
    if (!watch_thread_.joinable()) return;
    watch_stopping_ = true;
  }
  watch_wake_.notify_all();
  watch_thread_.join();
  if (watching_) watch_connection_->catalog.unwatch2(watch_handle_);
  watch_connection_->cluster.watch_flush();
  watch_connection_.reset();
}

void RadosStorage::queue_notify(Notice notice) {
  {
    std::unique_lock lock(watch_mutex_);
    notices_.push_back(std::move(notice));
  }
  watch_wake_.notify_all();
}

void RadosStorage::watch_loop() {
  for (;;) {
    Notice notice;
    {
      std::unique_lock lock(watch_mutex_);
      watch_wake_.wait(lock, [&] { return watch_stopping_ || !notices_.empty(); });
      if (watch_stopping_) return;
      notice = std::move(notices_.front());
      notices_.pop_front();
    }
    if (notice.lost) {
      // The watch was lost (this process was cut off or paused), or this front end goes
      // on under a new client: notifies may have been missed. Watch again, on the current
      // client, then reload.
      if (watching_) watch_connection_->catalog.unwatch2(watch_handle_);
      watching_ = false;
      for (;;) {
        watch_connection_ = connection();
        if (watch_connection_->catalog.watch2(kCatalogObject, &watch_handle_, watch_ctx_.get()) >=
            0) {
          break;
        }
        std::unique_lock lock(watch_mutex_);
        if (watch_wake_.wait_for(lock, std::chrono::seconds(1), [&] { return watch_stopping_; }))
          return;
      }
      watching_ = true;
      log("the catalog watch was lost and is set again; reloading the catalog");
    }
    std::string self;  // (the instance changes when a lapsed lease is replaced)
    put_u64(&self, instance_);
    // A load on the client the watch is set on counts for that client (reads made before
    // a newer one replaced it may have been refused).
    const std::uint64_t generation = generation_.load(std::memory_order_acquire);
    const bool current = watch_connection_ == connection();
    bool loaded = true;
    if (notice.lost || notice.reload || notice.payload != self) {
      // A test makes this front end slow to reload (past the notifier's 3 s).
      if (!notice.lost && !notice.reload &&
          std::find(faults_.begin(), faults_.end(), "reload-slow") != faults_.end()) {
        std::this_thread::sleep_for(std::chrono::seconds(5));
      }
      std::unique_lock lock(listener_mutex_);
      if (catalog_listener_) {
        try {
          catalog_listener_();
        } catch (...) {
          // (Thrown by kumo's runtime: only `...` catches it here.)
          log("reloading the catalog failed");
          loaded = false;
        }
      }
    }
    if (loaded && current) {
      std::uint64_t seen = loaded_generation_.load(std::memory_order_acquire);
      while (seen < generation && !loaded_generation_.compare_exchange_weak(
                                      seen, generation, std::memory_order_acq_rel)) {
      }
    } else if (!loaded && loaded_generation_.load(std::memory_order_acquire) < generation) {
      // Writes wait for this load: tried again after a second.
      std::unique_lock lock(watch_mutex_);
      if (watch_wake_.wait_for(lock, std::chrono::seconds(1), [&] { return watch_stopping_; }))
        return;
      notices_.push_back({0, 0, {}, false, true});
    }
    if (!notice.lost && !notice.reload) {
      // The acknowledgement names this front end's instance.
      librados::bufferlist mine;
      mine.append(self);
      watch_connection_->catalog.notify_ack(kCatalogObject, notice.id, notice.cookie, mine);
    }
  }
}

void RadosStorage::set_catalog_listener(CatalogListener listener) {
  const bool set = static_cast<bool>(listener);
  {
    std::unique_lock lock(listener_mutex_);
    catalog_listener_ = std::move(listener);
  }
  // Notifies acknowledged before it was set (while the engine loaded its catalog) may have
  // announced changes it did not load: it reloads once.
  if (set) queue_notify({0, 0, {}, false, true});
}

void RadosStorage::notify_catalog() {
  librados::bufferlist bl;
  std::string self;
  put_u64(&self, instance_);
  bl.append(self);
  librados::bufferlist reply;
  const int r = catalog_io().notify2(kCatalogObject, bl, kNotifyTimeoutMs, &reply);
  if (r < 0 && r != -ETIMEDOUT) {
    // (This client is cut off or blocklisted: the change's next step fails too.)
    check(r, "a catalog change could not be announced");
  }
  // The change is stored already. A front end listed that did not acknowledge it (paused,
  // slow to reload, or not watching any more) is not fenced: every write it makes with the
  // definitions it had is refused by the partitions, which hold the new definition version
  // already (set_definition, before this announcement); what else it holds from the
  // catalog guards itself (partition maps by the ranges in the partitions, stream changes
  // by their stored values, jobs by their claims), and a front end that never answers is
  // fenced once its lease lapses.
  if (r == -ETIMEDOUT) {
    std::set<std::uint64_t> acknowledged;
    if (!acknowledged_by(reply, &acknowledged)) return;
    const std::uint64_t own = instance_.load();
    for (const auto& [k, v] : read_prefix({prefix_, kCatalogObject}, kFrontEndPrefix)) {
      if (k.size() != kFrontEndPrefix.size() + 8) continue;
      const std::uint64_t instance = get_be(k.substr(2), 8);
      if (instance == own || acknowledged.count(instance)) continue;
      log("front end " + hex16(instance) +
          " did not acknowledge a catalog change within 3 s (it reloads when it can; its "
          "writes meanwhile are refused and made again)");
    }
  }
}

void RadosStorage::announce_catalog() {
  librados::bufferlist bl;
  std::string self;
  put_u64(&self, instance_);
  bl.append(self);
  std::unique_lock lock(announce_mutex_);
  reap_announcements(false);
  librados::AioCompletion* done = librados::Rados::aio_create_completion();
  Io catalog = catalog_io();
  const int r = catalog.aio_notify(kCatalogObject, done, bl, kNotifyTimeoutMs, nullptr);
  if (r < 0) {
    done->release();
    log("a catalog change could not be announced: " + std::string(std::strerror(-r)));
    return;
  }
  announcements_.emplace_back(done, catalog.connection());
}

void RadosStorage::reap_announcements(bool all) {
  std::vector<std::pair<librados::AioCompletion*, std::shared_ptr<Connection>>> pending;
  for (auto& announcement : announcements_) {
    librados::AioCompletion* done = announcement.first;
    if (all) done->wait_for_complete();
    if (!done->is_complete()) {
      pending.push_back(std::move(announcement));
      continue;
    }
    if (done->get_return_value() == -ETIMEDOUT) {
      log("a front end did not acknowledge a catalog change within 3 s");
    }
    done->release();
  }
  announcements_.swap(pending);
}

}  // namespace kumo::storage::rados
