#include "ops/composite.hpp"

#include "ops/elemwise.hpp"
#include "ops/scalar/scalar_ops.hpp"
#include "util/dispatch.hpp"
#include "util/strided.hpp"

#include <theon/error.hpp>

#include <algorithm>
#include <cstring>
#include <utility>

namespace theon::ops {

using graph::Apply;

namespace {

std::string dtype_list(const std::vector<DType>& ts) {
  std::string s;
  for (size_t i = 0; i < ts.size(); ++i) s += (i ? "," : "") + std::string(dtype_name(ts[i]));
  return s;
}

// ---- the block interpreter ---------------------------------------------------------------
constexpr int64_t kBlock = 1024;

template <class O, class... A, class F, size_t... I>
void block_apply(F f, void* out, void* const* args, int64_t n, std::index_sequence<I...>) {
  O* o = static_cast<O*>(out);
  std::tuple<const A*...> p{static_cast<const A*>(args[I])...};
  for (int64_t i = 0; i < n; ++i) o[i] = f(std::get<I>(p)[i]...);
}

template <class T, size_t> using Same = T;

template <class O, class T, int N, class F>
void block_uniform(F f, void* out, void* const* args, int64_t n) {
  [&]<size_t... I>(std::index_sequence<I...> seq) { block_apply<O, Same<T, I>...>(f, out, args, n, seq); }(
      std::make_index_sequence<N>{});
}

[[noreturn]] void bad(std::string_view op, DType t) {
  throw InternalError("Composite: scalar op " + std::string(op) + " has no " + std::string(dtype_name(t)) + " variant");
}

template <class F> constexpr bool keeps_bool() {
  return std::is_same_v<F, scalar::Identity> || std::is_same_v<F, scalar::Add> || std::is_same_v<F, scalar::Mul> ||
         std::is_same_v<F, scalar::Maximum> || std::is_same_v<F, scalar::Minimum> || std::is_same_v<F, scalar::Clip>;
}

struct BlockArgs {
  DType out;
  DType arg;  // dtype of the first value argument (Compare, Cast) / condition excluded
  void* o;
  void* const* a;
  int64_t n;
};

template <class F, int N> void exec_Arith(std::string_view name, const BlockArgs& b) {
  detail::visit_dtype(b.out, [&]<class T>() {
    if constexpr (!std::is_same_v<T, bool> || keeps_bool<F>()) block_uniform<T, T, N>(F{}, b.o, b.a, b.n);
    else bad(name, b.out);
  });
}
template <class F, int N> void exec_FloatFn(std::string_view name, const BlockArgs& b) {
  detail::visit_dtype(b.out, [&]<class T>() {
    if constexpr (std::is_floating_point_v<T>) block_uniform<T, T, N>(F{}, b.o, b.a, b.n);
    else bad(name, b.out);
  });
}
template <class F, int N> void exec_Compare(std::string_view, const BlockArgs& b) {
  detail::visit_dtype(b.arg, [&]<class T>() { block_uniform<bool, T, N>(F{}, b.o, b.a, b.n); });
}
template <class F, int N> void exec_Logic(std::string_view name, const BlockArgs& b) {
  detail::visit_dtype(b.out, [&]<class T>() {
    if constexpr (!std::is_floating_point_v<T>) block_uniform<T, T, N>(F{}, b.o, b.a, b.n);
    else bad(name, b.out);
  });
}
template <class F, int N> void exec_Select(std::string_view, const BlockArgs& b) {
  detail::visit_dtype(b.out, [&]<class T>() {
    block_apply<T, bool, T, T>(F{}, b.o, b.a, b.n, std::make_index_sequence<3>{});
  });
}
template <class F, int N> void exec_Cast(std::string_view, const BlockArgs& b) {
  detail::visit_dtype(b.arg, [&]<class From>() {
    detail::visit_dtype(b.out, [&]<class To>() {
      block_apply<To, From>([](From x) { return scalar::Cast().convert<To>(x); }, b.o, b.a, b.n,
                            std::make_index_sequence<1>{});
    });
  });
}

void exec_instr(ScalarOpId id, const BlockArgs& b) {
  switch (id) {
#define THEON_SCALAR_OP(functor, name, arity, kind) \
  case ScalarOpId::functor:                         \
    exec_##kind<scalar::functor, arity>(name, b);   \
    return;
#include <theon/scalar_ops.def>
#undef THEON_SCALAR_OP
    case ScalarOpId::Count: break;
  }
  throw InternalError("Composite: bad scalar op id");
}

// Runs the instructions in `needed` over shape `shape` for the outputs `outs` (indices into
// op.outputs()), reading the inputs marked in `in_needed`.
void run_region(const Composite& op, const Shape& shape, const std::vector<bool>& needed,
                const std::vector<bool>& in_needed, const std::vector<Array>& inputs, std::vector<Array>& outputs,
                const std::vector<int>& outs) {
  const int ni = op.num_inputs();
  const auto& prog = op.program();
  if (shape_size(shape) == 0) return;
  std::vector<int> ops_in;  // operand order: outputs, then the needed inputs
  std::vector<Strides> st;
  for (int o : outs) st.push_back(outputs[o].strides());
  for (int k = 0; k < ni; ++k)
    if (in_needed[k]) {
      ops_in.push_back(k);
      st.push_back(detail::broadcast_strides(inputs[k], shape));
    }
  Shape cs = shape;
  detail::collapse_dims(cs, st);
  std::vector<const Strides*> sp;
  for (auto& s : st) sp.push_back(&s);
  detail::OuterLoop loop(cs, sp, std::vector<int64_t>(st.size(), 0));
  const int64_t n = cs.back();
  const int nvalues = ni + static_cast<int>(prog.size());
  std::vector<uint64_t> scratch(static_cast<size_t>(nvalues) * kBlock);  // 8-byte aligned, 8 bytes per element
  auto slot = [&](int v) { return static_cast<void*>(scratch.data() + static_cast<size_t>(v) * kBlock); };
  std::vector<void*> args;
  const size_t nouts = outs.size();
  for (int64_t r = 0; r < loop.count(); ++r, loop.next()) {
    for (int64_t start = 0; start < n; start += kBlock) {
      const int64_t len = std::min(kBlock, n - start);
      for (size_t j = 0; j < ops_in.size(); ++j) {  // gather
        const Array& a = inputs[ops_in[j]];
        const int64_t s = st[nouts + j].back();
        const int64_t off = loop.offsets()[nouts + j] + start * s;
        detail::visit_dtype(a.dtype(), [&]<class T>() {
          const T* src = a.data<T>() + off;
          T* dst = static_cast<T*>(slot(ops_in[j]));
          if (s == 1) std::memcpy(dst, src, sizeof(T) * len);
          else for (int64_t i = 0; i < len; ++i) dst[i] = src[i * s];
        });
      }
      for (size_t k = 0; k < prog.size(); ++k) {
        if (!needed[k]) continue;
        const CompositeInstr& in = prog[k];
        args.clear();
        for (int v : in.args) args.push_back(slot(v));
        const bool select = scalar_op_info(in.op).kind == ScalarKind::Select;
        BlockArgs b{in.dtype, op.value_dtype(in.args[select ? 1 : 0]), slot(ni + static_cast<int>(k)), args.data(), len};
        exec_instr(in.op, b);
      }
      for (size_t j = 0; j < nouts; ++j) {  // scatter
        Array& a = outputs[outs[j]];
        const int64_t s = st[j].back();
        const int64_t off = loop.offsets()[j] + start * s;
        detail::visit_dtype(a.dtype(), [&]<class T>() {
          T* dst = a.data<T>() + off;
          const T* src = static_cast<const T*>(slot(op.outputs()[outs[j]]));
          if (s == 1) std::memcpy(dst, src, sizeof(T) * len);
          else for (int64_t i = 0; i < len; ++i) dst[i * s] = src[i];
        });
      }
    }
  }
}

}  // namespace

Composite::Composite(std::vector<DType> input_dtypes, std::vector<CompositeInstr> program, std::vector<int> outputs)
    : input_dtypes_(std::move(input_dtypes)), program_(std::move(program)), outputs_(std::move(outputs)) {
  const int ni = num_inputs();
  std::vector<std::vector<bool>> deps(ni + program_.size(), std::vector<bool>(ni, false));
  for (int k = 0; k < ni; ++k) deps[k][k] = true;
  for (size_t k = 0; k < program_.size(); ++k) {
    const auto& in = program_[k];
    if (static_cast<int>(in.args.size()) != scalar_op_info(in.op).arity)
      throw InternalError("Composite: instruction " + std::to_string(k) + " has the wrong number of operands");
    for (int a : in.args) {
      if (a < 0 || a >= ni + static_cast<int>(k))
        throw InternalError("Composite: instruction " + std::to_string(k) + " reads a value not yet computed");
      for (int j = 0; j < ni; ++j)
        if (deps[a][j]) deps[ni + k][j] = true;
    }
  }
  if (outputs_.empty()) throw InternalError("Composite: no outputs");
  for (int o : outputs_) {
    if (o < ni || o >= ni + static_cast<int>(program_.size()))
      throw InternalError("Composite: an output must be an instruction result");
    output_deps_.push_back(deps[o]);
  }
}

DType Composite::value_dtype(int v) const {
  const int ni = num_inputs();
  return v < ni ? input_dtypes_[v] : program_[v - ni].dtype;
}

std::string Composite::expression(int v, const std::vector<std::string>* names) const {
  const int ni = num_inputs();
  if (v < ni) return names && v < static_cast<int>(names->size()) ? (*names)[v] : "i" + std::to_string(v);
  const CompositeInstr& in = program_[v - ni];
  std::string s(scalar_op_info(in.op).name);
  if (in.op == ScalarOpId::Cast) s += "{" + std::string(dtype_name(in.dtype)) + "}";
  s += "(";
  for (size_t i = 0; i < in.args.size(); ++i) s += (i ? (names ? ", " : ",") : "") + expression(in.args[i], names);
  return s + ")";
}

std::string Composite::render(const std::vector<std::string>& inputs, int output) const {
  if (output < 0 || output >= static_cast<int>(outputs_.size())) return Op::render(inputs, output);
  return expression(outputs_[output], &inputs);
}

graph::OpProps Composite::props() const {
  // The program in full: op:dtype(operands) per instruction, then the output value ids.
  std::string prog;
  for (size_t k = 0; k < program_.size(); ++k) {
    const auto& in = program_[k];
    prog += (k ? ";" : "") + std::string(scalar_op_info(in.op).name) + ":" + std::string(dtype_name(in.dtype)) + "(";
    for (size_t i = 0; i < in.args.size(); ++i) prog += (i ? "," : "") + std::to_string(in.args[i]);
    prog += ")";
  }
  std::string outs;
  for (size_t i = 0; i < outputs_.size(); ++i) outs += (i ? "," : "") + std::to_string(outputs_[i]);
  graph::OpProps p = {{"inputs", dtype_list(input_dtypes_)}, {"program", prog}, {"outputs", outs}};
  if (inplace_ >= 0) p.push_back({"inplace", std::to_string(inplace_)});
  return p;
}

std::shared_ptr<Composite> Composite::with_inplace(int k) const {
  if (k < 0 || k >= num_inputs() || input_dtypes_[k] != value_dtype(outputs_[0]))
    throw InternalError("Composite: input " + std::to_string(k) + " cannot be overwritten by output 0");
  auto op = std::make_shared<Composite>(*this);
  op->inplace_ = k;
  return op;
}

std::string Composite::display() const {
  std::string s = "Composite{";
  for (size_t i = 0; i < outputs_.size(); ++i) s += (i ? ", " : "") + expression(outputs_[i]);
  if (inplace_ >= 0) s += ", inplace(" + std::to_string(inplace_) + ")";
  return s + "}";
}

std::vector<Shape> Composite::infer_shape(const Apply& node, const std::vector<Array>& inputs) const {
  Shape full = broadcast_shapes(node, inputs);  // checks every input against every other
  std::vector<Shape> shapes;
  for (const auto& deps : output_deps_) {
    Shape s(full.size(), 1);
    for (size_t k = 0; k < inputs.size(); ++k)
      if (deps[k])
        for (int d = 0; d < inputs[k].ndim(); ++d)
          if (inputs[k].shape()[d] != 1) s[d] = inputs[k].shape()[d];
    shapes.push_back(std::move(s));
  }
  return shapes;
}

void run_composite(const Composite& op, const Apply&, const std::vector<Array>& inputs, std::vector<Array>& outputs) {
  const int ni = op.num_inputs();
  const auto& prog = op.program();
  std::vector<bool> done(outputs.size(), false);
  for (size_t o = 0; o < outputs.size(); ++o) {
    if (done[o]) continue;
    // Every output of this shape runs in one pass; outputs of a smaller shape (an
    // intermediate that was broadcast later) run in a pass of their own.
    std::vector<int> group;
    for (size_t p = o; p < outputs.size(); ++p)
      if (!done[p] && outputs[p].shape() == outputs[o].shape()) {
        group.push_back(static_cast<int>(p));
        done[p] = true;
      }
    std::vector<bool> live(ni + prog.size(), false);
    for (int g : group) live[op.outputs()[g]] = true;
    for (int k = static_cast<int>(prog.size()) - 1; k >= 0; --k)
      if (live[ni + k])
        for (int a : prog[k].args) live[a] = true;
    std::vector<bool> needed(prog.size()), in_needed(ni);
    for (size_t k = 0; k < prog.size(); ++k) needed[k] = live[ni + k];
    for (int k = 0; k < ni; ++k) in_needed[k] = live[k];
    run_region(op, outputs[o].shape(), needed, in_needed, inputs, outputs, group);
  }
}

void Composite::perform(const Apply& node, const std::vector<Array>& inputs, std::vector<Array>& outputs) const {
  run_composite(*this, node, inputs, outputs);
}

graph::Cost Composite::cost(const Apply& node, const std::vector<Shape>& input_shapes) const {
  graph::Cost c = Op::cost(node, input_shapes);
  int64_t n = 1;
  for (auto& s : input_shapes) n = std::max(n, shape_size(s));
  c.flops = static_cast<double>(n) * static_cast<double>(program_.size());
  for (int o : outputs_) c.bytes += static_cast<double>(n) * static_cast<double>(itemsize(value_dtype(o)));
  return c;
}

std::vector<graph::VarPtr> Composite::L_op(const Apply& node, const std::vector<graph::VarPtr>&) const {
  throw NotImplementedError(node.describe() +
                            ": Composite has no gradient: fusion runs when a function is compiled, after grad() "
                            "built the gradient graph; differentiate the unfused graph instead");
}

}  // namespace theon::ops
