#pragma once
/// @file
/// grove::gpu::DeviceParticleSystem<FP>: the user's full particles, resident in device memory
/// across steps (the GPU-resident pipeline's counterpart of grove::ParticleSystem). Needs the CUDA
/// runtime headers, not nvcc.
/// @code
///   grove::gpu::DeviceParticleSystem<Body> bodies(grove::Gpu{stream});
///   bodies.upload(host_bodies);                      // once, or after host-side changes
///   grove::gpu::forEach(bodies.policy(), bodies, Kick{dt});   // integrate on the device
///   tree.calcForceAllAndWriteBack(bodies, ep, sp);   // grove/force/resident_tree_long.cuh
///   auto snapshot = bodies.download();               // only when asked
/// @endcode
/// Order: a tree build sorts the particles into Morton-key order in place (as FDPS's and grove's
/// ParticleOrder::TREE_ORDER), so the order changes at every build; identify particles by a
/// member (an id), not by position in the array. orderGeneration() counts these reorders (and
/// uploads), so that kept interaction lists can tell that they no longer fit.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>
#include <vector>

#include "grove/core/execution.hpp"
#include "grove/gpu/device_vector.hpp"

namespace grove::gpu {

/// The user's full particles FP in device memory, on one stream.
///
/// Needs: FP trivially copyable (it is copied as bytes); the members the device calls marked
/// GROVE_HOST_DEVICE. Promises: the particles stay on the device between calls; every call that
/// reorders or replaces them increments orderGeneration().
template <class FP>
class DeviceParticleSystem {
  static_assert(std::is_trivially_copyable_v<FP>,
                "grove::gpu::DeviceParticleSystem: the particle type must be trivially copyable (it lives in "
                "device memory and is copied as bytes)");

 public:
  using value_type = FP;  ///< the particle type

  /// No particles yet; every copy and kernel of this system runs on policy.stream (the default
  /// stream when none is given).
  explicit DeviceParticleSystem(Gpu policy = {}) : policy_(policy) {}

  /// The execution policy (grove::Gpu{stream}) to hand to forEach, transformReduce and the trees.
  Gpu policy() const { return policy_; }
  /// The CUDA stream of every operation on these particles.
  cudaStream_t stream() const { return policy_.stream; }
  /// The number of particles on this rank.
  std::size_t size() const { return particles_.size(); }
  /// Device pointer to the particles (size() of them), for the user's own kernels on stream().
  FP* data() { return particles_.data(); }
  /// Device pointer to the particles (read only).
  const FP* data() const { return particles_.data(); }
  /// Counts uploads and reorders (tree builds, exchanges); a REUSE_LIST after a change is refused.
  std::uint64_t orderGeneration() const { return order_generation_; }
  /// Device memory held: the particles and the reorder buffer.
  std::size_t deviceBytes() const { return particles_.bytes() + scratch_.bytes(); }

  /// Replaces the device particles with n host particles; returns once they are on the device.
  void upload(const FP* host, std::size_t n) {
    particles_.assign(host, n, stream());
    ++order_generation_;
  }
  /// Replaces the device particles with those of a contiguous host range (std::vector, std::span).
  template <class Range>
    requires requires(const Range& r) {
      { std::data(r) } -> std::convertible_to<const FP*>;
      std::size(r);
    }
  void upload(const Range& host) {
    upload(std::data(host), std::size(host));
  }
  /// The particles, in their present (key) order; waits for stream().
  std::vector<FP> download() const { return particles_.toHost(stream()); }
  /// Copies the size() particles into host, which must hold that many; waits for stream().
  void download(FP* host) const { particles_.copyTo(host, stream()); }

  /// n particles, the first min(n, size()) kept (the exchange's stayers, before arrivals); the
  /// others are uninitialised until written.
  void resizeKeep(std::size_t n) {
    particles_.resizeKeep(n, stream());
    ++order_generation_;
  }

  /// For stages that reorder: a device buffer of size() particles to gather into, then
  /// adoptReordered() makes it the particle array (the old one becomes the next buffer).
  FP* reorderBuffer() {
    scratch_.resize(particles_.size());
    return scratch_.data();
  }
  /// Makes the reorderBuffer() the particle array (see there).
  void adoptReordered() {
    particles_.swap(scratch_);
    ++order_generation_;
  }

 private:
  Gpu policy_;
  DeviceVector<FP> particles_, scratch_;
  std::uint64_t order_generation_ = 0;
};

}  // namespace grove::gpu
