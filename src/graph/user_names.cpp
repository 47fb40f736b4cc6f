#include "graph/user_names.hpp"

#include "graph/op.hpp"

#include <cmath>
#include <cstdio>

namespace theon::graph {

namespace {

constexpr int kDepth = 3;          // levels of an unnamed value's expression shown
constexpr size_t kMaxText = 80;    // longer expressions give way to the generated label
constexpr int64_t kMaxShown = 8;   // constants with at most this many elements show their values

// Follows presenting nodes up from `v` (mapping `shape` along when given) to the value the user wrote.
const Variable* presented(const Variable* v, Shape* shape) {
  while (v->name.empty() && v->owner && v->owner->num_outputs() == 1 && !v->owner->inputs().empty() &&
         v->owner->op().presents_input()) {
    if (shape) *shape = v->owner->op().presented_shape(*shape);
    v = v->owner->input(0).get();
  }
  return v;
}

std::string number(double x, bool integral) {
  if (integral) return std::to_string(static_cast<int64_t>(x));
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", x);
  std::string s = buf;
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

std::string constant_text(const Variable& v) {
  const Array& a = v.constant;
  if (!a.defined() || a.ndim() != 1 || a.size() > kMaxShown || !a.on_host()) return v.label();
  const bool integral = !is_float(a.dtype());
  std::string s = "[";
  for (int64_t i = 0; i < a.size(); ++i) s += (i ? ", " : "") + number(a.item(i), integral);
  return s + "]";
}

std::string label_at(const Variable& v_in, int depth) {
  const Variable& v = *presented(&v_in, nullptr);
  if (!v.name.empty()) return v.name;
  if (v.kind == VarKind::Constant) return v.constant.defined() && v.constant.size() == 1 ? v.label() : constant_text(v);
  if (!v.owner || depth <= 0) return v.label();
  std::vector<std::string> args;
  for (auto& in : v.owner->inputs()) args.push_back(label_at(*in, depth - 1));
  const std::string s = v.owner->op().render(args, v.index);
  return s.size() <= kMaxText ? s : v.label();
}

}  // namespace

std::string user_label(const Variable& v) { return label_at(v, kDepth); }

UserValue user_view(const Variable& v, const Shape& shape) {
  UserValue u{"", shape};
  u.label = label_at(*presented(&v, &u.shape), kDepth);
  return u;
}

std::string user_value(const Variable& v, const Shape& shape, bool show_seen) {
  const UserValue u = user_view(v, shape);
  std::string s = u.label + " " + shape_str(u.shape);
  if (show_seen && u.shape != shape) s += " as " + shape_str(shape);
  return s;
}

std::string user_describe(const Apply& node) {
  std::string s = node.op().display() + "(";
  for (int i = 0; i < static_cast<int>(node.inputs().size()); ++i) s += (i ? ", " : "") + user_label(*node.input(i));
  return s + ")";
}

}  // namespace theon::graph
