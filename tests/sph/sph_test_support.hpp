#pragma once
// Particle sets for the SPH tests: cubic lattices in a periodic cube, optionally perturbed,
// spread over the ranks by id (every rank holds every ranks-th particle).
#include <cmath>
#include <cstdint>
#include <random>

#include "sph/gas_particles.hpp"
#include "grove/domain/domain_info.hpp"
#include "grove/particles/particle_system.hpp"

namespace sph::testing {

using Gas = grove::ParticleSystem<GasParticle>;

inline grove::DomainInfo periodicCube(double side) {
  grove::DomainInfo dinfo;
  dinfo.setBoundaryCondition(grove::BoundaryCondition::PERIODIC_XYZ);
  dinfo.setPosRootDomain({0.0, 0.0, 0.0}, {side, side, side});
  return dinfo;
}

struct LatticeSpec {
  int n_side = 12;
  double side = 1.0;
  double density = 1.0;
  double u = 1.0;
  double h = 0.2;                // initial support radius
  double displacement = 0.0;     // random offsets, in lattice spacings (each axis, uniform +-)
  double velocity = 0.0;         // random velocities, uniform +- this on each axis
  double u_spread = 0.0;         // u times 1 +- this
  std::uint64_t seed = 12345;

  double spacing() const { return side / n_side; }
  double mass() const { return density * std::pow(spacing(), 3); }
};

inline GasParticle latticeParticle(const LatticeSpec& s, std::int64_t id) {
  std::mt19937_64 rng(s.seed * 0x9E3779B97F4A7C15ull + static_cast<std::uint64_t>(id));
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  const std::int64_t n = s.n_side;
  const double d = s.spacing();
  GasParticle p;
  p.id = id;
  p.mass = s.mass();
  p.pos = {(static_cast<double>(id / (n * n)) + 0.5) * d, (static_cast<double>((id / n) % n) + 0.5) * d,
           (static_cast<double>(id % n) + 0.5) * d};
  if (s.displacement > 0.0) p.pos += s.displacement * d * grove::Vec3d{unit(rng), unit(rng), unit(rng)};
  if (s.velocity > 0.0) p.vel = s.velocity * grove::Vec3d{unit(rng), unit(rng), unit(rng)};
  p.u = s.u * (1.0 + s.u_spread * unit(rng));
  p.h = s.h;
  return p;
}

inline Gas latticeGas(const LatticeSpec& s) {
  Gas gas;
  const int rank = gas.comm().rank(), ranks = gas.comm().size();
  const std::int64_t n = std::int64_t{s.n_side} * s.n_side * s.n_side;
  for (std::int64_t id = rank; id < n; id += ranks) gas.add(latticeParticle(s, id));
  return gas;
}

// The density of a particle of a perfect lattice: sum over lattice vectors of m W(|n| d, h).
template <class Kernel>
double latticeSum(const LatticeSpec& s, double h, Kernel w) {
  const double d = s.spacing();
  const int reach = static_cast<int>(h / d) + 1;
  double sum = 0.0;
  for (int i = -reach; i <= reach; ++i)
    for (int j = -reach; j <= reach; ++j)
      for (int k = -reach; k <= reach; ++k) sum += s.mass() * w(d * std::sqrt(double(i * i + j * j + k * k)), h);
  return sum;
}

}  // namespace sph::testing
