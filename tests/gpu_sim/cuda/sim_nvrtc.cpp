// The stand-in NVRTC of the simulated device (docs/guide/testing.md): built as
// libnvrtc.so.13 with the real symbol version. "Compiling" a program builds the exact CUDA
// source with the host C++ compiler behind the kernel emulator's prelude into a shared
// object; the "cubin" is "THEONSIM" + uint64 length + that object, which the stand-in
// runtime's cudaLibraryLoadData loads.
//   - The in-memory headers are written as given, except NVRTC's std shims that the backend
//     provides (cstdint, type_traits, limits, cmath): the host's own headers serve those.
//   - Two mechanical edits: `extern __shared__ [__align__(n)] T name[];` becomes a pointer
//     into the block's dynamic shared memory, and launch_abi.hpp's trampolines are appended
//     for every `extern "C" __global__` kernel.
//   - The compiler (CMAKE_CXX_COMPILER, baked in) runs through posix_spawn, never a shell,
//     at SCHED_IDLE priority where allowed, at most SIM_COMPILE_JOBS (default 2) at once
//     across all processes of the user (flock on slot files in a private folder).
//   - nvrtcVersion answers 99.0, which keeps simulated cubins apart from real ones in
//     Theon's disk cache (its key includes the NVRTC version).
#include <nvrtc.h>

#include "../launch_abi.hpp"
#include "sim_internal.hpp"

#include <fcntl.h>
#include <sched.h>
#include <spawn.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

extern char** environ;

#ifndef THEON_GPU_SIM_CXX
#error "THEON_GPU_SIM_CXX (the host compiler) must be defined by the build"
#endif
#ifndef THEON_GPU_SIM_PRELUDE
#define THEON_GPU_SIM_PRELUDE ""
#endif
#ifndef THEON_GPU_SIM_EMULATOR_DIR
#define THEON_GPU_SIM_EMULATOR_DIR ""
#endif

namespace {

struct Program {
  std::string src, name, log, image;
  std::vector<std::pair<std::string, std::string>> headers;
  bool compiled = false;
};
std::mutex g_mu;
std::set<const Program*> g_programs;

Program* program_of(nvrtcProgram p) {
  std::lock_guard<std::mutex> lock(g_mu);
  auto* q = reinterpret_cast<Program*>(p);
  return q && g_programs.count(q) ? q : nullptr;
}

const char* tmpdir() {
  const char* t = std::getenv("TMPDIR");
  return t && *t ? t : "/tmp";
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool write_new(const std::string& path, const std::string& body) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return false;
  const char* p = body.data();
  size_t n = body.size();
  bool ok = true;
  while (n && ok) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    ok = w > 0;
    if (ok) p += w, n -= static_cast<size_t>(w);
  }
  return ::close(fd) == 0 && ok;
}

// One of SIM_COMPILE_JOBS compile slots, held across processes (flock) until destroyed.
class CompileSlot {
 public:
  CompileSlot() {
    const char* e = std::getenv("SIM_COMPILE_JOBS");
    const int n = e && std::atoi(e) > 0 ? std::atoi(e) : 2;
    const std::string dir = std::string(tmpdir()) + "/theon_gpu_sim_compile_slots_" + std::to_string(::getuid());
    if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) return;
    struct stat st {};
    // Only a folder of ours that no one else can write: never a planted one or a link.
    if (::lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::getuid() || (st.st_mode & 077))
      return;
    std::vector<int> fds;
    for (int i = 0; i < n; ++i) {
      const std::string slot = dir + "/slot" + std::to_string(i);
      fds.push_back(::open(slot.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600));
    }
    for (int& fd : fds)
      if (fd >= 0 && ::flock(fd, LOCK_EX | LOCK_NB) == 0) {
        fd_ = fd;
        fd = -1;
        break;
      }
    if (fd_ < 0) {  // all busy: wait for one
      const size_t pick = static_cast<size_t>(::getpid()) % fds.size();
      if (fds[pick] >= 0) {
        while (::flock(fds[pick], LOCK_EX) != 0 && errno == EINTR) {
        }
        fd_ = fds[pick];
        fds[pick] = -1;
      }
    }
    for (int fd : fds)
      if (fd >= 0) ::close(fd);
  }
  ~CompileSlot() {
    if (fd_ >= 0) ::close(fd_);  // releases the lock
  }
  CompileSlot(const CompileSlot&) = delete;
  CompileSlot& operator=(const CompileSlot&) = delete;

 private:
  int fd_ = -1;
};

// Runs argv[0] (an absolute path) with stdout and stderr into `log_path`; its exit status.
int spawn(const std::vector<std::string>& args, const std::string& log_path, std::string& error) {
  const int log = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  const int null = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (log < 0 || null < 0) {
    error = std::string("cannot open the compiler log: ") + std::strerror(errno);
    if (log >= 0) ::close(log);
    if (null >= 0) ::close(null);
    return -1;
  }
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, null, 0);
  posix_spawn_file_actions_adddup2(&fa, log, 1);
  posix_spawn_file_actions_adddup2(&fa, log, 2);
  pid_t pid = -1;
  int rc = ENOSYS;
#ifdef SCHED_IDLE
  {  // the compiler at idle priority, so it yields to the test itself (where allowed)
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    sched_param sp{};
    posix_spawnattr_setschedpolicy(&attr, SCHED_IDLE);
    posix_spawnattr_setschedparam(&attr, &sp);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSCHEDULER);
    rc = posix_spawn(&pid, argv[0], &fa, &attr, argv.data(), environ);
    posix_spawnattr_destroy(&attr);
  }
#endif
  if (rc != 0) rc = posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  ::close(log);
  ::close(null);
  if (rc != 0) {
    error = "cannot run " + args[0] + ": " + std::strerror(rc);
    return -1;
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) {
      error = std::string("waitpid: ") + std::strerror(errno);
      return -1;
    }
  if (WIFSIGNALED(status)) {
    error = args[0] + " was killed by signal " + std::to_string(WTERMSIG(status));
    return -1;
  }
  return WEXITSTATUS(status);
}

// Options NVRTC accepts (as far as the backend and these tests need); the result of the
// ones that change the host compile.
struct Options {
  bool fmad = true;
  std::vector<std::string> defines;  // -D... / -U... as given
  std::string bad;
};

Options parse_options(int n, const char* const* opts) {
  Options o;
  auto boolean = [&](const std::string& v, const std::string& opt, bool& out) {
    if (v == "true") out = true;
    else if (v == "false") out = false;
    else o.bad = opt;
  };
  for (int i = 0; i < n && o.bad.empty(); ++i) {
    if (!opts || !opts[i]) {
      o.bad = "(null)";
      break;
    }
    const std::string a = opts[i];
    const auto eq = a.find('=');
    const std::string key = a.substr(0, eq), val = eq == std::string::npos ? "" : a.substr(eq + 1);
    bool ignored = false;
    if (key == "--gpu-architecture" || key == "-arch") {
      if (!std::regex_match(val, std::regex("(sm|compute)_[0-9]{2,3}[af]?"))) o.bad = a;
    } else if (key == "-std" || key == "--std") {
      if (val != "c++03" && val != "c++11" && val != "c++14" && val != "c++17" && val != "c++20") o.bad = a;
    } else if (a == "-default-device" || a == "--device-as-default-execution-space" || a == "-G" ||
               a == "--device-debug" || a == "-lineinfo" || a == "--generate-line-info" || a == "-restrict" ||
               a == "--restrict" || a == "-ewp" || a == "--extensible-whole-program" || a == "-w" ||
               a == "--disable-warnings" || a == "-dlto" || a == "--dlink-time-opt") {
    } else if (key == "--ftz" || key == "-ftz" || key == "--prec-div" || key == "-prec-div" || key == "--prec-sqrt" ||
               key == "-prec-sqrt" || key == "-rdc" || key == "--relocatable-device-code") {
      boolean(val, a, ignored);
    } else if (key == "--fmad" || key == "-fmad") {
      boolean(val, a, o.fmad);
    } else if (a == "-use_fast_math" || a == "--use_fast_math") {
      o.fmad = true;
    } else if (key == "--maxrregcount" || key == "-maxrregcount") {
      if (val.empty() || val.find_first_not_of("0123456789") != std::string::npos) o.bad = a;
    } else if (a.rfind("-D", 0) == 0 && a.size() > 2) {
      o.defines.push_back(a);
    } else if (key == "--define-macro" && !val.empty()) {
      o.defines.push_back("-D" + a.substr(eq + 1));
    } else if (a.rfind("-U", 0) == 0 && a.size() > 2) {
      o.defines.push_back(a);
    } else {
      o.bad = a;
    }
  }
  return o;
}

// A header name NVRTC was given, as a relative path inside the work folder (or empty when
// it would leave the folder).
std::string safe_relative(const std::string& name) {
  const std::filesystem::path p(name);
  if (name.empty() || p.is_absolute()) return "";
  for (auto& part : p)
    if (part == ".." || part == ".") return "";
  return p.lexically_normal().string();
}

// The mechanical edits and the trampolines.
std::string prepare(const std::string& src, const std::string& name) {
  static const std::regex shared_re(
      R"(extern\s+__shared__\s+(?:__align__\s*\(\s*\d+\s*\)\s+)?([A-Za-z_][\w:\s]*?)\s*(\w+)\s*\[\s*\]\s*;)");
  std::string code = std::regex_replace(src, shared_re, "$1* $2 = reinterpret_cast<$1*>(::gpu_sim::dynamic_shared());");
  static const std::regex kernel_re(
      R"(extern\s+"C"\s+__global__\s+void\s+(?:__launch_bounds__\s*\([^)]*\)\s+)?([A-Za-z_]\w*)\s*\()");
  std::string out = "#line 1 \"" + name + "\"\n" + code + "\n";
  std::set<std::string> seen;
  for (std::sregex_iterator it(code.begin(), code.end(), kernel_re), end; it != end; ++it)
    if (seen.insert((*it)[1]).second) out += gpu_sim_trampolines((*it)[1]);
  return out;
}

nvrtcResult compile(Program& p, const Options& o) {
  static const std::set<std::string> std_shims = {"cstdint", "type_traits", "limits", "cmath"};
  std::string dir = std::string(tmpdir()) + "/theon_gpu_sim_nvrtc_XXXXXX";
  if (!mkdtemp(dir.data())) {
    p.log = std::string("gpu_sim nvrtc: mkdtemp: ") + std::strerror(errno) + "\n";
    return NVRTC_ERROR_INTERNAL_ERROR;
  }
  struct Cleanup {
    std::string d;
    ~Cleanup() {
      std::error_code ec;
      std::filesystem::remove_all(d, ec);  // a private folder; remove_all does not follow links
    }
  } cleanup{dir};
  for (auto& [n, body] : p.headers) {
    if (std_shims.count(n)) continue;
    const std::string rel = safe_relative(n);
    if (rel.empty()) {
      p.log = "gpu_sim nvrtc: a header name the simulator will not write: " + n + "\n";
      return NVRTC_ERROR_INVALID_INPUT;
    }
    const std::filesystem::path path = std::filesystem::path(dir) / rel;
    std::error_code ec;
    std::filesystem::create_directories(path.parent_path(), ec);
    if (!write_new(path.string(), body)) {
      p.log = "gpu_sim nvrtc: cannot write header " + n + "\n";
      return NVRTC_ERROR_INTERNAL_ERROR;
    }
  }
  const std::string source = dir + "/kernel.cpp", object = dir + "/kernel.so", log = dir + "/compiler.log";
  if (!write_new(source, prepare(p.src, p.name))) {
    p.log = "gpu_sim nvrtc: cannot write the source\n";
    return NVRTC_ERROR_INTERNAL_ERROR;
  }
  const std::string emu = THEON_GPU_SIM_EMULATOR_DIR;
  std::vector<std::string> args = {THEON_GPU_SIM_CXX, "-std=c++17", "-O1", "-fPIC", "-shared", "-w",
                                   o.fmad ? "-ffp-contract=fast" : "-ffp-contract=off",
                                   "-include", THEON_GPU_SIM_PRELUDE, "-I" + dir};
  args.insert(args.end(), o.defines.begin(), o.defines.end());
  for (const char* a : {"-o"}) args.push_back(a);
  args.push_back(object);
  args.push_back(source);
  args.push_back("-L" + emu);
  args.push_back("-ltheon_gpu_sim_emulator");
  args.push_back("-Wl,-rpath," + emu);
  std::string error;
  int rc;
  {
    CompileSlot slot;
    rc = spawn(args, log, error);
  }
  p.log = slurp(log);
  if (rc < 0) {
    p.log += "gpu_sim nvrtc: " + error + "\n";
    return NVRTC_ERROR_INTERNAL_ERROR;
  }
  if (rc != 0) return NVRTC_ERROR_COMPILATION;
  const std::string so = slurp(object);
  const uint64_t len = so.size();
  p.image = std::string(gpu_sim_internal::kImageMagic, 8) + std::string(reinterpret_cast<const char*>(&len), 8) + so;
  p.compiled = true;
  return NVRTC_SUCCESS;
}

}  // namespace

extern "C" {

const char* nvrtcGetErrorString(nvrtcResult r) {
  switch (r) {
    case NVRTC_SUCCESS: return "NVRTC_SUCCESS";
    case NVRTC_ERROR_OUT_OF_MEMORY: return "NVRTC_ERROR_OUT_OF_MEMORY";
    case NVRTC_ERROR_PROGRAM_CREATION_FAILURE: return "NVRTC_ERROR_PROGRAM_CREATION_FAILURE";
    case NVRTC_ERROR_INVALID_INPUT: return "NVRTC_ERROR_INVALID_INPUT";
    case NVRTC_ERROR_INVALID_PROGRAM: return "NVRTC_ERROR_INVALID_PROGRAM";
    case NVRTC_ERROR_INVALID_OPTION: return "NVRTC_ERROR_INVALID_OPTION";
    case NVRTC_ERROR_COMPILATION: return "NVRTC_ERROR_COMPILATION (gpu_sim: the host compiler failed; see the log)";
    case NVRTC_ERROR_BUILTIN_OPERATION_FAILURE: return "NVRTC_ERROR_BUILTIN_OPERATION_FAILURE";
    case NVRTC_ERROR_INTERNAL_ERROR: return "NVRTC_ERROR_INTERNAL_ERROR";
    default: return "NVRTC_ERROR (gpu_sim: not simulated)";
  }
}
nvrtcResult nvrtcVersion(int* major, int* minor) {
  if (!major || !minor) return NVRTC_ERROR_INVALID_INPUT;
  *major = 99;
  *minor = 0;
  return NVRTC_SUCCESS;
}
nvrtcResult nvrtcCreateProgram(nvrtcProgram* prog, const char* src, const char* name, int n,
                               const char* const* headers, const char* const* names) {
  if (!prog || !src || n < 0 || (n > 0 && (!headers || !names))) return NVRTC_ERROR_INVALID_INPUT;
  auto* p = new Program;
  p->src = src;
  p->name = name && *name ? name : "default_program";
  for (int i = 0; i < n; ++i) {
    if (!names[i] || !headers[i]) {
      delete p;
      return NVRTC_ERROR_INVALID_INPUT;
    }
    p->headers.emplace_back(names[i], headers[i]);
  }
  std::lock_guard<std::mutex> lock(g_mu);
  g_programs.insert(p);
  *prog = reinterpret_cast<nvrtcProgram>(p);
  return NVRTC_SUCCESS;
}
nvrtcResult nvrtcDestroyProgram(nvrtcProgram* prog) {
  if (!prog) return NVRTC_ERROR_INVALID_INPUT;
  Program* p = program_of(*prog);
  if (!p) return NVRTC_ERROR_INVALID_PROGRAM;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    g_programs.erase(p);
  }
  delete p;
  *prog = nullptr;
  return NVRTC_SUCCESS;
}
nvrtcResult nvrtcCompileProgram(nvrtcProgram prog, int n, const char* const* opts) {
  Program* p = program_of(prog);
  if (!p) return NVRTC_ERROR_INVALID_PROGRAM;
  if (n < 0 || (n > 0 && !opts)) return NVRTC_ERROR_INVALID_INPUT;
  const Options o = parse_options(n, opts);
  if (!o.bad.empty()) {
    p->log = "nvrtc: error: unrecognized option or value: " + o.bad + " (gpu_sim)\n";
    return NVRTC_ERROR_INVALID_OPTION;
  }
  return compile(*p, o);
}
nvrtcResult nvrtcGetProgramLogSize(nvrtcProgram prog, size_t* n) {
  Program* p = program_of(prog);
  if (!p) return NVRTC_ERROR_INVALID_PROGRAM;
  if (!n) return NVRTC_ERROR_INVALID_INPUT;
  *n = p->log.size() + 1;
  return NVRTC_SUCCESS;
}
nvrtcResult nvrtcGetProgramLog(nvrtcProgram prog, char* log) {
  Program* p = program_of(prog);
  if (!p) return NVRTC_ERROR_INVALID_PROGRAM;
  if (!log) return NVRTC_ERROR_INVALID_INPUT;
  std::memcpy(log, p->log.c_str(), p->log.size() + 1);
  return NVRTC_SUCCESS;
}
nvrtcResult nvrtcGetCUBINSize(nvrtcProgram prog, size_t* n) {
  Program* p = program_of(prog);
  if (!p) return NVRTC_ERROR_INVALID_PROGRAM;
  if (!n) return NVRTC_ERROR_INVALID_INPUT;
  *n = p->image.size();
  return NVRTC_SUCCESS;
}
nvrtcResult nvrtcGetCUBIN(nvrtcProgram prog, char* out) {
  Program* p = program_of(prog);
  if (!p) return NVRTC_ERROR_INVALID_PROGRAM;
  if (!out) return NVRTC_ERROR_INVALID_INPUT;
  if (!p->compiled) return NVRTC_ERROR_INVALID_PROGRAM;
  std::memcpy(out, p->image.data(), p->image.size());
  return NVRTC_SUCCESS;
}

}  // extern "C"
