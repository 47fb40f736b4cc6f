// The seed document's first example: y = dot(x, w) + b, compiled and run on the CPU.
#include <theon/theon.hpp>

#include <iostream>

using namespace theon;

int main() {
  Var x = tensor::matrix("x");
  SharedVar w = shared(Array::randn({10, 5}, /*seed=*/1), "w");
  SharedVar b = shared(Array::randn({5}, 2), "b");
  Var y = tensor::dot(x, w) + b;
  y.set_name("y");

  Function f = function({x}, {y}, {.name = "dot_bias"});
  std::vector<Array> out = f({Array::randn({100, 10}, 3)});
  std::cout << "y.shape = " << shape_str(out[0].shape()) << "\n";
  std::cout << "first row: " << out[0].slice(0, 0, 1) << "\n\n";
  std::cout << debugprint(f) << "\n" << f.explain();

  // An update: b grows by one on each call, committed after the outputs are computed.
  Function g = function({x}, {y}, {.updates = {{b, b + 1.0}}, .mode = "FAST_RUN", .name = "dot_bias_step"});
  g({Array::randn({4, 10}, 4)});
  std::cout << "\nb after one update: " << b.get_value() << "\n";
  return 0;
}
