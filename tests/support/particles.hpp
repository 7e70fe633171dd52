#pragma once
// Test particles and initial conditions shared by the suites.
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "grove/grove.hpp"

namespace grove::testing_support {

// A full particle with an identity and a payload, to prove that exchange moves whole particles.
struct TestParticle {
  std::int64_t id = -1;
  Vec3d pos;
  double mass = 0.0;
  double payload[3] = {0, 0, 0};

  Vec3d getPos() const { return pos; }
  void setPos(const Vec3d& p) { pos = p; }
};

inline TestParticle makeParticle(std::int64_t id, const Vec3d& pos) {
  TestParticle p;
  p.id = id;
  p.pos = pos;
  p.mass = 1.0 + 1e-3 * static_cast<double>(id % 1000);
  p.payload[0] = static_cast<double>(id) * 0.5;
  p.payload[1] = -static_cast<double>(id);
  p.payload[2] = static_cast<double>(id % 7);
  return p;
}

inline bool payloadMatchesId(const TestParticle& p) {
  const TestParticle expected = makeParticle(p.id, p.pos);
  return p.mass == expected.mass && p.payload[0] == expected.payload[0] && p.payload[1] == expected.payload[1] &&
         p.payload[2] == expected.payload[2];
}

inline Vec3d uniformInCube(std::mt19937_64& rng, double low = 0.0, double high = 1.0) {
  std::uniform_real_distribution<double> u(low, high);
  const double x = u(rng), y = u(rng), z = u(rng);
  return {x, y, z};
}

// Plummer sphere with unit scale radius, radii truncated at 20 so that the box is finite.
inline Vec3d plummer(std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  double r;
  do {
    const double m = u(rng);
    r = 1.0 / std::sqrt(std::pow(m, -2.0 / 3.0) - 1.0);
  } while (!(r < 20.0));
  const double cos_theta = 2.0 * u(rng) - 1.0, phi = 2.0 * M_PI * u(rng);
  const double sin_theta = std::sqrt(1.0 - cos_theta * cos_theta);
  return {r * sin_theta * std::cos(phi), r * sin_theta * std::sin(phi), r * cos_theta};
}

}  // namespace grove::testing_support
