#pragma once
/// @file
/// TreeForForceLong<Force, EPI, EPJ>::{Monopole, Quadrupole, MonopoleGeometricCenter,
/// DipoleGeometricCenter, QuadrupoleGeometricCenter, MonopoleWithCutoff} and
/// TreeForForceLong<Force, EPI, EPJ, Moment, SPJ>::WithCutoff: long-range forces (gravity, Coulomb) by
/// Barnes-Hut trees with group walks, across ranks through local essential trees.
///
///     grove::TreeForForceLong<Force, EPI, EPJ>::Monopole tree(n_hint, theta, n_leaf, n_group);
///     tree.calcForceAllAndWriteBack(kernel_ep_ep, kernel_ep_sp, psys, dinfo);
///     tree.calcForceAllAndWriteBackMultiWalkIndex(dispatch, retrieve, tag_max, psys, dinfo,
///                                                 n_walk_limit, true, grove::MAKE_LIST_FOR_REUSE);
///     tree.setParticleOrder(grove::ParticleOrder::TREE_ORDER);  // optional: core/particle_order.hpp
///
/// One call runs the stages of DESIGN.md: root cell, keys, sort, reorder, link, local moments,
/// LET, global tree and moments, groups, walk + kernel, write back. CPU kernels have FDPS's form
///     void(const EPI* epi, int n_i, const EPJ* epj, int n_j, Force* force)   (and SPJ for ep-sp)
/// and are called once per group from OpenMP threads; they must add to force[0 .. n_i).
/// Multiwalk hooks (dispatch/retrieve) have FDPS 7.1's signatures; see calcForceAllMultiWalk.
///
/// The walk is a policy (force/long_range_walks.hpp), the class's last template argument; the
/// stages around it are the same for all three.
///
/// Cutoff trees (CutoffWalk, FDPS's SEARCH_MODE_LONG_CUTOFF) are for forces that vanish beyond
/// r_cut = EPJ::getRSearch(): the walks skip cells out of reach (walk/cutoff.hpp), the LET is
/// sized by r_cut and carries periodic images as shifted copies (let/cutoff_let.hpp), and the
/// kernel applies the cutoff itself. doc/tree.md has the semantics and limits.
///
/// Search trees (SearchWalk, FDPS's SEARCH_MODE_LONG_SCATTER / LONG_SYMMETRY, optionally with
/// CALC_DISTANCE_TYPE_NEAREST_*) open every cell that may hold a particle within search reach of a
/// group, so such particles reach the ep-ep kernel individually (walk/long_search.hpp,
/// let/search_let.hpp); getNeighborListOneParticle lists them. doc/tree.md "Search trees".
///
/// list_mode: MAKE_LIST builds everything and keeps nothing; MAKE_LIST_FOR_REUSE also keeps the
/// tree shape, LET plan, groups and interaction lists; REUSE_LIST then skips the root, keys,
/// sort, linking, LET decision, groups and walk: it refreshes EPI/EPJ from the particles (same
/// order), recomputes moments, resends LET payloads along the kept plan and computes forces with
/// the kept lists. Particles must not be added, removed, reordered or exchanged in between.
#include <omp.h>

#include <algorithm>
#include <span>
#include <type_traits>
#include <vector>

#include "grove/comm/comm.hpp"
#include "grove/core/error.hpp"
#include "grove/core/list_mode.hpp"
#include "grove/core/particle_order.hpp"
#include "grove/domain/domain_info.hpp"
#include "grove/force/long_range_walks.hpp"
#include "grove/let/cutoff_let.hpp"
#include "grove/let/local_essential_tree.hpp"
#include "grove/let/search_let.hpp"
#include "grove/tree/contracts.hpp"
#include "grove/tree/groups.hpp"
#include "grove/tree/merge_sorted.hpp"
#include "grove/tree/moment_pass.hpp"
#include "grove/tree/moments.hpp"
#include "grove/tree/morton.hpp"
#include "grove/tree/profile.hpp"
#include "grove/tree/reuse_guard.hpp"
#include "grove/tree/search_moments.hpp"
#include "grove/tree/sorted_particles.hpp"
#include "grove/tree/staged_particles.hpp"
#include "grove/tree/tree_cells.hpp"
#include "grove/tree/tree_statistics.hpp"
#include "grove/walk/cutoff.hpp"
#include "grove/walk/group_pass.hpp"
#include "grove/walk/interaction_lists.hpp"
#include "grove/walk/long_search.hpp"
#include "grove/walk/multiwalk_driver.hpp"
#include "grove/walk/multiwalk_calls.hpp"
#include "grove/walk/opening_criterion.hpp"

namespace grove {

namespace detail {

// A tree's particles in key order with their cells and moments. all_spj holds every cell's
// superparticle (index = cell) followed by the received superparticles in leaves (index =
// cells + i): interaction lists index this one array.
template <class EPJ, class SPJ, class Moment>
struct BuiltTree {
  using Epj = EPJ;
  using Spj = SPJ;
  std::vector<MortonKey> ep_keys, sp_keys;
  LargeVector<EPJ> epj;
  std::vector<SPJ> spj;  // received superparticles, key order
  TreeShape shape;
  std::vector<Moment> moments;
  std::vector<SPJ> all_spj;
  std::vector<Vec3d> cell_pos;
  // The walk policy's per-cell data (force/long_range_walks.hpp), empty for the others:
  std::vector<Boxd> cell_extent;        // CutoffWalk: bounds of each cell's entries (walk/cutoff.hpp)
  std::vector<CellBoxes> search_boxes;  // SearchWalk: positions and search spheres (walk/long_search.hpp)
  // Opening rules other than FDPS's (OpeningCriterion::perCell): each cell's squared opening
  // distance, and the tight boxes of its entries they are made from; empty for FDPS's.
  std::vector<double> cell_open_sq;
  std::vector<Boxd> open_extent;

  // The per-cell opening distances of the criterion's rule (after the moments; cleared for FDPS's).
  void computeOpeningDistances(const RootCell& root, const OpeningCriterion& criterion) {
    if (!criterion.perCell()) {
      cell_open_sq.clear();
      return;
    }
    if (criterion.rule() == OpeningRule::kRmax)
      computeCellExtents(shape, std::span<const EPJ>(epj), std::span<const SPJ>(spj), open_extent);
    else open_extent.clear();
    cellOpeningSqOf(shape, root, std::span<const Vec3d>(cell_pos), std::span<const Boxd>(open_extent), criterion,
                    cell_open_sq);
  }

  std::size_t cells() const { return shape.cells.size(); }
  // for_walks: also the expansion centres the walks and the LET decision read (a REUSE_LIST step
  // makes neither, and skips writing them).
  void computeMomentsAndSuperParticles(bool for_walks = true) {
    const std::size_t nc = shape.cells.size();
    all_spj.resize(nc + spj.size());
    if (for_walks) cell_pos.resize(nc);
    computeMoments<Moment, EPJ, SPJ>(Cpu{}, shape, epj, spj, moments, [&](std::size_t c, const Moment& m) {
      all_spj[c].copyFromMoment(m);
      if (for_walks) cell_pos[c] = positionOf(m);
    });
    std::copy(spj.begin(), spj.end(), all_spj.begin() + static_cast<std::ptrdiff_t>(nc));
  }
};

// What a MAKE_LIST_FOR_REUSE step keeps besides the lists. Plan: the walk policy's LET plan.
template <class Plan>
struct ReuseRecord {
  ReuseGuard guard;
  Plan let_plan;
  std::vector<std::uint32_t> global_ep_source, global_sp_source;  // replay of the global merge
};

}  // namespace detail

/// The long-range tree (spelled through TreeForForceLong): Barnes-Hut with group walks, the
/// multipole Moment of each cell sent as an SPJ, across ranks through local essential trees.
/// The force calls taking a DomainInfo are collective over its communicator; misuse throws
/// grove::Error. The particle, moment and SPJ types are checked at compile time.
/// Walk: the walk policy (force/long_range_walks.hpp). OpeningAngleWalk: plain Barnes-Hut.
/// CutoffWalk: FDPS's SEARCH_MODE_LONG_CUTOFF (walk/cutoff.hpp, let/cutoff_let.hpp); the spellings are
/// TreeForForceLong<Force, EPI, EPJ>::MonopoleWithCutoff and TreeForForceLong<..., Moment, SPJ>::WithCutoff.
/// SearchWalk<LongSearch>: FDPS's SEARCH_MODE_LONG_SCATTER / LONG_SYMMETRY and CALC_DISTANCE_TYPE_NEAREST_*
/// (walk/long_search.hpp, let/search_let.hpp); spelled TreeForForceLong<...>::MonopoleWithScatterSearch etc.
template <class Force, class EPI, class EPJ, class Moment, class SPJ, class Walk = OpeningAngleWalk>
class TreeForForceLongWith : public MultiWalkCalls<TreeForForceLongWith<Force, EPI, EPJ, Moment, SPJ, Walk>>,
                             public ParticleOrderOption,
                             public TreeStatistics,
                             public StagedInput<EPI, EPJ> {
  friend class MultiWalkCalls<TreeForForceLongWith>;
  static constexpr bool kTypesValid = checkLongRangeTypeContracts<Force, EPI, EPJ>();
  // The moment contract is only worth checking once the EPJ contract holds (moments read it).
  static_assert(!kTypesValid || MomentType<Moment, EPJ>,
                "grove: the moment type does not meet the moment contract (see grove/tree/moments.hpp)");
  static_assert(SuperParticleType<SPJ, Moment>,
                "grove: the SPJ type does not meet the superparticle contract (see grove/tree/moments.hpp)");
  static_assert(Walk::template checkTypes<EPI, EPJ>());  // the walk's own needs (getRSearch, ...)

 public:
  using ForceType = Force;    ///< the force (result) type
  using EpiType = EPI;        ///< the i-particle (receiver) type
  using EpjType = EPJ;        ///< the j-particle (source) type
  using SpjType = SPJ;        ///< the superparticle type (a cell's moment as a source)
  using MomentType = Moment;  ///< the cell moment type

  /// Not usable until initialize() is called.
  TreeForForceLongWith() = default;
  /// Same as initialize(n_hint, theta, n_leaf_limit, n_group_limit). FDPS defaults: theta 0.7,
  /// leaves of 8, groups of 64.
  explicit TreeForForceLongWith(std::size_t n_hint, double theta = 0.7, int n_leaf_limit = 8,
                                int n_group_limit = 64) {
    initialize(n_hint, theta, n_leaf_limit, n_group_limit);
  }

  /// Sets the opening angle theta (0 opens every cell: direct summation), the leaf size
  /// (at most n_leaf_limit particles per leaf) and the group size (at most n_group_limit
  /// i-particles share an interaction list), reserves room for n_hint particles and forgets
  /// kept lists. Needed before the first force call; not collective. Throws grove::Error when
  /// theta is negative or not finite, or a limit is not positive.
  void initialize(std::size_t n_hint, double theta = 0.7, int n_leaf_limit = 8, int n_group_limit = 64) {
    require(theta >= 0.0 && isFiniteValue(theta), "TreeForForceLong::initialize", "theta must be >= 0, got {}", theta);
    require(n_leaf_limit > 0, "TreeForForceLong::initialize", "n_leaf_limit must be positive, got {}", n_leaf_limit);
    require(n_group_limit > 0, "TreeForForceLong::initialize", "n_group_limit must be positive, got {}",
            n_group_limit);
    theta_ = theta;
    n_leaf_limit_ = n_leaf_limit;
    n_group_limit_ = n_group_limit;
    sorted_.epi.reserve(n_hint);
    reuse_.guard.forget();
    initialized_ = true;
  }

  /// How the next force calls exchange LETs (let/let_exchange_mode.hpp); POINT_TO_POINT unless
  /// set.
  void setLetExchangeMode(LetExchangeMode mode) { let_mode_ = mode; }
  /// Same as setLetExchangeMode() (FDPS's spelling).
  void setExchangeLETMode(LetExchangeMode mode) { let_mode_ = mode; }  // FDPS's spelling
  /// The LET exchange mode in use.
  LetExchangeMode getLetExchangeMode() const { return let_mode_; }
  /// The opening test of the next force calls (walk/opening_criterion.hpp): OpeningRule::kFdps
  /// (FDPS's, the default), kNakasato, or kRmax (r_max / theta: each cell's tight extent from its
  /// expansion centre; less error per interaction, doc/performance.md "issue 31"). The resident
  /// tree's ResidentTreeOptions::opening has the same rules. Plain Barnes-Hut trees only: cutoff
  /// and search trees throw grove::Error for any rule but kFdps. Forgets kept lists.
  void setOpeningRule(OpeningRule rule) {
    require(rule == OpeningRule::kFdps || std::is_same_v<Walk, OpeningAngleWalk>, "TreeForForceLong::setOpeningRule",
            "the opening rule {} is for plain long-range trees only (cutoff and search trees use FDPS's)",
            openingRuleName(rule));
    opening_rule_ = rule;
    reuse_.guard.forget();
  }
  /// The opening test in use (setOpeningRule).
  OpeningRule getOpeningRule() const { return opening_rule_; }
  /// The opening angle given to initialize().
  double getTheta() const { return theta_; }
  /// The leaf size given to initialize().
  int getNLeafLimit() const { return n_leaf_limit_; }
  /// The group size given to initialize().
  int getNGroupLimit() const { return n_group_limit_; }

  // ---- CPU kernels ------------------------------------------------------------------------------
  /// Forces on psys's particles, written back with FP::copyFromForce. With clear = false the
  /// kernels add to the forces of the previous call (same particles, any order). Collective
  /// over dinfo.comm(). kernel_ep(epi, n_i, epj, n_j, force) and kernel_sp(epi, n_i, spj, n_j,
  /// force) are called once per group, from OpenMP threads, and must add to force[0 .. n_i).
  /// list_mode: MAKE_LIST, MAKE_LIST_FOR_REUSE or REUSE_LIST (see the file's description; a
  /// REUSE_LIST after the particles changed throws grove::Error on every rank). Under
  /// ParticleOrder::TREE_ORDER the list-building calls reorder psys into key order.
  /// flag_serialize = true is refused. Throws grove::Error before initialize(); cutoff trees
  /// also when the cutoff radius is not positive and finite, or (periodic) EPJ or SPJ lacks
  /// setPos(); nearest-image search trees when the root domain gives no finite period.
  template <class EpKernel, class SpKernel, class PSys>
  void calcForceAllAndWriteBack(EpKernel&& kernel_ep, SpKernel&& kernel_sp, PSys& psys, const DomainInfo& dinfo,
                                bool clear = true, InteractionListMode list_mode = MAKE_LIST,
                                bool flag_serialize = false) {
    refuseLetSerialization(flag_serialize, "calcForceAllAndWriteBack");
    if constexpr (checkLongRangeContracts<typename PSys::value_type, Force, EPI, EPJ>()) {
      prepare(psys, dinfo, forceStartFor(clear), list_mode, list_mode != MAKE_LIST, reorderTarget(&psys));
      computeOnHost(kernel_ep, kernel_sp, list_mode != MAKE_LIST);
      sorted_.writeBack(psys, profile_);
    }
  }

  /// As calcForceAllAndWriteBack() without the write-back (nor reordering psys): forces kept
  /// in the tree, getForce(i) for psys[i]. Collective over dinfo.comm().
  template <class EpKernel, class SpKernel, class PSys>
  void calcForceAll(EpKernel&& kernel_ep, SpKernel&& kernel_sp, const PSys& psys, const DomainInfo& dinfo,
                    bool clear = true, InteractionListMode list_mode = MAKE_LIST, bool flag_serialize = false) {
    refuseLetSerialization(flag_serialize, "calcForceAll");
    if constexpr (checkLongRangeContracts<typename PSys::value_type, Force, EPI, EPJ>()) {
      prepare(psys, dinfo, forceStartFor(clear), list_mode, list_mode != MAKE_LIST);
      computeOnHost(kernel_ep, kernel_sp, list_mode != MAKE_LIST);
    }
  }

  // ---- multiwalk (accelerators) -----------------------------------------------------------------
  // calcForceAll[AndWriteBack]MultiWalk[Index] come from MultiWalkCalls (walk/multiwalk_calls.hpp),
  // with FDPS 7.1's dispatch/retrieve signatures (walk/multiwalk_driver.hpp). Long-range forms:
  //   plain  dispatch(tag, n_walk, epi**, n_epi*, epj**, n_epj*, spj**, n_spj*)
  //   index  dispatch(tag, n_walk, epi**, n_epi*, id_epj**, n_epj*, id_spj**, n_spj*, epj*,
  //                   n_epj_total, spj*, n_spj_total, send_flag [, lists_unchanged])
  //   retrieve(tag, n_walk, n_epi*, force**)
  // A dispatch that takes the trailing lists_unchanged is told, on REUSE_LIST steps, that every
  // walk's index lists equal those of the preceding MAKE_LIST_FOR_REUSE step.

  // ---- FDPS's split stages -------------------------------------------------------------------------
  /// FDPS's split stages: setParticleLocalTree loads particles (several systems in turn with
  /// clear = false, e.g. dark matter then gas); calcForceMakingTree builds the trees from them
  /// and computes the forces; getForce(i) is the force on the i-th particle loaded.
  /// makeLocalTree, makeGlobalTree, calcMomentGlobalTree and calcForce are the same steps one at
  /// a time. LET serialization (flag_serialize), unimplemented in FDPS too, is refused.
  /// setParticleLocalTree(psys[, clear]) comes from StagedInput (tree/staged_particles.hpp).
  /// calcForceMakingTree is collective over dinfo.comm(); its other arguments are as in
  /// calcForceAllAndWriteBack().
  template <class EpKernel, class SpKernel>
  void calcForceMakingTree(EpKernel&& kernel_ep, SpKernel&& kernel_sp, const DomainInfo& dinfo, bool clear = true,
                           InteractionListMode list_mode = MAKE_LIST, bool flag_serialize = false) {
    refuseLetSerialization(flag_serialize, "calcForceMakingTree");
    prepare(staged_, dinfo, forceStartFor(clear), list_mode, list_mode != MAKE_LIST);
    computeOnHost(kernel_ep, kernel_sp, list_mode != MAKE_LIST);
  }
  /// The forces of the tree made last (by any call), written back to psys: its particles must be
  /// those the tree was made from, in the same order (FDPS: without reading psys or remaking trees).
  /// Not collective. Throws grove::Error when psys's size differs from the tree's.
  template <class EpKernel, class SpKernel, class PSys>
  void calcForceAndWriteBack(EpKernel&& kernel_ep, SpKernel&& kernel_sp, PSys& psys, bool clear = true,
                             bool flag_serialize = false) {
    refuseLetSerialization(flag_serialize, "calcForceAndWriteBack");
    require(sorted_.order.size() == psys.size(), "TreeForForceLong::calcForceAndWriteBack",
            "the tree was made from {} particles, psys holds {}", sorted_.order.size(), psys.size());
    calcForce(kernel_ep, kernel_sp, clear);
    sorted_.writeBack(psys, profile_);
  }
  /// The local tree of the particles loaded by setParticleLocalTree, its root cell the bounding
  /// cube of every rank's particles. Collective over dinfo.comm(). Throws grove::Error before
  /// initialize() (and, for cutoff and search trees, as calcForceAllAndWriteBack() does).
  void makeLocalTree(const DomainInfo& dinfo) { makeLocalTreeFromStaged(dinfo.comm(), &dinfo, nullptr); }
  /// The local tree in the cube of side l centred on c (the same on every rank; it must hold every
  /// particle loaded), on the communicator of the tree's last DomainInfo (collective over it).
  /// Plain trees only (a compile-time error for cutoff and search trees). Throws grove::Error
  /// when l is not positive and finite, c not finite, or the cube misses a particle.
  void makeLocalTree(float l, const Vec3f& c = Vec3f(0.0f)) {
    static_assert(Walk::kTakesGivenRoot,
                  "grove: cutoff and search trees read their boundary and images from the DomainInfo: use "
                  "makeLocalTree(dinfo)");
    require(l > 0.0f && isFiniteValue(l) && isFinite(c), "TreeForForceLong::makeLocalTree",
            "the root cell needs a positive side and a finite centre, got l = {}, c = {}", l, c);
    const RootCell root{Vec3d(c) - Vec3d(0.5 * static_cast<double>(l)), static_cast<double>(l)};
    makeLocalTreeFromStaged(comm_, nullptr, &root);
  }
  /// After makeLocalTree: exchanges LETs (on several ranks, or with a periodic cutoff tree's
  /// images), makes the global tree with its moments, and the interaction groups. Collective
  /// over dinfo.comm(). Throws grove::Error when the local tree does not hold as many particles
  /// as are loaded (makeLocalTree not called since loading).
  void makeGlobalTree(const DomainInfo& dinfo) {
    require(sorted_.order.size() == staged_.size(), "TreeForForceLong::makeGlobalTree", "call makeLocalTree first");
    // Periodic cutoff trees need a global tree on one rank too: it holds the images.
    if (walk_.needsGlobalTree(dinfo.comm())) buildGlobalTree(dinfo.comm(), false);
    makeInteractionGroups();
  }
  /// Does nothing: Grove computes the global tree's moments as it makes it (makeGlobalTree).
  void calcMomentGlobalTree() {}
  /// The forces on the trees and groups made last (by any call), kept in the tree (read with
  /// getForce()); clear = false adds to the kept forces. Not collective.
  template <class EpKernel, class SpKernel>
  void calcForce(EpKernel&& kernel_ep, SpKernel&& kernel_sp, bool clear = true) {
    // A new calculation for the counters; the tree is the one made before.
    beginCalculation(comm_);
    if (clear)
      for (auto& f : sorted_.force) f.clear();
    profile_.n_local = static_cast<std::int64_t>(sorted_.order.size());
    profile_.n_groups = static_cast<std::int64_t>(groups_.size());
    computeOnHost(kernel_ep, kernel_sp, false);
  }

  // ---- results ------------------------------------------------------------------------------------
  /// The force on the i-th particle of the last calculation's input (psys order, or the order
  /// loaded by setParticleLocalTree). Throws std::out_of_range when i is not below size().
  const Force& getForce(std::size_t i) const { return sorted_.forceOf(i); }
  /// The number of this rank's particles the tree was made from.
  std::size_t size() const { return sorted_.order.size(); }
  // profile(), the interaction and walk counts (accumulated, FDPS's) and getTimeProfile() come
  // from TreeStatistics (tree/tree_statistics.hpp).
  /// Same as memoryBytes() (FDPS's spelling).
  std::size_t getMemSizeUsed() const { return memoryBytes(); }  // FDPS's spelling
  /// Same as memoryBytes().
  std::size_t getUsedMemorySize() const { return memoryBytes(); }
  /// The root cell of the tree made last (the same on every rank).
  const RootCell& rootCell() const { return root_; }
  /// Cutoff trees: the cutoff radius of the last calculation (the largest EPJ::getRSearch() over
  /// every rank). 0 for other trees.
  double getRCut() const {
    if constexpr (std::is_same_v<Walk, CutoffWalk>) return walk_.rCut();
    else return 0.0;
  }

  /// Search trees: the EPJs within the search radius of `particle` (strictly closer than the
  /// EPJ's radius for SCATTER, than the larger of the particle's and the EPJ's for SYMMETRY;
  /// nearest-image distances where the tree measures them), from the tree of the last
  /// calculation: this rank's particles and those received, so complete for particles of this
  /// rank. Sets list to them and returns their count. Not collective. Thread-safe; the list
  /// stays valid until this thread's next call.
  template <class P>
  int getNeighborListOneParticle(const P& particle, EPJ*& list) const
    requires(Walk::kSearches)
  {
    thread_local std::vector<EPJ> found;
    thread_local std::vector<std::int32_t> stack;
    found.clear();
    walk_.neighboursOf(tree(), particle, found, stack);
    list = found.data();
    return static_cast<int>(found.size());
  }
  /// Bytes held by the tree's arrays (capacity), for memory accounting. This rank only.
  std::size_t memoryBytes() const;

 private:
  using StagedInput<EPI, EPJ>::staged_;  // setParticleLocalTree's particles (a dependent base)
  using Built = detail::BuiltTree<EPJ, SPJ, Moment>;

  // reorder: psys itself when the call may reorder it (reorderTarget), else null.
  template <class PSys>
  void prepare(const PSys& psys, const DomainInfo& dinfo, ForceStart start, InteractionListMode list_mode,
               bool keep_lists, PSys* reorder = nullptr);
  // given_root: FDPS's makeLocalTree(l, c); null: from the particles.
  template <class PSys>
  void buildLocalTree(const PSys& psys, const Comm& comm, ForceStart start, PSys* reorder,
                      const RootCell* given_root = nullptr);
  // dinfo: null only for plain trees (makeLocalTree(l, c)), which need nothing else from it.
  void makeLocalTreeFromStaged(const Comm& comm, const DomainInfo* dinfo, const RootCell* given_root) {
    require(initialized_, "TreeForForceLong", "call initialize(n, theta, n_leaf, n_group) first");
    beginCalculation(comm);
    comm_ = comm;
    profile_.n_local = static_cast<std::int64_t>(staged_.size());
    // Forces follow their particles when the same number is loaded again (calcForce(clear = false)).
    const ForceStart start = sorted_.force.size() == staged_.size() ? ForceStart::kKeep : ForceStart::kClear;
    if (dinfo) walk_.template setUp<EPJ, SPJ>(comm, *dinfo, staged_);
    buildLocalTree(staged_, comm_, start, static_cast<StagedParticles<EPI, EPJ>*>(nullptr), given_root);
    reuse_.guard.forget();
    groups_.clear();
  }
  void buildGlobalTree(const Comm& comm, bool keep_plan);
  ReceivedLet<EPJ, SPJ> planAndExchangeLet(const Comm& comm, bool keep_plan);
  ReceivedLet<EPJ, SPJ> resendLet();
  template <class PSys>
  void refreshForReuse(const PSys& psys, const DomainInfo& dinfo, ForceStart start);
  void makeInteractionGroups();
  void buildLists();
  // The lists of groups [g0, g1) into lists_ (after lists_.reset).
  void buildListRange(std::size_t g0, std::size_t g1);
  // Walks group g's list: on_ep_range(first, count) for runs of tree().epj, on_sp(index) for
  // single entries of tree().all_spj and on_sp_range(first, count) for runs of it.
  template <class OnEpRange, class OnSp, class OnSpRange>
  void visitGroupList(std::size_t g, std::vector<std::int32_t>& stack, OnEpRange&& on_ep_range, OnSp&& on_sp,
                      OnSpRange&& on_sp_range) const {
    const Built& t = tree();
    const auto cells = static_cast<std::uint32_t>(t.cells());
    auto far = [&](std::int32_t cell) { on_sp(static_cast<std::uint32_t>(cell)); };
    auto leaf_entries = [&](const TreeCell& leaf) {
      if (leaf.ep_count) on_ep_range(leaf.ep_first, leaf.ep_count);
      if (leaf.sp_count) on_sp_range(cells + leaf.sp_first, leaf.sp_count);
    };
    walk_.walk(t, criterion_, std::span<const InteractionGroup>(groups_), g, stack, far, leaf_entries);
  }
  // Appends group g's list as indices: EPJ indices into tree().epj, SPJ indices into all_spj.
  void collectGroupList(std::size_t g, std::vector<std::int32_t>& ep, std::vector<std::int32_t>& sp,
                        std::vector<std::int32_t>& stack) const {
    visitGroupList(
        g, stack,
        [&](std::uint32_t first, std::uint32_t count) {
          for (std::uint32_t i = first; i < first + count; ++i) ep.push_back(static_cast<std::int32_t>(i));
        },
        [&](std::uint32_t i) { sp.push_back(static_cast<std::int32_t>(i)); },
        [&](std::uint32_t first, std::uint32_t count) {
          for (std::uint32_t i = first; i < first + count; ++i) sp.push_back(static_cast<std::int32_t>(i));
        });
  }
  // Appends group g's sources themselves (leaves as contiguous runs), in the kept lists' order.
  template <class EpVector, class SpVector>
  void collectGroupSources(std::size_t g, EpVector& ep, SpVector& sp, std::vector<std::int32_t>& stack) const {
    const Built& t = tree();
    visitGroupList(
        g, stack,
        [&](std::uint32_t first, std::uint32_t count) {
          ep.insert(ep.end(), t.epj.begin() + first, t.epj.begin() + first + count);
        },
        [&](std::uint32_t i) { sp.push_back(t.all_spj[i]); },
        [&](std::uint32_t first, std::uint32_t count) {
          sp.insert(sp.end(), t.all_spj.begin() + first, t.all_spj.begin() + first + count);
        });
  }
  template <class EpKernel, class SpKernel>
  void computeOnHost(EpKernel& kernel_ep, SpKernel& kernel_sp, bool from_kept_lists);
  template <bool kIndexForm, class Dispatch, class Retrieve, class PSys>
  void multiWalk(Dispatch& dispatch, Retrieve& retrieve, int tag_max, const PSys& psys, const DomainInfo& dinfo,
                 int n_walk_limit, bool clear, InteractionListMode list_mode, PSys* write_back_to) {
    if constexpr (checkLongRangeContracts<typename PSys::value_type, Force, EPI, EPJ>()) {
      checkMultiWalkArguments(tag_max, n_walk_limit);
      this->template pageLockTransferArrays<kIndexForm>(sorted_.epi, local_.epj, global_.epj);
      prepare(psys, dinfo, clear ? ForceStart::kClearedLater : ForceStart::kKeep, list_mode, false,
              reorderTarget(write_back_to));
      const Built& t = tree();
      this->template runBatches<kIndexForm>(dispatch, retrieve, tag_max, n_walk_limit, list_mode, clear, write_back_to,
                                            std::span<const EPJ>(t.epj), std::span<const SPJ>(t.all_spj),
                                            [&](std::size_t g, std::vector<EPJ>& ep, std::vector<SPJ>& sp) {
                                              thread_local std::vector<std::int32_t> stack;
                                              collectGroupSources(g, ep, sp, stack);
                                            });
    }
  }
  const Built& tree() const { return global_built_ ? global_ : local_; }

  double theta_ = 0.7;
  int n_leaf_limit_ = 8;
  int n_group_limit_ = 64;
  bool initialized_ = false;
  LetExchangeMode let_mode_ = LetExchangeMode::POINT_TO_POINT;
  OpeningRule opening_rule_ = OpeningRule::kFdps;
  Comm comm_;

  RootCell root_;
  OpeningCriterion criterion_;
  Walk walk_;  // the walk policy and its state (r_cut and images, nearest-image periods, ...)
  SortedParticles<EPI, EPJ, Force> sorted_;
  Built local_, global_;
  bool global_built_ = false;
  std::vector<InteractionGroup> groups_;
  InteractionLists lists_;
  MultiwalkBuffers<EPI, EPJ, SPJ, Force> multiwalk_buffers_;
  detail::ReuseRecord<typename Walk::Plan> reuse_;
};

// ---- stage implementations ----------------------------------------------------------------------

template <class Force, class EPI, class EPJ, class Moment, class SPJ, class Walk>
template <class PSys>
void TreeForForceLongWith<Force, EPI, EPJ, Moment, SPJ, Walk>::prepare(const PSys& psys, const DomainInfo& dinfo,
                                                                  ForceStart start, InteractionListMode list_mode,
                                                                  bool keep_lists, PSys* reorder) {
  require(initialized_, "TreeForForceLong", "call initialize(n, theta, n_leaf, n_group) first");
  beginCalculation(dinfo.comm());
  profile_.n_local = static_cast<std::int64_t>(psys.size());
  comm_ = dinfo.comm();
  if (list_mode == REUSE_LIST) {
    refreshForReuse(psys, dinfo, start);
    profile_.n_groups = static_cast<std::int64_t>(groups_.size());
    profile_.n_cells = static_cast<std::int64_t>(local_.shape.cells.size());
    return;
  }
  walk_.template setUp<EPJ, SPJ>(comm_, dinfo, psys);
  buildLocalTree(psys, comm_, start, reorder);
  if (walk_.needsGlobalTree(comm_)) buildGlobalTree(comm_, list_mode == MAKE_LIST_FOR_REUSE);
  makeInteractionGroups();
  reuse_.guard.forget();
  if (keep_lists) buildLists();
  if (list_mode == MAKE_LIST_FOR_REUSE) reuse_.guard.record(psys, comm_);
}

template <class Force, class EPI, class EPJ, class Moment, class SPJ, class Walk>
template <class PSys>
void TreeForForceLongWith<Force, EPI, EPJ, Moment, SPJ, Walk>::buildLocalTree(const PSys& psys, const Comm& comm,
                                                                                  ForceStart start, PSys* reorder,
                                                                                  const RootCell* given_root) {
  double t = omp_get_wtime();
  // 1. Root cell: the bounding cube of every rank's particles, so that cells agree across ranks.
  const Boxd bounds = comm.allreduceUnion(boundingBox(Cpu{}, psys.particles()));
  if (given_root) {
    const Boxd box = given_root->box();
    bool inside = true;
    for (std::size_t a = 0; a < 3 && !bounds.isEmpty(); ++a)
      inside = inside && box.low[a] <= bounds.low[a] && bounds.high[a] <= box.high[a];
    require(inside, "TreeForForceLong::makeLocalTree", "the root cell {} does not hold every particle (they span {})",
            box, bounds);
    root_ = *given_root;
  } else {
    // The walk may need more room than the particles (a cutoff tree's periodic images).
    root_ = rootCellAround(walk_.rootBounds(bounds));
  }
  criterion_ = OpeningCriterion(root_, theta_, opening_rule_);
  profile_.root_cell = omp_get_wtime() - t;

  // 2-3. Keys, sort, and the EPI/EPJ arrays in key order.
  sorted_.build(psys, root_, start, local_.epj, local_.ep_keys, profile_, reorder);

  // 4. Cells, then moments.
  t = omp_get_wtime();
  local_.sp_keys.clear();
  local_.spj.clear();
  linkCells(Cpu{}, local_.ep_keys, local_.sp_keys, n_leaf_limit_, local_.shape);
  profile_.link = omp_get_wtime() - t;
  t = omp_get_wtime();
  local_.computeMomentsAndSuperParticles();
  local_.computeOpeningDistances(root_, criterion_);
  walk_.computeCellData(local_);
  profile_.local_moments = omp_get_wtime() - t;
  profile_.n_cells = static_cast<std::int64_t>(local_.cells());
  global_built_ = false;
}

template <class Force, class EPI, class EPJ, class Moment, class SPJ, class Walk>
void TreeForForceLongWith<Force, EPI, EPJ, Moment, SPJ, Walk>::buildGlobalTree(const Comm& comm, bool keep_plan) {
  ReceivedLet<EPJ, SPJ> let = planAndExchangeLet(comm, keep_plan);

  double t = omp_get_wtime();
  // Received EPJs merged into the (already sorted) local ones; received SPJs sorted by key.
  std::vector<std::uint32_t>* ep_source = keep_plan ? &reuse_.global_ep_source : nullptr;
  std::vector<std::uint32_t>* sp_source = keep_plan ? &reuse_.global_sp_source : nullptr;
  mergeIntoSorted(root_, std::span<const MortonKey>(local_.ep_keys), std::span<const EPJ>(local_.epj),
                  std::span<const EPJ>(let.epj), global_.ep_keys, global_.epj, ep_source);
  sortIntoKeyOrder(Cpu{}, root_, std::span<const SPJ>(let.spj), global_.sp_keys, global_.spj, sp_source);
  linkCells(Cpu{}, global_.ep_keys, global_.sp_keys, n_leaf_limit_, global_.shape);
  profile_.global_tree = omp_get_wtime() - t;

  t = omp_get_wtime();
  global_.computeMomentsAndSuperParticles();
  global_.computeOpeningDistances(root_, criterion_);
  walk_.computeCellData(global_);
  profile_.global_moments = omp_get_wtime() - t;
  global_built_ = true;
}

template <class Force, class EPI, class EPJ, class Moment, class SPJ, class Walk>
ReceivedLet<EPJ, SPJ> TreeForForceLongWith<Force, EPI, EPJ, Moment, SPJ, Walk>::planAndExchangeLet(const Comm& comm,
                                                                                                       bool keep_plan) {
  double t = omp_get_wtime();
  typename Walk::Plan plan = walk_.planLet(comm, let_mode_, local_, criterion_, std::span<const EPI>(sorted_.epi));
  profile_.let_build = omp_get_wtime() - t;
  t = omp_get_wtime();
  const std::span<const SPJ> cell_spj(local_.all_spj.data(), local_.cells());
  ReceivedLet<EPJ, SPJ> let = walk_.exchangeLet(comm, plan, std::span<const EPJ>(local_.epj), cell_spj, profile_);
  if (keep_plan) reuse_.let_plan = std::move(plan);
  profile_.let_exchange = omp_get_wtime() - t;
  return let;
}

template <class Force, class EPI, class EPJ, class Moment, class SPJ, class Walk>
ReceivedLet<EPJ, SPJ> TreeForForceLongWith<Force, EPI, EPJ, Moment, SPJ, Walk>::resendLet() {
  const double t = omp_get_wtime();
  const std::span<const SPJ> cell_spj(local_.all_spj.data(), local_.cells());
  ReceivedLet<EPJ, SPJ> let =
      walk_.exchangeLet(comm_, reuse_.let_plan, std::span<const EPJ>(local_.epj), cell_spj, profile_);
  profile_.let_exchange = omp_get_wtime() - t;
  return let;
}

template <class Force, class EPI, class EPJ, class Moment, class SPJ, class Walk>
template <class PSys>
void TreeForForceLongWith<Force, EPI, EPJ, Moment, SPJ, Walk>::refreshForReuse(const PSys& psys,
                                                                                   const DomainInfo& dinfo,
                                                                                   ForceStart start) {
  reuse_.guard.check(psys, dinfo.comm(), "TreeForForceLong (REUSE_LIST)");
  sorted_.refresh(psys, start, local_.epj, profile_);
  double t = omp_get_wtime();
  local_.computeMomentsAndSuperParticles(false);
  walk_.refreshCellData(local_);
  profile_.local_moments = omp_get_wtime() - t;
  if (!global_built_) return;
  const ReceivedLet<EPJ, SPJ> let = resendLet();
  t = omp_get_wtime();
  replayMerge(Cpu{}, std::span<const std::uint32_t>(reuse_.global_ep_source), std::span<const EPJ>(local_.epj),
              std::span<const EPJ>(let.epj), std::span<EPJ>(global_.epj));
  for (std::size_t i = 0; i < global_.spj.size(); ++i) global_.spj[i] = let.spj[reuse_.global_sp_source[i]];
  profile_.global_tree = omp_get_wtime() - t;
  t = omp_get_wtime();
  global_.computeMomentsAndSuperParticles(false);
  walk_.refreshCellData(global_);
  profile_.global_moments = omp_get_wtime() - t;
}

template <class Force, class EPI, class EPJ, class Moment, class SPJ, class Walk>
void TreeForForceLongWith<Force, EPI, EPJ, Moment, SPJ, Walk>::makeInteractionGroups() {
  const double t = omp_get_wtime();
  groups_ = makeGroups(Cpu{}, local_.shape, n_group_limit_);
  const auto ng = static_cast<std::int64_t>(groups_.size());
#pragma omp parallel for schedule(static)
  for (std::int64_t g = 0; g < ng; ++g) {
    InteractionGroup& group = groups_[static_cast<std::size_t>(g)];
    for (std::uint32_t i = group.first; i < group.first + group.count; ++i)
      group.box.merge(positionOf(sorted_.epi[i]));
  }
  walk_.prepareGroups(std::span<const InteractionGroup>(groups_), std::span<const EPI>(sorted_.epi));
  profile_.n_groups = ng;
  profile_.groups = omp_get_wtime() - t;
}

template <class Force, class EPI, class EPJ, class Moment, class SPJ, class Walk>
void TreeForForceLongWith<Force, EPI, EPJ, Moment, SPJ, Walk>::buildLists() {
  const double t = omp_get_wtime();
  lists_.reset(groups_.size());
  buildListRange(0, groups_.size());
  profile_.walk = omp_get_wtime() - t;
}

template <class Force, class EPI, class EPJ, class Moment, class SPJ, class Walk>
void TreeForForceLongWith<Force, EPI, EPJ, Moment, SPJ, Walk>::buildListRange(std::size_t g0, std::size_t g1) {
  const Built& tr = tree();
  require(tr.epj.size() < (std::size_t{1} << 31) && tr.all_spj.size() < (std::size_t{1} << 31), "TreeForForceLong",
          "{} EPJs and {} SPJs exceed the int32 indices of interaction lists", tr.epj.size(), tr.all_spj.size());
  lists_.build(g0, g1, [&](std::size_t g, auto& ep, auto& sp) {
    thread_local std::vector<std::int32_t> stack;
    collectGroupList(g, ep, sp, stack);
  });
}

template <class Force, class EPI, class EPJ, class Moment, class SPJ, class Walk>
template <class EpKernel, class SpKernel>
void TreeForForceLongWith<Force, EPI, EPJ, Moment, SPJ, Walk>::computeOnHost(EpKernel& kernel_ep,
                                                                                 SpKernel& kernel_sp,
                                                                                 bool from_kept_lists) {
  const Built& t = tree();
  const double start = omp_get_wtime();
  struct Lists {
    std::vector<EPJ> ep;
    std::vector<SPJ> sp;
    std::vector<std::int32_t> stack;
  };
  const GroupPassTotals totals = forEachGroupOnThreads<Lists>(
      groups_.size(),
      [&](std::size_t g, Lists& l) {
        if (from_kept_lists) {
          const auto ep = lists_.ep(g), sp = lists_.sp(g);
          l.ep.resize(ep.size());
          l.sp.resize(sp.size());
          for (std::size_t k = 0; k < ep.size(); ++k) l.ep[k] = t.epj[static_cast<std::size_t>(ep[k])];
          for (std::size_t k = 0; k < sp.size(); ++k) l.sp[k] = t.all_spj[static_cast<std::size_t>(sp[k])];
        } else {
          // Straight from the walk (same order as the kept lists, so both paths give bitwise the
          // same forces).
          l.ep.clear();
          l.sp.clear();
          collectGroupSources(g, l.ep, l.sp, l.stack);
        }
      },
      [&](std::size_t g, Lists& l) {
        const InteractionGroup& group = groups_[g];
        const auto n_i = static_cast<int>(group.count);
        kernel_ep(sorted_.epi.data() + group.first, n_i, l.ep.data(), static_cast<int>(l.ep.size()),
                  sorted_.force.data() + group.first);
        if (!l.sp.empty())
          kernel_sp(sorted_.epi.data() + group.first, n_i, l.sp.data(), static_cast<int>(l.sp.size()),
                    sorted_.force.data() + group.first);
        const auto n = static_cast<std::int64_t>(group.count);
        return GroupPairs{n * static_cast<std::int64_t>(l.ep.size()), n * static_cast<std::int64_t>(l.sp.size())};
      });
  profile_.splitWalkAndKernel(omp_get_wtime() - start, totals.walk_thread_seconds, totals.kernel_thread_seconds);
  profile_.n_ep_ep = totals.n_ep_ep;
  profile_.n_ep_sp = totals.n_ep_sp;
}

template <class Force, class EPI, class EPJ, class Moment, class SPJ, class Walk>
std::size_t TreeForForceLongWith<Force, EPI, EPJ, Moment, SPJ, Walk>::memoryBytes() const {
  auto bytes = [](const auto& v) { return v.capacity() * sizeof(typename std::decay_t<decltype(v)>::value_type); };
  auto built = [&](const Built& b) {
    return bytes(b.ep_keys) + bytes(b.sp_keys) + bytes(b.epj) + bytes(b.spj) + bytes(b.shape.cells) +
           bytes(b.shape.level_begin) + bytes(b.moments) + bytes(b.all_spj) + bytes(b.cell_pos) +
           bytes(b.cell_extent) + bytes(b.search_boxes) + bytes(b.cell_open_sq) + bytes(b.open_extent);
  };
  return sorted_.memoryBytes() + built(local_) + built(global_) + bytes(groups_) + lists_.memoryBytes();
}

namespace detail {
template <class Moment>
struct WithCutoffNeedsMomentAndSpj {
  static_assert(!std::is_void_v<Moment>,
                "grove: WithCutoff needs the moment and SPJ types: TreeForForceLong<Force, EPI, EPJ, Moment, "
                "SPJ>::WithCutoff (or TreeForForceLong<Force, EPI, EPJ>::MonopoleWithCutoff)");
};
template <class Force, class EPI, class EPJ, class Moment, class SPJ>
struct CutoffTreeOf {
  using type = TreeForForceLongWith<Force, EPI, EPJ, Moment, SPJ, CutoffWalk>;
};
template <class Force, class EPI, class EPJ>
struct CutoffTreeOf<Force, EPI, EPJ, void, void> {
  using type = WithCutoffNeedsMomentAndSpj<void>;
};
template <class Moment>
struct WithSearchNeedsMomentAndSpj {
  static_assert(!std::is_void_v<Moment>,
                "grove: WithScatterSearch / WithSymmetrySearch need the moment and SPJ types: TreeForForceLong<Force, "
                "EPI, EPJ, Moment, SPJ>::WithScatterSearch (or TreeForForceLong<Force, EPI, EPJ>::"
                "MonopoleWithScatterSearch)");
};
template <class Force, class EPI, class EPJ, class Moment, class SPJ, LongSearch kSearch>
struct SearchTreeOf {
  using type = TreeForForceLongWith<Force, EPI, EPJ, Moment, SPJ, SearchWalk<kSearch>>;
};
template <class Force, class EPI, class EPJ, LongSearch kSearch>
struct SearchTreeOf<Force, EPI, EPJ, void, void, kSearch> {
  using type = WithSearchNeedsMomentAndSpj<void>;
};
}  // namespace detail

/// FDPS's spelling: TreeForForceLong<Force, EPI, EPJ>::Monopole and friends;
/// TreeForForceLong<Force, EPI, EPJ>::MonopoleWithCutoff and
/// TreeForForceLong<Force, EPI, EPJ, Moment, SPJ>::WithCutoff for FDPS's SEARCH_MODE_LONG_CUTOFF
/// (the 4th and 5th arguments matter only to WithCutoff, WithScatterSearch and WithSymmetrySearch, as in FDPS).
template <class Force, class EPI, class EPJ, class MomentForCutoff = void, class SPJForCutoff = void>
struct TreeForForceLong {
  /// Monopole moments about the centre of mass (MomentMonopole, SPJMonopole).
  using Monopole = TreeForForceLongWith<Force, EPI, EPJ, MomentMonopole, SPJMonopole>;
  /// Quadrupole moments about the centre of mass (MomentQuadrupole, SPJQuadrupole).
  using Quadrupole = TreeForForceLongWith<Force, EPI, EPJ, MomentQuadrupole, SPJQuadrupole>;
  /// Monopole moments about the mean position of the cell's particles (charges of both signs).
  using MonopoleGeometricCenter =
      TreeForForceLongWith<Force, EPI, EPJ, MomentMonopoleGeometricCenter, SPJMonopoleGeometricCenter>;
  /// Dipole moments about the mean position of the cell's particles.
  using DipoleGeometricCenter =
      TreeForForceLongWith<Force, EPI, EPJ, MomentDipoleGeometricCenter, SPJDipoleGeometricCenter>;
  /// Quadrupole moments about the mean position of the cell's particles.
  using QuadrupoleGeometricCenter =
      TreeForForceLongWith<Force, EPI, EPJ, MomentQuadrupoleGeometricCenter, SPJQuadrupoleGeometricCenter>;
  /// A user's own moment and superparticle pair.
  template <class Moment, class SPJ>
  using WithMoment = TreeForForceLongWith<Force, EPI, EPJ, Moment, SPJ>;
  /// Cutoff trees: forces that vanish beyond EPJ::getRSearch(), open or periodic boundaries.
  using MonopoleWithCutoff = TreeForForceLongWith<Force, EPI, EPJ, MomentMonopoleCutoff, SPJMonopoleCutoff, CutoffWalk>;
  /// A cutoff tree with the 4th and 5th arguments as moment and SPJ (a compile-time error
  /// without them).
  using WithCutoff = typename detail::CutoffTreeOf<Force, EPI, EPJ, MomentForCutoff, SPJForCutoff>::type;
  /// A cutoff tree with a user's own moment and superparticle pair.
  template <class Moment, class SPJ>
  using WithMomentAndCutoff = TreeForForceLongWith<Force, EPI, EPJ, Moment, SPJ, CutoffWalk>;
  /// Search trees (FDPS's SEARCH_MODE_LONG_SCATTER / LONG_SYMMETRY): particles within search
  /// reach of a group reach its kernel one by one, never inside a superparticle. This one:
  /// monopole, by the EPJ's search radius.
  using MonopoleWithScatterSearch =
      TreeForForceLongWith<Force, EPI, EPJ, MomentMonopoleScatter, SPJMonopoleScatter, SearchWalk<kScatterSearch>>;
  /// Search tree: quadrupole, by the EPJ's search radius.
  using QuadrupoleWithScatterSearch =
      TreeForForceLongWith<Force, EPI, EPJ, MomentQuadrupoleScatter, SPJQuadrupoleScatter, SearchWalk<kScatterSearch>>;
  /// Search tree: monopole, by the larger of the EPI's and the EPJ's search radii.
  using MonopoleWithSymmetrySearch =
      TreeForForceLongWith<Force, EPI, EPJ, MomentMonopoleSymmetry, SPJMonopoleSymmetry, SearchWalk<kSymmetrySearch>>;
  /// Search tree: quadrupole, by the larger of the EPI's and the EPJ's search radii.
  using QuadrupoleWithSymmetrySearch =
      TreeForForceLongWith<Force, EPI, EPJ, MomentQuadrupoleSymmetry, SPJQuadrupoleSymmetry, SearchWalk<kSymmetrySearch>>;
  /// Scatter search tree with the 4th and 5th arguments as moment and SPJ (a compile-time
  /// error without them).
  using WithScatterSearch =
      typename detail::SearchTreeOf<Force, EPI, EPJ, MomentForCutoff, SPJForCutoff, kScatterSearch>::type;
  /// Symmetry search tree with the 4th and 5th arguments as moment and SPJ (a compile-time
  /// error without them).
  using WithSymmetrySearch =

      typename detail::SearchTreeOf<Force, EPI, EPJ, MomentForCutoff, SPJForCutoff, kSymmetrySearch>::type;
};

}  // namespace grove
