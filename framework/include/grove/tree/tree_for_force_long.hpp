#pragma once
// TreeForForceLong<Force, EPI, EPJ>::{Monopole, Quadrupole, MonopoleGeometricCenter,
// DipoleGeometricCenter, QuadrupoleGeometricCenter}: long-range forces (gravity, Coulomb) by
// Barnes-Hut trees with group walks, across ranks through local essential trees.
//
//   grove::TreeForForceLong<Force, EPI, EPJ>::Monopole tree(n_hint, theta, n_leaf, n_group);
//   tree.calcForceAllAndWriteBack(kernel_ep_ep, kernel_ep_sp, psys, dinfo);
//
// One call runs the stages of DESIGN.md: root cell, keys, sort, reorder, link, local moments,
// LET, global tree and moments, groups, walk + kernel, write back. Kernels have FDPS's form
//   void(const EPI* epi, int n_i, const EPJ* epj, int n_j, Force* force)   (and SPJ for ep-sp)
// and are called once per group from OpenMP threads; they must add to force[0 .. n_i).
#include <omp.h>

#include <algorithm>
#include <span>
#include <vector>

#include "grove/comm/comm.hpp"
#include "grove/core/error.hpp"
#include "grove/core/list_mode.hpp"
#include "grove/domain/domain_info.hpp"
#include "grove/let/local_essential_tree.hpp"
#include "grove/tree/contracts.hpp"
#include "grove/tree/groups.hpp"
#include "grove/tree/moment_pass.hpp"
#include "grove/tree/merge_sorted.hpp"
#include "grove/tree/moments.hpp"
#include "grove/tree/morton.hpp"
#include "grove/tree/profile.hpp"
#include "grove/tree/radix_sort.hpp"
#include "grove/tree/sorted_particles.hpp"
#include "grove/tree/tree_cells.hpp"
#include "grove/walk/opening_criterion.hpp"

namespace grove {

namespace detail {

// A tree's particles in key order with their cells, moments and per-cell superparticles.
template <class EPJ, class SPJ, class Moment>
struct BuiltTree {
  std::vector<MortonKey> ep_keys, sp_keys;
  std::vector<EPJ> epj;
  std::vector<SPJ> spj;
  TreeShape shape;
  std::vector<Moment> moments;
  std::vector<SPJ> cell_spj;
  std::vector<Vec3d> cell_pos;

  void deriveCellSuperParticles() {
    cell_spj.resize(moments.size());
    cell_pos.resize(moments.size());
#pragma omp parallel for schedule(static)
    for (std::size_t c = 0; c < moments.size(); ++c) {
      cell_spj[c].copyFromMoment(moments[c]);
      cell_pos[c] = positionOf(moments[c]);
    }
  }
};

}  // namespace detail

template <class Force, class EPI, class EPJ, class Moment, class SPJ>
class TreeForForceLongWith {
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
    require(theta >= 0.0 && std::isfinite(theta), "TreeForForceLong::initialize", "theta must be >= 0, got {}", theta);
    require(n_leaf_limit > 0, "TreeForForceLong::initialize", "n_leaf_limit must be positive, got {}", n_leaf_limit);
    require(n_group_limit > 0, "TreeForForceLong::initialize", "n_group_limit must be positive, got {}",
            n_group_limit);
    theta_ = theta;
    n_leaf_limit_ = n_leaf_limit;
    n_group_limit_ = n_group_limit;
    sorted_.epi.reserve(n_hint);
    initialized_ = true;
  }

  void setLetExchangeMode(LetExchangeMode mode) { let_mode_ = mode; }
  void setExchangeLETMode(LetExchangeMode mode) { let_mode_ = mode; }  // FDPS's spelling
  LetExchangeMode getLetExchangeMode() const { return let_mode_; }
  double getTheta() const { return theta_; }
  int getNLeafLimit() const { return n_leaf_limit_; }
  int getNGroupLimit() const { return n_group_limit_; }

  // Forces on psys's particles, written back with FP::copyFromForce. With clear = false the
  // kernels add to the forces of the previous call (same particles, any order).
  // list_mode: MAKE_LIST builds the interaction lists afresh (the only mode of the CPU path
  // so far; list reuse arrives with the accelerator work and is refused clearly until then).
  template <class EpKernel, class SpKernel, class PSys>
  void calcForceAllAndWriteBack(EpKernel&& kernel_ep, SpKernel&& kernel_sp, PSys& psys, const DomainInfo& dinfo,
                                bool clear = true, InteractionListMode list_mode = MAKE_LIST) {
    if constexpr (checkLongRangeContracts<typename PSys::value_type, Force, EPI, EPJ>()) {
      calcForceAll(kernel_ep, kernel_sp, psys, dinfo, clear, list_mode);
      writeBack(psys);
    }
  }

  // Forces kept in the tree: getForce(i) for psys[i].
  template <class EpKernel, class SpKernel, class PSys>
  void calcForceAll(EpKernel&& kernel_ep, SpKernel&& kernel_sp, const PSys& psys, const DomainInfo& dinfo,
                    bool clear = true, InteractionListMode list_mode = MAKE_LIST) {
    if constexpr (checkLongRangeContracts<typename PSys::value_type, Force, EPI, EPJ>()) {
      require(initialized_, "TreeForForceLong::calcForceAll", "call initialize(n, theta, n_leaf, n_group) first");
      require(list_mode == MAKE_LIST, "TreeForForceLong::calcForceAll",
              "interaction-list reuse (MAKE_LIST_FOR_REUSE / REUSE_LIST) is not available in this version of "
              "grove's CPU path; use MAKE_LIST");
      comm_ = dinfo.comm();
      profile_ = {};
      profile_.n_local = static_cast<std::int64_t>(psys.size());
      const Comm& comm = dinfo.comm();
      buildLocalTree(psys, comm, clear);
      if (comm.size() > 1) buildGlobalTree(comm);
      makeInteractionGroups();
      walkAndCompute(kernel_ep, kernel_sp);
    }
  }

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

  template <class PSys>
  void buildLocalTree(const PSys& psys, const Comm& comm, bool clear);
  void buildGlobalTree(const Comm& comm);
  void makeInteractionGroups();
  template <class EpKernel, class SpKernel>
  void walkAndCompute(EpKernel& kernel_ep, SpKernel& kernel_sp);
  template <class PSys>
  void writeBack(PSys& psys) const {
    sorted_.writeBack(psys, profile_);
  }
  const Built& walkTreeSource() const { return global_built_ ? global_ : local_; }

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
  mutable TreeProfile profile_;
};

// ---- stage implementations ----------------------------------------------------------------------

template <class Force, class EPI, class EPJ, class Moment, class SPJ>
template <class PSys>
void TreeForForceLongWith<Force, EPI, EPJ, Moment, SPJ>::buildLocalTree(const PSys& psys, const Comm& comm,
                                                                         bool clear) {
  double t = omp_get_wtime();

  // 1. Root cell: the bounding cube of every rank's particles, so that cells agree across ranks.
  Boxd bounds = boundingBoxOfPositions(psys.particles());
  bounds.low = comm.allreduceMin(bounds.low);
  bounds.high = comm.allreduceMax(bounds.high);
  root_ = rootCellAround(bounds);
  criterion_ = OpeningCriterion(root_, theta_);
  profile_.root_cell = omp_get_wtime() - t;

  // 2-3. Keys, sort, and the EPI/EPJ arrays in key order.
  sorted_.build(psys, root_, clear, local_.epj, local_.ep_keys, profile_);

  // 4. Cells, then moments.
  t = omp_get_wtime();
  local_.sp_keys.clear();
  local_.spj.clear();
  local_.shape = linkCells(local_.ep_keys, local_.sp_keys, n_leaf_limit_);
  profile_.link = omp_get_wtime() - t;
  t = omp_get_wtime();
  computeMoments<Moment, EPJ, SPJ>(local_.shape, local_.epj, local_.spj, local_.moments);
  local_.deriveCellSuperParticles();
  profile_.local_moments = omp_get_wtime() - t;
  profile_.n_cells = static_cast<std::int64_t>(local_.shape.cells.size());
  global_built_ = false;
}

template <class Force, class EPI, class EPJ, class Moment, class SPJ>
void TreeForForceLongWith<Force, EPI, EPJ, Moment, SPJ>::buildGlobalTree(const Comm& comm) {
  const Boxd my_box = boundingBoxOfPositions(std::span<const EPJ>(local_.epj));
  ReceivedLet<EPJ, SPJ> let = exchangeLocalEssentialTrees<EPJ, SPJ>(
      comm, let_mode_, local_.shape, std::span<const EPJ>(local_.epj), std::span<const SPJ>(local_.cell_spj),
      std::span<const Vec3d>(local_.cell_pos), criterion_, my_box, profile_);

  const double t = omp_get_wtime();
  // Received EPJs merged into the (already sorted) local ones; received SPJs sorted by key.
  mergeIntoSorted(root_, std::span<const MortonKey>(local_.ep_keys), std::span<const EPJ>(local_.epj),
                  std::span<const EPJ>(let.epj), global_.ep_keys, global_.epj);
  sortByKey(root_, std::span<const SPJ>(let.spj), global_.sp_keys, global_.spj);
  global_.shape = linkCells(global_.ep_keys, global_.sp_keys, n_leaf_limit_);
  profile_.global_tree = omp_get_wtime() - t;

  const double tm = omp_get_wtime();
  computeMoments<Moment, EPJ, SPJ>(global_.shape, global_.epj, global_.spj, global_.moments);
  global_.deriveCellSuperParticles();
  profile_.global_moments = omp_get_wtime() - tm;
  global_built_ = true;
}

template <class Force, class EPI, class EPJ, class Moment, class SPJ>
void TreeForForceLongWith<Force, EPI, EPJ, Moment, SPJ>::makeInteractionGroups() {
  const double t = omp_get_wtime();
  groups_ = makeGroups(local_.shape, n_group_limit_);
  const auto ng = static_cast<std::int64_t>(groups_.size());
#pragma omp parallel for schedule(static)
  for (std::int64_t g = 0; g < ng; ++g) {
    InteractionGroup& group = groups_[static_cast<std::size_t>(g)];
    for (std::uint32_t i = group.first; i < group.first + group.count; ++i) group.box.merge(positionOf(sorted_.epi[i]));
  }
  profile_.n_groups = ng;
  profile_.groups = omp_get_wtime() - t;
}

template <class Force, class EPI, class EPJ, class Moment, class SPJ>
template <class EpKernel, class SpKernel>
void TreeForForceLongWith<Force, EPI, EPJ, Moment, SPJ>::walkAndCompute(EpKernel& kernel_ep, SpKernel& kernel_sp) {
  const Built& tree = walkTreeSource();
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
      const InteractionGroup& group = groups_[static_cast<std::size_t>(g)];
      const double t0 = omp_get_wtime();
      ep_list.clear();
      sp_list.clear();
      walkTree(
          tree.shape, tree.cell_pos, criterion_, group.box, true, stack,
          [&](std::int32_t cell) { sp_list.push_back(tree.cell_spj[static_cast<std::size_t>(cell)]); },
          [&](const TreeCell& leaf) {
            ep_list.insert(ep_list.end(), tree.epj.begin() + leaf.ep_first,
                           tree.epj.begin() + leaf.ep_first + leaf.ep_count);
            sp_list.insert(sp_list.end(), tree.spj.begin() + leaf.sp_first,
                           tree.spj.begin() + leaf.sp_first + leaf.sp_count);
          });
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
  // Walk and kernel interleave on every thread: split the wall time in proportion.
  const double wall = omp_get_wtime() - start, busy = walk_thread_seconds + kernel_thread_seconds;
  profile_.walk = busy > 0 ? wall * walk_thread_seconds / busy : 0.0;
  profile_.kernel = busy > 0 ? wall * kernel_thread_seconds / busy : 0.0;
  profile_.n_ep_ep = n_ep_ep;
  profile_.n_ep_sp = n_ep_sp;
}

template <class Force, class EPI, class EPJ, class Moment, class SPJ>
std::size_t TreeForForceLongWith<Force, EPI, EPJ, Moment, SPJ>::memoryBytes() const {
  auto bytes = [](const auto& v) { return v.capacity() * sizeof(typename std::decay_t<decltype(v)>::value_type); };
  auto built = [&](const Built& b) {
    return bytes(b.ep_keys) + bytes(b.sp_keys) + bytes(b.epj) + bytes(b.spj) + bytes(b.shape.cells) +
           bytes(b.shape.level_begin) + bytes(b.moments) + bytes(b.cell_spj) + bytes(b.cell_pos);
  };
  return sorted_.memoryBytes() + built(local_) + built(global_) + bytes(groups_);
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
