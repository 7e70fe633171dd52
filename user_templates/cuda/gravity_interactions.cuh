#pragma once
// User template: self-gravity for grove's multiwalk engine (grove/gpu/multiwalk/multiwalk_engine.cuh).
// This is all a user writes for the engine: the pairwise interactions as device functors (and
// GravityForce's += in gravity_particles.hpp, with which retrieve adds forces). The engine packs,
// transfers, tiles, keeps lists on the device and budgets device memory.
//
//   EP functor  operator()(const EPI& i, const EPJ& j, Force& f)           adds j's pull on i
//   SP functor  operator()(const EPI& i, const DeviceFormOf<SPJ>& s, Force& f)
// grove's SPJs reach the device as float images (grove::gpu::DeviceMonopole, DeviceQuadrupole);
// EPI and EPJ go as they are (DeviceForm's default), so the functors read the user types.
#include <type_traits>

#include "../gravity_particles.hpp"
#include "gravity_device_physics.cuh"
#include "grove/gpu/multiwalk/multiwalk_engine.cuh"
#include "grove/tree/device_form.hpp"

namespace user::cuda {

struct GravityEpInteraction {
  float eps2;
  __device__ void operator()(const GravityEPI& i, const GravityEPJ& j, GravityForce& f) const {
    addMonopole(i.pos.x, i.pos.y, i.pos.z, j.pos.x, j.pos.y, j.pos.z, j.mass, eps2, f.acc.x, f.acc.y, f.acc.z, f.pot);
  }
};

struct GravityMonopoleSpInteraction {
  float eps2;
  __device__ void operator()(const GravityEPI& i, const grove::gpu::DeviceMonopole& s, GravityForce& f) const {
    addMonopole(i.pos.x, i.pos.y, i.pos.z, s.x, s.y, s.z, s.mass, eps2, f.acc.x, f.acc.y, f.acc.z, f.pot);
  }
};

struct GravityQuadrupoleSpInteraction {
  float eps2;
  __device__ void operator()(const GravityEPI& i, const grove::gpu::DeviceQuadrupole& s, GravityForce& f) const {
    addQuadrupole(i.pos.x, i.pos.y, i.pos.z, s, eps2, f.acc.x, f.acc.y, f.acc.z, f.pot);
  }
};

template <class SPJ>
using GravitySpInteraction = std::conditional_t<std::is_same_v<SPJ, grove::SPJQuadrupole>,
                                                GravityQuadrupoleSpInteraction, GravityMonopoleSpInteraction>;

// SPJ: grove::SPJMonopole or grove::SPJQuadrupole.
template <class SPJ>
using GravityEngine = grove::gpu::MultiwalkEngine<GravityEPI, GravityEPJ, SPJ, GravityForce, GravityEpInteraction,
                                                  GravitySpInteraction<SPJ>>;

}  // namespace user::cuda
