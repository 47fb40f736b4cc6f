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
//  - temporaries of a killed compile are removed the next time the folder is opened, and the
//    whole cache is kept under config().compiledir_max_mb by evicting the least recently used.
#pragma once
#include <cstdint>
#include <string>

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
/// private, so only this user could swap the file between the check and the load.
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

  /// Writes `bytes` as entry `name` with its record, each atomically (temporary + rename);
  /// every write is checked. False with `error` set (and nothing left behind) on failure.
  bool store(const std::string& name, const std::string& bytes, std::string& error) const;

  /// Moves a finished temporary file (e.g. compiler output) in as entry `name`, with its record.
  bool adopt(const std::string& temporary, const std::string& name, std::string& error) const;

  /// A temporary path for entry `name` unique to this process and call: "<name>.tmp-<pid>-<n><suffix>".
  std::string temporary(const std::string& name, const std::string& suffix = "") const;

  /// Where the compiler's output for entry `name` goes ("<name>.log"; kept when it fails).
  std::string log_path(const std::string& name) const;

 private:
  std::string dir_;
};

/// Removes temporaries left in `dir` by processes that are gone (or older than an hour).
/// Runs once per folder per process from KernelCacheFolder; public for tests.
int remove_stale_temporaries(const std::string& dir);

/// Evicts least recently used entries until the cache is within config().compiledir_max_mb;
/// `keep` (a path) is never evicted. Runs after every store with the bytes it added (the
/// cache is listed again only when the running total passes the limit; -1 lists it now).
void enforce_kernel_cache_limit(const std::string& keep = "", int64_t added_bytes = -1);

}  // namespace theon::detail
