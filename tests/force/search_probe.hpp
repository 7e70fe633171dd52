#pragma once
// A probe for long-range trees with a neighbour search (SEARCH_MODE_LONG_SCATTER / SYMMETRY),
// shared by the GPU-resident tests (nvcc) and their host references (resident_reference.cpp).
// Every body has mass 1, so the probe's sums are counts and exact in any order, on the host and
// on the device (whose superparticle images hold float masses):
//   n_ep        particles that reached the kernel one by one
//   n_near      of those, the ones within search reach (|x_i - x_j| < r_j, or max(r_i, r_j))
//   far_mass    bodies inside superparticles
// A search tree must give n_near = the brute-force neighbour count, and n_ep + far_mass = N.
#include <cstdint>
#include <cstdio>
#include <vector>

#include "grove/core/execution.hpp"
#include "grove/core/vec3.hpp"
#include "grove/walk/long_search_mode.hpp"
#ifdef __CUDACC__
#include "grove/tree/device_form.hpp"
#endif

namespace search_test {

struct Probe {
  double far_mass = 0.0;
  int n_ep = 0, n_near = 0;
  GROVE_HOST_DEVICE void clear() { *this = Probe{}; }
};

struct Body {
  std::int64_t id = 0;
  double mass = 1.0;
  double r_search = 0.0;
  grove::Vec3d pos;
  Probe probe;
  GROVE_HOST_DEVICE grove::Vec3d getPos() const { return pos; }
  GROVE_HOST_DEVICE void setPos(const grove::Vec3d& p) { pos = p; }
  GROVE_HOST_DEVICE double getCharge() const { return mass; }
  GROVE_HOST_DEVICE double getRSearch() const { return r_search; }
  GROVE_HOST_DEVICE void copyFromForce(const Probe& f) { probe = f; }
};

struct EPI {
  grove::Vec3d pos;
  double r_search = 0.0;
  GROVE_HOST_DEVICE grove::Vec3d getPos() const { return pos; }
  GROVE_HOST_DEVICE double getRSearch() const { return r_search; }
  GROVE_HOST_DEVICE void copyFromFP(const Body& b) { pos = b.pos, r_search = b.r_search; }
};

struct EPJ {
  grove::Vec3d pos;
  double mass = 0.0;
  double r_search = 0.0;
  GROVE_HOST_DEVICE grove::Vec3d getPos() const { return pos; }
  GROVE_HOST_DEVICE void setPos(const grove::Vec3d& p) { pos = p; }
  GROVE_HOST_DEVICE double getCharge() const { return mass; }
  GROVE_HOST_DEVICE double getRSearch() const { return r_search; }
  GROVE_HOST_DEVICE void copyFromFP(const Body& b) { pos = b.pos, mass = b.mass, r_search = b.r_search; }
};

// Whether j lies within search reach of i in mode M.
template <grove::LongSearchMode M>
GROVE_HOST_DEVICE inline bool withinReach(const grove::Vec3d& xi, double r_i, const grove::Vec3d& xj, double r_j) {
  const double r = M == grove::LongSearchMode::SYMMETRY && r_i > r_j ? r_i : r_j;
  const grove::Vec3d d = xj - xi;
  return d.x * d.x + d.y * d.y + d.z * d.z < r * r;
}

template <grove::LongSearchMode M>
GROVE_HOST_DEVICE inline void probeParticle(const EPI& i, const EPJ& j, Probe& f) {
  f.n_ep += 1;
  f.n_near += withinReach<M>(i.pos, i.r_search, j.pos, j.r_search) ? 1 : 0;
}

#ifdef __CUDACC__
// The probe as the resident tree's interactions.
template <grove::LongSearchMode M>
struct DeviceProbeEp {
  __device__ void operator()(const EPI& i, const EPJ& j, Probe& f) const { probeParticle<M>(i, j, f); }
};
struct DeviceProbeSp {
  __device__ void operator()(const EPI&, const grove::gpu::DeviceMonopole& s, Probe& f) const { f.far_mass += s.mass; }
};
#endif

// Bodies (as the device wrote them back) whose probe misses a neighbour (brute: counts by
// index), does not count all n_total bodies once, or differs from `host` (by index; may be null).
// index_of(id) gives a body's index; the first three misses are printed under `what`.
struct ProbeMismatches {
  int neighbours = 0, total = 0, host = 0;
};
template <class Bodies, class IndexOf>
ProbeMismatches probeMismatches(const Bodies& got, IndexOf index_of, const std::vector<int>& brute,
                                std::size_t n_total, const std::vector<Probe>* host, const char* what) {
  ProbeMismatches m;
  for (const Body& b : got) {
    const std::size_t k = index_of(b.id);
    const Probe& p = b.probe;
    if (p.n_near != brute[k] && m.neighbours++ < 3)
      std::printf("  %s: body %lld finds %d of its %d neighbours\n", what, static_cast<long long>(b.id), p.n_near,
                  brute[k]);
    if (static_cast<double>(p.n_ep) + p.far_mass != static_cast<double>(n_total)) ++m.total;
    if (host) {
      const Probe& h = (*host)[k];
      if (p.n_ep != h.n_ep || p.n_near != h.n_near || p.far_mass != h.far_mass) ++m.host;
    }
  }
  return m;
}

// Search radii spanning 30x (deterministic in the id), 0.005 to 0.15: for bodies of a Plummer
// sphere (resident_test::searchBodies), tens of neighbours in the core, none far out.
inline double searchRadiusOf(std::int64_t id) {
  const double u = static_cast<double>((static_cast<std::uint64_t>(id) * 2654435761u) % 1000u) / 999.0;
  return 0.005 * (1.0 + 29.0 * u);
}

}  // namespace search_test
