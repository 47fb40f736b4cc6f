// stderr_of(fn): what fn writes to std::cerr (Theon's warnings), captured, for tests that
// check a warning is given (once) and what it says.
#pragma once
#include <iostream>
#include <sstream>
#include <string>

namespace theon::testing_util {

template <class F>
std::string stderr_of(F&& fn) {
  std::stringstream captured;
  auto* old = std::cerr.rdbuf(captured.rdbuf());
  try {
    fn();
  } catch (...) {
    std::cerr.rdbuf(old);
    throw;
  }
  std::cerr.rdbuf(old);
  return captured.str();
}

}  // namespace theon::testing_util
