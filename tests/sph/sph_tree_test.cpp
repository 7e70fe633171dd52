// The SPH passes through grove's short-range trees (Gather for the density, Symmetry for the
// hydro force), at every rank count of the MPI suite: the brute-force engine's scenarios again,
// and the trees' results against the brute-force engine particle by particle.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "brute_force_short_range.hpp"
#include "sph_scenarios.hpp"
#include "sph/sph_trees.hpp"

namespace {

using namespace sph;
using namespace sph::testing;

TEST(SphThroughTrees, LatticeDensityMeetsTheTargetAndTheLatticeSum) {
  DensityTree tree(1000, 0.0, 8, 64);
  checkLatticeDensity(tree, 200, 1.3, 1.4e-3);
  checkLatticeDensity(tree, 100, 0.5, 5e-3);
}

TEST(SphThroughTrees, StaticUniformBoxStaysStatic) {
  DensityTree density(1000, 0.0, 8, 64);
  HydroTree hydro(1000, 0.0, 8, 64);
  checkStaticBoxStaysStatic(density, hydro);
}

TEST(SphThroughTrees, HydroForceConservesMomentumAndEnergyToRounding) {
  DensityTree density(1000, 0.0, 8, 64);
  HydroTree hydro(1000, 0.0, 8, 64);
  checkConservation(density, hydro);
}

TEST(SphThroughTrees, DensityAndHydroForceEqualTheBruteForceReference) {
  Gas gas = latticeGas(disorderedSpec());
  auto dinfo = periodicCube(1.0);
  distribute(gas, dinfo);
  Gas reference;
  reference.add(gas.particles());
  const auto p = parametersFor(64, dinfo);
  DensityTree density_tree(gas.size(), 0.0, 8, 32);
  HydroTree hydro_tree(gas.size(), 0.0, 8, 32);
  computeDensity(density_tree, gas, dinfo, p);
  computeHydroForces(hydro_tree, gas, dinfo, p);
  BruteForceShortRange<DensityResult, DensityEPI, DensityEPJ> density_reference;
  BruteForceShortRange<HydroResult, HydroEP, HydroEP> hydro_reference;
  computeDensity(density_reference, reference, dinfo, p);
  computeHydroForces(hydro_reference, reference, dinfo, p);

  double acc_scale = 0.0, du_scale = 0.0, div_scale = 0.0;
  for (const auto& g : reference) {
    acc_scale = std::max(acc_scale, grove::norm(g.acc));
    du_scale = std::max(du_scale, std::abs(g.du_dt));
    div_scale = std::max(div_scale, std::abs(g.div_v) + g.curl_v);
  }
  ASSERT_EQ(gas.size(), reference.size());
  for (std::size_t i = 0; i < gas.size(); ++i) {
    const GasParticle &t = gas[i], &r = reference[i];
    ASSERT_EQ(t.id, r.id);
    EXPECT_NEAR(t.h, r.h, 1e-10 * r.h) << "particle " << r.id;
    EXPECT_NEAR(t.dens, r.dens, 1e-10 * r.dens) << "particle " << r.id;
    EXPECT_NEAR(t.grad_h, r.grad_h, 1e-10) << "particle " << r.id;
    EXPECT_NEAR(t.div_v, r.div_v, 1e-10 * div_scale) << "particle " << r.id;
    EXPECT_NEAR(t.curl_v, r.curl_v, 1e-10 * div_scale) << "particle " << r.id;
    EXPECT_EQ(t.n_neighbours, r.n_neighbours) << "particle " << r.id;
    EXPECT_LT(grove::norm(t.acc - r.acc), 1e-10 * acc_scale) << "particle " << r.id;
    EXPECT_NEAR(t.du_dt, r.du_dt, 1e-10 * du_scale) << "particle " << r.id;
    EXPECT_NEAR(t.v_signal, r.v_signal, 1e-12 * r.v_signal) << "particle " << r.id;
  }
}

}  // namespace
