#pragma once
// User template: the hand-written multiwalk gravity kernel (copy and edit), used by
// gravity_multiwalk.cuh's dispatch/retrieve pair and by the kernel benchmark.
//
// Data on the device (all float; the sources in 16-byte elements, so that one load fetches one):
//   epi    Position (x, y, z)           the i-particles of all walks, walk after walk (read once
//                                       per thread; 12 bytes, so that it can be the host's EPI)
//   epj    float4 (x, y, z, m)          the j-particles: per walk (plain form) or the whole array
//   spj    DeviceMonopole (x, y, z, m)  or DeviceQuadrupole (x, y, z, m, traceless T): the same
//   force  float4 (ax, ay, az, pot)     one per i-particle
// Each walk is a WalkRange of offsets into those arrays (plain form) or into the index lists
// (index form). A thread block computes one WalkTask: up to kThreads * kIPerThread consecutive
// i-particles of one walk, one (or kIPerThread) per thread, so a large walk takes several blocks
// and the device stays busy when walks differ in size. The j-particles go through shared memory
// in tiles of kThreads: each thread loads one, then every thread applies all of them.
#include <cuda_runtime.h>

#include <vector>

#include "gravity_device_physics.cuh"
#include "grove/tree/device_form.hpp"

namespace user::cuda {

// An i-particle's position: byte for byte the template's GravityEPI, so that a tree's EPI array
// can go to the device as it is.
struct Position {
  float x, y, z;
};

struct WalkRange {
  int i_begin, n_i, j_begin, n_j, s_begin, n_s;
};

struct WalkTask {
  int walk, i_first;
};

// Where a tile's sources come from. Plain form: each walk's own packed list.
template <class T>
struct PackedList {
  const T* __restrict__ list;
  __device__ __forceinline__ T operator()(int k) const { return list[k]; }
};

// Index form: an index list into the whole array, which stays on the device for the step.
template <class T>
struct IndexedList {
  const T* __restrict__ all;
  const int* __restrict__ ids;
  __device__ __forceinline__ T operator()(int k) const { return all[ids[k]]; }
};

__device__ __forceinline__ void addSource(const float4& xi, const float4& j, float eps2, float4& f) {
  addMonopole(xi.x, xi.y, xi.z, j.x, j.y, j.z, j.w, eps2, f.x, f.y, f.z, f.w);
}
__device__ __forceinline__ void addSource(const float4& xi, const grove::gpu::DeviceMonopole& s, float eps2,
                                          float4& f) {
  addMonopole(xi.x, xi.y, xi.z, s.x, s.y, s.z, s.mass, eps2, f.x, f.y, f.z, f.w);
}
__device__ __forceinline__ void addSource(const float4& xi, const grove::gpu::DeviceQuadrupole& s, float eps2,
                                          float4& f) {
  addQuadrupole(xi.x, xi.y, xi.z, s, eps2, f.x, f.y, f.z, f.w);
}

// count sources source(begin) .. source(begin + count - 1), through shared memory. Each thread
// loads the next tile's source into a register while the block computes the current tile, so the
// (gathered, in the index form) global loads overlap the arithmetic instead of stalling it.
template <int kThreads, int kIPerThread, class T, class Source>
__device__ __forceinline__ void addTiles(T* tile, const Source& source, int begin, int count, float eps2,
                                         const float4 (&xi)[kIPerThread], float4 (&f)[kIPerThread]) {
  const int t = static_cast<int>(threadIdx.x);
  T next{};
  if (t < count) next = source(begin + t);
  for (int base = 0; base < count; base += kThreads) {
    tile[t] = next;
    __syncthreads();
    if (base + kThreads + t < count) next = source(begin + base + kThreads + t);
    const int m = ::min(kThreads, count - base);
    if (m == kThreads) {  // a full tile: a fixed trip count, unrolled without a remainder
#pragma unroll 8
      for (int q = 0; q < kThreads; ++q) {
        const T s = tile[q];  // the same address for the whole warp: a broadcast
#pragma unroll
        for (int u = 0; u < kIPerThread; ++u) addSource(xi[u], s, eps2, f[u]);
      }
    } else {
#pragma unroll 4
      for (int q = 0; q < m; ++q) {
        const T s = tile[q];
#pragma unroll
        for (int u = 0; u < kIPerThread; ++u) addSource(xi[u], s, eps2, f[u]);
      }
    }
    __syncthreads();
  }
}

// SpjImage: grove::gpu::DeviceMonopole or DeviceQuadrupole. JList/SList: PackedList or IndexedList.
template <int kThreads, int kIPerThread, class SpjImage, class JList, class SList>
__global__ void __launch_bounds__(kThreads)
    gravityWalkKernel(const WalkTask* __restrict__ tasks, const WalkRange* __restrict__ walks,
                      const Position* __restrict__ epi, JList epj, SList spj, float eps2,
                      float4* __restrict__ force) {
  __shared__ float4 j_tile[kThreads];
  __shared__ SpjImage s_tile[kThreads];
  const WalkTask task = tasks[blockIdx.x];
  const WalkRange w = walks[task.walk];
  float4 xi[kIPerThread], f[kIPerThread];
#pragma unroll
  for (int u = 0; u < kIPerThread; ++u) {
    // Threads past the walk's end work on its last particle and store nothing: all threads must
    // take part in loading tiles and reach every barrier.
    const int i = ::min(task.i_first + u * kThreads + static_cast<int>(threadIdx.x), w.n_i - 1);
    const Position p = epi[w.i_begin + i];
    xi[u] = make_float4(p.x, p.y, p.z, 0.0f);
    f[u] = make_float4(0.f, 0.f, 0.f, 0.f);
  }
  addTiles<kThreads, kIPerThread>(j_tile, epj, w.j_begin, w.n_j, eps2, xi, f);
  addTiles<kThreads, kIPerThread>(s_tile, spj, w.s_begin, w.n_s, eps2, xi, f);
#pragma unroll
  for (int u = 0; u < kIPerThread; ++u) {
    const int i = task.i_first + u * kThreads + static_cast<int>(threadIdx.x);
    if (i < w.n_i) force[w.i_begin + i] = f[u];
  }
}

template <int kThreads, int kIPerThread, class SpjImage, class JList, class SList>
void launchGravityWalks(cudaStream_t stream, int n_tasks, const WalkTask* tasks, const WalkRange* walks,
                        const Position* epi, JList epj, SList spj, float eps2, float4* force) {
  if (n_tasks == 0) return;
  gravityWalkKernel<kThreads, kIPerThread, SpjImage>
      <<<n_tasks, kThreads, 0, stream>>>(tasks, walks, epi, epj, spj, eps2, force);
}

// The tasks of walks with n_epi[w] i-particles, chunk i-particles per task.
inline void appendTasks(const int* n_epi, int n_walk, int chunk, std::vector<WalkTask>& tasks) {
  for (int w = 0; w < n_walk; ++w)
    for (int first = 0; first < n_epi[w]; first += chunk) tasks.push_back({w, first});
}

}  // namespace user::cuda
