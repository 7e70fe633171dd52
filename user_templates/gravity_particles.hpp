#pragma once
// User template: particle classes for self-gravity (copy this file and edit).
//
// FP   the full particle: everything a body carries between steps. Needs getPos() and
//      copyFromForce(); setPos() too for periodic boundaries. Must be trivially copyable.
// EPI  what an i-particle (receiving force) needs in the kernel: position (and softening, here
//      a kernel parameter instead).
// EPJ  what a j-particle (exerting force) needs: position and mass (getCharge()). EPJs travel
//      between ranks in local essential trees, so keep them small: floats halve the traffic.
// Force what the kernel accumulates; clear() zeroes it before each calculation.
#include <cstdint>

// GROVE_HOST_DEVICE marks the members that the GPU-resident pipeline also calls on the device
// (grove/gpu/resident.cuh: FP -> EPI/EPJ, positions, charges, write-back); it is empty for a host
// compiler. Only the vector type and that macro: CUDA translation units include these classes
// too (user_templates/cuda), and nvcc must not see all of grove (doc/gpu.md, "what a .cu file
// may include").
#include "grove/core/execution.hpp"
#include "grove/core/vec3.hpp"
#include "grove/io/fields.hpp"

namespace user {

struct GravityForce {
  grove::Vec3f acc;
  float pot = 0.0f;
  GROVE_HOST_DEVICE void clear() { acc = {}, pot = 0.0f; }
  // GPU multiwalk retrieve adds the device's forces to these (grove/gpu/multiwalk/multiwalk.hpp).
  GROVE_HOST_DEVICE GravityForce& operator+=(const GravityForce& o) {
    acc += o.acc, pot += o.pot;
    return *this;
  }
};

struct Body {
  std::int64_t id = 0;
  double mass = 0.0;
  grove::Vec3d pos, vel, acc;
  double pot = 0.0;

  GROVE_HOST_DEVICE grove::Vec3d getPos() const { return pos; }
  GROVE_HOST_DEVICE void setPos(const grove::Vec3d& p) { pos = p; }
  GROVE_HOST_DEVICE double getCharge() const { return mass; }
  GROVE_HOST_DEVICE void copyFromForce(const GravityForce& f) {
    acc = grove::Vec3d(f.acc);
    pot = f.pot;
  }
  // What an HDF5 snapshot holds (grove/io/snapshot.hpp), under GADGET-4's names.
  static constexpr auto snapshotFields() {
    return std::tuple{grove::io::field("Coordinates", &Body::pos),   grove::io::field("Velocities", &Body::vel),
                      grove::io::field("Masses", &Body::mass),       grove::io::field("ParticleIDs", &Body::id),
                      grove::io::field("Acceleration", &Body::acc),  grove::io::field("Potential", &Body::pot)};
  }
};

struct GravityEPI {
  grove::Vec3f pos;
  GROVE_HOST_DEVICE grove::Vec3f getPos() const { return pos; }
  GROVE_HOST_DEVICE void copyFromFP(const Body& b) { pos = static_cast<grove::Vec3f>(b.pos); }
};

struct GravityEPJ {
  grove::Vec3f pos;
  float mass = 0.0f;
  GROVE_HOST_DEVICE grove::Vec3f getPos() const { return pos; }
  GROVE_HOST_DEVICE void setPos(const grove::Vec3d& p) { pos = static_cast<grove::Vec3f>(p); }
  GROVE_HOST_DEVICE float getCharge() const { return mass; }
  GROVE_HOST_DEVICE void copyFromFP(const Body& b) {
    pos = static_cast<grove::Vec3f>(b.pos);
    mass = static_cast<float>(b.mass);
  }
};

}  // namespace user
