#pragma once
// A short-range test interaction for grove's multiwalk engine: neighbour counts and an SPH-like
// density sum within each i-particle's search radius. Host-only declarations; the engine is
// instantiated in density_engine.cu.
#include <memory>

#include "grove/core/vec3.hpp"
#include "grove/gpu/multiwalk/multiwalk.hpp"

namespace grove::gpu_testing {

struct DensityEPI {
  Vec3f pos;
  float h = 0.0f;  // search radius
};

struct DensityEPJ {
  Vec3f pos;
  float mass = 0.0f;
};

// No operator+=: retrieve finds addForce below by argument-dependent lookup.
struct DensityForce {
  float density = 0.0f;
  int neighbours = 0;
};

inline void addForce(DensityForce& into, const DensityForce& add) {
  into.density += add.density;
  into.neighbours += add.neighbours;
}

// w(q) = (1 - q^2)^3 for q = r/h < 1; the density adds m w. Pairs at r >= h are not neighbours.
// constexpr, so that device code may call it (nvcc's --expt-relaxed-constexpr, set by grove::gpu).
template <class Real>
constexpr Real densityWeight(Real r2, Real h2) {
  const Real t = Real(1) - r2 / h2;
  return t * t * t;
}

using DensityMultiwalk = grove::gpu::Multiwalk<DensityEPI, DensityEPJ, grove::gpu::NoSPJ, DensityForce>;

std::unique_ptr<DensityMultiwalk> makeDensityEngine(const grove::gpu::MultiwalkOptions& options = {});

}  // namespace grove::gpu_testing
