// What the on-disk caches of generated kernels share (the CPU's .so modules, the CUDA
// backend's cubins): where they live, how their content is keyed, and the rules that keep
// them from running anybody else's code:
//  - the cache root and each backend folder are created with mode 0700, and used only when
//    owned by this user, not writable by group or others, and not reached through a symlink
//    owned by another user; otherwise a warning names the folder and why, and this process
//    compiles into a private temporary folder (removed at exit);
//  - every entry is written atomically with a record of its SHA-256 beside it
//    (`<name>.sha256`) and is used only when its bytes, read through one descriptor, match;
//    a mismatch (truncated, empty, patched, foreign) is removed and rebuilt;
//  - writers of one entry converge: under the folder's lock (flock on the folder) an entry is
//    moved in only when no verified entry of that name is there; otherwise the first one
//    wins and the later writer uses it. Readers verify under the same lock (shared), so they
//    never see one writer's bytes with another's record;
//  - temporaries of a killed compile are removed the next time the folder is opened, and the
//    whole cache is kept under config().compiledir_max_mb by evicting the least recently used.
// Above the disk, CompileOnceCache is the in-memory layer every backend uses: one compile (or
// load) per key and process.
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>

namespace theon::detail {

/// The cache root in use: `config().compiledir`, else $XDG_CACHE_HOME/theon, else
/// ~/.cache/theon, else /tmp/theon-cache-<uid>; a private temporary folder when that is refused.
std::string kernel_cache_root();

/// The (verified) folder of one backend's compiled kernels: kernel_cache_root() + "/<backend>".
std::string kernel_cache_dir(const std::string& backend);

/// Why `dir` must not hold kernels ("" when it may): missing or not a directory, owned by
/// another user, writable by group or others, or reached through another user's symlink.
std::string untrusted_dir_reason(const std::string& dir);

/// A 32-hex-digit key of `text` (two 64-bit FNV-1a hashes with different seeds): stable
/// across processes and builds, unlike std::hash. Names entries; it does not verify them.
std::string content_key(const std::string& text);

/// The SHA-256 of `bytes`, as 64 hex digits.
std::string sha256_hex(const std::string& bytes);

/// An entry read from the cache (through one descriptor, kept open until destruction) and
/// verified against its record. A module is then dlopen'ed by `path`: glibc matches loaded
/// libraries by name, so /proc/self/fd/N (whose N is reused) cannot be used; the folder is
/// private, so only this user could swap the file between the check and the load (and no
/// writer replaces a verified entry: KernelCacheFolder::publish keeps the first).
struct VerifiedEntry {
  int fd = -1;
  std::string path;
  std::string bytes;
  VerifiedEntry() = default;
  VerifiedEntry(const VerifiedEntry&) = delete;
  VerifiedEntry& operator=(const VerifiedEntry&) = delete;
  ~VerifiedEntry();
};

/// One backend's folder of the kernel cache.
class KernelCacheFolder {
 public:
  explicit KernelCacheFolder(const std::string& backend);
  const std::string& dir() const { return dir_; }

  /// Opens entry `name` and checks it against its record. False when it is missing; when it
  /// exists but does not verify, it is removed (with a warning saying why) and false returned.
  bool open(const std::string& name, VerifiedEntry& out) const;

  /// Writes `bytes` as entry `name` with its record (see publish: when a verified entry of
  /// that name is already there, it is kept); every write is checked. False with `error` set
  /// (and nothing left behind) on failure.
  bool store(const std::string& name, const std::string& bytes, std::string& error) const;

  /// Moves a finished temporary file (e.g. compiler output) in as entry `name`, with its
  /// record (record first, each by rename), unless a verified entry `name` is already there:
  /// then another writer finished first, its entry wins and the temporary is removed. Either
  /// way `out` is the entry now in place, verified. False with `error` set (and nothing left
  /// behind) on failure.
  bool publish(const std::string& temporary, const std::string& name, VerifiedEntry& out, std::string& error) const;

  /// A temporary path for entry `name` unique to this process and call: "<name>.tmp-<pid>-<n><suffix>".
  std::string temporary(const std::string& name, const std::string& suffix = "") const;

  /// A new private (0700) folder for building entry `name` ("<name>.tmp-<pid>-<n>-XXXXXX",
  /// swept like a temporary when its process is gone); "" with `error` set on failure. A
  /// compiler writes a source of a fixed name there, so no unique name reaches its output.
  std::string make_work_folder(const std::string& name, std::string& error) const;

  /// Where a failed compile's output for entry `name` is kept ("<name>.log").
  std::string log_path(const std::string& name) const;

 private:
  bool open_locked(const std::string& name, VerifiedEntry& out) const;  // open(), lock held
  std::string dir_;
};

/// Removes temporaries (files and work folders) left in `dir` by processes that are gone (or
/// older than an hour).
/// Runs once per folder per process from KernelCacheFolder; public for tests.
int remove_stale_temporaries(const std::string& dir);

/// Evicts least recently used entries until the cache is within config().compiledir_max_mb;
/// `keep` (a path) is never evicted. Runs after every store with the bytes it added (the
/// cache is listed again only when the running total passes the limit; -1 lists it now).
void enforce_kernel_cache_limit(const std::string& keep = "", int64_t added_bytes = -1);

/// What a process has compiled (or loaded), by key: CPU modules (backends/cpu/fused_cpu.cpp),
/// cubins, loaded CUDA libraries and kernels (backends/cuda/nvrtc_compiler.cpp,
/// cuda_backend.cpp). get(key, compile):
///  - the first caller of a key runs `compile()` with no lock held; callers of the same key
///    meanwhile wait for it, and everybody then gets the one value (compiled once per key);
///  - different keys compile concurrently (each key has its own slot);
///  - a compile that throws stores nothing: its exception goes to the caller that ran it, and
///    the next caller of the key (one that was waiting, or a later one) compiles again.
/// Values are never removed, so the reference get() returns stays valid for the cache's life.
/// A hit takes one mutex and one hash lookup (it is on the launch path of CUDA kernels).
template <class Value, class Key = std::string, class Hash = std::hash<Key>>
class CompileOnceCache {
 public:
  template <class Compile>
  const Value& get(const Key& key, Compile&& compile) {
    Slot& slot = slot_of(key);
    if (slot.ready.load(std::memory_order_acquire)) return *slot.value;
    {
      std::unique_lock<std::mutex> lock(slot.mutex);
      for (;;) {
        if (slot.value) return *slot.value;
        if (!slot.busy) break;
        slot.done.wait(lock);
      }
      slot.busy = true;  // this caller compiles
    }
    try {
      Value v = std::forward<Compile>(compile)();
      std::lock_guard<std::mutex> lock(slot.mutex);
      slot.value.emplace(std::move(v));
      slot.ready.store(true, std::memory_order_release);
      slot.busy = false;
      slot.done.notify_all();
      return *slot.value;
    } catch (...) {
      {
        std::lock_guard<std::mutex> lock(slot.mutex);
        slot.busy = false;
      }
      slot.done.notify_all();  // a waiter takes the compile over
      throw;
    }
  }

  /// The value of `key` when it has been compiled, else null (never waits for a compile).
  const Value* find(const Key& key) const {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = slots_.find(key);
    if (it == slots_.end() || !it->second->ready.load(std::memory_order_acquire)) return nullptr;
    return &*it->second->value;
  }

  /// How many keys have a value.
  size_t size() const {
    std::lock_guard<std::mutex> lock(mutex_);
    size_t n = 0;
    for (auto& [k, s] : slots_) n += s->ready.load(std::memory_order_acquire) ? 1 : 0;
    return n;
  }

 private:
  struct Slot {
    std::mutex mutex;
    std::condition_variable done;
    bool busy = false;              // a caller is compiling (under `mutex`)
    std::optional<Value> value;     // set once, under `mutex`
    std::atomic<bool> ready{false};  // value is set (read without `mutex`)
  };
  Slot& slot_of(const Key& key) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto& s = slots_[key];
    if (!s) s = std::make_unique<Slot>();
    return *s;  // slots are never removed
  }
  mutable std::mutex mutex_;
  std::unordered_map<Key, std::unique_ptr<Slot>, Hash> slots_;
};

}  // namespace theon::detail
