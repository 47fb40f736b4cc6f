// Harness cases for shape and indexing ops (reshape, concatenate, subtensor, ...).
#include "harness.hpp"

namespace theon::testing {

void add_shape_cases(std::vector<Case>&) {}

}  // namespace theon::testing
