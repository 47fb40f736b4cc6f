// Each lowering step on its own (src/compile): placement, leaf homes, transfer insertion and
// removal (text in, graph out), thunks, kernel preparation and the memory plan. GPU
// placements are planned without a device (the CUDA backend answers supports() on any
// machine with the library; the tests skip where it is not built).
#include "backends/registry.hpp"
#include "compile/memory_plan.hpp"
#include "compile/placement.hpp"
#include "compile/thunks.hpp"
#include "compile/transfers.hpp"
#include "graph/print.hpp"
#include "ops/transfer.hpp"

#include <theon/theon.hpp>

#include "rewrite/text_count.hpp"

#include <gtest/gtest.h>

namespace theon {
namespace {

using theon::testing::count;

std::shared_ptr<graph::FunctionGraph> graph_of(const std::vector<Var>& inputs, const std::vector<Var>& outputs) {
  std::vector<graph::VarPtr> in, out;
  for (auto& v : inputs) in.push_back(v.node());
  for (auto& v : outputs) out.push_back(v.node());
  return std::make_shared<graph::FunctionGraph>(in, out);
}

compile::LoweringTarget cpu_target() {
  compile::LowerOptions o;
  return compile::resolve_target(o);
}

// cuda0 planned without a device, or nullopt where the CUDA library is not built.
std::optional<compile::LoweringTarget> gpu_target() {
  if (!backends::backend_for(Device::cuda(0), true)) return std::nullopt;
  compile::LowerOptions o;
  o.device = "cuda0";
  o.plan_only = true;
  return compile::resolve_target(o);
}

const compile::NodePlacement& placement_of(const compile::Placement& p, const graph::FunctionGraph& fg,
                                           graph::OpKind kind) {
  for (auto& n : fg.nodes())
    if (n->op().kind() == kind) return p.at(n.get());
  throw std::runtime_error("no node of that kind");
}

TEST(ResolveTarget, FallbackRunsOnTheCpuWithTheReason) {
  compile::LowerOptions o;
  o.device = "cuda0";
  o.fallback_reason = "no CUDA-capable device is detected";
  const auto t = compile::resolve_target(o);
  EXPECT_TRUE(t.device.is_cpu());
  EXPECT_EQ(t.gpu, nullptr);
  EXPECT_EQ(t.fallback_reason, o.fallback_reason);
  EXPECT_TRUE(t.passes().device.is_cpu());
}

TEST(Place, CpuTargetPlacesEveryNodeOnTheCpuWithAReason) {
  Var x = tensor::matrix("x");
  auto fg = graph_of({x}, {tensor::sum(tensor::exp(x) * 2.0)});
  const auto p = compile::place(*fg, cpu_target());
  ASSERT_EQ(p.size(), fg->nodes().size());
  for (auto& n : fg->nodes()) {
    EXPECT_TRUE(p.at(n.get()).device.is_cpu());
    EXPECT_EQ(p.at(n.get()).reason, "device=cpu");
    EXPECT_EQ(p.at(n.get()).backend, &backends::cpu_backend());
  }
}

TEST(Place, FallbackReasonIsEveryNodesReason) {
  Var x = tensor::vector("x");
  auto fg = graph_of({x}, {tensor::exp(x)});
  compile::LowerOptions o;
  o.device = "cuda0";
  o.fallback_reason = "no driver";
  const auto p = compile::place(*fg, compile::resolve_target(o));
  EXPECT_EQ(p.at(fg->nodes()[0].get()).reason, "fallback: no driver");
  EXPECT_FALSE(p.at(fg->nodes()[0].get()).fallback) << "the function already reported it";
}

TEST(Place, GpuTargetKeepsShapeArithmeticOnTheHost) {
  auto gpu = gpu_target();
  if (!gpu) GTEST_SKIP() << "the CUDA backend is not built";
  Var x = tensor::matrix("x");
  auto fg = graph_of({x}, {tensor::reshape(tensor::exp(x), tensor::shape(x))});
  const auto p = compile::place(*fg, *gpu);
  EXPECT_TRUE(placement_of(p, *fg, graph::OpKind::Shape).device.is_cpu());
  EXPECT_EQ(placement_of(p, *fg, graph::OpKind::Shape).reason, "shape arithmetic stays on the host");
  EXPECT_EQ(placement_of(p, *fg, graph::OpKind::Elemwise).device, Device::cuda(0));
  EXPECT_EQ(placement_of(p, *fg, graph::OpKind::Elemwise).backend, gpu->gpu);
}

// A backend that supports nothing, registered for CUDA devices: placement asks the registry's
// backend, and every node falls back with that backend's reason.
class RefusingBackend final : public backends::Backend {
 public:
  std::string name() const override { return "refusing"; }
  backends::Support available() const override { return {true, ""}; }
  backends::Support supports(const graph::Apply& node) const override {
    return {false, "the refusing backend has no kernel for " + node.op().name()};
  }
  const backends::Kernel& kernel(const graph::Apply&) const override { throw InternalError("no kernels"); }
};

TEST(Place, AsksTheRegisteredBackendOfTheDevice) {
  static RefusingBackend refusing;
  auto previous = backends::register_backend(Device::Kind::CUDA, [](bool) { return &refusing; });
  Var x = tensor::vector("x");
  auto fg = graph_of({x}, {tensor::exp(x)});
  compile::LowerOptions o;
  o.device = "cuda0";
  const auto target = compile::resolve_target(o);
  const auto p = compile::place(*fg, target);
  backends::register_backend(Device::Kind::CUDA, previous);
  EXPECT_EQ(target.gpu, &refusing);
  const compile::NodePlacement& exp = p.at(fg->nodes()[0].get());
  EXPECT_TRUE(exp.device.is_cpu());
  EXPECT_TRUE(exp.fallback);
  EXPECT_EQ(exp.reason, "fallback: the refusing backend has no kernel for Elemwise");
  EXPECT_EQ(exp.backend, backends::backend_for(Device::cpu()));
}

TEST(PlaceLeaves, InputsWhereTheCallersArraysAreConstantsWithTheirFirstReader) {
  auto gpu = gpu_target();
  if (!gpu) GTEST_SKIP() << "the CUDA backend is not built";
  Var x = tensor::vector("x"), y = tensor::vector("y");
  Var s = shared(Array::from_vector<float>({1, 2, 3}), "s");
  Var unread = shared(Array::from_vector<float>({4}), "unread");
  auto fg = graph_of({x, y}, {x * s + y, unread});
  const auto p = compile::place(*fg, *gpu);
  const auto homes = compile::place_leaves(*fg, p, {Device::cuda(0)});
  EXPECT_EQ(homes.at(fg->inputs()[0].get()), Device::cuda(0)) << "x came as a device array";
  EXPECT_TRUE(homes.at(fg->inputs()[1].get()).is_cpu()) << "y: no device given, the host";
  for (auto& [v, d] : homes) {
    if (v->kind != graph::VarKind::Shared) continue;
    if (v->name == "s") {
      EXPECT_EQ(d, Device::cuda(0)) << "read by a GPU node";
    } else {
      EXPECT_TRUE(d.is_cpu()) << v->name << " is read by no kernel: it stays where its value is";
    }
  }
  EXPECT_TRUE(s.node()->storage->get().on_host()) << "placing a leaf moves nothing";
}

TEST(InsertTransfers, OnePerValueAndDeviceInTheGraph) {
  auto gpu = gpu_target();
  if (!gpu) GTEST_SKIP() << "the CUDA backend is not built";
  Var x = tensor::matrix("x"), w = tensor::matrix("w");
  auto fg = graph_of({x, w}, {tensor::exp(tensor::dot(x, w)) + x});
  auto p = compile::place(*fg, *gpu);
  const auto homes = compile::place_leaves(*fg, p, {});
  const std::string before = graph::debugprint(fg->outputs());
  EXPECT_EQ(count(before, "Transfer"), 0u);
  EXPECT_EQ(compile::insert_transfers(*fg, p, homes), 2) << "x read twice, copied once";
  const std::string after = graph::debugprint(fg->outputs());
  EXPECT_EQ(count(after, "|Transfer{to=cuda0} [id D]"), 2u) << "x's copy, read by dot and add\n" << after;
  EXPECT_EQ(count(after, "|Transfer{to=cuda0} [id F]"), 1u) << after;
  for (auto& n : fg->nodes()) {
    ASSERT_TRUE(p.count(n.get())) << n->describe() << " has no placement";
    if (n->op().kind() == graph::OpKind::Transfer) {
      EXPECT_EQ(p.at(n.get()).device, Device::cuda(0));
      EXPECT_NE(p.at(n.get()).reason.find("lives on cpu"), std::string::npos) << p.at(n.get()).reason;
    }
  }
  EXPECT_NO_THROW(fg->verify());
  EXPECT_EQ(compile::insert_transfers(*fg, p, homes), 0) << "a fixed point";
}

TEST(InsertTransfers, NoneOnTheCpuOrForAShapeOfADeviceValue) {
  Var x = tensor::matrix("x");
  auto fg = graph_of({x}, {tensor::exp(x), tensor::shape(x)});
  auto p = compile::place(*fg, cpu_target());
  EXPECT_EQ(compile::insert_transfers(*fg, p, compile::place_leaves(*fg, p, {})), 0);
  auto fg2 = graph_of({x}, {tensor::shape(x)});
  auto p2 = compile::place(*fg2, cpu_target());
  EXPECT_EQ(compile::insert_transfers(*fg2, p2, compile::place_leaves(*fg2, p2, {Device::cuda(0)})), 0)
      << "shapes are host metadata";
}

TEST(RemoveRedundantTransfers, RoundTripsAndNoOpCopiesAreBypassed) {
  Var x = tensor::vector("x");
  graph::VarPtr there = ops::transfer(x.node(), Device::cuda(0));
  graph::VarPtr back = ops::transfer(there, Device::cpu());
  graph::VarPtr noop = ops::transfer(x.node(), Device::cpu());
  Var y = tensor::exp(Var(back)) + Var(noop);
  auto fg = graph_of({x}, {y});
  auto p = compile::place(*fg, cpu_target());
  const auto homes = compile::place_leaves(*fg, p, {});
  EXPECT_EQ(count(graph::debugprint(fg->outputs()), "Transfer"), 3u);
  EXPECT_EQ(compile::remove_redundant_transfers(*fg, p, homes), 2);
  const std::string after = graph::debugprint(fg->outputs());
  EXPECT_EQ(count(after, "Transfer"), 0u) << after;
  EXPECT_EQ(fg->nodes().size(), 2u) << after;
  EXPECT_EQ(compile::remove_redundant_transfers(*fg, p, homes), 0) << "a fixed point";
}

TEST(BuildThunks, SlotsLiveWherePlacementSaysAndTransfersAreThunks) {
  auto gpu = gpu_target();
  if (!gpu) GTEST_SKIP() << "the CUDA backend is not built";
  Var x = tensor::vector("x");
  auto fg = graph_of({x}, {tensor::exp(x)});
  compile::Program prog;
  prog.fgraph = fg;
  auto p = compile::place(*fg, *gpu);
  const auto homes = compile::place_leaves(*fg, p, {});
  compile::insert_transfers(*fg, p, homes);
  compile::build_thunks(prog, p, homes);
  ASSERT_EQ(prog.thunks.size(), 2u);
  EXPECT_TRUE(prog.thunks[0].is_transfer);
  EXPECT_EQ(prog.thunks[0].dev, Device::cuda(0));
  EXPECT_FALSE(prog.thunks[1].is_transfer);
  EXPECT_TRUE(prog.slot_device[prog.input_slots[0]].is_cpu());
  EXPECT_EQ(prog.slot_device[prog.output_slots[0]], Device::cuda(0));
  EXPECT_TRUE(prog.device_work);
}

TEST(PrepareKernels, EveryThunkGetsAPlanWithTheFrozenOptions) {
  Var x = tensor::matrix("x");
  auto fg = graph_of({x}, {tensor::sum(tensor::exp(x) * 2.0, std::vector<int>{1})});
  compile::Program prog;
  prog.fgraph = fg;
  prog.options.deterministic = true;
  prog.options.cxx = "";
  auto p = compile::place(*fg, cpu_target());
  const auto homes = compile::place_leaves(*fg, p, {});
  compile::build_thunks(prog, p, homes);
  const bool was = config().deterministic;
  config().deterministic = false;  // a later change does not reach a built program
  compile::prepare_kernels(prog, {{3, 4}}, false);
  config().deterministic = was;
  for (auto& t : prog.thunks) {
    ASSERT_NE(t.plan, nullptr) << t.node->describe();
    EXPECT_TRUE(t.plan->options().deterministic);
    EXPECT_TRUE(backends::options_of(t.plan.get()) == prog.options);
  }
}

TEST(MemoryPlan, IntermediatesDieAfterTheirLastReaderAndOnlyThoseMayBeOverwritten) {
  Var x = tensor::vector("x");
  Var t = tensor::exp(x);
  auto fg = graph_of({x}, {tensor::tanh(t) + t});
  compile::Program prog;
  prog.fgraph = fg;
  auto p = compile::place(*fg, cpu_target());
  compile::build_thunks(prog, p, compile::place_leaves(*fg, p, {}));
  compile::plan_memory(prog);
  ASSERT_EQ(prog.thunks.size(), 3u);  // exp, tanh, add
  EXPECT_TRUE(prog.thunks[0].release.empty()) << "x is an input: never released";
  EXPECT_TRUE(prog.thunks[1].release.empty()) << "t is read again by add";
  EXPECT_EQ(prog.thunks[2].release.size(), 2u) << "t and tanh(t) die at add";
  compile::plan_inplace(prog);
  for (auto& th : prog.thunks)
    for (int d : th.destroy) EXPECT_EQ(d, -1) << "no inplace op before the inplace pass";
}

}  // namespace
}  // namespace theon
