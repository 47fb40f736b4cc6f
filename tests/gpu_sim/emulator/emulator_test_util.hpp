// Test helpers of the kernel emulator's tests: compiling a kernel source as the stand-in
// NVRTC does (kernel_prelude.hpp force-included, launch_abi.hpp trampolines appended) into
// a private mkdtemp folder, caching the object between test processes, and launching a
// kernel through its K__sim_bind/_run/_free entry points.
#pragma once
#include "launch_abi.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

extern char** environ;

namespace gpu_sim_test {

namespace fs = std::filesystem;

inline std::string read_file(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Compiles `code` as the stand-in NVRTC does, in a private folder, to `so`.
inline void compile_kernel(const std::string& code, const std::vector<std::pair<std::string, std::string>>& headers,
                    const fs::path& so) {
  char tmpl[] = "/tmp/gpu_sim_emulator_test.XXXXXX";
  if (!mkdtemp(tmpl)) throw std::runtime_error("mkdtemp failed");
  const fs::path dir = tmpl;
  std::ofstream(dir / "kernel.cpp") << code;
  for (auto& [name, body] : headers) std::ofstream(dir / name) << body;
  const std::string libdir = THEON_GPU_SIM_LIB_DIR;
  std::vector<std::string> argv = {THEON_GPU_SIM_KERNEL_CXX, "-std=c++17", "-O1", "-fPIC", "-shared", "-w",
                                   "-include", THEON_GPU_SIM_PRELUDE, "-I" + dir.string(),
                                   (dir / "kernel.cpp").string(), "-o", (dir / "kernel.so").string(),
                                   "-L" + libdir, "-ltheon_gpu_sim_emulator", "-Wl,-rpath," + libdir};
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  const std::string log = (dir / "compile.log").string();
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 2, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&fa, 2, 1);
  pid_t pid;
  const int rc = posix_spawnp(&pid, args[0], &fa, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  int status = 0;
  const bool ok = rc == 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  std::error_code ec;
  if (ok) fs::rename(dir / "kernel.so", so, ec);  // atomic: tests running at once may race here
  const std::string errors = ok ? "" : read_file(log);
  fs::remove_all(dir, ec);
  if (!ok)
    throw std::runtime_error("kernel compile failed (" + std::string(THEON_GPU_SIM_KERNEL_CXX) + "):\n" +
                             errors.substr(0, 8000));
}

// A simulated "cubin": the source with its trampolines, compiled (or found in the test's
// cache: ctest runs every test in its own process) and loaded.
class KernelModule {
 public:
  KernelModule(const std::string& source, const std::vector<std::string>& kernels,
               const std::vector<std::pair<std::string, std::string>>& headers = {}) {
    std::string code = source + "\n";
    for (auto& k : kernels) code += gpu_sim_trampolines(k);
    // The cache key: everything the object depends on.
    const fs::path prelude = THEON_GPU_SIM_PRELUDE;
    std::string key = code + read_file(prelude) + read_file(prelude.parent_path() / "emulator_api.hpp") +
                      read_file(prelude.parent_path().parent_path() / "launch_abi.hpp") + THEON_GPU_SIM_KERNEL_CXX;
    for (auto& [name, body] : headers) key += name + body;
    char hex[32];
    std::snprintf(hex, sizeof hex, "%016zx", std::hash<std::string>{}(key));
    const fs::path cache = THEON_GPU_SIM_TEST_CACHE;
    fs::create_directories(cache);
    const fs::path so = cache / (std::string(hex) + ".so");
    if (!fs::exists(so)) compile_kernel(code, headers, so);
    handle_ = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle_) throw std::runtime_error(std::string("dlopen: ") + dlerror());
  }
  ~KernelModule() {
    if (handle_) dlclose(handle_);
  }

  // Launches kernel `name` as the stand-in cudaLaunchKernel does: bind, run, free.
  template <class... A>
  void launch(const std::string& name, std::array<unsigned, 3> grid, std::array<unsigned, 3> block, size_t smem,
              A... a) const {
    void* args[] = {static_cast<void*>(&a)..., nullptr};
    auto bind = reinterpret_cast<void* (*)(void**)>(sym(name + "__sim_bind"));
    auto run = reinterpret_cast<void (*)(void*, const gpu_sim_launch*)>(sym(name + "__sim_run"));
    auto release = reinterpret_cast<void (*)(void*)>(sym(name + "__sim_free"));
    gpu_sim_launch cfg{{grid[0], grid[1], grid[2]}, {block[0], block[1], block[2]}, smem, name.c_str()};
    void* bound = bind(args);
    run(bound, &cfg);
    release(bound);
  }

 private:
  void* sym(const std::string& s) const {
    void* p = dlsym(handle_, s.c_str());
    if (!p) throw std::runtime_error("no symbol " + s);
    return p;
  }
  void* handle_ = nullptr;
};

}  // namespace gpu_sim_test
