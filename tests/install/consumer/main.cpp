// Built against an installed Theon (find_package(Theon) + Theon::theon): compiles and runs
// y = relu(dot(x, w) + b) on known values and checks the result; exits 0 when it is right.
#include <theon/theon.hpp>

#include <cmath>
#include <cstdio>
#include <vector>

using namespace theon;

int main() {
  Var x = tensor::fmatrix("x");
  SharedVar w = shared(Array::from_vector<float>({1, 2, 3, 4, 5, 6}, Shape{3, 2}), "w");
  SharedVar b = shared(Array::from_vector<float>({0.5f, -100.0f}, Shape{2}), "b");
  Var y = tensor::relu(tensor::dot(x, w) + b);
  Function f = function({x}, {y}, {.name = "consumer"});

  // x = [[1, 0, 2], [0, 1, 1]]: x @ w = [[11, 14], [8, 10]]; + b, relu -> [[11.5, 0], [8.5, 0]]
  std::vector<Array> out = f({Array::from_vector<float>({1, 0, 2, 0, 1, 1}, Shape{2, 3})});
  const std::vector<float> want = {11.5f, 0.0f, 8.5f, 0.0f};
  if (out.size() != 1 || out[0].dtype() != DType::Float32 || out[0].shape() != Shape{2, 2}) {
    std::fprintf(stderr, "theon_consumer: wrong output type or shape %s\n",
                 out.empty() ? "(none)" : shape_str(out[0].shape()).c_str());
    return 1;
  }
  std::vector<float> got = out[0].to_vector<float>();
  for (size_t i = 0; i < want.size(); ++i) {
    if (std::fabs(got[i] - want[i]) > 1e-5f) {
      std::fprintf(stderr, "theon_consumer: y[%zu] = %g, want %g\n", i, got[i], want[i]);
      return 1;
    }
  }
  std::printf("theon_consumer: ok, y = [[%g, %g], [%g, %g]]\n", got[0], got[1], got[2], got[3]);
  return 0;
}
