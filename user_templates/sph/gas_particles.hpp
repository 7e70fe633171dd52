#pragma once
// The particle classes of the SPH sample (grove's contracts, FDPS 7.1 member names):
//   GasParticle      the full particle (FP) the user owns in a ParticleSystem
//   DensityEPI/EPJ   what the density (gather) pass reads of the particles
//   HydroEP          what the hydro-force (symmetry) pass reads, as EPI and EPJ
//   DensityResult, HydroResult   what the passes compute (the Force types)
//   DensitySums      what the GPU engine's density pass computes instead (sums at the current h;
//                    the host iterates h, see sph_solver.hpp and doc/sph.md)
// h is the kernel's support radius throughout (W = 0 beyond h). The members the trees call are
// SPH_HOST_DEVICE, so that the GPU-resident path (cuda/sph_resident.cu) calls them on the device too.
#include <cstdint>

#include "grove/core/vec3.hpp"
#include "grove/io/fields.hpp"
#include "host_device.hpp"

namespace sph {

using grove::Vec3d;

struct DensityResult {
  double dens = 0;
  double h = 0;             // converged support radius, or an estimate when the search was too small
  double grad_h = 1;        // f = [1 + h/(3 rho) d(rho)/dh]^-1 (Springel & Hernquist 2002)
  double div_v = 0;
  double curl_v = 0;        // |curl v|
  std::int32_t n_neighbours = 0;  // particles within h, itself included
  std::int32_t search_too_small = 0;  // 1: the neighbour target needs h beyond r_search
  void clear() { *this = DensityResult{}; }
};

struct HydroResult {
  Vec3d acc;
  double du_dt = 0;
  double v_signal = 0;  // largest signal velocity over the neighbours (for the time step)
  void clear() { *this = HydroResult{}; }
};

// One particle's sums over its neighbours at its current h (q = r / h):
//   s0 = sum m_j w(q_j), s1 = sum m_j q_j w'(q_j)        the density and d(rho)/dh, and the h iteration
//   div, curl_x/y/z = sums of m_j (1/r) dW/dr times (v_i - v_j) . (x_i - x_j), and x (x_i - x_j)
// The density pass's result follows from them (densityResultOf in sph_physics.hpp).
struct DensitySums {
  double s0 = 0, s1 = 0;
  double div = 0, curl_x = 0, curl_y = 0, curl_z = 0;
  std::int32_t n_neighbours = 0;  // within h, itself included
  void clear() { *this = DensitySums{}; }
};

// A GPU multiwalk's retrieve adds its results to the caller's Force with addForce (found here by
// argument-dependent lookup; grove/gpu/multiwalk/multiwalk.hpp), and the resident kernels combine their
// threads' shares with it (cuda/sph_resident.cu). Sums add; the signal velocity is a maximum.
SPH_HOST_DEVICE inline void addForce(DensitySums& into, const DensitySums& add) {
  into.s0 += add.s0, into.s1 += add.s1, into.div += add.div;
  into.curl_x += add.curl_x, into.curl_y += add.curl_y, into.curl_z += add.curl_z;
  into.n_neighbours += add.n_neighbours;
}
SPH_HOST_DEVICE inline void addForce(HydroResult& into, const HydroResult& add) {
  into.acc += add.acc, into.du_dt += add.du_dt;
  into.v_signal = into.v_signal > add.v_signal ? into.v_signal : add.v_signal;
}

struct GasParticle {
  std::int64_t id = 0;
  double mass = 0;
  Vec3d pos, vel, acc;
  double u = 0, du_dt = 0;  // specific internal energy and its rate
  double dens = 0, pres = 0, sound = 0;
  double h = 0;              // support radius
  double r_search = 0;       // density pass's search radius (>= h)
  double grad_h = 1;
  double div_v = 0, curl_v = 0, balsara = 1;
  double v_signal = 0;
  std::int32_t n_neighbours = 0;
  std::int32_t search_too_small = 0;
  Vec3d vel_half;  // leapfrog half-step values
  double u_half = 0;
  DensitySums density_sums;  // GPU engine path only: the last sums pass's sums at h

  SPH_HOST_DEVICE Vec3d getPos() const { return pos; }
  SPH_HOST_DEVICE void setPos(const Vec3d& p) { pos = p; }
  SPH_HOST_DEVICE void copyFromForce(const DensityResult& r) {
    dens = r.dens, h = r.h, grad_h = r.grad_h, div_v = r.div_v, curl_v = r.curl_v;
    n_neighbours = r.n_neighbours, search_too_small = r.search_too_small;
  }
  SPH_HOST_DEVICE void copyFromForce(const HydroResult& r) { acc = r.acc, du_dt = r.du_dt, v_signal = r.v_signal; }
  SPH_HOST_DEVICE void copyFromForce(const DensitySums& s) { density_sums = s; }
  // What the HDF5 snapshot holds (grove/io/snapshot.hpp), under GADGET-4's gas names (which yt's
  // GADGET reader knows: doc/io.md).
  static constexpr auto snapshotFields() {
    using grove::io::field;
    return std::tuple{field("Coordinates", &GasParticle::pos),         field("Velocities", &GasParticle::vel),
                      field("Masses", &GasParticle::mass),             field("ParticleIDs", &GasParticle::id),
                      field("InternalEnergy", &GasParticle::u),      field("Density", &GasParticle::dens),
                      field("Pressure", &GasParticle::pres),          field("SmoothingLength", &GasParticle::h),
                      field("Acceleration", &GasParticle::acc),       field("NumberOfNeighbours", &GasParticle::n_neighbours)};
  }
};

struct DensityEPI {
  Vec3d pos, vel;
  double mass = 0, h = 0, r_search = 0;
  SPH_HOST_DEVICE Vec3d getPos() const { return pos; }
  SPH_HOST_DEVICE double getRSearch() const { return r_search; }
  SPH_HOST_DEVICE void copyFromFP(const GasParticle& p) { pos = p.pos, vel = p.vel, mass = p.mass, h = p.h, r_search = p.r_search; }
};

struct DensityEPJ {
  Vec3d pos, vel;
  double mass = 0, r_search = 0;
  SPH_HOST_DEVICE Vec3d getPos() const { return pos; }
  SPH_HOST_DEVICE void setPos(const Vec3d& p) { pos = p; }
  SPH_HOST_DEVICE double getRSearch() const { return r_search; }
  SPH_HOST_DEVICE void copyFromFP(const GasParticle& p) { pos = p.pos, vel = p.vel, mass = p.mass, r_search = p.r_search; }
};

// One type serves as EPI and EPJ of the symmetric hydro pass.
struct HydroEP {
  Vec3d pos, vel;
  double mass = 0, dens = 0, sound = 0, h = 0, balsara = 0;
  double pres_term = 0;  // f P / rho^2
  SPH_HOST_DEVICE Vec3d getPos() const { return pos; }
  SPH_HOST_DEVICE void setPos(const Vec3d& p) { pos = p; }
  SPH_HOST_DEVICE double getRSearch() const { return h; }
  SPH_HOST_DEVICE void copyFromFP(const GasParticle& p) {
    pos = p.pos, vel = p.vel, mass = p.mass, dens = p.dens, sound = p.sound, h = p.h, balsara = p.balsara;
    pres_term = p.grad_h * p.pres / (p.dens * p.dens);
  }
};

}  // namespace sph
