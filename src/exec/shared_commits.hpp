// The commits of functions' updates, as a sequence lock: a call sees either all or none of
// another call's updates without taking any lock to read shared values.
//
// A commit (FunctionImpl::call, after a successful call) takes the writers' mutex, makes the
// sequence odd, sets each updated variable and makes it even again. A call reading shared
// values (execute) notes the sequence before its loads and checks it after them; when a
// commit ran in between (or was running), it loads again. Loads themselves go through each
// variable's version (graph::SharedStorage::version) and the execution state's cache, so a
// warm call whose shared values did not change takes no lock (exec/executor.cpp).
#pragma once
#include <atomic>
#include <cstdint>
#include <mutex>

namespace theon::detail {

class SharedCommits {
 public:
  static SharedCommits& instance() {
    static SharedCommits commits;
    return commits;
  }

  /// Held by the committing call for the duration of its sets.
  class Commit {
   public:
    explicit Commit(SharedCommits& c) : c_(c), lock_(c.writers_) {
      c_.seq_.store(c_.seq_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
      std::atomic_thread_fence(std::memory_order_release);  // odd before any set is seen
    }
    ~Commit() { c_.seq_.store(c_.seq_.load(std::memory_order_relaxed) + 1, std::memory_order_release); }
    Commit(const Commit&) = delete;
    Commit& operator=(const Commit&) = delete;

   private:
    SharedCommits& c_;
    std::lock_guard<std::mutex> lock_;
  };

  /// Before loading: the sequence once no commit is running.
  uint64_t begin_read() const {
    for (;;) {
      const uint64_t s = seq_.load(std::memory_order_acquire);
      if ((s & 1) == 0) return s;
      // A commit is setting values (a few pointer swaps): wait for it.
      std::lock_guard<std::mutex> wait(writers_);
    }
  }
  /// After loading: whether no commit ran since begin_read() returned `s`.
  bool still(uint64_t s) const {
    std::atomic_thread_fence(std::memory_order_acquire);
    return seq_.load(std::memory_order_relaxed) == s;
  }

 private:
  std::atomic<uint64_t> seq_{0};
  mutable std::mutex writers_;
};

}  // namespace theon::detail
