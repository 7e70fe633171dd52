#pragma once
// TreeForForceLong<Force, EPI, EPJ>::{Monopole, Quadrupole, MonopoleGeometricCenter,
// DipoleGeometricCenter, QuadrupoleGeometricCenter}: long-range forces (gravity, Coulomb) by
// Barnes-Hut trees with group walks, across ranks through local essential trees.
//
//   grove::TreeForForceLong<Force, EPI, EPJ>::Monopole tree(n_hint, theta, n_leaf, n_group);
//   tree.calcForceAllAndWriteBack(kernel_ep_ep, kernel_ep_sp, psys, dinfo);
//   tree.calcForceAllAndWriteBackMultiWalkIndex(dispatch, retrieve, tag_max, psys, dinfo,
//                                               n_walk_limit, true, grove::MAKE_LIST_FOR_REUSE);
//   tree.setParticleOrder(grove::ParticleOrder::TREE_ORDER);  // optional: core/particle_order.hpp
//
// One call runs the stages of DESIGN.md: root cell, keys, sort, reorder, link, local moments,
// LET, global tree and moments, groups, walk + kernel, write back. CPU kernels have FDPS's form
//   void(const EPI* epi, int n_i, const EPJ* epj, int n_j, Force* force)   (and SPJ for ep-sp)
// and are called once per group from OpenMP threads; they must add to force[0 .. n_i).
// Multiwalk hooks (dispatch/retrieve) have FDPS 7.1's signatures; see calcForceAllMultiWalk.
//
// list_mode: MAKE_LIST builds everything and keeps nothing; MAKE_LIST_FOR_REUSE also keeps the
// tree shape, LET plan, groups and interaction lists; REUSE_LIST then skips the root, keys,
// sort, linking, LET decision, groups and walk: it refreshes EPI/EPJ from the particles (same
// order), recomputes moments, resends LET payloads along the kept plan and computes forces with
// the kept lists. Particles must not be added, removed, reordered or exchanged in between.
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
#include "grove/let/local_essential_tree.hpp"
#include "grove/tree/contracts.hpp"
#include "grove/tree/groups.hpp"
#include "grove/tree/merge_sorted.hpp"
#include "grove/tree/moment_pass.hpp"
#include "grove/tree/moments.hpp"
#include "grove/tree/morton.hpp"
#include "grove/tree/profile.hpp"
#include "grove/tree/reuse_guard.hpp"
#include "grove/tree/sorted_particles.hpp"
#include "grove/tree/tree_cells.hpp"
#include "grove/walk/interaction_lists.hpp"
#include "grove/walk/multiwalk.hpp"
#include "grove/walk/multiwalk_calls.hpp"
#include "grove/walk/opening_criterion.hpp"

namespace grove {

namespace detail {

// A tree's particles in key order with their cells and moments. all_spj holds every cell's
// superparticle (index = cell) followed by the received superparticles in leaves (index =
// cells + i): interaction lists index this one array.
template <class EPJ, class SPJ, class Moment>
struct BuiltTree {
  std::vector<MortonKey> ep_keys, sp_keys;
  LargeVector<EPJ> epj;
  std::vector<SPJ> spj;  // received superparticles, key order
  TreeShape shape;
  std::vector<Moment> moments;
  std::vector<SPJ> all_spj;
  std::vector<Vec3d> cell_pos;

  std::size_t cells() const { return shape.cells.size(); }
  // for_walks: also the expansion centres the walks and the LET decision read (a REUSE_LIST step
  // makes neither, and skips writing them).
  void computeMomentsAndSuperParticles(bool for_walks = true) {
    const std::size_t nc = shape.cells.size();
    all_spj.resize(nc + spj.size());
    if (for_walks) cell_pos.resize(nc);
    computeMoments<Moment, EPJ, SPJ>(shape, epj, spj, moments, [&](std::size_t c, const Moment& m) {
      all_spj[c].copyFromMoment(m);
      if (for_walks) cell_pos[c] = positionOf(m);
    });
    std::copy(spj.begin(), spj.end(), all_spj.begin() + static_cast<std::ptrdiff_t>(nc));
  }
};

// What a MAKE_LIST_FOR_REUSE step keeps besides the lists.
struct ReuseRecord {
  ReuseGuard guard;
  LetPlan let_plan;
  std::vector<std::uint32_t> global_ep_source, global_sp_source;  // replay of the global merge
};

}  // namespace detail

template <class Force, class EPI, class EPJ, class Moment, class SPJ>
class TreeForForceLongWith : public MultiWalkCalls<TreeForForceLongWith<Force, EPI, EPJ, Moment, SPJ>>,
                             public ParticleOrderOption {
  friend class MultiWalkCalls<TreeForForceLongWith>;
  static constexpr bool kTypesValid = checkLongRangeTypeContracts<Force, EPI, EPJ>();
  // The moment contract is only worth checking once the EPJ contract holds (moments read it).
  static_assert(!kTypesValid || MomentType<Moment, EPJ>,
                "grove: the moment type does not meet the moment contract (see grove/tree/moments.hpp)");
  static_assert(SuperParticleType<SPJ, Moment>,
                "grove: the SPJ type does not meet the superparticle contract (see grove/tree/moments.hpp)");

 public:
  using ForceType = Force;
  using EpiType = EPI;
  using EpjType = EPJ;
  using SpjType = SPJ;
  using MomentType = Moment;

  TreeForForceLongWith() = default;
  // FDPS defaults: theta 0.7, leaves of 8, groups of 64.
  explicit TreeForForceLongWith(std::size_t n_hint, double theta = 0.7, int n_leaf_limit = 8,
                                int n_group_limit = 64) {
    initialize(n_hint, theta, n_leaf_limit, n_group_limit);
  }

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

  void setLetExchangeMode(LetExchangeMode mode) { let_mode_ = mode; }
  void setExchangeLETMode(LetExchangeMode mode) { let_mode_ = mode; }  // FDPS's spelling
  LetExchangeMode getLetExchangeMode() const { return let_mode_; }
  double getTheta() const { return theta_; }
  int getNLeafLimit() const { return n_leaf_limit_; }
  int getNGroupLimit() const { return n_group_limit_; }

  // ---- CPU kernels ------------------------------------------------------------------------------
  // Forces on psys's particles, written back with FP::copyFromForce. With clear = false the
  // kernels add to the forces of the previous call (same particles, any order).
  template <class EpKernel, class SpKernel, class PSys>
  void calcForceAllAndWriteBack(EpKernel&& kernel_ep, SpKernel&& kernel_sp, PSys& psys, const DomainInfo& dinfo,
                                bool clear = true, InteractionListMode list_mode = MAKE_LIST) {
    if constexpr (checkLongRangeContracts<typename PSys::value_type, Force, EPI, EPJ>()) {
      prepare(psys, dinfo, forceStartFor(clear), list_mode, list_mode != MAKE_LIST, reorderTarget(&psys));
      computeOnHost(kernel_ep, kernel_sp, list_mode != MAKE_LIST);
      sorted_.writeBack(psys, profile_);
    }
  }

  // Forces kept in the tree: getForce(i) for psys[i].
  template <class EpKernel, class SpKernel, class PSys>
  void calcForceAll(EpKernel&& kernel_ep, SpKernel&& kernel_sp, const PSys& psys, const DomainInfo& dinfo,
                    bool clear = true, InteractionListMode list_mode = MAKE_LIST) {
    if constexpr (checkLongRangeContracts<typename PSys::value_type, Force, EPI, EPJ>()) {
      prepare(psys, dinfo, forceStartFor(clear), list_mode, list_mode != MAKE_LIST);
      computeOnHost(kernel_ep, kernel_sp, list_mode != MAKE_LIST);
    }
  }

  // ---- multiwalk (accelerators) -----------------------------------------------------------------
  // calcForceAll[AndWriteBack]MultiWalk[Index] come from MultiWalkCalls (walk/multiwalk_calls.hpp),
  // with FDPS 7.1's dispatch/retrieve signatures (walk/multiwalk.hpp). Long-range forms:
  //   plain  dispatch(tag, n_walk, epi**, n_epi*, epj**, n_epj*, spj**, n_spj*)
  //   index  dispatch(tag, n_walk, epi**, n_epi*, id_epj**, n_epj*, id_spj**, n_spj*, epj*,
  //                   n_epj_total, spj*, n_spj_total, send_flag [, lists_unchanged])
  //   retrieve(tag, n_walk, n_epi*, force**)
  // A dispatch that takes the trailing lists_unchanged is told, on REUSE_LIST steps, that every
  // walk's index lists equal those of the preceding MAKE_LIST_FOR_REUSE step.

  // ---- results ------------------------------------------------------------------------------------
  const Force& getForce(std::size_t i) const { return sorted_.forceOf(i); }
  std::size_t size() const { return sorted_.order.size(); }
  const TreeProfile& profile() const { return profile_; }
  std::int64_t getNumberOfInteractionEPEPLocal() const { return profile_.n_ep_ep; }
  std::int64_t getNumberOfInteractionEPSPLocal() const { return profile_.n_ep_sp; }
  // Collective: summed over the ranks of the last calculation.
  std::int64_t getNumberOfInteractionEPEPGlobal() const { return comm_.allreduceSum(profile_.n_ep_ep); }
  std::int64_t getNumberOfInteractionEPSPGlobal() const { return comm_.allreduceSum(profile_.n_ep_sp); }
  std::size_t getMemSizeUsed() const { return memoryBytes(); }  // FDPS's spelling
  const RootCell& rootCell() const { return root_; }
  // Bytes held by the tree's arrays (capacity), for memory accounting.
  std::size_t memoryBytes() const;

 private:
  using Built = detail::BuiltTree<EPJ, SPJ, Moment>;

  // reorder: psys itself when the call may reorder it (reorderTarget), else null.
  template <class PSys>
  void prepare(const PSys& psys, const DomainInfo& dinfo, ForceStart start, InteractionListMode list_mode,
               bool keep_lists, PSys* reorder = nullptr);
  template <class PSys>
  void buildLocalTree(const PSys& psys, const Comm& comm, ForceStart start, PSys* reorder);
  void buildGlobalTree(const Comm& comm, bool keep_plan);
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
    walkTree(
        t.shape, t.cell_pos, criterion_, groups_[g].box, true, stack,
        [&](std::int32_t cell) { on_sp(static_cast<std::uint32_t>(cell)); },
        [&](const TreeCell& leaf) {
          if (leaf.ep_count) on_ep_range(leaf.ep_first, leaf.ep_count);
          if (leaf.sp_count) on_sp_range(cells + leaf.sp_first, leaf.sp_count);
        });
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
  Comm comm_;

  RootCell root_;
  OpeningCriterion criterion_;
  SortedParticles<EPI, EPJ, Force> sorted_;
  Built local_, global_;
  bool global_built_ = false;
  std::vector<InteractionGroup> groups_;
  InteractionLists lists_;
  MultiwalkBuffers<EPI, EPJ, SPJ, Force> multiwalk_buffers_;
  detail::ReuseRecord reuse_;
  mutable TreeProfile profile_;
};

// ---- stage implementations ----------------------------------------------------------------------

template <class Force, class EPI, class EPJ, class Moment, class SPJ>
template <class PSys>
void TreeForForceLongWith<Force, EPI, EPJ, Moment, SPJ>::prepare(const PSys& psys, const DomainInfo& dinfo,
                                                                  ForceStart start, InteractionListMode list_mode,
                                                                  bool keep_lists, PSys* reorder) {
  require(initialized_, "TreeForForceLong", "call initialize(n, theta, n_leaf, n_group) first");
  profile_ = {};
  profile_.n_local = static_cast<std::int64_t>(psys.size());
  comm_ = dinfo.comm();
  if (list_mode == REUSE_LIST) {
    refreshForReuse(psys, dinfo, start);
    profile_.n_groups = static_cast<std::int64_t>(groups_.size());
    profile_.n_cells = static_cast<std::int64_t>(local_.shape.cells.size());
    return;
  }
  buildLocalTree(psys, comm_, start, reorder);
  if (comm_.size() > 1) buildGlobalTree(comm_, list_mode == MAKE_LIST_FOR_REUSE);
  makeInteractionGroups();
  reuse_.guard.forget();
  if (keep_lists) buildLists();
  if (list_mode == MAKE_LIST_FOR_REUSE) reuse_.guard.record(psys, comm_);
}

template <class Force, class EPI, class EPJ, class Moment, class SPJ>
template <class PSys>
void TreeForForceLongWith<Force, EPI, EPJ, Moment, SPJ>::buildLocalTree(const PSys& psys, const Comm& comm,
                                                                         ForceStart start, PSys* reorder) {
  double t = omp_get_wtime();
  // 1. Root cell: the bounding cube of every rank's particles, so that cells agree across ranks.
  Boxd bounds = boundingBoxOfPositions(psys.particles());
  bounds.low = comm.allreduceMin(bounds.low);
  bounds.high = comm.allreduceMax(bounds.high);
  root_ = rootCellAround(bounds);
  criterion_ = OpeningCriterion(root_, theta_);
  profile_.root_cell = omp_get_wtime() - t;

  // 2-3. Keys, sort, and the EPI/EPJ arrays in key order.
  sorted_.build(psys, root_, start, local_.epj, local_.ep_keys, profile_, reorder);

  // 4. Cells, then moments.
  t = omp_get_wtime();
  local_.sp_keys.clear();
  local_.spj.clear();
  linkCells(local_.ep_keys, local_.sp_keys, n_leaf_limit_, local_.shape);
  profile_.link = omp_get_wtime() - t;
  t = omp_get_wtime();
  local_.computeMomentsAndSuperParticles();
  profile_.local_moments = omp_get_wtime() - t;
  profile_.n_cells = static_cast<std::int64_t>(local_.cells());
  global_built_ = false;
}

template <class Force, class EPI, class EPJ, class Moment, class SPJ>
void TreeForForceLongWith<Force, EPI, EPJ, Moment, SPJ>::buildGlobalTree(const Comm& comm, bool keep_plan) {
  double t = omp_get_wtime();
  const Boxd my_box = boundingBoxOfPositions(std::span<const EPJ>(local_.epj));
  LetPlan plan = planLet(comm, let_mode_, local_.shape, std::span<const Vec3d>(local_.cell_pos), criterion_, my_box);
  profile_.let_build = omp_get_wtime() - t;
  t = omp_get_wtime();
  const std::span<const SPJ> cell_spj(local_.all_spj.data(), local_.cells());
  ReceivedLet<EPJ, SPJ> let = exchangeLet<EPJ, SPJ>(comm, plan, std::span<const EPJ>(local_.epj), cell_spj, profile_);
  profile_.let_exchange = omp_get_wtime() - t;

  t = omp_get_wtime();
  // Received EPJs merged into the (already sorted) local ones; received SPJs sorted by key.
  std::vector<std::uint32_t>* ep_source = keep_plan ? &reuse_.global_ep_source : nullptr;
  std::vector<std::uint32_t>* sp_source = keep_plan ? &reuse_.global_sp_source : nullptr;
  mergeIntoSorted(root_, std::span<const MortonKey>(local_.ep_keys), std::span<const EPJ>(local_.epj),
                  std::span<const EPJ>(let.epj), global_.ep_keys, global_.epj, ep_source);
  sortByKey(root_, std::span<const SPJ>(let.spj), global_.sp_keys, global_.spj, sp_source);
  linkCells(global_.ep_keys, global_.sp_keys, n_leaf_limit_, global_.shape);
  profile_.global_tree = omp_get_wtime() - t;

  t = omp_get_wtime();
  global_.computeMomentsAndSuperParticles();
  profile_.global_moments = omp_get_wtime() - t;
  global_built_ = true;
  if (keep_plan) reuse_.let_plan = std::move(plan);
}

template <class Force, class EPI, class EPJ, class Moment, class SPJ>
template <class PSys>
void TreeForForceLongWith<Force, EPI, EPJ, Moment, SPJ>::refreshForReuse(const PSys& psys, const DomainInfo& dinfo,
                                                                          ForceStart start) {
  reuse_.guard.check(psys, dinfo.comm(), "TreeForForceLong (REUSE_LIST)");
  sorted_.refresh(psys, start, local_.epj, profile_);
  double t = omp_get_wtime();
  local_.computeMomentsAndSuperParticles(false);
  profile_.local_moments = omp_get_wtime() - t;
  if (!global_built_) return;
  t = omp_get_wtime();
  const std::span<const SPJ> cell_spj(local_.all_spj.data(), local_.cells());
  ReceivedLet<EPJ, SPJ> let =
      exchangeLet<EPJ, SPJ>(comm_, reuse_.let_plan, std::span<const EPJ>(local_.epj), cell_spj, profile_);
  profile_.let_exchange = omp_get_wtime() - t;
  t = omp_get_wtime();
  const std::size_t n_local = local_.epj.size();
  const auto n_global = static_cast<std::int64_t>(global_.epj.size());
#pragma omp parallel for schedule(static)
  for (std::int64_t o = 0; o < n_global; ++o) {
    const std::uint32_t src = reuse_.global_ep_source[static_cast<std::size_t>(o)];
    global_.epj[static_cast<std::size_t>(o)] = src < n_local ? local_.epj[src] : let.epj[src - n_local];
  }
  for (std::size_t i = 0; i < global_.spj.size(); ++i) global_.spj[i] = let.spj[reuse_.global_sp_source[i]];
  profile_.global_tree = omp_get_wtime() - t;
  t = omp_get_wtime();
  global_.computeMomentsAndSuperParticles(false);
  profile_.global_moments = omp_get_wtime() - t;
}

template <class Force, class EPI, class EPJ, class Moment, class SPJ>
void TreeForForceLongWith<Force, EPI, EPJ, Moment, SPJ>::makeInteractionGroups() {
  const double t = omp_get_wtime();
  groups_ = makeGroups(local_.shape, n_group_limit_);
  const auto ng = static_cast<std::int64_t>(groups_.size());
#pragma omp parallel for schedule(static)
  for (std::int64_t g = 0; g < ng; ++g) {
    InteractionGroup& group = groups_[static_cast<std::size_t>(g)];
    for (std::uint32_t i = group.first; i < group.first + group.count; ++i)
      group.box.merge(positionOf(sorted_.epi[i]));
  }
  profile_.n_groups = ng;
  profile_.groups = omp_get_wtime() - t;
}

template <class Force, class EPI, class EPJ, class Moment, class SPJ>
void TreeForForceLongWith<Force, EPI, EPJ, Moment, SPJ>::buildLists() {
  const double t = omp_get_wtime();
  lists_.reset(groups_.size());
  buildListRange(0, groups_.size());
  profile_.walk = omp_get_wtime() - t;
}

template <class Force, class EPI, class EPJ, class Moment, class SPJ>
void TreeForForceLongWith<Force, EPI, EPJ, Moment, SPJ>::buildListRange(std::size_t g0, std::size_t g1) {
  const Built& tr = tree();
  require(tr.epj.size() < (std::size_t{1} << 31) && tr.all_spj.size() < (std::size_t{1} << 31), "TreeForForceLong",
          "{} EPJs and {} SPJs exceed the int32 indices of interaction lists", tr.epj.size(), tr.all_spj.size());
  lists_.build(g0, g1, [&](std::size_t g, auto& ep, auto& sp) {
    thread_local std::vector<std::int32_t> stack;
    collectGroupList(g, ep, sp, stack);
  });
}

template <class Force, class EPI, class EPJ, class Moment, class SPJ>
template <class EpKernel, class SpKernel>
void TreeForForceLongWith<Force, EPI, EPJ, Moment, SPJ>::computeOnHost(EpKernel& kernel_ep, SpKernel& kernel_sp,
                                                                        bool from_kept_lists) {
  const Built& t = tree();
  const double start = omp_get_wtime();
  double walk_thread_seconds = 0.0, kernel_thread_seconds = 0.0;
  std::int64_t n_ep_ep = 0, n_ep_sp = 0;
  const auto ng = static_cast<std::int64_t>(groups_.size());
#pragma omp parallel reduction(+ : walk_thread_seconds, kernel_thread_seconds, n_ep_ep, n_ep_sp)
  {
    std::vector<EPJ> ep_list;
    std::vector<SPJ> sp_list;
    std::vector<std::int32_t> stack;
#pragma omp for schedule(dynamic, 4)
    for (std::int64_t g = 0; g < ng; ++g) {
      const auto gg = static_cast<std::size_t>(g);
      const InteractionGroup& group = groups_[gg];
      const double t0 = omp_get_wtime();
      if (from_kept_lists) {
        const auto ep = lists_.ep(gg), sp = lists_.sp(gg);
        ep_list.resize(ep.size());
        sp_list.resize(sp.size());
        for (std::size_t k = 0; k < ep.size(); ++k) ep_list[k] = t.epj[static_cast<std::size_t>(ep[k])];
        for (std::size_t k = 0; k < sp.size(); ++k) sp_list[k] = t.all_spj[static_cast<std::size_t>(sp[k])];
      } else {
        // Straight from the walk (same order as the kept lists, so both paths give bitwise the
        // same forces).
        ep_list.clear();
        sp_list.clear();
        collectGroupSources(gg, ep_list, sp_list, stack);
      }
      const double t1 = omp_get_wtime();
      const auto n_i = static_cast<int>(group.count);
      kernel_ep(sorted_.epi.data() + group.first, n_i, ep_list.data(), static_cast<int>(ep_list.size()),
                sorted_.force.data() + group.first);
      if (!sp_list.empty())
        kernel_sp(sorted_.epi.data() + group.first, n_i, sp_list.data(), static_cast<int>(sp_list.size()),
                  sorted_.force.data() + group.first);
      walk_thread_seconds += t1 - t0;
      kernel_thread_seconds += omp_get_wtime() - t1;
      n_ep_ep += static_cast<std::int64_t>(group.count) * static_cast<std::int64_t>(ep_list.size());
      n_ep_sp += static_cast<std::int64_t>(group.count) * static_cast<std::int64_t>(sp_list.size());
    }
  }
  profile_.splitWalkAndKernel(omp_get_wtime() - start, walk_thread_seconds, kernel_thread_seconds);
  profile_.n_ep_ep = n_ep_ep;
  profile_.n_ep_sp = n_ep_sp;
}

template <class Force, class EPI, class EPJ, class Moment, class SPJ>
std::size_t TreeForForceLongWith<Force, EPI, EPJ, Moment, SPJ>::memoryBytes() const {
  auto bytes = [](const auto& v) { return v.capacity() * sizeof(typename std::decay_t<decltype(v)>::value_type); };
  auto built = [&](const Built& b) {
    return bytes(b.ep_keys) + bytes(b.sp_keys) + bytes(b.epj) + bytes(b.spj) + bytes(b.shape.cells) +
           bytes(b.shape.level_begin) + bytes(b.moments) + bytes(b.all_spj) + bytes(b.cell_pos);
  };
  return sorted_.memoryBytes() + built(local_) + built(global_) + bytes(groups_) + lists_.memoryBytes();
}

// FDPS's spelling: TreeForForceLong<Force, EPI, EPJ>::Monopole and friends.
template <class Force, class EPI, class EPJ>
struct TreeForForceLong {
  using Monopole = TreeForForceLongWith<Force, EPI, EPJ, MomentMonopole, SPJMonopole>;
  using Quadrupole = TreeForForceLongWith<Force, EPI, EPJ, MomentQuadrupole, SPJQuadrupole>;
  using MonopoleGeometricCenter =
      TreeForForceLongWith<Force, EPI, EPJ, MomentMonopoleGeometricCenter, SPJMonopoleGeometricCenter>;
  using DipoleGeometricCenter =
      TreeForForceLongWith<Force, EPI, EPJ, MomentDipoleGeometricCenter, SPJDipoleGeometricCenter>;
  using QuadrupoleGeometricCenter =
      TreeForForceLongWith<Force, EPI, EPJ, MomentQuadrupoleGeometricCenter, SPJQuadrupoleGeometricCenter>;
  // A user's own moment and superparticle pair.
  template <class Moment, class SPJ>
  using WithMoment = TreeForForceLongWith<Force, EPI, EPJ, Moment, SPJ>;
};

}  // namespace grove
