// The kernel cache's rules (util/kernel_cache): private folders, entries verified against the
// SHA-256 recorded when they were written, concurrent writers of one entry converging on the
// first verified one, stale temporaries removed, a size limit with LRU
// eviction, clearing. The CPU backend's use of it (planted modules, compiler without a shell)
// is tested in backends/fused_cpu_cache_test.cpp. Then the in-memory layer above it,
// CompileOnceCache: one compile per key, keys in parallel, a failed compile retried.
#include <theon/config.hpp>
#include <theon/kernel_cache.hpp>

#include "util/kernel_cache.hpp"

#include <gtest/gtest.h>

#include <pthread.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

namespace theon {
namespace {

namespace fs = std::filesystem;
using detail::KernelCacheFolder;
using detail::VerifiedEntry;

// A fresh compiledir for one test (its name has a space and shell characters on purpose).
struct ScratchCache {
  fs::path base, root;
  std::string saved;
  int64_t saved_limit;
  explicit ScratchCache(const std::string& tag)
      : base(fs::temp_directory_path() / ("theon-cache-test-" + std::to_string(getpid()) + "-" + tag)),
        root(base / "kernel cache; $(x)"),
        saved(config().compiledir),
        saved_limit(config().compiledir_max_mb) {
    fs::remove_all(base);
    fs::create_directories(base);
    config().compiledir = root.string();
  }
  ~ScratchCache() {
    config().compiledir = saved;
    config().compiledir_max_mb = saved_limit;
    std::error_code ec;
    fs::permissions(base, fs::perms::owner_all, ec);
    fs::remove_all(base, ec);
  }
};

mode_t mode_of(const fs::path& p) {
  struct stat st{};
  EXPECT_EQ(stat(p.c_str(), &st), 0) << p;
  return st.st_mode & 07777;
}

std::string read_file(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

void write_file(const fs::path& p, const std::string& bytes) {
  std::ofstream f(p, std::ios::binary | std::ios::trunc);
  f << bytes;
}

TEST(KernelCache, FoldersAreCreatedPrivate) {
  ScratchCache cache("private");
  const std::string dir = detail::kernel_cache_dir("cpu");
  EXPECT_EQ(dir, cache.root.string() + "/cpu");
  EXPECT_EQ(mode_of(cache.root), 0700u);
  EXPECT_EQ(mode_of(dir), 0700u);
  EXPECT_EQ(detail::untrusted_dir_reason(dir), "");
  EXPECT_EQ(kernel_cache_info().root, cache.root.string());
  EXPECT_EQ(kernel_cache_info().refused, "");
}

TEST(KernelCache, GroupOrWorldWritableFolderIsRefused) {
  ScratchCache cache("writable");
  fs::create_directories(cache.root);
  fs::permissions(cache.root, fs::perms::all);  // 0777, as a shared /tmp folder would be
  testing::internal::CaptureStderr();
  const std::string dir = detail::kernel_cache_dir("cpu");
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(dir.find(cache.root.string()), std::string::npos) << dir;
  EXPECT_NE(err.find(cache.root.string()), std::string::npos) << err;
  EXPECT_NE(err.find("writable by group or others (mode 0777)"), std::string::npos) << err;
  EXPECT_NE(err.find("private temporary folder"), std::string::npos) << err;
  EXPECT_EQ(mode_of(dir), 0700u);
  EXPECT_FALSE(fs::exists(cache.root / "cpu")) << "nothing is written into a refused folder";
  const KernelCacheInfo info = kernel_cache_info();
  EXPECT_NE(info.refused.find("writable by group or others"), std::string::npos) << info.refused;
  EXPECT_EQ(info.root + "/cpu", dir);
}

TEST(KernelCache, FolderOwnedByAnotherUserIsRefused) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to make a folder owned by another user";
  ScratchCache cache("owner");
  fs::create_directories(cache.root);
  ASSERT_EQ(chmod(cache.root.c_str(), 0700), 0);
  ASSERT_EQ(chown(cache.root.c_str(), 4242, 4242), 0);
  testing::internal::CaptureStderr();
  const std::string dir = detail::kernel_cache_dir("cpu");
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(dir.find(cache.root.string()), std::string::npos) << dir;
  EXPECT_NE(err.find("owned by uid 4242, not by this user (uid 0)"), std::string::npos) << err;
}

TEST(KernelCache, SymlinkOwnedByAnotherUserIsRefused) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to make a symlink owned by another user";
  ScratchCache cache("symlink");
  const fs::path target = cache.base / "target";
  fs::create_directories(target);
  ASSERT_EQ(chmod(target.c_str(), 0700), 0);
  const fs::path link = cache.base / "link";
  fs::create_directory_symlink(target, link);
  ASSERT_EQ(lchown(link.c_str(), 4242, 4242), 0);
  config().compiledir = (link / "theon").string();
  testing::internal::CaptureStderr();
  const std::string dir = detail::kernel_cache_dir("cpu");
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(dir.find(cache.base.string()), std::string::npos) << dir;
  EXPECT_NE(err.find("reached through the symlink " + link.string() + ", owned by uid 4242"), std::string::npos)
      << err;
  // The same folder through a symlink of this user's is fine.
  const fs::path own = cache.base / "own";
  fs::create_directory_symlink(target, own);
  config().compiledir = (own / "theon").string();
  EXPECT_EQ(detail::kernel_cache_dir("cpu"), (own / "theon" / "cpu").string());
}

TEST(KernelCache, WithoutHomeTheFallbackIsPerUser) {
  ScratchCache cache("nohome");
  config().compiledir = "";
  std::string home = std::getenv("HOME") ? std::getenv("HOME") : "";
  std::string xdg = std::getenv("XDG_CACHE_HOME") ? std::getenv("XDG_CACHE_HOME") : "";
  unsetenv("HOME");
  unsetenv("XDG_CACHE_HOME");
  const std::string root = detail::kernel_cache_root();
  if (!home.empty()) setenv("HOME", home.c_str(), 1);
  if (!xdg.empty()) setenv("XDG_CACHE_HOME", xdg.c_str(), 1);
  EXPECT_NE(root, "/tmp/theon-cache");
  EXPECT_EQ(detail::untrusted_dir_reason(root), "") << root;
  EXPECT_EQ(mode_of(root) & 077, 0u) << root;
  EXPECT_TRUE(root == "/tmp/theon-cache-" + std::to_string(geteuid()) || root.find("/theon-kernels-") != std::string::npos)
      << root;
}

TEST(KernelCache, StoredEntriesVerify) {
  ScratchCache cache("roundtrip");
  KernelCacheFolder folder("cpu");
  std::string error;
  const std::string bytes(5000, 'k');
  ASSERT_TRUE(folder.store("k1.bin", bytes, error)) << error;
  const fs::path path = fs::path(folder.dir()) / "k1.bin";
  EXPECT_EQ(read_file(path.string() + ".sha256"), "sha256 " + detail::sha256_hex(bytes) + " 5000\n");
  EXPECT_EQ(mode_of(path) & 022, 0u);
  VerifiedEntry e;
  ASSERT_TRUE(folder.open("k1.bin", e));
  EXPECT_EQ(e.bytes, bytes);
  EXPECT_EQ(read_file(e.path), bytes);
  VerifiedEntry missing;
  EXPECT_FALSE(folder.open("nothing.bin", missing));
}

TEST(KernelCache, Sha256MatchesTheStandardVector) {
  EXPECT_EQ(detail::sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(detail::sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

// Each way an entry can differ from what was written is refused and removed.
TEST(KernelCache, TamperedEntriesAreNeverUsed) {
  ScratchCache cache("tamper");
  KernelCacheFolder folder("cpu");
  const fs::path dir = folder.dir();
  const std::string good(4096, 'g'), other(4096, 'o');
  struct Case {
    const char* what;
    void (*spoil)(const fs::path& entry, const std::string& other);
  } cases[] = {
      {"truncated", [](const fs::path& p, const std::string&) { fs::resize_file(p, 100); }},
      {"empty", [](const fs::path& p, const std::string&) { fs::resize_file(p, 0); }},
      {"patched", [](const fs::path& p, const std::string&) {
         std::fstream f(p, std::ios::in | std::ios::out | std::ios::binary);
         f.seekp(2000);
         f.put('X');
       }},
      {"foreign", [](const fs::path& p, const std::string& o) { write_file(p, o); }},
      {"record removed", [](const fs::path& p, const std::string&) { fs::remove(p.string() + ".sha256"); }},
      {"group-writable", [](const fs::path& p, const std::string&) { fs::permissions(p, fs::perms::group_write, fs::perm_options::add); }},
      {"replaced by a symlink", [](const fs::path& p, const std::string&) {
         fs::remove(p);
         fs::create_symlink("/etc/hostname", p);
       }},
  };
  for (auto& c : cases) {
    std::string error;
    ASSERT_TRUE(folder.store("k.bin", good, error)) << error;
    c.spoil(dir / "k.bin", other);
    testing::internal::CaptureStderr();
    VerifiedEntry e;
    EXPECT_FALSE(folder.open("k.bin", e)) << c.what;
    const std::string err = testing::internal::GetCapturedStderr();
    EXPECT_NE(err.find("it is removed and rebuilt"), std::string::npos) << c.what << ": " << err;
    EXPECT_FALSE(fs::exists(fs::symlink_status(dir / "k.bin"))) << c.what;
    EXPECT_FALSE(fs::exists(dir / "k.bin.sha256")) << c.what;
  }
}

TEST(KernelCache, FailedWritesLeaveNothing) {
  ScratchCache cache("fullfs");
  KernelCacheFolder folder("cuda");
  // A file-size limit makes writes fail as a full disk would (EFBIG instead of ENOSPC).
  struct rlimit saved{};
  getrlimit(RLIMIT_FSIZE, &saved);
  auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  struct rlimit small = saved;
  small.rlim_cur = 1000;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
  std::string error;
  const bool stored = folder.store("big.cubin", std::string(100000, 'c'), error);
  setrlimit(RLIMIT_FSIZE, &saved);
  std::signal(SIGXFSZ, old_handler);
  EXPECT_FALSE(stored);
  EXPECT_NE(error.find("cannot write"), std::string::npos) << error;
  EXPECT_TRUE(fs::is_empty(folder.dir())) << "no truncated entry, record or temporary is kept";
  VerifiedEntry e;
  EXPECT_FALSE(folder.open("big.cubin", e));
}

// In a child process whose file-size limit stands for a nearly full disk (writes beyond
// `limit` bytes fail with EFBIG, SIGXFSZ ignored), stores `bytes` as `name`: the exit code
// says whether store() reported the failure (0), claimed success (1) or gave no message (2).
int store_in_small_disk(const KernelCacheFolder& folder, const std::string& name, const std::string& bytes,
                        rlim_t limit) {
  const pid_t pid = fork();
  if (pid == 0) {
    std::signal(SIGXFSZ, SIG_IGN);
    struct rlimit small{};
    getrlimit(RLIMIT_FSIZE, &small);
    small.rlim_cur = limit;
    if (setrlimit(RLIMIT_FSIZE, &small) != 0) _exit(3);
    std::string error;
    const bool stored = folder.store(name, bytes, error);
    _exit(stored ? 1 : error.empty() ? 2 : 0);
  }
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

TEST(KernelCache, AFullDiskNeverLeavesATruncatedEntry) {
  ScratchCache cache("smalldisk");
  KernelCacheFolder folder("cuda");
  const fs::path dir = folder.dir();
  // A cubin-sized entry (a few hundred KiB) on a "disk" with room for 64 KiB per file.
  std::string cubin(300000, '\0');
  for (size_t i = 0; i < cubin.size(); ++i) cubin[i] = static_cast<char>((i * 2654435761u) >> 13);
  EXPECT_EQ(store_in_small_disk(folder, "k.cubin", cubin, 65536), 0) << "the failed store is reported";
  EXPECT_TRUE(fs::is_empty(dir)) << "no truncated entry, record or temporary is kept";
  VerifiedEntry none;
  EXPECT_FALSE(folder.open("k.cubin", none));

  // A good entry stays intact when a later store of the same name fails half way.
  std::string error;
  ASSERT_TRUE(folder.store("k.cubin", cubin, error)) << error;
  std::string other = cubin;
  other[1000] ^= 1;
  EXPECT_EQ(store_in_small_disk(folder, "k.cubin", other, 65536), 0);
  VerifiedEntry e;
  ASSERT_TRUE(folder.open("k.cubin", e)) << "the entry written before the full disk is still used";
  EXPECT_EQ(e.bytes, cubin);
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 2)
      << "the entry and its record, no temporary";

  // With room again (another process, a later run), the entry is stored and verifies.
  ASSERT_TRUE(folder.store("k2.cubin", other, error)) << error;
  VerifiedEntry e2;
  ASSERT_TRUE(folder.open("k2.cubin", e2));
  EXPECT_EQ(e2.bytes, other);
}

// A verified entry is never replaced: a later writer of the name (another process that
// compiled it too, maybe to other bytes) gets the entry already there; a damaged one is
// replaced.
TEST(KernelCache, LaterWritersKeepTheFirstVerifiedEntry) {
  ScratchCache cache("first");
  KernelCacheFolder folder("cpu");
  const fs::path dir = folder.dir();
  const std::string first(3000, 'f'), second(4000, 's');
  std::string error;
  ASSERT_TRUE(folder.store("k.so", first, error)) << error;
  ASSERT_TRUE(folder.store("k.so", second, error)) << error;
  const std::string tmp = folder.temporary("k.so");
  write_file(tmp, second);
  VerifiedEntry e;
  ASSERT_TRUE(folder.publish(tmp, "k.so", e, error)) << error;
  EXPECT_EQ(e.bytes, first);
  EXPECT_EQ(read_file(dir / "k.so"), first);
  EXPECT_EQ(read_file(dir / "k.so.sha256"), "sha256 " + detail::sha256_hex(first) + " 3000\n");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 2) << "no temporary is left";

  fs::resize_file(dir / "k.so", 100);
  testing::internal::CaptureStderr();
  ASSERT_TRUE(folder.store("k.so", second, error)) << error;
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("it is removed and rebuilt"), std::string::npos) << err;
  VerifiedEntry e2;
  ASSERT_TRUE(folder.open("k.so", e2));
  EXPECT_EQ(e2.bytes, second);
}

// A compiler's output is created per umask (0775 under umask 002); in the private folder only
// this user wrote it, so it is moved in, made unwritable by group and others.
TEST(KernelCache, AGroupWritableTemporaryIsPublishedPrivate) {
  ScratchCache cache("umask");
  KernelCacheFolder folder("cpu");
  const std::string tmp = folder.temporary("m.so");
  write_file(tmp, std::string(1000, 'm'));
  fs::permissions(tmp, fs::perms::owner_all | fs::perms::group_all | fs::perms::others_read | fs::perms::others_exec);
  VerifiedEntry e;
  std::string error;
  ASSERT_TRUE(folder.publish(tmp, "m.so", e, error)) << error;
  EXPECT_EQ(mode_of(e.path) & 022, 0u);
  VerifiedEntry again;
  EXPECT_TRUE(folder.open("m.so", again));
}

// Writers of one entry converge: the first complete, verified entry wins, later writers keep
// it (even with other bytes, as a compiler whose output is not reproducible would give), and
// a reader never sees one writer's bytes with another's record. Eight processes store their
// own bytes under one new name per round (released together by a barrier) and open it.
TEST(KernelCache, ConcurrentWritersOfOneEntryConverge) {
  ScratchCache cache("race");
  KernelCacheFolder folder("cpu");
  constexpr int kProcesses = 8, kRounds = 50;
  auto* barrier = static_cast<pthread_barrier_t*>(
      mmap(nullptr, sizeof(pthread_barrier_t), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(barrier, MAP_FAILED);
  pthread_barrierattr_t attr;
  pthread_barrierattr_init(&attr);
  pthread_barrierattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
  ASSERT_EQ(pthread_barrier_init(barrier, &attr, kProcesses), 0);
  const std::string log = (cache.base / "children.log").string();
  std::vector<pid_t> children;
  for (int p = 0; p < kProcesses; ++p) {
    const pid_t pid = fork();
    if (pid == 0) {
      // The children's warnings (an entry refused) go to a file the parent checks.
      if (!freopen(log.c_str(), "a", stderr)) _exit(100);
      int failures = 0;
      for (int r = 0; r < kRounds; ++r) {
        const std::string name = "round-" + std::to_string(r) + ".so", mine(20000 + 7 * p, static_cast<char>('a' + p));
        pthread_barrier_wait(barrier);
        std::string error;
        VerifiedEntry e;
        if (!folder.store(name, mine, error) || !folder.open(name, e)) ++failures;
      }
      _exit(std::min(failures, 99));
    }
    children.push_back(pid);
  }
  int failures = 0;
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    failures += WEXITSTATUS(status);
  }
  pthread_barrier_destroy(barrier);
  munmap(barrier, sizeof(pthread_barrier_t));
  EXPECT_EQ(failures, 0) << "stores or opens that failed";
  EXPECT_EQ(read_file(log), "") << "no entry was refused";
  for (int r = 0; r < kRounds; ++r) {
    VerifiedEntry e;
    EXPECT_TRUE(folder.open("round-" + std::to_string(r) + ".so", e)) << r;
  }
  EXPECT_EQ(std::distance(fs::directory_iterator(folder.dir()), fs::directory_iterator()), 2 * kRounds)
      << "an entry and its record per round, no temporary";
}

TEST(KernelCache, StaleTemporariesAreRemovedOnTheNextStart) {
  ScratchCache cache("stale");
  const fs::path dir = cache.root / "cpu";
  fs::create_directories(dir);
  fs::permissions(cache.root, fs::perms::owner_all);
  fs::permissions(dir, fs::perms::owner_all);
  const auto old = fs::file_time_type::clock::now() - std::chrono::minutes(5);
  // A killed compile (its process is gone), a live writer's, an ancient one, and an entry.
  const fs::path dead = dir / "aa.so.tmp-999999999-1.cpp", live = dir / ("bb.so.tmp-" + std::to_string(getpid()) + "-1"),
                 ancient = dir / ("cc.so.tmp-" + std::to_string(getpid()) + "-2"), entry = dir / "dd.so";
  for (auto& p : {dead, live, ancient, entry}) write_file(p, "x");
  // A killed compile's work folder (make_work_folder), with its source and half an output.
  const fs::path dead_work = dir / "ee.so.tmp-999999999-2-Ab12Cd";
  fs::create_directories(dead_work);
  write_file(dead_work / "module.cpp", "int x;");
  write_file(dead_work / "module.so", "x");
  fs::last_write_time(dead_work, old);
  fs::last_write_time(dead, old);
  fs::last_write_time(live, old);
  fs::last_write_time(ancient, fs::file_time_type::clock::now() - std::chrono::hours(2));
  KernelCacheFolder folder("cpu");  // the first use of the folder in this process sweeps it
  EXPECT_FALSE(fs::exists(dead));
  EXPECT_TRUE(fs::exists(live));
  EXPECT_FALSE(fs::exists(ancient));
  EXPECT_FALSE(fs::exists(dead_work));
  EXPECT_TRUE(fs::exists(entry));
}

TEST(KernelCache, SizeLimitEvictsTheLeastRecentlyUsed) {
  ScratchCache cache("limit");
  config().compiledir_max_mb = 1;
  KernelCacheFolder cpu("cpu"), cuda("cuda");
  const std::string block(400 * 1024, 'b');
  std::string error;
  ASSERT_TRUE(cpu.store("a.so", block, error)) << error;
  ASSERT_TRUE(cuda.store("b.cubin", block, error)) << error;
  const auto now = fs::file_time_type::clock::now();
  fs::last_write_time(fs::path(cpu.dir()) / "a.so", now - std::chrono::minutes(10));
  fs::last_write_time(fs::path(cuda.dir()) / "b.cubin", now - std::chrono::minutes(5));
  {
    VerifiedEntry used;  // a is used now: b becomes the least recently used
    ASSERT_TRUE(cpu.open("a.so", used));
  }
  ASSERT_TRUE(cpu.store("c.so", block, error)) << error;  // 1.2 MiB > 1 MiB
  EXPECT_TRUE(fs::exists(fs::path(cpu.dir()) / "a.so"));
  EXPECT_FALSE(fs::exists(fs::path(cuda.dir()) / "b.cubin"));
  EXPECT_FALSE(fs::exists(fs::path(cuda.dir()) / "b.cubin.sha256"));
  EXPECT_TRUE(fs::exists(fs::path(cpu.dir()) / "c.so"));
  const KernelCacheInfo info = kernel_cache_info();
  EXPECT_EQ(info.entries, 2);
  EXPECT_LE(info.bytes, info.limit_bytes);
  EXPECT_EQ(info.limit_bytes, 1 << 20);
}

TEST(KernelCache, ClearRemovesEverything) {
  ScratchCache cache("clear");
  KernelCacheFolder cpu("cpu"), cuda("cuda");
  std::string error;
  ASSERT_TRUE(cpu.store("a.so", std::string(1000, 'a'), error)) << error;
  ASSERT_TRUE(cuda.store("b.cubin", std::string(2000, 'b'), error)) << error;
  write_file(cpu.log_path("z.so"), "compiler said no");
  EXPECT_EQ(kernel_cache_info().entries, 2);
  EXPECT_GE(clear_kernel_cache(), 3000);
  EXPECT_EQ(kernel_cache_info().entries, 0);
  EXPECT_TRUE(fs::is_empty(cpu.dir()));
  EXPECT_TRUE(fs::is_empty(cuda.dir()));
}

// ---- CompileOnceCache -------------------------------------------------------------------

using detail::CompileOnceCache;
using namespace std::chrono_literals;

// Waits (at most 10 s) until `pred` holds; false when it never did.
template <class Pred> bool eventually(Pred pred) {
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (!pred()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(1ms);
  }
  return true;
}

TEST(CompileOnceCache, ThreadsAskingForOneKeyCompileItOnce) {
  CompileOnceCache<std::string> cache;
  std::atomic<int> compiles{0}, started{0};
  constexpr int kThreads = 8;
  std::vector<const std::string*> got(kThreads, nullptr);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      ++started;
      got[t] = &cache.get("k", [&] {
        ++compiles;
        eventually([&] { return started.load() == kThreads; });  // everybody asks meanwhile
        std::this_thread::sleep_for(20ms);
        return std::string("cubin");
      });
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(compiles.load(), 1);
  for (int t = 0; t < kThreads; ++t) {
    ASSERT_NE(got[t], nullptr);
    EXPECT_EQ(got[t], got[0]);  // the one stored value
    EXPECT_EQ(*got[t], "cubin");
  }
  EXPECT_EQ(cache.size(), 1u);
  ASSERT_NE(cache.find("k"), nullptr);
  EXPECT_EQ(cache.find("other"), nullptr);
  // A hit never compiles again.
  EXPECT_EQ(cache.get("k", [&] { ++compiles; return std::string("again"); }), "cubin");
  EXPECT_EQ(compiles.load(), 1);
}

TEST(CompileOnceCache, DifferentKeysCompileConcurrently) {
  CompileOnceCache<int> cache;
  std::atomic<int> in_flight{0};
  std::atomic<bool> overlapped[2] = {false, false};
  auto compile = [&](int which) {
    ++in_flight;
    // Returns only when the other key's compile is running too: a cache that compiled
    // one key at a time would make this wait out the deadline.
    overlapped[which] = eventually([&] { return in_flight.load() == 2; });
    return which;
  };
  std::thread a([&] { EXPECT_EQ(cache.get("a", [&] { return compile(0); }), 0); });
  std::thread b([&] { EXPECT_EQ(cache.get("b", [&] { return compile(1); }), 1); });
  a.join();
  b.join();
  EXPECT_TRUE(overlapped[0].load());
  EXPECT_TRUE(overlapped[1].load());
  EXPECT_EQ(cache.size(), 2u);
}

TEST(CompileOnceCache, AFailedCompileIsRetriedByTheNextCaller) {
  CompileOnceCache<std::string, int> cache;
  int compiles = 0;
  EXPECT_THROW(cache.get(7, [&]() -> std::string {
    ++compiles;
    throw std::runtime_error("compiler crashed");
  }),
               std::runtime_error);
  EXPECT_EQ(cache.find(7), nullptr);  // nothing stored
  EXPECT_EQ(cache.size(), 0u);
  EXPECT_EQ(cache.get(7, [&] { ++compiles; return std::string("ok"); }), "ok");
  EXPECT_EQ(compiles, 2);
  EXPECT_EQ(cache.get(7, [&] { ++compiles; return std::string("no"); }), "ok");
  EXPECT_EQ(compiles, 2);
}

TEST(CompileOnceCache, AWaiterTakesOverAFailedCompile) {
  CompileOnceCache<std::string> cache;
  std::atomic<int> attempts{0}, waiting{0};
  constexpr int kThreads = 4;
  std::atomic<int> failures{0}, successes{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&] {
      ++waiting;
      try {
        const std::string& v = cache.get("k", [&]() -> std::string {
          if (++attempts == 1) {  // the first compile fails once the others wait on it
            eventually([&] { return waiting.load() == kThreads; });
            std::this_thread::sleep_for(20ms);
            throw std::runtime_error("first compile fails");
          }
          return "second";
        });
        EXPECT_EQ(v, "second");
        ++successes;
      } catch (const std::runtime_error& e) {
        EXPECT_STREQ(e.what(), "first compile fails");
        ++failures;
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(attempts.load(), 2);  // one failure, one retry: the other callers got its value
  EXPECT_EQ(failures.load(), 1);
  EXPECT_EQ(successes.load(), kThreads - 1);
}

}  // namespace
}  // namespace theon
