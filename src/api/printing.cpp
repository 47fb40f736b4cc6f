// theon/printing.hpp's print (debugprint is in function.cpp).
#include <theon/printing.hpp>

#include "api/need_var.hpp"
#include "ops/print.hpp"

namespace theon {

Var print(const Var& x, const std::string& message, PrintFn fn) {
  const graph::VarPtr v = tensor::detail::need(x, "print");
  return Var(ops::print_op(v, message, ops::register_print_fn(std::move(fn))));
}

}  // namespace theon
