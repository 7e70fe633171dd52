#pragma once
/// @file
/// grove::gpu::ResidentTreeShort: the short-range tree of the GPU-resident pipeline (nvcc only),
/// @verbatim
/// for SPH, molecular dynamics and contacts. The particles stay in device memory
/// (DeviceParticleSystem); the tree, the neighbour lists and the user's interaction run on the
/// device. FDPS's names: ResidentTreeForForceShort<Force, EPI, EPJ>::{Gather, Scatter, Symmetry}.
///
///   using DensityTree = grove::gpu::ResidentTreeForForceShort<Result, EPI, EPJ>::Gather;
///   DensityTree tree(n_leaf, gas.policy());
///   tree.calcForceAllAndWriteBack(gas, PairTerm{...}, dinfo);                       // pairwise
///   tree.calcForceAllAndWriteBack(gas, grove::gpu::withNeighbourSets(Solver{...}), dinfo);
///
/// Two kinds of user kernel, both __device__ (or GROVE_HOST_DEVICE) functors:
///   pairwise          f(const EPI&, const EPJ&, Force&) for each neighbour of each particle,
///                     Force value-initialised first (the multiwalk engine's functor form)
///   neighbour sets    k(const EPI&, const NeighbourSet<EPJ>&, Force&) once per particle; the set
///                     may be walked as often as the kernel likes (an h iteration: sums at one
///                     h, a Newton step, sums again), by size() and operator[], or folded by
///                     set.reduce(identity, map, combine)
///   cooperative sets  withCooperativeNeighbourSets(k): the same form, but the kernel's sums all go
///                     through set.reduce, so the tree may run each particle's kernel on 1-8
///                     threads (as many as its search uses): every thread runs the kernel, each
///                     folds its share of the set, reduce combines the shares, and the first
///                     thread stores the Force. Fills the GPU when particles are few (10^5) and
///                     kernels walk long sets; the sums' order differs from one thread's (rounding)
/// Each particle's list holds exactly its neighbours (walk/neighbour_search_gpu.cuh states the
/// three modes' tests) in tree order, itself included; with periodic axes the EPJ it hands over is
/// the image nearest the i-particle (EPJ::setPos), so kernels use plain position differences.
///
/// One step: root box (CUB reduce) -> Morton keys -> CUB radix sort -> the particles into key
/// order in place, with their EPI and EPJ -> cells linked level by level (the long-range tree's
/// stages, tree/tree_build_gpu.cuh) -> cell search boxes bottom-up -> neighbour counts, scan, lists ->
/// the kernel over the lists -> FP::copyFromForce in place.
///   MAKE_LIST, MAKE_LIST_FOR_REUSE   all of it (lists kept either way)
///   REUSE_LIST   same particles, no reorder since: EPI/EPJ refreshed from FP, the kept lists
///                (made with the positions and radii of their build) evaluated again; with a
///                skin (setSkin) the tree itself checks that they still hold every neighbour and
///                searches again when not
/// setSortEvery(k): a build of particles still in the order of the last sort keeps that sort's
/// cells (their boxes refitted to the present positions, so the search stays exact) and sorts
/// anew only every k-th build. calcForceAllAndWriteBackOnListsOf: a second tree (other types, a
/// mode the lists cover) evaluates another tree's kept lists, after checking they hold its sets.
///
/// Several ranks (dinfo of more than one rank; collective): the particles may lie anywhere, a rank
/// may hold none. After the local order, each rank allgathers the others' position and search
/// boxes, selects on the device the EPJs (and periodic images) each needs, swaps them through
/// pinned buffers (let/short_range_let_gpu.cuh), and builds a global j-tree of its own EPJs, its
/// own periodic images and the received ones, which its particles walk; periodic images are then
/// explicit particles. REUSE_LIST resends fresh payloads along the kept selections.
/// User types read on the device: FP::getPos, FP::copyFromForce, EPI/EPJ::copyFromFP,
/// getPos, getRSearch (EPI for GATHER and SYMMETRY, EPJ for SCATTER and SYMMETRY), EPJ::setPos
/// (periodic), Force's value-initialisation: all GROVE_HOST_DEVICE.
/// @endverbatim
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cub/device/device_reduce.cuh>
#include <limits>
#include <optional>
#include <string>
#include <cub/device/device_scan.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <type_traits>
#include <utility>

#include "grove/core/error.hpp"
#include "grove/core/execution.hpp"
#include "grove/core/list_mode.hpp"
#include "grove/domain/domain_info.hpp"
#include "grove/gpu/cuda_resources.hpp"
#include "grove/gpu/device_particle_system.hpp"
#include "grove/gpu/device_vector.hpp"
#include "grove/walk/neighbour_search_gpu.cuh"
#include "grove/force/resident_profile.hpp"
#include "grove/tree/key_order_gpu.cuh"
#include "grove/let/short_range_let_gpu.cuh"
#include "grove/gpu/stage_marks.hpp"
#include "grove/tree/tree_build_gpu.cuh"

namespace grove::gpu {

/// A particle's neighbours as its kernel sees them: size() EPJs, each the image nearest the
/// i-particle on periodic axes (with a skin, also particles up to the skin beyond reach).
template <class EPJ>
class NeighbourSet {
 public:
  /// lanes: the threads (neighbouring lanes of a warp, `mask`) that share the particle; sub: this
  /// thread's rank among them.
  __device__ NeighbourSet(const EPJ* epj, const int* index, int count, Vec3d xi, Periods periods, int lanes = 1,
                          int sub = 0, unsigned mask = 0xffffffffu)
      : epj_(epj), index_(index), count_(count), xi_(xi), periods_(periods), lanes_(lanes), sub_(sub), mask_(mask) {}
  /// The number of neighbours (the particle itself included).
  __device__ int size() const { return count_; }
  /// combine over every neighbour of map(neighbour), from `identity`. Each of the particle's
  /// threads folds every lanes-th neighbour in order, then the shares are combined pairwise, so
  /// combine must be associative and commutative (sums, maxima) and `identity` must leave it
  /// unchanged (zeros for sums); T is identity's type (reduce(0, ...) sums ints). Every thread
  /// returns the first thread's value, so all take the same branches after it; every thread of
  /// the particle must call reduce alike, and side effects of the kernel run on each thread. On
  /// one thread: the plain loop, in its order. T must be trivially copyable.
  template <class T, class Map, class Combine>
  __device__ T reduce(T identity, Map map, Combine combine) const {
    T acc = identity;
    for (int k = sub_; k < count_; k += lanes_) acc = combine(acc, map((*this)[k]));
    if (lanes_ == 1) return acc;
    for (int offset = lanes_ / 2; offset > 0; offset /= 2) acc = combine(acc, shuffle(acc, offset, true));
    return shuffle(acc, static_cast<int>(threadIdx.x % 32) - sub_, false);
  }
  /// The k-th neighbour's index in the tree's EPJ array (tree order).
  __device__ int index(int k) const { return index_[k]; }
  /// The k-th neighbour (0 <= k < size()), moved to its image nearest the i-particle on periodic axes.
  __device__ EPJ operator[](int k) const {
    EPJ pj = epj_[index_[k]];
    if constexpr (HasSetPos<EPJ>) {
      if (periods_.any()) {
        const Vec3d xj = positionOf(pj);
        const search::Separation s = search::separationOf(xi_, xj, periods_);
        if (s.shift.x != 0.0 || s.shift.y != 0.0 || s.shift.z != 0.0) pj.setPos(xj + s.shift);
      }
    }
    return pj;
  }

 private:
  /// v from lane `lane ^ offset` (xor) or from lane `offset`, word by word.
  template <class T>
  __device__ T shuffle(const T& v, int offset, bool xor_lane) const {
    static_assert(std::is_trivially_copyable_v<T>, "NeighbourSet::reduce: T must be trivially copyable");
    constexpr int kWords = static_cast<int>((sizeof(T) + 3) / 4);
    unsigned words[kWords] = {};
    memcpy(words, &v, sizeof(T));
#pragma unroll
    for (int w = 0; w < kWords; ++w)
      words[w] = xor_lane ? __shfl_xor_sync(mask_, words[w], offset) : __shfl_sync(mask_, words[w], offset);
    T out = v;  // T need not be default-constructible
    memcpy(&out, words, sizeof(T));
    return out;
  }

  const EPJ* epj_;
  const int* index_;
  int count_;
  Vec3d xi_;
  Periods periods_;
  int lanes_, sub_;
  unsigned mask_;
};

/// Marks a kernel of the neighbour-set form for calcForceAllAndWriteBack.
/// kCooperative: the kernel's sums go through NeighbourSet::reduce only, so it may run on several
/// threads per particle (a compile-time mark: other kernels are built for one thread only).
template <class Kernel, bool kCooperative = false>
struct NeighbourSetKernel {
  Kernel kernel;  ///< k(const EPI&, const NeighbourSet<EPJ>&, Force&)
};
/// kernel, marked as a neighbour-set kernel: run once per particle, on one thread.
template <class Kernel>
NeighbourSetKernel<Kernel> withNeighbourSets(Kernel kernel) {
  return {kernel};
}
/// kernel, marked as a cooperative neighbour-set kernel: its sums all go through
/// NeighbourSet::reduce, so each particle may run it on several threads.
template <class Kernel>
NeighbourSetKernel<Kernel, true> withCooperativeNeighbourSets(Kernel kernel) {
  return {kernel};
}

namespace kernel {

// kLanes neighbouring threads of a warp per particle (a particle's threads leave together).
template <int kLanes, class EPI, class EPJ, class Force, class Kernel>
__global__ void kernelOverNeighbourSets(const EPI* __restrict__ epi, std::uint32_t n, const EPJ* __restrict__ epj,
                                        const std::int64_t* __restrict__ first, const int* __restrict__ counts,
                                        const int* __restrict__ list, Periods periods, Kernel k,
                                        Force* __restrict__ force) {
  const std::size_t t = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::size_t i = t / kLanes;
  if (i >= n) return;
  const int sub = static_cast<int>(t % kLanes);
  const unsigned mask = ((1u << kLanes) - 1u) << (threadIdx.x % 32 - static_cast<unsigned>(sub));
  const EPI pi = epi[i];
  const NeighbourSet<EPJ> set(epj, list + first[i], counts[i], positionOf(pi), periods, kLanes, sub, mask);
  Force f{};
  k(pi, set, f);
  if (sub == 0) force[i] = f;
}

}  // namespace kernel

/// A pairwise kernel as a neighbour-set kernel: pair(epi, epj, force) for each neighbour in turn.
template <class Pair>
struct EachNeighbour {
  Pair pair;  ///< the pairwise kernel
  /// pair(i, set[k], f) for k = 0 .. set.size() - 1, in order.
  template <class EPI, class EPJ, class Force>
  __device__ void operator()(const EPI& i, const NeighbourSet<EPJ>& set, Force& f) const {
    for (int k = 0; k < set.size(); ++k) pair(i, set[k], f);
  }
};

/// The short-range tree of the GPU-resident pipeline: exact neighbour lists and the user's kernel
/// on the device, over a DeviceParticleSystem (see the top of this file for the step, the kernel
/// forms and several ranks).
///
/// Needs: Force, EPI, EPJ trivially copyable, their members that the device calls
/// GROVE_HOST_DEVICE, getRSearch where the mode reads it; a CUDA device current when it is made.
/// Promises: each particle's list holds exactly its neighbours by the mode's test (itself
/// included), in tree order; bad input (positions outside a periodic root, radii of half a
/// period or more) throws grove::Error on every rank.
template <class Force, class EPI, class EPJ, SearchMode M>
class ResidentTreeShort {
 public:
  static constexpr SearchMode kMode = M;  ///< GATHER, SCATTER or SYMMETRY
  static constexpr int kThreads = 128;    ///< threads per block of the search and kernel launches
  static_assert(std::is_trivially_copyable_v<EPI> && std::is_trivially_copyable_v<EPJ> &&
                    std::is_trivially_copyable_v<Force>,
                "grove::gpu::ResidentTreeShort: EPI, EPJ and Force must be trivially copyable");
  static_assert(M == SearchMode::SCATTER || HasRSearch<EPI>,
                "grove::gpu::ResidentTreeShort: the EPI type needs `getRSearch() const` (Gather and Symmetry search)");
  static_assert(M == SearchMode::GATHER || HasRSearch<EPJ>,
                "grove::gpu::ResidentTreeShort: the EPJ type needs `getRSearch() const` (Scatter and Symmetry "
                "search)");

  /// search_lanes: threads per particle in the neighbour search (1, 2, 4 or 8; 0 chooses by the
  /// particle count).
  explicit ResidentTreeShort(int n_leaf_limit = 16, Gpu policy = {}, int search_lanes = 0)
      : n_leaf_limit_(n_leaf_limit), search_lanes_(search_lanes), policy_(policy) {
    require(n_leaf_limit > 0, "ResidentTreeShort", "n_leaf_limit must be positive (got {})", n_leaf_limit);
    require(search_lanes == 0 || search_lanes == 1 || search_lanes == 2 || search_lanes == 4 || search_lanes == 8,
            "ResidentTreeShort", "search_lanes must be 0 (automatic), 1, 2, 4 or 8 (got {})", search_lanes);
  }

  /// Lists kept over steps (Verlet lists): with a skin s > 0 every pair's radius is taken s larger
  /// in the search (and the LET), so the lists hold every neighbour and possibly particles up to s
  /// farther (kernels then test the distance themselves). A REUSE_LIST step measures how far the
  /// particles moved (d, the largest displacement) and their radii grew (g) since the search; while
  /// 2 d + g <= s the kept lists still hold every neighbour and are used, else the tree rebuilds
  /// and searches again (profile().rebuilt_for_skin). 0 (the default): exact sets, and
  /// REUSE_LIST trusts the caller (FDPS's meaning).
  void setSkin(double skin) {
    require(skin >= 0.0, "ResidentTreeShort::setSkin", "the skin must not be negative (got {})", skin);
    skin_ = skin;
  }
  /// The skin (setSkin); 0 by default.
  double skin() const { return skin_; }

  /// Builds between sorts (one rank): 1 (the default) sorts at every build. k > 1: a build
  /// (MAKE_LIST, MAKE_LIST_FOR_REUSE, or a REUSE_LIST whose lists were outgrown) of the particles
  /// in the order of the last sort (no reorder, upload or exchange since: the particle system's
  /// order generation) keeps the cells of that sort and refits their boxes to the present positions
  /// (profile().refit): no keys, sort or reorder of FP, the same exact sets. As particles drift the
  /// cells loosen and searches slow, so the k-th build sorts again. Several ranks always sort.
  void setSortEvery(int k) {
    require(k >= 1, "ResidentTreeShort::setSortEvery", "builds between sorts must be at least 1 (got {})", k);
    sort_every_ = k;
  }
  /// Builds between sorts (setSortEvery); 1 by default.
  int sortEvery() const { return sort_every_; }

  // ---- the whole step ------------------------------------------------------------------------------
  /// kernel: pairwise, pair(epi, epj, force) over every particle's neighbours, or
  /// withNeighbourSets(k), k(epi, neighbour_set, force) once per particle. dinfo gives the periodic
  /// axes (its root domain) and the ranks (several: collective, see the header).
  template <class FP, class Kernel>
  void calcForceAllAndWriteBack(DeviceParticleSystem<FP>& psys, Kernel kernel, const DomainInfo& dinfo,
                                InteractionListMode mode = MAKE_LIST) {
    prepare(psys, dinfo, mode);
    compute(kernel);
    writeBack(psys);
    finishProfile();
  }
  /// The same on the cells and order of `built`, another short-range tree (of any types) built from
  /// these particles whose positions have not changed since (the SPH hydro pass after the density
  /// pass): no root, keys, sort, reorder or link; the search boxes and the lists are this tree's.
  /// One rank.
  template <class FP, class Kernel, class Built>
  void calcForceAllAndWriteBackOnTreeOf(const Built& built, DeviceParticleSystem<FP>& psys, Kernel kernel,
                                        const DomainInfo& dinfo) {
    requireOneRank(dinfo);
    buildTreeLike(built, psys);
    findNeighbours();
    compute(kernel);
    writeBack(psys);
    finishProfile();
  }
  /// The same on the kept lists of `built`, another short-range tree (of any types) whose last
  /// search was of these particles in their present order, when those lists hold every neighbour
  /// by this tree's mode and radii (the SPH hydro pass on the density pass's lists): built's mode
  /// must be SYMMETRY (its lists then cover gather, scatter and symmetric sets of radii up to its
  /// own) or this tree's. The tree checks, not the caller: with d the largest displacement since
  /// built's search and g the largest growth of this tree's radii over the radii built searched with,
  /// the lists hold while 2 d + g <= built's skin (profile().lists_borrowed = 1, no search); else it
  /// searches itself, on built's cells (as calcForceAllAndWriteBackOnTreeOf). The lists are then
  /// supersets: the kernel must skip pairs beyond this mode's radius. One rank.
  template <class FP, class Kernel, class Built>
  void calcForceAllAndWriteBackOnListsOf(const Built& built, DeviceParticleSystem<FP>& psys, Kernel kernel,
                                         const DomainInfo& dinfo) {
    static_assert(Built::kMode == SearchMode::SYMMETRY || Built::kMode == M,
                  "ResidentTreeShort::calcForceAllAndWriteBackOnListsOf: the lists of a symmetry tree or of a tree of "
                  "this mode");
    requireOneRank(dinfo);
    require(built.listsKept() && built.searchRecord().size() == psys.size(), "ResidentTreeShort",
            "the tree whose lists to use kept none of these particles");
    beginOnParticlesOf(built, psys);
    lists_kept_ = false;  // this tree's own lists (none now)
    const double drift = driftSince(built.searchRecord().data(), nullptr);
    if (drift <= built.listsSkin()) {
      profile_.lists_borrowed = 1;
      profile_.skin_drift = drift;
      profile_.neighbours = built.listEntries();
      profile_.n_cells = static_cast<std::int64_t>(built.shape().size());
      borrowed_ = {built.neighbourFirst().data(), built.neighbourCounts().data(), built.neighbourList().data()};
      compute(kernel);
      borrowed_ = {};
    } else {
      adoptCellsOf(built);
      findNeighbours();
      profile_.skin_drift = drift;
      compute(kernel);
    }
    writeBack(psys);
    finishProfile();
  }

  // ---- stages (public: tests compare them with brute force, callers may split the step) -----------

  /// Root box, keys, sort, particles into key order (psys is reordered), cells, search boxes.
  /// Periodic axes (periods.length > 0) need the positions inside `root` (the root domain) and
  /// radii below L/2. With comm (several ranks; collective: a problem found on one rank stops all)
  /// the local cells are not needed (the walks run on the global j-tree, and a rank may hold no
  /// particles): only the order, for i-particles that walk close together.
  template <class FP>
  void buildTree(DeviceParticleSystem<FP>& psys, const Periods& periods = {}, const Boxd& root = Boxd::empty(),
                 const Comm* comm = nullptr) {
    const bool several_ranks = comm != nullptr;
    const std::size_t n = psys.size();
    require(n > 0 || several_ranks, "ResidentTreeShort", "no particles on the device (upload them first)");
    require(n < (std::size_t{1} << 31), "ResidentTreeShort", "{} particles exceed the 2^31 a resident tree indexes",
            n);
    profile_ = {};
    marks_.begin(stream());
    profile_.n_particles = static_cast<std::int64_t>(n);
    periods_ = periods;
    global_built_ = false;
    require(!periods.any() || HasSetPos<EPJ>, "ResidentTreeShort",
            "periodic boundaries need `setPos(const Vec3d&)` in the EPJ type (the kernels get shifted images)");

    const Boxd bounds = boundingBox(policy_, psys.data(), n, cub_);
    raise(n > 0 ? outsidePeriodicBox(bounds, root) : std::nullopt, comm);
    root_ = n > 0 ? rootCellAround(bounds) : RootCell{};
    marks_.mark(stream(), Stage::kRoot);

    sortIntoKeyOrder(policy_, root_, psys, order_, cub_, marks_,
                     [&](const auto& p, const std::uint32_t* index, FP* out) { gather(p, index, out); });
    built_generation_ = psys.orderGeneration();
    if (periods.any()) raise(radiusBeyondHalfPeriod(), comm);
    lists_kept_ = false;
    if (several_ranks) return;

    linkCells(policy_, order_.keys.data(), n, nullptr, 0, n_leaf_limit_, shape_, level_scratch_, cub_);
    profile_.n_cells = static_cast<std::int64_t>(shape_.size());
    marks_.mark(stream(), Stage::kLink);
    computeSearchBoxes(shape_, epj_.data(), boxes_);
    marks_.mark(stream(), Stage::kBoxes);
    builds_since_sort_ = 0;
  }

  /// One rank, particles in the order of the last sort (setSortEvery): that sort's cells, EPI and
  /// EPJ refreshed from psys in place, the boxes refitted to the present positions. The search on
  /// them is exact (it tests the boxes, which hold the present positions), only looser.
  template <class FP>
  void refitTree(DeviceParticleSystem<FP>& psys, const Boxd& root) {
    require(canRefit(psys, periods_), "ResidentTreeShort::refitTree",
            "no cells of these particles in their present order to refit (build the tree first)");
    const std::size_t n = psys.size();
    profile_ = {};
    marks_.begin(stream());
    profile_.n_particles = static_cast<std::int64_t>(n);
    profile_.refit = 1;
    gather(psys, nullptr, static_cast<FP*>(nullptr));
    if (periods_.any()) raise(outsidePeriodicBox(boundingBox(policy_, psys.data(), n, cub_), root), nullptr);
    marks_.mark(stream(), Stage::kReorder);
    if (periods_.any()) raise(radiusBeyondHalfPeriod(), nullptr);
    computeSearchBoxes(shape_, epj_.data(), boxes_);
    profile_.n_cells = static_cast<std::int64_t>(shape_.size());
    marks_.mark(stream(), Stage::kBoxes);
    lists_kept_ = false;
    ++builds_since_sort_;
  }

  /// Several ranks (collective, after buildTree(..., true)): the LET (let/short_range_let_gpu.cuh),
  /// then the global j-tree of the local EPJs, the own periodic images and the received ones, on
  /// the device: keys, sort, gather, link, search boxes. The local i-particles walk it.
  void buildGlobalTree(const Comm& comm) {
    const std::size_t n = epj_.size();
    let_.select(comm, policy_, epj_.data(), n, localReach(), periods_, skin_);
    const std::size_t total = stageGlobalParticles(comm);
    raise(total < (std::size_t{1} << 31) ? std::nullopt
                                         : std::optional<std::string>(fmt::format(
                                               "rank {}: {} particles in its global tree (its own, images and received) "
                                               "exceed the 2^31 a resident tree indexes",
                                               comm.rank(), total)),
          &comm);
    marks_.mark(stream(), Stage::kLet);
    const Boxd bounds = boundingBox(policy_, global_.staged.data(), total, cub_);
    global_.root = total > 0 ? rootCellAround(bounds) : RootCell{};
    sortIntoKeyOrder(policy_, global_.root, global_.staged.data(), total, global_.order, cub_);
    gatherGlobalParticles();
    global_.shape.cells.resize(0);
    global_.shape.level_begin.assign({0, 0});
    if (total > 0) {
      linkCells(policy_, global_.order.keys.data(), total, nullptr, 0, n_leaf_limit_, global_.shape, level_scratch_, cub_);
      computeSearchBoxes(global_.shape, global_.epj.data(), global_.boxes);
    }
    profile_.n_cells = static_cast<std::int64_t>(global_.shape.size());
    global_built_ = true;
    marks_.mark(stream(), Stage::kGlobalTree);
  }

  /// The cells, order and periods of `built` (see calcForceAllAndWriteBackOnTreeOf), this tree's
  /// EPI, EPJ and search boxes from psys.
  template <class FP, class Built>
  void buildTreeLike(const Built& built, DeviceParticleSystem<FP>& psys) {
    beginOnParticlesOf(built, psys);
    adoptCellsOf(built);
  }

  /// Every particle's neighbours: one walk into fixed slots of the capacity the last search
  /// needed (its largest count plus an eighth), or, on the first search, on overflow beyond the
  /// memory the slots may take, or when slots would cost more than three times the lists, a
  /// counting walk, a scan and a writing walk.
  void findNeighbours() {
    const auto n = static_cast<std::uint32_t>(epi_.size());
    counts_.resize(n);
    first_.resize(std::size_t{n} + 1);
    profile_.search_walks = 0;
    lists_skin_ = skin_;
    if (n == 0) {  // a rank without particles (several ranks)
      list_.resize(0);
      profile_.neighbours = 0;
      lists_kept_ = true;
      marks_.mark(stream(), Stage::kSearch);
      return;
    }
    bool done = false;
    if (slot_capacity_ > 0 && slotsAffordable(n, slot_capacity_)) {
      list_.resize(std::size_t{n} * static_cast<std::size_t>(slot_capacity_));
      launchSearch(list_.data(), slot_capacity_, slot_capacity_);
      const int largest = reduceCounts(search::Max{}, 0);
      if (largest <= slot_capacity_) {
        done = true;
      } else if (slotsAffordable(n, slotCapacityFor(largest))) {  // again, in slots that fit
        slot_capacity_ = slotCapacityFor(largest);
        list_.resize(std::size_t{n} * static_cast<std::size_t>(slot_capacity_));
        launchSearch(list_.data(), slot_capacity_, slot_capacity_);
        done = true;
      }
    }
    if (!done) {
      launchSearch(nullptr, 0, 0);  // counts
      // Counts (int) to offsets (int64): the scan's output type holds totals beyond 2^31.
      exclusiveSum(cub_, counts_.data(), first_.data(), static_cast<std::int64_t>(n), stream(),
                   "cub::DeviceScan::ExclusiveSum (neighbour offsets)");
      const std::int64_t total = first_.elementToHost(n - 1, stream()) + counts_.elementToHost(n - 1, stream());
      list_.resize(static_cast<std::size_t>(total));
      launchSearch(list_.data(), 0, std::numeric_limits<int>::max());
      slot_capacity_ = slotCapacityFor(reduceCounts(search::Max{}, 0));
    }
    profile_.neighbours = reduceCounts(search::Sum{}, std::int64_t{0});
    profile_.slot_capacity = done ? slot_capacity_ : 0;
    last_total_ = profile_.neighbours;
    lists_kept_ = true;
    recordForSkin();
    marks_.mark(stream(), Stage::kSearch);
  }

  /// Stage: pair(epi, epj, force) over every particle's neighbours, Force value-initialised first.
  template <class Pair>
  void computePairwise(Pair pair) {
    computeOverNeighbourSets(EachNeighbour<Pair>{pair});
  }

  /// k once per particle, on one thread.
  template <class Kernel>
  void computeOverNeighbourSets(Kernel k) {
    launchOverNeighbourSets<1>(k);
  }
  /// k once per particle on as many threads as the search gives it (k's sums through reduce).
  template <class Kernel>
  void computeOverCooperativeNeighbourSets(Kernel k) {
    withLanes(searchLanes(static_cast<std::uint32_t>(epi_.size())),
              [&](auto lanes) { launchOverNeighbourSets<decltype(lanes)::value>(k); });
  }

  /// FP::copyFromForce for every particle (psys in the tree's order, as the forces).
  template <class FP>
  void writeBack(DeviceParticleSystem<FP>& psys) {
    require(psys.size() == force_.size() && psys.orderGeneration() == built_generation_, "ResidentTreeShort::writeBack",
            "write back to the particle system the tree was built from, unchanged in order ({} particles, {} forces)",
            psys.size(), force_.size());
    writeBackForces(policy_, psys.data(), force_.data(), force_.size());
    marks_.mark(stream(), Stage::kWriteBack);
  }

  // ---- results and the tree, for tests and diagnostics ------------------------------------------------
  /// The last step's stage times and counts.
  const ResidentShortProfile& profile() const { return profile_; }
  /// The stream every stage runs on.
  Gpu policy() const { return policy_; }
  /// The root cell of the last build.
  const RootCell& rootCell() const { return root_; }
  /// The periodic lengths of the last build (none: open boundaries).
  const Periods& periods() const { return periods_; }
  /// The particle system's order generation at the last build (DeviceParticleSystem::orderGeneration).
  std::uint64_t builtGeneration() const { return built_generation_; }
  /// The local tree's cells.
  const DeviceTreeShape& shape() const { return shape_; }
  /// The i-particles, in tree order.
  const DeviceVector<EPI>& epi() const { return epi_; }
  /// This rank's j-particles, in tree order.
  const DeviceVector<EPJ>& epj() const { return epj_; }
  /// Several ranks: whether the last step built a global j-tree, and its particles (tree order:
  /// the lists index them): local EPJs, own periodic images and received ones, images shifted.
  bool globalTreeBuilt() const { return global_built_; }
  /// Several ranks: the global j-tree's particles (see globalTreeBuilt()).
  const DeviceVector<EPJ>& globalEpj() const { return global_.epj; }
  /// The j-particles the lists index: globalEpj() on several ranks, else epj().
  const DeviceVector<EPJ>& walkedEpjArray() const { return global_built_ ? global_.epj : epj_; }
  /// i's neighbours (EPJ indices, tree order) are neighbourList()[neighbourFirst()[i] + k] for k
  /// below neighbourCounts()[i] (fixed slots or packed lists: entries between lists are unused).
  const DeviceVector<std::int64_t>& neighbourFirst() const { return first_; }
  /// Each particle's neighbour count (see neighbourFirst()).
  const DeviceVector<int>& neighbourCounts() const { return counts_; }
  /// The neighbour lists (see neighbourFirst()).
  const DeviceVector<int>& neighbourList() const { return list_; }
  /// The last step's results, in tree order.
  const DeviceVector<Force>& forces() const { return force_; }
  /// Whether lists are kept for REUSE_LIST.
  bool listsKept() const { return lists_kept_; }
  /// The skin the kept lists were searched with.
  double listsSkin() const { return lists_skin_; }
  /// The kept lists' entries (the last search's).
  std::int64_t listEntries() const { return last_total_; }
  /// What each particle (tree order) was at the last search: position, EPI and EPJ radii.
  const DeviceVector<search::SkinRecord>& searchRecord() const { return skin_record_; }
  /// Device memory the tree holds now (all its buffers).
  std::size_t deviceBytes() const {
    return global_.bytes() + let_.deviceBytes() + order_.bytes() +
           skin_record_.bytes() + epi_.bytes() +
           epj_.bytes() + shape_.cells.bytes() + level_scratch_.bytes() + boxes_.bytes() + counts_.bytes() +
           first_.bytes() + list_.bytes() + force_.bytes() + radius_max_.bytes() + cub_.bytes();
  }

 private:
  enum class Stage {
    kRoot, kKeys, kSort, kReorder, kLink, kBoxes, kLet, kGlobalTree, kSearch, kForce, kWriteBack, kCount
  };

  /// Several ranks: the global j-tree (buildGlobalTree).
  struct GlobalTree {
    DeviceVector<EPJ> staged;  // local EPJs, own images, received ones
    RootCell root;
    KeyOrder order;  // order.index[k]: the staged particle at key position k
    DeviceVector<EPJ> epj;                         // key order
    DeviceTreeShape shape;
    DeviceVector<DeviceCellBoxes> boxes;
    std::size_t bytes() const {
      return staged.bytes() + order.bytes() + epj.bytes() + shape.cells.bytes() + boxes.bytes();
    }
  };

  const EPJ* walkedEpj() const { return global_built_ ? global_.epj.data() : epj_.data(); }
  /// The global j-tree holds explicit images: its walks use no nearest-image arithmetic (an image
  /// and its original would both pass). The kernels still get each neighbour's image nearest the
  /// i-particle (NeighbourSet, with periods_): a particle wrapped by its owner since the search
  /// arrives one period off along a kept selection, and is put back.
  Periods walkedPeriods() const { return global_built_ ? Periods{} : periods_; }
  const DeviceTreeShape& walkedShape() const { return global_built_ ? global_.shape : shape_; }
  const DeviceVector<DeviceCellBoxes>& walkedBoxes() const { return global_built_ ? global_.boxes : boxes_; }

  /// This rank's boxes for the LET: positions, and the unions of the search boxes.
  ShortRangeReach localReach() {
    ShortRangeReach r;
    const std::size_t n = epj_.size();
    if (n == 0) return r;
    r.positions = boundingBox(policy_, epj_.data(), n, cub_);
    if constexpr (M != SearchMode::SCATTER) r.i_reach = searchBoxBounds(epi_.data(), n);
    if constexpr (M != SearchMode::GATHER) r.j_reach = searchBoxBounds(epj_.data(), n);
    return r;
  }
  template <class P>
  Boxd searchBoxBounds(const P* items, std::size_t n) {
    return boundingBox(policy_, items, n, cub_, search::SearchBoxOf{skin_});
  }

  /// The global tree's particles in staging order (collective: the LET exchange); returns how many.
  std::size_t stageGlobalParticles(const Comm& comm) {
    const std::size_t n = epj_.size();
    global_.staged.resize(n);
    if (n > 0)
      check(cudaMemcpyAsync(global_.staged.data(), epj_.data(), n * sizeof(EPJ), cudaMemcpyDeviceToDevice, stream()),
            "cudaMemcpyAsync (global tree, local particles)");
    const std::size_t extra = let_.exchange(comm, policy_, epj_.data(), global_.staged, n);
    profile_.let_sent = static_cast<std::int64_t>(let_.sent());
    profile_.let_received = static_cast<std::int64_t>(let_.received());
    profile_.let_own_images = static_cast<std::int64_t>(let_.ownImages());
    return n + extra;
  }
  void gatherGlobalParticles() {
    const std::size_t total = global_.staged.size();
    global_.epj.resize(total);
    if (total == 0) return;
    kernel::gatherSelected<<<blocksFor(total, 256), 256, 0, stream()>>>(global_.staged.data(), global_.order.index.data(),
                                                                          total, global_.epj.data());
    check(cudaGetLastError(), "gatherSelected kernel launch (global tree)");
  }

  /// A step on the cells or lists of `built`, another tree whose last build was of these particles
  /// in their present order: the check, this tree's profile begun, built's periods, EPI and EPJ
  /// gathered from psys (no reorder).
  template <class FP, class Built>
  void beginOnParticlesOf(const Built& built, DeviceParticleSystem<FP>& psys) {
    require(built.builtGeneration() == psys.orderGeneration() && built.epi().size() == psys.size() &&
                built.policy().stream == stream() && !built.globalTreeBuilt(),
            "ResidentTreeShort", "the tree to share was not built from these particles in their present order "
            "(or runs on another stream, or on several ranks)");
    profile_ = {};
    marks_.begin(stream());
    profile_.n_particles = static_cast<std::int64_t>(psys.size());
    periods_ = built.periods();
    gather(psys, nullptr, static_cast<FP*>(nullptr));
    built_generation_ = psys.orderGeneration();
    global_built_ = false;
    marks_.mark(stream(), Stage::kReorder);
    if (periods_.any()) raise(radiusBeyondHalfPeriod(), nullptr);
  }
  /// built's root and cells, and this tree's search boxes over them (after beginOnParticlesOf).
  template <class Built>
  void adoptCellsOf(const Built& built) {
    root_ = built.rootCell();
    const DeviceTreeShape& from = built.shape();
    shape_.level_begin = from.level_begin;
    shape_.cells.resize(from.cells.size());
    check(cudaMemcpyAsync(shape_.cells.data(), from.cells.data(), from.cells.size() * sizeof(TreeCell),
                          cudaMemcpyDeviceToDevice, stream()),
          "cudaMemcpyAsync (shared cells)");
    profile_.n_cells = static_cast<std::int64_t>(shape_.size());
    computeSearchBoxes(shape_, epj_.data(), boxes_);
    marks_.mark(stream(), Stage::kBoxes);
    lists_kept_ = false;
  }

  cudaStream_t stream() const { return policy_.stream; }

  template <class Pair>
  void compute(Pair pair) {
    computePairwise(pair);
  }
  template <class Kernel, bool kCooperative>
  void compute(NeighbourSetKernel<Kernel, kCooperative> k) {
    if constexpr (kCooperative) computeOverCooperativeNeighbourSets(k.kernel);
    else computeOverNeighbourSets(k.kernel);
  }

  template <int kLanes, class Kernel>
  void launchOverNeighbourSets(Kernel k) {
    static_assert(kThreads % 32 == 0 && 32 % kLanes == 0, "a particle's threads lie in one warp");
    requireLists();
    const auto n = static_cast<std::uint32_t>(epi_.size());
    force_.resize(n);
    profile_.kernel_lanes = kLanes;
    if (n > 0) {
      const bool borrowed = borrowed_.counts != nullptr;
      kernel::kernelOverNeighbourSets<kLanes><<<blocksFor(std::size_t{n} * kLanes, kThreads), kThreads, 0, stream()>>>(
          epi_.data(), n, walkedEpj(), borrowed ? borrowed_.first : first_.data(),
          borrowed ? borrowed_.counts : counts_.data(), borrowed ? borrowed_.list : list_.data(), periods_, k,
          force_.data());
      check(cudaGetLastError(), "kernelOverNeighbourSets kernel launch");
    }
    marks_.mark(stream(), Stage::kForce);
  }

  void requireOneRank(const DomainInfo& dinfo) const {
    require(dinfo.comm().size() == 1, "ResidentTreeShort::calcForceAllAndWriteBackOnTreeOf",
            "{} ranks: a shared tree is for one rank (on several, each pass builds its own global tree); use "
            "calcForceAllAndWriteBack",
            dinfo.comm().size());
  }

  template <class FP>
  void prepare(DeviceParticleSystem<FP>& psys, const DomainInfo& dinfo, InteractionListMode mode) {
    require(psys.stream() == stream(), "ResidentTreeShort",
            "the particle system and the tree must share one stream (give the tree psys.policy())");
    const bool several_ranks = dinfo.comm().size() > 1;
    const Comm* comm = several_ranks ? &dinfo.comm() : nullptr;
    const auto [periods, root] = periodsOf(dinfo);
    if (mode == REUSE_LIST) {
      const bool kept = lists_kept_ && psys.orderGeneration() == built_generation_ && psys.size() == epi_.size() &&
                        several_ranks == global_built_;
      raise(kept ? std::nullopt
                 : std::optional<std::string>(
                       "REUSE_LIST needs the particles of the last build, unchanged in number and order"),
            comm);
      profile_ = {};
      marks_.begin(stream());
      profile_.n_particles = static_cast<std::int64_t>(psys.size());
      profile_.n_cells = static_cast<std::int64_t>(walkedShape().size());
      profile_.neighbours = last_total_;
      gather(psys, nullptr, static_cast<FP*>(nullptr));
      marks_.mark(stream(), Stage::kReorder);
      // Lists made with another skin than now, or outgrown: search again.
      if (skin_ != lists_skin_ || (skin_ > 0.0 && !listsStillHold(comm))) {
        const double drift = profile_.skin_drift;
        rebuild(psys, periods, root, comm);
        if (several_ranks) buildGlobalTree(dinfo.comm());
        findNeighbours();
        profile_.skin_drift = drift;
        profile_.rebuilt_for_skin = 1;
        return;
      }
      if (several_ranks) {  // fresh payloads along the kept selections, into the kept order
        stageGlobalParticles(dinfo.comm());
        marks_.mark(stream(), Stage::kLet);
        gatherGlobalParticles();
        marks_.mark(stream(), Stage::kGlobalTree);
      }
      return;
    }
    rebuild(psys, periods, root, comm);
    if (several_ranks) buildGlobalTree(dinfo.comm());
    findNeighbours();
  }

  /// buildTree, or (setSortEvery) refitTree where the cells of the last sort still fit.
  template <class FP>
  void rebuild(DeviceParticleSystem<FP>& psys, const Periods& periods, const Boxd& root, const Comm* comm) {
    if (comm == nullptr && builds_since_sort_ + 1 < sort_every_ && canRefit(psys, periods)) refitTree(psys, root);
    else buildTree(psys, periods, root, comm);
  }
  /// Whether the cells of the last build are of these particles in their present order (one rank).
  template <class FP>
  bool canRefit(const DeviceParticleSystem<FP>& psys, const Periods& periods) const {
    bool same_periods = true;
    for (int a = 0; a < 3; ++a) same_periods = same_periods && periods.length[a] == periods_.length[a];
    return same_periods && !global_built_ && shape_.size() > 0 && psys.size() > 0 && psys.size() == epi_.size() &&
           psys.orderGeneration() == built_generation_;
  }

  /// What the particles were at this search (for a skin's check, and for trees that use these
  /// lists: calcForceAllAndWriteBackOnListsOf).
  void recordForSkin() {
    const std::size_t n = epi_.size();
    skin_record_.resize(n);
    if (n == 0) return;
    kernel::recordForSkin<<<blocksFor(n, 256), 256, 0, stream()>>>(epi_.data(), epj_.data(), n, skin_record_.data());
    check(cudaGetLastError(), "recordForSkin kernel launch");
  }
  /// Whether the kept lists still hold every neighbour: 2 d + g <= skin over every rank (comm:
  /// several ranks, collective). Sets profile().skin_drift.
  bool listsStillHold(const Comm* comm) {
    profile_.skin_drift = driftSince(skin_record_.data(), comm);
    return profile_.skin_drift <= skin_;
  }
  /// 2 d + g of this tree's particles now against `record` (indexed alike): d their largest
  /// displacement, g the largest growth of their radii (comm: several ranks, collective).
  double driftSince(const search::SkinRecord* record, const Comm* comm) {
    const std::size_t n = epi_.size();
    search::SkinDrift drift;
    if (n > 0) {
      drift_out_.resize(1);
      const search::DriftSince<EPI, EPJ> map{epi_.data(), epj_.data(), record, periods_};
      thrust::counting_iterator<int> ids(0);
      std::size_t temp_bytes = 0;
      check(cub::DeviceReduce::TransformReduce(nullptr, temp_bytes, ids, drift_out_.data(), n, search::MaxDrift{}, map,
                                               search::SkinDrift{}, stream()),
            "cub::DeviceReduce::TransformReduce (skin drift, size)");
      check(cub::DeviceReduce::TransformReduce(cub_.get(temp_bytes), temp_bytes, ids, drift_out_.data(), n,
                                               search::MaxDrift{}, map, search::SkinDrift{}, stream()),
            "cub::DeviceReduce::TransformReduce (skin drift)");
      drift = drift_out_.elementToHost(0, stream());
    }
    if (comm) drift.displacement = comm->allreduceMax(drift.displacement), drift.growth = comm->allreduceMax(drift.growth);
    return 2.0 * drift.displacement + drift.growth;
  }

  static std::pair<Periods, Boxd> periodsOf(const DomainInfo& dinfo) {
    Periods p;
    const Boxd root = dinfo.getPosRootDomain();
    for (int a = 0; a < 3; ++a)
      if (isPeriodic(dinfo.getBoundaryCondition(), a))
        p.length[a] = root.high[static_cast<std::size_t>(a)] - root.low[static_cast<std::size_t>(a)];
    return {p, root};
  }

  /// A problem throws on this rank, or (comm: several ranks, collective) on every rank.
  static void raise(const std::optional<std::string>& problem, const Comm* comm) {
    if (comm) comm->throwIfAnyFailed(problem, "ResidentTreeShort");
    else if (problem) throw Error("ResidentTreeShort", *problem);
  }

  /// Positions outside the root domain on a periodic axis (the wrap's own interval [low, high)).
  std::optional<std::string> outsidePeriodicBox(const Boxd& bounds, const Boxd& root) const {
    for (int a = 0; a < 3; ++a) {
      if (periods_.length[a] <= 0.0) continue;
      const auto k = static_cast<std::size_t>(a);
      if (!(bounds.low[k] >= root.low[k] && bounds.high[k] < root.high[k]))
        return fmt::format("positions on periodic axis {} span [{}, {}], outside the root domain [{}, {}): wrap them "
                           "first (e.g. grove::gpu::forEach with grove::WrapIntoRootDomain::of(dinfo))",
                           a, bounds.low[k], bounds.high[k], root.low[k], root.high[k]);
    }
    return std::nullopt;
  }

  template <class FP>
  void gather(const DeviceParticleSystem<FP>& psys, const std::uint32_t* index, FP* out) {
    const std::size_t n = psys.size();
    epi_.resize(n);
    epj_.resize(n);
    if (n == 0) return;  // a rank without particles (several ranks)
    kernel::gatherParticles<<<blocksFor(n, 256), 256, 0, stream()>>>(psys.data(), index, n, out, epi_.data(),
                                                                       epj_.data(), epi_.data(), epj_.data());
    check(cudaGetLastError(), "gatherParticles kernel launch");
  }

  void computeSearchBoxes(const DeviceTreeShape& shape, const EPJ* epj, DeviceVector<DeviceCellBoxes>& boxes) {
    computeCellSearchBoxes<M>(policy_, shape, epj, skin_, boxes);
  }

  /// Periodic search needs every radius below half of each periodic length (one image per pair).
  std::optional<std::string> radiusBeyondHalfPeriod() {
    const double r_max = std::max(maxRadius(epi_.data()), maxRadius(epj_.data())) + skin_;
    for (int a = 0; a < 3; ++a)
      if (periods_.length[a] > 0.0 && !(r_max < 0.5 * periods_.length[a]))
        return fmt::format("a search radius (with the skin) of {} reaches half the period {} of axis {}: periodic "
                           "search needs radii below L/2",
                           r_max, periods_.length[a], a);
    return std::nullopt;
  }
  template <class P>
  double maxRadius(const P* items) {
    if constexpr (!HasRSearch<P>) {
      return 0.0;
    } else {
      const std::size_t n = epi_.size();
      radius_max_.resize(1);
      std::size_t temp_bytes = 0;
      check(cub::DeviceReduce::TransformReduce(nullptr, temp_bytes, items, radius_max_.data(), n, search::Max{}, search::RadiusOf{},
                                               0.0, stream()),
            "cub::DeviceReduce::TransformReduce (radius, size)");
      check(cub::DeviceReduce::TransformReduce(cub_.get(temp_bytes), temp_bytes, items, radius_max_.data(), n, search::Max{},
                                               search::RadiusOf{}, 0.0, stream()),
            "cub::DeviceReduce::TransformReduce (largest radius)");
      return radius_max_.elementToHost(0, stream());
    }
  }

  void launchSearch(int* list, std::int64_t stride, int capacity) {
    const auto n = static_cast<std::uint32_t>(epi_.size());
    const int lanes = searchLanes(n);
    profile_.search_lanes = lanes;
    withLanes(lanes, [&](auto k) { launchSearchWith<decltype(k)::value>(n, list, stride, capacity); });
    ++profile_.search_walks;
  }
  /// f(std::integral_constant<int, lanes>) for lanes 1, 2, 4 or 8 (searchLanes' values).
  template <class F>
  static void withLanes(int lanes, F&& f) {
    switch (lanes) {
      case 1: f(std::integral_constant<int, 1>{}); break;
      case 2: f(std::integral_constant<int, 2>{}); break;
      case 4: f(std::integral_constant<int, 4>{}); break;
      default: f(std::integral_constant<int, 8>{}); break;
    }
  }
  template <int kLanes>
  void launchSearchWith(std::uint32_t n, int* list, std::int64_t stride, int capacity) {
    kernel::findNeighbours<kLanes, M, EPI, EPJ>
        <<<blocksFor(std::size_t{n} * kLanes, kernel::kSearchThreads), kernel::kSearchThreads, 0, stream()>>>(
            walkedShape().cells.data(), walkedBoxes().data(), epi_.data(), n, walkedEpj(), walkedPeriods(),
            counts_.data(), first_.data(), list, stride, capacity, skin_);
    check(cudaGetLastError(), "findNeighbours kernel launch");
  }
  /// Threads per particle in the search: the option, or enough for about 2^20 threads (the H100
  /// holds 270 000 resident threads; fewer leave the walks' memory latency uncovered).
  int searchLanes(std::uint32_t n) const {
    if (search_lanes_ > 0) return search_lanes_;
    int lanes = 1;
    while (lanes < 8 && std::size_t{n} * static_cast<std::size_t>(lanes) < (std::size_t{1} << 20)) lanes *= 2;
    return lanes;
  }

  static int slotCapacityFor(int largest) { return largest + largest / 8 + 8; }
  /// Slots for n particles at this capacity: within three times the last lists (and 64 MB).
  bool slotsAffordable(std::size_t n, int capacity) const {
    return n * static_cast<std::size_t>(capacity) <= 3 * static_cast<std::size_t>(last_total_) + (std::size_t{16} << 20);
  }

  /// op-reduction of the neighbour counts (waits).
  template <class Op, class T>
  T reduceCounts(Op op, T init) {
    const std::size_t n = counts_.size();
    reduce_out_.resize(1);
    std::int64_t* out = reduce_out_.data();
    std::size_t temp_bytes = 0;
    check(cub::DeviceReduce::TransformReduce(nullptr, temp_bytes, counts_.data(), out, n, op, search::Widen{},
                                             std::int64_t{init}, stream()),
          "cub::DeviceReduce::TransformReduce (neighbour counts, size)");
    check(cub::DeviceReduce::TransformReduce(cub_.get(temp_bytes), temp_bytes, counts_.data(), out, n, op,
                                             search::Widen{}, std::int64_t{init}, stream()),
          "cub::DeviceReduce::TransformReduce (neighbour counts)");
    return static_cast<T>(reduce_out_.elementToHost(0, stream()));
  }

  void requireLists() const {
    require(borrowed_.counts != nullptr || (lists_kept_ && counts_.size() == epi_.size()), "ResidentTreeShort",
            "no neighbour lists: build the tree and find the neighbours first");
  }

  void finishProfile() {
    using P = ResidentShortProfile;
    // Stage's fields, in its order.
    static constexpr typename StageMarks<Stage>::template Fields<P> kFields = {
        &P::root, &P::keys, &P::sort, &P::reorder, &P::link, &P::boxes, &P::let, &P::global_tree, &P::search, &P::force,
        &P::write_back};
    profile_.total = marks_.collectInto(profile_, kFields);
    profile_.device_bytes = static_cast<std::int64_t>(deviceBytes());
  }

  int n_leaf_limit_;
  int search_lanes_;
  Gpu policy_;
  Periods periods_;
  RootCell root_;
  std::uint64_t built_generation_ = 0;
  bool lists_kept_ = false;
  KeyOrder order_;  // the local particles' keys and permutation
  DeviceVector<EPI> epi_;
  DeviceVector<EPJ> epj_;
  DeviceTreeShape shape_;
  DeviceVector<std::uint32_t> level_scratch_;
  DeviceVector<DeviceCellBoxes> boxes_;
  DeviceVector<int> counts_;
  DeviceVector<std::int64_t> first_;
  DeviceVector<int> list_;
  DeviceVector<std::int64_t> reduce_out_;
  int slot_capacity_ = 0;          // 0: no search yet (count first)
  std::int64_t last_total_ = 0;    // list entries of the last search
  DeviceVector<Force> force_;
  DeviceVector<double> radius_max_;
  double skin_ = 0.0;
  double lists_skin_ = 0.0;  // the skin the kept lists were searched with
  int sort_every_ = 1;        // builds between sorts (setSortEvery)
  int builds_since_sort_ = 0;
  struct BorrowedLists {      // another tree's lists, during calcForceAllAndWriteBackOnListsOf
    const std::int64_t* first = nullptr;
    const int* counts = nullptr;
    const int* list = nullptr;
  } borrowed_;
  DeviceVector<search::SkinRecord> skin_record_;
  DeviceVector<search::SkinDrift> drift_out_;
  bool global_built_ = false;
  GlobalTree global_;
  DeviceShortRangeLet<EPJ, M> let_;
  CubScratch cub_;
  ResidentShortProfile profile_;
  StageMarks<Stage> marks_;
};

/// FDPS's spelling: ResidentTreeForForceShort<Force, EPI, EPJ>::Gather (and Scatter, Symmetry).
template <class Force, class EPI, class EPJ>
struct ResidentTreeForForceShort {
  using Gather = ResidentTreeShort<Force, EPI, EPJ, SearchMode::GATHER>;      ///< neighbours: |x_i - x_j| < r_i (EPI::getRSearch)
  using Scatter = ResidentTreeShort<Force, EPI, EPJ, SearchMode::SCATTER>;    ///< neighbours: |x_i - x_j| < r_j (EPJ::getRSearch)
  using Symmetry = ResidentTreeShort<Force, EPI, EPJ, SearchMode::SYMMETRY>;  ///< neighbours: |x_i - x_j| < max(r_i, r_j)
};

}  // namespace grove::gpu
