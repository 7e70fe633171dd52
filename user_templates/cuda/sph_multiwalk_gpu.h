#pragma once
// User template: the host side's entry to the CUDA multiwalks of the SPH sample (samples/sph).
// No CUDA header: include it from ordinary .cpp files, and link the library built from
// sph_multiwalk.cu (sph_cuda.cmake), e.g.
//
//   auto hydro = user::cuda::makeSphHydroMultiwalk({alpha});        // or makeSphHydroEngine
//   hydro_tree.calcForceAllAndWriteBackMultiWalkIndex(hydro->dispatch(), hydro->retrieve(), tag_max, gas, dinfo,
//                                                     n_walk_limit);
//
// Two ways, the same physics as the CPU kernels (user_templates/sph/sph_physics.hpp, double precision):
//   template  hand-written kernels (sph_walk_kernels.cuh) and dispatch/retrieve (sph_multiwalk.cuh);
//             its density pass iterates h inside the kernel and writes a DensityResult
//   engine    grove's MultiwalkEngine with pairwise functors (sph_interactions.cuh); its density
//             pass writes DensitySums at the current h, and sph::computeDensityBySums iterates h
// One object per tree: an object keeps the index lists of the tree it serves for reuse steps.
#include <memory>

#include "../sph/gas_particles.hpp"
#include "grove/gpu/multiwalk/multiwalk.hpp"
#include "../sph/sph_physics.hpp"

namespace user::cuda {

using SphDensityMultiwalk = grove::gpu::Multiwalk<sph::DensityEPI, sph::DensityEPJ, grove::gpu::NoSPJ, sph::DensityResult>;
using SphDensitySumsMultiwalk =
    grove::gpu::Multiwalk<sph::DensityEPI, sph::DensityEPJ, grove::gpu::NoSPJ, sph::DensitySums>;
using SphHydroMultiwalk = grove::gpu::Multiwalk<sph::HydroEP, sph::HydroEP, grove::gpu::NoSPJ, sph::HydroResult>;

// The hand-written template; device -1: the current device.
std::unique_ptr<SphDensityMultiwalk> makeSphDensityMultiwalk(const sph::DensityParameters& p, int device = -1);
std::unique_ptr<SphHydroMultiwalk> makeSphHydroMultiwalk(const sph::HydroParameters& p, int device = -1);

// grove's engine.
std::unique_ptr<SphDensitySumsMultiwalk> makeSphDensitySumsEngine(const grove::gpu::MultiwalkOptions& options = {});
std::unique_ptr<SphHydroMultiwalk> makeSphHydroEngine(const sph::HydroParameters& p,
                                                      const grove::gpu::MultiwalkOptions& options = {});

}  // namespace user::cuda
