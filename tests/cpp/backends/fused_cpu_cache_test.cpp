// The CPU backend's generated modules go through the verified kernel cache: a planted,
// patched or truncated module is never dlopen'ed (its constructor never runs, its "kernels"
// never give results), it is rebuilt; the compiler runs without a shell, so cache paths with
// spaces, quotes, ';' or '$(...)' work and run nothing else; a failed compile names its log.
// A module's bytes depend only on its key, and processes compiling one module at once all
// run it (none warns or falls back to the interpreter).
#include <theon/theon.hpp>

#include "backends/cpu/fused_cpu.hpp"
#include "util/process.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace theon {
namespace {

namespace fs = std::filesystem;
using backends::cpu::fused_stats;

// Code generation on, in a compiledir of its own, for one test.
struct Codegen {
  std::string cxx = config().cxx, dir = config().compiledir;
  fs::path base;
  explicit Codegen(const std::string& tag)
      : base(fs::temp_directory_path() / ("theon-fused-cache-" + std::to_string(getpid()) + "-" + tag)) {
    fs::remove_all(base);
    fs::create_directories(base);
    config().cxx = "c++";
  }
  void use(const fs::path& compiledir) { config().compiledir = compiledir.string(); }
  ~Codegen() {
    config().cxx = cxx;
    config().compiledir = dir;
    std::error_code ec;
    fs::remove_all(base, ec);
  }
};

struct Program {
  Var a = tensor::vector("a"), b = tensor::vector("b");
  Var y = tensor::tanh(a * b) + tensor::exp(-a) * 2.0;
  Array av = Array::randn({1000}, 1), bv = Array::randn({1000}, 2);
  Array run() { return function({a, b}, {y})({av, bv})[0]; }
  Array reference() { return function({a, b}, {y}, {.mode = "none"})({av, bv})[0]; }
};

// The one module in `dir` (a compiledir's cpu/ folder).
fs::path only_module(const fs::path& dir) {
  fs::path found;
  int n = 0;
  for (auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".so") found = e.path(), ++n;
  EXPECT_EQ(n, 1) << dir;
  return found;
}

// A module with a constructor that leaves `marker`, exporting `symbols` as "kernels" that
// fill their first output with 42: what an attacker (or a stray file) would plant.
std::string planted_source(const fs::path& marker, const std::vector<std::string>& symbols) {
  std::ostringstream s;
  s << "#include <cstdio>\n#include <cstdint>\n"
    << "__attribute__((constructor)) static void planted() { if (FILE* f = std::fopen(\"" << marker.string()
    << "\", \"w\")) std::fclose(f); }\n";
  for (auto& sym : symbols)
    s << "extern \"C\" void " << sym
      << "(const int64_t* shape, char* const* ptrs, const int64_t*, int64_t, int64_t) {"
         " float* o = reinterpret_cast<float*>(ptrs[0]); for (int64_t i = 0; i < shape[0]; ++i) o[i] = 42; }\n";
  return s.str();
}

std::string read_bytes(const fs::path& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

std::vector<std::string> kernel_symbols(const fs::path& module) {
  std::vector<std::string> out;
  auto r = detail::run_capture({"nm", "-D", "--defined-only", module.string()});
  std::istringstream in(r.output);
  for (std::string line; std::getline(in, line);)
    if (auto at = line.find(" theon_k"); at != std::string::npos) out.push_back(line.substr(at + 1));
  return out;
}

TEST(FusedCpuCache, PlantedModuleIsNeverLoaded) {
  Codegen on("planted");
  Program p;
  const Array want = p.reference();
  // Learn the module's name and kernels from a first, honest build.
  on.use(on.base / "honest");
  ASSERT_TRUE(allclose(p.run(), want, 1e-5, 1e-6));
  const fs::path honest = only_module(on.base / "honest" / "cpu");
  const std::vector<std::string> symbols = kernel_symbols(honest);
  // A second cache holds, under that name and with the honest module's record, a planted one.
  const fs::path victim = on.base / "victim", marker = on.base / "planted-constructor-ran";
  fs::create_directories(victim / "cpu");
  fs::permissions(victim, fs::perms::owner_all);
  fs::permissions(victim / "cpu", fs::perms::owner_all);
  const fs::path src = on.base / "planted.cpp", planted = victim / "cpu" / honest.filename();
  std::ofstream(src) << planted_source(marker, symbols);
  auto built = detail::run_program({"c++", "-shared", "-fPIC", src.string(), "-o", planted.string()}, "");
  ASSERT_TRUE(built.ok()) << built.error;
  if (fs::exists(honest.string() + ".sha256")) fs::copy_file(honest.string() + ".sha256", planted.string() + ".sha256");

  on.use(victim);
  const auto before = fused_stats();
  testing::internal::CaptureStderr();
  const Array got = p.run();
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_FALSE(fs::exists(marker)) << "the planted module was dlopen'ed";
  EXPECT_TRUE(allclose(got, want, 1e-5, 1e-6)) << "the planted kernels gave the results";
  EXPECT_EQ(fused_stats().compiled, before.compiled + 1) << "the module is rebuilt";
  EXPECT_EQ(fused_stats().interpreted_calls, before.interpreted_calls);
  EXPECT_NE(err.find("different from the bytes recorded"), std::string::npos) << err;
}

TEST(FusedCpuCache, PatchedOrTruncatedModuleIsRebuilt) {
  Codegen on("patched");
  Program p;
  const Array want = p.reference();
  on.use(on.base / "built");
  ASSERT_TRUE(allclose(p.run(), want, 1e-5, 1e-6));
  for (const char* how : {"truncated", "patched", "empty"}) {
    // A copy of the cache (the loaded module itself is mapped by this process), damaged; a
    // new compiledir path makes this process look on disk again, as a fresh one would.
    const fs::path dir = on.base / how;
    fs::copy(on.base / "built", dir, fs::copy_options::recursive);
    const fs::path module = only_module(dir / "cpu");
    const auto size = fs::file_size(module);
    if (std::string(how) == "truncated") fs::resize_file(module, size / 2);
    if (std::string(how) == "empty") fs::resize_file(module, 0);
    if (std::string(how) == "patched") {
      std::fstream f(module, std::ios::in | std::ios::out | std::ios::binary);
      f.seekp(static_cast<std::streamoff>(size / 2));
      f.put('\x7f');
    }
    on.use(dir);
    const auto before = fused_stats();
    testing::internal::CaptureStderr();
    EXPECT_TRUE(allclose(p.run(), want, 1e-5, 1e-6)) << how;
    testing::internal::GetCapturedStderr();
    EXPECT_EQ(fused_stats().compiled, before.compiled + 1) << how;
    EXPECT_EQ(fused_stats().loaded_from_disk, before.loaded_from_disk) << how;
    EXPECT_EQ(fused_stats().interpreted_calls, before.interpreted_calls) << how;
  }
}

// The compiler gets an argument vector: these cache paths used to break the shell command
// (or run what they contain).
TEST(FusedCpuCache, CompiledirWithShellCharactersWorksAndRunsNothingElse) {
  Codegen on("shell");
  Program p;
  const Array want = p.reference();
  const fs::path pwned = on.base / "pwned";
  for (const std::string& name : std::vector<std::string>{"with space", "semi;colon", "dollar $(touch " + pwned.string() + ")",
                                 "quote ' and \" and `touch " + pwned.string() + "`"}) {
    on.use(on.base / name / "cache");
    const auto before = fused_stats();
    EXPECT_TRUE(allclose(p.run(), want, 1e-5, 1e-6)) << name;
    EXPECT_EQ(fused_stats().compiled, before.compiled + 1) << name;
    EXPECT_EQ(fused_stats().interpreted_calls, before.interpreted_calls) << name;
    EXPECT_FALSE(fs::exists(pwned)) << name;
  }
}

TEST(FusedCpuCache, HomeWithShellCharactersWorks) {
  Codegen on("home");
  Program p;
  const Array want = p.reference();
  const fs::path home = on.base / "home of $(id); 'x'";
  fs::create_directories(home);
  const std::string saved_home = std::getenv("HOME") ? std::getenv("HOME") : "";
  const std::string saved_xdg = std::getenv("XDG_CACHE_HOME") ? std::getenv("XDG_CACHE_HOME") : "";
  setenv("HOME", home.c_str(), 1);
  unsetenv("XDG_CACHE_HOME");
  config().compiledir = "";
  const auto before = fused_stats();
  const Array got = p.run();
  const auto after = fused_stats();
  if (saved_home.empty()) unsetenv("HOME"); else setenv("HOME", saved_home.c_str(), 1);
  if (!saved_xdg.empty()) setenv("XDG_CACHE_HOME", saved_xdg.c_str(), 1);
  EXPECT_TRUE(allclose(got, want, 1e-5, 1e-6));
  EXPECT_EQ(after.compiled, before.compiled + 1);
  EXPECT_EQ(after.interpreted_calls, before.interpreted_calls);
  EXPECT_TRUE(fs::exists(home / ".cache" / "theon" / "cpu"));
}

// A module's bytes are a function of its key: compiled in two cache folders (two different
// temporary paths), the compiler gives the same bytes, so two processes compiling one module
// at once agree with each other's record. With -g too (debug information names the source).
TEST(FusedCpuCache, ModuleBytesDependOnlyOnTheKey) {
  Codegen on("reproducible");
  Program p;
  const Array want = p.reference();
  for (const std::string cxx : {"c++", "c++ -g"}) {
    config().cxx = cxx;
    const fs::path one = on.base / (cxx + " one"), two = on.base / (cxx + " two");
    on.use(one);
    ASSERT_TRUE(allclose(p.run(), want, 1e-5, 1e-6)) << cxx;
    on.use(two);
    ASSERT_TRUE(allclose(p.run(), want, 1e-5, 1e-6)) << cxx;
    const fs::path first = only_module(one / "cpu"), second = only_module(two / "cpu");
    EXPECT_EQ(first.filename(), second.filename()) << cxx;
    EXPECT_TRUE(read_bytes(first) == read_bytes(second)) << cxx << ": " << first << " and " << second << " differ";
  }
}

// The linker creates a module per umask (0775 under umask 002, common where each user has a
// group of their own): it is still moved into the cache and used, not refused as writable by
// the group.
TEST(FusedCpuCache, ModulesAreCachedUnderAGroupWritableUmask) {
  Codegen on("umask");
  Program p;
  const Array want = p.reference();
  on.use(on.base / "cache");
  const mode_t saved = umask(002);
  const auto before = fused_stats();
  testing::internal::CaptureStderr();
  const Array got = p.run();
  const std::string err = testing::internal::GetCapturedStderr();
  umask(saved);
  EXPECT_TRUE(allclose(got, want, 1e-5, 1e-6));
  EXPECT_EQ(fused_stats().compiled, before.compiled + 1);
  EXPECT_EQ(fused_stats().interpreted_calls, before.interpreted_calls) << err;
  struct stat st{};
  ASSERT_EQ(stat(only_module(on.base / "cache" / "cpu").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 022, 0u);
}

// The race test below runs this test binary as a stand-in compiler (its 400 compiles, real,
// cost about 100 CPU seconds: 0.24 s each on the project's machine): given
// `--theon-stand-in-compiler <module>` first, it writes that module's bytes to the -o path,
// followed by its source path and pid, so every compile gives other bytes (as a compiler
// that embeds its temporary file names would), and `--version` prints a line. It runs before
// main, so gtest never sees these arguments.
const bool kActedAsCompiler = [] {
  std::ifstream f("/proc/self/cmdline", std::ios::binary);
  std::vector<std::string> args;
  for (std::string a; std::getline(f, a, '\0');) args.push_back(a);
  if (args.size() < 3 || args[1] != "--theon-stand-in-compiler") return false;
  std::string out, source;
  for (size_t i = 3; i < args.size(); ++i) {
    if (args[i] == "-o" && i + 1 < args.size()) out = args[++i];
    else if (args[i].size() > 4 && args[i].compare(args[i].size() - 4, 4, ".cpp") == 0) source = args[i];
  }
  if (out.empty()) {
    std::printf("theon stand-in compiler\n");
    std::fflush(stdout);
    _exit(0);
  }
  std::ifstream module(args[2], std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(module)), std::istreambuf_iterator<char>());
  std::ofstream(out, std::ios::binary) << bytes << '\0' << source << ' ' << getpid();
  _exit(bytes.empty() ? 1 : 0);
}();

constexpr int kRacers = 8, kRaceRounds = 50;

// Round `round` of one racer: wait (at most a minute) until every racer has arrived, then
// compile and run the program in the round's fresh compiledir (a new entry each round).
// "" when the kernel ran generated code, else what went wrong.
std::string race_round(const fs::path& base, std::atomic<int32_t>* arrived, int round) {
  config().compiledir = (base / ("round-" + std::to_string(round))).string();
  arrived[round].fetch_add(1);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(1);
  while (arrived[round].load() < kRacers) {
    if (std::chrono::steady_clock::now() > deadline) return "the other racers did not arrive";
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  Program p;
  const auto before = fused_stats();
  const Array got = p.run();
  const auto after = fused_stats();
  if (after.interpreted_calls != before.interpreted_calls) return "fell back to the interpreter";
  if (after.compiled + after.loaded_from_disk != before.compiled + before.loaded_from_disk + 1)
    return "compiled or loaded " + std::to_string(after.compiled + after.loaded_from_disk - before.compiled -
                                                  before.loaded_from_disk) + " modules";
  if (!allclose(got, p.reference(), 1e-5, 1e-6)) return "wrong results";
  return "";
}

// Eight processes (this binary again, running only this test as racers) compile the same
// module at once, 50 rounds, each round into a new folder of one fresh compiledir; every one
// must run the kernel, none may warn or fall back to the interpreter. The racers meet at the
// start of each round on counters in a shared file.
TEST(FusedCpuCache, ProcessesCompilingOneModuleAtOnceConverge) {
  if (const char* racer_base = std::getenv("THEON_TEST_RACE_BASE")) {  // one racer
    config().cxx = std::getenv("THEON_TEST_RACE_CXX");
    const fs::path base = racer_base;
    const int fd = ::open((base / "arrived").c_str(), O_RDWR | O_CLOEXEC);
    void* shared = fd < 0 ? MAP_FAILED
                          : mmap(nullptr, sizeof(std::atomic<int32_t>) * kRaceRounds, PROT_READ | PROT_WRITE,
                                 MAP_SHARED, fd, 0);
    if (shared == MAP_FAILED) _exit(10);
    auto* arrived = static_cast<std::atomic<int32_t>*>(shared);
    int failed = 0;  // (a racer goes on after a failure: the others wait for it each round)
    for (int round = 0; round < kRaceRounds; ++round) {
      if (std::string why = race_round(base, arrived, round); !why.empty()) {
        std::fprintf(stderr, "round %d: %s\n", round, why.c_str());
        ++failed;
      }
    }
    _exit(std::min(failed, 100));
  }
  static_assert(sizeof(std::atomic<int32_t>) == sizeof(int32_t) && std::atomic<int32_t>::is_always_lock_free);
  Codegen on("race");
  Program p;
  // The module every stand-in compile copies: a real compile of the test's program.
  on.use(on.base / "real");
  ASSERT_TRUE(allclose(p.run(), p.reference(), 1e-5, 1e-6));
  const fs::path real = only_module(on.base / "real" / "cpu");
  const std::string self = fs::read_symlink("/proc/self/exe").string();
  for (const std::string& path : {self, real.string()})
    if (path.find_first_of(" \t\n") != std::string::npos) GTEST_SKIP() << "config cxx cannot hold the path " << path;
  std::ofstream(on.base / "arrived").close();
  fs::resize_file(on.base / "arrived", sizeof(int32_t) * kRaceRounds);  // zeros: nobody has arrived
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) env.push_back(*e);
  env.push_back("THEON_TEST_RACE_BASE=" + on.base.string());
  env.push_back("THEON_TEST_RACE_CXX=" + self + " --theon-stand-in-compiler " + real.string());
  std::vector<char*> envp;
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::string exe = self, filter = "--gtest_filter=FusedCpuCache.ProcessesCompilingOneModuleAtOnceConverge";
  std::vector<char*> argv = {exe.data(), filter.data(), nullptr};
  std::vector<pid_t> racers;
  for (int i = 0; i < kRacers; ++i) {
    const std::string log = (on.base / ("racer-" + std::to_string(i) + ".log")).string();
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
    pid_t pid = 0;
    const int rc = posix_spawn(&pid, self.c_str(), &actions, nullptr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) {
      ADD_FAILURE() << "cannot start racer " << i << ": " << std::strerror(rc);
      break;  // the others give up after a minute
    }
    racers.push_back(pid);
  }
  for (size_t i = 0; i < racers.size(); ++i) {
    int status = 0;
    ASSERT_EQ(waitpid(racers[i], &status, 0), racers[i]);
    const std::string text = read_bytes(on.base / ("racer-" + std::to_string(i) + ".log"));
    ASSERT_TRUE(WIFEXITED(status)) << "racer " << i << " (status " << status << "):\n" << text;
    EXPECT_EQ(WEXITSTATUS(status), 0) << "rounds that failed, racer " << i << ":\n" << text;
    EXPECT_TRUE(text.find("warning") == std::string::npos) << "racer " << i << " warned:\n" << text;
  }
}

TEST(FusedCpuCache, FailedCompileNamesItsLog) {
  Codegen on("log");
  on.use(on.base / "cache");
  config().cxx = "c++ -fno-such-option-for-theon";
  Program p;
  testing::internal::CaptureStderr();
  const Array got = p.run();
  const std::string err = testing::internal::GetCapturedStderr();
  config().cxx = "c++";
  EXPECT_TRUE(allclose(got, p.reference(), 1e-5, 1e-6));
  const size_t at = err.find("its output is in ");
  ASSERT_NE(at, std::string::npos) << err;
  std::string log = err.substr(at + 17);
  log = log.substr(0, log.find(":\n"));
  std::ifstream f(log);
  std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("no-such-option-for-theon"), std::string::npos) << log << ": " << text;
}

}  // namespace
}  // namespace theon
