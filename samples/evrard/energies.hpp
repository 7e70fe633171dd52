#pragma once
// The four energies of the Evrard test, summed over all ranks (collective):
//   kinetic  sum m v^2 / 2,  thermal  sum m u,  potential  sum m phi / 2 (phi without self-term)
// and the potential energy by direct summation over all pairs, the reference for the tree's.
#include <cmath>
#include <span>
#include <vector>

#include "evrard_particles.hpp"
#include "gravity_kernel.hpp"

namespace evrard {

struct Energies {
  double kinetic = 0, thermal = 0, potential = 0;
  double total() const { return kinetic + thermal + potential; }
};

// The gravity kernel adds each particle's own softened term m * selfPotential() to its
// potential (i == j is in its list); this removes it, so pot is the potential of the others.
template <class PSys>
void removeSelfPotential(PSys& gas, const Softening& softening) {
  const double self = softening.selfPotential();
  for (EvrardParticle& p : gas) p.pot -= p.mass * self;
}

template <class PSys>
Energies energiesOf(const PSys& gas) {
  double sums[3] = {0, 0, 0};
  for (const EvrardParticle& p : gas) {
    sums[0] += 0.5 * p.mass * grove::norm2(p.vel);
    sums[1] += p.mass * p.u;
    sums[2] += 0.5 * p.mass * p.pot;
  }
  gas.comm().allreduceSum(std::span<double>(sums));
  return {sums[0], sums[1], sums[2]};
}

// W = sum over pairs i < j of m_i m_j phi(r_ij) with the kernel's softening, by direct summation:
// every rank takes its particles against all (allgathered). O(N^2 / ranks); collective.
template <class PSys>
double directPotentialEnergy(const PSys& gas, const Softening& softening) {
  std::vector<GravityEPJ> mine(gas.size());
  for (std::size_t i = 0; i < gas.size(); ++i) mine[i].copyFromFP(gas[i]);
  const std::vector<GravityEPJ> all = gas.comm().allgatherv(mine);
  const GravityKernel kernel(softening);
  double w = 0;
#pragma omp parallel for reduction(+ : w) schedule(dynamic, 16)
  for (std::size_t i = 0; i < mine.size(); ++i) {
    GravityEPI target;
    target.pos = mine[i].pos;
    GravityResult r;
    kernel(&target, 1, all.data(), static_cast<int>(all.size()), &r);
    w += 0.5 * mine[i].mass * (r.pot - mine[i].mass * softening.selfPotential());
  }
  return gas.comm().allreduceSum(w);
}

}  // namespace evrard
