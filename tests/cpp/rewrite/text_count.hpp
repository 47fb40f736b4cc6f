// Counting occurrences in debugprint text: the rewrite tests' before/after checks.
#pragma once
#include <cstddef>
#include <string>

namespace theon::testing {

inline size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

}  // namespace theon::testing
