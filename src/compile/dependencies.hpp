// plan_dependencies: the cross-context ordering of a Program (program.hpp, "Contexts").
// For each thunk, the thunks of OTHER contexts (or of its context's other stream) whose
// outputs it reads directly go into its `after` list (once each), and each of those is marked
// `signals`. The executor turns an
// edge into: a CPU producer — the reader runs after it has finished; a GPU producer and a
// GPU reader — an event recorded after the producer on its stream, waited on by the reader's
// stream; a GPU producer and a CPU reader — the host waits on that event (counted: each is a
// host synchronisation). Readers of metadata only (Shape) need the value's slot filled, not
// its data: the executor does not wait on the device for them.
// Within one context, program order on its stream (or worker) is the order: no edges, except
// between a GPU context's copy stream (copies between devices, Thunk::on_copy_stream) and its
// compute stream, which are ordered by events like two contexts.
#pragma once
#include "compile/program.hpp"

namespace theon::compile {

void plan_dependencies(Program& program);

}  // namespace theon::compile
