#pragma once
/// @file
/// The multiwalk engine's force kernel (nvcc only). One thread block takes a chunk of one walk's
/// i-particles (a WalkTask), one i-particle per thread (or kIPerThread of them), and streams the
/// walk's sources through shared memory in tiles of kThreads: every thread loads one source of the
/// tile, then each applies the user's interaction to all of them. The sources come either packed
/// per walk (plain form, or index form gathered on the host) or through index lists into arrays
/// that stay on the device (index form): the two differ only in how a tile is loaded, so plain,
/// gathered and indexed runs give bitwise-identical forces. Everything here is in
/// grove::gpu::kernel, internals of the multiwalk engine (grove/gpu/multiwalk/multiwalk_engine.cuh) and of
/// the resident trees' list kernel (grove/walk/group_lists_gpu.cuh's evaluateGroupLists).
#include <cuda_runtime.h>

#include <cstring>
#include <type_traits>

namespace grove::gpu::kernel {

/// One walk's slices of a block's arrays: its i-particles [i_begin, i_begin + n_i) of the block's
/// EPI and force arrays, its sources [j_begin, j_begin + n_j) of the EPJ list and
/// [s_begin, s_begin + n_s) of the SPJ list.
struct WalkDesc {
  int i_begin, n_i, j_begin, n_j, s_begin, n_s;  ///< see WalkDesc
};

/// One thread block's work: the i-particles [i_first, i_first + chunk) of walk `walk` (an index
/// into the WalkDesc array; i_first counts from the walk's i_begin).
struct WalkTask {
  int walk, i_first;  ///< see WalkTask
};

/// Loads a T with the widest accesses its size allows. Arrays here start at 256-byte boundaries
/// and are packed, so an element of a type whose size is a multiple of 16 is 16-byte aligned even
/// when the type's own alignment is 4 (a struct of floats): one 16-byte load instead of four.
/// Needs T trivially copyable and p aligned to the access width chosen (16, 8 or 4 bytes by
/// sizeof(T); bytewise otherwise).
template <class T>
__device__ __forceinline__ T loadWide(const T* p) {
  static_assert(std::is_trivially_copyable_v<T>);
  T v;
  if constexpr (sizeof(T) % 16 == 0) {
    int4 w[sizeof(T) / 16];
#pragma unroll
    for (int k = 0; k < int(sizeof(T) / 16); ++k) w[k] = reinterpret_cast<const int4*>(p)[k];
    memcpy(&v, w, sizeof(T));
  } else if constexpr (sizeof(T) % 8 == 0) {
    int2 w[sizeof(T) / 8];
#pragma unroll
    for (int k = 0; k < int(sizeof(T) / 8); ++k) w[k] = reinterpret_cast<const int2*>(p)[k];
    memcpy(&v, w, sizeof(T));
  } else if constexpr (sizeof(T) % 4 == 0) {
    int w[sizeof(T) / 4];
#pragma unroll
    for (int k = 0; k < int(sizeof(T) / 4); ++k) w[k] = reinterpret_cast<const int*>(p)[k];
    memcpy(&v, w, sizeof(T));
  } else {
    memcpy(&v, p, sizeof(T));
  }
  return v;
}

/// Stores v at p with the widest accesses its size allows, as loadWide loads (the same needs).
template <class T>
__device__ __forceinline__ void storeWide(T* p, const T& v) {
  static_assert(std::is_trivially_copyable_v<T>);
  if constexpr (sizeof(T) % 16 == 0) {
    int4 w[sizeof(T) / 16];
    memcpy(w, &v, sizeof(T));
#pragma unroll
    for (int k = 0; k < int(sizeof(T) / 16); ++k) reinterpret_cast<int4*>(p)[k] = w[k];
  } else if constexpr (sizeof(T) % 8 == 0) {
    int2 w[sizeof(T) / 8];
    memcpy(w, &v, sizeof(T));
#pragma unroll
    for (int k = 0; k < int(sizeof(T) / 8); ++k) reinterpret_cast<int2*>(p)[k] = w[k];
  } else if constexpr (sizeof(T) % 4 == 0) {
    int w[sizeof(T) / 4];
    memcpy(w, &v, sizeof(T));
#pragma unroll
    for (int k = 0; k < int(sizeof(T) / 4); ++k) reinterpret_cast<int*>(p)[k] = w[k];
  } else {
    memcpy(p, &v, sizeof(T));
  }
}

/// Sources packed per walk: element k of the block's list.
template <class T>
struct PackedSource {
  const T* __restrict__ list;  ///< the block's packed sources (device memory)
  /// list[k], loaded wide.
  __device__ __forceinline__ T operator()(int k) const { return loadWide(list + k); }
};

/// Sources through an index list into an array that stays on the device.
template <class T>
struct IndexedSource {
  const T* __restrict__ all;   ///< every source (device memory)
  const int* __restrict__ ids;  ///< the block's list: indices into all
  /// all[ids[k]], loaded wide.
  __device__ __forceinline__ T operator()(int k) const { return loadWide(all + ids[k]); }
};

/// Adds the interactions of count sources, source(begin) .. source(begin + count - 1), to each of
/// this thread's i-particles, kThreads sources per shared-memory tile (`tile`: kThreads T in
/// shared memory). Every thread of the block (kThreads of them) must call it alike: it
/// synchronises the block.
template <int kThreads, int kIPerThread, class T, class Source, class Interaction, class DI, class Force>
__device__ __forceinline__ void accumulateTiles(T* tile, const Source& source, int begin, int count,
                                                const Interaction& interact, const DI (&xi)[kIPerThread],
                                                Force (&f)[kIPerThread]) {
  for (int base = 0; base < count; base += kThreads) {
    const int k = base + static_cast<int>(threadIdx.x);
    if (k < count) storeWide(tile + threadIdx.x, source(begin + k));
    __syncthreads();
    const int m = ::min(kThreads, count - base);
#pragma unroll 4
    for (int q = 0; q < m; ++q) {
      const T j = loadWide(tile + q);
#pragma unroll
      for (int u = 0; u < kIPerThread; ++u) interact(xi[u], j, f[u]);
    }
    __syncthreads();  // the tile is overwritten next
  }
}

/// Bytes of a shared-memory tile of `threads` sources: the larger of the EPJ and SPJ images.
template <class DJ, class DS>
constexpr std::size_t tileBytes(int threads) {
  return static_cast<std::size_t>(threads) * (sizeof(DJ) > sizeof(DS) ? sizeof(DJ) : sizeof(DS));
}

/// The force kernel: block b evaluates tasks[b] (a chunk of walks[tasks[b].walk]'s i-particles,
/// kThreads * kIPerThread of them at most), ep over the EPJ sources, then sp over the SPJ
/// sources, and stores the forces at force[i_begin + i]. Launch with kThreads threads a block;
/// every task's walk must have n_i > 0.
/// kHasSp = false (short range) skips the superparticle phase; DS and Sp are then placeholders.
/// kAccumulate: each i-particle starts from its force already in `force` (a second set of lists,
/// e.g. the resident tree's walk of the LET tree after its local walk) instead of Force{}.
template <int kThreads, int kIPerThread, bool kHasSp, class DI, class DJ, class DS, class Force, class Ep,
          class Sp, class JSource, class SSource, bool kAccumulate = false>
__global__ void __launch_bounds__(kThreads)
    multiwalkKernel(const WalkTask* __restrict__ tasks, const WalkDesc* __restrict__ walks,
                    const DI* __restrict__ epi, JSource j_source, SSource s_source, Ep ep, Sp sp,
                    Force* __restrict__ force) {
  __shared__ alignas(16) unsigned char tile[tileBytes<DJ, DS>(kThreads)];
  const WalkTask task = tasks[blockIdx.x];
  const WalkDesc w = walks[task.walk];

  DI xi[kIPerThread];
  Force f[kIPerThread];
#pragma unroll
  for (int u = 0; u < kIPerThread; ++u) {
    // Threads past the walk's end compute on its last particle and store nothing: every thread
    // must reach the barriers.
    const int i = ::min(task.i_first + u * kThreads + static_cast<int>(threadIdx.x), w.n_i - 1);
    xi[u] = loadWide(epi + w.i_begin + i);
    if constexpr (kAccumulate) f[u] = loadWide(force + w.i_begin + i);
    else f[u] = Force{};
  }
  accumulateTiles<kThreads, kIPerThread>(reinterpret_cast<DJ*>(tile), j_source, w.j_begin, w.n_j, ep, xi, f);
  if constexpr (kHasSp)
    accumulateTiles<kThreads, kIPerThread>(reinterpret_cast<DS*>(tile), s_source, w.s_begin, w.n_s, sp, xi, f);
#pragma unroll
  for (int u = 0; u < kIPerThread; ++u) {
    const int i = task.i_first + u * kThreads + static_cast<int>(threadIdx.x);
    if (i < w.n_i) storeWide(force + w.i_begin + i, f[u]);
  }
}

}  // namespace grove::gpu::kernel
