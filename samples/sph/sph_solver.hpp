#pragma once
// One SPH time step's physics, over any short-range force engine with grove's
// calcForceAllAndWriteBack(kernel, psys, dinfo) (the trees in the sample, a brute-force engine
// in the tests):
//   computeDensity      gather pass with h iteration, repeated while a search radius was short
//   applyEquationOfState  P, c and the Balsara factor from rho, u, div v, curl v
//   computeHydroForces  symmetric pass: acceleration, du/dt, signal velocity
//   kick / drift / predict   kick-drift-kick leapfrog with a global CFL step
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "density_kernel.hpp"
#include "gas_particles.hpp"
#include "grove/core/error.hpp"
#include "grove/domain/domain_info.hpp"
#include "hydro_kernel.hpp"

namespace sph {

struct SolverParameters {
  double gamma = 1.4;
  double n_neighbours = 200;
  double search_factor = 1.1;  // r_search = search_factor * h (the h of the last pass)
  double max_search_radius = std::numeric_limits<double>::infinity();  // below half the periodic box
  double alpha = 1.0;
  double cfl = 0.3;            // dt = cfl * h / v_signal (h the support radius)
  int max_density_passes = 10;
  double density_tolerance = 1e-9;
};

// The largest search radius a periodic box allows (grove needs r_search < L/2 on periodic axes).
inline double maxSearchRadius(const grove::DomainInfo& dinfo) {
  double limit = std::numeric_limits<double>::infinity();
  const grove::Boxd root = dinfo.getPosRootDomain();
  for (int a = 0; a < 3; ++a)
    if (grove::isPeriodic(dinfo.getBoundaryCondition(), a))
      limit = std::min(limit, 0.499 * (root.high[static_cast<std::size_t>(a)] - root.low[static_cast<std::size_t>(a)]));
  return limit;
}

template <class PSys>
void applyEquationOfState(PSys& gas, const SolverParameters& p) {
#pragma omp parallel for schedule(static)
  for (std::size_t i = 0; i < gas.size(); ++i) {
    GasParticle& g = gas[i];
    g.pres = (p.gamma - 1.0) * g.dens * g.u;
    g.sound = std::sqrt(p.gamma * g.pres / g.dens);
    const double div = std::abs(g.div_v);
    g.balsara = div / (div + g.curl_v + 1e-4 * g.sound / g.h);
  }
}

// Density, h, grad-h factor, div v and |curl v| of every particle; then the equation of state.
// Returns the number of gather passes. A particle whose neighbour target needs h beyond its
// r_search gets r_search = search_factor * (its estimated h) and every particle is recomputed
// (the others converge in one Newton step from their h). Collective.
template <class Tree, class PSys>
int computeDensity(Tree& tree, PSys& gas, const grove::DomainInfo& dinfo, const SolverParameters& p) {
  const DensityKernel kernel({p.n_neighbours, p.density_tolerance});
  for (auto& g : gas) g.r_search = std::min(p.search_factor * g.h, p.max_search_radius);
  int pass = 0;
  for (;;) {
    ++pass;
    tree.calcForceAllAndWriteBack(kernel, gas, dinfo);
    std::int64_t short_searches = 0, at_limit = -1;
    for (auto& g : gas) {
      if (!g.search_too_small) continue;
      ++short_searches;
      if (g.r_search >= p.max_search_radius) at_limit = g.id;
      g.r_search = std::min(p.search_factor * g.h, p.max_search_radius);
    }
    const auto& comm = gas.comm();
    short_searches = comm.allreduceSum(short_searches);
    if (short_searches == 0) break;
    at_limit = comm.allreduceMax(at_limit);
    grove::require(at_limit < 0, "sph::computeDensity",
                   "particle {} needs a smoothing length beyond the largest search radius {} (half the periodic box); "
                   "use more particles or fewer neighbours",
                   at_limit, p.max_search_radius);
    grove::require(pass < p.max_density_passes, "sph::computeDensity",
                   "{} particles still lack neighbours after {} passes", short_searches, pass);
  }
  applyEquationOfState(gas, p);
  return pass;
}

template <class Tree, class PSys>
void computeHydroForces(Tree& tree, PSys& gas, const grove::DomainInfo& dinfo, const SolverParameters& p) {
  tree.calcForceAllAndWriteBack(HydroKernel({p.alpha}), gas, dinfo);
}

// Collective: the global time step, min over particles of cfl * h / v_signal.
template <class PSys>
double globalTimeStep(const PSys& gas, const SolverParameters& p) {
  double dt = std::numeric_limits<double>::infinity();
  for (const auto& g : gas) dt = std::min(dt, p.cfl * g.h / g.v_signal);
  return gas.comm().allreduceMin(dt);
}

// First half of kick-drift-kick: half kick to t + dt/2, drift to t + dt, and predicted v, u at
// t + dt for the force calculation.
template <class PSys>
void kickDriftPredict(PSys& gas, double dt) {
#pragma omp parallel for schedule(static)
  for (std::size_t i = 0; i < gas.size(); ++i) {
    GasParticle& g = gas[i];
    g.vel_half = g.vel + (0.5 * dt) * g.acc;
    g.u_half = g.u + 0.5 * dt * g.du_dt;
    g.pos += dt * g.vel_half;
    g.vel += dt * g.acc;
    g.u += dt * g.du_dt;
  }
}

// Second half kick, with the accelerations at t + dt.
template <class PSys>
void finalKick(PSys& gas, double dt) {
#pragma omp parallel for schedule(static)
  for (std::size_t i = 0; i < gas.size(); ++i) {
    GasParticle& g = gas[i];
    g.vel = g.vel_half + (0.5 * dt) * g.acc;
    g.u = g.u_half + 0.5 * dt * g.du_dt;
  }
}

}  // namespace sph
