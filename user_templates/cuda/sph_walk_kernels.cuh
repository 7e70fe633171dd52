#pragma once
// User template: the hand-written CUDA kernels of the SPH sample's density and hydro passes
// (samples/sph), used by sph_multiwalk.cuh's dispatch/retrieve pair. Copy and edit.
//
// Precision: double, like the CPU kernels. The density pass iterates h to a relative tolerance
// of 1e-9 by Newton steps whose stopping test compares sums of ~200 terms; float sums (1e-7)
// would make that test meaningless and give a different iteration than the CPU's. The hydro
// force is a sum of antisymmetric pair terms whose cancellation conserves momentum to rounding;
// in float the GPU run would conserve it 1e9 times worse than the CPU run. An H100 computes fp64
// at half its fp32 rate: at most a factor 2 in these kernels, which are one part of a step next
// to the host's tree work. In double the GPU results
// equal the CPU kernels' to ~1e-15 (summation order and fused multiply-adds), the h iteration
// takes the CPU's steps, and the physics is the CPU's own source: every formula below is a
// function of user_templates/sph/sph_physics.hpp, compiled for the device.
//
// Layout: a thread block of kThreads threads takes one WalkTask (grove::gpu::kernel, shared
// with grove's engine): up to kThreads consecutive i-particles of one walk (a tree group), one
// per thread. The walk's neighbour list streams through shared memory in tiles of kThreads
// j-images: each thread loads one, then every thread reads all of them (broadcast reads). The
// list comes either packed per walk (plain form) or as indices into the whole j-image array
// that stays on the device for the step (index form); the two differ only in how a tile is
// loaded, so they give bitwise-identical results. kThreads = 64 matches the sample's group
// limit (n_group 64): a larger block would leave most threads idle.
#include <cuda_runtime.h>

#include "grove/gpu/multiwalk/multiwalk_kernel.cuh"
#include "../sph/sph_physics.hpp"

namespace user::cuda {

using grove::gpu::kernel::WalkDesc;  // a walk's offsets: i_begin, n_i, j_begin, n_j (s_*: unused)
using grove::gpu::kernel::WalkTask;  // a block's work: walk, i_first

// Loads the tile of the walk's j-images that starts at list position base into shared memory,
// one per thread, and returns how many it holds. Every thread of the block must call it (it
// synchronises), and must reach the __syncthreads() after its use of the tile:
//   for (int base = 0; base < w.n_j; base += kThreads) {
//     const int m = loadTile<kThreads>(tile, source, w, base);
//     ... read tile[0 .. m) ...
//     __syncthreads();  // the tile is overwritten next
//   }
template <int kThreads, class J, class Source>
__device__ __forceinline__ int loadTile(J* tile, const Source& source, const WalkDesc& w, int base) {
  const int k = base + static_cast<int>(threadIdx.x);
  if (k < w.n_j) tile[threadIdx.x] = source(w.j_begin + k);
  __syncthreads();
  return ::min(kThreads, w.n_j - base);
}

// The density pass: each thread iterates its particle's h (sph::SupportSearch, the CPU kernel's
// steps), one pass over the neighbour list per step; the block repeats while any of its threads
// still iterates (__syncthreads_or), finished threads keep loading tiles. Then one more pass at
// the final h gives every sum (sph::addDensityNeighbour: density, grad-h, div v, curl v, count).
// Threads past the walk's end compute on its last particle and store nothing. (No __restrict__
// here: with it, nvcc 13 spills 24 bytes of registers in this kernel; it gains nothing, since
// the loops read shared memory.)
template <int kThreads, class JSource>
__global__ void __launch_bounds__(kThreads)
    sphDensityKernel(const WalkTask* tasks, const WalkDesc* walks, const sph::DensityIImage* epi, JSource epj,
                     sph::DensityParameters p, sph::DensityResult* out) {
  __shared__ sph::DensityJImage tile[kThreads];
  const WalkTask task = tasks[blockIdx.x];
  const WalkDesc w = walks[task.walk];
  const int i = task.i_first + static_cast<int>(threadIdx.x);
  const sph::DensityIImage pi = epi[w.i_begin + ::min(i, w.n_i - 1)];
  const double target = sph::neighbourTarget(pi.mass, p);

  sph::SupportSearch search = sph::SupportSearch::start(pi.h, pi.r_search);
  auto status = sph::SupportSearch::kContinue;
  while (__syncthreads_or(status == sph::SupportSearch::kContinue)) {
    const bool iterating = status == sph::SupportSearch::kContinue;
    const double inv_h2 = 1.0 / (search.h * search.h);
    double s0 = 0.0, s1 = 0.0;
    for (int base = 0; base < w.n_j; base += kThreads) {
      const int m = loadTile<kThreads>(tile, epj, w, base);
      if (iterating)
        for (int q = 0; q < m; ++q) {
          const double dx = pi.x - tile[q].x, dy = pi.y - tile[q].y, dz = pi.z - tile[q].z;
          const sph::ShapeTerms st = sph::shapeTerms(dx * dx + dy * dy + dz * dz, inv_h2);
          s0 += tile[q].mass * st.w;
          s1 += tile[q].mass * st.q_dw;
        }
      __syncthreads();
    }
    if (iterating) status = search.advance(s0, s1, target, p);
  }

  const bool converged = status == sph::SupportSearch::kConverged;
  const sph::DensityIAtH at_h = sph::densityIAtH(pi.x, pi.y, pi.z, pi.vx, pi.vy, pi.vz, search.h);
  sph::DensitySums sums;
  for (int base = 0; base < w.n_j; base += kThreads) {
    const int m = loadTile<kThreads>(tile, epj, w, base);
    if (converged)
      for (int q = 0; q < m; ++q) sph::addDensityNeighbour(at_h, tile[q], sums);
    __syncthreads();
  }
  if (i < w.n_i) out[w.i_begin + i] = sph::densityResultOf(search.h, !converged, sums);
}

// The hydro pass: each thread sums its particle's pair terms over the walk's list
// (sph::addHydroNeighbour: pressure force, viscosity, du/dt, signal velocity).
template <int kThreads, class JSource>
__global__ void __launch_bounds__(kThreads)
    sphHydroKernel(const WalkTask* __restrict__ tasks, const WalkDesc* __restrict__ walks,
                   const sph::HydroSide* __restrict__ epi, JSource epj, double half_alpha,
                   sph::HydroResult* __restrict__ out) {
  __shared__ sph::HydroSide tile[kThreads];
  const WalkTask task = tasks[blockIdx.x];
  const WalkDesc w = walks[task.walk];
  const int i = task.i_first + static_cast<int>(threadIdx.x);
  const sph::HydroSide pi = epi[w.i_begin + ::min(i, w.n_i - 1)];
  sph::HydroResult f;
  for (int base = 0; base < w.n_j; base += kThreads) {
    const int m = loadTile<kThreads>(tile, epj, w, base);
    for (int q = 0; q < m; ++q) sph::addHydroNeighbour(pi, tile[q], half_alpha, f);
    __syncthreads();
  }
  if (i < w.n_i) out[w.i_begin + i] = f;
}

}  // namespace user::cuda
