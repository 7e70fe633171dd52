// The SPH sample's physics over a brute-force neighbour engine (no trees): the kernel
// against quadrature, the h iteration and density against the lattice sum, the hydro force's
// symmetry (momentum and energy), a static box, and the exact Riemann solver against Toro's
// published star states.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numbers>

#include "brute_force_short_range.hpp"
#include "riemann_exact.hpp"
#include "shock_tube.hpp"
#include "sph_scenarios.hpp"
#include "wendland_c2.hpp"

namespace {

using namespace sph;
using namespace sph::testing;
using DensityEngine = BruteForceShortRange<DensityResult, DensityEPI, DensityEPJ>;
using HydroEngine = BruteForceShortRange<HydroResult, HydroEP, HydroEP>;

TEST(WendlandC2, IsNormalisedToOneOverItsSupport) {
  // Simpson's rule on integral_0^h 4 pi r^2 W(r, h) dr: the integrand is a polynomial of degree 7
  // on [0, h], so 2000 intervals leave only rounding.
  const double h = 0.37;
  const int n = 2000;
  double sum = 0.0;
  for (int k = 0; k <= n; ++k) {
    const double r = h * k / n, weight = (k == 0 || k == n) ? 1.0 : (k % 2 ? 4.0 : 2.0);
    sum += weight * 4.0 * std::numbers::pi * r * r * wendland_c2::value(r, h);
  }
  EXPECT_NEAR(sum * h / n / 3.0, 1.0, 1e-12);
  EXPECT_EQ(wendland_c2::value(h, h), 0.0);
  EXPECT_EQ(wendland_c2::value(1.5 * h, h), 0.0);
}

TEST(WendlandC2, GradientIsTheRadialDerivativeOverR) {
  const double h = 0.5;
  for (double r : {0.01, 0.1, 0.2, 0.3, 0.45, 0.499}) {
    const double e = 1e-6;
    const double derivative = (wendland_c2::value(r + e, h) - wendland_c2::value(r - e, h)) / (2 * e);
    EXPECT_NEAR(wendland_c2::gradientOverR(r, h) * r, derivative, 1e-7 * std::abs(derivative) + 1e-9) << "r = " << r;
  }
  EXPECT_EQ(wendland_c2::gradientOverR(0.6, h), 0.0);
}

TEST(DensityPass, LatticeDensityMeetsTheTargetAndTheLatticeSumWith64Neighbours) {
  DensityEngine engine;
  checkLatticeDensity(engine, 64, 0.7, 1.6e-2);
}

TEST(DensityPass, LatticeDensityMeetsTheTargetAndTheLatticeSumWith200Neighbours) {
  DensityEngine engine;
  checkLatticeDensity(engine, 200, 1.3, 1.4e-3);
}

TEST(DensityPass, TooSmallSearchRadiusIsRedoneUntilEveryParticleHasItsNeighbours) {
  DensityEngine engine;
  checkLatticeDensity(engine, 100, 0.5, 5e-3);
}

TEST(DensityPass, LinearVelocityFieldGivesItsDivergenceAndCurl) {
  // v = 0.1 x + omega x (x - centre): div v = 0.3, curl v = 2 omega. SPH sums reproduce them on a
  // lattice up to the kernel's lattice error, so compare at 1e-2.
  const grove::Vec3d omega{0.02, -0.03, 0.05};
  LatticeSpec spec;
  spec.n_side = 12;
  spec.h = 3.0 * spec.spacing();
  Gas gas = latticeGas(spec);
  for (auto& g : gas) {
    const grove::Vec3d c = g.pos - grove::Vec3d(0.5);
    g.vel = 0.1 * c + grove::cross(omega, c);
  }
  const auto dinfo = periodicCube(spec.side);
  DensityEngine engine;
  computeDensity(engine, gas, dinfo, parametersFor(100, dinfo));
  int checked = 0;
  for (const auto& g : gas) {
    const grove::Vec3d c = g.pos - grove::Vec3d(0.5);
    if (std::max({std::abs(c.x), std::abs(c.y), std::abs(c.z)}) > 0.5 - 1.1 * g.h) continue;  // no wrap-around jump
    EXPECT_NEAR(g.div_v, 0.3, 1e-2 * 0.3) << "particle " << g.id;
    EXPECT_NEAR(g.curl_v, 2.0 * grove::norm(omega), 1e-2 * 2.0 * grove::norm(omega)) << "particle " << g.id;
    ++checked;
  }
  EXPECT_GT(checked, 0);
}

TEST(HydroPass, StaticUniformBoxStaysStatic) {
  DensityEngine density;
  HydroEngine hydro;
  checkStaticBoxStaysStatic(density, hydro);
}

TEST(HydroPass, ConservesMomentumAndEnergyToRoundingOnADisorderedLattice) {
  DensityEngine density;
  HydroEngine hydro;
  checkConservation(density, hydro);
}

TEST(ExactRiemannSolver, ReproducesToroSodStarState) {
  // Toro (2009), table 4.3, test 1.
  const ExactRiemannSolver sod({1.0, 0.0, 1.0}, {0.125, 0.0, 0.1}, 1.4);
  EXPECT_NEAR(sod.starPressure(), 0.30313, 1e-4);
  EXPECT_NEAR(sod.starVelocity(), 0.92745, 1e-4);
  EXPECT_NEAR(sod.starDensityLeft(), 0.42632, 1e-4);
  EXPECT_NEAR(sod.starDensityRight(), 0.26557, 1e-4);
}

TEST(ExactRiemannSolver, ReproducesToroRarefactionAndStrongShockStarStates) {
  const ExactRiemannSolver two_rarefactions({1.0, -2.0, 0.4}, {1.0, 2.0, 0.4}, 1.4);  // test 2
  EXPECT_NEAR(two_rarefactions.starPressure(), 0.00189, 1e-5);
  EXPECT_NEAR(two_rarefactions.starVelocity(), 0.0, 1e-10);
  EXPECT_NEAR(two_rarefactions.starDensityLeft(), 0.02185, 1e-5);
  const ExactRiemannSolver strong({1.0, 0.0, 1000.0}, {1.0, 0.0, 0.01}, 1.4);  // test 3
  EXPECT_NEAR(strong.starPressure(), 460.894, 1e-3);
  EXPECT_NEAR(strong.starVelocity(), 19.5975, 1e-4);
  EXPECT_NEAR(strong.starDensityLeft(), 0.57506, 1e-5);
  EXPECT_NEAR(strong.starDensityRight(), 5.99924, 1e-5);
}

TEST(ExactRiemannSolver, SodSolutionObeysRankineHugoniotAndIsContinuousAcrossTheFan) {
  const GasState left{1.0, 0.0, 1.0}, right{0.125, 0.0, 0.1};
  const ExactRiemannSolver sod(left, right, 1.4);
  // Locate the shock by bisection on the sampled density, then check mass and momentum flux.
  double lo = sod.starVelocity(), hi = 5.0;
  for (int k = 0; k < 200; ++k) {
    const double mid = 0.5 * (lo + hi);
    (sod.sample(mid).density > 0.5 * (right.density + sod.starDensityRight()) ? lo : hi) = mid;
  }
  const double s = 0.5 * (lo + hi);
  const GasState behind = sod.sample(s - 1e-9), ahead = sod.sample(s + 1e-9);
  EXPECT_NEAR(s, 1.75216, 1e-5);
  const double mass_flux_behind = behind.density * (behind.velocity - s), mass_flux_ahead = ahead.density * (ahead.velocity - s);
  EXPECT_NEAR(mass_flux_behind, mass_flux_ahead, 1e-12);
  EXPECT_NEAR(behind.pressure + mass_flux_behind * (behind.velocity - s), ahead.pressure + mass_flux_ahead * (ahead.velocity - s), 1e-12);
  // The fan joins the left state at its head and the star state at its tail.
  const double c_left = std::sqrt(1.4), head = -c_left;
  const double tail = sod.starVelocity() - c_left * std::pow(sod.starPressure(), 0.4 / 2.8);
  EXPECT_NEAR(sod.sample(head + 1e-10).density, left.density, 1e-8);
  EXPECT_NEAR(sod.sample(tail - 1e-10).density, sod.starDensityLeft(), 1e-8);
  EXPECT_NEAR(sod.sample(tail - 1e-10).pressure, sod.starPressure(), 1e-8);
  EXPECT_EQ(sod.sample(-10.0).density, left.density);
  EXPECT_EQ(sod.sample(10.0).density, right.density);
}

TEST(ShockTube, LatticesHaveEqualMassesAndTheSodDensities) {
  const ShockTube tube(16);
  EXPECT_EQ(tube.count(), 16 * 16 * 16 * 9 / 128);
  EXPECT_EQ(ShockTube(72).count(), 26244);
  double left_volume = 0.5 * tube.box.y * tube.box.z;
  EXPECT_NEAR(tube.countLeft() * tube.particleMass() / left_volume, 1.0, 1e-12);
  EXPECT_NEAR(tube.countRight() * tube.particleMass() / left_volume, 0.125, 1e-12);
  grove::Boxd bounds = grove::Boxd::empty();
  for (std::int64_t id = 0; id < tube.count(); ++id) {
    const GasParticle p = tube.particle(id, 64);
    ASSERT_TRUE((grove::Boxd{{0, 0, 0}, tube.box}).contains(p.pos)) << "particle " << id;
    EXPECT_NEAR(p.u, p.pos.x < 0.5 ? 2.5 : 2.0, 1e-15);
    bounds.merge(p.pos);
  }
  EXPECT_NEAR(bounds.low.x, 0.5 * tube.spacingLeft(), 1e-15);
  EXPECT_NEAR(bounds.high.x, 1.0 - tube.spacingLeft(), 1e-15);
  EXPECT_THROW(ShockTube(20), grove::Error);
}

}  // namespace
