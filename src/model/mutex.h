// Mutexes whose locking rules the compiler checks. Members a mutex protects are declared
// KUMO_GUARDED_BY(mutex), functions that need it held KUMO_REQUIRES(mutex), and clang's
// -Wthread-safety (on in every clang build, see CMakeLists.txt) reports an access made
// without the lock. The standard library's mutexes carry no such annotations, so Kumo's
// state is guarded by these thin wrappers instead; they compile to the std:: calls they
// wrap. Under GCC the annotations are empty.
#pragma once

#include <condition_variable>
#include <mutex>
#include <shared_mutex>

#if defined(__clang__)
#define KUMO_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define KUMO_THREAD_ANNOTATION(x)
#endif

// A type that is a lock ("mutex" in the compiler's messages).
#define KUMO_CAPABILITY(x) KUMO_THREAD_ANNOTATION(capability(x))
// An RAII type that holds a lock for its lifetime.
#define KUMO_SCOPED_CAPABILITY KUMO_THREAD_ANNOTATION(scoped_lockable)
// The member may be read or written only with the lock held (shared: read only).
#define KUMO_GUARDED_BY(x) KUMO_THREAD_ANNOTATION(guarded_by(x))
// What the pointer points to may be used only with the lock held.
#define KUMO_PT_GUARDED_BY(x) KUMO_THREAD_ANNOTATION(pt_guarded_by(x))
// The caller must hold the lock (exclusively; or at least shared).
#define KUMO_REQUIRES(...) KUMO_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#define KUMO_REQUIRES_SHARED(...) KUMO_THREAD_ANNOTATION(requires_shared_capability(__VA_ARGS__))
// The function checks that the lock is held (the analysis takes it as held after it).
#define KUMO_ASSERT_CAPABILITY(x) KUMO_THREAD_ANNOTATION(assert_capability(x))
// The function takes (or gives back) the lock.
#define KUMO_ACQUIRE(...) KUMO_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define KUMO_ACQUIRE_SHARED(...) KUMO_THREAD_ANNOTATION(acquire_shared_capability(__VA_ARGS__))
#define KUMO_RELEASE(...) KUMO_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
#define KUMO_RELEASE_SHARED(...) KUMO_THREAD_ANNOTATION(release_shared_capability(__VA_ARGS__))
#define KUMO_RELEASE_GENERIC(...) KUMO_THREAD_ANNOTATION(release_generic_capability(__VA_ARGS__))
#define KUMO_TRY_ACQUIRE(...) KUMO_THREAD_ANNOTATION(try_acquire_capability(__VA_ARGS__))
// The caller must not hold the lock (the function takes it).
#define KUMO_EXCLUDES(...) KUMO_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))
// The function returns a reference to the lock.
#define KUMO_RETURN_CAPABILITY(x) KUMO_THREAD_ANNOTATION(lock_returned(x))
// The analysis is off in this function; say why beside it.
#define KUMO_NO_THREAD_SAFETY_ANALYSIS KUMO_THREAD_ANNOTATION(no_thread_safety_analysis)

namespace kumo {

class KUMO_CAPABILITY("mutex") Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void lock() KUMO_ACQUIRE() { m_.lock(); }
  void unlock() KUMO_RELEASE() { m_.unlock(); }
  bool try_lock() KUMO_TRY_ACQUIRE(true) { return m_.try_lock(); }

 private:
  friend class CondVar;
  std::mutex m_;
};

// Many readers or one writer.
class KUMO_CAPABILITY("mutex") SharedMutex {
 public:
  SharedMutex() = default;
  SharedMutex(const SharedMutex&) = delete;
  SharedMutex& operator=(const SharedMutex&) = delete;

  void lock() KUMO_ACQUIRE() { m_.lock(); }
  void unlock() KUMO_RELEASE() { m_.unlock(); }
  void lock_shared() KUMO_ACQUIRE_SHARED() { m_.lock_shared(); }
  void unlock_shared() KUMO_RELEASE_SHARED() { m_.unlock_shared(); }

 private:
  std::shared_mutex m_;
};

// Holds a Mutex from construction to destruction; unlock() and lock() let a loop give it
// up for a while (a condition wait, a slow step done unlocked).
class KUMO_SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex& m) KUMO_ACQUIRE(m) : m_(m) { m_.lock(); }
  ~MutexLock() KUMO_RELEASE() {
    if (held_) m_.unlock();
  }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

  void unlock() KUMO_RELEASE() {
    m_.unlock();
    held_ = false;
  }
  void lock() KUMO_ACQUIRE() {
    m_.lock();
    held_ = true;
  }

 private:
  friend class CondVar;
  Mutex& m_;
  bool held_ = true;
};

// Holds a SharedMutex exclusively.
class KUMO_SCOPED_CAPABILITY WriterLock {
 public:
  explicit WriterLock(SharedMutex& m) KUMO_ACQUIRE(m) : m_(m) { m_.lock(); }
  ~WriterLock() KUMO_RELEASE() { m_.unlock(); }
  WriterLock(const WriterLock&) = delete;
  WriterLock& operator=(const WriterLock&) = delete;

 private:
  SharedMutex& m_;
};

// Holds a SharedMutex shared, with other readers.
class KUMO_SCOPED_CAPABILITY ReaderLock {
 public:
  explicit ReaderLock(SharedMutex& m) KUMO_ACQUIRE_SHARED(m) : m_(m) { m_.lock_shared(); }
  ~ReaderLock() KUMO_RELEASE() { m_.unlock_shared(); }
  ReaderLock(const ReaderLock&) = delete;
  ReaderLock& operator=(const ReaderLock&) = delete;

 private:
  SharedMutex& m_;
};

// A condition variable waited on with a MutexLock held; the wait gives the mutex up and
// takes it back before it returns, so to the analysis the lock stays held.
class CondVar {
 public:
  template <class Rep, class Period>
  void wait_for(MutexLock& lock, std::chrono::duration<Rep, Period> timeout) {
    std::unique_lock<std::mutex> native(lock.m_.m_, std::adopt_lock);
    cv_.wait_for(native, timeout);
    native.release();
  }
  void wait(MutexLock& lock) {
    std::unique_lock<std::mutex> native(lock.m_.m_, std::adopt_lock);
    cv_.wait(native);
    native.release();
  }
  void notify_one() { cv_.notify_one(); }
  void notify_all() { cv_.notify_all(); }

 private:
  std::condition_variable cv_;
};

}  // namespace kumo
