// debugprint: a graph as an indented tree (Theano's theano.printing.debugprint).
//
//   Elemwise{add} [id A] 'y'  float32 (?, 5)
//    |Dot [id B]  float32 (?, 5)
//    | |x [id C]  float32 (?, 10)
//    | |w [id D]  float32 (10, 5)
//    |DimShuffle{(x,0)} [id E]  float32 (1, 5)
//      |b [id F]  float32 (5,)
#pragma once
#include <theon/function.hpp>
#include <theon/var.hpp>

#include <functional>
#include <string>
#include <vector>

namespace theon {

/// What print() hands each value to: its message and the value (a host copy it may keep).
using PrintFn = std::function<void(const std::string& message, const Array& value)>;

/// Theano's theano.printing.Print: a variable with x's value that, each time a function
/// computes it, calls fn(message, value) (by default prints "<message> __str__ = <value>" on
/// standard output) before the nodes that read it run. Gradients pass through unprinted.
/// Kept by every rewrite (never folded or merged); on a GPU the value is copied to the host.
/// A function saved and loaded in another process prints with the default.
///
///   Var h = print(tensor::tanh(x), "h");   // f(x) prints "h __str__ = [...]" on each call
Var print(const Var& x, const std::string& message, PrintFn fn = {});

std::string debugprint(const Var& var);
std::string debugprint(const std::vector<Var>& vars);
std::string debugprint(const Function& f);

}  // namespace theon
