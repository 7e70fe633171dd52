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
///
/// Memory: a reorder gathers into a second array of the particles by default (the fastest, but
/// it doubles what the particles hold); setReorderMemory(ReorderMemory::kInPlace) reorders in
/// place through 16 bytes of scratch per particle instead (grove::gpu::permuteInPlace), for the
/// largest runs a card can hold. The order, and so every result, is the same either way.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

#include "grove/core/error.hpp"
#include "grove/core/execution.hpp"
#include "grove/gpu/device_vector.hpp"
#include "grove/gpu/permute_in_place.hpp"

namespace grove::gpu {

/// How a DeviceParticleSystem's particles are reordered (a tree build's sort, an exchange).
enum class ReorderMemory {
  kCopy,     ///< gathered into a second array of size() particles, which then becomes the particles
  kInPlace,  ///< permuted in place, a 16-byte column at a time, through 16 bytes per particle
};

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
  /// Device memory held: the particles and the reorder buffer (or the in-place reorder's scratch).
  std::size_t deviceBytes() const { return particles_.bytes() + reorderScratchBytes(); }

  /// How reorders move the particles (kCopy unless set). Setting it frees the other mode's buffer.
  void setReorderMemory(ReorderMemory mode) {
    reorder_memory_ = mode;
    if (mode == ReorderMemory::kCopy) columns_.release();
    else scratch_.release();
  }
  /// See setReorderMemory.
  ReorderMemory reorderMemory() const { return reorder_memory_; }
  /// Device bytes allocated now for reorders (the reorder buffer or the in-place scratch).
  std::size_t reorderScratchBytes() const { return scratch_.bytes() + columns_.bytes(); }
  /// The device bytes per particle a reorder holds besides the particles: sizeof(FP) for kCopy;
  /// for kInPlace the permutation's column (at most 16), or the 12 of a tree build's sort when
  /// that is more (the sort borrows the same scratch).
  std::size_t reorderBytesPerParticle() const {
    return reorder_memory_ == ReorderMemory::kCopy
               ? sizeof(FP)
               : std::max<std::size_t>(permuteScratchBytesPerItem(sizeof(FP)), kSortBytesPerParticle);
  }
  /// What a tree build's radix sort borrows of the kInPlace scratch per particle: its second key
  /// (8 bytes) and index (4 bytes) buffers.
  static constexpr std::size_t kSortBytesPerParticle = 12;

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

  /// For stages that reorder under ReorderMemory::kCopy: a device buffer of size() particles to
  /// gather into, then adoptReordered() makes it the particle array (the old one becomes the next
  /// buffer). Under kInPlace, stages call reorder(index) instead, and this throws grove::Error.
  FP* reorderBuffer() {
    require(reorder_memory_ == ReorderMemory::kCopy, "DeviceParticleSystem::reorderBuffer",
            "the particles reorder in place (ReorderMemory::kInPlace): there is no second array to gather into");
    scratch_.resize(particles_.size());
    return scratch_.data();
  }
  /// Puts the particles in the order of index (a device array of size() entries, a permutation:
  /// place k receives the particle at index[k]) through the scratch of reorderMemory(): under
  /// kCopy a gather into the reorder buffer, which is then adopted; under kInPlace
  /// grove::gpu::permuteInPlace. On stream(); not waited for.
  void reorder(const std::uint32_t* index) {
    const std::size_t n = particles_.size();
    if (reorder_memory_ == ReorderMemory::kCopy) {
      scratch_.resize(n);
      gatherItems(particles_.data(), n, sizeof(FP), index, scratch_.data(), stream());
      adoptReordered();
    } else {
      resizeColumns(n * permuteScratchBytesPerItem(sizeof(FP)));
      permuteInPlace(particles_.data(), n, sizeof(FP), index, columns_.data(), stream());
      ++order_generation_;
    }
  }
  /// The device memory this system keeps for its reorders, idle between them: stages that run on
  /// stream() after one reorder and before the next may borrow it (the resident tree's walks keep
  /// their stacks there). Sized for size() particles; under kInPlace grown to at least
  /// `at_least` bytes (the borrower's need: one buffer then serves both), under kCopy never
  /// grown. Returns its start and its allocated bytes (which may exceed what was asked); {nullptr,
  /// 0} while there are no particles. A call that grows it (more particles, a larger at_least),
  /// as reorder() and setReorderMemory() may, frees the old memory after the device has finished
  /// with it: a pointer handed out before is then no longer valid.
  std::pair<void*, std::size_t> idleReorderScratch(std::size_t at_least = 0) {
    const std::size_t n = particles_.size();
    if (n == 0) return {nullptr, 0};
    if (reorder_memory_ == ReorderMemory::kCopy) {
      scratch_.resize(n);
      return {scratch_.data(), scratch_.bytes()};
    }
    resizeColumns(std::max(n * permuteScratchBytesPerItem(sizeof(FP)), at_least));
    return {columns_.data(), columns_.bytes()};
  }
  /// Makes the reorderBuffer() the particle array (see there); under kInPlace, where there is no
  /// such buffer, throws grove::Error and keeps the particles.
  void adoptReordered() {
    require(reorder_memory_ == ReorderMemory::kCopy && scratch_.size() == particles_.size(),
            "DeviceParticleSystem::adoptReordered",
            "no reorder buffer of {} particles to adopt (it holds {}; reorder memory: {})", particles_.size(),
            scratch_.size(), reorder_memory_ == ReorderMemory::kCopy ? "copy" : "in place");
    particles_.swap(scratch_);
    ++order_generation_;
  }

 private:
  // 16 bytes, aligned as permuteInPlace's widest word.
  struct alignas(16) Column {
    unsigned char bytes[16];
  };
  // kInPlace's scratch holding at least `bytes` (it keeps a larger allocation).
  void resizeColumns(std::size_t bytes) { columns_.resize(bytes / sizeof(Column) + 1); }

  Gpu policy_;
  DeviceVector<FP> particles_, scratch_;
  DeviceVector<Column> columns_;  // kInPlace's scratch
  ReorderMemory reorder_memory_ = ReorderMemory::kCopy;
  std::uint64_t order_generation_ = 0;
};

}  // namespace grove::gpu
