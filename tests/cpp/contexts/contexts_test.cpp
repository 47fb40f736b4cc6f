// Contexts through compile and exec (issue 28): placement by Theano's rule and transfer
// insertion (text in, graph out), explain() and debugprint, gradients through transfers,
// results of a program spanning two cpu contexts against one context, the rendezvous (two cpu
// contexts really run at once), all-or-nothing updates when one context fails, and the
// thread budget. Variables are pinned at the graph level (TensorType::context), as
// shared(target=) and transfer(x, name) do.
#include "backends/cpu/parallel.hpp"
#include "backends/cpu/thread_budget.hpp"
#include "backends/registry.hpp"
#include "compile/placement.hpp"
#include "compile/thunks.hpp"
#include "compile/transfers.hpp"
#include "exec/function_impl.hpp"
#include "graph/print.hpp"
#include "ops/transfer.hpp"
#include "stderr_of.hpp"

#include <theon/theon.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace theon {
namespace {

// config().contexts for one test.
struct ContextsFlag {
  std::string saved = config().contexts;
  explicit ContextsFlag(const std::string& map) { config().contexts = map; }
  ~ContextsFlag() { config().contexts = saved; }
};

SharedVar pinned_shared(const Array& value, const std::string& name, const std::string& context) {
  SharedVar v = shared(value, name);
  v.node()->type.context = context;
  return v;
}


std::shared_ptr<graph::FunctionGraph> graph_of(const std::vector<Var>& inputs, const std::vector<Var>& outputs) {
  std::vector<graph::VarPtr> in, out;
  for (auto& v : inputs) in.push_back(v.node());
  for (auto& v : outputs) out.push_back(v.node());
  return std::make_shared<graph::FunctionGraph>(in, out);
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

const compile::NodePlacement& placed(const compile::Placement& p, const graph::FunctionGraph& fg, const std::string& op) {
  for (auto& n : fg.nodes())
    if (n->op().display() == op) return p.at(n.get());
  throw std::runtime_error("no node " + op);
}

TEST(ContextPlacement, PinnedOutputsThenTheFirstInputWithAContextThenTheDefault) {
  ContextsFlag flag("dev0->cpu;dev1->cpu");  // transfer() checks the name against the active map
  compile::LowerOptions o;
  o.contexts = runtime::ContextMap::parse("dev0->cpu;dev1->cpu");
  const compile::LoweringTarget target = compile::resolve_target(o);
  Var x = tensor::vector("x", DType::Float64);                       // a host input: no context
  Var a = pinned_shared(Array::from_vector<double>({1, 2}), "a", "dev0");
  Var b = pinned_shared(Array::from_vector<double>({3, 4}), "b", "dev1");
  Var u = tensor::exp(x);                    // no input with a context: the default
  Var v = tensor::tanh(b);                   // follows b: dev1
  Var w = tensor::sqr(x) + a;                // sqr: default; add: its first input has none, a decides
  Var z = a * v;                             // a (dev0) comes first: dev0, reads v of dev1
  Var t = transfer(u, "dev1");               // an explicit transfer: on its destination
  auto fg = graph_of({x}, {u, w, z, t * 2.0});
  compile::Placement p = compile::place(*fg, target);
  EXPECT_EQ(placed(p, *fg, "Elemwise{exp}").context.name, "cpu");
  EXPECT_EQ(placed(p, *fg, "Elemwise{exp}").reason, "device=cpu");
  EXPECT_EQ(placed(p, *fg, "Elemwise{tanh}").context.name, "dev1");
  EXPECT_EQ(placed(p, *fg, "Elemwise{tanh}").reason, "follows its input b (dev1)");
  EXPECT_EQ(placed(p, *fg, "Elemwise{add}").context.name, "dev0");
  EXPECT_EQ(placed(p, *fg, "Elemwise{add}").reason, "follows its input a (dev0)");
  EXPECT_EQ(placed(p, *fg, "Elemwise{mul}").context.name, "dev0");  // a * v (the first mul)
  EXPECT_EQ(placed(p, *fg, "Transfer{to=dev1}").context.name, "dev1");
  for (auto& [node, where] : p) EXPECT_TRUE(where.device.is_cpu()) << node->describe();

  // Transfers where values cross contexts: v (dev1) read by a * v in dev0 is handed over; a
  // value from outside the graph (a, b, x) belongs to no context and crosses nothing here.
  const compile::Homes homes = compile::place_leaves(*fg, p, {});
  EXPECT_EQ(count(graph::debugprint(fg->outputs()), "Transfer"), 1u);
  // Handed over to dev0: v (tanh's, dev1) for a * v, and sqr's value (the default context's)
  // for the add.
  EXPECT_EQ(compile::insert_transfers(*fg, p, homes), 2) << graph::debugprint(fg->outputs());
  const std::string after = graph::debugprint(fg->outputs());
  EXPECT_EQ(count(after, "Transfer{to=dev0}"), 2u) << after;
  // t * 2.0 follows t (pinned dev1); t's own input u lives in cpu: the explicit transfer
  // reads it where it is, and the mul reading t in dev1 needs nothing.
  EXPECT_EQ(count(after, "Transfer{to=dev1}"), 1u) << after;
  int handovers = 0;
  for (auto& n : fg->nodes())
    if (n->op().display() == "Transfer{to=dev0}") {
      EXPECT_EQ(p.at(n.get()).runs_in.name, "dev0");
      const std::string& why = p.at(n.get()).reason;
      EXPECT_NE(why.find("handover: input"), std::string::npos) << why;
      EXPECT_TRUE(why.find("written in dev1, read in dev0") != std::string::npos ||
                  why.find("written in cpu, read in dev0") != std::string::npos)
          << why;
      ++handovers;
    }
  EXPECT_EQ(handovers, 2);
  EXPECT_NO_THROW(fg->verify());
  EXPECT_EQ(compile::insert_transfers(*fg, p, homes), 0) << "a fixed point";
}

TEST(ContextPlacement, AnUnknownContextNameListsTheKnownOnes) {
  compile::LowerOptions o;
  o.contexts = runtime::ContextMap::parse("dev0->cpu");
  Var a = pinned_shared(Array::from_vector<double>({1}), "weights", "dev7");
  auto fg = graph_of({}, {tensor::exp(a)});
  try {
    compile::place(*fg, compile::resolve_target(o));
    FAIL() << "no error";
  } catch (const ValueError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("context 'dev7' is not defined"), std::string::npos) << what;
    EXPECT_NE(what.find("dev0 (cpu)"), std::string::npos) << what;
    EXPECT_NE(what.find("weights"), std::string::npos) << what;
  }
}

TEST(ContextPlacement, TwoGpuContextsCopyDeviceToDeviceAndShapesStayOnTheHost) {
  if (!backends::backend_for(Device::cuda(0), true)) GTEST_SKIP() << "the CUDA backend is not built";
  compile::LowerOptions o;
  o.contexts = runtime::ContextMap::parse("dev0->cuda0;dev1->cuda1");
  o.plan_only = true;
  const compile::LoweringTarget target = compile::resolve_target(o);
  Var a = pinned_shared(Array::from_vector<float>({1, 2}), "a", "dev0");
  Var b = pinned_shared(Array::from_vector<float>({3, 4}), "b", "dev1");
  Var y = tensor::exp(a) + tensor::tanh(b);  // add follows exp (dev0) and reads tanh's value from dev1
  auto fg = graph_of({}, {y});
  compile::Placement p = compile::place(*fg, target);
  EXPECT_EQ(placed(p, *fg, "Elemwise{exp}").device, Device::cuda(0));
  EXPECT_EQ(placed(p, *fg, "Elemwise{tanh}").device, Device::cuda(1));
  EXPECT_EQ(placed(p, *fg, "Elemwise{add}").runs_in.name, "dev0");
  const compile::Homes homes = compile::place_leaves(*fg, p, {});
  for (auto& [v, home] : homes)
    if (v->name == "b") {
      EXPECT_EQ(home, Device::cuda(1)) << "read on dev1";
    }
  EXPECT_EQ(compile::insert_transfers(*fg, p, homes), 1);
  for (auto& n : fg->nodes())
    if (n->op().kind() == graph::OpKind::Transfer) {
      EXPECT_EQ(p.at(n.get()).device, Device::cuda(0));
      EXPECT_NE(p.at(n.get()).reason.find("lives on dev1 (cuda1)"), std::string::npos) << p.at(n.get()).reason;
    }
}

TEST(ContextPlacement, ThreadBudgetsDivideTheCoresAmongCpuContextsUnlessSet) {
  compile::Program prog;
  for (const char* name : {"cpu", "dev0", "dev1"}) {
    compile::Thunk t;
    t.exec.context = {name, Device::cpu()};
    prog.thunks.push_back(t);
  }
  prog.thunks[0].exec.context = {"dev0", Device::cpu()};  // no thunk in "cpu"
  compile::list_contexts(prog, {"cpu", Device::cpu()});
  ASSERT_EQ(prog.contexts.size(), 3u);
  EXPECT_EQ(prog.contexts[0].name, "cpu") << "the default first";
  EXPECT_EQ(prog.cpu_contexts, 2) << "contexts with thunks";
  compile::set_thread_budgets(prog, {}, 5);
  for (auto& t : prog.thunks) EXPECT_EQ(t.exec.threads, 2) << t.exec.context.name << ": 5 cores / 2 contexts";
  compile::set_thread_budgets(prog, {{"dev1", 3}}, 1);
  EXPECT_EQ(prog.thunks[0].exec.threads, 1) << "at least one";
  EXPECT_EQ(prog.thunks[2].exec.threads, 3) << "set for dev1";
}

// The program of `f` for its generic inputs (what explain() shows).
std::shared_ptr<compile::Program> program_of(const Function& f, const std::vector<Array>& inputs) {
  return f.impl()->program_for(inputs).program;
}

TEST(ContextExplain, ShowsEachNodesContextAndEachTransfer) {
  ContextsFlag flag("dev0->cpu;dev1->cpu");
  SharedVar a = pinned_shared(Array::from_vector<float>({1, 2, 3}), "a", "dev0");
  SharedVar b = pinned_shared(Array::from_vector<float>({4, 5, 6}), "b", "dev1");
  Var y = tensor::exp(a) * transfer(tensor::tanh(b), "dev0");
  Function f = function({}, {y}, {.mode = "fast_compile", .name = "f"});
  const std::string e = f.explain();
  EXPECT_NE(e.find("function 'f': 3 nodes: 2 on dev0 (cpu), 1 on dev1 (cpu)"), std::string::npos) << e;
  const std::string budget = std::to_string(std::max(1, backends::cpu::process_threads() / 2));
  EXPECT_NE(e.find("contexts: cpu -> cpu (default), 0 thunk(s); dev0 -> cpu, 3 thunk(s), " + budget +
                   " thread(s); dev1 -> cpu, 1 thunk(s), " + budget + " thread(s); each cpu context on its own thread"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("[dev1 (cpu), kernel"), std::string::npos) << e;
  EXPECT_NE(e.find("handover on cpu (no copy); an explicit transfer"), std::string::npos) << e;
  EXPECT_NE(e.find(" (dev1)\n"), std::string::npos) << "the transfer runs after tanh, in dev1: " << e;
  EXPECT_NE(f.debugprint().find("Transfer{to=dev0}"), std::string::npos) << f.debugprint();
  // One context: the header as before contexts.
  Function g = function({}, {tensor::exp(shared(Array::from_vector<float>({1}), "c"))}, {.name = "g"});
  EXPECT_NE(g.explain().find("function 'g': 1 nodes on cpu"), std::string::npos) << g.explain();
  EXPECT_EQ(g.explain().find("contexts:"), std::string::npos) << g.explain();
}

TEST(ContextExecution, TwoCpuContextsGiveTheOneContextResults) {
  const Array av = Array::randn({40, 30}, 1, DType::Float64), bv = Array::randn({30, 20}, 2, DType::Float64);
  const Array cv = Array::randn({40, 20}, 3, DType::Float64);
  auto build = [&](bool pin) {
    SharedVar a = shared(av, "a"), b = shared(bv, "b"), c = shared(cv, "c");
    if (pin) a.node()->type.context = "dev0", b.node()->type.context = "dev0", c.node()->type.context = "dev1";
    Var x = tensor::matrix("x", DType::Float64);
    Var left = tensor::tanh(tensor::dot(a, b));         // dev0
    Var right = tensor::exp(c * 0.5) + x;                // dev1
    Var both = tensor::sum(left * right) + tensor::sum(left);  // dev0, reading dev1's value
    return function({x}, {left, right, both}, {.name = pin ? "two" : "one"});
  };
  const Array xv = Array::randn({40, 20}, 4, DType::Float64);
  const std::vector<Array> one = build(false)({xv});
  ContextsFlag flag("dev0->cpu;dev1->cpu");
  Function two = build(true);
  ASSERT_EQ(program_of(two, {xv})->cpu_contexts, 2) << two.explain();
  for (int call = 0; call < 3; ++call) {  // warm calls reuse the state, its pools and the workers
    const std::vector<Array> got = two({xv});
    ASSERT_EQ(got.size(), one.size());
    for (size_t k = 0; k < got.size(); ++k) EXPECT_TRUE(allclose(got[k], one[k], 1e-12, 1e-12)) << "output " << k;
  }
}

// Calls `before` around each thunk with its context's name.
class ContextHook final : public detail::NodeHook {
 public:
  explicit ContextHook(std::function<void(const std::string&, const graph::Apply&)> before) : before_(std::move(before)) {}
  std::shared_ptr<compile::Program> program;
  void before(size_t thunk, const graph::Apply& node, const std::vector<Array>&) override {
    before_(program->thunks[thunk].exec.context.name, node);
  }
  void after(size_t, const graph::Apply&, const std::vector<Array>&, const std::vector<Array>&) override {}

 private:
  std::function<void(const std::string&, const graph::Apply&)> before_;
};

// Two independent subgraphs, one pinned to each of dev0 and dev1 (both cpu).
Function two_subgraphs(SharedVar& s0, SharedVar& s1, bool updates = false) {
  s0 = pinned_shared(Array::from_vector<double>({1, 2, 3}), "s0", "dev0");
  s1 = pinned_shared(Array::from_vector<double>({4, 5, 6}), "s1", "dev1");
  Var y0 = tensor::exp(s0) * 2.0, y1 = tensor::tanh(s1) + 1.0;
  FunctionOptions o;
  o.name = "pair";
  o.mode = "fast_compile";
  if (updates) o.updates = {{s0, s0 + 1.0}, {s1, s1 * 2.0}};
  return function({}, {y0, y1}, o);
}

TEST(ContextExecution, TwoCpuContextsRunAtOnce) {
  ContextsFlag flag("dev0->cpu;dev1->cpu");
  SharedVar s0, s1;
  Function f = two_subgraphs(s0, s1);
  // Rendezvous: the first thunk of each context waits (up to 5 s, never hanging) for the other
  // context's first thunk to have started. Run one after the other, neither would see it.
  std::mutex m;
  std::condition_variable cv;
  std::set<std::string> started;
  std::atomic<int> met{0}, missed{0};
  auto hook = std::make_shared<ContextHook>([&](const std::string& context, const graph::Apply&) {
    std::unique_lock<std::mutex> lock(m);
    if (!started.insert(context).second) return;
    cv.notify_all();
    const std::string other = context == "dev0" ? "dev1" : "dev0";
    if (cv.wait_for(lock, std::chrono::seconds(5), [&] { return started.count(other) > 0; })) ++met;
    else ++missed;
  });
  hook->program = program_of(f, {});
  f.impl()->set_node_hook(hook);
  const auto got = f({});
  EXPECT_EQ(met.load(), 2) << "each context's first node saw the other's start";
  EXPECT_EQ(missed.load(), 0);
  EXPECT_EQ(started, (std::set<std::string>{"dev0", "dev1"}));
  const std::vector<double> y1 = got[1].to_vector<double>();
  ASSERT_EQ(y1.size(), 3u);
  EXPECT_NEAR(y1[2], std::tanh(6.0) + 1.0, 1e-12);
}

TEST(ContextExecution, AFailureInOneContextCommitsNoUpdate) {
  ContextsFlag flag("dev0->cpu;dev1->cpu");
  SharedVar s0, s1;
  Function f = two_subgraphs(s0, s1, true);
  bool fail = false;
  auto hook = std::make_shared<ContextHook>([&](const std::string& context, const graph::Apply&) {
    if (fail && context == "dev1") throw ValueError("dev1 refuses");
  });
  hook->program = program_of(f, {});
  f.impl()->set_node_hook(hook);
  f({});  // a good call commits both
  EXPECT_EQ(s0.get_value().to_vector<double>(), (std::vector<double>{2, 3, 4}));
  EXPECT_EQ(s1.get_value().to_vector<double>(), (std::vector<double>{8, 10, 12}));
  fail = true;
  for (int call = 0; call < 3; ++call) {
    try {
      f({});
      FAIL() << "no error";
    } catch (const ValueError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("dev1 refuses"), std::string::npos) << what;
      EXPECT_NE(what.find("on dev1 (cpu)"), std::string::npos) << "the error names the context: " << what;
    }
    EXPECT_EQ(s0.get_value().to_vector<double>(), (std::vector<double>{2, 3, 4})) << "dev0's update not committed";
    EXPECT_EQ(s1.get_value().to_vector<double>(), (std::vector<double>{8, 10, 12}));
  }
  fail = false;
  f({});  // and the function still works
  EXPECT_EQ(s0.get_value().to_vector<double>(), (std::vector<double>{3, 4, 5}));
}

TEST(ContextExecution, EachCpuContextRunsUnderItsThreadBudget) {
  ContextsFlag flag("dev0->cpu;dev1->cpu");
  SharedVar s0, s1;
  Function f = two_subgraphs(s0, s1);
  const int budget = std::max(1, backends::cpu::process_threads() / 2);
  std::mutex m;
  std::map<std::string, std::vector<int>> seen;  // context -> omp threads, loop budget, OpenBLAS threads
  auto hook = std::make_shared<ContextHook>([&](const std::string& context, const graph::Apply&) {
    int omp = 1;
#ifdef _OPENMP
    omp = omp_get_max_threads();
#endif
    std::lock_guard<std::mutex> lock(m);
    seen[context] = {omp, backends::cpu::loop_budget().threads,
                     backends::cpu::OpenBlasSingleThread::openblas_threads()};
  });
  hook->program = program_of(f, {});
  for (auto& t : hook->program->thunks) EXPECT_EQ(t.exec.threads, budget) << t.node->describe();
  f.impl()->set_node_hook(hook);
  f({});
  ASSERT_EQ(seen.size(), 2u);
  for (auto& [context, v] : seen) {
#ifdef _OPENMP
    EXPECT_EQ(v[0], budget) << context << ": omp_get_max_threads() in a kernel";
#endif
    EXPECT_EQ(v[1], budget) << context << ": the loops' budget";
    if (v[2] != -1) {
      EXPECT_EQ(v[2], 1) << context << ": OpenBLAS pinned to one thread meanwhile";
    }
  }
}

TEST(ContextExecution, AHandoverBetweenContextsOfOneDeviceCopiesNothing) {
  ContextsFlag flag("dev0->cpu;dev1->cpu");
  SharedVar s0 = pinned_shared(Array::from_vector<double>({1, 2, 3}), "s0", "dev0");
  Var y = transfer(tensor::exp(s0), "dev1") * 3.0;
  Function f = function({}, {y}, {.mode = "fast_compile"});
  auto program = program_of(f, {});
  int handovers = 0;
  for (auto& t : program->thunks)
    if (t.is_transfer) {
      ++handovers;
      EXPECT_EQ(t.pass_through, std::vector<int>{0}) << "the reader gets the same array";
      EXPECT_EQ(t.exec.context.name, "dev1");
      ASSERT_EQ(t.after.size(), 1u);
      EXPECT_TRUE(program->thunks[t.after[0]].signals);
    }
  EXPECT_EQ(handovers, 1) << f.explain();
  const std::vector<double> got = f({})[0].to_vector<double>();
  ASSERT_EQ(got.size(), 3u);
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(got[i], std::exp(i + 1.0) * 3, 1e-12);
}

TEST(ContextExecution, GpuContextsWithoutACudaDeviceFollowOnFallback) {
  if (cuda_status().ok) GTEST_SKIP() << "a CUDA device is present (tests/cpp/contexts/gpu_contexts_test.cpp)";
  ContextsFlag flag("dev0->cuda0;dev1->cuda0");
  std::string saved = config().on_fallback;
  struct Restore {
    std::string& saved;
    ~Restore() { config().on_fallback = saved; }
  } restore{saved};
  SharedVar s0, s1;
  config().on_fallback = "raise";
  try {
    two_subgraphs(s0, s1);
    FAIL() << "no error";
  } catch (const DeviceError& e) {
    EXPECT_NE(std::string(e.what()).find("asked for context dev0 (cuda0) but no CUDA device available"), std::string::npos)
        << e.what();
  }
  config().on_fallback = "warn";
  Function f;
  const std::string warned = testing_util::stderr_of([&] { f = two_subgraphs(s0, s1); });
  EXPECT_NE(warned.find("asked for context dev0 (cuda0) but no CUDA device available"), std::string::npos) << warned;
  EXPECT_NE(warned.find("every node runs on the CPU"), std::string::npos) << warned;
  // Each named context keeps its name, on the CPU: two cpu contexts.
  EXPECT_EQ(program_of(f, {})->cpu_contexts, 2) << f.explain();
  EXPECT_NE(f.explain().find("[dev1 (cpu), kernel"), std::string::npos) << f.explain();
  const auto got = f({});
  EXPECT_NEAR(got[0].to_vector<double>()[0], std::exp(1.0) * 2, 1e-12);
}

TEST(ContextGradient, ThroughTransfersBetweenContexts) {
  ContextsFlag flag("dev0->cpu;dev1->cpu");
  // x pinned to dev0, moved to dev1 and back: the gradient goes back the same way.
  verify_grad(
      [](const std::vector<Var>& v) {
        v[0].node()->type.context = "dev0";
        Var there = tensor::tanh(transfer(v[0], "dev1"));
        return tensor::sum(transfer(there, "dev0") * v[0]);
      },
      {Array::randn({3, 4}, 5, DType::Float64)});
  // An unpinned input: its gradient is computed where the transfer's output is read.
  verify_grad([](const std::vector<Var>& v) { return tensor::exp(transfer(v[0], "dev1")) * 2.0; },
              {Array::randn({5}, 6, DType::Float64)});
}

}  // namespace
}  // namespace theon
