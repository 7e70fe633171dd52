#pragma once
/// @file
/// The device form of grove/tree/key_order.hpp: the particle stages that the resident long- and
/// short-range trees share (nvcc only): the
/// particles' Morton keys and stable sort (tree_build_gpu.cuh's mortonKeys and sortByKey) put
/// together as one step, the gather of the particles into key order with their EPI and EPJ, and
/// the write-back of the forces; and the key order of staged items (a global tree's particles).
/// A tree keeps its keys and permutation in a KeyOrder; the cells are then linked from its keys.
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "grove/core/error.hpp"
#include "grove/core/execution.hpp"
#include "grove/gpu/cuda_resources.hpp"
#include "grove/gpu/device_particle_system.hpp"
#include "grove/gpu/device_vector.hpp"
#include "grove/gpu/stage_marks.hpp"
#include "grove/tree/device_form.hpp"
#include "grove/tree/tree_build_gpu.cuh"

namespace grove::gpu {

namespace kernel {

// FP -> (FP in key order, EPI, EPJ and their device images); index null: the identity (refresh).
// out null: the particles stay where they are. di / dj are written only when the device image is
// a type of its own (DeviceForm), else they alias epi / epj.
template <class FP, class EPI, class EPJ, class DI, class DJ>
__global__ void gatherParticles(const FP* __restrict__ in, const std::uint32_t* __restrict__ index, std::size_t n,
                                FP* __restrict__ out, EPI* __restrict__ epi, EPJ* __restrict__ epj,
                                DI* __restrict__ di, DJ* __restrict__ dj) {
  const std::size_t k = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (k >= n) return;
  const FP fp = in[index ? index[k] : k];
  if (out) out[k] = fp;
  EPI i;
  i.copyFromFP(fp);
  epi[k] = i;
  EPJ j;
  j.copyFromFP(fp);
  epj[k] = j;
  if constexpr (!std::is_same_v<DI, EPI>) di[k] = DeviceForm<EPI>::make(i);
  if constexpr (!std::is_same_v<DJ, EPJ>) dj[k] = DeviceForm<EPJ>::make(j);
}

// index[k] = k: the identity permutation (items whose keys are known to be in order).
static __global__ void sequence(std::uint32_t* __restrict__ index, std::size_t n) {
  const std::size_t k = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (k < n) index[k] = static_cast<std::uint32_t>(k);
}

template <class FP, class Force>
__global__ void writeBackForces(FP* __restrict__ particles, const Force* __restrict__ force, std::size_t n) {
  const std::size_t k = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (k < n) particles[k].copyFromForce(force[k]);
}

}  // namespace kernel

/// A tree's particles in key order: their keys and the permutation (index[k]: the particle that
/// went to place k), with the radix sort's second buffers.
struct KeyOrder {
  /// keys: the particles' Morton keys, sorted ascending.
  DeviceVector<MortonKey> keys, keys_alt;  ///< keys_alt: the radix sort's second key buffer
  /// index: index[k] is the particle (its place before the sort) now at place k.
  DeviceVector<std::uint32_t> index, index_alt;  ///< index_alt: the radix sort's second index buffer

  /// Device bytes allocated by the four arrays.
  std::size_t bytes() const { return keys.bytes() + keys_alt.bytes() + index.bytes() + index_alt.bytes(); }
};

/// Stages 2 and 3 of a build: the keys of psys's particles under root and their stable sort into
/// `order` (its arrays resized to psys.size(); marks Stage::kKeys and Stage::kSort), then the
/// particles into key order (marks Stage::kReorder). gather(psys, index, out) reads particle
/// index[k] into place k of the stage's own arrays (EPI, EPJ) and, when out is not null, into
/// out[k]: under ReorderMemory::kCopy out is psys.reorderBuffer(), adopted after, so one pass
/// moves everything; under kInPlace out is null and psys.reorder() permutes the particles after.
/// All on the policy's stream, which marks should have begun; not waited for.
template <class Stage, class FP, class Gather>
void sortIntoKeyOrder(Gpu policy, const RootCell& root, DeviceParticleSystem<FP>& psys, KeyOrder& order,
                      CubScratch& cub, StageMarks<Stage>& marks, Gather&& gather) {
  const std::size_t n = psys.size();
  order.keys.resize(n);
  order.index.resize(n);
  mortonKeys(policy, root, psys.data(), n, order.keys.data(), order.index.data());
  marks.mark(policy.stream, Stage::kKeys);
  if (psys.reorderMemory() == ReorderMemory::kCopy) {
    sortByKey(policy, order.keys, order.keys_alt, order.index, order.index_alt, cub);
  } else {
    // The particle system's in-place scratch (idle until the reorder below) holds the sort's
    // second buffers: 12 of its 16 bytes per particle, instead of 12 more of the tree's own.
    static_assert(sizeof(MortonKey) + sizeof(std::uint32_t) == DeviceParticleSystem<FP>::kSortBytesPerParticle);
    const std::size_t key_bytes = n * sizeof(MortonKey);
    auto* lent = static_cast<std::byte*>(psys.idleReorderScratch(key_bytes + n * sizeof(std::uint32_t)).first);
    order.keys_alt.release();
    order.index_alt.release();
    sortByKey(policy, order.keys, reinterpret_cast<MortonKey*>(lent), order.index,
              reinterpret_cast<std::uint32_t*>(lent + key_bytes), cub);
  }
  marks.mark(policy.stream, Stage::kSort);
  if (psys.reorderMemory() == ReorderMemory::kCopy) {
    gather(psys, order.index.data(), psys.reorderBuffer());
    psys.adoptReordered();
  } else {
    gather(psys, order.index.data(), static_cast<FP*>(nullptr));
    psys.reorder(order.index.data());
  }
  marks.mark(policy.stream, Stage::kReorder);
}

/// The key order of n items (a device array) under root: their keys, stably sorted, into `order`
/// (resized to n; order.index[k]: the item now at place k). The first n_keyed items already have
/// their keys in keyed (keyed[k]: item k's; a tree's own particles at the head of a global
/// tree's): those are copied, not recomputed, and the stable sort keeps each before the later
/// items of its key.
/// On the policy's stream; not waited for.
template <class P>
void sortIntoKeyOrder(Gpu policy, const RootCell& root, const P* items, std::size_t n, KeyOrder& order,
                      CubScratch& cub, const MortonKey* keyed = nullptr, std::size_t n_keyed = 0) {
  require(n_keyed <= n && (n_keyed == 0 || keyed != nullptr), "sortIntoKeyOrder",
          "{} known keys for {} items (and keys given: {})", n_keyed, n, keyed != nullptr);
  order.keys.resize(n);
  order.index.resize(n);
  if (n_keyed > 0) {
    check(cudaMemcpyAsync(order.keys.data(), keyed, n_keyed * sizeof(MortonKey), cudaMemcpyDeviceToDevice,
                          policy.stream),
          "cudaMemcpyAsync (known keys)");
    kernel::sequence<<<blocksFor(n_keyed, 256), 256, 0, policy.stream>>>(order.index.data(), n_keyed);
    check(cudaGetLastError(), "sequence kernel launch");
  }
  mortonKeys(policy, root, items + n_keyed, n - n_keyed, order.keys.data() + n_keyed, order.index.data() + n_keyed,
             static_cast<std::uint32_t>(n_keyed));
  sortByKey(policy, order.keys, order.keys_alt, order.index, order.index_alt, cub);
}

/// particles[k].copyFromForce(force[k]) for each of the n particles (device arrays), on the
/// policy's stream; not waited for.
template <class FP, class Force>
void writeBackForces(Gpu policy, FP* particles, const Force* force, std::size_t n) {
  if (n == 0) return;
  kernel::writeBackForces<<<blocksFor(n, 256), 256, 0, policy.stream>>>(particles, force, n);
  check(cudaGetLastError(), "writeBackForces kernel launch");
}

}  // namespace grove::gpu
