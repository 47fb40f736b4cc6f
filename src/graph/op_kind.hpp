// OpKind: which op a node applies, as an enum over the rows of the op registry
// (include/theon/ops.def, THEON_OP_KIND). Passes, placement and kernels test kinds rather than names;
// the enum lives here because Op::kind() is part of the op contract. ops.def is a list of
// names with no code, so including it from this layer adds no dependency on ops.
#pragma once
#include <array>
#include <optional>
#include <string_view>

namespace theon::graph {

enum class OpKind {
#define THEON_OP_KIND(kind, cls, visibility) kind,
#include <theon/ops.def>
#undef THEON_OP_KIND
};

/// Whether the tensor:: builders produce the kind (User) or only rewrites, gradients and
/// compilation do (Internal).
enum class OpVisibility { User, Internal };

struct OpKindInfo {
  OpKind kind;
  std::string_view name;  // the op's name(): "Sum", "Gemm"
  std::string_view op_class;  // the Op class that implements it: "ops::Reduce"
  OpVisibility visibility;
};

inline constexpr std::array op_kinds = {
#define THEON_OP_KIND(kind, cls, visibility) OpKindInfo{OpKind::kind, #kind, #cls, OpVisibility::visibility},
#include <theon/ops.def>
#undef THEON_OP_KIND
};

constexpr const OpKindInfo& op_kind_info(OpKind kind) { return op_kinds[static_cast<size_t>(kind)]; }
constexpr std::string_view kind_name(OpKind kind) { return op_kind_info(kind).name; }
/// The kind named `name` (an op's name()), or nullopt.
std::optional<OpKind> kind_from_name(std::string_view name);

}  // namespace theon::graph
