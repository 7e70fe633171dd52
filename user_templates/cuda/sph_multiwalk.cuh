#pragma once
// User template: CUDA multiwalk dispatch/retrieve for the SPH sample's density pass (gather
// tree) and hydro pass (symmetry tree), short range (no superparticles), plain and index forms.
// Copy it with sph_walk_kernels.cuh and edit the kernels, the images or the passes below.
//
// This is the FDPS way: you own the data layout, the transfers and the kernels. grove's engine
// (grove/gpu/multiwalk/multiwalk_engine.cuh; sph_interactions.cuh) does all of this from a pairwise
// functor, but a pairwise functor cannot iterate h inside the kernel; this template can, so its
// density pass is the CPU kernel's equal, h iteration included (doc/sph.md, "GPU").
//
// One class, SphMultiwalk<Pass>, serves both passes; a Pass says what travels and what runs:
//   EPI, EPJ, Force        the tree's types (grove::gpu::Multiwalk<EPI, EPJ, NoSPJ, Force>)
//   IImage, JImage         what an i- and a j-particle become on the device (sph_physics.hpp)
//   Out                    what the kernel writes per i-particle
//   launch(...)            the kernel of sph_walk_kernels.cuh
//   deliver(force, out)    how retrieve hands a result to the tree's Force
//
// What it does, per dispatch (a batch of n_walk walks):
//   1. takes a batch slot: page-locked (pinned) host buffers that stay untouched until its
//      retrieve, so two batches may be in flight even with one tag (grove dispatches batch k
//      before it retrieves batch k - 1), and pinned memory lets the copies run asynchronously;
//   2. packs the walks into them: one WalkTask per kThreads i-particles of a walk, one WalkDesc
//      per walk (offsets of its i-particles and list), the i-images, and the sources:
//      plain form: each walk's j-images, one after another; index form: the index lists;
//   3. on the tag's own CUDA stream: asynchronous copies to the stream's device buffers (grown as
//      needed), the kernel, the copy of the results back into the slot; then records an event.
//      Batches on different streams overlap with each other and with the host's next packing.
// Index form: the whole EPJ array goes to the device once per step (send_flag: the step's first
// call), as j-images, and each call's index lists are kept on the device; when grove says
// lists_unchanged (REUSE_LIST steps), the kept lists are used and only the i-images (and the
// walk tables) go over the bus with the call.
// retrieve waits for the batch's event and hands each result to the caller's Force (deliver).
//
// Compile with nvcc; a host translation unit reaches it through sph_multiwalk_gpu.h.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "grove/gpu/cuda_resources.hpp"
#include "grove/gpu/device_gpu.h"
#include "grove/gpu/multiwalk/multiwalk.hpp"
#include "grove/gpu/multiwalk/multiwalk_kernel.cuh"
#include "grove/gpu/multiwalk/multiwalk_plan.hpp"  // throwGpuError
#include "../sph/sph_physics.hpp"
#include "sph_walk_kernels.cuh"

namespace user::cuda {

using grove::gpu::kernel::IndexedSource;  // loads all[ids[k]]: index form
using grove::gpu::kernel::PackedSource;   // loads list[k]: plain form

// The density pass: the kernel iterates h itself and writes the complete DensityResult.
struct SphDensityPass {
  using EPI = sph::DensityEPI;
  using EPJ = sph::DensityEPJ;
  using Force = sph::DensityResult;
  using IImage = sph::DensityIImage;
  using JImage = sph::DensityJImage;
  using Out = sph::DensityResult;
  using Parameters = sph::DensityParameters;
  static constexpr int kThreads = 64;
  static IImage imageOf(const EPI& p) { return sph::densityIImageOf(p); }
  static JImage imageOf(const EPJ& p) { return sph::densityJImageOf(p); }
  template <class JSource>
  static void launch(cudaStream_t stream, int n_tasks, const WalkTask* tasks, const WalkDesc* walks,
                     const IImage* epi, JSource epj, const Parameters& p, Out* out) {
    sphDensityKernel<kThreads><<<n_tasks, kThreads, 0, stream>>>(tasks, walks, epi, epj, p, out);
  }
  // Written, not added: a particle's result is complete (its walk holds all its neighbours), and
  // it is not a sum (h, rho, ...; the cleared DensityResult even has grad_h = 1).
  static void deliver(Force& into, const Out& r) { into = r; }
};

// The hydro pass: sums of pair terms, added to the caller's (addForce: +=, and max for v_signal),
// as grove's retrieve contract says.
struct SphHydroPass {
  using EPI = sph::HydroEP;
  using EPJ = sph::HydroEP;
  using Force = sph::HydroResult;
  using IImage = sph::HydroSide;
  using JImage = sph::HydroSide;
  using Out = sph::HydroResult;
  using Parameters = sph::HydroParameters;
  static constexpr int kThreads = 64;
  static IImage imageOf(const EPI& p) { return sph::hydroSideOf(p); }
  template <class JSource>
  static void launch(cudaStream_t stream, int n_tasks, const WalkTask* tasks, const WalkDesc* walks,
                     const IImage* epi, JSource epj, const Parameters& p, Out* out) {
    sphHydroKernel<kThreads><<<n_tasks, kThreads, 0, stream>>>(tasks, walks, epi, epj, 0.5 * p.alpha, out);
  }
  static void deliver(Force& into, const Out& r) { sph::addForce(into, r); }
};

template <class Pass>
class SphMultiwalk final
    : public grove::gpu::Multiwalk<typename Pass::EPI, typename Pass::EPJ, grove::gpu::NoSPJ, typename Pass::Force> {
  using EPI = typename Pass::EPI;
  using EPJ = typename Pass::EPJ;
  using Force = typename Pass::Force;
  using IImage = typename Pass::IImage;
  using JImage = typename Pass::JImage;
  using Out = typename Pass::Out;
  static constexpr int kThreads = Pass::kThreads;

 public:
  // device: -1 for the current device.
  explicit SphMultiwalk(const typename Pass::Parameters& p, int device = -1)
      : p_(p), device_(device >= 0 ? device : grove::gpu::currentDevice()) {}

  ~SphMultiwalk() override {
    for (auto& s : streams_) cudaStreamSynchronize(s->stream.get());  // copies into pinned buffers may run
  }

  int dispatchPlainWalks(int tag, int n_walk, const EPI** epi, const int* n_epi, const EPJ** epj, const int* n_epj,
                         const grove::gpu::NoSPJ**, const int*) override {
    grove::gpu::ScopedDevice guard(device_);
    Batch& b = startBatch(tag, n_walk, epi, n_epi, n_epj);
    b.j_images.reserve(b.n_j);
#pragma omp parallel for schedule(dynamic, 8)
    for (int w = 0; w < n_walk; ++w)
      for (int k = 0; k < n_epj[w]; ++k) b.j_images[b.walks[w].j_begin + k] = Pass::imageOf(epj[w][k]);
    TagStream& ts = streamOf(tag);
    grove::gpu::growOnStream(ts.j_images, b.n_j, ts.stream);
    grove::gpu::copyToDeviceAsync(ts.j_images.data(), b.j_images.data(), b.n_j, ts.stream);
    this->stats_.bytes_to_device += static_cast<std::int64_t>(b.n_j * sizeof(JImage));
    run(b, ts, PackedSource<JImage>{ts.j_images.data()});
    return 0;
  }

  int dispatchIndexWalks(int tag, int n_walk, const EPI** epi, const int* n_epi, const int** id_epj,
                         const int* n_epj, const int**, const int*, const EPJ* epj, int n_epj_total,
                         const grove::gpu::NoSPJ*, int, bool send_flag, bool lists_unchanged) override {
    grove::gpu::ScopedDevice guard(device_);
    TagStream& ts = streamOf(tag);
    if (send_flag) sendWholeArray(epj, n_epj_total, ts);
    if (!array_sent_)
      grove::gpu::throwGpuError("sph multiwalk", "index-form dispatch before the EPJ array was sent");
    if (n_walk == 0) return 0;  // FDPS's send-only call (grove's first call of a step): no batch
    Batch& b = startBatch(tag, n_walk, epi, n_epi, n_epj);
    KeptList& kept = keptList(call_in_step_++);
    if (!(lists_unchanged && kept.matches(n_walk, n_epj))) {
      // New lists: pack them walk after walk, and keep them on the device for reuse steps.
      b.ids.reserve(b.n_j);
      int* ids = b.ids.data();
#pragma omp parallel for schedule(dynamic, 8)
      for (int w = 0; w < n_walk; ++w)
        if (n_epj[w]) std::memcpy(ids + b.walks[w].j_begin, id_epj[w], sizeof(int) * n_epj[w]);
      if (kept.ids.capacity() < b.n_j) {
        grove::gpu::check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");  // an older batch may read them
        kept.ids.reserve(b.n_j);
      }
      grove::gpu::copyToDeviceAsync(kept.ids.data(), ids, b.n_j, ts.stream);
      kept.remember(n_walk, n_epj);
      ++this->stats_.lists_kept;
      this->stats_.bytes_to_device += static_cast<std::int64_t>(b.n_j * sizeof(int));
    } else {
      ++this->stats_.lists_reused;
    }
    ts.stream.waitFor(array_sent_->get());  // the whole array may have gone on another tag's stream
    run(b, ts, IndexedSource<JImage>{j_all_.data(), kept.ids.data()});
    return 0;
  }

  int retrieveWalks(int tag, int n_walk, const int* n_epi, Force** force) override {
    grove::gpu::ScopedDevice guard(device_);
    auto it = std::find_if(pending_.begin(), pending_.end(), [&](const auto& b) { return b->tag == tag; });
    if (it == pending_.end())
      grove::gpu::throwGpuError("sph multiwalk", "retrieve(tag " + std::to_string(tag) + ") without a dispatch");
    Batch& b = **it;
    if (n_walk != b.n_walk)
      grove::gpu::throwGpuError("sph multiwalk", "retrieve(tag " + std::to_string(tag) + ") for " +
                                                     std::to_string(n_walk) + " walks; dispatched " +
                                                     std::to_string(b.n_walk));
    b.done.synchronize();
    this->stats_.kernel_seconds += busy_clock_.add(b.kernel_start, b.kernel_stop);
    const Out* out = b.out.data();
#pragma omp parallel for schedule(dynamic, 16)
    for (int w = 0; w < n_walk; ++w)
      for (int i = 0; i < n_epi[w]; ++i) Pass::deliver(force[w][i], out[b.walks[w].i_begin + i]);
    free_.push_back(std::move(*it));
    pending_.erase(it);
    return 0;
  }

 private:
  // One per tag: a stream and the device buffers its batches use, in stream order.
  struct TagStream {
    grove::gpu::Stream stream;
    grove::gpu::DeviceArray<WalkTask> tasks;
    grove::gpu::DeviceArray<WalkDesc> walks;
    grove::gpu::DeviceArray<IImage> i_images;
    grove::gpu::DeviceArray<JImage> j_images;
    grove::gpu::DeviceArray<Out> out;
  };

  // One batch in flight: its pinned buffers live until retrieve.
  struct Batch {
    int tag = 0, n_walk = 0;
    std::size_t n_i = 0, n_j = 0, n_tasks = 0;
    grove::gpu::PinnedArray<WalkTask> tasks;
    grove::gpu::PinnedArray<WalkDesc> walks;
    grove::gpu::PinnedArray<IImage> i_images;
    grove::gpu::PinnedArray<JImage> j_images;
    grove::gpu::PinnedArray<int> ids;
    grove::gpu::PinnedArray<Out> out;
    grove::gpu::Event done, kernel_start{true}, kernel_stop{true};
  };

  // Call k's index lists, kept on the device for the next REUSE_LIST steps.
  struct KeptList {
    grove::gpu::DeviceArray<int> ids;
    std::vector<int> n_epj;
    bool matches(int n_walk, const int* nj) const {
      return static_cast<int>(n_epj.size()) == n_walk && std::equal(n_epj.begin(), n_epj.end(), nj);
    }
    void remember(int n_walk, const int* nj) { n_epj.assign(nj, nj + n_walk); }
  };

  TagStream& streamOf(int tag) {
    while (static_cast<int>(streams_.size()) <= tag) streams_.push_back(std::make_unique<TagStream>());
    return *streams_[tag];
  }

  KeptList& keptList(int k) {
    if (static_cast<int>(kept_.size()) <= k) kept_.resize(static_cast<std::size_t>(k) + 1);
    return kept_[k];
  }

  // Index form, once per step: the whole EPJ array as j-images.
  void sendWholeArray(const EPJ* epj, int n_epj, TagStream& ts) {
    call_in_step_ = 0;
    // grove sends at the start of a step, when nothing is in flight; wait anyway, since the
    // device array and the staging buffer are about to be overwritten.
    grove::gpu::check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    const auto n = static_cast<std::size_t>(std::max(n_epj, 0));
    j_stage_.reserve(n), j_all_.reserve(n);
    JImage* stage = j_stage_.data();
#pragma omp parallel for schedule(static)
    for (int k = 0; k < n_epj; ++k) stage[k] = Pass::imageOf(epj[k]);
    grove::gpu::copyToDeviceAsync(j_all_.data(), stage, n, ts.stream);
    if (!array_sent_) array_sent_ = std::make_unique<grove::gpu::Event>();
    array_sent_->record(ts.stream.get());
    this->stats_.bytes_to_device += static_cast<std::int64_t>(n * sizeof(JImage));
  }

  // A free slot with the batch's tasks, walk table and i-images packed.
  Batch& startBatch(int tag, int n_walk, const EPI** epi, const int* n_epi, const int* n_epj) {
    if (free_.empty()) free_.push_back(std::make_unique<Batch>());
    pending_.push_back(std::move(free_.back()));
    free_.pop_back();
    Batch& b = *pending_.back();
    b.tag = tag, b.n_walk = n_walk;
    b.n_i = b.n_j = b.n_tasks = 0;
    b.walks.reserve(static_cast<std::size_t>(n_walk));
    for (int w = 0; w < n_walk; ++w) {  // offsets of each walk's slices: a prefix sum
      b.walks[w] = {static_cast<int>(b.n_i), n_epi[w], static_cast<int>(b.n_j), n_epj[w], 0, 0};
      b.n_i += n_epi[w], b.n_j += n_epj[w];
      b.n_tasks += (n_epi[w] + kThreads - 1) / kThreads;
    }
    b.tasks.reserve(b.n_tasks), b.i_images.reserve(b.n_i), b.out.reserve(b.n_i);
    std::size_t t = 0;
    for (int w = 0; w < n_walk; ++w)
      for (int first = 0; first < n_epi[w]; first += kThreads) b.tasks[t++] = {w, first};
#pragma omp parallel for schedule(dynamic, 8)
    for (int w = 0; w < n_walk; ++w)
      for (int i = 0; i < n_epi[w]; ++i) b.i_images[b.walks[w].i_begin + i] = Pass::imageOf(epi[w][i]);
    return b;
  }

  // The copies, the kernel and the copy back, on the tag's stream.
  template <class JSource>
  void run(Batch& b, TagStream& ts, JSource j_source) {
    grove::gpu::growOnStream(ts.tasks, b.n_tasks, ts.stream);
    grove::gpu::growOnStream(ts.walks, static_cast<std::size_t>(b.n_walk), ts.stream);
    grove::gpu::growOnStream(ts.i_images, b.n_i, ts.stream);
    grove::gpu::growOnStream(ts.out, b.n_i, ts.stream);
    grove::gpu::copyToDeviceAsync(ts.tasks.data(), b.tasks.data(), b.n_tasks, ts.stream);
    grove::gpu::copyToDeviceAsync(ts.walks.data(), b.walks.data(), static_cast<std::size_t>(b.n_walk), ts.stream);
    grove::gpu::copyToDeviceAsync(ts.i_images.data(), b.i_images.data(), b.n_i, ts.stream);
    busy_clock_.beforeLaunch(pending_.size() == 1, ts.stream.get());
    b.kernel_start.record(ts.stream.get());
    if (b.n_tasks > 0) {
      Pass::launch(ts.stream.get(), static_cast<int>(b.n_tasks), ts.tasks.data(), ts.walks.data(), ts.i_images.data(),
                   j_source, p_, ts.out.data());
      grove::gpu::check(cudaGetLastError(), "sph multiwalk kernel launch");
    }
    b.kernel_stop.record(ts.stream.get());
    if (b.n_i)
      grove::gpu::check(cudaMemcpyAsync(b.out.data(), ts.out.data(), b.n_i * sizeof(Out), cudaMemcpyDeviceToHost,
                                        ts.stream.get()),
                        "cudaMemcpyAsync");
    b.done.record(ts.stream.get());
    ++this->stats_.batches, ++this->stats_.blocks;
    this->stats_.walks += b.n_walk;
    this->stats_.bytes_to_device += static_cast<std::int64_t>(b.n_tasks * sizeof(WalkTask) +
                                                              b.n_walk * sizeof(WalkDesc) + b.n_i * sizeof(IImage));
    this->stats_.bytes_from_device += static_cast<std::int64_t>(b.n_i * sizeof(Out));
    for (int w = 0; w < b.n_walk; ++w)
      this->stats_.interactions += static_cast<std::int64_t>(b.walks[w].n_i) * b.walks[w].n_j;
  }

  typename Pass::Parameters p_;
  int device_;
  std::vector<std::unique_ptr<TagStream>> streams_;
  std::deque<std::unique_ptr<Batch>> pending_;  // in dispatch order: retrieve takes the oldest of a tag
  std::vector<std::unique_ptr<Batch>> free_;
  grove::gpu::DeviceArray<JImage> j_all_;      // index form: the step's whole EPJ array
  grove::gpu::PinnedArray<JImage> j_stage_;
  std::unique_ptr<grove::gpu::Event> array_sent_;  // made on device_, at the first send
  std::vector<KeptList> kept_;
  int call_in_step_ = 0;
  grove::gpu::KernelBusyClock busy_clock_;  // stats_.kernel_seconds: union of the kernels' device time
};

using SphDensityTemplate = SphMultiwalk<SphDensityPass>;
using SphHydroTemplate = SphMultiwalk<SphHydroPass>;

}  // namespace user::cuda
