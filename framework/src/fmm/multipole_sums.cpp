// grove::fmm::MultiIndexSet's P2M and M2M (grove/fmm/cartesian_expansion.hpp), in a file of their
// own: it is compiled without contraction into fused multiply-adds (framework/CMakeLists.txt), so
// that FmmTree's multipoles, built with them, are bit for bit those DeviceFarField::buildTree
// builds on a GPU with the same unfused operations, whatever the host's FPU. The rest of
// cartesian_expansion.cpp keeps its fused multiply-adds (the batched M2L's AVX2/FMA clone).
#include <array>

#include "grove/fmm/cartesian_expansion.hpp"

namespace grove::fmm {

void MultiIndexSet::addPointMultipole(const Vec3d& d, double m, std::span<double> multipole) const {
  std::array<double, kMaxCoefficients> pw;
  powers(d, order_, pw);
  for (int i = 0; i < size(); ++i) multipole[static_cast<std::size_t>(i)] += m * pw[static_cast<std::size_t>(i)];
}

void MultiIndexSet::shiftMultipole(std::span<const double> child, const Vec3d& s, std::span<double> parent) const {
  std::array<double, kMaxCoefficients> pw;
  powers(s, order_, pw);
  for (const Term& t : m2m_) parent[t.target] += t.weight * child[t.first] * pw[t.second];
}

}  // namespace grove::fmm
