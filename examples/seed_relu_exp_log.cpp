// The seed document's third example: log(exp(relu(dot(x, w) + b))) on a 10000 x 10 input.
#include <theon/theon.hpp>

#include <chrono>
#include <iostream>

using namespace theon;

int main() {
  Var x = tensor::matrix("x");
  SharedVar w = shared(Array::randn({10, 5}, 1), "w");
  SharedVar b = shared(Array::randn({5}, 2), "b");
  Var y = tensor::log(tensor::exp(nnet::relu(tensor::dot(x, w) + b)));
  y.set_name("y");
  Function f = function({x}, {y}, {.name = "relu_exp_log"});

  Array x_data = Array::randn({10000, 10}, 3);
  auto t0 = std::chrono::steady_clock::now();
  std::vector<Array> out = f({x_data});
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::cout << "y.shape = " << shape_str(out[0].shape()) << ", first call " << ms << " ms\n";
  std::cout << "y[:3] = " << out[0].slice(0, 0, 3) << "\n";
  std::vector<float> v = out[0].to_vector<float>();
  size_t negatives = 0;
  for (float e : v) negatives += e < 0;
  std::cout << "negative entries after relu: " << negatives << " (expected 0)\n";
  return negatives == 0 ? 0 : 1;
}
