#pragma once
// User template: the host side's entry to the CUDA gravity multiwalks. No CUDA header: include it
// from ordinary .cpp files, and link the object built from gravity_multiwalk.cu (nvcc), e.g.
//
//   auto gpu = user::cuda::makeGravityEngine<grove::SPJMonopole>(eps * eps);
//   tree.calcForceAllAndWriteBackMultiWalkIndex(gpu->dispatch(), gpu->retrieve(), tag_max, psys, dinfo,
//                                               n_walk_limit, true, grove::MAKE_LIST_FOR_REUSE);
#include <memory>

#include "../gravity_particles.hpp"
#include "grove/gpu/multiwalk/multiwalk.hpp"
#include "grove/tree/moments.hpp"

namespace user::cuda {

template <class SPJ>
using GravityMultiwalkInterface = grove::gpu::Multiwalk<GravityEPI, GravityEPJ, SPJ, GravityForce>;

// The hand-written dispatch/retrieve pair of gravity_multiwalk.cuh (SPJ: grove::SPJMonopole or
// grove::SPJQuadrupole). eps2: squared softening; device -1: the current device.
template <class SPJ>
std::unique_ptr<GravityMultiwalkInterface<SPJ>> makeGravityMultiwalk(float eps2, int device = -1);

// The same physics through grove's engine (gravity_interactions.cuh).
template <class SPJ>
std::unique_ptr<GravityMultiwalkInterface<SPJ>> makeGravityEngine(float eps2,
                                                                  const grove::gpu::MultiwalkOptions& options = {});

extern template std::unique_ptr<GravityMultiwalkInterface<grove::SPJMonopole>> makeGravityMultiwalk(float, int);
extern template std::unique_ptr<GravityMultiwalkInterface<grove::SPJQuadrupole>> makeGravityMultiwalk(float, int);
extern template std::unique_ptr<GravityMultiwalkInterface<grove::SPJMonopole>> makeGravityEngine(
    float, const grove::gpu::MultiwalkOptions&);
extern template std::unique_ptr<GravityMultiwalkInterface<grove::SPJQuadrupole>> makeGravityEngine(
    float, const grove::gpu::MultiwalkOptions&);

}  // namespace user::cuda
