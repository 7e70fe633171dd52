#pragma once
// The GPU engines for fmm_gpu_benchmark's double-precision particles (fmm_comparison.hpp): the
// multiwalk engine, for the FMM's near field through FDPS's hooks (P2P, no superparticles) and the
// Barnes-Hut tree's walks (particles and quadrupole superparticles), and the FMM's near field
// straight from the device traversal's lists. Declarations only; fmm_gpu_engine.cu instantiates them.
#include <memory>

#include "../fmm_comparison.hpp"
#include "grove/fmm/device_far_field_gpu.h"
#include "grove/fmm/device_near_field.hpp"
#include "grove/gpu/multiwalk/multiwalk.hpp"
#include "grove/tree/moments.hpp"

namespace fmm_comparison {

using NewtonMultiwalk = grove::gpu::Multiwalk<EP, EP, grove::SPJQuadrupole, Force>;
using NewtonNearField = grove::fmm::NearFieldOnDevice<Force, EP, EP>;

// Unsoftened Newtonian gravity in double precision on the current device: particle pairs as
// NewtonKernel, superparticles as QuadrupoleKernel (from the engine's float images of them).
std::unique_ptr<NewtonMultiwalk> makeNewtonEngine();

// The FMM's near field with the same particle pairs on the device of `far_field`, from its lists,
// a warp's task holding at most particles_per_task source particles.
std::unique_ptr<NewtonNearField> makeNewtonNearField(std::shared_ptr<grove::fmm::DeviceFarField> far_field,
                                                     long long particles_per_task);

}  // namespace fmm_comparison
