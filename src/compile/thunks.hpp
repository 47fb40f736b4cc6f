// Lowering steps that turn the placed graph into the Program's thunks:
//   build_thunks: a slot per value (on the device it lives on) and a thunk per node, in
//     order, with the kernel of the backend placement chose and its context;
//   list_contexts: Program::contexts with the default context first, each thunk's index into
//     it, the thunks per context and how many CPU contexts run thunks;
//   set_thread_budgets: each CPU thunk's ExecContext::threads (LowerOptions::context_threads);
//   bind_streams: each thunk's ExecContext gets its context's compute stream, or its copy
//     stream for a copy between devices into a GPU context (Thunk::on_copy_stream: the
//     Transfer kernel issues on the stream it is given, ordered by the dependency plan's
//     events, so copies overlap the context's kernels);
//   copy_constants_to_devices: constants read on a GPU are copied there once, now;
//   prepare_kernels: Kernel::prepare for every thunk, concurrently (NVRTC and the CPU's
//     generated modules compile while the function is compiled, not at its first call),
//     after each backend's prepare_batch; plans are kept per thunk.
#pragma once
#include "compile/placement.hpp"

namespace theon::compile {

void build_thunks(Program& program, const Placement& placement, const Homes& homes);

/// Where a node's work comes from, in the user's terms (its outputs' names, the scalar ops a
/// fused node stands for): what the observer and errors show.
runtime::Provenance provenance_of(const graph::Apply& node);
/// The op as the observer shows it: its display, or a bounded form for fused nodes.
std::string observer_label(const graph::Apply& node, const runtime::Provenance& provenance);

/// Program::contexts, default first (build_thunks lists them as it meets them).
void list_contexts(Program& program, const runtime::Context& default_context);

/// Each CPU thunk's thread budget: its context's entry of `context_threads` when positive;
/// else, with several CPU contexts, `cores` divided among them (at least 1); with one, 0 (the
/// process's count, as before contexts).
void set_thread_budgets(Program& program, const std::map<std::string, int>& context_threads, int cores);

/// Each thunk's ExecContext gets its context's compute stream (its copy stream for a copy
/// between devices: Thunk::on_copy_stream) (not in plan-only lowering:
/// there is no device to make streams on).
void bind_streams(Program& program);

void copy_constants_to_devices(Program& program);

/// `input_shapes`: the shapes of the inputs the program is compiled for (placeholders when
/// empty). In plan-only lowering device kernels are not prepared (no device to load on).
void prepare_kernels(Program& program, const std::vector<Shape>& input_shapes, bool plan_only);

}  // namespace theon::compile
