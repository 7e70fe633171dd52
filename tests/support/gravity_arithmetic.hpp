#pragma once
// The gravity tests' reference arithmetic: one softened pair, one multipole, and a body's direct
// sum over all others, in double precision, with the particle type they act on.
//
// In the sanitizer build (tools/run_sanitized_tests.sh) these bodies are compiled once, without
// instrumentation, in gravity_arithmetic.cpp (GROVE_TEST_ARITHMETIC_OUT_OF_LINE, set by
// tests/CMakeLists.txt): they are the tests' own arithmetic, not grove's, and under
// AddressSanitizer they took 70-95 % of the gravity and multiwalk suites' time (perf, 2026-11-26).
// Grove's arrays stay checked: the kernels' loops that read them (gravity.hpp) are instrumented.
// Elsewhere they are inline, as before.
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "grove/core/sym_mat3.hpp"
#include "grove/core/vec3.hpp"

namespace grove::testing_support {

struct AccPot {
  Vec3d acc;
  double pot = 0.0;
  void clear() { acc = {}, pot = 0.0; }
};

struct Charged {
  std::int64_t id = 0;
  double charge = 0.0;
  Vec3d pos;
  AccPot result;

  Vec3d getPos() const { return pos; }
  void setPos(const Vec3d& p) { pos = p; }
  void copyFromForce(const AccPot& f) { result = f; }
};

inline constexpr double kTestEps2 = 1e-6;

#if GROVE_TEST_ARITHMETIC_OUT_OF_LINE
void addPair(const Vec3d& d, double q, AccPot& f);
void addMultipole(const Vec3d& r, double q, const Vec3d& dipole, const SymMat3d& quad, AccPot& f);
AccPot sumOverOthers(const Charged& target, const Charged* all, std::size_t n_all);
#else
#define GROVE_TEST_ARITHMETIC_LINKAGE inline
#include "support/gravity_arithmetic_body.hpp"
#undef GROVE_TEST_ARITHMETIC_LINKAGE
#endif

}  // namespace grove::testing_support
