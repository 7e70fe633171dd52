#pragma once
/// @file
/// The device building blocks that the pipeline's stages share (nvcc only): CUB's temporary
/// storage kept between calls, an exclusive prefix sum, the grid size that covers n items, and
/// the bounding box of device items (the first stage of a tree build; the domain decomposition's
/// root box too). Work goes on the given stream; boundingBox waits for its result. CUDA failures
/// throw grove::Error (grove::gpu::check).
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>

#include "grove/core/box.hpp"
#include "grove/core/execution.hpp"
#include "grove/core/particle_traits.hpp"
#include "grove/gpu/cuda_resources.hpp"
#include "grove/gpu/device_vector.hpp"

namespace grove::gpu {

/// Temporary storage for CUB calls on one stream, kept between calls. (Growing frees the old
/// buffer; cudaFree waits for the device, so work still reading it is done first.)
class CubScratch {
 public:
  /// Device storage of at least `bytes` bytes, valid until the next get() that grows it (the
  /// contents are not kept). Throws grove::Error when the allocation fails.
  void* get(std::size_t bytes) {
    if (storage_.size() < bytes) storage_.resize(bytes);
    return storage_.data();
  }
  /// Bytes allocated.
  std::size_t bytes() const { return storage_.bytes(); }

 private:
  DeviceVector<std::byte> storage_;
};

/// Exclusive prefix sum of `count` values (CUB, on `stream`, not waited for), its temporary
/// storage from `scratch`; `in` and `out` (device arrays of `count` elements) may be the same
/// array. `what` names the scan in the grove::Error thrown when CUDA fails.
template <class In, class Out>
void exclusiveSum(CubScratch& scratch, const In* in, Out* out, std::int64_t count, cudaStream_t stream,
                  const char* what) {
  std::size_t temp_bytes = 0;
  check(cub::DeviceScan::ExclusiveSum(nullptr, temp_bytes, in, out, count, stream), what);
  check(cub::DeviceScan::ExclusiveSum(scratch.get(temp_bytes), temp_bytes, in, out, count, stream), what);
}

/// Blocks of `threads` threads (> 0) that cover n items: ceil(n / threads).
inline unsigned blocksFor(std::size_t n, int threads) {
  return static_cast<unsigned>((n + static_cast<std::size_t>(threads) - 1) / static_cast<std::size_t>(threads));
}

/// boundingBox's default: the box of one point, a particle's position (positionOf).
struct PositionBoxOf {
  /// {positionOf(p), positionOf(p)}. Host and device.
  template <class P>
  GROVE_HD_TEMPLATE Boxd operator()(const P& p) const {
    const Vec3d x = positionOf(p);
    return {x, x};
  }
};
/// boundingBox's reduction: the union of two boxes.
struct MergeBoxes {
  /// a merged with b (Boxd::merge). Host and device.
  GROVE_HOST_DEVICE Boxd operator()(Boxd a, const Boxd& b) const {
    a.merge(b);
    return a;
  }
};

/// The bounding box of n items' positions (a device array), or of another box of each (box_of,
/// called on the device: e.g. a search sphere's); waits for it. Boxd::empty() for n = 0.
template <class P, class BoxOf = PositionBoxOf>
Boxd boundingBox(Gpu policy, const P* items, std::size_t n, CubScratch& scratch, BoxOf box_of = {}) {
  if (n == 0) return Boxd::empty();
  std::size_t temp_bytes = 0;
  Boxd* out = nullptr;
  check(cub::DeviceReduce::TransformReduce(nullptr, temp_bytes, items, out, n, MergeBoxes{}, box_of, Boxd::empty(),
                                           policy.stream),
        "cub::DeviceReduce::TransformReduce (bounding box, size)");
  const std::size_t out_offset = (temp_bytes + 63) / 64 * 64;
  auto* base = static_cast<std::byte*>(scratch.get(out_offset + sizeof(Boxd)));
  out = reinterpret_cast<Boxd*>(base + out_offset);
  check(cub::DeviceReduce::TransformReduce(base, temp_bytes, items, out, n, MergeBoxes{}, box_of, Boxd::empty(),
                                           policy.stream),
        "cub::DeviceReduce::TransformReduce (bounding box)");
  Boxd box;
  check(cudaMemcpyAsync(&box, out, sizeof(Boxd), cudaMemcpyDeviceToHost, policy.stream), "cudaMemcpyAsync (box)");
  check(cudaStreamSynchronize(policy.stream), "cudaStreamSynchronize (box)");
  return box;
}

}  // namespace grove::gpu
