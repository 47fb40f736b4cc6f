#include "ops/make_op.hpp"

#include "ops/argmax.hpp"
#include "ops/blas.hpp"
#include "ops/gemm.hpp"
#include "ops/join.hpp"
#include "ops/matmul.hpp"
#include "ops/nnet.hpp"
#include "ops/nnet_fused.hpp"
#include "ops/shape.hpp"
#include "ops/subtensor.hpp"
#include "ops/sum_to.hpp"

#include <theon/error.hpp>

#include <charconv>
#include <cstdlib>
#include <optional>
#include <vector>

namespace theon::ops {
namespace {

using graph::OpKind;
using graph::OpProps;

// Reads one op's props by key ("" for unnamed ones, in order), checking that all are used.
class PropReader {
 public:
  PropReader(OpKind kind, const OpProps& props) : kind_(kind), props_(props), used_(props.size(), false) {}

  /// The value of `key`, or `fallback` when absent (an unnamed key takes the next unused one).
  std::string text(const std::string& key, const std::string& fallback) {
    for (size_t i = 0; i < props_.size(); ++i)
      if (!used_[i] && props_[i].first == key) {
        used_[i] = true;
        return props_[i].second;
      }
    return fallback;
  }
  std::string text(const std::string& key) {
    const std::string missing = "\x01";
    std::string v = text(key, missing);
    if (v == missing) fail("no prop '" + key + "'");
    return v;
  }
  int64_t integer(const std::string& key) {
    const std::string v = text(key);
    char* end = nullptr;
    const long long n = std::strtoll(v.c_str(), &end, 10);
    if (v.empty() || *end) fail("prop '" + key + "' is not an integer: '" + v + "'");
    return n;
  }
  std::optional<int64_t> integer_or_none(const std::string& key) {
    const std::string v = text(key, "None");
    if (v == "None") return std::nullopt;
    char* end = nullptr;
    const long long n = std::strtoll(v.c_str(), &end, 10);
    if (v.empty() || *end) fail("prop '" + key + "' is neither an integer nor None: '" + v + "'");
    return n;
  }
  double number(const std::string& key) {
    const std::string v = text(key);
    char* end = nullptr;
    const double x = std::strtod(v.c_str(), &end);
    if (v.empty() || *end) fail("prop '" + key + "' is not a number: '" + v + "'");
    return x;
  }
  /// A shape as shape_str prints it: "(2, 3)", "(4,)", "()".
  Shape shape(const std::string& key) {
    const std::string v = text(key);
    if (v.size() < 2 || v.front() != '(' || v.back() != ')') fail("prop '" + key + "' is not a shape: '" + v + "'");
    Shape s;
    std::string_view rest = std::string_view(v).substr(1, v.size() - 2);
    while (!rest.empty()) {
      const size_t comma = rest.find(',');
      const std::string_view item = rest.substr(0, comma);
      int64_t n = 0;
      const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), n);
      if (ec != std::errc() || end != item.data() + item.size()) fail("prop '" + key + "' is not a shape: '" + v + "'");
      s.push_back(n);
      if (comma == std::string_view::npos) break;
      rest = rest.substr(comma + 1);
      if (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
    }
    return s;
  }
  IndexSpec index_spec() {
    const std::string v = text("");
    try {
      return index_spec_from_text(v);
    } catch (const ValueError& e) {
      fail(e.what());
    }
  }
  bool flag(const std::string& key) { return text(key, "False") == "True"; }
  /// One of two words (an unnamed prop such as "set"/"inc"): true for `yes`.
  bool word(const std::string& yes, const std::string& no) {
    const std::string v = text("");
    if (v != yes && v != no) fail("expected '" + yes + "' or '" + no + "', got '" + v + "'");
    return v == yes;
  }
  template <class T>
  std::shared_ptr<const graph::Op> done(std::shared_ptr<const T> op) {
    for (size_t i = 0; i < props_.size(); ++i)
      if (!used_[i]) fail("unexpected prop '" + props_[i].first + "=" + props_[i].second + "'");
    return op;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw ValueError("make_op(" + std::string(graph::kind_name(kind_)) + "): " + what);
  }
  OpKind kind_;
  const OpProps& props_;
  std::vector<bool> used_;
};

}  // namespace

std::string not_rebuildable_reason(OpKind kind) {
  switch (kind) {
    case OpKind::Elemwise: return "the output dtype of a non-cast Elemwise is not among its props";
    case OpKind::Sum: case OpKind::Prod: case OpKind::Max: case OpKind::Min: case OpKind::Any:
    case OpKind::All: case OpKind::Mean: case OpKind::Count:
      return "a Reduce's result dtype is not among its props";
    case OpKind::DimShuffle: return "a DimShuffle's input rank is not among its props (dropped dims)";
    case OpKind::Composite: case OpKind::FusedReduce:
      return "a fused region holds a scalar program that its props print but do not rebuild";
    case OpKind::Transfer: return "a Transfer holds a device, not a prop";
    case OpKind::ZeroGrad: case OpKind::DisconnectedGrad:
      return "GradientBlock belongs to autodiff, a layer above ops";
    default: return "";
  }
}

std::shared_ptr<const graph::Op> make_op(OpKind kind, const OpProps& props) {
  if (std::string why = not_rebuildable_reason(kind); !why.empty())
    throw NotImplementedError("make_op(" + std::string(graph::kind_name(kind)) + "): " + why);
  PropReader p(kind, props);
  switch (kind) {
    case OpKind::Dot: return p.done(std::make_shared<const Dot>());
    case OpKind::BatchedMatmul: return p.done(std::make_shared<const BatchedMatmul>());
    case OpKind::Alloc: return p.done(std::make_shared<const Alloc>());
    case OpKind::SumTo: return p.done(std::make_shared<const SumTo>());
    case OpKind::CategoricalCrossentropy: return p.done(std::make_shared<const CategoricalCrossentropy>());
    case OpKind::SoftmaxCrossentropy: return p.done(std::make_shared<const SoftmaxCrossentropy>());
    case OpKind::SoftmaxCrossentropyGrad: return p.done(std::make_shared<const SoftmaxCrossentropyGrad>());
    case OpKind::CrossentropyGrad: return p.done(std::make_shared<const CrossentropyGrad>());
    case OpKind::LabelGather: return p.done(std::make_shared<const LabelGather>());
    case OpKind::LabelScatter: return p.done(std::make_shared<const LabelScatter>());
    case OpKind::Gemm: {
      const double alpha = p.number("alpha");
      return p.done(std::make_shared<const Gemm>(alpha, p.number("beta")));
    }
    case OpKind::Join: {
      const int axis = static_cast<int>(p.integer("axis"));
      return p.done(std::make_shared<const Join>(axis, p.flag("stack")));
    }
    case OpKind::Reshape: {
      const int ndim = static_cast<int>(p.integer("ndim"));
      return p.done(std::make_shared<const Reshape>(ndim, p.flag("flatten")));
    }
    case OpKind::BroadcastTo: return p.done(std::make_shared<const BroadcastTo>(p.shape("shape")));
    case OpKind::Subtensor: return p.done(std::make_shared<const Subtensor>(p.index_spec()));
    case OpKind::IncSubtensor: {
      IndexSpec spec = p.index_spec();
      return p.done(std::make_shared<const IncSubtensor>(std::move(spec), p.word("set", "inc")));
    }
    case OpKind::Shape: return p.done(std::make_shared<const ShapeOf>(p.word("size", "shape")));
    case OpKind::AdvancedSubtensor1: {
      const int axis = static_cast<int>(p.integer("axis"));
      return p.done(std::make_shared<const AdvancedSubtensor1>(axis, p.flag("nested")));
    }
    case OpKind::AdvancedIncSubtensor1: {
      const int axis = static_cast<int>(p.integer("axis"));
      return p.done(std::make_shared<const AdvancedIncSubtensor1>(axis, p.word("set", "inc")));
    }
    case OpKind::ArgMax: {
      const bool is_max = p.word("max", "min");
      const std::optional<int64_t> axis = p.integer_or_none("axis");
      return p.done(std::make_shared<const ArgMax>(
          is_max, axis ? std::optional<int>(static_cast<int>(*axis)) : std::nullopt));
    }
    case OpKind::Softmax: case OpKind::LogSoftmax:
      return p.done(std::make_shared<const Softmax>(kind == OpKind::LogSoftmax, static_cast<int>(p.integer("axis"))));
    case OpKind::OneHot: {
      const int64_t n = p.integer("n");
      return p.done(std::make_shared<const OneHot>(n, parse_dtype(p.text("dtype"))));
    }
    default: break;
  }
  throw InternalError("make_op(" + std::string(graph::kind_name(kind)) + "): no factory and no stated reason");
}

}  // namespace theon::ops
