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

#include <string>
#include <vector>

namespace theon {

std::string debugprint(const Var& var);
std::string debugprint(const std::vector<Var>& vars);
std::string debugprint(const Function& f);

}  // namespace theon
