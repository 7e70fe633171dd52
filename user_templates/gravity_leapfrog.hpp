#pragma once
// The leapfrog's kick and drift for the user template's Body as GROVE_HOST_DEVICE functors: the
// same step runs on the host (grove::forEach(grove::Cpu{}, …)) and on the device
// (grove::gpu::forEach). A kick-drift-kick step is Kick{dt / 2}, Drift{dt}, forces, Kick{dt / 2}.
#include "gravity_particles.hpp"

namespace user {

struct Kick {
  double dt;
  GROVE_HOST_DEVICE void operator()(Body& b) const { b.vel += dt * b.acc; }
};

struct Drift {
  double dt;
  GROVE_HOST_DEVICE void operator()(Body& b) const { b.pos += dt * b.vel; }
};

}  // namespace user
