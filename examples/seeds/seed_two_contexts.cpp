// Seed document 001 ("Using multiple GPUs"): two matrix products, one on each of the contexts
// dev0 and dev1, in one function. Run it with a context map, e.g.
//   THEON_FLAGS="contexts=dev0->cuda0;dev1->cuda1" ./seed_two_contexts
// Without one it maps both names to the CPU. It checks both products against a plain loop
// (a sample of rows) and prints the function's explain() (where each node ran, and the transfers).
#include <theon/theon.hpp>

#include <cmath>
#include <iostream>

using namespace theon;

namespace {

double max_error(const Array& got, const Array& a, const Array& b) {
  const std::vector<float> c = got.to_vector<float>(), x = a.to_vector<float>(), y = b.to_vector<float>();
  const int64_t n = a.shape()[0];
  double worst = 0;
  for (int64_t i = 0; i < n; i += 61)  // every 61st row: enough to catch a wrong product, cheap
    for (int64_t j = 0; j < n; ++j) {
      double want = 0;
      for (int64_t k = 0; k < n; ++k) want += static_cast<double>(x[i * n + k]) * y[k * n + j];
      worst = std::max(worst, std::abs(c[i * n + j] - want) / (1 + std::abs(want)));
    }
  return worst;
}

}  // namespace

int main() {
  if (config().contexts.empty()) config().contexts = "dev0->cpu;dev1->cpu";
  const int64_t n = 1024;
  std::vector<Array> values;
  for (uint64_t seed = 1; seed <= 4; ++seed) values.push_back(Array::rand({n, n}, seed, DType::Float32));
  SharedVar v01 = shared(values[0], "v01", {.target = "dev0"});
  SharedVar v02 = shared(values[1], "v02", {.target = "dev0"});
  SharedVar v11 = shared(values[2], "v11", {.target = "dev1"});
  SharedVar v12 = shared(values[3], "v12", {.target = "dev1"});
  Function f = function({}, {tensor::dot(v01, v02), tensor::dot(v11, v12)}, {.name = "two_contexts"});
  const std::vector<Array> out = f({});
  const double e0 = max_error(out[0], values[0], values[1]), e1 = max_error(out[1], values[2], values[3]);
  std::cout << "contexts=" << config().contexts << "\n" << f.explain();
  std::cout << "largest relative error against a plain loop: dev0 " << e0 << ", dev1 " << e1 << "\n";
  return e0 < 1e-4 && e1 < 1e-4 ? 0 : 1;
}
