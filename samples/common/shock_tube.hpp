#pragma once
// The 3-D Sod shock tube in the periodic box [0, 1) x [0, 1/8) x [0, 1/8): left half (x < 0.5)
// rho = 1, P = 1, right half rho = 0.125, P = 0.1, at rest, gamma = 1.4. Equal-mass particles on
// two cubic lattices, the right one twice as coarse (density ratio 8 = 2^3): nx planes across
// the left half, nx/2 across the right, nx/4 and nx/8 across y and z. Total nx^3 * 9 / 128
// particles (nx = 72: 26,244).
//
// The periodic box has a second interface at x = 0 = 1, a mirror image of the first. Its waves
// reach the compared window 0.25 <= x < 0.75 after t = 0.25 / 1.752 = 0.143 (its shock, moving
// to -x at the Sod shock speed 1.752); the waves of x = 0.5 stay inside the window until
// t = 0.25 / 1.752 as well (shock at x = 0.5 + 1.752 t, rarefaction head at 0.5 - 1.183 t). So
// profiles are compared in that window up to t = 0.143; the default end time is 0.12.
#include <array>
#include <cmath>
#include <cstdint>
#include <numbers>
#include <span>
#include <vector>

#include "sph/gas_particles.hpp"
#include "grove/core/error.hpp"
#include "riemann_exact.hpp"

namespace sph {

struct ShockTube {
  int nx = 72;
  double gamma = 1.4;
  GasState left{1.0, 0.0, 1.0}, right{0.125, 0.0, 0.1};
  Vec3d box{1.0, 0.125, 0.125};
  double interface_x = 0.5;
  double window_low = 0.25, window_high = 0.75;

  explicit ShockTube(int nx_ = 72, double gamma_ = 1.4) : nx(nx_), gamma(gamma_) {
    grove::require(nx >= 8 && nx % 8 == 0, "ShockTube", "nx must be a positive multiple of 8, got {}", nx);
  }

  double spacingLeft() const { return 0.5 / nx; }
  double particleMass() const { return left.density * std::pow(spacingLeft(), 3); }
  std::int64_t countLeft() const { return std::int64_t{nx} * (nx / 4) * (nx / 4); }
  std::int64_t countRight() const { return std::int64_t{nx / 2} * (nx / 8) * (nx / 8); }
  std::int64_t count() const { return countLeft() + countRight(); }

  // The support radius that holds n_neighbours in a uniform gas of this density.
  double supportRadius(double density, double n_neighbours) const {
    return std::cbrt(3.0 * n_neighbours * particleMass() / (4.0 * std::numbers::pi * density));
  }

  // Particle `id` of 0 .. count() - 1: the left lattice first, then the right one.
  GasParticle particle(std::int64_t id, double n_neighbours) const {
    const bool is_left = id < countLeft();
    const std::int64_t k = is_left ? id : id - countLeft();
    const std::int64_t across = is_left ? nx / 4 : nx / 8;
    const double d = is_left ? spacingLeft() : 2.0 * spacingLeft();
    const double x0 = is_left ? 0.0 : interface_x;
    const GasState& state = is_left ? left : right;
    GasParticle p;
    p.id = id;
    p.mass = particleMass();
    p.pos = {x0 + (static_cast<double>(k / (across * across)) + 0.5) * d,
             (static_cast<double>((k / across) % across) + 0.5) * d, (static_cast<double>(k % across) + 0.5) * d};
    p.vel = {state.velocity, 0.0, 0.0};
    p.dens = state.density;
    p.u = state.pressure / ((gamma - 1.0) * state.density);
    p.h = supportRadius(state.density, n_neighbours);
    return p;
  }

  ExactRiemannSolver exactSolver() const { return {left, right, gamma}; }

  // The exact state at x in [0, 1) and time t, valid while the waves of the two interfaces have
  // not met (t < 0.143): the Sod solution about x = 0.5 in the middle half, its mirror image
  // about x = 0 = 1 in the outer quarters.
  GasState exactState(const ExactRiemannSolver& solver, double x, double t) const {
    const double from_middle = x - interface_x;
    if (t <= 0.0) return from_middle < 0.0 ? left : right;
    if (std::abs(from_middle) <= 0.25 * box.x) return solver.sample(from_middle / t);
    const double from_edge = x < interface_x ? x : x - box.x;
    GasState s = solver.sample(-from_edge / t);
    s.velocity = -s.velocity;
    return s;
  }
};

struct ProfileBin {
  double x = 0, density = 0, velocity = 0, pressure = 0;
  std::int64_t count = 0;
  GasState exact;  // the exact solution averaged over the bin
};

// Collective: mean density, x-velocity and pressure of the particles in n_bins equal bins
// across [0, length), with the exact solution at time t averaged over each bin.
template <class PSys>
std::vector<ProfileBin> binProfiles(const PSys& gas, const ShockTube& tube, int n_bins, double t) {
  std::vector<double> sums(4 * static_cast<std::size_t>(n_bins), 0.0);
  for (const auto& g : gas) {
    const int b = std::clamp(static_cast<int>(g.pos.x / tube.box.x * n_bins), 0, n_bins - 1);
    double* s = &sums[4 * static_cast<std::size_t>(b)];
    s[0] += g.dens, s[1] += g.vel.x, s[2] += g.pres, s[3] += 1.0;
  }
  gas.comm().allreduceSum(sums);
  const ExactRiemannSolver exact = tube.exactSolver();
  constexpr int kSubSamples = 64;
  std::vector<ProfileBin> bins(static_cast<std::size_t>(n_bins));
  const double width = tube.box.x / n_bins;
  for (int b = 0; b < n_bins; ++b) {
    const double* s = &sums[4 * static_cast<std::size_t>(b)];
    ProfileBin& bin = bins[static_cast<std::size_t>(b)];
    bin.x = (b + 0.5) * width;
    bin.count = static_cast<std::int64_t>(s[3]);
    if (bin.count > 0) bin.density = s[0] / s[3], bin.velocity = s[1] / s[3], bin.pressure = s[2] / s[3];
    for (int k = 0; k < kSubSamples; ++k) {
      const double x = (b + (k + 0.5) / kSubSamples) * width;
      const GasState e = tube.exactState(exact, x, t);
      bin.exact.density += e.density / kSubSamples;
      bin.exact.velocity += e.velocity / kSubSamples;
      bin.exact.pressure += e.pressure / kSubSamples;
    }
  }
  return bins;
}

struct L1Errors {
  double density = 0, velocity = 0, pressure = 0;
  int bins = 0;
};

// Mean |simulated - exact| over the bins whose centres lie in the tube's window.
inline L1Errors l1Errors(const std::vector<ProfileBin>& bins, const ShockTube& tube) {
  L1Errors e;
  for (const auto& b : bins) {
    if (b.x < tube.window_low || b.x >= tube.window_high || b.count == 0) continue;
    e.density += std::abs(b.density - b.exact.density);
    e.velocity += std::abs(b.velocity - b.exact.velocity);
    e.pressure += std::abs(b.pressure - b.exact.pressure);
    ++e.bins;
  }
  if (e.bins > 0) e.density /= e.bins, e.velocity /= e.bins, e.pressure /= e.bins;
  return e;
}

// Collective: the same errors without bins, particle by particle against the exact state at its
// position, weighted by particle volume m / rho (a spatial mean like the binned one, but free of
// where the bin edges fall relative to the waves).
template <class PSys>
L1Errors particleL1Errors(const PSys& gas, const ShockTube& tube, double t) {
  const ExactRiemannSolver exact = tube.exactSolver();
  std::array<double, 4> sums{};  // volume-weighted |errors|, volume
  for (const auto& g : gas) {
    if (g.pos.x < tube.window_low || g.pos.x >= tube.window_high) continue;
    const GasState e = tube.exactState(exact, g.pos.x, t);
    const double volume = g.mass / g.dens;
    sums[0] += volume * std::abs(g.dens - e.density);
    sums[1] += volume * std::abs(g.vel.x - e.velocity);
    sums[2] += volume * std::abs(g.pres - e.pressure);
    sums[3] += volume;
  }
  gas.comm().allreduceSum(std::span<double>(sums));
  L1Errors l1;
  if (sums[3] > 0) l1.density = sums[0] / sums[3], l1.velocity = sums[1] / sums[3], l1.pressure = sums[2] / sums[3];
  return l1;
}

}  // namespace sph
