#pragma once
/// @file
/// grove::gpu::MultiwalkEngine: the index-form (and plain-form) dispatch/retrieve pair, written
/// @verbatim
/// once for any particle types. A user supplies only the pairwise interaction as a device functor
///
///   struct Gravity {
///     float eps2;
///     __device__ void operator()(const EPI& i, const EPJ& j, Force& f) const;   // adds j's effect
///   };
///
/// (and one taking the SPJ's device image for superparticles), and the engine does the rest:
/// packing walks into pinned host buffers, asynchronous copies on several streams, the force
/// kernel (multiwalk_kernel.cuh), device-resident EPJ/SPJ arrays for the index form, index lists
/// kept on the device and reused when grove says they are unchanged, buffers that grow as needed,
/// and a device-memory budget: a batch that does not fit runs in blocks of walks.
///
/// nvcc only: include it from a .cu file that instantiates the engine for your types, and hand
/// the engine to host code through the Multiwalk interface (multiwalk.hpp), e.g.
///
///   // gravity_gpu.cu
///   std::unique_ptr<grove::gpu::Multiwalk<EPI, EPJ, grove::SPJMonopole, Force>> makeGravityGpu(float eps2) {
///     return std::make_unique<grove::gpu::MultiwalkEngine<EPI, EPJ, grove::SPJMonopole, Force,
///                                                         EpGravity, SpGravity>>(EpGravity{eps2}, SpGravity{eps2});
///   }
///
/// Contracts: EPI, EPJ, SPJ trivially copyable (or with a DeviceForm, device_form.hpp, that maps
/// them to a trivially copyable image: the functors receive the images); Force trivially
/// copyable, value-initialisable on the device (Force{} is the cleared force) and addable on the
/// host (addForce, multiwalk.hpp). Short range: SPJ = NoSPJ and no SP functor.
/// @endverbatim
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <deque>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "grove/gpu/cuda_resources.hpp"
#include "grove/gpu/device_gpu.h"
#include "grove/gpu/multiwalk/multiwalk.hpp"
#include "grove/gpu/multiwalk/multiwalk_kernel.cuh"
#include "grove/gpu/multiwalk/multiwalk_plan.hpp"
#include "grove/tree/device_form.hpp"

namespace grove::gpu {

/// The SpInteraction of a short-range engine.
struct NoInteraction {};

/// Threads per block and i-particles per thread of the force kernel. A block covers
/// kThreads * kIPerThread i-particles of one walk; a walk with more takes several blocks. 64 by
/// default: a walk's last block is partly idle, and groups hold a few hundred particles (at
/// n_group 512 about 300 on average), so 128-thread blocks left about a fifth of the threads idle.
template <int Threads = 64, int IPerThread = 1>
struct KernelShape {
  static constexpr int kThreads = Threads;             ///< threads per block
  static constexpr int kIPerThread = IPerThread;       ///< i-particles per thread
  static constexpr int kChunk = Threads * IPerThread;  ///< i-particles per block
};

/// The multiwalk dispatch/retrieve pair for any particle types, given the pairwise interactions
/// (see the top of this file); host code holds it as a Multiwalk.
template <class EPI, class EPJ, class SPJ, class Force, class EpInteraction, class SpInteraction = NoInteraction,
          class Shape = KernelShape<>>
class MultiwalkEngine final : public Multiwalk<EPI, EPJ, SPJ, Force> {
  using Base = Multiwalk<EPI, EPJ, SPJ, Force>;
  static constexpr bool kLongRange = Base::kLongRange;
  using DI = DeviceFormOf<EPI>;
  using DJ = DeviceFormOf<EPJ>;
  using DS = DeviceFormOf<SPJ>;
  using WalkDesc = kernel::WalkDesc;
  using WalkTask = kernel::WalkTask;

  static_assert(std::is_trivially_copyable_v<DI> && std::is_trivially_copyable_v<DJ> &&
                    std::is_trivially_copyable_v<DS>,
                "MultiwalkEngine: EPI, EPJ and SPJ (or their DeviceForm images) must be trivially copyable");
  static_assert(std::is_trivially_copyable_v<Force>, "MultiwalkEngine: Force must be trivially copyable");
  static_assert(AddableForce<Force>,
                "MultiwalkEngine: retrieve adds forces; give Force an operator+= or write "
                "addForce(Force&, const Force&) in Force's namespace");
  static_assert(kLongRange != std::is_same_v<SpInteraction, NoInteraction>,
                "MultiwalkEngine: a long-range engine needs an SP interaction; a short-range one (SPJ = NoSPJ) "
                "takes none");

 public:
  /// Long range: ep(const EPI&, const DeviceFormOf<EPJ>&, Force&) and
  /// sp(const EPI&, const DeviceFormOf<SPJ>&, Force&), on MultiwalkOptions::device (default: the
  /// device current now).
  MultiwalkEngine(EpInteraction ep, SpInteraction sp, const MultiwalkOptions& options = {})
    requires kLongRange
      : ep_(ep), sp_(sp), options_(options) {
    start();
  }
  /// Short range (SPJ = NoSPJ): ep only; the device as for the long-range form.
  explicit MultiwalkEngine(EpInteraction ep, const MultiwalkOptions& options = {})
    requires(!kLongRange)
      : ep_(ep), options_(options) {
    start();
  }
  ~MultiwalkEngine() override {
    // Copies into pinned buffers may still run; wait before the buffers are freed.
    try {
      ScopedDevice guard(device_);
      synchronizeAll();
    } catch (...) {
    }
  }

  /// The device the engine runs on.
  int device() const { return device_; }
  /// The device memory it may use (MultiwalkOptions::device_memory_budget; default: 80 % of the
  /// memory free when it was made).
  std::size_t deviceMemoryBudget() const { return budget_; }
  /// Device memory the engine holds now (resident arrays, kept lists, working buffers).
  std::size_t deviceBytesHeld() const {
    std::size_t bytes = residentBytes() + keptBytes(-1);
    for (const Lane& lane : lanes_) bytes += lane.buffer.bytes();
    return bytes;
  }

  /// FDPS's plain dispatch (Multiwalk, multiwalk.hpp): packs the walks' EPI, EPJ and SPJ and
  /// launches the force kernel on batch `tag`'s stream; returns 0 without waiting.
  int dispatchPlainWalks(int tag, int n_walk, const EPI** epi, const int* n_epi, const EPJ** epj, const int* n_epj,
                         const SPJ** spj, const int* n_spj) override {
    ScopedDevice guard(device_);
    Call call{tag, n_walk, epi, n_epi, n_epj, n_spj};
    call.epj = epj, call.spj = spj;
    launchBatch(call, SourceMode::Packed, false);
    return 0;
  }

  /// FDPS's index dispatch: with send_flag, the step's whole EPJ/SPJ arrays (kept on the device,
  /// sent in slices as batches need them); then the walks' EPI and index lists (not resent when
  /// lists_unchanged) and the kernel on batch `tag`'s stream; returns 0 without waiting. Throws
  /// grove::Error for an index call before any send_flag call.
  int dispatchIndexWalks(int tag, int n_walk, const EPI** epi, const int* n_epi, const int** id_epj,
                         const int* n_epj, const int** id_spj, const int* n_spj, const EPJ* epj, int n_epj_total,
                         const SPJ* spj, int n_spj_total, bool send_flag, bool lists_unchanged) override {
    ScopedDevice guard(device_);
    if (send_flag) beginStep(epj, n_epj_total, spj, n_spj_total, lists_unchanged);
    if (!step_open_)
      throwGpuError("gpu multiwalk dispatch",
                    "index-form dispatch before any call with send_flag = true: the EPJ/SPJ arrays were never sent");
    if (n_walk == 0) return 0;  // FDPS's send-only call: nothing to compute, nothing to retrieve
    Call call{tag, n_walk, epi, n_epi, n_epj, n_spj};
    call.id_epj = id_epj, call.id_spj = id_spj, call.epj_all = epj, call.spj_all = spj;
    launchBatch(call, resident_ ? SourceMode::Indexed : SourceMode::Gathered, lists_unchanged);
    ++call_in_step_;
    return 0;
  }

  /// FDPS's retrieve: waits for batch `tag` and adds its forces into force[w][0 .. n_epi[w]).
  int retrieveWalks(int tag, int n_walk, const int* n_epi, Force** force) override {
    ScopedDevice guard(device_);
    Batch& batch = takePending(tag);
    verifyRetrieve(batch, n_walk, n_epi);
    batch.done.synchronize();
    for (int b = 0; b < batch.n_blocks; ++b)
      this->stats_.kernel_seconds += busy_clock_.add(batch.kernel_start[b], batch.kernel_stop[b]);
    const Force* out = batch.output.data();
#pragma omp parallel for schedule(dynamic, 16)
    for (int w = 0; w < n_walk; ++w) {
      const Force* from = out + batch.i_offset[w];
      for (int i = 0; i < n_epi[w]; ++i) addForce(force[w][i], from[i]);
    }
    free_batches_.push_back(std::move(pending_.front()));
    pending_.pop_front();
    return 0;
  }

 private:
  /// Where a batch's sources come from: packed per walk (plain form, or the index form gathered on
  /// the host when the whole arrays do not fit), or through index lists into device arrays.
  enum class SourceMode { Packed, Gathered, Indexed };

  struct Call {  // one dispatch's arguments, whatever the form
    int tag, n_walk;
    const EPI** epi;
    const int* n_epi;
    const int* n_epj;
    const int* n_spj;
    const EPJ** epj = nullptr;
    const SPJ** spj = nullptr;
    const int** id_epj = nullptr;
    const int** id_spj = nullptr;
    const EPJ* epj_all = nullptr;
    const SPJ* spj_all = nullptr;
    int nSpj(int w) const { return kLongRange && n_spj ? n_spj[w] : 0; }
  };

  struct Lane {  // a stream and the device buffer its batches work in (stream order protects it)
    Stream stream;
    DeviceArray<std::byte> buffer;
  };

  /// One block's sections, at the same offsets in the device buffer and in the pinned input (from
  /// pinned_offset); the force section exists on the device only. Lists kept on the device hold
  /// the whole batch: a block's walks then index them from j_first and s_first.
  struct BlockLayout {
    WalkBlock walks;
    std::size_t n_tasks = 0, n_i = 0, n_j = 0, n_s = 0, j_first = 0, s_first = 0;
    std::size_t tasks = 0, descs = 0, epi = 0, j_list = 0, s_list = 0, input_bytes = 0, force = 0, total_bytes = 0;
    std::size_t pinned_offset = 0, first_force = 0;
  };

  struct Batch {
    int tag = 0, n_walk = 0, n_blocks = 0;
    std::vector<int> n_epi;
    std::vector<std::size_t> i_offset;
    PinnedArray<std::byte> input;
    PinnedArray<Force> output;
    Event done;
    std::vector<Event> kernel_start, kernel_stop;
  };

  struct KeptLists {  // one call's index lists on the device: EPJ ids, then SPJ ids
    DeviceArray<int> ids;
    std::vector<int> n_epj, n_spj;
    std::size_t n_j = 0, n_s = 0;
    bool valid = false;
  };

  // ---- set-up -------------------------------------------------------------------------------------

  void start() {
    device_ = options_.device >= 0 ? options_.device : currentDevice();
    ScopedDevice guard(device_);
    if (options_.streams < 1)
      throwGpuError("gpu multiwalk", "MultiwalkOptions::streams is " + std::to_string(options_.streams) +
                                         "; at least one stream is needed");
    budget_ = options_.device_memory_budget != 0
                  ? options_.device_memory_budget
                  : static_cast<std::size_t>(0.8 * static_cast<double>(currentDeviceMemory().free_bytes));
    for (int s = 0; s < options_.streams; ++s) lanes_.push_back(Lane{});
    upload_ = std::make_unique<Stream>();
    upload_done_ = std::make_unique<Event>();
    enablePageLockedTransfers();  // grove's trees then page-lock the arrays they hand to dispatch
  }

  void synchronizeAll() {
    for (Lane& lane : lanes_) lane.stream.synchronize();
    if (upload_) upload_->synchronize();
  }

  // ---- the index form's whole arrays, once per step -----------------------------------------------

  std::size_t residentBytes() const { return dj_all_.bytes() + ds_all_.bytes(); }

  void beginStep(const EPJ* epj, int n_epj_total, const SPJ* spj, int n_spj_total, bool lists_unchanged) {
    step_open_ = true;
    call_in_step_ = 0;
    step_reuses_lists_ = lists_unchanged;
    if (!lists_unchanged)
      for (KeptLists& kept : kept_) kept.valid = false;
    const auto n_j = static_cast<std::size_t>(std::max(n_epj_total, 0));
    const auto n_s = kLongRange ? static_cast<std::size_t>(std::max(n_spj_total, 0)) : 0;
    const std::size_t need = n_j * sizeof(DJ) + n_s * sizeof(DS);
    resident_ = residentArraysFit(need, budget_, options_.resident_fraction);
    if (!resident_) {
      if (residentBytes() > 0) {
        synchronizeAll();
        dj_all_.release(), ds_all_.release();
      }
      return;
    }
    // The arrays are overwritten: batches still in flight must be done reading them first.
    for (const auto& batch : pending_) upload_->waitFor(batch->done.get());
    bool grow = dj_all_.capacity() < n_j;
    if constexpr (kLongRange) grow = grow || ds_all_.capacity() < n_s;
    if (grow) {
      synchronizeAll();
      // An eighth more for the next steps' growth, when the budget is roomy (not when it is tight:
      // the slack would come out of the streams' share).
      const bool room = residentArraysFit(need + need / 8, budget_, options_.resident_fraction / 2);
      dj_all_.allocate(room ? n_j + n_j / 8 : n_j);
      if constexpr (kLongRange) ds_all_.allocate(room ? n_s + n_s / 8 : n_s);
    }
    upload_done_->synchronize();  // the previous upload has left the staging buffers
    sendWhole(dj_all_.data(), staging_j_, epj, n_j);
    if constexpr (kLongRange) sendWhole(ds_all_.data(), staging_s_, spj, n_s);
    upload_done_->record(upload_->get());
    this->stats_.bytes_to_device += static_cast<std::int64_t>(need);
  }

  /// A step's whole array to the device on the upload stream: converted through the staging
  /// buffer, or, where the items are their own device images (no DeviceForm) and lie in page-locked
  /// memory (a grove tree's EPJ array: enablePageLockedTransfers), copied by DMA as they are. The
  /// batches of the step wait for the upload, and grove retrieves them all before it changes the
  /// array again.
  template <class Image, class Item>
  void sendWhole(Image* to, PinnedArray<Image>& staging, const Item* from, std::size_t n) {
    if constexpr (std::is_same_v<Image, Item>) {
      if (n > 0 && isPageLocked(from)) {
        check(cudaMemcpyAsync(to, from, n * sizeof(Image), cudaMemcpyHostToDevice, upload_->get()), "cudaMemcpyAsync");
        this->stats_.bytes_direct += static_cast<std::int64_t>(n * sizeof(Image));
        return;
      }
    }
    staging.reserve(n);
    convertAndCopyInSlices(to, staging.data(), from, n, DeviceForm<Item>::make, upload_->get());
  }

  // ---- index lists kept on the device ---------------------------------------------------------------

  std::size_t keptBytes(int except) const {
    std::size_t bytes = 0;
    for (std::size_t k = 0; k < kept_.size(); ++k)
      if (static_cast<int>(k) != except) bytes += kept_[k].ids.bytes();
    return bytes;
  }

  void dropKept(std::size_t from) {
    bool any = false;
    for (std::size_t k = from; k < kept_.size(); ++k) any = any || kept_[k].ids.capacity() > 0;
    if (!any) return;
    synchronizeAll();
    for (std::size_t k = from; k < kept_.size(); ++k) kept_[k].ids.release(), kept_[k].valid = false;
  }

  /// The lists of call k, kept by an earlier step, or nullptr. Throws when the caller says the
  /// lists are unchanged but their sizes say otherwise.
  KeptLists* keptForReuse(const Call& call, int k) {
    if (k >= static_cast<int>(kept_.size()) || !kept_[k].valid) return nullptr;
    KeptLists& kept = kept_[k];
    const bool same_walks = static_cast<int>(kept.n_epj.size()) == call.n_walk;
    for (int w = 0; same_walks && w < call.n_walk; ++w)
      if (kept.n_epj[w] != call.n_epj[w] || kept.n_spj[w] != call.nSpj(w))
        throwGpuError("gpu multiwalk dispatch",
                      "lists_unchanged, but call " + std::to_string(k) + "'s walk " + std::to_string(w) + " has " +
                          std::to_string(call.n_epj[w]) + " EPJ and " + std::to_string(call.nSpj(w)) +
                          " SPJ indices where the kept lists have " + std::to_string(kept.n_epj[w]) + " and " +
                          std::to_string(kept.n_spj[w]));
    if (!same_walks)
      throwGpuError("gpu multiwalk dispatch", "lists_unchanged, but call " + std::to_string(k) + " has " +
                                                  std::to_string(call.n_walk) + " walks where the kept lists have " +
                                                  std::to_string(kept.n_epj.size()));
    return &kept;
  }

  /// Makes room for call k's lists on the device if the budget allows: the rest of the batch must
  /// still fit unblocked on every stream. Returns nullptr when it does not.
  KeptLists* keepLists(const Call& call, int k, std::size_t n_j, std::size_t n_s, std::size_t batch_work) {
    const std::size_t need = (n_j + n_s) * sizeof(int);
    const auto streams = static_cast<std::size_t>(options_.streams);
    if (options_.max_block_bytes) batch_work = std::min(batch_work, options_.max_block_bytes);
    auto fits = [&] { return residentBytes() + keptBytes(k) + need + streams * batch_work <= budget_; };
    if (!fits() && !step_reuses_lists_) dropKept(static_cast<std::size_t>(k) + 1);  // stale: a new step's lists
    if (!fits()) {
      if (k < static_cast<int>(kept_.size()) && kept_[k].ids.capacity() > 0) {
        synchronizeAll();
        kept_[k].ids.release(), kept_[k].valid = false;
      }
      return nullptr;
    }
    if (k >= static_cast<int>(kept_.size())) kept_.resize(static_cast<std::size_t>(k) + 1);
    KeptLists& kept = kept_[k];
    if (kept.ids.capacity() < n_j + n_s) {
      synchronizeAll();
      kept.ids.allocate(n_j + n_s);
    }
    kept.n_epj.assign(call.n_epj, call.n_epj + call.n_walk);
    kept.n_spj.resize(static_cast<std::size_t>(call.n_walk));
    for (int w = 0; w < call.n_walk; ++w) kept.n_spj[w] = call.nSpj(w);
    kept.n_j = n_j, kept.n_s = n_s;
    kept.valid = true;
    return &kept;
  }

  // ---- batches ------------------------------------------------------------------------------------

  Batch& acquireBatch(int tag) {
    if (free_batches_.empty()) free_batches_.push_back(std::make_unique<Batch>());
    pending_.push_back(std::move(free_batches_.back()));
    free_batches_.pop_back();
    Batch& batch = *pending_.back();
    batch.tag = tag;
    return batch;
  }

  Batch& takePending(int tag) {
    auto it = std::find_if(pending_.begin(), pending_.end(), [&](const auto& b) { return b->tag == tag; });
    if (it == pending_.end())
      throwGpuError("gpu multiwalk retrieve",
                    "retrieve with tag " + std::to_string(tag) + ", but no dispatch with that tag is pending");
    // Keep the pending list in dispatch order with the taken batch at its front.
    std::rotate(pending_.begin(), it, it + 1);
    return *pending_.front();
  }

  static void verifyRetrieve(const Batch& batch, int n_walk, const int* n_epi) {
    bool same = n_walk == batch.n_walk;
    for (int w = 0; same && w < n_walk; ++w) same = n_epi[w] == batch.n_epi[w];
    if (!same)
      throwGpuError("gpu multiwalk retrieve", "retrieve with tag " + std::to_string(batch.tag) + " and " +
                                                  std::to_string(n_walk) +
                                                  " walks does not match its dispatch's walks (" +
                                                  std::to_string(batch.n_walk) + " walks, or other n_epi)");
  }

  static void copyAsync(void* to, const void* from, std::size_t bytes, cudaMemcpyKind kind, cudaStream_t stream) {
    if (bytes == 0) return;
    check(cudaMemcpyAsync(to, from, bytes, kind, stream), "cudaMemcpyAsync");
  }

  static std::size_t tasksOf(int n_i) { return (static_cast<std::size_t>(n_i) + Shape::kChunk - 1) / Shape::kChunk; }

  /// Bytes a walk adds to a block (its lists only when they travel with the block).
  std::size_t walkBytes(const Call& call, int w, SourceMode mode, bool lists_in_block) const {
    std::size_t bytes = sizeof(WalkDesc) + tasksOf(call.n_epi[w]) * sizeof(WalkTask) +
                        static_cast<std::size_t>(call.n_epi[w]) * (sizeof(DI) + sizeof(Force));
    if (lists_in_block) {
      const bool ids = mode == SourceMode::Indexed;
      bytes += static_cast<std::size_t>(call.n_epj[w]) * (ids ? sizeof(int) : sizeof(DJ));
      bytes += static_cast<std::size_t>(call.nSpj(w)) * (ids ? sizeof(int) : sizeof(DS));
    }
    return bytes;
  }
  static constexpr std::size_t kBlockOverhead = 6 * kSectionAlignment;  // padding of the six sections

  BlockLayout layoutBlock(const Call& call, WalkBlock walks, SourceMode mode, bool lists_in_block) const {
    BlockLayout l;
    l.walks = walks;
    for (int w = walks.begin; w < walks.end; ++w) {
      l.n_tasks += tasksOf(call.n_epi[w]);
      l.n_i += static_cast<std::size_t>(call.n_epi[w]);
      l.n_j += static_cast<std::size_t>(call.n_epj[w]);
      l.n_s += static_cast<std::size_t>(call.nSpj(w));
    }
    const bool ids = mode == SourceMode::Indexed;
    const std::size_t n_walk = static_cast<std::size_t>(walks.end - walks.begin);
    std::size_t at = 0;
    auto section = [&](std::size_t bytes) {
      const std::size_t offset = at;
      at += alignSection(bytes);
      return offset;
    };
    l.tasks = section(l.n_tasks * sizeof(WalkTask));
    l.descs = section(n_walk * sizeof(WalkDesc));
    l.epi = section(l.n_i * sizeof(DI));
    l.j_list = section(lists_in_block ? l.n_j * (ids ? sizeof(int) : sizeof(DJ)) : 0);
    l.s_list = section(lists_in_block ? l.n_s * (ids ? sizeof(int) : sizeof(DS)) : 0);
    l.input_bytes = at;
    l.force = section(l.n_i * sizeof(Force));
    l.total_bytes = at;
    return l;
  }

  void launchBatch(const Call& call, SourceMode mode, bool lists_unchanged) {
    const int n_walk = call.n_walk;
    const int k = call_in_step_;
    std::size_t n_j = 0, n_s = 0;
    for (int w = 0; w < n_walk; ++w) n_j += call.n_epj[w], n_s += call.nSpj(w);

    // Lists on the device: reuse call k's, or keep them for a later reuse step.
    KeptLists* kept = nullptr;
    bool upload_lists = false;
    std::vector<std::size_t> walk_bytes(static_cast<std::size_t>(n_walk));
    if (mode == SourceMode::Indexed && options_.keep_lists_on_device) {
      if (lists_unchanged) kept = keptForReuse(call, k);
      if (!kept) {
        std::size_t work = kBlockOverhead;
        for (int w = 0; w < n_walk; ++w) work += walkBytes(call, w, mode, false);
        kept = keepLists(call, k, n_j, n_s, work);
        upload_lists = kept != nullptr;
      }
    }
    const bool lists_in_block = kept == nullptr;
    for (int w = 0; w < n_walk; ++w) walk_bytes[w] = walkBytes(call, w, mode, lists_in_block);

    // Blocks of walks that fit a stream's share of the budget.
    std::size_t capacity = blockCapacity(keptBytes(-1));
    WalkBlockPlan plan = planWalkBlocks(walk_bytes.data(), n_walk, kBlockOverhead, capacity);
    if (plan.walk_too_large >= 0 && lists_in_block && keptBytes(-1) > 0) {
      dropKept(0);  // kept lists are only a saving: give their memory to the walks
      capacity = blockCapacity(0);
      plan = planWalkBlocks(walk_bytes.data(), n_walk, kBlockOverhead, capacity);
    }
    if (plan.walk_too_large >= 0) {
      const int w = plan.walk_too_large;
      throwGpuError("gpu multiwalk dispatch",
                    describeWalkDoesNotFit({w, call.tag, call.n_epi[w], call.n_epj[w], call.nSpj(w),
                                            walk_bytes[w] + kBlockOverhead, capacity, budget_, residentBytes(),
                                            options_.streams}));
    }

    Lane& lane = lanes_[static_cast<std::size_t>(call.tag) % lanes_.size()];
    std::vector<BlockLayout> layouts;
    std::size_t pinned_bytes = 0, first_force = 0, j_first = 0, s_first = 0;
    for (const WalkBlock& block : plan.blocks) {
      BlockLayout l = layoutBlock(call, block, mode, lists_in_block);
      l.pinned_offset = pinned_bytes, l.first_force = first_force;
      if (!lists_in_block) l.j_first = j_first, l.s_first = s_first;
      pinned_bytes += l.input_bytes, first_force += l.n_i, j_first += l.n_j, s_first += l.n_s;
      layouts.push_back(l);
    }
    const std::size_t lists_offset = pinned_bytes;
    if (upload_lists) pinned_bytes += (n_j + n_s) * sizeof(int);
    std::size_t largest = 0;
    for (const BlockLayout& l : layouts) largest = std::max(largest, l.total_bytes);
    reserveLaneBuffer(lane, largest, capacity);

    Batch& batch = acquireBatch(call.tag);
    batch.n_walk = n_walk;
    batch.n_blocks = static_cast<int>(layouts.size());
    batch.n_epi.assign(call.n_epi, call.n_epi + n_walk);
    batch.i_offset.resize(static_cast<std::size_t>(n_walk));
    std::size_t n_i = 0;
    for (int w = 0; w < n_walk; ++w) batch.i_offset[w] = n_i, n_i += static_cast<std::size_t>(call.n_epi[w]);
    batch.input.reserve(pinned_bytes);
    batch.output.reserve(n_i);
    while (batch.kernel_start.size() < layouts.size()) batch.kernel_start.emplace_back(true);
    while (batch.kernel_stop.size() < layouts.size()) batch.kernel_stop.emplace_back(true);

    if (upload_lists) {
      int* ids = reinterpret_cast<int*>(batch.input.data() + lists_offset);
      packIds(call, ids, ids + n_j);
      copyAsync(kept->ids.data(), ids, (n_j + n_s) * sizeof(int), cudaMemcpyHostToDevice, lane.stream.get());
      this->stats_.bytes_to_device += static_cast<std::int64_t>((n_j + n_s) * sizeof(int));
      ++this->stats_.lists_kept;
    } else if (kept) {
      ++this->stats_.lists_reused;
    }
    if (mode == SourceMode::Gathered) ++this->stats_.gathered_batches;

    busy_clock_.beforeLaunch(pending_.size() == 1, lane.stream.get());
    for (std::size_t b = 0; b < layouts.size(); ++b) {
      const BlockLayout& l = layouts[b];
      std::byte* host = batch.input.data() + l.pinned_offset;
      packBlock(call, l, mode, lists_in_block, host);
      std::byte* dev = lane.buffer.data();
      copyAsync(dev, host, l.input_bytes, cudaMemcpyHostToDevice, lane.stream.get());
      if (mode == SourceMode::Indexed) lane.stream.waitFor(upload_done_->get());
      batch.kernel_start[b].record(lane.stream.get());
      launchKernel(l, mode, dev, kept, lane.stream.get());
      batch.kernel_stop[b].record(lane.stream.get());
      copyAsync(batch.output.data() + l.first_force, dev + l.force, l.n_i * sizeof(Force), cudaMemcpyDeviceToHost,
                lane.stream.get());
      this->stats_.bytes_to_device += static_cast<std::int64_t>(l.input_bytes);
      this->stats_.bytes_from_device += static_cast<std::int64_t>(l.n_i * sizeof(Force));
    }
    batch.done.record(lane.stream.get());

    ++this->stats_.batches;
    this->stats_.blocks += static_cast<std::int64_t>(layouts.size());
    this->stats_.walks += n_walk;
    for (int w = 0; w < n_walk; ++w)
      this->stats_.interactions += static_cast<std::int64_t>(call.n_epi[w]) * (call.n_epj[w] + call.nSpj(w));
  }

  std::size_t blockCapacity(std::size_t kept_bytes) const {
    const std::size_t share = streamCapacity(budget_, residentBytes(), kept_bytes, options_.streams);
    return options_.max_block_bytes ? std::min(share, options_.max_block_bytes) : share;
  }

  /// The lane's buffer must hold the largest block and stay within the stream's share.
  void reserveLaneBuffer(Lane& lane, std::size_t needed, std::size_t capacity) {
    if (lane.buffer.capacity() >= needed && lane.buffer.capacity() <= capacity) return;
    lane.stream.synchronize();  // earlier blocks on this stream may still use the buffer
    lane.buffer.allocate(std::min(capacity, needed + needed / 4));
  }

  /// All EPJ ids of the call, walk after walk, then all SPJ ids.
  void packIds(const Call& call, int* j_ids, int* s_ids) const {
    std::vector<std::size_t> j_at(static_cast<std::size_t>(call.n_walk)), s_at(j_at.size());
    std::size_t nj = 0, ns = 0;
    for (int w = 0; w < call.n_walk; ++w) j_at[w] = nj, s_at[w] = ns, nj += call.n_epj[w], ns += call.nSpj(w);
#pragma omp parallel for schedule(dynamic, 8)
    for (int w = 0; w < call.n_walk; ++w) {
      if (call.n_epj[w]) std::memcpy(j_ids + j_at[w], call.id_epj[w], sizeof(int) * call.n_epj[w]);
      if (call.nSpj(w)) std::memcpy(s_ids + s_at[w], call.id_spj[w], sizeof(int) * call.nSpj(w));
    }
  }

  void packBlock(const Call& call, const BlockLayout& l, SourceMode mode, bool lists_in_block, std::byte* host) const {
    const int first = l.walks.begin, n = l.walks.end - l.walks.begin;
    auto* tasks = reinterpret_cast<WalkTask*>(host + l.tasks);
    auto* descs = reinterpret_cast<WalkDesc*>(host + l.descs);
    auto* epi = reinterpret_cast<DI*>(host + l.epi);
    std::vector<std::size_t> task_at(static_cast<std::size_t>(n));
    std::size_t t = 0, i = 0, j = l.j_first, s = l.s_first;
    for (int v = 0; v < n; ++v) {  // offsets: a prefix sum over the block's walks
      const int w = first + v;
      descs[v] = {static_cast<int>(i), call.n_epi[w], static_cast<int>(j), call.n_epj[w], static_cast<int>(s),
                  call.nSpj(w)};
      task_at[v] = t;
      t += tasksOf(call.n_epi[w]), i += call.n_epi[w], j += call.n_epj[w], s += call.nSpj(w);
    }
#pragma omp parallel for schedule(dynamic, 8)
    for (int v = 0; v < n; ++v) {
      const int w = first + v;
      const WalkDesc d = descs[v];
      for (std::size_t c = 0; c < tasksOf(d.n_i); ++c)
        tasks[task_at[v] + c] = {v, static_cast<int>(c * Shape::kChunk)};
      for (int q = 0; q < d.n_i; ++q) epi[d.i_begin + q] = DeviceForm<EPI>::make(call.epi[w][q]);
      if (!lists_in_block) continue;
      if (mode == SourceMode::Indexed) {
        auto* j_ids = reinterpret_cast<int*>(host + l.j_list);
        auto* s_ids = reinterpret_cast<int*>(host + l.s_list);
        if (d.n_j) std::memcpy(j_ids + d.j_begin, call.id_epj[w], sizeof(int) * d.n_j);
        if (d.n_s) std::memcpy(s_ids + d.s_begin, call.id_spj[w], sizeof(int) * d.n_s);
        continue;
      }
      auto* dj = reinterpret_cast<DJ*>(host + l.j_list);
      for (int q = 0; q < d.n_j; ++q)
        dj[d.j_begin + q] = DeviceForm<EPJ>::make(mode == SourceMode::Packed ? call.epj[w][q]
                                                                             : call.epj_all[call.id_epj[w][q]]);
      if constexpr (kLongRange) {
        auto* ds = reinterpret_cast<DS*>(host + l.s_list);
        for (int q = 0; q < d.n_s; ++q)
          ds[d.s_begin + q] = DeviceForm<SPJ>::make(mode == SourceMode::Packed ? call.spj[w][q]
                                                                               : call.spj_all[call.id_spj[w][q]]);
      }
    }
  }

  void launchKernel(const BlockLayout& l, SourceMode mode, std::byte* dev, const KeptLists* kept,
                    cudaStream_t stream) const {
    if (l.n_tasks == 0) return;
    const auto* tasks = reinterpret_cast<const WalkTask*>(dev + l.tasks);
    const auto* descs = reinterpret_cast<const WalkDesc*>(dev + l.descs);
    const auto* epi = reinterpret_cast<const DI*>(dev + l.epi);
    auto* force = reinterpret_cast<Force*>(dev + l.force);
    const dim3 grid(static_cast<unsigned>(l.n_tasks)), block(Shape::kThreads);
    constexpr int T = Shape::kThreads, U = Shape::kIPerThread;
    if (mode == SourceMode::Indexed) {
      const int* j_ids = kept ? kept->ids.data() : reinterpret_cast<const int*>(dev + l.j_list);
      const int* s_ids = kept ? kept->ids.data() + kept->n_j : reinterpret_cast<const int*>(dev + l.s_list);
      kernel::IndexedSource<DJ> js{dj_all_.data(), j_ids};
      kernel::IndexedSource<DS> ss{ds_all_.data(), s_ids};
      kernel::multiwalkKernel<T, U, kLongRange, DI, DJ, DS, Force><<<grid, block, 0, stream>>>(tasks, descs, epi, js,
                                                                                              ss, ep_, sp_, force);
    } else {
      kernel::PackedSource<DJ> js{reinterpret_cast<const DJ*>(dev + l.j_list)};
      kernel::PackedSource<DS> ss{reinterpret_cast<const DS*>(dev + l.s_list)};
      kernel::multiwalkKernel<T, U, kLongRange, DI, DJ, DS, Force><<<grid, block, 0, stream>>>(tasks, descs, epi, js,
                                                                                              ss, ep_, sp_, force);
    }
    check(cudaGetLastError(), "multiwalk kernel launch");
  }

  EpInteraction ep_;
  SpInteraction sp_{};
  MultiwalkOptions options_;
  int device_ = -1;
  std::size_t budget_ = 0;

  std::vector<Lane> lanes_;
  std::unique_ptr<Stream> upload_;
  std::unique_ptr<Event> upload_done_;
  DeviceArray<DJ> dj_all_;
  DeviceArray<DS> ds_all_;
  PinnedArray<DJ> staging_j_;
  PinnedArray<DS> staging_s_;
  bool resident_ = false, step_open_ = false, step_reuses_lists_ = false;
  KernelBusyClock busy_clock_;
  int call_in_step_ = 0;
  std::vector<KeptLists> kept_;

  std::deque<std::unique_ptr<Batch>> pending_;  // dispatch order
  std::vector<std::unique_ptr<Batch>> free_batches_;
};

}  // namespace grove::gpu
