// What every tensor:: builder does with its Var arguments first: the graph variable behind a
// defined Var, else a ValueError naming the builder.
#pragma once
#include <theon/error.hpp>
#include <theon/var.hpp>

#include "graph/node.hpp"

#include <string>

namespace theon::tensor::detail {

inline graph::VarPtr need(const Var& v, const char* op) {
  if (!v.defined()) throw ValueError(std::string(op) + ": use of an undefined Var");
  return v.node();
}

}  // namespace theon::tensor::detail
