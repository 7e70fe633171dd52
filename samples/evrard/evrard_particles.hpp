#pragma once
// The Evrard sample's particle classes. The gas particle is samples/sph's GasParticle (its
// density, hydro and equation-of-state passes are reused unchanged, through the sph trees' EPI/EPJ
// classes, which copy from a GasParticle) with self-gravity added:
//   EvrardParticle   the full particle: sph::GasParticle + gravitational acceleration and potential
//   GravityEPI/EPJ   what the long-range (gravity) tree reads of it
//   GravityResult    what the gravity kernel computes (the Force type of the gravity tree)
// The hydro pass writes GasParticle::acc (pressure + viscosity) and the gravity pass writes
// acc_gravity, so neither pass clobbers the other; the integrator kicks with their sum.
#include <cstdint>
#include <tuple>

#include "sph/gas_particles.hpp"  // user_templates/sph
#include "grove/core/vec3.hpp"
#include "grove/io/fields.hpp"

namespace evrard {

using grove::Vec3d;

struct GravityResult {
  Vec3d acc;
  double pot = 0;  // includes the particle's own softened self-term -m/eps (see gravity_kernel.hpp)
  void clear() { *this = GravityResult{}; }
};

struct EvrardParticle : sph::GasParticle {
  Vec3d acc_gravity;
  double pot = 0;  // gravitational potential, self-term removed after the gravity pass

  // The base's overloads (density, hydro) stay visible next to the gravity one.
  using sph::GasParticle::copyFromForce;
  void copyFromForce(const GravityResult& g) { acc_gravity = g.acc, pot = g.pot; }

  Vec3d totalAcceleration() const { return acc + acc_gravity; }

  // What an HDF5 snapshot holds (grove/io/snapshot.hpp), under GADGET-4's gas names (which yt's
  // GADGET reader knows: doc/io.md).
  static constexpr auto snapshotFields() {
    using grove::io::field;
    using P = EvrardParticle;
    return std::tuple{field("Coordinates", static_cast<Vec3d P::*>(&P::pos)),
                      field("Velocities", static_cast<Vec3d P::*>(&P::vel)),
                      field("Masses", static_cast<double P::*>(&P::mass)),
                      field("ParticleIDs", static_cast<std::int64_t P::*>(&P::id)),
                      field("InternalEnergy", static_cast<double P::*>(&P::u)),
                      field("Density", static_cast<double P::*>(&P::dens)),
                      field("Pressure", static_cast<double P::*>(&P::pres)),
                      field("SmoothingLength", static_cast<double P::*>(&P::h)),
                      field("Potential", &P::pot),
                      field("NumberOfNeighbours", static_cast<std::int32_t P::*>(&P::n_neighbours))};
  }
};

struct GravityEPI {
  Vec3d pos;
  Vec3d getPos() const { return pos; }
  void copyFromFP(const EvrardParticle& p) { pos = p.pos; }
};

// Double precision throughout: the energy check compares sums of order 1 to a few 1e-3, and the
// kernels are not the bottleneck at the particle numbers this sample runs on a CPU.
struct GravityEPJ {
  Vec3d pos;
  double mass = 0;
  Vec3d getPos() const { return pos; }
  void setPos(const Vec3d& p) { pos = p; }
  double getCharge() const { return mass; }
  void copyFromFP(const EvrardParticle& p) { pos = p.pos, mass = p.mass; }
};

}  // namespace evrard
