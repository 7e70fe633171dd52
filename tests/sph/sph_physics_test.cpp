// The SPH sample's physics over a brute-force neighbour engine (no trees): the kernel
// against quadrature, the h iteration and density against the lattice sum, the hydro force's
// symmetry (momentum and energy), a static box, one pair against the force written out by hand,
// and the exact Riemann solver against Toro's published star states.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numbers>

#include "brute_force_short_range.hpp"
#include "riemann_exact.hpp"
#include "shock_tube.hpp"
#include "sph_scenarios.hpp"
#include "sph/wendland_c2.hpp"

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

// ---- one pair by hand ----------------------------------------------------------------------------

// One particle of the pair, in the quantities hydro_kernel.hpp's equations are written in.
struct PairSide {
  grove::Vec3d pos, vel;
  double m, rho, P, f, c, B, h;  // mass, density, pressure, grad-h factor, sound speed, Balsara, support
};

// dW/dr of W(r, H) = 21 / (2 pi H^3) (1 - r/H)^4 (1 + 4 r/H), differentiated by hand:
// 21 / (2 pi H^4) [4 (1 - q)^4 - 4 (1 - q)^3 (1 + 4 q)] = -210 r (H - r)^3 / (pi H^8), zero for r >= H.
double kernelSlope(double r, double H) {
  return r < H ? -210.0 * r * std::pow(H - r, 3) / (std::numbers::pi * std::pow(H, 8)) : 0.0;
}

// The force on a from b, from the equations as hydro_kernel.hpp states them (grad-h pressure
// force, Monaghan's viscosity with the Balsara switch), written out here term by term:
//   dv_a/dt = -m_b [ f_a P_a/rho_a^2 grad W(h_a) + f_b P_b/rho_b^2 grad W(h_b) + Pi_ab grad W_mean ]
//   du_a/dt =  m_b [ f_a P_a/rho_a^2 grad W(h_a) + Pi_ab grad W_mean / 2 ] . v_ab
// with grad W(h) = dW/dr (x_a - x_b) / r.
HydroResult pairByHand(const PairSide& a, const PairSide& b, double alpha) {
  const grove::Vec3d x = a.pos - b.pos, v = a.vel - b.vel;
  const double r = grove::norm(x);
  const grove::Vec3d grad_a = (kernelSlope(r, a.h) / r) * x, grad_b = (kernelSlope(r, b.h) / r) * x;
  const grove::Vec3d grad_mean = 0.5 * (grad_a + grad_b);
  const double w = std::min(grove::dot(v, x), 0.0) / r;  // approaching: w < 0
  const double v_sig = a.c + b.c - 3.0 * w;
  const double pi_ab = -0.5 * alpha * v_sig * w * (0.5 * (a.B + b.B)) / (0.5 * (a.rho + b.rho));
  const double pa = a.f * a.P / (a.rho * a.rho), pb = b.f * b.P / (b.rho * b.rho);
  HydroResult out;
  out.acc = -b.m * (pa * grad_a + pb * grad_b + pi_ab * grad_mean);
  out.du_dt = b.m * grove::dot(pa * grad_a + 0.5 * pi_ab * grad_mean, v);
  out.v_signal = v_sig;
  return out;
}

HydroEP hydroEPOf(const PairSide& s) {
  GasParticle g;
  g.pos = s.pos, g.vel = s.vel, g.mass = s.m, g.dens = s.rho, g.pres = s.P, g.grad_h = s.f, g.sound = s.c;
  g.balsara = s.B, g.h = s.h;
  HydroEP e;
  e.copyFromFP(g);
  return e;
}

// The hydro kernel on two particles against the pair force by hand, on both particles: close
// and approaching (inside both supports, viscosity on), then receding with r between the two
// supports (only the larger one's kernel term, no viscosity). Agreement to rounding (measured:
// 1.8e-16 relative on the accelerations, 3.1e-16 on du/dt; the bound 1e-13); a wrong factor or
// sign in the pressure or viscous term, on the acceleration or on du/dt, fails.
TEST(HydroPass, OnePairEqualsTheForceWrittenOutByHand) {
  const double alpha = 1.0;
  const PairSide i{{0.1, 0.2, 0.3}, {0.5, -0.2, 0.1}, 0.8, 1.3, 0.9, 0.95, 1.1, 0.7, 0.25};
  const PairSide j_close{i.pos + grove::Vec3d{0.07, -0.05, 0.04}, {-0.3, 0.1, 0.2}, 1.1, 0.6, 0.4, 1.05, 0.8, 0.4, 0.18};
  PairSide j_far = j_close;
  j_far.pos = i.pos + grove::Vec3d{0.15, 0.1, -0.08};  // r = 0.197: h_j = 0.18 < r < h_i = 0.25
  j_far.vel = i.vel + grove::Vec3d{0.2, 0.3, -0.1};     // receding: (v_j - v_i) . (x_j - x_i) > 0
  for (const auto& [j, what] : {std::pair{j_close, "close, approaching"}, std::pair{j_far, "between the supports, receding"}}) {
    const HydroEP pair[2] = {hydroEPOf(i), hydroEPOf(j)};
    HydroResult got[2];
    HydroKernel({alpha})(pair, 2, pair, 2, got);  // each particle's list holds itself too
    const HydroResult want[2] = {pairByHand(i, j, alpha), pairByHand(j, i, alpha)};
    for (int k = 0; k < 2; ++k) {
      SCOPED_TRACE(::testing::Message() << what << ", particle " << k);
      ASSERT_GT(grove::norm(want[k].acc), 0.0);
      EXPECT_LT(grove::norm(got[k].acc - want[k].acc), 1e-13 * grove::norm(want[k].acc));
      EXPECT_NEAR(got[k].du_dt, want[k].du_dt, 1e-13 * std::abs(want[k].du_dt));
      EXPECT_NEAR(got[k].v_signal, want[k].v_signal, 1e-15 * want[k].v_signal);
    }
    // Physics the hand formula must obey too: equal and opposite momentum changes, and with no
    // viscosity the pressure pushes the particles apart.
    EXPECT_LT(grove::norm(i.m * got[0].acc + j.m * got[1].acc), 1e-14 * i.m * grove::norm(got[0].acc));
    if (grove::dot(i.vel - j.vel, i.pos - j.pos) > 0.0) EXPECT_GT(grove::dot(got[0].acc, i.pos - j.pos), 0.0);
  }
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
