#pragma once
/// @file
/// grove::fmm::DeviceNearField: the FMM's near field on the GPU that ran its traversal
/// (grove::fmm::DeviceFarField), from the P2P lists the traversal leaves on the device, with the
/// user's pairwise interaction. nvcc only: include it in the .cu file that instantiates the
/// interaction, and hand the object to ordinary translation units as the host-only
/// grove::fmm::NearFieldOnDevice (grove/fmm/device_near_field.hpp).
///
///     // in the user's .cu: the interaction as for grove's multiwalk engine (over DeviceFormOf<EPI>
///     // and DeviceFormOf<EPJ>: EPI and EPJ themselves unless DeviceForm is specialised)
///     struct NewtonEp {
///       __device__ void operator()(const EPI& i, const EPJ& j, Force& f) const { ... }  // j's pull on i
///     };
///     std::unique_ptr<grove::fmm::NearFieldOnDevice<Force, EPI, EPJ>> makeNear(
///         std::shared_ptr<grove::fmm::DeviceFarField> engine) {
///       return grove::fmm::makeDeviceNearField<Force, EPI, EPJ>(std::move(engine), NewtonEp{});
///     }
///     // anywhere:
///     fmm.setFarFieldEngine(engine);
///     fmm.calcForceAllAndWriteBackOnDevice(*near, psys, dinfo);
///
/// How it runs. A warp per task: a chunk of 32 particles of a target leaf with a run of its source
/// leaves, each a contiguous range of the step's EPJ array (key order: no index list). The warp
/// takes 32 sources at a time (one per lane: their ranges and a prefix sum over them), fills a
/// shared tile with the next 32 of their particles laid end to end, and each lane adds the tile's
/// interactions to its i-particle. A leaf of more than 32 particles is several tasks, one per
/// chunk, so that a block's warps end soon: blocks that hold the multiprocessors for long keep
/// the far field's and the traversal's kernels (of higher priorities) waiting for room, and
/// with them the host's waits on them.
/// - With `+=` on Force (callable on the device: GROVE_HOST_DEVICE): leaves hold few particles
///   (about 10 at n_leaf 32), so the warp is cut into 32 / w lane groups (w: n_i rounded up to a
///   power of two), each taking every (32 / w)-th source of the tile, and the groups' partial
///   forces are summed in group order. A larger leaf's last chunk of particles (n_i mod 32 of
///   them) is split the same way. A target's list is cut into windows of about 8192 source
///   particles (the sources that start within each window of 8192), whose partial forces are
///   summed in window order: a sparse leaf in a cluster's outskirts meets thousands of leaves,
///   and alone in one warp it ran 10 times longer than the rest of the kernel. The cuts are found
///   by a warp per target, 32 sources at a time.
/// - Without `+=`: one lane serves one i-particle and a leaf's list is one window, in the host's
///   order of additions.
/// Every sum has a fixed order: the result does not depend on timing. The interaction sees i = j
/// (a particle in its own leaf's list, as FDPS's kernels do) and must give it no force
/// (softening, or skipping r = 0).
///
/// EPI and EPJ travel as grove::gpu::DeviceFormOf (grove/tree/device_form.hpp): by default
/// themselves, byte for byte; a specialised DeviceForm is made on the host while packing. Both go
/// through page-locked staging, slice by slice, as the multiwalk engine sends its arrays; the
/// forces come back through page-locked staging too (a copy at the bus's full speed, then out on
/// the host's threads). The tasks' set-up (a few small kernels and the read-back of their counts)
/// runs on the traversal's stream, at the device's highest priority, so that the host's wait for
/// the count does not sit behind the far field's M2L blocks; the transfers, the near field and
/// its sums run on a stream of the near field's own, of the default priority: the engine's
/// traversal and far field have higher priorities and run beside the kernel.
///
/// Where FmmForce exchanges a LET across ranks, the engine traverses the tree's own cells before
/// it (DeviceFarField::startLocal), and startLocal() here uploads the EPI and the local EPJ and
/// launches the local leaf pairs' near field at once: it runs while the LET is selected and
/// exchanged. evaluate() then uploads the received EPJ and launches the received leaves' pairs
/// (periodic images' too), which add to the same forces. A target's sources are still taken in the order
/// of its whole list (the local cells first), so one lane per particle gives the same forces, bit
/// for bit; with lane groups the windows' cuts differ (the end of the local sources is one more).
#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <span>
#include <type_traits>
#include <utility>

#include "grove/core/error.hpp"
#include "grove/fmm/device_far_field_gpu.h"
#include "grove/fmm/device_near_field.hpp"
#include "grove/gpu/cuda_resources.hpp"
#include "grove/gpu/device_primitives.cuh"
#include "grove/gpu/device_vector.hpp"
#include "grove/tree/device_form.hpp"

namespace grove::fmm {

namespace kernel {

/// One warp's share of the near field: the sources items[first .. last) of target cell `target`,
/// for its particles chunk .. chunk + 31 (a chunk of 32: the leaf's particles are cut into them);
/// `segment` >= 0 when the target's list is cut into several windows (its partial forces are then
/// summed by sumSegments), -1 when this window is the target's only one.
struct P2pTask {
  std::int64_t first, last;
  int target, segment, chunk;
};

/// The particles of a near-field task: a chunk of a leaf, one per lane.
inline constexpr int kChunk = 32;

/// The chunks of kChunk particles that a leaf of n particles is cut into.
__host__ __device__ inline int chunksOf(int n) { return n <= 0 ? 0 : (n - 1) / kChunk + 1; }

/// The smallest power of two >= n (n >= 1).
__device__ __forceinline__ int powerOfTwoAtLeast(int n) { return n <= 1 ? 1 : 1 << (32 - __clz(n - 1)); }

/// A warp's walk over target t's sources, 32 at a time (a lane each, with a prefix sum of their
/// particles): source e opens a window when it is the target's first, or when the particles of
/// the sources before it pass a multiple of max_particles, so a window holds the sources that
/// start within one window of max_particles particles (the last of them may run past it). Calls
/// open(e, k) on the lane of each source e that opens window k (k counts within the target) and
/// returns the target's windows: at least one for a list of one source or more, none for an
/// empty list. Every lane of the warp must call it alike.
template <class Open>
__device__ int forEachWindowOpening(const FmmCell* cells, const std::int64_t* offsets, const int* items, int t,
                                 long long max_particles, int lane, Open&& open) {
  const std::int64_t first = offsets[t], last = offsets[t + 1];
  long long before = 0;     // particles of the sources before this batch
  long long last_size = 0;  // the particles of the source before this batch's first
  int windows = 0;
  for (std::int64_t batch = first; batch < last; batch += 32) {
    const std::int64_t e = batch + lane;
    long long size = 0;
    if (e < last) {
      const int s = items[e];
      size = cells[s].end - cells[s].begin;
    }
    long long through = size;  // inclusive prefix sum over the lanes
    for (int d = 1; d < 32; d <<= 1) {
      const long long below = __shfl_up_sync(0xffffffffu, through, d);
      if (lane >= d) through += below;
    }
    long long previous_size = __shfl_up_sync(0xffffffffu, size, 1);
    if (lane == 0) previous_size = last_size;
    const long long ahead = before + through - size;  // the target's particles before source e
    const bool opens = e < last && (e == first || ahead / max_particles != (ahead - previous_size) / max_particles);
    const unsigned openers = __ballot_sync(0xffffffffu, opens);
    if (opens) open(e, windows + __popc(openers & ((1u << lane) - 1u)));
    windows += __popc(openers);
    before += __shfl_sync(0xffffffffu, through, 31);
    last_size = __shfl_sync(0xffffffffu, size, 31);
  }
  return windows;
}

// Non-template kernels in a header are static (as in grove/walk/walk_gpu.cuh): each .cu that
// includes it compiles its own copy, and no host stub is defined twice at link time.

/// Warp t of the grid, per target cell t: its tasks, a window's chunk each (none for a cell with
/// children or without particles; for a leaf whose list is empty one window with `every_leaf`,
/// so that its forces are still written, else none), and the partial forces its windows leave
/// (n_i per window when there are several, else none).
static __global__ void countTasks(const FmmCell* __restrict__ cells, int target_count,
                                  const std::int64_t* __restrict__ offsets, const int* __restrict__ items,
                                  long long max_particles, bool every_leaf, std::int64_t* __restrict__ tasks,
                                  std::int64_t* __restrict__ partials) {
  const int t = static_cast<int>((blockIdx.x * blockDim.x + threadIdx.x) / 32);
  const int lane = static_cast<int>(threadIdx.x % 32);
  if (t >= target_count) return;  // the whole warp
  const int n_i = cells[t].end - cells[t].begin;
  int windows = 0;
  if (cells[t].child_count == 0 && n_i > 0)
    windows = ::max(every_leaf ? 1 : 0,
                    forEachWindowOpening(cells, offsets, items, t, max_particles, lane, [](std::int64_t, int) {}));
  if (lane == 0) {
    tasks[t] = static_cast<std::int64_t>(windows) * chunksOf(n_i);
    partials[t] = windows > 1 ? static_cast<std::int64_t>(windows) * n_i : 0;
  }
}

/// Warp t of the grid writes target t's tasks from task_begin[t] on (countTasks' counts,
/// scanned), window by window, each window's chunks in a row. Each window's fields are written
/// by one lane: its `last` by the lane that opens the next.
static __global__ void writeTasks(const FmmCell* __restrict__ cells, int target_count,
                                  const std::int64_t* __restrict__ offsets, const int* __restrict__ items,
                                  long long max_particles, const std::int64_t* __restrict__ task_begin,
                                  P2pTask* __restrict__ out) {
  const int t = static_cast<int>((blockIdx.x * blockDim.x + threadIdx.x) / 32);
  const int lane = static_cast<int>(threadIdx.x % 32);
  if (t >= target_count) return;  // the whole warp
  const auto count = static_cast<int>(task_begin[t + 1] - task_begin[t]);
  if (count == 0) return;
  const int chunks = chunksOf(cells[t].end - cells[t].begin), windows = count / chunks;
  P2pTask* mine = out + task_begin[t];
  forEachWindowOpening(cells, offsets, items, t, max_particles, lane, [&](std::int64_t e, int k) {
    for (int c = 0; c < chunks; ++c) {
      // Field by field: `last` is the next window's opener's to write.
      P2pTask& task = mine[k * chunks + c];
      task.first = e;
      task.target = t;
      task.segment = windows > 1 ? k : -1;
      task.chunk = c * kChunk;
      if (k > 0) mine[(k - 1) * chunks + c].last = e;
    }
  });
  if (lane == 0) {
    for (int c = 0; c < chunks; ++c) {
      if (offsets[t] == offsets[t + 1]) mine[c] = P2pTask{offsets[t], offsets[t], t, -1, c * kChunk};  // empty list
      mine[(windows - 1) * chunks + c].last = offsets[t + 1];
    }
  }
}

/// The near field, warp w of the grid on tasks[w]: adds interact(epi[i], epj[j], .) over every j
/// of the task's source cells (ranges cells[s].begin .. end) for every i of its chunk of its
/// target leaf. A target's only window starts from the cleared force (forces_cleared) or from
/// forces[i] and stores into forces[i]; a window among several starts cleared and stores into
/// partials[partial_begin[t] + segment * n_i + (i - begin)]. kSplit: lane groups summed with
/// Force's += (see the top of the file). A window's first chunk adds n_i times the window's
/// source particles to *interactions. Launch with kWarps * 32 threads a block.
template <int kWarps, bool kSplit, class DI, class DJ, class Force, class Interaction>
__global__ void __launch_bounds__(kWarps * 32)
    p2pTasks(const P2pTask* __restrict__ tasks, int task_count, const FmmCell* __restrict__ cells,
             const int* __restrict__ items, const DI* __restrict__ epi, const DJ* __restrict__ epj,
             Interaction interact, bool forces_cleared, Force* __restrict__ forces,
             const std::int64_t* __restrict__ partial_begin, Force* __restrict__ partials,
             unsigned long long* __restrict__ interactions) {
  __shared__ alignas(16) unsigned char tile_bytes[kWarps * 32 * sizeof(DJ)];
  __shared__ alignas(16) unsigned char partial_bytes[kSplit ? kWarps * 32 * sizeof(Force) : 16];
  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  const int w = static_cast<int>(blockIdx.x) * kWarps + warp;
  if (w >= task_count) return;  // the whole warp: only warp-level barriers follow
  const P2pTask task = tasks[w];
  const int i_begin = cells[task.target].begin, n_i = cells[task.target].end - i_begin;
  Force* out = task.segment < 0 ? forces + i_begin
                                : partials + partial_begin[task.target] + static_cast<std::int64_t>(task.segment) * n_i;
  const bool from_cleared = forces_cleared || task.segment >= 0;
  DJ* tile = reinterpret_cast<DJ*>(tile_bytes) + warp * 32;
  long long source_particles = 0;
  // The task's chunk of the leaf's particles; a last chunk of fewer than 32 (and a leaf of fewer
  // than 32) in lane groups of the next power of two, so that fewer lanes idle.
  const int chunk = task.chunk;
  int width = 32;
  if constexpr (kSplit) width = powerOfTwoAtLeast(n_i - chunk < 32 ? n_i - chunk : 32);
  const int groups = 32 / width, group = lane / width, slot = lane % width;
  // Lanes past the leaf's end compute on its first particle and store nothing: every lane
  // reaches the warp's barriers.
  const bool active = chunk + slot < n_i;
  const int k = active ? chunk + slot : 0;
  const DI xi = epi[i_begin + k];
  Force f;
  f.clear();
  if (!from_cleared && group == 0) f = out[k];
  // The task's sources 32 at a time: lane l holds source l's particle range and its place in
  // the batch's particles laid end to end; the warp then fills each tile with the next 32 of
  // them, whatever source they belong to.
  for (std::int64_t batch = task.first; batch < task.last; batch += 32) {
    int j_begin = 0, n_j = 0;
    if (batch + lane < task.last) {
      const int s = items[batch + lane];
      j_begin = cells[s].begin;
      n_j = cells[s].end - j_begin;
    }
    int j_end = n_j;  // inclusive prefix sum over the lanes
    for (int d = 1; d < 32; d <<= 1) {
      const int below = __shfl_up_sync(0xffffffffu, j_end, d);
      if (lane >= d) j_end += below;
    }
    const int total = __shfl_sync(0xffffffffu, j_end, 31);
    source_particles += total;
    for (int base = 0; base < total; base += 32) {
      // Position p of the batch is in the first source whose prefix end exceeds it.
      const int p = base + lane;
      int src = 0;
      for (int step = 16; step > 0; step >>= 1)
        if (__shfl_sync(0xffffffffu, j_end, src + step - 1) <= p) src += step;
      const int src_first = __shfl_sync(0xffffffffu, j_begin, src);
      const int src_start = __shfl_sync(0xffffffffu, j_end - n_j, src);
      const int m = total - base < 32 ? total - base : 32;
      __syncwarp();  // the last tile was read by every lane
      if (lane < m) tile[lane] = epj[src_first + (p - src_start)];
      __syncwarp();
#pragma unroll 4
      for (int q = group; q < m; q += groups) interact(xi, tile[q], f);
    }
  }
  if constexpr (kSplit) {
    Force* partial = reinterpret_cast<Force*>(partial_bytes) + warp * 32;
    partial[lane] = f;
    __syncwarp();
    if (group == 0 && active) {
      Force sum = partial[slot];
      for (int g = 1; g < groups; ++g) sum += partial[g * width + slot];
      out[k] = sum;
    }
  } else {
    if (active) out[k] = f;
  }
  if (lane == 0 && task.chunk == 0)
    atomicAdd(interactions, static_cast<unsigned long long>(n_i) * source_particles);
}

/// For each target whose list was cut into several windows: forces[i] = (cleared, or forces[i]) +
/// its windows' partial forces, added in window order.
template <class Force>
__global__ void sumSegments(const FmmCell* __restrict__ cells, int target_count,
                            const std::int64_t* __restrict__ partial_begin, const Force* __restrict__ partials,
                            bool forces_cleared, Force* __restrict__ forces) {
  const int t = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (t >= target_count) return;
  const int i_begin = cells[t].begin, n_i = cells[t].end - i_begin;
  // A target's partials are n_i per window when it has several windows, else none.
  const auto segments = n_i > 0 ? static_cast<int>((partial_begin[t + 1] - partial_begin[t]) / n_i) : 0;
  if (segments < 2) return;
  const Force* p = partials + partial_begin[t];
  for (int k = 0; k < n_i; ++k) {
    Force sum;
    sum.clear();
    if (!forces_cleared) sum = forces[i_begin + k];
    for (int q = 0; q < segments; ++q) sum += p[static_cast<std::int64_t>(q) * n_i + k];
    forces[i_begin + k] = sum;
  }
}

}  // namespace kernel

/// Whether the near-field kernel may split a warp into lane groups: Force has +=
/// (GROVE_HOST_DEVICE, since the kernel calls it).
template <class Force>
concept SplittableForce = requires(Force& a, const Force& b) { a += b; };

/// The FMM's near field on the device of `engine` with the pairwise `interaction` (see the top
/// of the file). Holds the device copies of EPI, EPJ and the forces between calls (they grow to
/// the largest step). One calculation at a time, as its engine.
template <class Force, class EPI, class EPJ, class Interaction>
class DeviceNearField final : public NearFieldOnDevice<Force, EPI, EPJ> {
  using DI = gpu::DeviceFormOf<EPI>;
  using DJ = gpu::DeviceFormOf<EPJ>;
  static_assert(std::is_trivially_copyable_v<Force>, "grove: the FMM's device near field copies Force to the device");

 public:
  /// Reads the lists of `engine` (which FmmForce must use: setFarFieldEngine), on its device.
  /// Whether Force has += chooses the form: with it, lane groups and windows (below), the forces
  /// within rounding of the host's order; without it, one lane per particle and a leaf's list as
  /// one window, the host's order of additions (and particles_per_task is not used). A warp's
  /// task holds the sources that start within one window of particles_per_task source particles
  /// (so about that many, and one source leaf at least), so that a leaf with a long list (a
  /// sparse leaf in a cluster's outskirts meets thousands of leaves) is shared among warps
  /// instead of running alone long after the rest; the windows' partial forces are then summed
  /// in window order. Throws grove::Error when engine is null or particles_per_task < 1.
  DeviceNearField(std::shared_ptr<DeviceFarField> engine, Interaction interaction,
                  long long particles_per_task = kDefaultParticlesPerTask)
      : engine_(std::move(engine)),
        interaction_(std::move(interaction)),
        particles_per_task_(SplittableForce<Force> ? particles_per_task : (1LL << 62)) {
    require(engine_ != nullptr, "fmm::DeviceNearField", "no far-field engine given");
    require(particles_per_task >= 1, "fmm::DeviceNearField", "particles_per_task must be at least 1, got {}",
            particles_per_task);
  }
  /// The default window of source particles of a warp's task. doc/fmm.md measures 4096 against
  /// 8192: with large leaves the shorter window paid a little before tasks were cut by chunk
  /// ("Session 32"); after it, the two differ by less than the runs' spread ("Session 33").
  static constexpr long long kDefaultParticlesPerTask = kDefaultNearFieldWindow;

  const FarFieldEngine& engine() const override { return *engine_; }

  /// Starts the P2P of the tree's own leaf pairs (the engine's deviceLocalP2p(), after its
  /// startLocal()) on the device, and returns true: their kernel runs while the caller exchanges
  /// the LET, and evaluate() adds the received leaves' pairs (see NearFieldOnDevice::startLocal).
  /// Throws grove::Error when the engine has no such calculation under way, when the arrays do
  /// not match its tree, and when CUDA fails (leaving nothing queued).
  bool startLocal(std::span<const EPI> epi, std::span<const EPJ> local_epj, std::span<const Force> forces,
                  bool forces_cleared) override {
    abandon();  // a local part that no evaluate() completed
    const DeviceP2pLists lists = engine_->deviceLocalP2p();
    requireArrays(lists, epi, local_epj.size(), forces.size(), forces_cleared, "fmm::DeviceNearField::startLocal");
    const gpu::ScopedDevice on_device(lists.device);
    makeStreamAndEvents(lists.device);
    const cudaStream_t stream = stream_->get();
    try {
      upload(epi, 0, epi_, epi_staging_, stream);
      upload(local_epj, 0, epj_, epj_staging_, stream);
      if (forces_cleared) forces_.resize(epi.size());
      else forces_.assignAsync(forces.data(), forces.size(), stream);
      startCounting(stream);
      launch(lists, forces_cleared, /*every_leaf=*/true, launches_[0], stream);
    } catch (...) {
      cudaStreamSynchronize(stream);
      throw;
    }
    local_targets_ = epi.size();
    local_sources_ = local_epj.size();
    local_started_ = true;
    return true;
  }

  std::int64_t evaluate(std::span<const EPI> epi, std::span<const EPJ> epj, std::span<Force> forces,
                        bool forces_cleared) override {
    const bool completes_local = local_started_;
    const DeviceP2pLists lists = [&] {
      try {
        return completes_local ? engine_->deviceReceivedP2p() : engine_->deviceP2p();
      } catch (...) {
        abandon();
        throw;
      }
    }();
    const gpu::ScopedDevice on_device(lists.device);
    makeStreamAndEvents(lists.device);
    // On a stream of its own, of the default priority: the engine's traversal and far field
    // (higher priorities) get room first, and run beside this kernel.
    const cudaStream_t stream = stream_->get();
    unsigned long long count = 0;
    try {
      requireArrays(lists, epi, epj.size(), forces.size(), /*forces_cleared=*/false, "fmm::DeviceNearField::evaluate");
      if (completes_local) {
        require(epi.size() == local_targets_ && epj.size() >= local_sources_, "fmm::DeviceNearField::evaluate",
                "{} EPI and {} EPJ after startLocal() was given {} EPI and {} local EPJ: evaluate() completes that "
                "calculation",
                epi.size(), epj.size(), local_targets_, local_sources_);
        // The local EPJ are on the device: the received after them. The forces there hold the
        // local pairs' sums, which the received pairs add to.
        upload(epj, local_sources_, epj_, epj_staging_, stream);
        launch(lists, /*forces_cleared=*/false, /*every_leaf=*/false, launches_[1], stream);
      } else {
        upload(epi, 0, epi_, epi_staging_, stream);
        upload(epj, 0, epj_, epj_staging_, stream);  // the copies overlap the next slice's packing
        if (forces_cleared) forces_.resize(forces.size());
        else forces_.assignAsync(forces.data(), forces.size(), stream);
        startCounting(stream);
        launch(lists, forces_cleared, /*every_leaf=*/true, launches_[0], stream);
        launches_[1].timed = false;
      }
      gpu::downloadThroughStaging(forces.data(), forces_.data(), forces.size(), forces_staging_, stream);  // waits
      interactions_.copyTo(&count, stream);
    } catch (...) {
      // Nothing queued here may read the engine's lists after this returns: the engine's next
      // calculation rewrites them.
      abandon();
      throw;
    }
    local_started_ = false;
    kernel_seconds_ = 0.0;
    for (const Launch& l : launches_)
      if (l.timed) kernel_seconds_ += l.stop->secondsSince(*l.start);
    return static_cast<std::int64_t>(count);
  }

  void abandon() noexcept override {
    local_started_ = false;
    if (!stream_) return;
    int current = -1;
    cudaGetDevice(&current);
    cudaSetDevice(device_);
    cudaStreamSynchronize(stream_->get());
    cudaSetDevice(current);
  }

  double kernelSeconds() const override { return kernel_seconds_; }
  std::size_t deviceBytes() const override {
    return epi_.bytes() + epj_.bytes() + forces_.bytes() + interactions_.bytes() + launches_[0].bytes() +
           launches_[1].bytes() + scratch_.bytes();
  }

 private:
  static constexpr int kWarps = 4, kThreads = 256;

  // One launch's tasks and timing: the local leaf pairs' (or, without a local part, every
  // pair's) and the received leaves', kept apart because the second's set-up runs while the
  // first's kernels may still read theirs.
  struct Launch {
    gpu::DeviceVector<std::int64_t> task_begin;     // per target cell, and one past
    gpu::DeviceVector<std::int64_t> partial_begin;  // per target cell, and one past
    gpu::DeviceVector<kernel::P2pTask> tasks;
    gpu::DeviceVector<Force> partials;
    std::unique_ptr<gpu::Event> tasks_ready, start, stop;
    bool timed = false;  // start and stop hold the last launch's kernels
    std::size_t bytes() const { return task_begin.bytes() + partial_begin.bytes() + tasks.bytes() + partials.bytes(); }
  };

  // epi, the forces and the first `epj_count` EPJ against the lists they serve.
  void requireArrays(const DeviceP2pLists& lists, std::span<const EPI> epi, std::size_t epj_count,
                     std::size_t force_count, bool forces_cleared, const char* where) const {
    require(epi.size() == static_cast<std::size_t>(lists.target_particles) &&
                (forces_cleared || force_count == epi.size()) &&
                epj_count >= static_cast<std::size_t>(lists.source_particles),
            where,
            "{} EPI, {} forces and {} EPJ for lists over {} target and {} source particles: the arrays must be those "
            "of the traversal just started",
            epi.size(), force_count, epj_count, lists.target_particles, lists.source_particles);
    // A target's windows are counted in int: at most one per source leaf pair, plus one per target.
    require(lists.pairs + lists.target_count < std::int64_t{1} << 31, where,
            "{} leaf pairs: at most 2^31 - 1 - targets are supported", lists.pairs);
  }

  // The stream and events on `device` (the engine's, current here).
  void makeStreamAndEvents(int device) {
    if (stream_) return;
    // Made together: a throw leaves none of them half made.
    auto stream = std::make_unique<gpu::Stream>();
    std::unique_ptr<gpu::Event> events[2][3];
    for (auto& launch_events : events)
      for (int e = 0; e < 3; ++e) launch_events[e] = std::make_unique<gpu::Event>(/*timing=*/e > 0);
    for (int k = 0; k < 2; ++k) {
      launches_[k].tasks_ready = std::move(events[k][0]);
      launches_[k].start = std::move(events[k][1]);
      launches_[k].stop = std::move(events[k][2]);
    }
    stream_ = std::move(stream);
    device_ = device;
  }

  void startCounting(cudaStream_t stream) {
    interactions_.resize(1);
    gpu::check(cudaMemsetAsync(interactions_.data(), 0, sizeof(unsigned long long), stream), "cudaMemsetAsync");
  }

  // One launch over `lists` into `l`: the tasks' set-up on the lists' own stream (the
  // traversal's, at the device's highest priority: the host waits there for the tasks' count,
  // which on this object's stream would sit behind the far field's M2L blocks until they drained,
  // and hold the caller, and with it the LET, that long), then the near field and the sums of cut
  // targets on `stream`. With `every_leaf` a leaf whose list is empty still gets one window (a
  // task per chunk of its particles), so that its forces are written; without it (the received
  // pairs, added to the forces the local launch wrote) it gets none.
  void launch(const DeviceP2pLists& lists, bool forces_cleared, bool every_leaf, Launch& l, cudaStream_t stream) {
    l.timed = false;
    const int targets = lists.target_count;
    if (targets == 0) return;
    const auto setup = static_cast<cudaStream_t>(lists.stream);
    const auto n = static_cast<std::size_t>(targets);
    // Per target its tasks and partial forces, then (scanned in place, one past the last holding
    // the totals) where they begin.
    l.task_begin.resize(n + 1);
    l.partial_begin.resize(n + 1);
    gpu::check(cudaMemsetAsync(l.task_begin.data() + n, 0, sizeof(std::int64_t), setup), "cudaMemsetAsync");
    gpu::check(cudaMemsetAsync(l.partial_begin.data() + n, 0, sizeof(std::int64_t), setup), "cudaMemsetAsync");
    const unsigned warp_per_target = gpu::blocksFor(n * 32, kThreads);
    kernel::countTasks<<<warp_per_target, kThreads, 0, setup>>>(lists.cells, targets, lists.offsets, lists.items,
                                                                particles_per_task_, every_leaf, l.task_begin.data(),
                                                                l.partial_begin.data());
    gpu::check(cudaGetLastError(), "fmm::kernel::countTasks");
    gpu::exclusiveSum(scratch_, l.task_begin.data(), l.task_begin.data(), targets + 1, setup,
                      "cub::DeviceScan::ExclusiveSum (near-field tasks)");
    gpu::exclusiveSum(scratch_, l.partial_begin.data(), l.partial_begin.data(), targets + 1, setup,
                      "cub::DeviceScan::ExclusiveSum (near-field partial forces)");
    const std::int64_t task_count = l.task_begin.elementToHost(n, setup);  // waits
    const std::int64_t partial_count = l.partial_begin.elementToHost(n, setup);
    // The kernel numbers its tasks in int.
    require(task_count < std::int64_t{1} << 31, "fmm::DeviceNearField",
            "{} near-field tasks (a chunk of {} target particles each, over a window of its leaf's sources): at most "
            "2^31 - 1 are supported{}",
            task_count, kernel::kChunk,
            SplittableForce<Force> ? "; a larger particles_per_task makes fewer windows" : "");
    l.tasks.resize(static_cast<std::size_t>(task_count));
    l.partials.resize(static_cast<std::size_t>(partial_count));
    kernel::writeTasks<<<warp_per_target, kThreads, 0, setup>>>(lists.cells, targets, lists.offsets, lists.items,
                                                                particles_per_task_, l.task_begin.data(),
                                                                l.tasks.data());
    gpu::check(cudaGetLastError(), "fmm::kernel::writeTasks");
    l.tasks_ready->record(setup);
    stream_->waitFor(l.tasks_ready->get());
    l.start->record(stream);  // kernelSeconds(): the near field and the sums, not the tasks' set-up
    if (task_count > 0) {
      kernel::p2pTasks<kWarps, SplittableForce<Force>>
          <<<gpu::blocksFor(static_cast<std::size_t>(task_count), kWarps), kWarps * 32, 0, stream>>>(
              l.tasks.data(), static_cast<int>(task_count), lists.cells, lists.items, epi_.data(), epj_.data(), interaction_,
              forces_cleared, forces_.data(), l.partial_begin.data(), l.partials.data(), interactions_.data());
      gpu::check(cudaGetLastError(), "fmm::kernel::p2pTasks");
    }
    if constexpr (SplittableForce<Force>) {
      if (partial_count > 0) {
        kernel::sumSegments<<<gpu::blocksFor(n, kThreads), kThreads, 0, stream>>>(
            lists.cells, targets, l.partial_begin.data(), l.partials.data(), forces_cleared, forces_.data());
        gpu::check(cudaGetLastError(), "fmm::kernel::sumSegments");
      }
    }
    l.stop->record(stream);
    l.timed = true;
  }

  // host[first, size) into their device form at device[first, size), through page-locked
  // staging, slice by slice (grove::gpu::convertAndCopyInSlices: the bus carries a slice while the
  // threads pack the next). With first > 0 the device's first elements are kept (copied on
  // `stream` should the array grow). Growing the staging would free memory that copies queued on
  // `stream` may still read: they are waited for first.
  template <class T, class D>
  static void upload(std::span<const T> host, std::size_t first, gpu::DeviceVector<D>& device,
                     gpu::PinnedArray<D>& staging, cudaStream_t stream) {
    if (first == 0) device.resize(host.size());
    else device.resizeKeep(host.size(), stream);
    if (staging.capacity() < host.size()) gpu::check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    staging.reserve(host.size());
    gpu::convertAndCopyInSlices(device.data() + first, staging.data() + first, host.data() + first, host.size() - first,
                                [](const T& t) -> D { return gpu::DeviceForm<T>::make(t); }, stream);
  }

  std::shared_ptr<DeviceFarField> engine_;
  Interaction interaction_;
  gpu::DeviceVector<DI> epi_;
  gpu::DeviceVector<DJ> epj_;
  gpu::DeviceVector<Force> forces_;
  gpu::DeviceVector<unsigned long long> interactions_;
  Launch launches_[2];  // the local (or only) launch and the received leaves'
  gpu::CubScratch scratch_;
  gpu::PinnedArray<DI> epi_staging_;  // page-locked: the uploads run from here
  gpu::PinnedArray<DJ> epj_staging_;
  gpu::PinnedArray<Force> forces_staging_;  // the forces on their way back
  long long particles_per_task_;
  // Made on the engine's device by the first call (an event or a stream belongs to the device
  // current when it is made).
  std::unique_ptr<gpu::Stream> stream_;
  int device_ = -1;  // stream_'s
  double kernel_seconds_ = 0.0;
  // A local part started (startLocal) for evaluate() to complete, and its arrays' sizes.
  bool local_started_ = false;
  std::size_t local_targets_ = 0, local_sources_ = 0;
};

/// A DeviceNearField for FmmForce<Force, EPI, EPJ> with `interaction`, on the device of `engine`
/// (particles_per_task: see DeviceNearField's constructor).
template <class Force, class EPI, class EPJ, class Interaction>
std::unique_ptr<DeviceNearField<Force, EPI, EPJ, Interaction>> makeDeviceNearField(
    std::shared_ptr<DeviceFarField> engine, Interaction interaction,
    long long particles_per_task = DeviceNearField<Force, EPI, EPJ, Interaction>::kDefaultParticlesPerTask) {
  return std::make_unique<DeviceNearField<Force, EPI, EPJ, Interaction>>(std::move(engine), std::move(interaction),
                                                                         particles_per_task);
}

}  // namespace grove::fmm
