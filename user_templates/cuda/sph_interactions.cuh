#pragma once
// User template: the SPH sample's passes for grove's multiwalk engine (grove/gpu/multiwalk/multiwalk_engine.cuh).
// This is all a user writes for the engine: how the particles travel (DeviceForm: images with the
// powers of h precomputed, sph_physics.hpp) and the pairwise interactions as device functors,
// which call the CPU kernels' own per-pair functions. The engine packs, transfers, tiles, keeps
// lists on the device and budgets device memory.
//
// Hydro maps onto a pairwise functor directly. The density pass does not: its h iteration needs
// several sums over a particle's neighbours at changing h, and a functor sees each neighbour once
// per pass. So the engine's density pass only sums (DensitySums at the particle's current h), and
// the host iterates h between passes that reuse the lists on the device
// (sph::computeDensityBySums in user_templates/sph/sph_solver.hpp; doc/sph.md, "GPU").
#include "../sph/gas_particles.hpp"
#include "grove/gpu/multiwalk/multiwalk_engine.cuh"
#include "grove/tree/device_form.hpp"
#include "../sph/sph_physics.hpp"

namespace grove::gpu {

// The density pass's i-particle at its current h, with 1/h, 1/h^2 and the kernel norm over h^5
// computed once on the host (as the CPU kernel computes them) instead of per pair on the device.
template <>
struct DeviceForm<sph::DensityEPI> {
  using type = sph::DensityIAtH;
  static type make(const sph::DensityEPI& p) { return sph::densityIAtHOf(p); }
};

// Position, velocity and mass only: 64 bytes (r_search stays on the host).
template <>
struct DeviceForm<sph::DensityEPJ> {
  using type = sph::DensityJImage;
  static type make(const sph::DensityEPJ& p) { return sph::densityJImageOf(p); }
};

// Both sides of a hydro pair, with their powers of h.
template <>
struct DeviceForm<sph::HydroEP> {
  using type = sph::HydroSide;
  static type make(const sph::HydroEP& p) { return sph::hydroSideOf(p); }
};

}  // namespace grove::gpu

namespace user::cuda {

struct SphDensitySumsInteraction {
  __device__ void operator()(const sph::DensityIAtH& i, const sph::DensityJImage& j, sph::DensitySums& f) const {
    sph::addDensityNeighbour(i, j, f);
  }
};

struct SphHydroInteraction {
  double half_alpha;  // alpha / 2 of the artificial viscosity
  __device__ void operator()(const sph::HydroSide& i, const sph::HydroSide& j, sph::HydroResult& f) const {
    sph::addHydroNeighbour(i, j, half_alpha, f);
  }
};

// 64 threads a block (also the engine's default): the sample's groups hold at most 64
// particles, so a larger block would leave part of every block idle.
using SphKernelShape = grove::gpu::KernelShape<64>;

using SphDensitySumsEngine =
    grove::gpu::MultiwalkEngine<sph::DensityEPI, sph::DensityEPJ, grove::gpu::NoSPJ, sph::DensitySums,
                                SphDensitySumsInteraction, grove::gpu::NoInteraction, SphKernelShape>;
using SphHydroEngine = grove::gpu::MultiwalkEngine<sph::HydroEP, sph::HydroEP, grove::gpu::NoSPJ, sph::HydroResult,
                                                   SphHydroInteraction, grove::gpu::NoInteraction, SphKernelShape>;

}  // namespace user::cuda
