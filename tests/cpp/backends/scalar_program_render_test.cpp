// The scalar-program renderer (backends/scalar_program_render): one program rendered in the
// CPU and the CUDA dialect has the same expressions, differing only in type names and CUDA's
// explicit result conversion; the code generators of both backends paste what it renders.
#include "backends/cpu/fused_cpu.hpp"
#include "backends/scalar_program_render.hpp"
#include "ops/composite.hpp"

#include <theon/error.hpp>

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace theon {
namespace {

using backends::Dialect;
using backends::ScalarProgram;
using ops::ScalarOpId;

// out0 = tanh(i0 * i1) + cast<f32>(i2), out1 = i0 * i1 (an int8 third input).
ScalarProgram sample() {
  ScalarProgram p;
  p.input_dtypes = {DType::Float32, DType::Float32, DType::Int8};
  p.instrs = {{ScalarOpId::Mul, DType::Float32, {0, 1}},    // v3
              {ScalarOpId::Tanh, DType::Float32, {3}},      // v4
              {ScalarOpId::Cast, DType::Float32, {2}},      // v5
              {ScalarOpId::Add, DType::Float32, {4, 5}},    // v6
              {ScalarOpId::Exp, DType::Float64, {0}}};      // v7: unused by the outputs
  p.outputs = {6, 3};
  return p;
}

// Removes every occurrence of `what` from `s`.
std::string without(std::string s, const std::string& what) {
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at)) s.erase(at, what.size());
  return s;
}

TEST(ScalarProgramRender, TypeNamesPerDialect) {
  EXPECT_STREQ(backends::scalar_type(DType::Int8, Dialect::Cpu), "int8_t");
  EXPECT_STREQ(backends::scalar_type(DType::Int8, Dialect::Cuda), "signed char");
  EXPECT_STREQ(backends::scalar_type(DType::Int64, Dialect::Cpu), "int64_t");
  EXPECT_STREQ(backends::scalar_type(DType::Int64, Dialect::Cuda), "long long");
  EXPECT_STREQ(backends::scalar_type(DType::UInt8, Dialect::Cuda), "unsigned char");
  for (Dialect d : {Dialect::Cpu, Dialect::Cuda}) {
    EXPECT_STREQ(backends::scalar_type(DType::Float32, d), "float");
    EXPECT_STREQ(backends::scalar_type(DType::Float64, d), "double");
    EXPECT_STREQ(backends::scalar_type(DType::Bool, d), "bool");
    EXPECT_STREQ(backends::scalar_type(DType::Float16, d), "theon::half");  // storage: Cast converts it
    EXPECT_THROW(backends::scalar_type(DType::BFloat16, d), NotImplementedError);
  }
}

TEST(ScalarProgramRender, InstructionExpressions) {
  const ops::CompositeInstr add{ScalarOpId::Add, DType::Float32, {0, 1}};
  const ops::CompositeInstr cast{ScalarOpId::Cast, DType::Int16, {0}};
  EXPECT_EQ(backends::instruction_expr(add, {"a[i]", "x1"}, Dialect::Cpu), "Add{}(a[i], x1)");
  EXPECT_EQ(backends::instruction_expr(add, {"v0", "v1"}, Dialect::Cuda), "(float)Add{}(v0, v1)");
  EXPECT_EQ(backends::instruction_expr(cast, {"v0"}, Dialect::Cpu), "Cast().convert<int16_t>(v0)");
  EXPECT_EQ(backends::instruction_expr(cast, {"v0"}, Dialect::Cuda), "Cast().convert<short>(v0)");
  EXPECT_THROW(backends::instruction_expr(add, {"v0"}, Dialect::Cpu), InternalError);
  EXPECT_EQ(backends::value_statement(4, DType::Int64, "e", Dialect::Cpu), "const int64_t v4 = e;");
  EXPECT_EQ(backends::value_statement(4, DType::Int64, "e", Dialect::Cuda), "const long long v4 = e;");
}

TEST(ScalarProgramRender, NeededValuesFollowTheOutputs) {
  const ScalarProgram p = sample();
  EXPECT_EQ(p.needed({0, 1}), (std::vector<bool>{true, true, true, true, true, true, true, false}));
  EXPECT_EQ(p.needed({1}), (std::vector<bool>{true, true, false, true, false, false, false, false}));
  EXPECT_EQ(p.value_dtype(2), DType::Int8);
  EXPECT_EQ(p.value_dtype(7), DType::Float64);
}

TEST(ScalarProgramRender, BothDialectsRenderTheSameProgram) {
  const ScalarProgram p = sample();
  const std::vector<bool> need = p.needed({0, 1});
  auto load = [](int i) { return "in" + std::to_string(i) + "[k]"; };
  const std::string cpu = backends::render_values(p, need, Dialect::Cpu, load, "  ");
  const std::string cuda = backends::render_values(p, need, Dialect::Cuda, load, "  ");
  EXPECT_EQ(cpu,
            "  const float v0 = in0[k];\n"
            "  const float v1 = in1[k];\n"
            "  const int8_t v2 = in2[k];\n"
            "  const float v3 = Mul{}(v0, v1);\n"
            "  const float v4 = Tanh{}(v3);\n"
            "  const float v5 = Cast().convert<float>(v2);\n"
            "  const float v6 = Add{}(v4, v5);\n");
  EXPECT_EQ(cuda,
            "  const float v0 = in0[k];\n"
            "  const float v1 = in1[k];\n"
            "  const signed char v2 = in2[k];\n"
            "  const float v3 = (float)Mul{}(v0, v1);\n"
            "  const float v4 = (float)Tanh{}(v3);\n"
            "  const float v5 = Cast().convert<float>(v2);\n"
            "  const float v6 = (float)Add{}(v4, v5);\n");
  // The same structure: only the spelling of types and CUDA's result conversions differ.
  EXPECT_EQ(without(cpu, "int8_t"), without(without(cuda, "(float)"), "signed char"));
  EXPECT_EQ(cpu.find("v7"), std::string::npos);  // values no output needs are not rendered
}

TEST(ScalarProgramRender, TheCpuGeneratorPastesTheRenderedInstructions) {
  // A Composite with a broadcast (scalar) input: its instructions over element references,
  // and over scalars for the values that stay scalars, as the renderer spells them.
  const ScalarProgram p = sample();
  ops::Composite op(p.input_dtypes, p.instrs, {6});
  const std::string s = backends::cpu::fused_source(op, 1, {0, 0, 0, 1}, {true, true, true, true});
  EXPECT_NE(s.find("const int8_t x2 = p3[0];"), std::string::npos) << s;
  EXPECT_NE(s.find("const float v5 = Cast().convert<float>(x2);"), std::string::npos) << s;
  EXPECT_NE(s.find("= Mul{}(p1[i], p2[i]);"), std::string::npos) << s;
  EXPECT_NE(s.find("= Add{}("), std::string::npos) << s;
}

}  // namespace
}  // namespace theon
