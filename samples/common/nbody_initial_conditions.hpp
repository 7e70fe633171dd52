#pragma once
// Initial conditions in N-body units (G = 1, total mass 1). Each rank makes its own share of
// the bodies from a per-body random stream, so the system is the same at every rank count.
#include <cmath>
#include <random>
#include <cstdint>
#include <string>
#include <vector>

#include "grove/core/vec3.hpp"

namespace nbody {

// What an initial condition sets; the sample copies it into its full particle.
struct Body {
  std::int64_t id = 0;
  double mass = 0.0;
  grove::Vec3d pos;
  grove::Vec3d vel;
};

inline std::mt19937_64 streamForBody(std::uint64_t seed, std::int64_t id) {
  std::seed_seq seq{seed, static_cast<std::uint64_t>(id)};
  return std::mt19937_64(seq);
}

inline grove::Vec3d isotropicDirection(std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const double cos_theta = 2.0 * u(rng) - 1.0, phi = 2.0 * M_PI * u(rng);
  const double sin_theta = std::sqrt(1.0 - cos_theta * cos_theta);
  return {sin_theta * std::cos(phi), sin_theta * std::sin(phi), cos_theta};
}

// Cold uniform sphere of radius 3 at rest (the Accelerated FDPS paper's collapse test).
inline Body coldUniformSphere(std::int64_t id, std::int64_t n_total, std::uint64_t seed) {
  auto rng = streamForBody(seed, id);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  grove::Vec3d p;
  do p = {u(rng), u(rng), u(rng)};
  while (grove::norm2(p) >= 1.0);
  return {id, 1.0 / static_cast<double>(n_total), 3.0 * p, {}};
}

// Plummer sphere in virial equilibrium (Aarseth, Henon & Wielen 1974), in units where the
// scale radius is 3 pi / 16 (total energy -1/4); radii beyond 30 scale radii are redrawn.
inline Body plummerSphere(std::int64_t id, std::int64_t n_total, std::uint64_t seed) {
  auto rng = streamForBody(seed, id);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const double scale = 3.0 * M_PI / 16.0;
  double r;
  do r = 1.0 / std::sqrt(std::pow(u(rng), -2.0 / 3.0) - 1.0);
  while (!(r < 30.0));
  // Speed from the distribution g(q) = q^2 (1 - q^2)^(7/2) by rejection, q = v / v_escape.
  double q;
  do q = u(rng);
  while (0.1 * u(rng) > q * q * std::pow(1.0 - q * q, 3.5));
  const double v_escape = std::sqrt(2.0) * std::pow(1.0 + r * r, -0.25);
  const double v_scale = 1.0 / std::sqrt(scale);
  return {id, 1.0 / static_cast<double>(n_total), scale * r * isotropicDirection(rng),
          v_scale * q * v_escape * isotropicDirection(rng)};
}

// The bodies of ids [begin, end), made by make(id) on OpenMP threads: each body depends on its id
// only (its own random stream), so the order the threads take them in changes nothing. Seeding a
// stream takes about 15 us: 2^22 bodies took a minute on one core.
template <class T, class Make>
std::vector<T> makeInParallel(std::int64_t begin, std::int64_t end, Make&& make) {
  std::vector<T> made(static_cast<std::size_t>(end - begin));
#pragma omp parallel for schedule(static)
  for (std::int64_t id = begin; id < end; ++id) made[static_cast<std::size_t>(id - begin)] = make(id);
  return made;
}

}  // namespace nbody
