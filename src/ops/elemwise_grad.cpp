// Gradients of the elementwise ops, one row per scalar op, written with the same builders
// users call (so gradients of gradients work). Integer and boolean inputs get no gradient.
#include "ops/elemwise.hpp"
#include "ops/sum_to.hpp"

#include <theon/error.hpp>

namespace theon::ops {

using graph::Apply;
using graph::VarPtr;
using S = ScalarOpId;

namespace {

VarPtr ew(S id, std::vector<VarPtr> in) { return elemwise(id, std::move(in)); }
VarPtr lit(double v) { return literal(v, false); }
VarPtr mul(VarPtr a, VarPtr b) { return ew(S::Mul, {std::move(a), std::move(b)}); }
VarPtr div(VarPtr a, VarPtr b) { return ew(S::TrueDiv, {std::move(a), std::move(b)}); }
VarPtr neg(VarPtr a) { return ew(S::Neg, {std::move(a)}); }
VarPtr sub(VarPtr a, VarPtr b) { return ew(S::Sub, {std::move(a), std::move(b)}); }
VarPtr add(VarPtr a, VarPtr b) { return ew(S::Add, {std::move(a), std::move(b)}); }
// gz where `mask` holds, else 0 (NaN-safe: never multiplies gz by 0).
VarPtr masked(VarPtr mask, VarPtr gz) { return ew(S::Switch, {std::move(mask), gz, lit(0)}); }

}  // namespace

std::vector<VarPtr> Elemwise::L_op(const Apply& node, const std::vector<VarPtr>& output_grads) const {
  const auto& in = node.inputs();
  const int n = static_cast<int>(in.size());
  std::vector<VarPtr> grads(n);
  VarPtr gz = output_grads[0];
  if (!gz) return grads;
  const VarPtr out = const_cast<Apply&>(node).output(0);
  auto x = [&](int i) { return in[i]; };

  switch (scalar_) {
    case S::Identity: grads[0] = gz; break;
    case S::Add: grads = {gz, gz}; break;
    case S::Sub: grads = {gz, neg(gz)}; break;
    case S::Mul: grads = {mul(gz, x(1)), mul(gz, x(0))}; break;
    case S::TrueDiv: grads = {div(gz, x(1)), neg(div(mul(gz, x(0)), mul(x(1), x(1))))}; break;
    case S::FloorDiv: grads = {mul(gz, lit(0)), mul(gz, lit(0))}; break;  // piecewise constant
    case S::Mod: grads = {gz, neg(mul(gz, ew(S::FloorDiv, {x(0), x(1)})))}; break;
    case S::Pow:
      grads = {mul(gz, mul(x(1), ew(S::Pow, {x(0), sub(x(1), lit(1))}))), mul(gz, mul(ew(S::Log, {x(0)}), out))};
      break;
    case S::Neg: grads[0] = neg(gz); break;
    case S::Abs: grads[0] = mul(gz, ew(S::Sign, {x(0)})); break;
    case S::Sign: grads[0] = mul(gz, lit(0)); break;
    case S::Sqr: grads[0] = mul(gz, mul(lit(2), x(0))); break;
    case S::Maximum:  // ties send the gradient to the first input
      grads = {masked(ew(S::Ge, {x(0), x(1)}), gz), masked(ew(S::Lt, {x(0), x(1)}), gz)};
      break;
    case S::Minimum:
      grads = {masked(ew(S::Le, {x(0), x(1)}), gz), masked(ew(S::Gt, {x(0), x(1)}), gz)};
      break;
    case S::Clip:
      grads = {masked(ew(S::And, {ew(S::Ge, {x(0), x(1)}), ew(S::Le, {x(0), x(2)})}), gz),
               masked(ew(S::Lt, {x(0), x(1)}), gz), masked(ew(S::Gt, {x(0), x(2)}), gz)};
      break;
    case S::Relu: grads[0] = masked(ew(S::Gt, {x(0), lit(0)}), gz); break;
    case S::Exp: grads[0] = mul(gz, out); break;
    case S::Log: grads[0] = div(gz, x(0)); break;
    case S::Log1p: grads[0] = div(gz, add(x(0), lit(1))); break;
    case S::Expm1: grads[0] = mul(gz, add(out, lit(1))); break;
    case S::Sqrt: grads[0] = div(mul(gz, lit(0.5)), out); break;
    case S::Tanh: grads[0] = mul(gz, sub(lit(1), mul(out, out))); break;
    case S::Sigmoid: grads[0] = mul(gz, mul(out, sub(lit(1), out))); break;
    case S::Softplus: grads[0] = mul(gz, ew(S::Sigmoid, {x(0)})); break;
    case S::Sin: grads[0] = mul(gz, ew(S::Cos, {x(0)})); break;
    case S::Cos: grads[0] = neg(mul(gz, ew(S::Sin, {x(0)}))); break;
    case S::Erfc: grads[0] = mul(gz, mul(lit(-1.1283791670955126), ew(S::Exp, {neg(mul(x(0), x(0)))}))); break;
    case S::Erf: grads[0] = mul(gz, mul(lit(1.1283791670955126), ew(S::Exp, {neg(mul(x(0), x(0)))}))); break;  // 2/sqrt(pi)
    case S::Erfinv:  // sqrt(pi)/2 * exp(erfinv(x)^2)
      grads[0] = mul(gz, mul(lit(0.88622692545275801), ew(S::Exp, {mul(out, out)})));
      break;
    case S::Gamma: grads[0] = mul(gz, mul(out, ew(S::Psi, {x(0)}))); break;
    case S::GammaLn: grads[0] = mul(gz, ew(S::Psi, {x(0)})); break;
    case S::Psi: grads[0] = mul(gz, ew(S::TriGamma, {x(0)})); break;
    case S::TriGamma:  // as Theano's TriGamma: polygamma(2) is not available
      throw NotImplementedError(node.describe() + ": the gradient of tri_gamma (polygamma(2, x)) is not implemented");
    case S::XlogX: grads[0] = mul(gz, add(lit(1), ew(S::Log, {x(0)}))); break;
    case S::XlogY0: grads = {mul(gz, ew(S::Log, {x(1)})), div(mul(gz, x(0)), x(1))}; break;
    case S::Softsign: {  // 1 / (1 + |x|)^2
      VarPtr d = add(lit(1), ew(S::Abs, {x(0)}));
      grads[0] = div(gz, mul(d, d));
      break;
    }
    case S::Floor: case S::Ceil: case S::Trunc: case S::RoundHalfToEven: case S::RoundHalfAwayFromZero:
      grads[0] = mul(gz, lit(0)); break;  // piecewise constant (Theano: zeros)
    case S::Switch: grads = {nullptr, masked(x(0), gz), masked(ew(S::Not, {x(0)}), gz)}; break;
    case S::Cast: grads[0] = gz; break;
    case S::Lt: case S::Gt: case S::Le: case S::Ge: case S::Eq: case S::Neq:
    case S::And: case S::Or: case S::Xor: case S::Not:
      return grads;  // boolean results: no gradient flows
    case S::Count: break;  // not an op
  }
  for (int i = 0; i < n; ++i) {
    if (!grads[i] || !is_float(in[i]->type.dtype)) {
      grads[i] = nullptr;
      continue;
    }
    grads[i] = sum_to(cast(grads[i], in[i]->type.dtype), in[i]);
  }
  return grads;
}

}  // namespace theon::ops
