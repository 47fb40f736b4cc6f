// What the user wrote, for error messages. Builders add nodes the user never wrote: the casts
// of type promotion, DimShuffles aligning ranks for broadcasting, Transfers from placement,
// and rewrites rename nothing but make more such values. A message naming
// "<float32 matrix #11> (1, 4)" where the user wrote `y` of shape (4,) does not help; these
// helpers look through such nodes (Op::presents_input) to the user's variable and map the
// run-time shape back to the one it had, and render an unnamed value as the expression that
// made it ("mul(y, 2.0)", "x[1:]", "flatten(x)").
//
//   throw ShapeError(user_describe(node) + ": ... " + user_value(*node.input(1), shape));
//   // "Elemwise{add}(x, y): ... y (4,)"
#pragma once
#include "graph/node.hpp"

#include <string>

namespace theon::graph {

/// The user's name for `v`: its name, else the name of the value it presents (looking through
/// casts, broadcasting DimShuffles, transfers), else the expression that made it (a few levels
/// deep, short), else its generated label. Small constants show their values ("[3, 3]").
std::string user_label(const Variable& v);
/// The user's value behind `v` when `v` has `shape` at run time: its label and its own shape
/// ((4,) for y where a node saw the broadcasting view (1, 4)).
struct UserValue {
  std::string label;
  Shape shape;
};
UserValue user_view(const Variable& v, const Shape& shape);
/// "y (4,)": user_view as text; when the node saw another shape, " as (1, 4)" follows if
/// `show_seen`.
std::string user_value(const Variable& v, const Shape& shape, bool show_seen = false);
/// "Elemwise{add}(x, y)": the op's display and the user labels of the node's inputs.
std::string user_describe(const Apply& node);

}  // namespace theon::graph
