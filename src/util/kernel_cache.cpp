#include "util/kernel_cache.hpp"

#include <theon/config.hpp>
#include <theon/error.hpp>
#include <theon/kernel_cache.hpp>

#include <openssl/evp.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <iostream>
#include <map>
#include <mutex>
#include <set>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace theon::detail {

namespace fs = std::filesystem;

namespace {

constexpr const char* kRecordSuffix = ".sha256";
constexpr const char* kTemporaryMark = ".tmp-";

std::string octal_mode(mode_t m) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(m & 07777));
  return buf;
}

// Why a file or folder with status `st` must not be trusted ("" when it may).
std::string untrusted_owner_or_mode(const struct stat& st) {
  const uid_t me = geteuid();
  if (st.st_uid != me)
    return "owned by uid " + std::to_string(st.st_uid) + ", not by this user (uid " + std::to_string(me) + ")";
  if (st.st_mode & (S_IWGRP | S_IWOTH)) return "writable by group or others (mode " + octal_mode(st.st_mode) + ")";
  return "";
}

// Every existing component of `path` that is a symlink must belong to this user or root.
std::string untrusted_symlink_reason(const fs::path& path) {
  fs::path prefix;
  for (const auto& part : path) {
    prefix /= part;
    struct stat st{};
    if (lstat(prefix.c_str(), &st) != 0) break;  // the rest does not exist yet
    if (S_ISLNK(st.st_mode) && st.st_uid != geteuid() && st.st_uid != 0)
      return "reached through the symlink " + prefix.string() + ", owned by uid " + std::to_string(st.st_uid);
  }
  return "";
}

// Creates the missing folders of `path`, each with mode 0700.
void create_private_dirs(const fs::path& path) {
  fs::path prefix;
  for (const auto& part : path) {
    prefix /= part;
    if (mkdir(prefix.c_str(), 0700) != 0 && errno != EEXIST) return;  // reported by the check
  }
}

void warn(const std::string& message) {
  static std::mutex mu;
  static std::set<std::string> said;
  std::lock_guard<std::mutex> lock(mu);
  if (said.insert(message).second) std::cerr << "theon: warning: " << message << "\n";
}

// Private folders made for this process when the configured one was refused; removed at exit.
struct PrivateFolders {
  std::vector<std::string> paths;
  ~PrivateFolders() {
    std::error_code ec;
    for (auto& p : paths) fs::remove_all(p, ec);
  }
};

std::string make_private_folder() {
  static PrivateFolders folders;
  const char* t = std::getenv("TMPDIR");
  std::string base = t && *t ? t : "/tmp";
  std::string templ = base + "/theon-kernels-" + std::to_string(geteuid()) + "-XXXXXX";
  std::vector<char> buf(templ.begin(), templ.end());
  buf.push_back('\0');
  if (!mkdtemp(buf.data())) throw Error("cannot create a private kernel cache folder under " + base + ": " +
                                        std::strerror(errno));
  folders.paths.push_back(buf.data());
  return buf.data();
}

// The configured root (before verification).
std::string configured_root() {
  const std::string& dir = config().compiledir;
  if (!dir.empty()) return fs::absolute(dir).lexically_normal().string();
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x && x[0] == '/') return std::string(x) + "/theon";
  if (const char* h = std::getenv("HOME"); h && *h && h[0] == '/') return std::string(h) + "/.cache/theon";
  return "/tmp/theon-cache-" + std::to_string(geteuid());
}

// Verified folders of this process: configured path -> the path to use (itself, or a private
// replacement). Verification runs once per path and process.
struct Resolved {
  std::mutex mu;
  std::map<std::string, std::string> use;
  std::map<std::string, std::string> refused;  // configured root -> reason
  std::set<std::string> swept;                  // folders whose stale temporaries were removed
};

Resolved& resolved() {
  static Resolved r;
  return r;
}

// `path` itself when it is (or could be made) a private folder, else a private replacement
// (with a warning). Caller holds resolved().mu.
std::string verified_or_private(const std::string& path) {
  auto& r = resolved();
  if (auto it = r.use.find(path); it != r.use.end()) return it->second;
  std::string reason = untrusted_symlink_reason(path);
  if (reason.empty()) {
    create_private_dirs(path);
    reason = untrusted_dir_reason(path);
  }
  std::string use = path;
  if (!reason.empty()) {
    use = make_private_folder();
    warn("not using the kernel cache folder " + path + ": it is " + reason +
         "; compiling into a private temporary folder for this process (" + use +
         "); see docs/guide/config.md");
    r.refused[path] = reason;
  }
  r.use[path] = use;
  return use;
}

bool read_all(int fd, std::string& out) {
  out.clear();
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    if (n == 0) return true;
    out.append(buf, static_cast<size_t>(n));
  }
}

bool write_all(int fd, const std::string& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

// Opens `path` for reading if it is a regular file of this user, not writable by others.
int open_trusted(const std::string& path, std::string& why) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    why = errno == ELOOP ? "a symlink" : std::strerror(errno);
    return -1;
  }
  struct stat st{};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    why = "not a regular file";
  } else {
    why = untrusted_owner_or_mode(st);
  }
  if (!why.empty()) {
    close(fd);
    return -1;
  }
  return fd;
}

// "sha256 <hex> <size>\n": what a record holds.
std::string record_text(const std::string& bytes) {
  return std::string("sha256 ") + sha256_hex(bytes) + " " + std::to_string(bytes.size()) + "\n";
}

// Writes `bytes` to a new file `path` (mode 0600), checking every write and the close.
bool write_new_file(const std::string& path, const std::string& bytes, std::string& error) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) {
    error = "cannot create " + path + ": " + std::strerror(errno);
    return false;
  }
  const bool wrote = write_all(fd, bytes);
  const int saved = errno;
  const bool closed = close(fd) == 0;
  if (!wrote || !closed) {
    error = "cannot write " + path + ": " + std::strerror(wrote ? errno : saved);
    unlink(path.c_str());
    return false;
  }
  return true;
}

bool is_record(const std::string& name) {
  return name.size() > std::strlen(kRecordSuffix) &&
         name.compare(name.size() - std::strlen(kRecordSuffix), std::string::npos, kRecordSuffix) == 0;
}

std::atomic<uint64_t> g_serial{0};

// A lock on a cache folder (flock on the folder itself, so it adds no file): exclusive while
// an entry is moved in or removed, shared while one is verified. Threads of one process
// exclude each other too (each lock has its own descriptor). Where the filesystem has no
// flock (some network filesystems), the cache works unlocked: compiles are reproducible, so
// concurrent writers of an entry still write the same bytes.
class FolderLock {
 public:
  FolderLock(const std::string& dir, int operation)
      : fd_(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)) {
    if (fd_ < 0) return;
    while (flock(fd_, operation) != 0 && errno == EINTR) {
    }
  }
  FolderLock(const FolderLock&) = delete;
  FolderLock& operator=(const FolderLock&) = delete;
  ~FolderLock() {
    if (fd_ >= 0) close(fd_);  // releases the lock
  }

 private:
  int fd_;
};

}  // namespace

std::string untrusted_dir_reason(const std::string& dir) {
  if (std::string s = untrusted_symlink_reason(dir); !s.empty()) return s;
  struct stat st{};
  if (stat(dir.c_str(), &st) != 0) return std::string("not accessible (") + std::strerror(errno) + ")";
  if (!S_ISDIR(st.st_mode)) return "not a directory";
  return untrusted_owner_or_mode(st);
}

std::string kernel_cache_root() {
  const std::string path = configured_root();
  auto& r = resolved();
  std::lock_guard<std::mutex> lock(r.mu);
  return verified_or_private(path);
}

std::string kernel_cache_dir(const std::string& backend) {
  const std::string path = configured_root();
  auto& r = resolved();
  std::lock_guard<std::mutex> lock(r.mu);
  const std::string dir = verified_or_private(verified_or_private(path) + "/" + backend);
  if (r.swept.insert(dir).second) remove_stale_temporaries(dir);
  return dir;
}

namespace {

uint64_t fnv1a(const std::string& s, uint64_t h) {
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

}  // namespace

std::string content_key(const std::string& text) {
  char buf[33];
  std::snprintf(buf, sizeof buf, "%016llx%016llx",
                static_cast<unsigned long long>(fnv1a(text, 14695981039346656037ull)),
                static_cast<unsigned long long>(fnv1a(text, 0x9e3779b97f4a7c15ull)));
  return buf;
}

std::string sha256_hex(const std::string& bytes) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), md, &len, EVP_sha256(), nullptr) != 1)
    throw Error("SHA-256 failed (OpenSSL's EVP_Digest)");
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (unsigned i = 0; i < len; ++i) out += hex[md[i] >> 4], out += hex[md[i] & 15];
  return out;
}

VerifiedEntry::~VerifiedEntry() {
  if (fd >= 0) close(fd);
}

KernelCacheFolder::KernelCacheFolder(const std::string& backend) : dir_(kernel_cache_dir(backend)) {}

bool KernelCacheFolder::open(const std::string& name, VerifiedEntry& out) const {
  // Shared: no writer moves an entry in meanwhile, so a mismatch is a damaged entry (never a
  // half-published one) and removing it cannot remove a writer's new entry.
  FolderLock lock(dir_, LOCK_SH);
  return open_locked(name, out);
}

bool KernelCacheFolder::open_locked(const std::string& name, VerifiedEntry& out) const {
  const std::string path = dir_ + "/" + name;
  struct stat st{};
  if (lstat(path.c_str(), &st) != 0) return false;  // not cached
  std::string why;
  const int fd = open_trusted(path, why);
  std::string bytes, record;
  if (fd >= 0) {
    if (!read_all(fd, bytes)) {
      why = std::string("unreadable (") + std::strerror(errno) + ")";
    } else {
      const int rfd = open_trusted(path + kRecordSuffix, why);
      if (rfd < 0) {
        why = "without a valid record (" + path + kRecordSuffix + ": " + why + ")";
      } else {
        if (!read_all(rfd, record)) why = "without a readable record";
        close(rfd);
        if (why.empty() && record != record_text(bytes))
          why = "different from the bytes recorded when it was written (truncated, modified or foreign)";
      }
    }
  } else {
    why = "refused: " + why;
  }
  if (!why.empty()) {
    if (fd >= 0) close(fd);
    std::cerr << "theon: warning: cached kernel " + path + " is " + why + "; it is removed and rebuilt\n";
    unlink(path.c_str());
    unlink((path + kRecordSuffix).c_str());
    return false;
  }
  futimens(fd, nullptr);  // most recently used (the size limit evicts the least)
  if (out.fd >= 0) close(out.fd);
  out.fd = fd;
  out.path = path;
  out.bytes = std::move(bytes);
  return true;
}

std::string KernelCacheFolder::temporary(const std::string& name, const std::string& suffix) const {
  return dir_ + "/" + name + kTemporaryMark + std::to_string(getpid()) + "-" + std::to_string(++g_serial) + suffix;
}

std::string KernelCacheFolder::log_path(const std::string& name) const { return dir_ + "/" + name + ".log"; }

std::string KernelCacheFolder::make_work_folder(const std::string& name, std::string& error) const {
  std::string templ = temporary(name, "-XXXXXX");
  if (!mkdtemp(templ.data())) {
    error = "cannot create a folder for compiling in " + dir_ + ": " + std::strerror(errno);
    return "";
  }
  return templ;
}

bool KernelCacheFolder::store(const std::string& name, const std::string& bytes, std::string& error) const {
  const std::string tmp = temporary(name);
  if (!write_new_file(tmp, bytes, error)) return false;
  VerifiedEntry entry;
  return publish(tmp, name, entry, error);
}

bool KernelCacheFolder::publish(const std::string& temporary_path, const std::string& name, VerifiedEntry& out,
                                std::string& error) const {
  // Read through the descriptor that becomes the entry's once it is moved in.
  const int fd = ::open(temporary_path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  std::string bytes, why;
  struct stat st{};
  if (fd < 0) {
    why = std::strerror(errno);
  } else if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    why = "not a regular file";
  } else if (st.st_uid != geteuid()) {
    why = untrusted_owner_or_mode(st);
  } else if ((st.st_mode & (S_IWGRP | S_IWOTH)) && fchmod(fd, st.st_mode & 0755) != 0) {
    // (A linker creates its output per umask; in this private folder nobody else wrote it.)
    why = std::string("cannot make it private: ") + std::strerror(errno);
  } else if (!read_all(fd, bytes)) {
    why = std::strerror(errno);
  }
  if (!why.empty()) {
    if (fd >= 0) close(fd);
    error = "cannot read " + temporary_path + ": " + why;
    unlink(temporary_path.c_str());
    return false;
  }
  const std::string path = dir_ + "/" + name;
  const std::string record = record_text(bytes);
  {
    FolderLock lock(dir_, LOCK_EX);
    // The first complete, verified entry wins: a compiler need not give the same bytes twice,
    // and replacing an entry would let a reader pair it with the other writer's record.
    if (open_locked(name, out)) {
      close(fd);
      unlink(temporary_path.c_str());
      return true;
    }
    // The record first: a crash between the renames leaves a record without its entry (not
    // cached) or, over a damaged entry, a mismatch (removed and rebuilt), never a wrong pass.
    const std::string record_tmp = temporary(name + kRecordSuffix);
    if (!write_new_file(record_tmp, record, error)) {
      close(fd);
      unlink(temporary_path.c_str());
      return false;
    }
    if (rename(record_tmp.c_str(), (path + kRecordSuffix).c_str()) != 0 ||
        rename(temporary_path.c_str(), path.c_str()) != 0) {
      error = "cannot move " + temporary_path + " into the cache: " + std::strerror(errno);
      close(fd);
      unlink(record_tmp.c_str());
      unlink(temporary_path.c_str());
      return false;
    }
  }
  if (out.fd >= 0) close(out.fd);
  out.fd = fd;
  out.path = path;
  out.bytes = std::move(bytes);
  enforce_kernel_cache_limit(path, static_cast<int64_t>(out.bytes.size() + record.size()));
  return true;
}

int remove_stale_temporaries(const std::string& dir) {
  int removed = 0;
  std::error_code ec;
  const auto now = fs::file_time_type::clock::now();
  for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
    const std::string name = it->path().filename().string();
    const size_t at = name.find(kTemporaryMark);
    if (at == std::string::npos) continue;
    const long pid = std::strtol(name.c_str() + at + std::strlen(kTemporaryMark), nullptr, 10);
    std::error_code tec;
    const auto age = now - fs::last_write_time(it->path(), tec);
    if (tec) continue;
    // A live process may still be writing it: only a dead writer's (given a minute, for
    // writers in another pid namespace) or an hour-old temporary goes.
    const bool writer_gone = pid <= 0 || (kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH);
    if ((writer_gone && age > std::chrono::minutes(1)) || age > std::chrono::hours(1)) {
      if (fs::remove_all(it->path(), tec) > 0) ++removed;  // a file, or a compile's work folder
    }
  }
  return removed;
}

namespace {

struct Entry {
  fs::path path;
  int64_t bytes = 0;
  fs::file_time_type used;
};

// Every entry (a file with a record) under the root, with its record's size added.
std::vector<Entry> list_entries(const std::string& root) {
  std::vector<Entry> out;
  std::error_code ec;
  for (auto b = fs::directory_iterator(root, ec); !ec && b != fs::directory_iterator(); b.increment(ec)) {
    std::error_code bec;
    if (!b->is_directory(bec) || b->is_symlink(bec)) continue;
    for (auto f = fs::directory_iterator(b->path(), bec); !bec && f != fs::directory_iterator(); f.increment(bec)) {
      const std::string name = f->path().filename().string();
      if (!is_record(name)) continue;
      fs::path entry = f->path();
      entry.replace_extension();  // drop ".sha256"
      std::error_code eec;
      const auto size = fs::file_size(entry, eec);
      if (eec) continue;
      const auto rsize = fs::file_size(f->path(), eec);
      const auto used = fs::last_write_time(entry, eec);
      if (eec) continue;
      out.push_back({entry, static_cast<int64_t>(size + rsize), used});
    }
  }
  return out;
}

}  // namespace

void enforce_kernel_cache_limit(const std::string& keep, int64_t added_bytes) {
  const int64_t limit_mb = config().compiledir_max_mb;
  if (limit_mb <= 0) return;
  const int64_t limit = limit_mb * (int64_t{1} << 20);
  const std::string root = kernel_cache_root();
  // The folder is listed once per process (and whenever the running total passes the limit),
  // not after every store: a sweep of a thousand kernels would otherwise stat the whole
  // cache a thousand times. Other processes' entries are seen at the next listing.
  static std::mutex mu;
  static std::string known_root;
  static int64_t known_bytes = -1;
  std::lock_guard<std::mutex> lock(mu);
  if (known_root == root && known_bytes >= 0 && added_bytes >= 0) {
    known_bytes += added_bytes;
    if (known_bytes <= limit) return;
  }
  std::vector<Entry> entries = list_entries(root);
  int64_t total = 0;
  for (auto& e : entries) total += e.bytes;
  known_root = root;
  known_bytes = total;
  if (total <= limit) return;
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.used < b.used; });
  for (auto& e : entries) {
    if (total <= limit) break;
    if (e.path.string() == keep) continue;
    FolderLock folder_lock(e.path.parent_path().string(), LOCK_EX);  // no reader sees half an entry
    std::error_code ec;
    fs::remove(e.path, ec);
    fs::remove(e.path.string() + kRecordSuffix, ec);
    total -= e.bytes;
  }
  known_bytes = total;
}

}  // namespace theon::detail

namespace theon {

KernelCacheInfo kernel_cache_info() {
  KernelCacheInfo info;
  info.root = detail::kernel_cache_root();
  {
    auto& r = detail::resolved();
    std::lock_guard<std::mutex> lock(r.mu);
    for (auto& [path, reason] : r.refused)
      if (r.use.count(path) && r.use[path] == info.root) info.refused = path + ": " + reason;
  }
  for (auto& e : detail::list_entries(info.root)) ++info.entries, info.bytes += e.bytes;
  info.limit_bytes = config().compiledir_max_mb > 0 ? config().compiledir_max_mb * (int64_t{1} << 20) : 0;
  return info;
}

int64_t clear_kernel_cache() {
  namespace fs = std::filesystem;
  const std::string root = detail::kernel_cache_root();
  int64_t removed = 0;
  std::error_code ec;
  for (auto b = fs::directory_iterator(root, ec); !ec && b != fs::directory_iterator(); b.increment(ec)) {
    std::error_code bec;
    if (!b->is_directory(bec) || b->is_symlink(bec)) continue;
    detail::FolderLock lock(b->path().string(), LOCK_EX);
    for (auto f = fs::directory_iterator(b->path(), bec); !bec && f != fs::directory_iterator(); f.increment(bec)) {
      std::error_code fec;
      if (!f->is_regular_file(fec) && !f->is_symlink(fec)) continue;
      const auto size = f->is_symlink(fec) ? 0 : fs::file_size(f->path(), fec);
      if (fs::remove(f->path(), fec)) removed += static_cast<int64_t>(fec ? 0 : size);
    }
  }
  return removed;
}

}  // namespace theon
