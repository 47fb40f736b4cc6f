// make_op: an op rebuilt from its kind and props, the basis of serialization. Each kind's
// factory, `op_from_props<Kind>`, is defined beside its op class (its family file) and reads
// the props through a PropReader; kinds whose props do not describe the op fully throw
// NotImplementedError saying what they lack. The declarations below come from the registry
// rows, so a kind without a factory fails to link, naming it.
#pragma once
#include "graph/op.hpp"
#include "ops/subtensor.hpp"

#include <theon/dtype.hpp>
#include <theon/error.hpp>

#include <charconv>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace theon::ops {

// Reads one op's props by key ("" for unnamed ones, in order), checking that all are used.
class PropReader {
 public:
  PropReader(graph::OpKind kind, const graph::OpProps& props) : kind_(kind), props_(props), used_(props.size(), false) {}

  graph::OpKind kind() const { return kind_; }

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
  /// A dtype name ("float32").
  DType dtype(const std::string& key) { return dtype_of(key, text(key)); }
  /// A dtype name, or nullopt when the prop is absent.
  std::optional<DType> dtype_or_none(const std::string& key) {
    const std::string v = text(key, "");
    if (v.empty()) return std::nullopt;
    return dtype_of(key, v);
  }
  bool flag(const std::string& key) { return text(key, "False") == "True"; }
  /// One of two words (an unnamed prop such as "set"/"inc"): true for `yes`.
  bool word(const std::string& yes, const std::string& no) {
    const std::string v = text("");
    if (v != yes && v != no) fail("expected '" + yes + "' or '" + no + "', got '" + v + "'");
    return v == yes;
  }
  /// `op`, after checking that every prop was read.
  std::shared_ptr<const graph::Op> done(std::shared_ptr<const graph::Op> op) {
    for (size_t i = 0; i < props_.size(); ++i)
      if (!used_[i]) fail("unexpected prop '" + props_[i].first + "=" + props_[i].second + "'");
    return op;
  }
  /// ValueError "make_op(<kind>): <what>" (a prop the kind cannot take).
  [[noreturn]] void fail(const std::string& what) const {
    throw ValueError("make_op(" + std::string(graph::kind_name(kind_)) + "): " + what);
  }
  /// For kinds whose props do not describe the op: NotImplementedError saying what they lack.
  [[noreturn]] void not_rebuildable(const std::string& why) const {
    throw NotImplementedError("make_op(" + std::string(graph::kind_name(kind_)) + "): " + why);
  }

 private:
  DType dtype_of(const std::string& key, const std::string& v) {
    try {
      return parse_dtype(v);
    } catch (const TypeError& e) {
      fail("prop '" + key + "': " + e.what());
    }
  }
  graph::OpKind kind_;
  const graph::OpProps& props_;
  std::vector<bool> used_;
};

/// The factory of kind K (defined in the family file of its class).
template <graph::OpKind K>
std::shared_ptr<const graph::Op> op_from_props(PropReader& props);
#define THEON_OP_KIND(kind, cls, visibility) \
  template <>                                  \
  std::shared_ptr<const graph::Op> op_from_props<graph::OpKind::kind>(PropReader&);
#include <theon/ops.def>
#undef THEON_OP_KIND

/// Defines the factory of a kind whose props do not describe its op: it throws
/// NotImplementedError saying `why`.
#define THEON_NOT_REBUILDABLE(Kind, why)                                                    \
  template <>                                                                               \
  std::shared_ptr<const graph::Op> op_from_props<graph::OpKind::Kind>(PropReader & props) { \
    props.not_rebuildable(why);                                                             \
  }
/// A factory registered by a layer above ops for a kind whose op class lives there (the
/// gradient ops of autodiff): such a kind's factory here (THEON_UPPER_LAYER_FACTORY) calls it,
/// or throws NotImplementedError saying `why` while none is registered.
using OpFactory = std::shared_ptr<const graph::Op> (*)(PropReader& props);
void register_op_factory(graph::OpKind kind, OpFactory factory);
std::shared_ptr<const graph::Op> upper_layer_op(graph::OpKind kind, PropReader& props, const char* why);
#define THEON_UPPER_LAYER_FACTORY(Kind, why)                                                \
  template <>                                                                               \
  std::shared_ptr<const graph::Op> op_from_props<graph::OpKind::Kind>(PropReader & props) { \
    return upper_layer_op(graph::OpKind::Kind, props, why);                                 \
  }
/// Defines the factory of a kind whose op class takes no parameters.
#define THEON_PROPLESS_FACTORY(Kind, Class)                                        \
  template <>                                                                      \
  std::shared_ptr<const graph::Op> op_from_props<graph::OpKind::Kind>(PropReader&) { \
    return std::make_shared<const Class>();                                        \
  }

/// The op of `kind` with `props` (as Op::props() prints them, or as rebuild_props gives them).
/// Throws ValueError for props the kind does not take or cannot read, NotImplementedError for
/// a kind not rebuildable from props.
std::shared_ptr<const graph::Op> make_op(graph::OpKind kind, const graph::OpProps& props);

/// The props make_op rebuilds `op` from (what serialization records): props(), and for the
/// kinds whose printed props leave part of the op out, that part under its own key: a
/// non-cast Elemwise's "out_dtype", a Reduce's "dtype", a DimShuffle's "input_ndim".
graph::OpProps rebuild_props(const graph::Op& op);

}  // namespace theon::ops
