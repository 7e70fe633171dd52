#pragma once
// One SPH time step's physics, over any short-range force engine with grove's
// calcForceAllAndWriteBack(kernel, psys, dinfo) (the trees in the sample, a brute-force engine
// in the tests), or over the trees' multiwalk calls (GPU):
//   computeDensity      gather pass with h iteration, repeated while a search radius was short
//   applyEquationOfState  P, c and the Balsara factor from rho, u, div v, curl v
//   computeHydroForces  symmetric pass: acceleration, du/dt, signal velocity
//   kick / drift / predict   kick-drift-kick leapfrog with a global CFL step
// GPU (doc/sph.md, "GPU"): computeDensityMultiwalk / computeHydroForcesMultiwalk run the same
// passes through a dispatch/retrieve pair whose kernel does what the CPU kernel does (the
// hand-written template); computeDensityBySums runs the density pass through a kernel that only
// sums over the neighbours at the current h (grove's GPU engine), iterating h on the host.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "density_kernel.hpp"
#include "gas_particles.hpp"
#include "grove/core/error.hpp"
#include "grove/core/list_mode.hpp"
#include "grove/domain/domain_info.hpp"
#include "hydro_kernel.hpp"
#include "sph_physics.hpp"

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

// The largest search radius a periodic box allows: r_search < L/2 on periodic axes, as the
// GPU-resident short-range tree (cuda/sph_resident.cu) takes one image per pair. Grove's CPU trees
// take larger radii (every image within reach), but one limit serves both paths.
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

inline DensityParameters densityParametersOf(const SolverParameters& p) {
  return {p.n_neighbours, p.density_tolerance};
}

// Density, h, grad-h factor, div v and |curl v| of every particle; then the equation of state.
// gather() runs one gather pass that leaves a DensityResult in every particle (copyFromForce).
// Returns the number of gather passes. A particle whose neighbour target needs h beyond its
// r_search gets r_search = search_factor * (its estimated h) and every particle is recomputed
// (the others converge in one Newton step from their h). Collective.
template <class GatherPass, class PSys>
int computeDensityWith(GatherPass&& gather, PSys& gas, const SolverParameters& p) {
  for (auto& g : gas) g.r_search = std::min(p.search_factor * g.h, p.max_search_radius);
  int pass = 0;
  for (;;) {
    ++pass;
    gather();
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

// The CPU path: the density kernel (h iteration inside) through a tree or the brute-force engine.
template <class Tree, class PSys>
int computeDensity(Tree& tree, PSys& gas, const grove::DomainInfo& dinfo, const SolverParameters& p) {
  const DensityKernel kernel(densityParametersOf(p));
  return computeDensityWith([&] { tree.calcForceAllAndWriteBack(kernel, gas, dinfo); }, gas, p);
}

template <class Tree, class PSys>
void computeHydroForces(Tree& tree, PSys& gas, const grove::DomainInfo& dinfo, const SolverParameters& p) {
  tree.calcForceAllAndWriteBack(HydroKernel({p.alpha}), gas, dinfo);
}

// ---- the GPU paths -------------------------------------------------------------------------------

// How the trees hand walks to a GPU multiwalk (grove::gpu::Multiwalk: dispatch(), dispatchPlain(),
// retrieve()).
struct MultiwalkSettings {
  int tag_max = 4;       // batches in flight
  int n_walk = 256;      // walks (groups) per batch
  bool index_form = true;  // index lists into the whole EPJ array (false: each walk's EPJs copied)
};

// One force pass of `tree` through the multiwalk `gpu`, writing the results back.
template <class Tree, class Multiwalk, class PSys>
void multiwalkPass(Tree& tree, Multiwalk& gpu, PSys& gas, const grove::DomainInfo& dinfo, const MultiwalkSettings& s,
                   grove::InteractionListMode list_mode = grove::MAKE_LIST) {
  if (s.index_form)
    tree.calcForceAllAndWriteBackMultiWalkIndex(gpu.dispatch(), gpu.retrieve(), s.tag_max, gas, dinfo, s.n_walk, true,
                                                list_mode);
  else
    tree.calcForceAllAndWriteBackMultiWalk(gpu.dispatchPlain(), gpu.retrieve(), s.tag_max, gas, dinfo, s.n_walk, true,
                                           list_mode);
}

// Template path: a multiwalk whose kernel is the CPU kernel's equal (h iteration on the device)
// takes the density kernel's place.
template <class Tree, class Multiwalk, class PSys>
int computeDensityMultiwalk(Tree& tree, Multiwalk& gpu, PSys& gas, const grove::DomainInfo& dinfo,
                            const SolverParameters& p, const MultiwalkSettings& s) {
  return computeDensityWith([&] { multiwalkPass(tree, gpu, gas, dinfo, s); }, gas, p);
}

template <class Tree, class Multiwalk, class PSys>
void computeHydroForcesMultiwalk(Tree& tree, Multiwalk& gpu, PSys& gas, const grove::DomainInfo& dinfo,
                                 const MultiwalkSettings& s) {
  multiwalkPass(tree, gpu, gas, dinfo, s);
}

// Engine path: one gather pass whose kernel only sums. The h iteration needs several sums per
// particle at changing h, and a pairwise device functor (grove's engine) sees each neighbour
// once per pass; so each pass computes every particle's DensitySums at its current h (on the
// device), the host takes one SupportSearch step per particle (the CPU kernel's own steps,
// sph_physics.hpp), and the pass repeats until every particle has converged or needs a larger
// search radius. The lists depend on r_search, not on h, so the first pass builds them
// (MAKE_LIST_FOR_REUSE) and the others reuse them (REUSE_LIST): they stay on the device, and only
// the EPI (with the new h) travel. sum_pass(list_mode) runs one pass writing every particle's
// density_sums. Returns the number of sum passes. Collective.
template <class SumPass, class PSys>
int iterateSupportRadii(SumPass&& sum_pass, PSys& gas, const DensityParameters& dp) {
  const std::size_t n = gas.size();
  std::vector<SupportSearch> search(n);
  std::vector<unsigned char> open(n, 1);
  for (std::size_t i = 0; i < n; ++i) {
    search[i] = SupportSearch::start(gas[i].h, gas[i].r_search);
    gas[i].h = search[i].h;
  }
  grove::InteractionListMode list_mode = grove::MAKE_LIST_FOR_REUSE;
  for (int passes = 1;; ++passes) {
    sum_pass(list_mode);
    list_mode = grove::REUSE_LIST;
    std::int64_t still_open = 0;
#pragma omp parallel for reduction(+ : still_open) schedule(static)
    for (std::size_t i = 0; i < n; ++i) {
      if (!open[i]) continue;
      GasParticle& g = gas[i];
      const DensitySums& sums = g.density_sums;
      const auto status = search[i].advance(sums.s0, sums.s1, neighbourTarget(g.mass, dp), dp);
      if (status == SupportSearch::kContinue) {
        g.h = search[i].h;
        ++still_open;
        continue;
      }
      open[i] = 0;
      g.copyFromForce(densityResultOf(search[i].h, status == SupportSearch::kSearchTooSmall, sums));
    }
    if (gas.comm().allreduceSum(still_open) == 0) return passes;
  }
}

// The engine path's density: computeDensity's passes, each one iterateSupportRadii. Adds the
// number of sum passes to *sum_passes when given.
template <class SumPass, class PSys>
int computeDensityBySums(SumPass&& sum_pass, PSys& gas, const SolverParameters& p, int* sum_passes = nullptr) {
  const DensityParameters dp = densityParametersOf(p);
  return computeDensityWith(
      [&] {
        const int n = iterateSupportRadii(sum_pass, gas, dp);
        if (sum_passes) *sum_passes += n;
      },
      gas, p);
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
