// Options whose effect no other folder's test shows: each changes the option through
// config() and observes what a compiled function (or the kernel cache) does differently.
#include <theon/config.hpp>
#include <theon/kernel_cache.hpp>
#include <theon/theon.hpp>

#include "stderr_of.hpp"
#include "util/kernel_cache.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <iostream>
#include <sstream>
#include <unistd.h>

namespace theon {
namespace {

class ConfigOptions : public ::testing::Test {
 protected:
  void SetUp() override { saved_ = config(); }
  void TearDown() override { config() = saved_; }
  Config saved_;
};

// The passes a compiled function ran, in order (explain() lists them as "  pass <name>").
std::vector<std::string> passes_of(const Function& f) {
  std::vector<std::string> out;
  std::istringstream lines(f.explain());
  for (std::string line; std::getline(lines, line);)
    if (line.rfind("  pass ", 0) == 0) out.push_back(line.substr(7, line.find(' ', 7) - 7));
  return out;
}

size_t count_op(const Function& f, const std::string& op) {
  size_t n = 0;
  for (const NodeInfo& node : f.nodes()) n += node.op == op;
  return n;
}

using testing_util::stderr_of;

using Passes = std::vector<std::string>;

// exp(x) + exp(x): merge makes the two exps one.
struct TwoExps {
  Var x = tensor::vector("x");
  Var y = tensor::exp(x) + tensor::exp(x);
  Function compile() const { return function({x}, {y}); }
};

TEST_F(ConfigOptions, ModeSelectsTheRewrites) {
  TwoExps g;
  config().set("mode", "NONE");
  Function none = g.compile();
  EXPECT_EQ(passes_of(none), (Passes{"float16"}));  // required by the kernels: runs in every mode
  EXPECT_EQ(count_op(none, "Elemwise{exp}"), 2u) << none.explain();
  config().set("mode", "fast_compile");
  Function fast_compile = g.compile();
  EXPECT_EQ(passes_of(fast_compile), (Passes{"merge", "constant_fold", "shape_of", "stabilize", "float16", "merge_again"}));
  EXPECT_EQ(count_op(fast_compile, "Elemwise{exp}"), 1u) << fast_compile.explain();
  config().set("mode", "fast_run");
  const Passes fast_run = passes_of(g.compile());
  EXPECT_NE(std::find(fast_run.begin(), fast_run.end(), "fusion"), fast_run.end());
  EXPECT_NE(std::find(fast_run.begin(), fast_run.end(), "inplace"), fast_run.end());
  const Array in = Array::randn({7}, 1);
  EXPECT_TRUE(allclose(none({in})[0], fast_compile({in})[0], 0, 0));
}

TEST_F(ConfigOptions, OptimizerIncludingAddsRewritesToTheMode) {
  TwoExps g;
  config().mode = "none";
  config().set("optimizer_including", "merge");  // a tag: merge and merge_again
  Function f = g.compile();
  EXPECT_EQ(passes_of(f), (Passes{"merge", "float16", "merge_again"}));
  EXPECT_EQ(count_op(f, "Elemwise{exp}"), 1u) << f.explain();
  config().set("optimizer_including", "constant_fold:merge_again");  // names
  EXPECT_EQ(passes_of(g.compile()), (Passes{"constant_fold", "float16", "merge_again"}));
}

TEST_F(ConfigOptions, OptimizerExcludingRemovesRewrites) {
  TwoExps g;
  config().mode = "fast_compile";
  config().set("optimizer_excluding", "merge");
  Function f = g.compile();
  EXPECT_EQ(passes_of(f), (Passes{"constant_fold", "shape_of", "stabilize", "float16"}));
  EXPECT_EQ(count_op(f, "Elemwise{exp}"), 2u) << f.explain();
  config().set("optimizer_excluding", "float16");  // required: cannot be excluded
  EXPECT_EQ(passes_of(g.compile()), (Passes{"merge", "constant_fold", "shape_of", "stabilize", "float16", "merge_again"}));
}

// Theano's meaning: of the rewrites the mode (and including/excluding) selects, only those
// matching every required name run; required lowering passes run anyway.
TEST_F(ConfigOptions, OptimizerRequiringNarrowsTheRewrites) {
  TwoExps g;
  config().mode = "fast_run";
  config().set("optimizer_requiring", "merge");
  Function f = g.compile();
  EXPECT_EQ(passes_of(f), (Passes{"merge", "float16", "merge_again"}));
  EXPECT_EQ(count_op(f, "Elemwise{exp}"), 1u) << f.explain();
  config().set("optimizer_requiring", "fast_run:specialize");  // both: specialize and gemm_epilogue
  EXPECT_EQ(passes_of(g.compile()), (Passes{"specialize", "gemm_epilogue", "float16"}));
  config().mode = "none";  // requiring adds nothing the query did not select
  config().set("optimizer_requiring", "merge");
  EXPECT_EQ(passes_of(g.compile()), (Passes{"float16"}));
}

TEST_F(ConfigOptions, UnknownRewriteNamesWarnOnceNamingTheKnownOnes) {
  TwoExps g;
  config().set("optimizer_including", "fusion:no_such_rewrite");
  config().set("optimizer_excluding", "local_elemwise_fusion");  // a Theano rewrite Theon names otherwise
  config().set("optimizer_requiring", "fast_run:gpuarray");
  const std::string said = stderr_of([&] { g.compile().explain(); });
  for (const char* expected :
       {"optimizer_including: no rewrite or tag is named 'no_such_rewrite'",
        "optimizer_excluding: no rewrite or tag is named 'local_elemwise_fusion'",
        "optimizer_requiring: no rewrite or tag is named 'gpuarray'", "(rewrites: ", "merge_again", "; tags: ",
        "fast_compile"})
    EXPECT_NE(said.find(expected), std::string::npos) << expected << " in:\n" << said;
  EXPECT_EQ(said.find("'fusion'"), std::string::npos) << said;  // known names say nothing
  EXPECT_EQ(said.find("'fast_run'"), std::string::npos) << said;
  EXPECT_EQ(stderr_of([&] { g.compile().explain(); }), "") << "once per name and process";
  config().optimizer_requiring = "";
  config().optimizer_including = "no_such_rewrite";
  EXPECT_EQ(stderr_of([&] { g.compile().explain(); }), "") << "once per name, whichever option names it";
}

TEST_F(ConfigOptions, CompiledirHoldsTheKernelCache) {
  namespace fs = std::filesystem;
  const fs::path base = fs::temp_directory_path() / ("theon-config-compiledir-" + std::to_string(getpid()));
  fs::remove_all(base);
  std::string error;
  for (const char* which : {"one", "two"}) {
    config().set("compiledir", (base / which).string());
    EXPECT_EQ(kernel_cache_info().root, (base / which).string());
    detail::KernelCacheFolder cpu("cpu");
    ASSERT_TRUE(cpu.store(std::string(which) + ".so", "module bytes", error)) << error;
    EXPECT_TRUE(fs::exists(base / which / "cpu" / (std::string(which) + ".so")));
    EXPECT_EQ(kernel_cache_info().entries, 1);  // only this compiledir's entry
  }
  EXPECT_FALSE(fs::exists(base / "two" / "cpu" / "one.so"));
  fs::remove_all(base);
}

}  // namespace
}  // namespace theon
