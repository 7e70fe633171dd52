#pragma once
// User template: CUDA multiwalk dispatch/retrieve for self-gravity, plain and index forms, with
// monopole (grove::SPJMonopole) or quadrupole (grove::SPJQuadrupole) superparticles. Copy it and
// edit the kernel (gravity_walk_kernel.cuh) or the physics (gravity_device_physics.cuh).
//
// This is the FDPS way: you own the data layout, the transfers and the kernel. If you only need
// a different pairwise interaction, grove's engine (grove/gpu/multiwalk/multiwalk_engine.cuh; see
// gravity_interactions.cuh) writes all of this for you and also respects a device-memory budget.
//
// What it does, per dispatch (a batch of n_walk walks):
//   1. takes a batch slot: page-locked (pinned) host buffers that stay untouched until retrieve,
//      so two batches may be in flight even with one tag (grove dispatches batch k before it
//      retrieves batch k - 1);
//   2. packs the walks into them: tasks, walk ranges, i-particle positions, and the sources:
//      plain form: each walk's EPJ/SPJ as float images; index form: the index lists;
//   3. on the tag's own CUDA stream: asynchronous copies to device buffers (grown as needed),
//      the kernel, and the copy of the forces back into the slot; then records an event.
// Index form: the whole EPJ/SPJ arrays go to the device once per step (send_flag), and each call's
// index lists are kept on the device: when grove says lists_unchanged (REUSE_LIST steps), the kept
// lists are used and nothing but the EPI goes over the bus with the call. The whole arrays go in
// slices (grove::gpu::SlicedUpload), each at the first call whose lists read it, on a stream of
// their own, and a batch's kernel waits for its own slices only: the first kernels start after a
// fraction of the arrays has crossed the bus, and the rest crosses while they run.
// retrieve waits for the batch's event and ADDS its forces to the caller's.
//
// Straight from grove's arrays: a GPU multiwalk lets grove page-lock the arrays its trees hand to
// dispatch (grove::gpu::enablePageLockedTransfers). Where a batch's i-particles lie one after the
// other in such an array and GravityEPI is a bare position (as here), they go to the device by DMA
// from the tree itself, with no packing; where GravityEPJ is byte for byte a float4 (x, y, z, m),
// the index form's whole EPJ array does too, with no conversion. Change those types and the
// template packs and converts them, as before: isPageLocked and the layout checks below decide.
//
// Compile with nvcc; a host translation unit reaches it through gravity_multiwalk_gpu.h.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <deque>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "../gravity_particles.hpp"
#include "gravity_walk_kernel.cuh"
#include "grove/gpu/cuda_resources.hpp"
#include "grove/gpu/device_gpu.h"
#include "grove/gpu/multiwalk/multiwalk.hpp"
#include "grove/gpu/multiwalk/multiwalk_plan.hpp"
#include "grove/gpu/sliced_upload.hpp"
#include "grove/tree/device_form.hpp"

namespace user::cuda {

template <class SPJ>  // grove::SPJMonopole or grove::SPJQuadrupole
class GravityMultiwalk final : public grove::gpu::Multiwalk<GravityEPI, GravityEPJ, SPJ, GravityForce> {
 public:
  using SpjImage = grove::gpu::DeviceFormOf<SPJ>;  // DeviceMonopole or DeviceQuadrupole (floats)
  // 64 threads per block, one i-particle each: groups hold a few hundred particles and a walk's
  // last block is partly idle, so smaller blocks waste fewer threads (the kernel benchmark in
  // samples/benchmarks/gpu compares 64, 128 and 256).
  static constexpr int kThreads = 64, kIPerThread = 1, kChunk = kThreads * kIPerThread;

  // eps2: the squared softening length. device: -1 for the current device.
  explicit GravityMultiwalk(float eps2, int device = -1)
      : eps2_(eps2), device_(device >= 0 ? device : grove::gpu::currentDevice()) {
    grove::gpu::enablePageLockedTransfers();
  }

  ~GravityMultiwalk() override {
    for (auto& s : streams_) cudaStreamSynchronize(s->stream.get());  // copies into pinned buffers may run
    if (upload_) cudaStreamSynchronize(upload_->get());
  }

  int dispatchPlainWalks(int tag, int n_walk, const GravityEPI** epi, const int* n_epi, const GravityEPJ** epj,
                         const int* n_epj, const SPJ** spj, const int* n_spj) override {
    grove::gpu::ScopedDevice guard(device_);
    Batch& b = startBatch(tag, n_walk, epi, n_epi, n_epj, n_spj);
    b.epj.reserve(b.n_j), b.spj.reserve(b.n_s);
    largest_.plain_j = std::max(largest_.plain_j, b.n_j), largest_.plain_s = std::max(largest_.plain_s, b.n_s);
#pragma omp parallel for schedule(dynamic, 8)
    for (int w = 0; w < n_walk; ++w) {
      const WalkRange r = b.ranges[w];
      for (int k = 0; k < r.n_j; ++k) b.epj[r.j_begin + k] = toFloat4(epj[w][k]);
      for (int k = 0; k < r.n_s; ++k) b.spj[r.s_begin + k] = grove::gpu::DeviceForm<SPJ>::make(spj[w][k]);
    }
    TagStream& ts = streamOf(tag);
    grove::gpu::growOnStream(ts.epj, b.n_j, ts.stream);
    grove::gpu::growOnStream(ts.spj, b.n_s, ts.stream);
    grove::gpu::copyToDeviceAsync(ts.epj.data(), b.epj.data(), b.n_j, ts.stream);
    grove::gpu::copyToDeviceAsync(ts.spj.data(), b.spj.data(), b.n_s, ts.stream);
    this->stats_.bytes_to_device += static_cast<std::int64_t>(b.n_j * sizeof(float4) + b.n_s * sizeof(SpjImage));
    run(b, ts, PackedList<float4>{ts.epj.data()}, PackedList<SpjImage>{ts.spj.data()});
    return 0;
  }

  int dispatchIndexWalks(int tag, int n_walk, const GravityEPI** epi, const int* n_epi, const int** id_epj,
                         const int* n_epj, const int** id_spj, const int* n_spj, const GravityEPJ* epj,
                         int n_epj_total, const SPJ* spj, int n_spj_total, bool send_flag,
                         bool lists_unchanged) override {
    grove::gpu::ScopedDevice guard(device_);
    TagStream& ts = streamOf(tag);
    if (send_flag) startStep(epj, n_epj_total, spj, n_spj_total);
    (void)epj, (void)spj;  // the step's arrays: those its first call gave
    if (!step_started_)
      grove::gpu::throwGpuError("gravity multiwalk", "index-form dispatch before the EPJ/SPJ arrays were sent");
    if (n_walk == 0) return 0;  // FDPS's send-only call (grove's first call of a step): no batch
    Batch& b = startBatch(tag, n_walk, epi, n_epi, n_epj, n_spj);
    KeptLists& kept = keptLists(call_in_step_++);
    if (!(lists_unchanged && kept.matches(n_walk, n_epj, n_spj))) {
      // New lists: pack them (all EPJ ids, then all SPJ ids) and keep them on the device.
      b.ids.reserve(b.n_j + b.n_s);
      largest_.ids = std::max(largest_.ids, b.n_j + b.n_s);
      int* ids = b.ids.data();
#pragma omp parallel for schedule(dynamic, 8)
      for (int w = 0; w < n_walk; ++w) {
        const WalkRange r = b.ranges[w];
        if (r.n_j) std::memcpy(ids + r.j_begin, id_epj[w], sizeof(int) * r.n_j);
        if (r.n_s) std::memcpy(ids + b.n_j + r.s_begin, id_spj[w], sizeof(int) * r.n_s);
      }
      // Which slices of the whole arrays the batch reads.
      kept.epj_slices = epj_all_.slicesOf(ids, b.n_j), kept.epj_slice = epj_all_.sliceSize();
      kept.spj_slices = spj_all_.slicesOf(ids + b.n_j, b.n_s), kept.spj_slice = spj_all_.sliceSize();
      if (kept.ids.capacity() < b.n_j + b.n_s) {
        grove::gpu::check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");  // an older step may read them
        kept.ids.reserve(b.n_j + b.n_s);
      }
      grove::gpu::copyToDeviceAsync(kept.ids.data(), ids, b.n_j + b.n_s, ts.stream);
      this->stats_.bytes_to_device += static_cast<std::int64_t>((b.n_j + b.n_s) * sizeof(int));
      kept.remember(n_walk, n_epj, n_spj);
    } else {
      ++this->stats_.lists_reused;
    }
    // The batch's slices of the whole arrays, sent on the upload stream (now, if not yet).
    using Slices = grove::gpu::SlicedUpload<float4, GravityEPJ>;
    epj_all_.sendAndWait(kept.epj_slice == epj_all_.sliceSize() ? kept.epj_slices : Slices::kAll, toFloat4,
                         upload_->get(), ts.stream.get());
    spj_all_.sendAndWait(kept.spj_slice == spj_all_.sliceSize() ? kept.spj_slices : Slices::kAll,
                         grove::gpu::DeviceForm<SPJ>::make, upload_->get(), ts.stream.get());
    b.first_in_step = call_in_step_ == 1;
    run(b, ts, IndexedList<float4>{epj_all_.device(), kept.ids.data()},
        IndexedList<SpjImage>{spj_all_.device(), kept.ids.data() + b.n_j});
    return 0;
  }

  int retrieveWalks(int tag, int n_walk, const int* n_epi, GravityForce** force) override {
    grove::gpu::ScopedDevice guard(device_);
    auto it = std::find_if(pending_.begin(), pending_.end(), [&](const auto& b) { return b->tag == tag; });
    if (it == pending_.end())
      grove::gpu::throwGpuError("gravity multiwalk", "retrieve(tag " + std::to_string(tag) + ") without a dispatch");
    Batch& b = **it;
    if (n_walk != b.n_walk)
      grove::gpu::throwGpuError("gravity multiwalk", "retrieve(tag " + std::to_string(tag) + ") for " +
                                                         std::to_string(n_walk) + " walks; dispatched " +
                                                         std::to_string(b.n_walk));
    b.done.synchronize();
    this->stats_.kernel_seconds += busy_clock_.add(b.kernel_start, b.kernel_stop);
    if (b.first_in_step) this->stats_.startup_seconds += b.kernel_start.secondsSince(*step_start_);
    const float4* out = b.force.data();
#pragma omp parallel for schedule(dynamic, 16)
    for (int w = 0; w < n_walk; ++w)
      for (int i = 0; i < n_epi[w]; ++i) {  // ADD, as grove's retrieve contract says
        const float4 f = out[b.ranges[w].i_begin + i];
        force[w][i].acc.x += f.x, force[w][i].acc.y += f.y, force[w][i].acc.z += f.z;
        force[w][i].pot += f.w;
      }
    free_.push_back(std::move(*it));
    pending_.erase(it);
    if (pending_.empty()) sizeForLargestBatch();
    return 0;
  }

 private:
  // One per tag: a stream and the device buffers its batches use, in stream order.
  struct TagStream {
    grove::gpu::Stream stream;
    grove::gpu::DeviceArray<WalkTask> tasks;
    grove::gpu::DeviceArray<WalkRange> ranges;
    grove::gpu::DeviceArray<Position> epi;
    grove::gpu::DeviceArray<float4> epj, force;
    grove::gpu::DeviceArray<SpjImage> spj;
  };

  // One batch in flight: its pinned buffers live until retrieve.
  struct Batch {
    int tag = 0, n_walk = 0;
    std::size_t n_i = 0, n_j = 0, n_s = 0, n_tasks = 0;
    grove::gpu::PinnedArray<WalkTask> tasks;
    grove::gpu::PinnedArray<WalkRange> ranges;
    grove::gpu::PinnedArray<Position> epi;
    grove::gpu::PinnedArray<float4> epj, force;
    grove::gpu::PinnedArray<SpjImage> spj;
    grove::gpu::PinnedArray<int> ids;
    const Position* epi_from = nullptr;  // the i-particles to copy: epi, or the caller's page-locked array
    bool epi_direct = false;             // epi_from is the caller's
    grove::gpu::Event done, kernel_start{true}, kernel_stop{true};
    bool first_in_step = false;  // index form: the step's first batch (stats_.startup_seconds)
  };

  // Call k's index lists, kept on the device for the next REUSE_LIST steps.
  struct KeptLists {
    grove::gpu::DeviceArray<int> ids;
    std::vector<int> n_epj, n_spj;
    std::uint64_t epj_slices = 0, spj_slices = 0;  // bit k: the lists read slice k (of *_slice items)
    std::size_t epj_slice = 0, spj_slice = 0;
    bool matches(int n_walk, const int* nj, const int* ns) const {
      if (static_cast<int>(n_epj.size()) != n_walk) return false;
      for (int w = 0; w < n_walk; ++w)
        if (n_epj[w] != nj[w] || n_spj[w] != ns[w]) return false;
      return true;
    }
    void remember(int n_walk, const int* nj, const int* ns) {
      n_epj.assign(nj, nj + n_walk), n_spj.assign(ns, ns + n_walk);
    }
  };

  static float4 toFloat4(const GravityEPJ& p) { return make_float4(p.pos.x, p.pos.y, p.pos.z, p.mass); }

  // Whether the host types are byte for byte their device images, so that they may be copied as
  // they are (standard layout: offsetof is defined).
  static constexpr bool kEpiIsPosition = std::is_standard_layout_v<GravityEPI> &&
                                         sizeof(GravityEPI) == sizeof(Position) && offsetof(GravityEPI, pos) == 0 &&
                                         sizeof(GravityEPI::pos) == sizeof(Position);
  static constexpr bool kEpjIsFloat4 = std::is_standard_layout_v<GravityEPJ> &&
                                       sizeof(GravityEPJ) == sizeof(float4) && offsetof(GravityEPJ, pos) == 0 &&
                                       sizeof(GravityEPJ::pos) == 3 * sizeof(float) &&
                                       offsetof(GravityEPJ, mass) == 3 * sizeof(float) &&
                                       std::is_same_v<decltype(GravityEPJ::mass), float>;

  // The batch's i-particles as one page-locked run of the caller's memory (the tree's EPI array),
  // or null: walk w + 1's must follow walk w's.
  static const Position* contiguousLockedPositions(int n_walk, const GravityEPI** epi, const int* n_epi) {
    if constexpr (!kEpiIsPosition) {
      return nullptr;
    } else {
      if (n_walk == 0) return nullptr;
      for (int w = 1; w < n_walk; ++w)
        if (epi[w] != epi[w - 1] + n_epi[w - 1]) return nullptr;
      if (!grove::gpu::isPageLocked(epi[0])) return nullptr;
      return reinterpret_cast<const Position*>(epi[0]);
    }
  }

  TagStream& streamOf(int tag) {
    while (static_cast<int>(streams_.size()) <= tag) streams_.push_back(std::make_unique<TagStream>());
    return *streams_[tag];
  }

  KeptLists& keptLists(int k) {
    if (static_cast<int>(kept_.size()) <= k) kept_.resize(static_cast<std::size_t>(k) + 1);
    return kept_[k];
  }

  // Index form, at a step's first call: the whole arrays will go slice by slice as batches need
  // them (SlicedUpload), on the upload stream.
  void startStep(const GravityEPJ* epj, int n_epj, const SPJ* spj, int n_spj) {
    call_in_step_ = 0;
    // grove sends at the start of a step, when nothing is in flight; wait anyway, since the
    // device arrays and the staging buffers are about to be overwritten.
    grove::gpu::check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    if (!step_started_) {  // made on device_ (ScopedDevice), at the first send
      upload_ = std::make_unique<grove::gpu::Stream>();
      step_start_ = std::make_unique<grove::gpu::Event>(true);
      step_started_ = true;
    }
    if constexpr (kEpjIsFloat4) {
      if (grove::gpu::isPageLocked(epj)) epj_all_.startDirect(epj, static_cast<std::size_t>(n_epj));
      else epj_all_.start(epj, static_cast<std::size_t>(n_epj));
    } else {
      epj_all_.start(epj, static_cast<std::size_t>(n_epj));
    }
    spj_all_.start(spj, static_cast<std::size_t>(n_spj));
    step_start_->record(upload_->get());
    this->stats_.bytes_to_device += epj_all_.bytes() + spj_all_.bytes();
    if (epj_all_.direct()) this->stats_.bytes_direct += epj_all_.bytes();
  }

  // A free slot with the batch's tasks, walk ranges and i-particles packed.
  Batch& startBatch(int tag, int n_walk, const GravityEPI** epi, const int* n_epi, const int* n_epj,
                    const int* n_spj) {
    if (free_.empty()) free_.push_back(std::make_unique<Batch>());
    pending_.push_back(std::move(free_.back()));
    free_.pop_back();
    Batch& b = *pending_.back();
    b.tag = tag, b.n_walk = n_walk;
    b.n_i = b.n_j = b.n_s = b.n_tasks = 0;
    b.ranges.reserve(static_cast<std::size_t>(n_walk));
    for (int w = 0; w < n_walk; ++w) {  // offsets of each walk's slices: a prefix sum
      b.ranges[w] = {static_cast<int>(b.n_i), n_epi[w], static_cast<int>(b.n_j), n_epj[w], static_cast<int>(b.n_s),
                     n_spj[w]};
      b.n_i += n_epi[w], b.n_j += n_epj[w], b.n_s += n_spj[w];
      b.n_tasks += (n_epi[w] + kChunk - 1) / kChunk;
    }
    b.tasks.reserve(b.n_tasks), b.force.reserve(b.n_i);
    largest_.walks = std::max(largest_.walks, static_cast<std::size_t>(n_walk));
    largest_.tasks = std::max(largest_.tasks, b.n_tasks), largest_.i = std::max(largest_.i, b.n_i);
    std::size_t t = 0;
    for (int w = 0; w < n_walk; ++w)
      for (int first = 0; first < n_epi[w]; first += kChunk) b.tasks[t++] = {w, first};
    b.epi_from = contiguousLockedPositions(n_walk, epi, n_epi);
    b.epi_direct = b.epi_from != nullptr;
    if (!b.epi_direct) {  // pack them
      b.epi.reserve(b.n_i);
      largest_.packed_i = std::max(largest_.packed_i, b.n_i);
#pragma omp parallel for schedule(dynamic, 8)
      for (int w = 0; w < n_walk; ++w)
        for (int i = 0; i < n_epi[w]; ++i) {
          const grove::Vec3f p = epi[w][i].pos;
          b.epi[b.ranges[w].i_begin + i] = Position{p.x, p.y, p.z};
        }
      b.epi_from = b.epi.data();
    }
    return b;
  }

  // Called when nothing is in flight: every slot's pinned buffers and every tag's device buffers
  // grow to the largest batch so far, and an eighth more for lists that lengthen as particles
  // move. Batches reach slots in a different order each step (a step's first and last batches are
  // smaller), so a slot first handed a full batch in a later step would otherwise reallocate then,
  // mid-step: cudaFreeHost waits for the device and cudaMallocHost of ~100 MB takes tens of ms
  // (G1's first step after the warm-up took 0.45-0.64 s instead of 0.27 on the GPU machine).
  void sizeForLargestBatch() {
    auto more = [](std::size_t n) { return n + n / 8; };
    for (auto& b : free_) {
      b->tasks.reserve(more(largest_.tasks)), b->ranges.reserve(more(largest_.walks));
      b->force.reserve(more(largest_.i)), b->epi.reserve(more(largest_.packed_i));
      b->epj.reserve(more(largest_.plain_j)), b->spj.reserve(more(largest_.plain_s));
      b->ids.reserve(more(largest_.ids));
    }
    for (auto& ts : streams_) {
      grove::gpu::growOnStream(ts->tasks, more(largest_.tasks), ts->stream);
      grove::gpu::growOnStream(ts->ranges, more(largest_.walks), ts->stream);
      grove::gpu::growOnStream(ts->epi, more(largest_.i), ts->stream);
      grove::gpu::growOnStream(ts->force, more(largest_.i), ts->stream);
      grove::gpu::growOnStream(ts->epj, more(largest_.plain_j), ts->stream);
      grove::gpu::growOnStream(ts->spj, more(largest_.plain_s), ts->stream);
    }
  }

  // The copies, the kernel and the copy back, on the tag's stream.
  template <class JList, class SList>
  void run(Batch& b, TagStream& ts, JList j_list, SList s_list) {
    grove::gpu::growOnStream(ts.tasks, b.n_tasks, ts.stream);
    grove::gpu::growOnStream(ts.ranges, static_cast<std::size_t>(b.n_walk), ts.stream);
    grove::gpu::growOnStream(ts.epi, b.n_i, ts.stream);
    grove::gpu::growOnStream(ts.force, b.n_i, ts.stream);
    grove::gpu::copyToDeviceAsync(ts.tasks.data(), b.tasks.data(), b.n_tasks, ts.stream);
    grove::gpu::copyToDeviceAsync(ts.ranges.data(), b.ranges.data(), static_cast<std::size_t>(b.n_walk), ts.stream);
    grove::gpu::copyToDeviceAsync(ts.epi.data(), b.epi_from, b.n_i, ts.stream);
    busy_clock_.beforeLaunch(pending_.size() == 1, ts.stream.get());
    b.kernel_start.record(ts.stream.get());
    launchGravityWalks<kThreads, kIPerThread, SpjImage>(ts.stream.get(), static_cast<int>(b.n_tasks),
                                                         ts.tasks.data(), ts.ranges.data(), ts.epi.data(), j_list,
                                                         s_list, eps2_, ts.force.data());
    grove::gpu::check(cudaGetLastError(), "gravityWalkKernel launch");
    b.kernel_stop.record(ts.stream.get());
    if (b.n_i)
      grove::gpu::check(cudaMemcpyAsync(b.force.data(), ts.force.data(), b.n_i * sizeof(float4),
                                        cudaMemcpyDeviceToHost, ts.stream.get()),
                        "cudaMemcpyAsync");
    b.done.record(ts.stream.get());
    const std::size_t epi_bytes = b.n_i * sizeof(Position);
    this->stats_.bytes_to_device +=
        static_cast<std::int64_t>(b.n_tasks * sizeof(WalkTask) + b.n_walk * sizeof(WalkRange) + epi_bytes);
    if (b.epi_direct) this->stats_.bytes_direct += static_cast<std::int64_t>(epi_bytes);
    this->stats_.bytes_from_device += static_cast<std::int64_t>(b.n_i * sizeof(float4));
    ++this->stats_.batches, ++this->stats_.blocks;
    this->stats_.walks += b.n_walk;
    for (int w = 0; w < b.n_walk; ++w)
      this->stats_.interactions += static_cast<std::int64_t>(b.ranges[w].n_i) * (b.ranges[w].n_j + b.ranges[w].n_s);
  }

  float eps2_;
  int device_;
  std::vector<std::unique_ptr<TagStream>> streams_;
  std::deque<std::unique_ptr<Batch>> pending_;  // in dispatch order: retrieve takes the oldest of a tag
  std::vector<std::unique_ptr<Batch>> free_;
  struct {  // the largest batch so far, per buffer (sizeForLargestBatch)
    std::size_t walks = 0, tasks = 0, i = 0, packed_i = 0, plain_j = 0, plain_s = 0, ids = 0;
  } largest_;
  // Index form: the step's whole arrays, sent slice by slice on the upload stream.
  grove::gpu::SlicedUpload<float4, GravityEPJ> epj_all_;
  grove::gpu::SlicedUpload<SpjImage, SPJ> spj_all_;
  std::unique_ptr<grove::gpu::Stream> upload_;
  bool step_started_ = false;
  std::unique_ptr<grove::gpu::Event> step_start_;  // made on device_, at the first send
  std::vector<KeptLists> kept_;
  int call_in_step_ = 0;
  grove::gpu::KernelBusyClock busy_clock_;  // stats_.kernel_seconds: union of the kernels' device time
};

}  // namespace user::cuda
