#pragma once
/// @file
/// grove::gpu::ResidentTreeLong: the long-range tree of the GPU-resident pipeline (nvcc only).
/// @verbatim
/// The particles stay in device memory (DeviceParticleSystem); the tree is built, walked and
/// evaluated on the device with the user's own pairwise interaction, the functor form of the
/// multiwalk engine (grove/gpu/multiwalk/multiwalk_engine.cuh), so one interaction serves both:
///
///   struct EpGravity { float eps2; __device__ void operator()(const EPI&, const EPJ&, Force&) const; };
///   struct SpGravity { float eps2; __device__ void operator()(const EPI&, const DeviceMonopole&, Force&) const; };
///
///   grove::gpu::ResidentTreeLong<Force, EPI, EPJ> tree(theta, n_leaf, n_group, bodies.policy());
///   tree.calcForceAllAndWriteBack(bodies, EpGravity{eps2}, SpGravity{eps2}, grove::MAKE_LIST);
///
/// One step: root box (CUB reduce) -> Morton keys -> CUB radix sort -> the particles gathered
/// into key order in place, with their EPI/EPJ -> cells linked level by level -> moments
/// bottom-up -> groups -> walk and force -> write-back (FP::copyFromForce) in place.
///   MAKE_LIST            lists written to device memory, then the list kernel (or, with
///                        ResidentTreeOptions::fused_walk, the fused walk: interactions
///                        evaluated as the walk finds them, no lists)
///   MAKE_LIST_FOR_REUSE  the same lists and kernel; all kept
///   REUSE_LIST           same particles (no reorder, upload or build since): EPI/EPJ refreshed
///                        from FP, moments recomputed on the kept cells, the list kernel again
///
/// Several ranks (calcForceAllAndWriteBack(psys, ep, sp, dinfo, mode), collective): the root cell
/// is every rank's common cube. After the local tree, the ranks allgather their particle boxes and
/// root superparticles, and each decides, alike on both sides of every pair, which ranks it sends a
/// LET to and which send it one (ResidentTreeOptions::let_mode: by default only ranks whose
/// particles the opening criterion cannot accept whole; the others' root superparticles stand in).
/// The LET decision runs on the device against the peers' boxes (selectLet), the payloads are
/// packed on the device and travel device to device (let/long_range_let_gpu.cuh,
/// let/let_exchange_gpu.cuh, gpu/device_transport.hpp).
/// ResidentTreeOptions::let_overlap orders the rest:
///   kReuseSteps (default)  the received EPJs and SPJs are merged with the local EPJs into one
///       global tree, in the host's order (received particles after local ones of the same key,
///       received superparticles in leaves), which the groups walk once: the host's lists and
///       errors exactly. The lists of a MAKE_LIST_FOR_REUSE step are split, group by group, into
///       the entries that need nothing from other ranks (local particles, cells of local particles
///       only) and the rest; a REUSE_LIST step evaluates the first part while the fresh payloads
///       travel, the second once they are in.
///   kNone       the same tree and lists, nothing overlapped (FDPS's order).
///   kLetTree    Bonsai's order: the local groups walk the local tree while the payloads travel,
///       then a tree of what arrived (the LET tree), their forces adding up. Every step overlaps,
///       but the cells that the two trees split on a domain edge must be opened more
///       (split_cell_theta) to keep the errors: more interactions (see the option).
/// REUSE_LIST resends the payloads along the kept selections and refreshes the global (or LET)
/// tree's particles and moments.
///
/// Search trees (kSearch: FDPS's SEARCH_MODE_LONG_SCATTER / LONG_SYMMETRY; spelled
/// ResidentTreeForForceLong<Force, EPI, EPJ>::MonopoleWithScatterSearch etc.): the walks also open
/// every cell that may hold a particle within search reach of the target (EPJ::getRSearch, and
/// for SYMMETRY EPI::getRSearch), as the host's walkTreeWithSearch, so such particles reach the
/// kernel one by one and never inside a superparticle (P3T-style splittings rely on it). The
/// cells' search boxes are computed on the device after the moments (the tree's own, so any moment
/// type serves); across ranks the LET decision applies the same test against the other ranks'
/// reach (positions; search spheres for SYMMETRY), as the host's planSearchLet. Open boundaries
/// only: the device long-range tree has no nearest-image distances (CALC_DISTANCE_TYPE_NEAREST_*).
///
/// User types read on the device: FP::getPos, FP::copyFromForce, EPI/EPJ::copyFromFP,
/// EPJ::getPos/getCharge, Force's value-initialisation as its cleared state, and the moment and
/// SPJ contracts (grove's moment types qualify) — all GROVE_HOST_DEVICE (grove/core/execution.hpp).
/// @endverbatim
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <tuple>
#include <type_traits>
#include <vector>

#include "grove/core/error.hpp"
#include "grove/core/execution.hpp"
#include "grove/core/list_mode.hpp"
#include "grove/domain/domain_info.hpp"
#include "grove/gpu/device_transport.hpp"
#include "grove/let/let_exchange_mode.hpp"
#include "grove/gpu/cuda_resources.hpp"
#include "grove/tree/device_form.hpp"
#include "grove/gpu/multiwalk/multiwalk_kernel.cuh"
#include "grove/gpu/device_particle_system.hpp"
#include "grove/gpu/device_vector.hpp"
#include "grove/let/long_range_let_gpu.cuh"
#include "grove/walk/neighbour_search_gpu.cuh"
#include "grove/force/resident_profile.hpp"
#include "grove/tree/key_order_gpu.cuh"
#include "grove/gpu/stage_marks.hpp"
#include "grove/tree/tree_build_gpu.cuh"
#include "grove/walk/group_lists_gpu.cuh"
#include "grove/walk/walk_gpu.cuh"
#include "grove/tree/moments.hpp"
#include "grove/walk/long_search_mode.hpp"
#include "grove/walk/opening_criterion.hpp"

namespace grove::gpu {

/// The options of a ResidentTreeLong (its constructor's last argument); the defaults are the
/// measured best on one H100 (doc/gpu_resident.md).
struct ResidentTreeOptions {
  /// The opening criterion (grove/walk/opening_criterion.hpp): kFdps (FDPS's, the default), kNakasato
  /// or kRmax (r_max / theta, the cell's tight extent from its expansion centre: less error per
  /// interaction, doc/performance.md "issue 31"); the host tree has the same rules
  /// (TreeForForceLong's setOpeningRule), so device and host lists can be compared.
  OpeningRule opening = OpeningRule::kFdps;
  /// Several ranks: how the LET's travel overlaps the walk (see the top of this file).
  enum class LetOverlap {
    kNone,        ///< the merged global tree, nothing overlapped (FDPS's order)
    kReuseSteps,  ///< the merged global tree; REUSE_LIST steps evaluate the local part while the LET travels
    kLetTree      ///< Bonsai's order: the local tree walked while the LET travels, then a tree of what arrived
  };
  LetOverlap let_overlap = LetOverlap::kReuseSteps;  ///< see LetOverlap
  /// Several ranks: which ranks exchange LETs. POINT_TO_POINT_FAST (default): a rank whose
  /// particles the criterion accepts whole from my box (OpeningCriterion::opensExtent, decided
  /// alike on both sides) sends me nothing; its allgathered root superparticle stands in. So a
  /// rank talks to the ranks near it, a number that does not grow with the rank count.
  /// POINT_TO_POINT or ALL_TO_ALL: every rank with particles sends every other a LET (the host's
  /// arrays exactly). Search trees always exchange with every rank (particles within search
  /// reach must travel).
  LetExchangeMode let_mode = LetExchangeMode::POINT_TO_POINT_FAST;
  /// kLetTree: a cell whose cube the local tree and the LET tree share (on a domain edge) holds
  /// only one side's particles in each. Such half cells, lined up along the edge and all lopsided
  /// the same way, make monopole errors that add up instead of cancelling. They are accepted only
  /// at split_cell_theta times theta (with Nakasato's offset s; walk/walk_gpu.cuh, finishCells);
  /// the cells wholly in one tree keep FDPS's criterion. 1: theta itself (with the offset); 0: FDPS's
  /// criterion for them too. Measured on the H100 (60 000 Plummer bodies, theta 0.5, monopole,
  /// 2 ranks; the merged tree: median error 3.62e-4, 3544 interactions per body): 0 gives 1.18e-3
  /// (3799), 1 gives 1.00e-3 (3960), 0.5 gives 4.48e-4 (5542), 0.35 gives 3.77e-4 (6699).
  double split_cell_theta = 0.35;
  /// How LET payloads travel between ranks (device_transport.hpp); rank 0's choice holds.
  TransportChoice transport = TransportChoice::kAuto;
  /// Groups of more than group_target particles are cut into runs of equal length in key order
  /// (0: FDPS's groups, the cells of at most n_group_limit particles). FDPS's groups hold between
  /// an eighth of n_group_limit and all of it, depending on where cell boundaries fall for this
  /// N, and the interactions per particle follow (+35 % from 2^22 to 2^23 bodies at 512);
  /// cutting at a target keeps a group's size, and so its cost, near the target at every N.
  int group_target = 0;
  /// MAKE_LIST steps: false (default) builds the groups' lists and runs the list kernel, as
  /// MAKE_LIST_FOR_REUSE does; true walks and evaluates in one kernel (no lists in memory). The
  /// lists are faster on the H100 (cold sphere, theta 0.5, leaf 16, group 512: 15.8 against 18.1
  /// ms per rebuilt step at 2^22, 61.7 against 92.2 at 2^24; doc/gpu_resident.md): the fused
  /// kernel holds 512 i-slots per block, which groups of 120-230 particles leave mostly idle.
  bool fused_walk = false;
  int stack_capacity = 1 << 15;  ///< cells per walking block (overflow: a clear error naming the group)
};

namespace kernel {

// The global tree's particles: staged[source[k]] (local EPJs, then received ones) in key order,
// those whose source is below source_limit.
template <class EPJ, class DJ>
__global__ void gatherGlobalParticles(const EPJ* __restrict__ staged, const std::uint32_t* __restrict__ source,
                                      std::size_t n, std::uint32_t source_limit, EPJ* __restrict__ epj,
                                      DJ* __restrict__ dj) {
  const std::size_t k = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (k >= n || source[k] >= source_limit) return;
  const EPJ j = staged[source[k]];
  epj[k] = j;
  if constexpr (!std::is_same_v<DJ, EPJ>) dj[k] = DeviceForm<EPJ>::make(j);
}

// Device images of received superparticles (the walk indexes them after the cells' own).
template <class SPJ, class DS>
__global__ void superparticleImages(const SPJ* __restrict__ spj, std::size_t n, DS* __restrict__ images) {
  const std::size_t k = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (k < n) images[k] = DeviceForm<SPJ>::make(spj[k]);
}

}  // namespace kernel

/// The long-range tree of the GPU-resident pipeline: build, walk and the user's interactions on
/// the device, over a DeviceParticleSystem (see the top of this file for the step and the modes).
///
/// Needs: Force, EPI, EPJ, the moment and the SPJ trivially copyable, their members that the
/// device calls GROVE_HOST_DEVICE; interactions ep(const EPI&, const DeviceFormOf<EPJ>&, Force&)
/// and sp(const EPI&, const DeviceFormOf<SPJ>&, Force&) callable on the device; the CUDA
/// device current at its first step stays its device. Promises: forces as the host's
/// TreeForForceLong computes them (the same criterion and, with POINT_TO_POINT on several ranks,
/// the same lists); every body's own EPJ reaches ep once (doc/gpu_resident.md, "Self pairs");
/// bad arguments and misuse (a REUSE_LIST after a reorder) throw grove::Error naming them.
template <class Force, class EPI, class EPJ, class Moment = MomentMonopole, class SPJ = SPJMonopole,
          LongSearchMode kSearch = LongSearchMode::NONE>
class ResidentTreeLong {
 public:
  using DI = DeviceFormOf<EPI>;  ///< what the device stores for an EPI
  using DJ = DeviceFormOf<EPJ>;  ///< for an EPJ: what ep receives
  using DS = DeviceFormOf<SPJ>;  ///< for an SPJ: what sp receives (DeviceMonopole, DeviceQuadrupole)
  static constexpr int kWalkThreads = 128;   ///< fused and list walks: threads per block
  static constexpr int kIPerThread = 4;      ///< fused walk: i-particles per thread (512 per pass)
  static constexpr int kJCapacity = 2048;    ///< fused walk: shared-memory EPJ index buffer
  static constexpr int kSCapacity = 1024;    ///< fused walk: shared-memory SPJ index buffer
  /// The list kernel: threads per block. 32 threads of 2 i-particles each take the same 64-particle
  /// tasks as the engine's 64 x 1 and load each source once for two i-particles: 4 % less kernel
  /// time for the monopole, 0.3-1 % for the quadrupole, the same sums in the same order
  /// (doc/performance.md, issue 31).
  static constexpr int kListThreads = 32;
  static constexpr int kListIPerThread = 2;  ///< the list kernel: i-particles per thread
  static constexpr int kListChunk = kListThreads * kListIPerThread;  ///< the list kernel: i-particles per block

  static_assert(std::is_trivially_copyable_v<EPI> && std::is_trivially_copyable_v<EPJ> &&
                    std::is_trivially_copyable_v<Force> && std::is_trivially_copyable_v<Moment>,
                "grove::gpu::ResidentTreeLong: EPI, EPJ, Force and the moment must be trivially copyable");
  static_assert(kSearch == LongSearchMode::NONE || HasRSearch<EPJ>,
                "grove::gpu::ResidentTreeLong: a search tree needs EPJ::getRSearch() (GROVE_HOST_DEVICE)");
  static_assert(kSearch != LongSearchMode::SYMMETRY || HasRSearch<EPI>,
                "grove::gpu::ResidentTreeLong: a symmetry search tree needs EPI::getRSearch() (GROVE_HOST_DEVICE)");
  static constexpr bool kSearches = kSearch != LongSearchMode::NONE;  ///< a search tree (SCATTER, SYMMETRY)

  /// theta: the opening angle (>= 0; 0 opens every cell: direct summation); n_leaf_limit: the
  /// most particles in a leaf; n_group_limit: the most in a group (both > 0); policy: the stream
  /// every stage runs on (use the particles' policy()). Throws grove::Error for values out of
  /// range, naming them.
  ResidentTreeLong(double theta, int n_leaf_limit, int n_group_limit, Gpu policy = {},
                   ResidentTreeOptions options = {})
      : theta_(theta), n_leaf_limit_(n_leaf_limit), n_group_limit_(n_group_limit), policy_(policy),
        options_(options), walker_("ResidentTreeLong", options.stack_capacity) {
    require(theta >= 0.0, "ResidentTreeLong", "theta must be >= 0 (got {})", theta);
    require(n_leaf_limit > 0 && n_group_limit > 0, "ResidentTreeLong",
            "n_leaf_limit and n_group_limit must be positive (got {} and {})", n_leaf_limit, n_group_limit);
    require(options.split_cell_theta >= 0.0 && options.split_cell_theta <= 1.0, "ResidentTreeLong",
            "ResidentTreeOptions::split_cell_theta must lie in [0, 1] (got {})", options.split_cell_theta);
    require(options.group_target >= 0, "ResidentTreeLong", "ResidentTreeOptions::group_target must be >= 0 (got {})",
            options.group_target);
    require(options.stack_capacity >= 8 * kWalkThreads, "ResidentTreeLong",
            "ResidentTreeOptions::stack_capacity must hold at least one chunk's children ({}; got {})",
            8 * kWalkThreads, options.stack_capacity);
  }

  // ---- the whole step ------------------------------------------------------------------------------
  /// One rank: the forces on the particles of psys from all of them; psys is reordered into key
  /// order on build steps and written back (FP::copyFromForce) in place. mode: MAKE_LIST,
  /// MAKE_LIST_FOR_REUSE (lists kept), REUSE_LIST (the kept lists, the moved particles; refused
  /// after anything reordered or uploaded psys since).
  template <class FP, class Ep, class Sp>
  void calcForceAllAndWriteBack(DeviceParticleSystem<FP>& psys, Ep ep, Sp sp, InteractionListMode mode = MAKE_LIST) {
    calculate(psys, ep, sp, nullptr, mode);
  }
  /// Every rank of dinfo.comm() (collective): psys holds this rank's particles, and the forces on
  /// them come from all ranks' particles, through the LET and the global tree. (The domains play
  /// no part here: the particles may lie anywhere, a rank may hold none.)
  template <class FP, class Ep, class Sp>
  void calcForceAllAndWriteBack(DeviceParticleSystem<FP>& psys, Ep ep, Sp sp, const DomainInfo& dinfo,
                                InteractionListMode mode = MAKE_LIST) {
    calculate(psys, ep, sp, &dinfo.comm(), mode);
  }

  // ---- stages (public: tests compare them with the host's, callers may split the step) ------------

  /// Stage: root box, keys, sort, particles into key order (psys is reordered), cells, moments,
  /// groups.
  template <class FP>
  void buildTree(DeviceParticleSystem<FP>& psys) {
    buildLocalTree(psys, nullptr);
  }

  /// Stage: walk and force in one kernel (no lists), forces in key order; waits for it.
  template <class Ep, class Sp>
  void computeForceFused(Ep ep, Sp sp) {
    launchFusedWalk(ep, sp);
    walker_.checkOverflow(policy_);
  }

  /// The fused walk, enqueued without waiting (computeForceFused waits and checks the stacks).
  template <class Ep, class Sp>
  void launchFusedWalk(Ep ep, Sp sp) {
    const std::size_t n = epi_.size();
    force_.resize(n);
    walker_.resetCounters(policy_);
    using Kernel = decltype(&kernel::fusedWalk<kWalkThreads, kIPerThread, kJCapacity, kSCapacity, DI, DJ, DS, Force,
                                               Ep, Sp>);
    Kernel walk = &kernel::fusedWalk<kWalkThreads, kIPerThread, kJCapacity, kSCapacity, DI, DJ, DS, Force, Ep, Sp>;
    const unsigned blocks = walker_.persistentBlocks(reinterpret_cast<const void*>(walk), groups_.size());
    kernel::WalkTree tree = walker_.prepare(policy_, walkedCells(walked()), blocks, groups_.data(), group_boxes_.data(),
                                            groupSearchBoxes(), groups_.size(), true);
    walk<<<blocks, kWalkThreads, 0, stream()>>>(tree, epiImages(), walkedEpjImages(), walked().spj_images.data(), ep, sp,
                                                 force_.data());
    check(cudaGetLastError(), "fusedWalk kernel launch");
    marks_.mark(stream(), Stage::kForce);
  }

  /// Stage: the list-building walk: every group's EPJ and SPJ index lists in device memory (over
  /// the tree the groups walk: the local tree, or the global tree of a merged multi-rank step).
  void buildLists() {
    walker_.resetCounters(policy_);
    buildListsOver(walked(), group_lists_, "interaction lists");
    profile_.list_entries = static_cast<std::int64_t>(group_lists_.lists.j.size() + group_lists_.lists.s.size());
    marks_.mark(stream(), Stage::kLists);
  }

  /// Stage: the engine's list kernel over the kept lists: forces in key order.
  template <class Ep, class Sp>
  void computeForceFromLists(Ep ep, Sp sp) {
    forceFromLists(ep, sp, group_lists_, walked(), walkedEpjImages(), false);
    marks_.mark(stream(), Stage::kForce);
    walker_.resetCounters(policy_);
    walker_.countInteractions(policy_, group_lists_);
  }

  /// Stage: the LET decision on the device: for each target box (another rank's particle box, not
  /// empty), the cells whose superparticles it needs (letCells()) and the particles of the leaves
  /// it opens (letParticles()), as the host's planLet walks: the same criterion, the root not
  /// forced open. Offsets per target in letCellOffsets() / letParticleOffsets() (one past the end
  /// last). Uses the tree of the last build. Search trees open cells within search reach too:
  /// target_search_boxes holds each target's box of search spheres (SYMMETRY; ignored otherwise).
  void selectLet(const std::vector<Boxd>& targets, const std::vector<Boxd>& target_search_boxes = {}) {
    for (std::size_t t = 0; t < targets.size(); ++t)
      require(!targets[t].isEmpty(), "ResidentTreeLong::selectLet", "target box {} is empty", t);
    const bool symmetry = kSearch == LongSearchMode::SYMMETRY;
    require(!symmetry || target_search_boxes.size() == targets.size(), "ResidentTreeLong::selectLet",
            "a symmetry search tree needs each target's box of search spheres ({} targets, {} boxes)",
            targets.size(), target_search_boxes.size());
    let_boxes_.assign(targets.data(), targets.size(), stream());
    if (symmetry) let_search_boxes_.assign(target_search_boxes.data(), target_search_boxes.size(), stream());
    walker_.writeLists(policy_, cub_, walkedCells(local_), let_boxes_.data(),
                       symmetry ? let_search_boxes_.data() : nullptr, static_cast<std::uint32_t>(targets.size()),
                       false, "LET selections", let_lists_);
  }
  /// selectLet's particles (local EPJ indices), target after target.
  const DeviceVector<int>& letParticles() const { return let_lists_.j; }
  /// selectLet's cells (local cell indices), target after target.
  const DeviceVector<int>& letCells() const { return let_lists_.s; }
  /// Where each target's particles start in letParticles() (targets + 1 entries).
  const DeviceVector<std::int64_t>& letParticleOffsets() const { return let_lists_.j_offsets; }
  /// Where each target's cells start in letCells() (targets + 1 entries).
  const DeviceVector<std::int64_t>& letCellOffsets() const { return let_lists_.s_offsets; }

  /// Stage: FP::copyFromForce for every particle (psys is in key order, as the forces). Throws
  /// grove::Error when psys is not the system the tree was built from (another size).
  template <class FP>
  void writeBack(DeviceParticleSystem<FP>& psys) {
    require(psys.size() == force_.size(), "ResidentTreeLong::writeBack",
            "{} particles but {} forces: write back to the particle system the tree was built from", psys.size(),
            force_.size());
    writeBackForces(policy_, psys.data(), force_.data(), force_.size());
    marks_.mark(stream(), Stage::kWriteBack);
  }

  // ---- results and the tree, for tests and diagnostics ------------------------------------------------
  /// The last step's stage times and counts.
  const ResidentProfile& profile() const { return profile_; }
  /// The root cell of the last build.
  const RootCell& rootCell() const { return root_; }
  /// The opening criterion (theta and the rule).
  const OpeningCriterion& criterion() const { return criterion_; }
  /// The stream every stage runs on.
  Gpu policy() const { return policy_; }
  /// The particles' Morton keys, in key order.
  const DeviceVector<MortonKey>& keys() const { return order_.keys; }
  /// sortedIndex()[k]: where the particle now at key position k was before the build's reorder.
  const DeviceVector<std::uint32_t>& sortedIndex() const { return order_.index; }
  /// The local tree's cells (of this rank's particles).
  const DeviceTreeShape& shape() const { return local_.shape; }
  /// The local tree's moments, one per cell.
  const DeviceVector<Moment>& moments() const { return local_.moments; }
  /// Whether the last multi-rank step built a global tree (false on one rank). Its particles'
  /// sources: global EPJ k is local EPJ globalEpSource()[k] when that is below the local count,
  /// else received EPJ globalEpSource()[k] - local count.
  bool globalTreeBuilt() const { return global_built_; }
  /// Whether the last multi-rank step walked a LET tree after the local one (not merged).
  bool letTreeBuilt() const { return let_tree_built_; }
  /// How LET payloads travel (null before the first multi-rank step).
  const DeviceTransport* letTransport() const { return let_.transport(); }
  /// The global tree's cells (see globalTreeBuilt()).
  const DeviceTreeShape& globalShape() const { return global_.shape; }
  /// The global tree's EPJ sources (see globalTreeBuilt()).
  const DeviceVector<std::uint32_t>& globalEpSource() const { return global_particles_.ep_order.index; }
  /// The groups: (first particle << 32 | particle count), in key order.
  const DeviceVector<std::uint64_t>& groups() const { return groups_; }
  /// Each group's box of positions.
  const DeviceVector<Boxd>& groupBoxes() const { return group_boxes_; }
  /// Search trees: each cell's boxes of the walked tree (positions, search spheres).
  const DeviceVector<DeviceCellBoxes>& searchBoxes() const { return walked().search_boxes; }
  /// The last step's forces, in key order.
  const DeviceVector<Force>& forces() const { return force_; }
  /// List forms: per group, its EPJ and SPJ list lengths (two ints per group).
  const DeviceVector<int>& listCounts() const { return group_lists_.lists.counts; }
  /// List forms: the groups' EPJ indices, group after group.
  const DeviceVector<int>& epjLists() const { return group_lists_.lists.j; }
  /// List forms: the groups' SPJ indices, group after group.
  const DeviceVector<int>& spjLists() const { return group_lists_.lists.s; }
  /// Where each group's EPJ indices start in epjLists().
  const DeviceVector<std::int64_t>& epjListOffsets() const { return group_lists_.lists.j_offsets; }
  /// Where each group's SPJ indices start in spjLists().
  const DeviceVector<std::int64_t>& spjListOffsets() const { return group_lists_.lists.s_offsets; }
  /// Whether the last walk kept its stacks in the particle system's reorder buffer (a whole step,
  /// calcForceAllAndWriteBack, lends it when the stacks fit: no stack memory of the tree's own).
  bool stacksInReorderBuffer() const { return walker_.lastStacksLent(); }
  /// Whether lists are kept for REUSE_LIST (the last build was MAKE_LIST_FOR_REUSE).
  bool listsKept() const { return lists_kept_; }
  /// The tree's device memory by what holds it (bytes, now): the build's sort and scratch, the
  /// particle images, the cells, the groups, the interaction lists, the forces, and the global
  /// tree and LET (several ranks). The parts add up to deviceBytes().
  struct DeviceBytesByPart {
    std::size_t keys = 0;       ///< keys, permutation, level scratch and CUB's scratch (the build)
    std::size_t particles = 0;  ///< EPI and EPJ in key order (and their device images)
    std::size_t cells = 0;      ///< the local tree: cells, moments, superparticle images, walk cells
    std::size_t groups = 0;     ///< groups, their flags, scratch and boxes
    std::size_t lists = 0;      ///< the groups' interaction lists, walk descriptions, tasks, the walks' own stacks
    std::size_t force = 0;      ///< the forces in key order
    std::size_t let = 0;        ///< the global tree, its particles, the LET exchange and lists
    /// The sum of the parts.
    std::size_t total() const { return keys + particles + cells + groups + lists + force + let; }
  };
  /// Device memory the tree holds now, by part.
  DeviceBytesByPart deviceBytesByPart() const {
    DeviceBytesByPart b;
    b.keys = order_.bytes() + level_scratch_.bytes() + cub_.bytes();
    b.particles = epi_.bytes() + epj_.bytes() + di_.bytes() + dj_.bytes();
    b.cells = local_.bytes();
    b.groups = groups_.bytes() + group_scratch_.bytes() + group_flags_.bytes() + group_boxes_.bytes() +
               group_search_boxes_.bytes();
    b.lists = group_lists_.bytes() + walker_.bytes();
    b.force = force_.bytes();
    b.let = global_.bytes() + global_particles_.bytes() + let_.deviceBytes() + remote_group_lists_.bytes() +
            let_lists_.bytes() + let_boxes_.bytes() + let_search_boxes_.bytes();
    return b;
  }
  /// Device memory the tree holds now (all its buffers).
  std::size_t deviceBytes() const { return deviceBytesByPart().total(); }

 private:
  // In step order. Several ranks, not merged: kLetSelect ends once the payloads are packed,
  // kLists and kForce are the local walk, kLetExchange the wait for the payloads after it (what the
  // overlap did not hide), kGlobalTree the LET tree, kLetLists and kLetForce its walk.
  enum class Stage {
    kRoot, kKeys, kSort, kReorder, kLink, kMoments, kGroups, kLetSelect, kGlobalLocal, kLists, kForce,
    kLetExchange, kGlobalTree, kLetLists, kLetForce, kWriteBack, kCount
  };

  // One tree's cells and what the walks read of them.
  struct Cells {
    DeviceTreeShape shape;
    DeviceVector<Moment> moments;
    DeviceVector<DS> spj_images;  // the cells' superparticles (index = cell), then received ones
    DeviceVector<WalkCell> walk_cells;
    DeviceVector<DeviceCellBoxes> search_boxes;  // search trees only
    DeviceVector<Boxd> extents;                  // OpeningRule::kRmax only: tight boxes of the entries
    std::size_t bytes() const {
      return shape.cells.bytes() + moments.bytes() + spj_images.bytes() + walk_cells.bytes() + search_boxes.bytes() +
             extents.bytes();
    }
  };

  using RankSummary = typename DeviceLongRangeLet<EPJ, SPJ>::RankSummary;

  // The global (merged) or LET tree's particles and superparticles, and where each came from
  // (for REUSE_LIST).
  struct GlobalParticles {
    DeviceVector<EPJ> staged;  // merged: the local EPJs, then the received ones; LET tree: received only
    KeyOrder ep_order, sp_order;  // index: where each came from (staged, received_spj)
    DeviceVector<EPJ> epj;  // key order
    DeviceVector<DJ> dj;    // only when EPJ's device form differs from EPJ
    DeviceVector<SPJ> received_spj, spj;
    std::size_t bytes() const {
      return staged.bytes() + ep_order.bytes() + sp_order.bytes() + epj.bytes() + dj.bytes() + received_spj.bytes() +
             spj.bytes();
    }
  };

  // The step: local tree, then (several ranks) the LET, the walks and forces, write-back.
  template <class FP, class Ep, class Sp>
  void calculate(DeviceParticleSystem<FP>& psys, Ep ep, Sp sp, const Comm* comm, InteractionListMode mode) {
    checkStream(psys);
    using LetOverlap = ResidentTreeOptions::LetOverlap;
    const bool several_ranks = comm && comm->size() > 1;
    const bool let_tree = several_ranks && options_.let_overlap == LetOverlap::kLetTree;
    const bool merged = several_ranks && !let_tree;
    const bool fused = mode == MAKE_LIST && options_.fused_walk;
    const StackLoan loan{walker_};  // ends with the step, whichever way it ends
    if (mode == REUSE_LIST) {
      requireReusable(psys, several_ranks);
      refresh(psys);
      lendReorderBuffer(psys);
      if (several_ranks) {
        if (let_.anyFar()) refreshFarRoots(*comm);  // a collective: only when some rank has far ranks
        startLet();
      }
    } else {
      buildLocalTree(psys, comm);
      lendReorderBuffer(psys);
      if (several_ranks) {
        planLet(*comm);
        // The local cells whose cube a peer's particles may share: walked with care (finishCells).
        if (let_tree) finishCells(local_, true, &let_.peerBoxes());
        startLet();
      }
    }
    if (merged && mode == REUSE_LIST && split_lists_) {
      // The entries that need nothing from other ranks while the payloads travel, then the rest.
      refreshGlobalTree(true);
      forceFromLists(ep, sp, group_lists_, global_, globalEpjImages(), false);
      marks_.mark(stream(), Stage::kForce);
      finishLet();
      refreshGlobalTree(false);
      forceFromLists(ep, sp, remote_group_lists_, global_, globalEpjImages(), true);
      marks_.mark(stream(), Stage::kLetForce);
    } else {
      if (merged) {  // everything received before the one walk
        finishLet();
        if (mode == REUSE_LIST) refreshGlobalTree(false);
        else buildGlobalTree(true);
      }
      // The groups against the walked tree (local, or the merged global tree); with a LET tree,
      // the payloads travel meanwhile.
      if (fused) {
        launchFusedWalk(ep, sp);  // its overflow check waits for it: after the LET's wait
      } else {
        if (mode != REUSE_LIST) buildLists();
        const bool split = merged && mode == MAKE_LIST_FOR_REUSE &&
                           options_.let_overlap == LetOverlap::kReuseSteps;
        if (split) splitListsByOrigin();  // for the reuse steps; evaluated the same way now
        forceFromLists(ep, sp, group_lists_, walked(), walkedEpjImages(), false);
        marks_.mark(stream(), Stage::kForce);
        if (split_lists_) {
          forceFromLists(ep, sp, remote_group_lists_, walked(), walkedEpjImages(), true);
          marks_.mark(stream(), Stage::kLetForce);
        }
      }
      if (let_tree) finishLet();
      if (fused) walker_.checkOverflow(policy_);
      if (let_tree) {  // then the groups against the tree of what arrived, adding to their forces
        if (mode == REUSE_LIST) {
          refreshGlobalTree(false);
        } else {
          buildGlobalTree(false);
          buildListsOver(global_, remote_group_lists_, "LET-tree interaction lists");
          marks_.mark(stream(), Stage::kLetLists);
        }
        forceFromLists(ep, sp, remote_group_lists_, global_, globalEpjImages(), true);
        marks_.mark(stream(), Stage::kLetForce);
      }
    }
    // Interactions: the fused kernel counted its own; lists are counted from their walks.
    const bool second_lists = let_tree || (merged && split_lists_);
    if (!fused) walker_.resetCounters(policy_);
    if (!fused) walker_.countInteractions(policy_, group_lists_);
    if (second_lists) walker_.countInteractions(policy_, remote_group_lists_);
    profile_.list_entries = static_cast<std::int64_t>(
        group_lists_.lists.j.size() + group_lists_.lists.s.size() +
        (second_lists ? remote_group_lists_.lists.j.size() + remote_group_lists_.lists.s.size() : 0));
    writeBack(psys);
    finishProfile();
    if (mode == MAKE_LIST_FOR_REUSE) {
      reuse_generation_ = psys.orderGeneration();
      reuse_size_ = psys.size();
      reuse_system_ = &psys;
      lists_kept_ = true;
    } else if (mode == MAKE_LIST) {
      lists_kept_ = false;
    }
  }

  // The particle system's reorder buffer (or in-place scratch) holds nothing from a build's
  // reorder (done by now) to the next one, which the stream orders after this step's walks: the
  // walks keep their stacks there meanwhile instead of in a buffer of their own (when they fit;
  // an in-place scratch grows to the largest walk's stacks, so that one buffer serves both).
  template <class FP>
  void lendReorderBuffer(DeviceParticleSystem<FP>& psys) {
    const auto [bytes_at, bytes] = psys.idleReorderScratch(walker_.largestStackInts() * sizeof(int));
    walker_.lendStack(static_cast<int*>(bytes_at), bytes / sizeof(int));
  }
  // Ends a step's loan of the reorder buffer.
  struct StackLoan {
    DeviceWalker<kWalkThreads>& walker;
    ~StackLoan() { walker.lendStack(nullptr, 0); }
  };

  template <class FP>
  void buildLocalTree(DeviceParticleSystem<FP>& psys, const Comm* comm) {
    const std::size_t n = psys.size();
    const bool several_ranks = comm && comm->size() > 1;
    require(n > 0 || several_ranks, "ResidentTreeLong", "no particles on the device (upload them first)");
    require(n < (std::size_t{1} << 31), "ResidentTreeLong", "{} particles exceed the 2^31 a resident tree indexes", n);
    profile_ = {};
    marks_.begin(stream());
    profile_.n_particles = static_cast<std::int64_t>(n);
    explainIfTooLarge(psys);
    global_built_ = false;
    let_tree_built_ = false;
    split_lists_ = false;

    // 1. Root cell: the host's rootCellAround of the device's bounding box (of every rank's
    //    particles), so that keys agree with the host's and across ranks.
    Boxd bounds = boundingBox(policy_, psys.data(), n, cub_);
    if (several_ranks) {
      bounds = comm->allreduceUnion(bounds);
      require(!bounds.isEmpty(), "ResidentTreeLong", "no rank holds a particle");
    }
    root_ = rootCellAround(bounds);
    criterion_ = OpeningCriterion(root_, theta_, options_.opening);
    marks_.mark(stream(), Stage::kRoot);

    // 2-3. Keys, the stable sort, and the particles into key order (in place), with their EPI and EPJ.
    sortIntoKeyOrder(policy_, root_, psys, order_, cub_, marks_,
                     [&](const auto& p, const std::uint32_t* index, FP* out) { gather(p, index, out); });

    // 4. Cells.
    linkCells(policy_, order_.keys.data(), n, nullptr, 0, n_leaf_limit_, local_.shape, level_scratch_, cub_);
    profile_.n_cells = static_cast<std::int64_t>(local_.shape.size());
    marks_.mark(stream(), Stage::kLink);

    // 5. Moments, superparticle images and the walk's view of each cell.
    computeCellMoments(local_, epj_.data(), static_cast<const SPJ*>(nullptr), 0, true);
    computeSearchBoxes(local_, epj_.data());
    marks_.mark(stream(), Stage::kMoments);

    // 6. Groups and their boxes.
    makeGroups(policy_, local_.shape, n_group_limit_, groups_, group_scratch_, group_flags_, cub_);
    if (options_.group_target > 0)
      splitGroups(policy_, groups_, options_.group_target, group_scratch_, level_scratch_, cub_);
    const auto ng = static_cast<std::uint32_t>(groups_.size());
    profile_.n_groups = ng;
    group_boxes_.resize(ng);
    constexpr bool kSymmetry = kSearch == LongSearchMode::SYMMETRY;  // the groups' search spheres too
    if constexpr (kSymmetry) group_search_boxes_.resize(ng);
    if (ng > 0) {
      kernel::groupBoxes<<<blocksFor(std::size_t{ng} * 32, 128), 128, 0, stream()>>>(
          groups_.data(), ng, epi_.data(), group_boxes_.data(), kSymmetry ? group_search_boxes_.data() : nullptr);
      check(cudaGetLastError(), "groupBoxes kernel launch");
    }
    marks_.mark(stream(), Stage::kGroups);
    lists_kept_ = false;
  }

  cudaStream_t stream() const { return policy_.stream; }

  template <class FP>
  void checkStream(const DeviceParticleSystem<FP>& psys) const {
    require(psys.stream() == stream(), "ResidentTreeLong",
            "the particle system and the tree must use the same stream (give both the same grove::Gpu policy)");
  }

  template <class FP>
  void requireReusable(const DeviceParticleSystem<FP>& psys, bool several_ranks) const {
    require(lists_kept_, "ResidentTreeLong", "REUSE_LIST without a MAKE_LIST_FOR_REUSE step before it");
    const bool had_ranks = global_built_ || let_tree_built_;
    require(several_ranks == had_ranks, "ResidentTreeLong",
            "REUSE_LIST {} a DomainInfo of several ranks, the MAKE_LIST_FOR_REUSE step {}",
            several_ranks ? "with" : "without", had_ranks ? "with one" : "without");
    require(reuse_system_ == &psys, "ResidentTreeLong",
            "REUSE_LIST with another particle system than the MAKE_LIST_FOR_REUSE step's");
    require(psys.orderGeneration() == reuse_generation_ && psys.size() == reuse_size_, "ResidentTreeLong",
            "REUSE_LIST needs the particles of the MAKE_LIST_FOR_REUSE step, in its order ({} then, {} now; "
            "uploaded or reordered since: {})",
            reuse_size_, psys.size(), psys.orderGeneration() != reuse_generation_ ? "yes" : "no");
  }

  // A device-memory estimate of one build of psys's particles against what the device has free,
  // so that a run that cannot fit says so with the sizes instead of failing in the middle of a
  // step. Counts the particle system's reorder scratch (what of it is allocated already is held);
  // an in-place particle system lends the sort its second key and index buffers.
  template <class FP>
  void explainIfTooLarge(const DeviceParticleSystem<FP>& psys) const {
    const std::size_t n = psys.size();
    const bool in_place = psys.reorderMemory() == ReorderMemory::kInPlace;
    const std::size_t key_buffers = in_place ? 1 : 2;
    const std::size_t per_particle = key_buffers * (sizeof(MortonKey) + 4) + sizeof(EPI) + sizeof(EPJ) + sizeof(Force) +
                                     psys.reorderBytesPerParticle() + (std::is_same_v<DI, EPI> ? 0 : sizeof(DI)) +
                                     (std::is_same_v<DJ, EPJ> ? 0 : sizeof(DJ)) +
                                     (sizeof(TreeCell) + sizeof(Moment) + sizeof(DS) + sizeof(WalkCell) +
                                      (kSearches ? sizeof(DeviceCellBoxes) : 0)) / 2;
    const std::size_t needed = n * per_particle;
    std::size_t free_bytes = 0, total_bytes = 0;
    check(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo");
    const std::size_t held = deviceBytes() + psys.reorderScratchBytes();
    require(needed <= free_bytes + held, "ResidentTreeLong",
            "{} particles need about {:.2f} GB of device memory for the tree ({} bytes per particle: keys, order, "
            "EPI, EPJ, Force, the particles' reorder scratch, cells and moments), but the device has {:.2f} GB free "
            "of {:.2f} GB ({:.2f} GB held by this tree and the reorder scratch){}",
            n, needed * 1e-9, per_particle, free_bytes * 1e-9, total_bytes * 1e-9, held * 1e-9,
            !in_place && sizeof(FP) > 16 ? "; DeviceParticleSystem::setReorderMemory(ReorderMemory::kInPlace) needs less"
                                         : "");
  }

  template <class FP>
  void gather(const DeviceParticleSystem<FP>& psys, const std::uint32_t* index, FP* out) {
    const std::size_t n = psys.size();
    epi_.resize(n);
    epj_.resize(n);
    if constexpr (!std::is_same_v<DI, EPI>) di_.resize(n);
    if constexpr (!std::is_same_v<DJ, EPJ>) dj_.resize(n);
    if (n == 0) return;  // a rank without particles (several ranks)
    kernel::gatherParticles<<<blocksFor(n, 256), 256, 0, stream()>>>(psys.data(), index, n, out, epi_.data(),
                                                                       epj_.data(), diPtr(), djPtr());
    check(cudaGetLastError(), "gatherParticles kernel launch");
  }

  template <class FP>
  void refresh(const DeviceParticleSystem<FP>& psys) {
    profile_ = {};
    marks_.begin(stream());
    profile_.n_particles = static_cast<std::int64_t>(psys.size());
    profile_.n_cells = static_cast<std::int64_t>(local_.shape.size());
    profile_.n_groups = static_cast<std::int64_t>(groups_.size());
    gather(psys, nullptr, static_cast<FP*>(nullptr));
    marks_.mark(stream(), Stage::kReorder);
    computeCellMoments(local_, epj_.data(), static_cast<const SPJ*>(nullptr), 0, false);
    marks_.mark(stream(), Stage::kMoments);
  }

  // ---- several ranks ------------------------------------------------------------------------------

  // Whether far ranks are judged as a whole (POINT_TO_POINT_FAST): not for search trees, whose
  // particles within search reach must travel whatever the criterion says.
  bool letFast() const { return !kSearches && options_.let_mode == LetExchangeMode::POINT_TO_POINT_FAST; }

  // This rank's summary for the others: its particles' box, its root cell's centre and
  // superparticle (waits for the local moments).
  RankSummary rootSummary(const Boxd& box) const {
    RankSummary mine;
    mine.box = box;
    mine.has = epj_.empty() ? 0 : 1;
    if (mine.has) {
      const Moment root = local_.moments.elementToHost(0, stream());
      mine.root_pos = positionOf(root);
      mine.root.copyFromMoment(root);
    }
    return mine;
  }

  // Several ranks, on a step that builds: who sends whom a LET (let/long_range_let_gpu.cuh),
  // this rank's selections for its targets on the device (selectLet), and their sizes.
  void planLet(const Comm& comm) {
    // The boxes: of the EPJs, as the host's planLet; a search tree's reach is of the EPIs, as the
    // host's planSearchLet (empty when a rank has none); symmetry search trees: every rank's box of
    // its i-particles' search spheres too.
    const Boxd my_box = kSearches ? boundingBox(policy_, epi_.data(), epi_.size(), cub_)
                                  : boundingBox(policy_, epj_.data(), epj_.size(), cub_);
    const RankSummary mine = rootSummary(my_box);
    std::optional<Boxd> reach;
    if constexpr (kSearch == LongSearchMode::SYMMETRY)
      reach = boundingBox(policy_, epi_.data(), epi_.size(), cub_, search::SearchBoxOf{});
    let_.plan(comm, policy_, mine, reach, criterion_, letFast(), options_.transport,
              [&](const std::vector<Boxd>& boxes, const std::vector<Boxd>& reaches) -> const DeviceIndexLists& {
                selectLet(boxes, reaches);
                return let_lists_;
              });
    profile_.let_peers = static_cast<std::int64_t>(let_.peers());
  }

  // REUSE_LIST with far ranks: their fresh root superparticles (the kept plan's far ranks).
  void refreshFarRoots(const Comm& comm) {
    let_.refreshFarRoots(comm, rootSummary(Boxd::empty()));
    profile_.let_peers = static_cast<std::int64_t>(let_.peers());
  }

  // Packs the selections' current payloads and posts their exchange (planLet done): the received
  // EPJs go after the local ones (merged) or alone (LET tree), the received SPJs then the far
  // ranks' roots apart. The device is free for other work until finishLet().
  void startLet() {
    GlobalParticles& g = global_particles_;
    const bool merged = options_.let_overlap != ResidentTreeOptions::LetOverlap::kLetTree;
    let_.start(policy_, epj_.data(), merged ? epj_.size() : 0, local_.moments.data(), let_lists_, g.staged,
               g.received_spj, "ResidentTreeLong");
    profile_.let_ep_sent = static_cast<std::int64_t>(let_.sentEp());
    profile_.let_sp_sent = static_cast<std::int64_t>(let_.sentSp());
    profile_.let_ep_received = static_cast<std::int64_t>(let_.receivedEp());
    profile_.let_sp_received = static_cast<std::int64_t>(g.received_spj.size());
    marks_.mark(stream(), Stage::kLetSelect);
  }

  // Waits for the payloads: later work on the stream sees them.
  void finishLet() {
    let_.finish(policy_);
    marks_.mark(stream(), Stage::kLetExchange);
  }

  // The merged global tree (with_local), as the host's buildGlobalTree makes it: the received
  // EPJs sorted by key and merged after local EPJs of the same key (a stable sort of
  // local-then-received, the local keys those of the local tree), the received SPJs sorted by
  // key; cells linked from both. Without local particles: the LET tree, of what arrived alone.
  void buildGlobalTree(bool with_local) {
    GlobalParticles& g = global_particles_;
    const std::size_t n_local = with_local ? epj_.size() : 0, n_ep = g.staged.size(), n_sp = g.received_spj.size();
    sortIntoKeyOrder(policy_, root_, g.staged.data(), n_ep, g.ep_order, cub_, order_.keys.data(), n_local);
    sortIntoKeyOrder(policy_, root_, g.received_spj.data(), n_sp, g.sp_order, cub_);
    gatherGlobalParticles();
    linkCells(policy_, g.ep_order.keys.data(), n_ep, g.sp_order.keys.data(), n_sp, n_leaf_limit_, global_.shape, level_scratch_,
              cub_);
    // The LET tree's cells whose cube this rank's particles may share are walked with care.
    computeCellMoments(global_, g.epj.data(), g.spj.data(), n_sp, true, with_local ? nullptr : &let_.myBox());
    computeSearchBoxes(global_, g.epj.data());
    profile_.n_global_cells = static_cast<std::int64_t>(global_.shape.size());
    (with_local ? global_built_ : let_tree_built_) = true;
    marks_.mark(stream(), Stage::kGlobalTree);
  }

  // REUSE_LIST: the fresh payloads (finishLet done) into the kept global or LET tree's order.
  // local_only (merged tree, before the payloads are in): only the local EPJs are gathered; the
  // moments of cells holding received particles are then stale, and unused until the next call.
  void refreshGlobalTree(bool local_only) {
    gatherGlobalParticles(local_only);
    computeCellMoments(global_, global_particles_.epj.data(), global_particles_.spj.data(),
                       global_particles_.spj.size(), false);
    profile_.n_global_cells = static_cast<std::int64_t>(global_.shape.size());
    marks_.mark(stream(), local_only ? Stage::kGlobalLocal : Stage::kGlobalTree);
  }

  // kReuseSteps, on a MAKE_LIST_FOR_REUSE step of the merged global tree: each group's lists are
  // split into the entries that need nothing from other ranks (this rank's EPJs, cells of its
  // particles alone), kept in group_lists_, and the rest, in remote_group_lists_, each side in
  // the list's order. A REUSE_LIST step evaluates the first while the payloads travel.
  void splitListsByOrigin() {
    gpu::splitListsByOrigin(policy_, cub_, global_.shape, global_particles_.ep_order.index.data(),
                            static_cast<std::uint32_t>(epj_.size()), static_cast<std::uint32_t>(groups_.size()),
                            local_only_cells_, group_lists_.lists, remote_group_lists_.lists);
    describeGroupLists(policy_, cub_, groups_, kListChunk, group_lists_);
    describeGroupLists(policy_, cub_, groups_, kListChunk, remote_group_lists_);
    split_lists_ = true;
  }

  // The groups' lists over `tree` and the list kernel's tasks for them.
  void buildListsOver(const Cells& tree, DeviceGroupLists& out, const char* what) {
    walker_.writeLists(policy_, cub_, walkedCells(tree), group_boxes_.data(), groupSearchBoxes(),
                       static_cast<std::uint32_t>(groups_.size()), true, what, out.lists);
    describeGroupLists(policy_, cub_, groups_, kListChunk, out);
  }

  // The list kernel over one set of lists into force_ (accumulate: adding to the forces there).
  template <class Ep, class Sp>
  void forceFromLists(Ep ep, Sp sp, const DeviceGroupLists& gl, const Cells& tree, const DJ* epj_images, bool accumulate) {
    require(!gl.walks.empty() || groups_.empty(), "ResidentTreeLong", "no interaction lists were built");
    force_.resize(epi_.size());
    evaluateGroupLists<kListThreads, kListIPerThread>(policy_, gl, epiImages(), epj_images, tree.spj_images.data(), ep,
                                                      sp, force_.data(), accumulate);
  }

  // The global (or LET) tree's particles from the staged ones in key order; local_only: those
  // from this rank only (source below the local count), the received ones left as they were.
  void gatherGlobalParticles(bool local_only = false) {
    GlobalParticles& g = global_particles_;
    const std::size_t n_ep = g.staged.size(), n_sp = g.received_spj.size();
    g.epj.resize(n_ep);
    if constexpr (!std::is_same_v<DJ, EPJ>) g.dj.resize(n_ep);
    g.spj.resize(n_sp);
    const auto source_limit = static_cast<std::uint32_t>(local_only ? epj_.size() : n_ep);
    if (n_ep > 0) {
      DJ* dj = nullptr;
      if constexpr (!std::is_same_v<DJ, EPJ>) dj = g.dj.data();
      kernel::gatherGlobalParticles<<<blocksFor(n_ep, 256), 256, 0, stream()>>>(
          g.staged.data(), g.ep_order.index.data(), n_ep, source_limit, g.epj.data(), dj);
      check(cudaGetLastError(), "gatherGlobalParticles kernel launch");
    }
    if (local_only) return;
    if (n_sp > 0) {
      kernel::gatherSelected<<<blocksFor(n_sp, 256), 256, 0, stream()>>>(
          g.received_spj.data(), g.sp_order.index.data(), n_sp, g.spj.data());
      check(cudaGetLastError(), "gatherSelected kernel launch");
    }
  }

  // A tree's moments, its superparticle images (the cells' own, index = cell, then the n_sp
  // received ones in leaves, index = cells + k) and, for walks, each cell's WalkCell.
  void computeCellMoments(Cells& tree, const EPJ* epj, const SPJ* spj, std::size_t n_sp, bool for_walks,
                          const DeviceVector<Boxd>* cut_boxes = nullptr) {
    const std::size_t nc = tree.shape.size();
    tree.moments.resize(nc);
    tree.spj_images.resize(nc + n_sp);
    computeMoments<Moment, EPJ, SPJ>(policy_, tree.shape, epj, spj, tree.moments.data());
    if (for_walks) tree.walk_cells.resize(nc);
    if (for_walks && options_.opening == OpeningRule::kRmax) computeExtents(tree, epj, spj);
    finishCells(tree, for_walks, cut_boxes);
    if (n_sp > 0) {
      kernel::superparticleImages<<<blocksFor(n_sp, 256), 256, 0, stream()>>>(spj, n_sp, tree.spj_images.data() + nc);
      check(cudaGetLastError(), "superparticleImages kernel launch");
    }
  }

  // The cells' superparticle images and (for walks) their walk cells, the cells whose cube meets
  // one of cut_boxes opened at split_cell_theta times theta, with Nakasato's offset
  // (walk/walk_gpu.cuh).
  void finishCells(Cells& tree, bool for_walks, const DeviceVector<Boxd>* cut_boxes) {
    const std::size_t nc = tree.shape.size();
    const bool cut = cut_boxes && options_.split_cell_theta > 0.0 && !cut_boxes->empty();
    kernel::finishCells<Moment, SPJ, DS><<<blocksFor(nc, 256), 256, 0, stream()>>>(
        tree.shape.cells.data(), tree.moments.data(), static_cast<std::uint32_t>(nc), root_, criterion_,
        for_walks ? tree.walk_cells.data() : nullptr, tree.spj_images.data(),
        cut ? cut_boxes->data() : nullptr, cut ? static_cast<int>(cut_boxes->size()) : 0,
        cut ? 1.0 / options_.split_cell_theta : 1.0,
        options_.opening == OpeningRule::kRmax && for_walks ? tree.extents.data() : nullptr);
    check(cudaGetLastError(), "finishCells kernel launch");
  }

  // OpeningRule::kRmax: each cell's tight box of its entries, bottom-up (the host's computeCellExtents).
  void computeExtents(Cells& tree, const EPJ* epj, const SPJ* spj) {
    tree.extents.resize(tree.shape.size());
    for (int level = tree.shape.levels() - 1; level >= 0; --level) {
      const std::uint32_t begin = tree.shape.level_begin[static_cast<std::size_t>(level)];
      const std::uint32_t n = tree.shape.level_begin[static_cast<std::size_t>(level) + 1] - begin;
      if (n == 0) continue;
      kernel::cellExtents<EPJ, SPJ><<<blocksFor(n, 128), 128, 0, stream()>>>(tree.shape.cells.data(), begin, n, epj,
                                                                             spj, tree.extents.data());
      check(cudaGetLastError(), "cellExtents kernel launch");
    }
  }

  // Search trees: each cell's box of positions and of its particles' search spheres.
  void computeSearchBoxes(Cells& tree, const EPJ* epj) {
    if constexpr (kSearches) computeCellSearchBoxes<SearchMode::SCATTER>(policy_, tree.shape, epj, 0.0, tree.search_boxes);
  }

  // What the walks read of `tree`.
  WalkedCells walkedCells(const Cells& tree) const {
    return {tree.shape.cells.data(), tree.walk_cells.data(), static_cast<std::uint32_t>(tree.shape.size()),
            kSearches ? tree.search_boxes.data() : nullptr};
  }
  const Boxd* groupSearchBoxes() const {
    return kSearch == LongSearchMode::SYMMETRY ? group_search_boxes_.data() : nullptr;
  }

  void finishProfile() {
    using P = ResidentProfile;
    // Stage's fields, in its order: the local-part and LET-tree stages add to the ones they share.
    static constexpr typename StageMarks<Stage>::template Fields<P> kFields = {
        &P::root,        &P::keys,  &P::sort,  &P::reorder,      &P::link,        &P::moments, &P::groups, &P::let_select,
        &P::global_tree, &P::lists, &P::force, &P::let_exchange, &P::global_tree, &P::lists,   &P::force,  &P::write_back};
    profile_.total = marks_.collectInto(profile_, kFields);
    std::tie(profile_.interactions_ep, profile_.interactions_sp) = walker_.interactions(policy_);
    profile_.device_bytes = static_cast<std::int64_t>(deviceBytes());
  }

  const DI* epiImages() const {
    if constexpr (std::is_same_v<DI, EPI>) return epi_.data();
    else return di_.data();
  }
  // What the groups walk: the global tree after a multi-rank build, else the local tree.
  const Cells& walked() const { return global_built_ ? global_ : local_; }
  const DJ* walkedEpjImages() const { return global_built_ ? globalEpjImages() : epjImages(); }
  const DJ* epjImages() const {
    if constexpr (std::is_same_v<DJ, EPJ>) return epj_.data();
    else return dj_.data();
  }
  const DJ* globalEpjImages() const {
    if constexpr (std::is_same_v<DJ, EPJ>) return global_particles_.epj.data();
    else return global_particles_.dj.data();
  }
  DI* diPtr() {
    if constexpr (std::is_same_v<DI, EPI>) return nullptr;
    else return di_.data();
  }
  DJ* djPtr() {
    if constexpr (std::is_same_v<DJ, EPJ>) return nullptr;
    else return dj_.data();
  }

  double theta_;
  int n_leaf_limit_, n_group_limit_;
  Gpu policy_;
  ResidentTreeOptions options_;
  RootCell root_;
  OpeningCriterion criterion_;
  CubScratch cub_;
  KeyOrder order_;  // the local particles' keys and permutation
  DeviceVector<std::uint32_t> level_scratch_;
  DeviceVector<EPI> epi_;
  DeviceVector<EPJ> epj_;
  DeviceVector<DI> di_;  // only when EPI's device form differs from EPI
  DeviceVector<DJ> dj_;
  Cells local_, global_;  // the local tree; the global tree (several ranks)
  GlobalParticles global_particles_;
  DeviceLongRangeLet<EPJ, SPJ> let_;  // several ranks: who exchanges with whom, the payloads
  bool global_built_ = false;    // the merged global tree of the last multi-rank step
  bool let_tree_built_ = false;  // the LET tree of the last multi-rank step (not merged)
  DeviceVector<std::uint64_t> groups_, group_scratch_;
  DeviceVector<std::uint8_t> group_flags_;
  DeviceVector<Boxd> group_boxes_;
  DeviceVector<Force> force_;
  DeviceWalker<kWalkThreads> walker_;  // the walks' stacks, counters and launch shape
  DeviceGroupLists group_lists_;      // the groups' lists over the walked tree (local, or global when merged)
  // Several ranks: the groups' lists over the LET tree (kLetTree), or, once split by origin
  // (kReuseSteps), the entries of the global tree's lists that need other ranks' data (the others
  // stay in group_lists_).
  DeviceGroupLists remote_group_lists_;
  bool split_lists_ = false;
  DeviceVector<std::uint8_t> local_only_cells_;  // global tree cells holding this rank's particles alone
  DeviceIndexLists let_lists_;        // the LET selections, one target per peer
  DeviceVector<Boxd> let_boxes_, let_search_boxes_;
  DeviceVector<Boxd> group_search_boxes_;  // symmetry search trees: the groups' search spheres
  bool lists_kept_ = false;
  std::uint64_t reuse_generation_ = 0;
  std::size_t reuse_size_ = 0;
  const void* reuse_system_ = nullptr;
  StageMarks<Stage> marks_;
  ResidentProfile profile_;
};

/// FDPS's spelling (TreeForForceLong's names): ResidentTreeForForceLong<Force, EPI, EPJ> holds
/// Monopole, Quadrupole, MonopoleWithScatterSearch, ... The search trees take the ordinary
/// moments: the tree keeps its own search boxes (the CPU's MomentMonopoleScatter boxes are
/// host-only).
template <class Force, class EPI, class EPJ>
struct ResidentTreeForForceLong {
  using Monopole = ResidentTreeLong<Force, EPI, EPJ>;  ///< monopole moments (DeviceMonopole cells)
  /// quadrupole moments (DeviceQuadrupole cells)
  using Quadrupole = ResidentTreeLong<Force, EPI, EPJ, MomentQuadrupole, SPJQuadrupole>;
  /// a user moment and superparticle (grove/tree/moments.hpp's contracts)
  template <class Moment, class SPJ>
  using WithMoment = ResidentTreeLong<Force, EPI, EPJ, Moment, SPJ>;
  /// FDPS's SEARCH_MODE_LONG_SCATTER, monopole
  using MonopoleWithScatterSearch =
      ResidentTreeLong<Force, EPI, EPJ, MomentMonopole, SPJMonopole, LongSearchMode::SCATTER>;
  /// FDPS's SEARCH_MODE_LONG_SCATTER, quadrupole
  using QuadrupoleWithScatterSearch =
      ResidentTreeLong<Force, EPI, EPJ, MomentQuadrupole, SPJQuadrupole, LongSearchMode::SCATTER>;
  /// FDPS's SEARCH_MODE_LONG_SYMMETRY, monopole
  using MonopoleWithSymmetrySearch =
      ResidentTreeLong<Force, EPI, EPJ, MomentMonopole, SPJMonopole, LongSearchMode::SYMMETRY>;
  /// FDPS's SEARCH_MODE_LONG_SYMMETRY, quadrupole
  using QuadrupoleWithSymmetrySearch =
      ResidentTreeLong<Force, EPI, EPJ, MomentQuadrupole, SPJQuadrupole, LongSearchMode::SYMMETRY>;
};

}  // namespace grove::gpu
