// The RADOS back end's catalog watch: every front end sharing a pool watches the catalog
// object; a front end that changed the catalog notifies it, and each other front end
// reloads its catalog before acknowledging, so the change is everywhere once the notify
// returns. The acknowledgement is sent from a thread of the back end's own (kumo-watch),
// not from librados's callback, since the reload reads the pool.
#include <pthread.h>

#include <cerrno>
#include <cstring>

#include "storage/rados/rados_storage.h"

namespace kumo::storage::rados {

namespace {

// How long a notify waits for the other front ends' acknowledgements. One that does not
// answer in time (paused, or cut off from the cluster) has lost its watch by then or will,
// and reloads when it watches again; until then its writes' guards stop it from writing
// to a layout that changed.
constexpr std::uint64_t kNotifyTimeoutMs = 3000;

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
  check(catalog_io_.watch2(kCatalogObject, &watch_handle_, watch_ctx_.get()),
        "cannot watch the catalog");
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
  catalog_io_.unwatch2(watch_handle_);
  cluster_.watch_flush();
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
      // The watch was lost (this process was cut off or paused): notifies may have been
      // missed. Watch again, then reload.
      catalog_io_.unwatch2(watch_handle_);
      while (catalog_io_.watch2(kCatalogObject, &watch_handle_, watch_ctx_.get()) < 0) {
        std::unique_lock lock(watch_mutex_);
        if (watch_wake_.wait_for(lock, std::chrono::seconds(1), [&] { return watch_stopping_; }))
          return;
      }
      log("the catalog watch was lost and is set again; reloading the catalog");
    }
    std::string self;  // (the instance changes when a lapsed lease is replaced)
    put_u64(&self, instance_);
    if (notice.lost || notice.reload || notice.payload != self) {
      std::unique_lock lock(listener_mutex_);
      if (catalog_listener_) {
        try {
          catalog_listener_();
        } catch (...) {
          // (Thrown by kumo's runtime: only `...` catches it here.)
          log("reloading the catalog failed");
        }
      }
    }
    if (!notice.lost && !notice.reload) {
      librados::bufferlist none;
      catalog_io_.notify_ack(kCatalogObject, notice.id, notice.cookie, none);
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
  const int r = catalog_io_.notify2(kCatalogObject, bl, kNotifyTimeoutMs, nullptr);
  // The change is stored already: a front end that did not hear of it finds out by its
  // writes' guards, or reloads when it watches again.
  if (r == -ETIMEDOUT) {
    log("a front end did not acknowledge a catalog change within 3 s");
  } else if (r < 0) {
    log("a catalog change could not be announced: " + std::string(std::strerror(-r)));
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
  const int r = catalog_io_.aio_notify(kCatalogObject, done, bl, kNotifyTimeoutMs, nullptr);
  if (r < 0) {
    done->release();
    log("a catalog change could not be announced: " + std::string(std::strerror(-r)));
    return;
  }
  announcements_.push_back(done);
}

void RadosStorage::reap_announcements(bool all) {
  std::vector<librados::AioCompletion*> pending;
  for (librados::AioCompletion* done : announcements_) {
    if (all) done->wait_for_complete();
    if (!done->is_complete()) {
      pending.push_back(done);
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
