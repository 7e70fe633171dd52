#pragma once
// The GPU multiwalk engine for fmm_gpu_benchmark's double-precision particles (fmm_comparison.hpp):
// the FMM's near field (P2P, no superparticles) and the Barnes-Hut tree's walks (particles and
// quadrupole superparticles). Declarations only; fmm_gpu_engine.cu instantiates it.
#include <memory>

#include "../fmm_comparison.hpp"
#include "grove/gpu/multiwalk/multiwalk.hpp"
#include "grove/tree/moments.hpp"

namespace fmm_comparison {

using NewtonMultiwalk = grove::gpu::Multiwalk<EP, EP, grove::SPJQuadrupole, Force>;

// Unsoftened Newtonian gravity in double precision on the current device: particle pairs as
// NewtonKernel, superparticles as QuadrupoleKernel (from the engine's float images of them).
std::unique_ptr<NewtonMultiwalk> makeNewtonEngine();

}  // namespace fmm_comparison
