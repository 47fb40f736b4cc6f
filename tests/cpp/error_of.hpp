// error_of<E>(fn): the message of the E that fn throws, for tests that check what an error
// says; "<another exception> ..." or "<no error>" otherwise (so the check on the text fails).
#pragma once
#include <exception>
#include <string>

namespace theon::testing_util {

template <class E, class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("<another exception> ") + e.what();
  }
  return "<no error>";
}

}  // namespace theon::testing_util
