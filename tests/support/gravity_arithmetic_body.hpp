// The bodies of gravity_arithmetic.hpp's functions, included there (inline) or by
// gravity_arithmetic.cpp (out of line, uninstrumented); GROVE_TEST_ARITHMETIC_LINKAGE says which.
// No include guard: it is included inside namespace grove::testing_support.

// acc += q d / r^3, pot -= q / r for d = x_j - x_i, with Plummer softening; d = 0 (the body itself,
// or a coincident one) adds nothing.
GROVE_TEST_ARITHMETIC_LINKAGE void addPair(const Vec3d& d, double q, AccPot& f) {
  const double r2 = norm2(d);
  if (r2 == 0.0) return;
  const double r_inv = 1.0 / std::sqrt(r2 + kTestEps2);
  f.acc += (q * r_inv * r_inv * r_inv) * d;
  f.pot -= q * r_inv;
}

// Expansion about the superparticle's centre p with dipole D and raw second moment Q:
// phi(r) = -q/r - D.r/r^3 - (3 rQr - r^2 trQ) / (2 r^5), r = x - p.
GROVE_TEST_ARITHMETIC_LINKAGE void addMultipole(const Vec3d& r, double q, const Vec3d& dipole, const SymMat3d& quad,
                                                AccPot& f) {
  const double r2 = norm2(r) + kTestEps2, r_inv = 1.0 / std::sqrt(r2);
  const double r3 = r_inv * r_inv * r_inv, r5 = r3 * r_inv * r_inv, r7 = r5 * r_inv * r_inv;
  const Vec3d qr = quad * r;
  const double rqr = dot(r, qr), dr = dot(dipole, r), tr = quad.trace();
  f.pot += -q * r_inv - dr * r3 - 1.5 * rqr * r5 + 0.5 * tr * r3;
  f.acc += -q * r3 * r + dipole * r3 - 3.0 * dr * r5 * r + 3.0 * r5 * qr - 7.5 * rqr * r7 * r + 1.5 * tr * r5 * r;
}

// The direct sum on `target` over every body in all[0, n_all) but itself (by id).
GROVE_TEST_ARITHMETIC_LINKAGE AccPot sumOverOthers(const Charged& target, const Charged* all, std::size_t n_all) {
  AccPot f;
  for (std::size_t j = 0; j < n_all; ++j)
    if (all[j].id != target.id) addPair(all[j].pos - target.pos, all[j].charge, f);
  return f;
}
