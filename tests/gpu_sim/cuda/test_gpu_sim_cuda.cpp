// Tests of the stand-in CUDA runtime, cuBLAS and NVRTC (tests/gpu_sim/cuda). The stand-ins
// are linked directly; each mode is read once per process, so the tests of a mode run this
// binary again as a child (SimChild.DISABLED_*, with the mode's environment) and judge what
// it printed or how it died.
#include <cublasLt.h>
#include <cublas_api.h>
#include <cuda_runtime_api.h>
#include <nvrtc.h>

#include <gtest/gtest.h>

#include <dlfcn.h>
#ifdef THEON_GPU_SIM_HAVE_CUDNN_H
#include <cudnn.h>
#endif
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>
#include <string>
#include <vector>

extern char** environ;
extern "C" const char* theon_gpu_sim_marker(void);
#include "../sim_counters_abi.h"

namespace {

// ---------------------------------------------------------------- helpers
struct Output {
  int exit_code = -1;  // -1 when killed by a signal
  int signal = 0;
  std::string text;  // stdout and stderr
};

// Runs `args[0]` (an absolute path) without a shell; `env` replaces the environment.
Output run_program(const std::vector<std::string>& args, const std::vector<std::string>& env) {
  Output out;
  char path[] = "/tmp/theon_gpu_sim_test_XXXXXX";
  const int fd = mkstemp(path);
  if (fd < 0) return out;
  ::unlink(path);
  std::vector<char*> argv, envp;
  for (auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (auto& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fd, 1);
  posix_spawn_file_actions_adddup2(&fa, fd, 2);
  pid_t pid;
  const int rc = posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) {
    ::close(fd);
    out.text = std::string("posix_spawn: ") + std::strerror(rc);
    return out;
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) out.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) out.signal = WTERMSIG(status);
  ::lseek(fd, 0, SEEK_SET);
  char buf[4096];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) out.text.append(buf, static_cast<size_t>(n));
  ::close(fd);
  return out;
}

// Runs SimChild.DISABLED_<name> of this binary with the SIM_* variables `env`.
Output run_child(const std::string& name, const std::vector<std::string>& env) {
  std::vector<std::string> e;
  for (char** p = environ; *p; ++p)
    if (std::strncmp(*p, "SIM_", 4) != 0 && std::strncmp(*p, "GTEST_", 6) != 0) e.push_back(*p);
  e.insert(e.end(), env.begin(), env.end());
  return run_program({"/proc/self/exe", "--gtest_also_run_disabled_tests", "--gtest_filter=SimChild.DISABLED_" + name}, e);
}

bool child_passed(const Output& o) {
  return o.exit_code == 0 && o.text.find("[  PASSED  ] 1 test") != std::string::npos;
}

std::string value_of(const std::string& text, const std::string& key) {  // "key=value" in a child's output
  const auto at = text.find(key + "=");
  if (at == std::string::npos) return "";
  const auto start = at + key.size() + 1;
  return text.substr(start, text.find_first_of(" \n", start) - start);
}

std::string dir_of(const std::string& path) { return path.substr(0, path.rfind('/')); }

std::string real(const std::string& p) {
  char* r = realpath(p.c_str(), nullptr);
  std::string s = r ? r : p;
  std::free(r);
  return s;
}

// The hand-written simulated module as a "cubin".
std::string test_module_image() {
  std::ifstream in(THEON_GPU_SIM_TEST_MODULE, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  const std::string so = ss.str();
  const uint64_t len = so.size();
  return "THEONSIM" + std::string(reinterpret_cast<const char*>(&len), 8) + so;
}

cudaKernel_t fill_kernel() {
  static cudaKernel_t k = [] {
    static const std::string image = test_module_image();
    cudaLibrary_t lib = nullptr;
    EXPECT_EQ(cudaLibraryLoadData(&lib, image.data(), nullptr, nullptr, 0, nullptr, nullptr, 0), cudaSuccess);
    cudaKernel_t kk = nullptr;
    EXPECT_EQ(cudaLibraryGetKernel(&kk, lib, "fill"), cudaSuccess);
    return kk;
  }();
  return k;
}

cudaError_t launch_fill(float* p, float v, unsigned n, dim3 grid, dim3 block, size_t shmem = 0,
                        cudaStream_t s = nullptr) {
  void* args[] = {&p, &v, &n};
  return cudaLaunchKernel(reinterpret_cast<const void*>(fill_kernel()), grid, block, args, shmem, s);
}

// ---------------------------------------------------------------- the simulator is what loaded
TEST(GpuSimCuda, TheStandInsAreLoaded) {
  EXPECT_NE(std::string(theon_gpu_sim_marker()).find("theon gpu_sim"), std::string::npos);
  const std::string lib_dir = real(dir_of(THEON_GPU_SIM_CUDART));
  for (void* sym : {reinterpret_cast<void*>(&cudaMalloc), reinterpret_cast<void*>(&cublasCreate_v2),
                    reinterpret_cast<void*>(&cublasLtCreate), reinterpret_cast<void*>(&nvrtcVersion)}) {
    Dl_info info{};
    ASSERT_TRUE(dladdr(sym, &info));
    EXPECT_EQ(real(dir_of(info.dli_fname)), lib_dir) << info.dli_fname;
  }
  EXPECT_NE(dlsym(RTLD_DEFAULT, "theon_gpu_sim_marker"), nullptr);
}

// ---------------------------------------------------------------- the import check
// Every cuda*/cublas*/nvrtc* symbol libtheon_cuda imports must be defined, with the same
// version node, by a stand-in: a new CUDA call in the backend cannot slip past the simulator.
std::set<std::string> nm_symbols(const std::string& lib, const char* which) {
  const Output o = run_program({THEON_NM, "-D", which, lib}, {"LC_ALL=C"});
  EXPECT_EQ(o.exit_code, 0) << o.text;
  std::set<std::string> out;
  std::istringstream in(o.text);
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line);
    std::string w, last;
    while (words >> w) last = w;
    std::string name = last, version;
    if (auto at = last.find('@'); at != std::string::npos) {
      name = last.substr(0, at);
      version = last.substr(last.find_first_not_of('@', at));
    }
    out.insert(name + "@" + version);
  }
  return out;
}

TEST(GpuSimCuda, DefinesEveryCudaFunctionTheBackendImports) {
  ASSERT_TRUE(std::string(THEON_NM).find('/') != std::string::npos) << "nm was not found at configure time";
  std::set<std::string> defined;
  for (const char* lib : {THEON_GPU_SIM_CUDART, THEON_GPU_SIM_CUBLAS, THEON_GPU_SIM_CUBLASLT, THEON_GPU_SIM_NVRTC})
    for (auto& s : nm_symbols(lib, "--defined-only")) defined.insert(s);
  std::string missing;
  int imports = 0;
  for (auto& s : nm_symbols(THEON_CUDA_LIBRARY, "--undefined-only")) {
    if (s.rfind("cuda", 0) != 0 && s.rfind("cublas", 0) != 0 && s.rfind("nvrtc", 0) != 0) continue;
    ++imports;
    if (!defined.count(s)) missing += " " + s;
  }
  EXPECT_GE(imports, 40);
  EXPECT_EQ(missing, "") << "libtheon_cuda imports CUDA functions the simulator does not define (with that "
                            "version); add them to tests/gpu_sim/cuda:"
                         << missing;
  EXPECT_TRUE(defined.count("cudaMalloc@libcudart.so.13"));
  EXPECT_TRUE(defined.count("cublasLtMatmul@libcublasLt.so.13"));
  EXPECT_TRUE(defined.count("theon_gpu_sim_marker@libcudart.so.13"));
}

// cuDNN is opened with dlopen (src/backends/cuda/cudnn_api.cpp), so its functions are no
// imports: the list libtheon_cuda resolves is cudnn_functions.def, checked here.
TEST(GpuSimCuda, DefinesEveryCudnnFunctionTheBackendResolves) {
  if (std::string(THEON_GPU_SIM_CUDNN).empty()) GTEST_SKIP() << "built without cudnn.h: no cuDNN stand-in";
  std::set<std::string> defined;
  for (auto& s : nm_symbols(THEON_GPU_SIM_CUDNN, "--defined-only")) defined.insert(s);
  std::string missing;
  int names = 0;
#define THEON_CUDNN_FN(name) \
  ++names;                   \
  if (!defined.count(#name "@libcudnn.so.9")) missing += " " #name;
#include "backends/cuda/cudnn_functions.def"
#undef THEON_CUDNN_FN
  EXPECT_GE(names, 20);
  EXPECT_EQ(missing, "") << "libtheon_cuda resolves cuDNN functions the simulator does not define (with that "
                            "version); add them to tests/gpu_sim/cuda/sim_cudnn.cpp:"
                         << missing;
}

#ifdef THEON_GPU_SIM_HAVE_CUDNN_H
// The stand-in cuDNN refuses what real cuDNN would: output dims other than
// cudnnGetConvolution2dForwardOutputDim's, a workspace smaller than Get*WorkspaceSize's.
TEST(GpuSimCudnn, OutputDimsAndWorkspaceAreEnforced) {
  void* lib = dlopen(THEON_GPU_SIM_CUDNN, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(lib, nullptr) << dlerror();
#define FN(name) auto name = reinterpret_cast<decltype(&::name)>(dlsym(lib, #name)); ASSERT_NE(name, nullptr);
  FN(cudnnCreate) FN(cudnnCreateTensorDescriptor) FN(cudnnSetTensor4dDescriptorEx) FN(cudnnCreateFilterDescriptor)
  FN(cudnnSetFilter4dDescriptor) FN(cudnnCreateConvolutionDescriptor) FN(cudnnSetConvolution2dDescriptor)
  FN(cudnnGetConvolutionForwardWorkspaceSize) FN(cudnnConvolutionForward) FN(cudnnDestroyTensorDescriptor)
  FN(cudnnDestroyFilterDescriptor) FN(cudnnDestroyConvolutionDescriptor) FN(cudnnDestroy)
#undef FN
  cudnnHandle_t h = nullptr;
  cudnnTensorDescriptor_t xd = nullptr, yd = nullptr, bad = nullptr;
  cudnnFilterDescriptor_t wd = nullptr;
  cudnnConvolutionDescriptor_t cd = nullptr;
  ASSERT_EQ(cudnnCreate(&h), CUDNN_STATUS_SUCCESS);
  for (auto* d : {&xd, &yd, &bad}) ASSERT_EQ(cudnnCreateTensorDescriptor(d), CUDNN_STATUS_SUCCESS);
  ASSERT_EQ(cudnnCreateFilterDescriptor(&wd), CUDNN_STATUS_SUCCESS);
  ASSERT_EQ(cudnnCreateConvolutionDescriptor(&cd), CUDNN_STATUS_SUCCESS);
  ASSERT_EQ(cudnnSetTensor4dDescriptorEx(xd, CUDNN_DATA_FLOAT, 1, 1, 4, 4, 16, 16, 4, 1), CUDNN_STATUS_SUCCESS);
  ASSERT_EQ(cudnnSetTensor4dDescriptorEx(yd, CUDNN_DATA_FLOAT, 1, 1, 2, 2, 4, 4, 2, 1), CUDNN_STATUS_SUCCESS);
  ASSERT_EQ(cudnnSetTensor4dDescriptorEx(bad, CUDNN_DATA_FLOAT, 1, 1, 3, 3, 9, 9, 3, 1), CUDNN_STATUS_SUCCESS);
  ASSERT_EQ(cudnnSetFilter4dDescriptor(wd, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 1, 1, 3, 3), CUDNN_STATUS_SUCCESS);
  ASSERT_EQ(cudnnSetConvolution2dDescriptor(cd, 0, 0, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
            CUDNN_STATUS_SUCCESS);
  const auto algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM;
  size_t ws_bytes = 0;
  EXPECT_EQ(cudnnGetConvolutionForwardWorkspaceSize(h, xd, wd, cd, bad, algo, &ws_bytes), CUDNN_STATUS_BAD_PARAM);
  ASSERT_EQ(cudnnGetConvolutionForwardWorkspaceSize(h, xd, wd, cd, yd, algo, &ws_bytes), CUDNN_STATUS_SUCCESS);
  ASSERT_GT(ws_bytes, 0u);
  float *x = nullptr, *w = nullptr, *y = nullptr;
  void* ws = nullptr;
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&x), 16 * 4), cudaSuccess);
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&w), 9 * 4), cudaSuccess);
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&y), 4 * 4), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&ws, ws_bytes), cudaSuccess);
  std::vector<float> hx(16), hw(9, 1.f), hy(4, -1.f);
  for (int i = 0; i < 16; ++i) hx[i] = float(i);
  ASSERT_EQ(cudaMemcpy(x, hx.data(), 16 * 4, cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(w, hw.data(), 9 * 4, cudaMemcpyHostToDevice), cudaSuccess);
  const float one = 1.f, zero = 0.f;
  EXPECT_EQ(cudnnConvolutionForward(h, &one, xd, x, wd, w, cd, algo, ws, ws_bytes - 4, &zero, yd, y),
            CUDNN_STATUS_BAD_PARAM);
  EXPECT_EQ(cudnnConvolutionForward(h, &one, xd, x, wd, w, cd, algo, ws, ws_bytes, &zero, bad, y),
            CUDNN_STATUS_BAD_PARAM);
  ASSERT_EQ(cudnnConvolutionForward(h, &one, xd, x, wd, w, cd, algo, ws, ws_bytes, &zero, yd, y), CUDNN_STATUS_SUCCESS);
  ASSERT_EQ(cudaMemcpy(hy.data(), y, 4 * 4, cudaMemcpyDeviceToHost), cudaSuccess);
  // Sums of 3x3 windows of 0..15: 45, 54, 81, 90.
  EXPECT_EQ(hy, (std::vector<float>{45, 54, 81, 90}));
  for (void* p : {static_cast<void*>(x), static_cast<void*>(w), static_cast<void*>(y), ws}) cudaFree(p);
  for (auto d : {xd, yd, bad}) EXPECT_EQ(cudnnDestroyTensorDescriptor(d), CUDNN_STATUS_SUCCESS);
  EXPECT_EQ(cudnnDestroyFilterDescriptor(wd), CUDNN_STATUS_SUCCESS);
  EXPECT_EQ(cudnnDestroyConvolutionDescriptor(cd), CUDNN_STATUS_SUCCESS);
  EXPECT_EQ(cudnnDestroy(h), CUDNN_STATUS_SUCCESS);
}

// The epilogue calls of Theon's fused Conv2d: cudnnConvolutionBiasActivationForward computes
// relu(conv + bias) and refuses a bias not (1, K, 1, 1), a z of other dims, IDENTITY with an
// algorithm other than IMPLICIT_PRECOMP_GEMM; cudnnAddTensor and an in-place
// cudnnActivationForward compute the same in two steps.
TEST(GpuSimCudnn, BiasActivationContractIsEnforced) {
  void* lib = dlopen(THEON_GPU_SIM_CUDNN, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(lib, nullptr) << dlerror();
#define FN(name) auto name = reinterpret_cast<decltype(&::name)>(dlsym(lib, #name)); ASSERT_NE(name, nullptr);
  FN(cudnnCreate) FN(cudnnCreateTensorDescriptor) FN(cudnnSetTensor4dDescriptorEx) FN(cudnnCreateFilterDescriptor)
  FN(cudnnSetFilter4dDescriptor) FN(cudnnCreateConvolutionDescriptor) FN(cudnnSetConvolution2dDescriptor)
  FN(cudnnGetConvolutionForwardWorkspaceSize) FN(cudnnConvolutionForward) FN(cudnnDestroyTensorDescriptor)
  FN(cudnnDestroyFilterDescriptor) FN(cudnnDestroyConvolutionDescriptor) FN(cudnnDestroy)
  FN(cudnnCreateActivationDescriptor) FN(cudnnSetActivationDescriptor) FN(cudnnDestroyActivationDescriptor)
  FN(cudnnConvolutionBiasActivationForward) FN(cudnnAddTensor) FN(cudnnActivationForward)
#undef FN
  cudnnHandle_t h = nullptr;
  cudnnTensorDescriptor_t xd = nullptr, yd = nullptr, bd = nullptr, bad_b = nullptr, bad_z = nullptr;
  cudnnFilterDescriptor_t wd = nullptr;
  cudnnConvolutionDescriptor_t cd = nullptr;
  cudnnActivationDescriptor_t relu = nullptr, ident = nullptr;
  ASSERT_EQ(cudnnCreate(&h), CUDNN_STATUS_SUCCESS);
  for (auto* d : {&xd, &yd, &bd, &bad_b, &bad_z}) ASSERT_EQ(cudnnCreateTensorDescriptor(d), CUDNN_STATUS_SUCCESS);
  ASSERT_EQ(cudnnCreateFilterDescriptor(&wd), CUDNN_STATUS_SUCCESS);
  ASSERT_EQ(cudnnCreateConvolutionDescriptor(&cd), CUDNN_STATUS_SUCCESS);
  ASSERT_EQ(cudnnCreateActivationDescriptor(&relu), CUDNN_STATUS_SUCCESS);
  ASSERT_EQ(cudnnCreateActivationDescriptor(&ident), CUDNN_STATUS_SUCCESS);
  ASSERT_EQ(cudnnSetTensor4dDescriptorEx(xd, CUDNN_DATA_FLOAT, 1, 1, 4, 4, 16, 16, 4, 1), CUDNN_STATUS_SUCCESS);
  ASSERT_EQ(cudnnSetTensor4dDescriptorEx(yd, CUDNN_DATA_FLOAT, 1, 2, 2, 2, 8, 4, 2, 1), CUDNN_STATUS_SUCCESS);
  ASSERT_EQ(cudnnSetTensor4dDescriptorEx(bd, CUDNN_DATA_FLOAT, 1, 2, 1, 1, 2, 1, 1, 1), CUDNN_STATUS_SUCCESS);
  ASSERT_EQ(cudnnSetTensor4dDescriptorEx(bad_b, CUDNN_DATA_FLOAT, 1, 3, 1, 1, 3, 1, 1, 1), CUDNN_STATUS_SUCCESS);
  ASSERT_EQ(cudnnSetTensor4dDescriptorEx(bad_z, CUDNN_DATA_FLOAT, 1, 2, 1, 2, 4, 2, 2, 1), CUDNN_STATUS_SUCCESS);
  ASSERT_EQ(cudnnSetFilter4dDescriptor(wd, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 2, 1, 3, 3), CUDNN_STATUS_SUCCESS);
  ASSERT_EQ(cudnnSetConvolution2dDescriptor(cd, 0, 0, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
            CUDNN_STATUS_SUCCESS);
  ASSERT_EQ(cudnnSetActivationDescriptor(relu, CUDNN_ACTIVATION_RELU, CUDNN_PROPAGATE_NAN, 0.0), CUDNN_STATUS_SUCCESS);
  ASSERT_EQ(cudnnSetActivationDescriptor(ident, CUDNN_ACTIVATION_IDENTITY, CUDNN_PROPAGATE_NAN, 0.0),
            CUDNN_STATUS_SUCCESS);
  const auto algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;  // no workspace
  float *x = nullptr, *w = nullptr, *y = nullptr, *b = nullptr;
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&x), 16 * 4), cudaSuccess);
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&w), 18 * 4), cudaSuccess);
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&y), 8 * 4), cudaSuccess);
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&b), 2 * 4), cudaSuccess);
  std::vector<float> hx(16), hw(18, 1.f), hy(8, -1.f), hb = {-50.f, 1.f};
  for (int i = 0; i < 16; ++i) hx[i] = float(i);
  ASSERT_EQ(cudaMemcpy(x, hx.data(), 16 * 4, cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(w, hw.data(), 18 * 4, cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(b, hb.data(), 2 * 4, cudaMemcpyHostToDevice), cudaSuccess);
  const float one = 1.f, zero = 0.f;
  // Window sums 45, 54, 81, 90 for both filters; channel 0 gets -50 then relu, channel 1 +1.
  const std::vector<float> want = {0, 4, 31, 40, 46, 55, 82, 91};
  EXPECT_EQ(cudnnConvolutionBiasActivationForward(h, &one, xd, x, wd, w, cd, algo, nullptr, 0, &zero, yd, y, bad_b, b,
                                                  relu, yd, y),
            CUDNN_STATUS_BAD_PARAM);
  EXPECT_EQ(cudnnConvolutionBiasActivationForward(h, &one, xd, x, wd, w, cd, algo, nullptr, 0, &zero, bad_z, y, bd, b,
                                                  relu, yd, y),
            CUDNN_STATUS_BAD_PARAM);
  EXPECT_EQ(cudnnConvolutionBiasActivationForward(h, &one, xd, x, wd, w, cd, algo, nullptr, 0, &zero, yd, y, bd, b,
                                                  ident, yd, y),
            CUDNN_STATUS_BAD_PARAM);
  ASSERT_EQ(cudnnConvolutionBiasActivationForward(h, &one, xd, x, wd, w, cd, algo, nullptr, 0, &zero, yd, y, bd, b,
                                                  relu, yd, y),
            CUDNN_STATUS_SUCCESS);
  ASSERT_EQ(cudaMemcpy(hy.data(), y, 8 * 4, cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(hy, want);
  // alpha2 = 1 with z = y (the previous result): the sum is added before the relu.
  ASSERT_EQ(cudnnConvolutionBiasActivationForward(h, &one, xd, x, wd, w, cd, algo, nullptr, 0, &one, yd, y, bd, b,
                                                  relu, yd, y),
            CUDNN_STATUS_SUCCESS);
  ASSERT_EQ(cudaMemcpy(hy.data(), y, 8 * 4, cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(hy, (std::vector<float>{0, 8, 62, 80, 92, 110, 164, 182}));
  // The two-step form: conv, add the bias, relu in place.
  ASSERT_EQ(cudnnConvolutionForward(h, &one, xd, x, wd, w, cd, algo, nullptr, 0, &zero, yd, y), CUDNN_STATUS_SUCCESS);
  EXPECT_EQ(cudnnAddTensor(h, &one, bad_b, b, &one, yd, y), CUDNN_STATUS_BAD_PARAM);
  ASSERT_EQ(cudnnAddTensor(h, &one, bd, b, &one, yd, y), CUDNN_STATUS_SUCCESS);
  ASSERT_EQ(cudnnActivationForward(h, relu, &one, yd, y, &zero, yd, y), CUDNN_STATUS_SUCCESS);
  ASSERT_EQ(cudaMemcpy(hy.data(), y, 8 * 4, cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(hy, want);
  for (void* p : {static_cast<void*>(x), static_cast<void*>(w), static_cast<void*>(y), static_cast<void*>(b)}) cudaFree(p);
  for (auto d : {xd, yd, bd, bad_b, bad_z}) EXPECT_EQ(cudnnDestroyTensorDescriptor(d), CUDNN_STATUS_SUCCESS);
  EXPECT_EQ(cudnnDestroyFilterDescriptor(wd), CUDNN_STATUS_SUCCESS);
  EXPECT_EQ(cudnnDestroyConvolutionDescriptor(cd), CUDNN_STATUS_SUCCESS);
  for (auto a : {relu, ident}) EXPECT_EQ(cudnnDestroyActivationDescriptor(a), CUDNN_STATUS_SUCCESS);
  EXPECT_EQ(cudnnDestroy(h), CUDNN_STATUS_SUCCESS);
}
#endif

// ---------------------------------------------------------------- memory and copies
TEST(GpuSimCuda, PointerAttributesAcrossTwoDevices) {
  const Output o = run_child("PointerAttributes", {"SIM_DEVICES=2"});
  EXPECT_TRUE(child_passed(o)) << o.text;
}

TEST(GpuSimCuda, CopiesOutsideAnAllocationAreRefused) {
  float* d = nullptr;
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&d), 16 * sizeof(float)), cudaSuccess);
  std::vector<float> h(32, 1.f);
  EXPECT_EQ(cudaMemcpyAsync(d, h.data(), 32 * sizeof(float), cudaMemcpyHostToDevice, nullptr), cudaErrorInvalidValue);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidValue);
  EXPECT_EQ(cudaMemcpyAsync(h.data(), h.data() + 16, 4, cudaMemcpyDeviceToHost, nullptr), cudaErrorInvalidValue);
  cudaGetLastError();
  EXPECT_EQ(cudaMemcpyAsync(d, h.data(), 16 * sizeof(float), cudaMemcpyHostToDevice, nullptr), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(h.data() + 16, d, 16 * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(h[16], 1.f);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  EXPECT_EQ(cudaFree(d), cudaSuccess);
}

TEST(GpuSimCuda, GuardMakesAHostReadOfDeviceMemoryFault) {
  const Output o = run_child("GuardFaults", {"SIM_GUARD=1"});
  // The fault kills the child; under AddressSanitizer its SEGV handler reports it and exits.
  const bool asan_reported = o.text.find("AddressSanitizer: SEGV") != std::string::npos;
  EXPECT_TRUE(o.signal == SIGSEGV || asan_reported) << o.text;
  EXPECT_NE(o.text.find("copy through the runtime ok"), std::string::npos) << o.text;
  EXPECT_NE(o.text.find("gpu_sim: SIGSEGV"), std::string::npos) << o.text;
  EXPECT_NE(o.text.find("inside a cudaMalloc'ed block"), std::string::npos) << o.text;
  EXPECT_EQ(o.text.find("host read not caught"), std::string::npos) << o.text;
}

TEST(GpuSimCuda, DeferredStreamsShowAMissingWaitAsStaleData) {
  const Output deferred = run_child("PinnedCopy", {"SIM_STREAMS=deferred"});
  EXPECT_TRUE(child_passed(deferred)) << deferred.text;
  EXPECT_EQ(value_of(deferred.text, "before"), "0") << deferred.text;  // read before the wait: stale
  EXPECT_EQ(value_of(deferred.text, "after"), "7") << deferred.text;
  EXPECT_EQ(value_of(deferred.text, "pageable"), "7") << deferred.text;  // pageable: synchronous
  const Output eager = run_child("PinnedCopy", {"SIM_STREAMS=eager"});
  EXPECT_EQ(value_of(eager.text, "before"), "7") << eager.text;
  EXPECT_EQ(value_of(eager.text, "after"), "7") << eager.text;
}

TEST(GpuSimCuda, BlockingStreamsFollowTheLegacyStream) {
  const Output o = run_child("LegacyOrder", {"SIM_STREAMS=deferred"});
  EXPECT_TRUE(child_passed(o)) << o.text;
  EXPECT_EQ(value_of(o.text, "blocking"), "7") << o.text;
  EXPECT_EQ(value_of(o.text, "nonblocking"), "0") << o.text;  // no implicit order: stale
}

TEST(GpuSimCuda, EventsOrderStreamsInDeferredMode) {
  const Output o = run_child("Events", {"SIM_STREAMS=deferred", "SIM_DEVICES=2"});
  EXPECT_TRUE(child_passed(o)) << o.text;
}

TEST(GpuSimCuda, RandomOrderNeedsTheCrossDeviceEventWait) {
  int wrong_without = 0;
  for (int seed = 1; seed <= 8; ++seed) {
    const std::string s = "SIM_SEED=" + std::to_string(seed);
    const Output with = run_child("PeerCopy", {"SIM_STREAMS=random", "SIM_DEVICES=2", s, "SIM_TEST_WAIT=1"});
    EXPECT_EQ(value_of(with.text, "result"), "ok") << "seed " << seed << ": " << with.text;
    const Output without = run_child("PeerCopy", {"SIM_STREAMS=random", "SIM_DEVICES=2", s, "SIM_TEST_WAIT=0"});
    ASSERT_TRUE(child_passed(without)) << without.text;
    wrong_without += value_of(without.text, "result") == "wrong";
  }
  EXPECT_GT(wrong_without, 0) << "no seed showed the missing event wait";
}

// The counters (sim_counters_abi.h): the same host synchronisations in every mode; waits and
// the work pending at each only where work is left queued.
TEST(GpuSimCuda, CountersCountSyncsWaitsAndThePendingWorkAtEachSync) {
  const Output deferred = run_child("Counters", {"SIM_STREAMS=deferred"});
  ASSERT_TRUE(child_passed(deferred)) << deferred.text;
  const std::vector<std::pair<std::string, std::string>> expected_deferred = {
      {"launches", "1"}, {"operations", "4"}, {"host_syncs", "2"}, {"host_waits", "1"}, {"events", "1"},
      {"stream_waits", "1"},
      {"sync0_s0", "2"},   // memset and launch, not yet run when the host asked for s1
      {"sync0_s1", "2"},   // its memset and its wait for the event
      {"sync0_dev0", "4"}, {"sync0_dev1", "0"}, {"sync0_call", "cudaStreamSynchronize"},
      {"sync1_s0", "0"}, {"sync1_call", "cudaMemcpyAsync(pageable)"}, {"sync2_s0", "none"}};
  for (auto& [key, value] : expected_deferred) EXPECT_EQ(value_of(deferred.text, key), value) << key << "\n" << deferred.text;
  const Output eager = run_child("Counters", {"SIM_STREAMS=eager"});
  ASSERT_TRUE(child_passed(eager)) << eager.text;
  for (const char* key : {"launches", "operations", "host_syncs", "events", "stream_waits", "sync0_call"})
    EXPECT_EQ(value_of(eager.text, key), value_of(deferred.text, key)) << key << "\n" << eager.text;
  EXPECT_EQ(value_of(eager.text, "host_waits"), "0") << eager.text;  // eager: nothing is ever pending
  EXPECT_EQ(value_of(eager.text, "sync0_dev0"), "0") << eager.text;
}

TEST(GpuSimCuda, PeerAccessFollowsSimP2P) {
  const Output off = run_child("PeerAccess", {"SIM_DEVICES=2", "SIM_P2P=0"});
  EXPECT_TRUE(child_passed(off)) << off.text;
  EXPECT_EQ(value_of(off.text, "can"), "0") << off.text;
  EXPECT_EQ(value_of(off.text, "enable"), std::to_string(cudaErrorPeerAccessUnsupported)) << off.text;
  EXPECT_EQ(value_of(off.text, "copied"), "9") << off.text;  // cudaMemcpyPeerAsync works regardless
  const Output on = run_child("PeerAccess", {"SIM_DEVICES=2"});
  EXPECT_EQ(value_of(on.text, "can"), "1") << on.text;
  EXPECT_EQ(value_of(on.text, "enable"), "0") << on.text;
  EXPECT_EQ(value_of(on.text, "again"), std::to_string(cudaErrorPeerAccessAlreadyEnabled)) << on.text;
  EXPECT_EQ(value_of(on.text, "copied"), "9") << on.text;
}

TEST(GpuSimCuda, DevicePropertiesAreAnH100) {
  cudaDeviceProp p{};
  ASSERT_EQ(cudaGetDeviceProperties(&p, 0), cudaSuccess);
  EXPECT_EQ(p.major * 10 + p.minor, 90);
  EXPECT_EQ(p.multiProcessorCount, 132);
  EXPECT_EQ(p.sharedMemPerBlock, 48u << 10);
  int v = 0;
  ASSERT_EQ(cudaDeviceGetAttribute(&v, cudaDevAttrMultiProcessorCount, 0), cudaSuccess);
  EXPECT_EQ(v, 132);
  EXPECT_EQ(cudaGetDeviceProperties(&p, 5), cudaErrorInvalidDevice);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidDevice);
  int n = 0;
  ASSERT_EQ(cudaGetDeviceCount(&n), cudaSuccess);
  EXPECT_EQ(n, 1);
}

// ---------------------------------------------------------------- modules and launches
TEST(GpuSimCuda, LaunchRunsTheModulesKernel) {
  float* d = nullptr;
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&d), 1000 * sizeof(float)), cudaSuccess);
  ASSERT_EQ(launch_fill(d, 2.5f, 1000, dim3(4), dim3(256)), cudaSuccess);
  std::vector<float> h(1000);
  ASSERT_EQ(cudaMemcpy(h.data(), d, h.size() * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(h[0], 2.5f);
  EXPECT_EQ(h[999], 2.5f);
  cudaFree(d);
}

TEST(GpuSimCuda, InvalidLaunchConfigurationsAreRefused) {
  float* d = nullptr;
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&d), 4), cudaSuccess);
  cudaGetLastError();
  EXPECT_EQ(launch_fill(d, 1.f, 1, dim3(1), dim3(1025)), cudaErrorInvalidConfiguration);
  EXPECT_EQ(cudaPeekAtLastError(), cudaErrorInvalidConfiguration);  // recorded, as the real runtime does
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidConfiguration);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);  // and cleared by reading it
  EXPECT_EQ(launch_fill(d, 1.f, 1, dim3(1), dim3(1, 1, 65)), cudaErrorInvalidConfiguration);
  EXPECT_EQ(launch_fill(d, 1.f, 1, dim3(1, 65536), dim3(32)), cudaErrorInvalidConfiguration);
  EXPECT_EQ(launch_fill(d, 1.f, 1, dim3(0), dim3(32)), cudaErrorInvalidConfiguration);
  EXPECT_EQ(launch_fill(d, 1.f, 1, dim3(1), dim3(32), (48 << 10) + 1), cudaErrorInvalidConfiguration);
  EXPECT_EQ(launch_fill(d, 1.f, 1, dim3(1), dim3(1024), 48 << 10), cudaSuccess);
  int not_a_kernel = 0;
  EXPECT_EQ(cudaLaunchKernel(&not_a_kernel, dim3(1), dim3(1), nullptr, 0, nullptr), cudaErrorInvalidDeviceFunction);
  cudaGetLastError();
  cudaFree(d);
}

TEST(GpuSimCuda, ModuleLoadingChecksTheImageAndTheEntryPoints) {
  cudaLibrary_t lib = nullptr;
  const char junk[32] = "NOTACUBIN";
  EXPECT_EQ(cudaLibraryLoadData(&lib, junk, nullptr, nullptr, 0, nullptr, nullptr, 0), cudaErrorInvalidKernelImage);
  const std::string image = test_module_image();
  ASSERT_EQ(cudaLibraryLoadData(&lib, image.data(), nullptr, nullptr, 0, nullptr, nullptr, 0), cudaSuccess);
  cudaKernel_t k = nullptr;
  EXPECT_EQ(cudaLibraryGetKernel(&k, lib, "partial"), cudaErrorSymbolNotFound);
  EXPECT_EQ(cudaLibraryGetKernel(&k, lib, "absent"), cudaErrorSymbolNotFound);
  EXPECT_EQ(cudaLibraryGetKernel(&k, lib, "fill"), cudaSuccess);
  EXPECT_EQ(cudaLibraryUnload(lib), cudaSuccess);
  EXPECT_EQ(cudaLaunchKernel(reinterpret_cast<const void*>(k), dim3(1), dim3(1), nullptr, 0, nullptr),
            cudaErrorInvalidDeviceFunction);  // its module is gone
  cudaGetLastError();
}

// ---------------------------------------------------------------- cuBLAS
struct GpuSimCublas : ::testing::Test {
  cublasHandle_t h = nullptr;
  std::vector<void*> blocks;
  void SetUp() override {
    ASSERT_EQ(cublasCreate_v2(&h), CUBLAS_STATUS_SUCCESS);
    ASSERT_EQ(cublasSetStream_v2(h, nullptr), CUBLAS_STATUS_SUCCESS);
  }
  void TearDown() override {
    cublasDestroy_v2(h);
    for (void* b : blocks) cudaFree(b);
  }
  template <class T>
  T* upload(const std::vector<T>& v) {
    void* d = nullptr;
    EXPECT_EQ(cudaMalloc(&d, std::max<size_t>(v.size(), 1) * sizeof(T)), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(d, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice), cudaSuccess);
    blocks.push_back(d);
    return static_cast<T*>(d);
  }
  template <class T>
  std::vector<T> download(const T* d, size_t n) {
    std::vector<T> v(n);
    EXPECT_EQ(cudaMemcpy(v.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
    return v;
  }
};

TEST_F(GpuSimCublas, GemmIsColumnMajorWithTransposes) {
  // A is 2x3 stored transposed (op T, lda 3), B is 3x2 (op N, ldb 3): C = A * B, 2x2.
  const std::vector<double> At = {1, 2, 3, 4, 5, 6};  // columns of A^T = rows of A
  const std::vector<double> B = {1, 0, 1, 0, 1, 0};
  double* dA = upload(At);
  double* dB = upload(B);
  double* dC = upload(std::vector<double>(4, 0));
  const double one = 1, zero = 0;
  ASSERT_EQ(cublasGemmEx_64(h, CUBLAS_OP_T, CUBLAS_OP_N, 2, 2, 3, &one, dA, CUDA_R_64F, 3, dB, CUDA_R_64F, 3, &zero, dC,
                            CUDA_R_64F, 2, CUBLAS_COMPUTE_64F, CUBLAS_GEMM_DEFAULT),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(download(dC, 4), (std::vector<double>{4, 10, 2, 5}));
}

TEST_F(GpuSimCublas, BadLeadingDimensionIsInvalidValue) {
  float* d = upload(std::vector<float>(64, 1.f));
  const float one = 1, zero = 0;
  EXPECT_EQ(cublasGemmEx_64(h, CUBLAS_OP_N, CUBLAS_OP_N, 4, 4, 4, &one, d, CUDA_R_32F, 3, d, CUDA_R_32F, 4, &zero, d,
                            CUDA_R_32F, 4, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
            CUBLAS_STATUS_INVALID_VALUE);  // lda 3 < m 4
  EXPECT_EQ(cublasGemmEx_64(h, CUBLAS_OP_N, CUBLAS_OP_N, 4, 4, 4, &one, d, CUDA_R_32F, 4, d, CUDA_R_32F, 4, &zero, d,
                            CUDA_R_32F, 3, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
            CUBLAS_STATUS_INVALID_VALUE);  // ldc 3 < m 4
  EXPECT_EQ(cublasGemmEx_64(h, CUBLAS_OP_N, CUBLAS_OP_N, 4, 4, -1, &one, d, CUDA_R_32F, 4, d, CUDA_R_32F, 4, &zero, d,
                            CUDA_R_32F, 4, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
            CUBLAS_STATUS_INVALID_VALUE);
  EXPECT_EQ(cublasGemmEx_64(h, CUBLAS_OP_N, CUBLAS_OP_N, 4, 4, 4, &one, d, CUDA_R_32F, 4, d, CUDA_R_32F, 4, &zero, d,
                            CUDA_R_32F, 4, CUBLAS_COMPUTE_64F, CUBLAS_GEMM_DEFAULT),
            CUBLAS_STATUS_NOT_SUPPORTED);  // compute type of another type
  EXPECT_EQ(cublasGemmEx_64(h, CUBLAS_OP_N, CUBLAS_OP_N, 4, 4, 4, &one, d, CUDA_R_32F, 4, d, CUDA_R_64F, 4, &zero, d,
                            CUDA_R_32F, 4, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
            CUBLAS_STATUS_NOT_SUPPORTED);  // mixed types
  std::vector<float> host(16, 1.f);
  EXPECT_EQ(cublasGemmEx_64(h, CUBLAS_OP_N, CUBLAS_OP_N, 4, 4, 4, &one, host.data(), CUDA_R_32F, 4, d, CUDA_R_32F, 4,
                            &zero, d, CUDA_R_32F, 4, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
            CUBLAS_STATUS_INVALID_VALUE);  // A in host memory
  EXPECT_NE(std::string(cublasGetStatusString(CUBLAS_STATUS_INVALID_VALUE)).find("INVALID_VALUE"), std::string::npos);
}

TEST_F(GpuSimCublas, BetaZeroDoesNotReadC) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  float* dA = upload(std::vector<float>(4, 1.f));
  float* dC = upload(std::vector<float>(4, nan));
  const float one = 1, zero = 0;
  ASSERT_EQ(cublasGemmEx_64(h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, &one, dA, CUDA_R_32F, 2, dA, CUDA_R_32F, 2, &zero, dC,
                            CUDA_R_32F, 2, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
            CUBLAS_STATUS_SUCCESS);
  for (float c : download(dC, 4)) EXPECT_EQ(c, 2.f);
  // alpha 0: A and B (NaN here) are not read either.
  float* dN = upload(std::vector<float>(4, nan));
  ASSERT_EQ(cublasGemmEx_64(h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, &zero, dN, CUDA_R_32F, 2, dN, CUDA_R_32F, 2, &zero, dC,
                            CUDA_R_32F, 2, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
            CUBLAS_STATUS_SUCCESS);
  for (float c : download(dC, 4)) EXPECT_EQ(c, 0.f);
}

TEST_F(GpuSimCublas, Tf32RoundsTheInputs) {
  const float a = 1.f + std::ldexp(1.f, -12);  // below TF32's 10-bit mantissa
  float* dA = upload(std::vector<float>{a});
  float* dB = upload(std::vector<float>{1.f});
  float* dC = upload(std::vector<float>{0.f});
  const float one = 1, zero = 0;
  auto run = [&](cublasComputeType_t compute) {
    EXPECT_EQ(cublasGemmEx_64(h, CUBLAS_OP_N, CUBLAS_OP_N, 1, 1, 1, &one, dA, CUDA_R_32F, 1, dB, CUDA_R_32F, 1, &zero,
                              dC, CUDA_R_32F, 1, compute, CUBLAS_GEMM_DEFAULT),
              CUBLAS_STATUS_SUCCESS);
    return download(dC, 1)[0];
  };
  EXPECT_EQ(run(CUBLAS_COMPUTE_32F), a);
  EXPECT_EQ(run(CUBLAS_COMPUTE_32F_FAST_TF32), 1.f);
  ASSERT_EQ(cublasSetMathMode(h, CUBLAS_TF32_TENSOR_OP_MATH), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(run(CUBLAS_COMPUTE_32F), 1.f);
}

TEST_F(GpuSimCublas, BatchedGemmsReadTheirPointerArraysFromDeviceMemory) {
  float* dA = upload(std::vector<float>{1, 2, 3, 4});  // two 1x2 . 2x1 products, batch stride 2
  float* dC = upload(std::vector<float>{0, 0});
  const float one = 1, zero = 0;
  ASSERT_EQ(cublasGemmStridedBatchedEx_64(h, CUBLAS_OP_N, CUBLAS_OP_N, 1, 1, 2, &one, dA, CUDA_R_32F, 1, 2, dA,
                                          CUDA_R_32F, 2, 2, &zero, dC, CUDA_R_32F, 1, 1, 2, CUBLAS_COMPUTE_32F,
                                          CUBLAS_GEMM_DEFAULT),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(download(dC, 2), (std::vector<float>{5, 25}));
  std::vector<const void*> ptrs = {dA + 2, dA};
  const void** dptrs = upload(ptrs);
  std::vector<void*> cptrs = {dC, dC + 1};
  void** dcptrs = upload(cptrs);
  ASSERT_EQ(cublasGemmBatchedEx_64(h, CUBLAS_OP_N, CUBLAS_OP_N, 1, 1, 2, &one, dptrs, CUDA_R_32F, 1, dptrs,
                                   CUDA_R_32F, 2, &zero, dcptrs, CUDA_R_32F, 1, 2, CUBLAS_COMPUTE_32F,
                                   CUBLAS_GEMM_DEFAULT),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(download(dC, 2), (std::vector<float>{25, 5}));
  EXPECT_EQ(cublasGemmBatchedEx_64(h, CUBLAS_OP_N, CUBLAS_OP_N, 1, 1, 2, &one, ptrs.data(), CUDA_R_32F, 1, dptrs,
                                   CUDA_R_32F, 2, &zero, dcptrs, CUDA_R_32F, 1, 2, CUBLAS_COMPUTE_32F,
                                   CUBLAS_GEMM_DEFAULT),
            CUBLAS_STATUS_INVALID_VALUE);  // a host pointer array
}

TEST_F(GpuSimCublas, ModesAndWorkspace) {
  EXPECT_EQ(cublasSetPointerMode_v2(h, CUBLAS_POINTER_MODE_DEVICE), CUBLAS_STATUS_NOT_SUPPORTED);
  EXPECT_NE(std::string(cublasGetStatusString(CUBLAS_STATUS_NOT_SUPPORTED)).find("device pointer mode"),
            std::string::npos);
  EXPECT_EQ(cublasSetPointerMode_v2(h, CUBLAS_POINTER_MODE_HOST), CUBLAS_STATUS_SUCCESS);
  char* w = upload(std::vector<char>(4096));
  EXPECT_EQ(cublasSetWorkspace_v2(h, w + 16, 1024), CUBLAS_STATUS_INVALID_VALUE);
  EXPECT_EQ(cublasSetWorkspace_v2(h, w + 256, 1024), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(cublasSetAtomicsMode(h, CUBLAS_ATOMICS_NOT_ALLOWED), CUBLAS_STATUS_SUCCESS);
  cudaStream_t s = nullptr, got = reinterpret_cast<cudaStream_t>(1);
  ASSERT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamDefault), cudaSuccess);
  ASSERT_EQ(cublasSetStream_v2(h, s), CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(cublasGetStream_v2(h, &got), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(got, s);
  EXPECT_EQ(cublasSetMathMode(reinterpret_cast<cublasHandle_t>(&got), CUBLAS_DEFAULT_MATH),
            CUBLAS_STATUS_NOT_INITIALIZED);
}

// ---------------------------------------------------------------- cuBLASLt
// The stand-in's contract: column-major layouts, the bias one element per row of D, relu as
// max(x, 0) (NaN -> 0, as documented), the algo from the heuristic, refusals for what it
// does not simulate.
struct GpuSimCublasLt : GpuSimCublas {
  cublasLtHandle_t lt = nullptr;
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatmulPreference_t pref = nullptr;
  std::vector<cublasLtMatrixLayout_t> layouts;
  void SetUp() override {
    GpuSimCublas::SetUp();
    ASSERT_EQ(cublasLtCreate(&lt), CUBLAS_STATUS_SUCCESS);
    ASSERT_EQ(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_64F, CUDA_R_64F), CUBLAS_STATUS_SUCCESS);
    ASSERT_EQ(cublasLtMatmulPreferenceCreate(&pref), CUBLAS_STATUS_SUCCESS);
  }
  void TearDown() override {
    for (auto l : layouts) cublasLtMatrixLayoutDestroy(l);
    cublasLtMatmulPreferenceDestroy(pref);
    cublasLtMatmulDescDestroy(desc);
    cublasLtDestroy(lt);
    GpuSimCublas::TearDown();
  }
  cublasLtMatrixLayout_t layout(uint64_t rows, uint64_t cols, int64_t ld, cudaDataType t = CUDA_R_64F) {
    cublasLtMatrixLayout_t l = nullptr;
    EXPECT_EQ(cublasLtMatrixLayoutCreate(&l, t, rows, cols, ld), CUBLAS_STATUS_SUCCESS);
    layouts.push_back(l);
    return l;
  }
  template <class V>
  cublasStatus_t set(cublasLtMatmulDescAttributes_t a, V v) {
    return cublasLtMatmulDescSetAttribute(desc, a, &v, sizeof v);
  }
};

TEST_F(GpuSimCublasLt, BiasIsPerRowOfDAndReluDropsNaN) {
  // D (2x3) = A (2x2, the identity) . B (2x3) + bias (2: one per row of D), column-major.
  const std::vector<double> A = {1, 0, 0, 1}, B = {1, -5, std::nan(""), 2, 3, -4}, bias = {10, 1};
  double* dA = upload(A);
  double* dB = upload(B);
  double* dbias = upload(bias);
  double* dD = upload(std::vector<double>(6, 0));
  auto a = layout(2, 2, 2), b = layout(2, 3, 2), d = layout(2, 3, 2);
  ASSERT_EQ(set(CUBLASLT_MATMUL_DESC_EPILOGUE, uint32_t(CUBLASLT_EPILOGUE_BIAS)), CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(set(CUBLASLT_MATMUL_DESC_BIAS_POINTER, static_cast<const void*>(dbias)), CUBLAS_STATUS_SUCCESS);
  cublasLtMatmulHeuristicResult_t r{};
  int n = 0;
  ASSERT_EQ(cublasLtMatmulAlgoGetHeuristic(lt, desc, a, b, d, d, pref, 1, &r, &n), CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(n, 1);
  const double one = 1, zero = 0;
  ASSERT_EQ(cublasLtMatmul(lt, desc, &one, dA, a, dB, b, &zero, dD, d, dD, d, &r.algo, nullptr, 0, nullptr),
            CUBLAS_STATUS_SUCCESS);
  std::vector<double> got = download(dD, 6);
  EXPECT_EQ(got[0], 11);
  EXPECT_EQ(got[1], -4);
  EXPECT_TRUE(std::isnan(got[2]));  // column 1 of B holds a NaN: 0 * NaN makes all of D's column 1 NaN
  EXPECT_TRUE(std::isnan(got[3]));
  EXPECT_EQ(got[4], 13);
  EXPECT_EQ(got[5], -3);
  // RELU_BIAS: max(x, 0), the NaN becomes 0 (why Theon's relu, which keeps NaN, is not Lt's).
  ASSERT_EQ(set(CUBLASLT_MATMUL_DESC_EPILOGUE, uint32_t(CUBLASLT_EPILOGUE_RELU_BIAS)), CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(cublasLtMatmul(lt, desc, &one, dA, a, dB, b, &zero, dD, d, dD, d, nullptr, nullptr, 0, nullptr),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(download(dD, 6), (std::vector<double>{11, 0, 0, 0, 13, 0}));
}

TEST_F(GpuSimCublasLt, TheContractIsEnforced) {
  double* d4 = upload(std::vector<double>(16, 1));
  const double one = 1, zero = 0;
  auto a = layout(4, 4, 4), bad_ld = layout(4, 4, 3), f32 = layout(4, 4, 4, CUDA_R_32F), wide = layout(4, 5, 4);
  EXPECT_EQ(cublasLtMatmul(lt, desc, &one, d4, a, d4, a, &zero, d4, a, d4, a, nullptr, nullptr, 0, nullptr),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(cublasLtMatmul(lt, desc, &one, d4, bad_ld, d4, a, &zero, d4, a, d4, a, nullptr, nullptr, 0, nullptr),
            CUBLAS_STATUS_INVALID_VALUE);  // ld 3 < rows 4
  EXPECT_EQ(cublasLtMatmul(lt, desc, &one, d4, f32, d4, a, &zero, d4, a, d4, a, nullptr, nullptr, 0, nullptr),
            CUBLAS_STATUS_NOT_SUPPORTED);  // mixed types
  EXPECT_EQ(cublasLtMatmul(lt, desc, &one, d4, a, d4, a, &zero, d4, a, d4, wide, nullptr, nullptr, 0, nullptr),
            CUBLAS_STATUS_INVALID_VALUE);  // D's shape does not chain
  std::vector<double> host(16);
  EXPECT_EQ(cublasLtMatmul(lt, desc, &one, host.data(), a, d4, a, &zero, d4, a, d4, a, nullptr, nullptr, 0, nullptr),
            CUBLAS_STATUS_INVALID_VALUE);  // A in host memory
  cublasLtMatmulAlgo_t forged{};
  EXPECT_EQ(cublasLtMatmul(lt, desc, &one, d4, a, d4, a, &zero, d4, a, d4, a, &forged, nullptr, 0, nullptr),
            CUBLAS_STATUS_INVALID_VALUE);  // an algo the heuristic did not return
  // A bias epilogue without its pointer, a bias in host memory, an epilogue not simulated.
  ASSERT_EQ(set(CUBLASLT_MATMUL_DESC_EPILOGUE, uint32_t(CUBLASLT_EPILOGUE_BIAS)), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(cublasLtMatmul(lt, desc, &one, d4, a, d4, a, &zero, d4, a, d4, a, nullptr, nullptr, 0, nullptr),
            CUBLAS_STATUS_INVALID_VALUE);
  ASSERT_EQ(set(CUBLASLT_MATMUL_DESC_BIAS_POINTER, static_cast<const void*>(host.data())), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(cublasLtMatmul(lt, desc, &one, d4, a, d4, a, &zero, d4, a, d4, a, nullptr, nullptr, 0, nullptr),
            CUBLAS_STATUS_INVALID_VALUE);
  ASSERT_EQ(set(CUBLASLT_MATMUL_DESC_EPILOGUE, uint32_t(CUBLASLT_EPILOGUE_GELU)), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(cublasLtMatmul(lt, desc, &one, d4, a, d4, a, &zero, d4, a, d4, a, nullptr, nullptr, 0, nullptr),
            CUBLAS_STATUS_NOT_SUPPORTED);
  // Attributes: the exact size, and only those simulated.
  uint32_t epi = CUBLASLT_EPILOGUE_DEFAULT;
  EXPECT_EQ(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, 2), CUBLAS_STATUS_INVALID_VALUE);
  EXPECT_EQ(set(CUBLASLT_MATMUL_DESC_FAST_ACCUM, int8_t(1)), CUBLAS_STATUS_NOT_SUPPORTED);
  EXPECT_EQ(set(CUBLASLT_MATMUL_DESC_POINTER_MODE, int32_t(CUBLASLT_POINTER_MODE_DEVICE)), CUBLAS_STATUS_NOT_SUPPORTED);
  EXPECT_EQ(cublasLtMatmul(reinterpret_cast<cublasLtHandle_t>(d4), desc, &one, d4, a, d4, a, &zero, d4, a, d4, a,
                           nullptr, nullptr, 0, nullptr),
            CUBLAS_STATUS_NOT_INITIALIZED);
  EXPECT_NE(std::string(cublasLtGetStatusString(CUBLAS_STATUS_NOT_SUPPORTED)).find("does not simulate"),
            std::string::npos);
}

// ---------------------------------------------------------------- NVRTC
TEST(GpuSimNvrtc, VersionAndOptions) {
  int major = 0, minor = 0;
  ASSERT_EQ(nvrtcVersion(&major, &minor), NVRTC_SUCCESS);
  EXPECT_EQ(major, 99);
  EXPECT_EQ(minor, 0);
  nvrtcProgram p = nullptr;
  ASSERT_EQ(nvrtcCreateProgram(&p, "extern \"C\" __global__ void k() {}", "k.cu", 0, nullptr, nullptr), NVRTC_SUCCESS);
  const char* bad[] = {"--gpu-architecture=sm_90", "--no-such-flag"};
  EXPECT_EQ(nvrtcCompileProgram(p, 2, bad), NVRTC_ERROR_INVALID_OPTION);
  const char* bad_value[] = {"--fmad=maybe"};
  EXPECT_EQ(nvrtcCompileProgram(p, 1, bad_value), NVRTC_ERROR_INVALID_OPTION);
  size_t n = 0;
  ASSERT_EQ(nvrtcGetProgramLogSize(p, &n), NVRTC_SUCCESS);
  std::string log(n, '\0');
  ASSERT_EQ(nvrtcGetProgramLog(p, log.data()), NVRTC_SUCCESS);
  EXPECT_NE(log.find("--fmad=maybe"), std::string::npos) << log;
  EXPECT_EQ(nvrtcDestroyProgram(&p), NVRTC_SUCCESS);
}

#if THEON_GPU_SIM_HAVE_EMULATOR
// What the backend passes (src/backends/cuda/nvrtc_compiler.cpp options()), plus --fmad.
const char* const kBackendOptions[] = {"--gpu-architecture=sm_90", "-std=c++17",       "-default-device",
                                       "--ftz=false",              "--prec-div=true", "--prec-sqrt=true",
                                       "--fmad=false"};

const char* const kKernelSource = R"(#include <cstdint>
#include "sim_test/helper.cuh"
extern "C" __global__ void __launch_bounds__(256) mirror_twice(const float* x, float* y, int n) {
  extern __shared__ __align__(16) float tile[];
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  tile[threadIdx.x] = i < n ? x[i] : 0.f;
  __syncthreads();
  if (i < n) y[i] = twice(tile[blockDim.x - 1 - threadIdx.x]);
}
)";

TEST(GpuSimNvrtc, CompilesLoadsAndLaunchesAKernel) {
  const char* names[] = {"sim_test/helper.cuh", "cstdint"};
  const char* bodies[] = {"__device__ inline float twice(float v) { return 2.f * v; }\n",
                          "#error the NVRTC std shim must not replace the host's <cstdint>\n"};
  nvrtcProgram p = nullptr;
  ASSERT_EQ(nvrtcCreateProgram(&p, kKernelSource, "mirror.cu", 2, bodies, names), NVRTC_SUCCESS);
  const nvrtcResult r = nvrtcCompileProgram(p, 7, kBackendOptions);
  size_t n = 0;
  nvrtcGetProgramLogSize(p, &n);
  std::string log(n, '\0');
  nvrtcGetProgramLog(p, log.data());
  ASSERT_EQ(r, NVRTC_SUCCESS) << log;
  ASSERT_EQ(nvrtcGetCUBINSize(p, &n), NVRTC_SUCCESS);
  std::string cubin(n, '\0');
  ASSERT_EQ(nvrtcGetCUBIN(p, cubin.data()), NVRTC_SUCCESS);
  nvrtcDestroyProgram(&p);
  EXPECT_EQ(cubin.substr(0, 8), "THEONSIM");

  cudaLibrary_t lib = nullptr;
  ASSERT_EQ(cudaLibraryLoadData(&lib, cubin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0), cudaSuccess);
  cudaKernel_t k = nullptr;
  ASSERT_EQ(cudaLibraryGetKernel(&k, lib, "mirror_twice"), cudaSuccess);
  const int count = 1000, block = 256, grid = (count + block - 1) / block;
  std::vector<float> x(count);
  for (int i = 0; i < count; ++i) x[i] = static_cast<float>(i);
  float *dx = nullptr, *dy = nullptr;
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&dx), count * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&dy), count * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(dx, x.data(), count * sizeof(float), cudaMemcpyHostToDevice), cudaSuccess);
  int nn = count;
  void* args[] = {&dx, &dy, &nn};
  ASSERT_EQ(cudaLaunchKernel(reinterpret_cast<const void*>(k), dim3(grid), dim3(block), args, block * sizeof(float),
                             nullptr),
            cudaSuccess);
  std::vector<float> y(count);
  ASSERT_EQ(cudaMemcpy(y.data(), dy, count * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
  for (int i = 0; i < count; ++i) {
    const int b = i / block, t = i % block, src = b * block + (block - 1 - t);
    ASSERT_EQ(y[i], src < count ? 2.f * src : 0.f) << "at " << i;
  }
  cudaFree(dx);
  cudaFree(dy);
  EXPECT_EQ(cudaLibraryUnload(lib), cudaSuccess);
}

TEST(GpuSimNvrtc, CompilerErrorsAreCompilationErrorsWithTheLog) {
  nvrtcProgram p = nullptr;
  ASSERT_EQ(nvrtcCreateProgram(&p, "extern \"C\" __global__ void k() { no_such_name(); }", "broken.cu", 0, nullptr,
                               nullptr),
            NVRTC_SUCCESS);
  EXPECT_EQ(nvrtcCompileProgram(p, 7, kBackendOptions), NVRTC_ERROR_COMPILATION);
  size_t n = 0;
  nvrtcGetProgramLogSize(p, &n);
  std::string log(n, '\0');
  nvrtcGetProgramLog(p, log.data());
  EXPECT_NE(log.find("no_such_name"), std::string::npos) << log;
  EXPECT_NE(log.find("broken.cu"), std::string::npos) << log;
  nvrtcDestroyProgram(&p);
}
#endif

// ---------------------------------------------------------------- child bodies (run by the tests above)
TEST(SimChild, DISABLED_PointerAttributes) {
  void *d0 = nullptr, *d1 = nullptr, *pinned = nullptr;
  ASSERT_EQ(cudaMalloc(&d0, 100), cudaSuccess);
  ASSERT_EQ(cudaSetDevice(1), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&d1, 100), cudaSuccess);
  ASSERT_EQ(cudaHostAlloc(&pinned, 100, cudaHostAllocPortable), cudaSuccess);
  cudaPointerAttributes a{};
  ASSERT_EQ(cudaPointerGetAttributes(&a, static_cast<char*>(d0) + 50), cudaSuccess);
  EXPECT_EQ(a.type, cudaMemoryTypeDevice);
  EXPECT_EQ(a.device, 0);
  ASSERT_EQ(cudaPointerGetAttributes(&a, d1), cudaSuccess);
  EXPECT_EQ(a.type, cudaMemoryTypeDevice);
  EXPECT_EQ(a.device, 1);
  ASSERT_EQ(cudaPointerGetAttributes(&a, pinned), cudaSuccess);
  EXPECT_EQ(a.type, cudaMemoryTypeHost);
  EXPECT_EQ(a.hostPointer, pinned);
  int local = 0;
  ASSERT_EQ(cudaPointerGetAttributes(&a, &local), cudaSuccess);
  EXPECT_EQ(a.type, cudaMemoryTypeUnregistered);
  ASSERT_EQ(cudaPointerGetAttributes(&a, static_cast<char*>(d0) + 100), cudaSuccess);  // one past the end
  EXPECT_NE(a.type, cudaMemoryTypeDevice);
  EXPECT_EQ(cudaSetDevice(2), cudaErrorInvalidDevice);
  int dev = -1;
  ASSERT_EQ(cudaGetDevice(&dev), cudaSuccess);
  EXPECT_EQ(dev, 1);
  EXPECT_EQ(cudaFree(pinned), cudaErrorInvalidValue);
  EXPECT_EQ(cudaFreeHost(pinned), cudaSuccess);
}

TEST(SimChild, DISABLED_GuardFaults) {
  int* d = nullptr;
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&d), 4096), cudaSuccess);
  ASSERT_EQ(cudaMemset(d, 7, 4096), cudaSuccess);
  int h = 0;
  ASSERT_EQ(cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost), cudaSuccess);
  if (h == 0x07070707) std::printf("copy through the runtime ok\n");
  std::fflush(stdout);
  volatile int v = d[0];  // a host dereference of a device pointer
  std::printf("host read not caught (%d)\n", v);
}

// Prints before=/after= (a pinned D2H destination read before and after the wait) and
// pageable= (a pageable destination right after the call).
TEST(SimChild, DISABLED_PinnedCopy) {
  cudaStream_t s = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
  unsigned char *d = nullptr, *pinned = nullptr;
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&d), 4096), cudaSuccess);
  ASSERT_EQ(cudaHostAlloc(reinterpret_cast<void**>(&pinned), 4096, cudaHostAllocPortable), cudaSuccess);
  std::memset(pinned, 0, 4096);
  ASSERT_EQ(cudaMemsetAsync(d, 7, 4096, s), cudaSuccess);
  ASSERT_EQ(cudaMemcpyAsync(pinned, d, 4096, cudaMemcpyDeviceToHost, s), cudaSuccess);
  const int before = pinned[100];
  ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
  const int after = pinned[100];
  ASSERT_EQ(cudaMemsetAsync(d, 7, 4096, s), cudaSuccess);
  std::vector<unsigned char> pageable(4096, 0);
  ASSERT_EQ(cudaMemcpyAsync(pageable.data(), d, 4096, cudaMemcpyDeviceToHost, s), cudaSuccess);
  std::printf("before=%d after=%d pageable=%d\n", before, after, pageable[100]);
}

// Legacy-stream work, then a pinned D2H copy on a blocking and on a non-blocking stream;
// only each of those streams is synchronised.
TEST(SimChild, DISABLED_LegacyOrder) {
  unsigned char *d = nullptr, *p1 = nullptr, *p2 = nullptr;
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&d), 64), cudaSuccess);
  ASSERT_EQ(cudaHostAlloc(reinterpret_cast<void**>(&p1), 64, 0), cudaSuccess);
  ASSERT_EQ(cudaHostAlloc(reinterpret_cast<void**>(&p2), 64, 0), cudaSuccess);
  std::memset(p1, 0, 64);
  std::memset(p2, 0, 64);
  cudaStream_t blocking = nullptr, nonblocking = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&blocking, cudaStreamDefault), cudaSuccess);
  ASSERT_EQ(cudaStreamCreateWithFlags(&nonblocking, cudaStreamNonBlocking), cudaSuccess);
  ASSERT_EQ(cudaMemsetAsync(d, 7, 64, nullptr), cudaSuccess);  // the legacy default stream
  ASSERT_EQ(cudaMemcpyAsync(p2, d, 64, cudaMemcpyDeviceToHost, nonblocking), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(nonblocking), cudaSuccess);
  ASSERT_EQ(cudaMemcpyAsync(p1, d, 64, cudaMemcpyDeviceToHost, blocking), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(blocking), cudaSuccess);
  std::printf("blocking=%d nonblocking=%d\n", p1[0], p2[0]);
}

// Work on two streams of device 0 (s1 waiting for s0's event), one synchronisation of s1,
// one pageable copy on s0; prints the counters and the pending work at each synchronisation.
TEST(SimChild, DISABLED_Counters) {
  cudaStream_t s0 = nullptr, s1 = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&s0, cudaStreamNonBlocking), cudaSuccess);
  ASSERT_EQ(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking), cudaSuccess);
  float* d = nullptr;
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&d), 4096), cudaSuccess);
  cudaEvent_t e = nullptr;
  ASSERT_EQ(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), cudaSuccess);
  fill_kernel();  // loaded before counting
  theon_gpu_sim_reset_counters();
  ASSERT_EQ(cudaMemsetAsync(d, 0, 1024, s0), cudaSuccess);
  ASSERT_EQ(launch_fill(d, 1.5f, 256, dim3(1), dim3(256), 0, s0), cudaSuccess);
  ASSERT_EQ(cudaEventRecord(e, s0), cudaSuccess);
  ASSERT_EQ(cudaMemsetAsync(d + 512, 0, 1024, s1), cudaSuccess);
  ASSERT_EQ(cudaStreamWaitEvent(s1, e, 0), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(s1), cudaSuccess);  // runs s0 up to the event too
  float host[4] = {0, 0, 0, 0};
  ASSERT_EQ(cudaMemcpyAsync(host, d, sizeof host, cudaMemcpyDeviceToHost, s0), cudaSuccess);  // pageable: synchronous
  EXPECT_EQ(host[3], 1.5f);
  theon_gpu_sim_counters c{};
  theon_gpu_sim_read_counters(&c);
  auto pending = [](uint64_t sync, cudaStream_t s) {
    const uint64_t n = theon_gpu_sim_pending_at_sync(sync, s);
    return n == UINT64_MAX ? std::string("none") : std::to_string(n);
  };
  std::string call1 = theon_gpu_sim_sync_call(1);
  call1.erase(std::remove(call1.begin(), call1.end(), ' '), call1.end());
  std::printf("launches=%llu operations=%llu host_syncs=%llu host_waits=%llu events=%llu stream_waits=%llu\n",
              static_cast<unsigned long long>(c.launches), static_cast<unsigned long long>(c.operations),
              static_cast<unsigned long long>(c.host_syncs), static_cast<unsigned long long>(c.host_waits),
              static_cast<unsigned long long>(c.events_recorded), static_cast<unsigned long long>(c.stream_waits));
  std::printf("sync0_s0=%s sync0_s1=%s sync0_dev0=%llu sync0_dev1=%llu sync0_call=%s sync1_s0=%s sync1_call=%s "
              "sync2_s0=%s\n",
              pending(0, s0).c_str(), pending(0, s1).c_str(),
              static_cast<unsigned long long>(theon_gpu_sim_device_pending_at_sync(0, 0)),
              static_cast<unsigned long long>(theon_gpu_sim_device_pending_at_sync(0, 1)), theon_gpu_sim_sync_call(0),
              pending(1, s0).c_str(), call1.c_str(), pending(2, s0).c_str());
}

TEST(SimChild, DISABLED_Events) {
  unsigned char *d0 = nullptr, *d1 = nullptr, *pinned = nullptr;
  cudaStream_t s0 = nullptr, s1 = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&s0, cudaStreamNonBlocking), cudaSuccess);
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&d0), 64), cudaSuccess);
  ASSERT_EQ(cudaSetDevice(1), cudaSuccess);
  ASSERT_EQ(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking), cudaSuccess);
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&d1), 64), cudaSuccess);
  ASSERT_EQ(cudaHostAlloc(reinterpret_cast<void**>(&pinned), 64, 0), cudaSuccess);
  std::memset(pinned, 0, 64);
  cudaEvent_t e = nullptr, unrecorded = nullptr;
  ASSERT_EQ(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), cudaSuccess);
  ASSERT_EQ(cudaEventCreate(&unrecorded), cudaSuccess);
  EXPECT_EQ(cudaEventQuery(unrecorded), cudaSuccess);
  ASSERT_EQ(cudaMemsetAsync(d0, 3, 64, s0), cudaSuccess);
  ASSERT_EQ(cudaEventRecord(e, s0), cudaSuccess);
  EXPECT_EQ(cudaStreamQuery(s0), cudaErrorNotReady);  // deferred: nothing has run yet
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);         // "not ready" is no error
  ASSERT_EQ(cudaMemsetAsync(d0, 5, 64, s0), cudaSuccess);
  ASSERT_EQ(cudaEventRecord(e, s0), cudaSuccess);
  ASSERT_EQ(cudaStreamWaitEvent(s1, e, 0), cudaSuccess);  // device 1 waits for device 0
  ASSERT_EQ(cudaMemcpyPeerAsync(d1, 1, d0, 0, 64, s1), cudaSuccess);
  ASSERT_EQ(cudaMemcpyAsync(pinned, d1, 64, cudaMemcpyDeviceToHost, s1), cudaSuccess);
  EXPECT_EQ(cudaEventQuery(e), cudaErrorNotReady);
  ASSERT_EQ(cudaStreamSynchronize(s1), cudaSuccess);  // runs s0 up to the event first
  EXPECT_EQ(pinned[0], 5);
  EXPECT_EQ(cudaEventSynchronize(e), cudaSuccess);
  EXPECT_EQ(cudaEventQuery(e), cudaSuccess);
  EXPECT_EQ(cudaEventDestroy(e), cudaSuccess);
  EXPECT_EQ(cudaEventDestroy(unrecorded), cudaSuccess);
  EXPECT_EQ(cudaStreamDestroy(s1), cudaSuccess);
  EXPECT_EQ(cudaStreamSynchronize(s1), cudaErrorInvalidResourceHandle);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}

// The probe's two-device scenario at the API level: device 0's stream writes a buffer in
// several steps, device 1's stream copies it over (after waiting for an event on device 0's
// stream when SIM_TEST_WAIT=1) and back to pinned host memory. Prints result=ok|wrong.
TEST(SimChild, DISABLED_PeerCopy) {
  const bool wait = std::getenv("SIM_TEST_WAIT") && std::string(std::getenv("SIM_TEST_WAIT")) == "1";
  constexpr size_t n = 256;
  unsigned char *d0 = nullptr, *d1 = nullptr, *pinned = nullptr;
  cudaStream_t s0 = nullptr, s1 = nullptr;
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  ASSERT_EQ(cudaStreamCreateWithFlags(&s0, cudaStreamDefault), cudaSuccess);
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&d0), n), cudaSuccess);
  ASSERT_EQ(cudaSetDevice(1), cudaSuccess);
  ASSERT_EQ(cudaStreamCreateWithFlags(&s1, cudaStreamDefault), cudaSuccess);
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&d1), n), cudaSuccess);
  ASSERT_EQ(cudaHostAlloc(reinterpret_cast<void**>(&pinned), n, 0), cudaSuccess);
  cudaEvent_t written = nullptr;
  ASSERT_EQ(cudaEventCreateWithFlags(&written, cudaEventDisableTiming), cudaSuccess);
  for (int v = 1; v <= 6; ++v) ASSERT_EQ(cudaMemsetAsync(d0, v, n, s0), cudaSuccess);
  ASSERT_EQ(cudaEventRecord(written, s0), cudaSuccess);
  if (wait) {
    ASSERT_EQ(cudaStreamWaitEvent(s1, written, 0), cudaSuccess);
  }
  ASSERT_EQ(cudaMemcpyPeerAsync(d1, 1, d0, 0, n, s1), cudaSuccess);
  ASSERT_EQ(cudaMemcpyAsync(pinned, d1, n, cudaMemcpyDeviceToHost, s1), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(s1), cudaSuccess);
  bool ok = true;
  for (size_t i = 0; i < n; ++i) ok = ok && pinned[i] == 6;
  std::printf("result=%s\n", ok ? "ok" : "wrong");
}

TEST(SimChild, DISABLED_PeerAccess) {
  int can = -1;
  ASSERT_EQ(cudaDeviceCanAccessPeer(&can, 0, 1), cudaSuccess);
  const int enable = cudaDeviceEnablePeerAccess(1, 0);
  cudaGetLastError();
  const int again = cudaDeviceEnablePeerAccess(1, 0);
  cudaGetLastError();
  unsigned char *d0 = nullptr, *d1 = nullptr;
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&d0), 16), cudaSuccess);
  ASSERT_EQ(cudaMemset(d0, 9, 16), cudaSuccess);
  ASSERT_EQ(cudaSetDevice(1), cudaSuccess);
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&d1), 16), cudaSuccess);
  ASSERT_EQ(cudaMemcpyPeerAsync(d1, 1, d0, 0, 16, nullptr), cudaSuccess);
  EXPECT_EQ(cudaMemcpyPeerAsync(d1, 0, d0, 0, 16, nullptr), cudaErrorInvalidValue);  // d1 is not device 0's
  cudaGetLastError();
  unsigned char h = 0;
  ASSERT_EQ(cudaMemcpy(&h, d1, 1, cudaMemcpyDeviceToHost), cudaSuccess);
  std::printf("can=%d enable=%d again=%d copied=%d\n", can, enable, again, h);
}

}  // namespace
