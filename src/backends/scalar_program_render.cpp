#include "backends/scalar_program_render.hpp"

#include "ops/scalar/scalar_op_id.hpp"

#include <theon/error.hpp>

namespace theon::backends {

const char* scalar_type(DType t, Dialect d) {
  const bool cpu = d == Dialect::Cpu;
  switch (t) {
    case DType::Bool: return "bool";
    case DType::Int8: return cpu ? "int8_t" : "signed char";
    case DType::Int16: return cpu ? "int16_t" : "short";
    case DType::Int32: return cpu ? "int32_t" : "int";
    case DType::Int64: return cpu ? "int64_t" : "long long";
    case DType::UInt8: return cpu ? "uint8_t" : "unsigned char";
    case DType::Float32: return "float";
    case DType::Float64: return "double";
    case DType::Float16: return "theon::half";  // storage only: programs convert it with Cast
    default: break;
  }
  if (cpu)
    throw NotImplementedError("fused CPU kernels: dtype " + std::string(dtype_name(t)) + " is not supported");
  throw NotImplementedError("the CUDA backend has no type for " + std::string(dtype_name(t)));
}

ScalarProgram ScalarProgram::of(const ops::Composite& c) { return {c.input_dtypes(), c.program(), c.outputs()}; }

DType ScalarProgram::value_dtype(int v) const {
  const int ni = num_inputs();
  return v < ni ? input_dtypes[static_cast<size_t>(v)] : instrs[static_cast<size_t>(v - ni)].dtype;
}

std::vector<bool> ScalarProgram::needed(const std::vector<int>& outs) const {
  const int ni = num_inputs();
  std::vector<bool> need(static_cast<size_t>(num_values()), false);
  for (int o : outs) need[static_cast<size_t>(outputs[static_cast<size_t>(o)])] = true;
  for (int q = static_cast<int>(instrs.size()) - 1; q >= 0; --q)
    if (need[static_cast<size_t>(ni + q)])
      for (int a : instrs[static_cast<size_t>(q)].args) need[static_cast<size_t>(a)] = true;
  return need;
}

std::string value_name(int v) { return "v" + std::to_string(v); }

std::string instruction_expr(const ops::CompositeInstr& in, const std::vector<std::string>& args, Dialect d) {
  if (args.size() != in.args.size())
    throw InternalError("instruction_expr: " + std::to_string(args.size()) + " argument texts for " +
                        std::to_string(in.args.size()) + " arguments");
  const std::string t = scalar_type(in.dtype, d);
  std::string e;
  if (in.op == ops::ScalarOpId::Cast) {
    e = "Cast().convert<" + t + ">(";
  } else {
    if (d == Dialect::Cuda) e = "(" + t + ")";
    e += std::string(ops::scalar_op_info(in.op).functor) + "{}(";
  }
  for (size_t a = 0; a < args.size(); ++a) e += (a ? ", " : "") + args[a];
  return e + ")";
}

std::string value_statement(int v, DType t, const std::string& expr, Dialect d) {
  return "const " + std::string(scalar_type(t, d)) + " " + value_name(v) + " = " + expr + ";";
}

std::string render_values(const ScalarProgram& p, const std::vector<bool>& need, Dialect d,
                          const std::function<std::string(int input)>& load, const std::string& indent) {
  const int ni = p.num_inputs();
  std::string out;
  for (int i = 0; i < ni; ++i)
    if (need[static_cast<size_t>(i)]) out += indent + value_statement(i, p.input_dtypes[static_cast<size_t>(i)], load(i), d) + "\n";
  std::vector<std::string> args;
  for (size_t q = 0; q < p.instrs.size(); ++q) {
    const int v = ni + static_cast<int>(q);
    if (!need[static_cast<size_t>(v)]) continue;
    const auto& in = p.instrs[q];
    args.clear();
    for (int a : in.args) args.push_back(value_name(a));
    out += indent + value_statement(v, in.dtype, instruction_expr(in, args, d), d) + "\n";
  }
  return out;
}

}  // namespace theon::backends
