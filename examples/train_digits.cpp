// Trains logistic regression and an MLP (64 -> 128 -> 10, ReLU) on the handwritten digits
// data set with plain minibatch SGD, Theano style: the data live in shared variables, a
// minibatch index selects rows through `givens`, and `updates` apply the SGD step.
//
//   train_digits [--epochs N] [--model logreg|mlp|both] [--check ACCURACY] [--data PATH]
//
// --check makes the program fail unless the MLP's held-out accuracy reaches ACCURACY and
// its training loss fell (the test suite runs it that way with fewer epochs).
#include <theon/theon.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <numeric>
#include <random>
#include <sstream>
#include <string>

using namespace theon;

#ifndef THEON_DATA_DIR
#define THEON_DATA_DIR "data"
#endif

namespace {

struct Dataset {
  std::vector<float> x;  // n x 64, scaled to [0, 1]
  std::vector<int32_t> y;
  int64_t n = 0;
};

Dataset load_digits(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path + " (run from the repository root or pass --data)");
  Dataset d;
  std::string line;
  while (std::getline(in, line)) {
    std::stringstream ss(line);
    std::string cell;
    std::vector<float> row;
    while (std::getline(ss, cell, ',')) row.push_back(std::stof(cell));
    if (row.size() != 65) throw std::runtime_error("malformed line in " + path);
    for (int i = 0; i < 64; ++i) d.x.push_back(row[i] / 16.0f);
    d.y.push_back(static_cast<int32_t>(row[64]));
    ++d.n;
  }
  return d;
}

// Rows `idx` of a dataset as Arrays.
std::pair<Array, Array> take_rows(const Dataset& d, const std::vector<int64_t>& idx) {
  std::vector<float> x;
  std::vector<int32_t> y;
  for (int64_t i : idx) {
    x.insert(x.end(), d.x.begin() + i * 64, d.x.begin() + (i + 1) * 64);
    y.push_back(d.y[i]);
  }
  return {Array::from_vector<float>(x, Shape{static_cast<int64_t>(idx.size()), 64}), Array::from_vector<int32_t>(y)};
}

Array scaled_randn(const Shape& shape, uint64_t seed, float scale) {
  std::vector<float> v = Array::randn(shape, seed, DType::Float32).to_vector<float>();
  for (float& e : v) e *= scale;
  return Array::from_vector<float>(v, shape);
}

void progress(const std::string& model, int epoch, int epochs, double loss, double acc, double seconds) {
  const int width = 24;
  int filled = (epoch * width) / epochs;
  std::printf("%-7s epoch %3d/%-3d [%s%s] loss %.4f  val acc %.2f%%  %.1fs\n", model.c_str(), epoch, epochs,
              std::string(filled, '#').c_str(), std::string(width - filled, '.').c_str(), loss, acc * 100, seconds);
  std::fflush(stdout);
}

struct Result {
  double first_loss = 0, last_loss = 0, accuracy = 0;
};

Result train(const std::string& model, const Dataset& data, int epochs) {
  // Fixed-seed 80/20 split.
  std::vector<int64_t> order(data.n);
  std::iota(order.begin(), order.end(), 0);
  std::mt19937_64 rng(1234);
  std::shuffle(order.begin(), order.end(), rng);
  const int64_t n_train = data.n * 8 / 10;
  std::vector<int64_t> train_idx(order.begin(), order.begin() + n_train), test_idx(order.begin() + n_train, order.end());
  auto [x_test, y_test] = take_rows(data, test_idx);

  const int64_t batch = 32;
  const double lr = model == "mlp" ? 0.1 : 0.5;
  SharedVar X = shared(Array::zeros({n_train, 64}, DType::Float32), "X");
  SharedVar Y = shared(Array::zeros({n_train}, DType::Int32), "Y");

  Var x = tensor::fmatrix("x");
  Var y = tensor::ivector("y");
  std::vector<SharedVar> params;
  Var logits;
  if (model == "mlp") {
    SharedVar w1 = shared(scaled_randn({64, 128}, 1, std::sqrt(2.0f / 64)), "w1");
    SharedVar b1 = shared(Array::zeros({128}, DType::Float32), "b1");
    SharedVar w2 = shared(scaled_randn({128, 10}, 2, std::sqrt(1.0f / 128)), "w2");
    SharedVar b2 = shared(Array::zeros({10}, DType::Float32), "b2");
    Var h = nnet::relu(tensor::dot(x, w1) + b1);
    logits = tensor::dot(h, w2) + b2;
    params = {w1, b1, w2, b2};
  } else {
    SharedVar w = shared(Array::zeros({64, 10}, DType::Float32), "w");
    SharedVar b = shared(Array::zeros({10}, DType::Float32), "b");
    logits = tensor::dot(x, w) + b;
    params = {w, b};
  }
  Var p = nnet::softmax(logits);
  Var loss = tensor::mean(nnet::categorical_crossentropy(p, y));
  std::vector<Var> wrt(params.begin(), params.end());
  std::vector<Var> grads = grad(loss, wrt);
  FunctionOptions step_opts;
  for (size_t k = 0; k < params.size(); ++k) step_opts.updates.push_back({params[k], params[k] - lr * grads[k]});
  Var i = tensor::lscalar("i");
  step_opts.givens = {{x, X[{Slice{i * batch, (i + 1) * batch}}]}, {y, Y[{Slice{i * batch, (i + 1) * batch}}]}};
  step_opts.name = model + "_sgd_step";
  Function step = function({i}, {loss}, step_opts);
  Function predict = function({x}, {tensor::argmax(p, 1)}, {.name = model + "_predict"});

  Result r;
  const int64_t n_batches = n_train / batch;
  auto t0 = std::chrono::steady_clock::now();
  for (int epoch = 1; epoch <= epochs; ++epoch) {
    std::shuffle(train_idx.begin(), train_idx.end(), rng);
    auto [x_train, y_train] = take_rows(data, train_idx);
    X.set_value(x_train, /*borrow=*/true);
    Y.set_value(y_train, /*borrow=*/true);
    double total = 0;
    for (int64_t b = 0; b < n_batches; ++b) total += step({Array::scalar(static_cast<double>(b), DType::Int64)})[0].item();
    double mean_loss = total / n_batches;
    std::vector<int64_t> pred = predict({x_test})[0].to_vector<int64_t>();
    std::vector<int32_t> truth = y_test.to_vector<int32_t>();
    int64_t correct = 0;
    for (size_t k = 0; k < pred.size(); ++k) correct += pred[k] == truth[k];
    r.accuracy = static_cast<double>(correct) / static_cast<double>(pred.size());
    if (epoch == 1) r.first_loss = mean_loss;
    r.last_loss = mean_loss;
    progress(model, epoch, epochs, mean_loss, r.accuracy,
             std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::printf("%s: held-out accuracy %.2f%% on %zu images\n\n", model.c_str(), r.accuracy * 100, test_idx.size());
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  int epochs = 30;
  std::string model = "both", path = std::string(THEON_DATA_DIR) + "/digits.csv";
  double check = -1;
  for (int a = 1; a < argc; ++a) {
    std::string arg = argv[a];
    auto next = [&]() -> std::string {
      if (a + 1 >= argc) throw std::runtime_error(arg + " needs a value");
      return argv[++a];
    };
    if (arg == "--epochs") epochs = std::stoi(next());
    else if (arg == "--model") model = next();
    else if (arg == "--check") check = std::stod(next());
    else if (arg == "--data") path = next();
    else {
      std::cerr << "usage: train_digits [--epochs N] [--model logreg|mlp|both] [--check ACCURACY] [--data PATH]\n";
      return 2;
    }
  }
  try {
    Dataset data = load_digits(path);
    std::printf("digits: %lld images of 8x8 pixels, 10 classes (80/20 split, seed 1234)\n\n",
                static_cast<long long>(data.n));
    auto t0 = std::chrono::steady_clock::now();
    if (model == "logreg" || model == "both") train("logreg", data, epochs);
    Result mlp;
    if (model == "mlp" || model == "both") mlp = train("mlp", data, epochs);
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("total time %.1f s\n", seconds);
    if (check >= 0) {
      bool ok = mlp.accuracy >= check && mlp.last_loss < mlp.first_loss;
      std::printf("check: MLP accuracy %.2f%% (bar %.2f%%), loss %.4f -> %.4f: %s\n", mlp.accuracy * 100, check * 100,
                  mlp.first_loss, mlp.last_loss, ok ? "passed" : "FAILED");
      return ok ? 0 : 1;
    }
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "train_digits: " << e.what() << "\n";
    return 1;
  }
}
