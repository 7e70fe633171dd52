// gravity_arithmetic.hpp's bodies out of line: built only into the sanitizer build's test main,
// with the sanitizers off for this file (tests/CMakeLists.txt).
#include "support/gravity_arithmetic.hpp"

#if !GROVE_TEST_ARITHMETIC_OUT_OF_LINE
#error "gravity_arithmetic.cpp is built only with GROVE_TEST_ARITHMETIC_OUT_OF_LINE=1"
#endif

namespace grove::testing_support {
#define GROVE_TEST_ARITHMETIC_LINKAGE
#include "support/gravity_arithmetic_body.hpp"
#undef GROVE_TEST_ARITHMETIC_LINKAGE
}  // namespace grove::testing_support
