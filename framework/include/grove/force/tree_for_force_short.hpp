#pragma once
/// @file
/// TreeForForceShort<Force, EPI, EPJ>::{Gather, Scatter, Symmetry}: short-range interactions
/// (SPH, molecular dynamics, contacts). A group's interaction list holds every EPJ within the
/// search radius (of the i-particle for Gather, of the j-particle for Scatter, of either for
/// Symmetry), and possibly a few more: kernels test the distance themselves. With periodic
/// boundaries the list holds shifted images, so kernels use plain position differences; a radius
/// beyond half the period brings several images of one particle, each met (as in FDPS).
///
///     grove::TreeForForceShort<Force, EPI, EPJ>::Gather tree(n_hint, 0.0, n_leaf, n_group);
///     tree.calcForceAllAndWriteBack(kernel, psys, dinfo);   // kernel(epi, n_i, epj, n_j, force)
///     EPJ* neighbours; int n = tree.getNeighborListOneParticle(particle, neighbours);
///     tree.setParticleOrder(grove::ParticleOrder::TREE_ORDER);  // optional: core/particle_order.hpp
#include <omp.h>

#include <algorithm>
#include <array>
#include <queue>
#include <span>
#include <unordered_map>
#include <vector>

#include "grove/comm/comm.hpp"
#include "grove/core/error.hpp"
#include "grove/core/host_loop.hpp"
#include "grove/core/list_mode.hpp"
#include "grove/core/particle_order.hpp"
#include "grove/domain/domain_info.hpp"
#include "grove/domain/periodic_images.hpp"
#include "grove/let/short_range_let.hpp"
#include "grove/tree/contracts.hpp"
#include "grove/tree/groups.hpp"
#include "grove/tree/merge_sorted.hpp"
#include "grove/tree/profile.hpp"
#include "grove/tree/tree_statistics.hpp"
#include "grove/tree/reuse_guard.hpp"
#include "grove/tree/sorted_particles.hpp"
#include "grove/tree/staged_particles.hpp"
#include "grove/tree/tree_cells.hpp"
#include "grove/walk/group_pass.hpp"
#include "grove/walk/interaction_lists.hpp"
#include "grove/walk/multiwalk_driver.hpp"
#include "grove/walk/multiwalk_calls.hpp"
#include "grove/walk/short_range_search.hpp"

namespace grove {

/// Compile-time check of the particle types a short-range tree of mode M needs: FP with getPos()
/// and copyFromForce(Force); EPI and EPJ with getPos() and copyFromFP(FP); getRSearch() where
/// the mode's walk policy reads it (checkTypes: on EPI for Gather and Symmetry, on EPJ for
/// Scatter and Symmetry); Force with clear(); EPJ trivially copyable. A missing member fails
/// with a static_assert naming it; otherwise returns true.
template <class FP, class Force, class EPI, class EPJ, SearchMode M>
consteval bool checkShortRangeContracts() {
  static_assert(HasGetPos<FP>, "grove: the FP (full particle) type needs `getPos() const` returning a 3-vector");
  static_assert(HasCopyFromForce<FP, Force>, "grove: the FP (full particle) type needs `copyFromForce(const Force&)`");
  static_assert(HasGetPos<EPI>, "grove: the EPI type needs `getPos() const` returning a 3-vector");
  static_assert(HasCopyFromFP<EPI, FP>, "grove: the EPI type needs `copyFromFP(const FP&)`");
  static_assert(HasGetPos<EPJ>, "grove: the EPJ type needs `getPos() const` returning a 3-vector");
  static_assert(HasCopyFromFP<EPJ, FP>, "grove: the EPJ type needs `copyFromFP(const FP&)`");
  constexpr bool radii = ShortRangeWalkOf<M>::type::template checkTypes<EPI, EPJ>();
  static_assert(HasClear<Force>, "grove: the Force type needs `clear()`");
  static_assert(std::is_trivially_copyable_v<EPJ>, "grove: the EPJ type must be trivially copyable (it travels in LETs)");
  return HasGetPos<FP> && HasCopyFromForce<FP, Force> && HasGetPos<EPI> && HasCopyFromFP<EPI, FP> &&
         HasGetPos<EPJ> && HasCopyFromFP<EPJ, FP> && radii && HasClear<Force> && std::is_trivially_copyable_v<EPJ>;
}

/// The short-range tree of search mode M (spelled TreeForForceShort<Force, EPI, EPJ>::Gather,
/// Scatter or Symmetry). Each force call makes a local tree of this rank's particles and,
/// on several ranks or with periodic boundaries, a global tree that adds the EPJs (and periodic
/// images) other ranks send within reach of this rank's particles; kernels then get, per group
/// of at most n_group_limit particles, every EPJ within reach. What depends on the mode (which
/// radii count, which boxes cells and groups keep, the search tests of the walks and the LET) is
/// the walk policy Walk (GatherWalk, ScatterWalk, SymmetryWalk: walk/short_range_search.hpp);
/// the class runs the same stages for all three. The force calls taking a DomainInfo are
/// collective over its communicator. Misuse throws grove::Error.
template <class Force, class EPI, class EPJ, SearchMode M>
class TreeForForceShortWith : public MultiWalkCalls<TreeForForceShortWith<Force, EPI, EPJ, M>>,
                              public ParticleOrderOption,
                              public TreeStatistics,
                              public StagedInput<EPI, EPJ> {
  friend class MultiWalkCalls<TreeForForceShortWith>;
 public:
  using ForceType = Force;  ///< the force (result) type
  using EpiType = EPI;      ///< the i-particle (receiver) type
  using EpjType = EPJ;      ///< the j-particle (source) type
  static constexpr SearchMode kMode = M;  ///< the search mode: GATHER, SCATTER or SYMMETRY
  using Walk = typename ShortRangeWalkOf<M>::type;  ///< the walk policy of M (walk/short_range_search.hpp)

  /// Not usable until initialize() is called.
  TreeForForceShortWith() = default;
  /// Same as initialize(n_hint, theta, n_leaf_limit, n_group_limit). theta is accepted for
  /// FDPS's signature and unused by short-range search.
  explicit TreeForForceShortWith(std::size_t n_hint, double theta = 0.0, int n_leaf_limit = 8,
                                 int n_group_limit = 64) {
    initialize(n_hint, theta, n_leaf_limit, n_group_limit);
  }

  /// Sets the leaf size (at most n_leaf_limit particles per leaf cell) and the group size (at
  /// most n_group_limit i-particles share an interaction list), and reserves room for n_hint
  /// particles. Needed before the first force call; not collective. Throws grove::Error when
  /// either limit is not positive. The theta argument is unused.
  void initialize(std::size_t n_hint, double /*theta*/ = 0.0, int n_leaf_limit = 8, int n_group_limit = 64) {
    require(n_leaf_limit > 0, "TreeForForceShort::initialize", "n_leaf_limit must be positive, got {}", n_leaf_limit);
    require(n_group_limit > 0, "TreeForForceShort::initialize", "n_group_limit must be positive, got {}",
            n_group_limit);
    n_leaf_limit_ = n_leaf_limit;
    n_group_limit_ = n_group_limit;
    sorted_.epi.reserve(n_hint);
    initialized_ = true;
  }

  /// Makes the trees from psys's particles, calls kernel(epi, n_i, epj, n_j, force) once per
  /// group, and writes each particle's force back with copyFromForce. Collective over
  /// dinfo.comm(). clear = false adds to the forces of the previous call (kept with their
  /// particles). list_mode: MAKE_LIST (default), MAKE_LIST_FOR_REUSE (keep the lists) or
  /// REUSE_LIST (the kept lists with refreshed particle data; throws grove::Error, on every rank,
  /// when the particles were added, removed, reordered or exchanged since). Under
  /// ParticleOrder::TREE_ORDER the list-building calls reorder psys into key order.
  /// flag_serialize = true is refused (grove::Error). The particle types are checked at compile
  /// time (checkShortRangeContracts). Throws grove::Error before initialize(), and with periodic
  /// boundaries when the root domain gives no finite period or EPJ has no setPos(). Any search
  /// radius is taken: one beyond half the period meets a particle through several of its images,
  /// each an entry of the lists (as in FDPS).
  template <class Kernel, class PSys>
  void calcForceAllAndWriteBack(Kernel&& kernel, PSys& psys, const DomainInfo& dinfo, bool clear = true,
                                InteractionListMode list_mode = MAKE_LIST, bool flag_serialize = false) {
    refuseLetSerialization(flag_serialize, "calcForceAllAndWriteBack");
    if constexpr (checkShortRangeContracts<typename PSys::value_type, Force, EPI, EPJ, M>()) {
      prepare(psys, dinfo, forceStartFor(clear), list_mode, list_mode != MAKE_LIST, reorderTarget(&psys));
      computeOnHost(kernel, list_mode != MAKE_LIST);
      sorted_.writeBack(psys, profile_);
    }
  }

  /// As calcForceAllAndWriteBack() without the write-back (and without reordering psys): read
  /// the forces with getForce(i). Collective over dinfo.comm().
  template <class Kernel, class PSys>
  void calcForceAll(Kernel&& kernel, const PSys& psys, const DomainInfo& dinfo, bool clear = true,
                    InteractionListMode list_mode = MAKE_LIST, bool flag_serialize = false) {
    refuseLetSerialization(flag_serialize, "calcForceAll");
    if constexpr (checkShortRangeContracts<typename PSys::value_type, Force, EPI, EPJ, M>()) {
      prepare(psys, dinfo, forceStartFor(clear), list_mode, list_mode != MAKE_LIST);
      computeOnHost(kernel, list_mode != MAKE_LIST);
    }
  }

  /// FDPS's split stages: setParticleLocalTree loads particles (several systems in turn with
  /// clear = false); calcForceMakingTree makes the trees from them and computes the forces;
  /// getForce(i) is the force on the i-th particle loaded. calcForce and calcForceAndWriteBack
  /// compute again on the trees made last (calcForceAndWriteBack writes to psys, which must hold
  /// the particles the trees were made from, in the same order).
  /// setParticleLocalTree(psys[, clear]) comes from StagedInput (tree/staged_particles.hpp).
  /// calcForceMakingTree is collective over dinfo.comm(); its other arguments are as in
  /// calcForceAllAndWriteBack().
  template <class Kernel>
  void calcForceMakingTree(Kernel&& kernel, const DomainInfo& dinfo, bool clear = true,
                           InteractionListMode list_mode = MAKE_LIST, bool flag_serialize = false) {
    refuseLetSerialization(flag_serialize, "TreeForForceShort::calcForceMakingTree");
    prepare(staged_, dinfo, forceStartFor(clear), list_mode, list_mode != MAKE_LIST);
    computeOnHost(kernel, list_mode != MAKE_LIST);
  }
  /// Computes the forces again on the trees and groups made last, without exchanging anything
  /// (particle data as they were then). Not collective. Throws grove::Error when no trees
  /// were made yet.
  template <class Kernel>
  void calcForce(Kernel&& kernel, bool clear = true) {
    require(!groups_.empty() || sorted_.order.empty(), "TreeForForceShort::calcForce", "make the trees first");
    beginCalculation(statisticsComm());
    if (clear)
      for (auto& f : sorted_.force) f.clear();
    profile_.n_local = static_cast<std::int64_t>(sorted_.order.size());
    profile_.n_groups = static_cast<std::int64_t>(groups_.size());
    computeOnHost(kernel, false);
  }
  /// calcForce(), then the forces written to psys with copyFromForce. Needs psys to hold the
  /// particles the trees were made from, in the same order; throws grove::Error when its size
  /// differs.
  template <class Kernel, class PSys>
  void calcForceAndWriteBack(Kernel&& kernel, PSys& psys, bool clear = true) {
    require(sorted_.order.size() == psys.size(), "TreeForForceShort::calcForceAndWriteBack",
            "the trees were made from {} particles, psys holds {}", sorted_.order.size(), psys.size());
    calcForce(kernel, clear);
    sorted_.writeBack(psys, profile_);
  }

  // Multiwalk calls (calcForceAll[AndWriteBack]MultiWalk[Index]) come from MultiWalkCalls,
  // without superparticles (see grove/walk/multiwalk_driver.hpp for the signatures):
  //   dispatch(tag, n_walk, epi**, n_epi*, epj**, n_epj*)
  //   dispatch(tag, n_walk, epi**, n_epi*, id_epj**, n_epj*, epj*, n_epj_total, send_flag [, lists_unchanged])

  /// The force on the i-th particle of the last calculation's input (psys order, or the order
  /// loaded by setParticleLocalTree). Throws std::out_of_range when i is not below that count.
  const Force& getForce(std::size_t i) const { return sorted_.forceOf(i); }
  // profile(), the interaction and walk counts (accumulated, FDPS's) and getTimeProfile() come
  // from TreeStatistics (tree/tree_statistics.hpp).

  /// The EPJs within the search radius of `particle` (by this tree's mode: the particle's radius
  /// for Gather, the EPJ's for Scatter, the larger for Symmetry; strictly closer than it), from
  /// the last force calculation's tree, periodic images included (each image within the radius
  /// once: several of one particle when the radius exceeds half the period). Sets list to them
  /// and returns their count. Not collective. Thread-safe; the list stays valid until this
  /// thread's next call.
  template <class P>
  int getNeighborListOneParticle(const P& particle, EPJ*& list) const {
    thread_local std::vector<EPJ> found;
    thread_local std::vector<std::int32_t> stack;
    found.clear();
    const Vec3d x = positionOf(particle);
    const double r_i = Walk::targetRadius(particle);
    const SearchReach target{{x, x}, {x - Vec3d(r_i), x + Vec3d(r_i)}};
    const Built& t = searchSource();
    searchTree<Walk>(t.shape, t.boxes, std::span<const EPJ>(t.epj), target, Vec3d{}, stack, [&](std::uint32_t j) {
      const double r = Walk::pairRadius(r_i, t.epj[j]);
      if (norm2(positionOf(t.epj[j]) - x) < r * r) found.push_back(t.epj[j]);
    });
    list = found.data();
    return static_cast<int>(found.size());
  }

  /// The k EPJs nearest to pos among those the last calculation's tree holds (on several ranks:
  /// this rank's particles and every particle within its particles' search reach), nearest
  /// first; fewer if the tree holds fewer (none when k <= 0). Sets list to them and returns their
  /// count; the list stays valid until this thread's next call. Not collective. Thread-safe.
  int getNeighborListKNearest(const Vec3d& pos, int k, EPJ*& list) const {
    thread_local std::vector<EPJ> found;
    found.clear();
    const Built& t = searchSource();
    if (k <= 0 || t.shape.cells.empty() || t.shape.cells[0].ep_count == 0) {
      list = found.data();
      return 0;
    }
    // Best-first: cells by their distance to pos; a max-heap keeps the k best particles.
    using Entry = std::pair<double, std::uint32_t>;
    std::priority_queue<Entry, std::vector<Entry>, std::greater<>> cells;
    std::priority_queue<Entry> best;
    cells.push({0.0, 0});
    while (!cells.empty()) {
      const auto [d2, c] = cells.top();
      cells.pop();
      if (static_cast<int>(best.size()) == k && d2 > best.top().first) break;
      const TreeCell& cell = t.shape.cells[c];
      if (cell.isLeaf()) {
        for (std::uint32_t j = cell.ep_first; j < cell.ep_first + cell.ep_count; ++j) {
          const double dj = norm2(positionOf(t.epj[j]) - pos);
          if (static_cast<int>(best.size()) < k) best.push({dj, j});
          else if (dj < best.top().first) best.pop(), best.push({dj, j});
        }
      } else {
        for (int i = 0; i < cell.child_count; ++i) {
          const auto child = static_cast<std::uint32_t>(cell.child_first + i);
          cells.push({distanceToBoxSq(t.boxes[child].inner, pos), child});
        }
      }
    }
    found.resize(best.size());
    for (auto i = static_cast<std::ptrdiff_t>(best.size()) - 1; i >= 0; --i) {
      found[static_cast<std::size_t>(i)] = t.epj[best.top().second];
      best.pop();
    }
    list = found.data();
    return static_cast<int>(found.size());
  }

  /// FDPS's getEpjFromId: the EPJ with this id (EPJ::getId()) among those the last calculation's
  /// tree holds (this rank's and those received from other ranks), or null when it holds none.
  /// A particle held more than once (periodic images) gives the first copy in key order. The
  /// id -> index table is built on the first call after each calculation; not thread-safe.
  EPJ* getEpjFromId(std::int64_t id) {
    static_assert(requires(const EPJ& e) { { e.getId() } -> std::convertible_to<std::int64_t>; },
                  "grove: getEpjFromId needs `getId() const` on the EPJ type");
    Built& t = global_built_ ? global_ : local_;
    if (!id_table_valid_) {
      id_table_.clear();
      id_table_.reserve(t.epj.size());
      for (std::size_t j = 0; j < t.epj.size(); ++j)
        id_table_.try_emplace(static_cast<std::int64_t>(t.epj[j].getId()), static_cast<std::uint32_t>(j));
      id_table_valid_ = true;
    }
    const auto found = id_table_.find(id);
    return found == id_table_.end() ? nullptr : &t.epj[found->second];
  }

  /// Bytes held by the tree's arrays (capacity), FDPS's getMemSizeUsed. This rank only.
  std::size_t getMemSizeUsed() const {
    auto bytes = [](const auto& v) { return v.capacity() * sizeof(typename std::decay_t<decltype(v)>::value_type); };
    auto built = [&](const Built& b) {
      return bytes(b.ep_keys) + bytes(b.epj) + bytes(b.shape.cells) + bytes(b.shape.level_begin) + bytes(b.boxes);
    };
    return sorted_.memoryBytes() + built(local_) + built(global_) + bytes(groups_) + lists_.memoryBytes();
  }
  /// Same as getMemSizeUsed() (FDPS's other spelling).
  std::size_t getUsedMemorySize() const { return getMemSizeUsed(); }

 private:
  using StagedInput<EPI, EPJ>::staged_;  // setParticleLocalTree's particles (a dependent base)
  struct Built {
    std::vector<MortonKey> ep_keys;
    LargeVector<EPJ> epj;
    TreeShape shape;
    std::vector<CellBoxes> boxes;
  };

  static double distanceToBoxSq(const Boxd& b, const Vec3d& p) {
    double d2 = 0;
    for (std::size_t a = 0; a < 3; ++a) {
      const double d = std::max({b.low[a] - p[a], 0.0, p[a] - b.high[a]});
      d2 += d * d;
    }
    return d2;
  }

  const Built& searchSource() const { return global_built_ ? global_ : local_; }

  // reorder: psys itself when the call may reorder it (reorderTarget), else null.
  template <class PSys>
  void prepare(const PSys& psys, const DomainInfo& dinfo, ForceStart start, InteractionListMode list_mode,
               bool keep_lists, PSys* reorder = nullptr);
  template <class PSys>
  void buildTrees(const PSys& psys, const DomainInfo& dinfo, ForceStart start, bool keep_plan, PSys* reorder);
  template <class PSys>
  void refreshForReuse(const PSys& psys, const DomainInfo& dinfo, ForceStart start);
  void makeInteractionGroups();
  template <class Kernel>
  void computeOnHost(Kernel& kernel, bool from_kept_lists);
  template <bool kIndexForm, class Dispatch, class Retrieve, class PSys>
  void multiWalk(Dispatch& dispatch, Retrieve& retrieve, int tag_max, const PSys& psys, const DomainInfo& dinfo,
                 int n_walk_limit, bool clear, InteractionListMode list_mode, PSys* write_back_to) {
    if constexpr (checkShortRangeContracts<typename PSys::value_type, Force, EPI, EPJ, M>()) {
      checkMultiWalkArguments(tag_max, n_walk_limit);
      this->template pageLockTransferArrays<kIndexForm>(sorted_.epi, local_.epj, global_.epj);
      prepare(psys, dinfo, clear ? ForceStart::kClearedLater : ForceStart::kKeep, list_mode, false,
              reorderTarget(write_back_to));
      const Built& t = searchSource();
      this->template runBatches<kIndexForm>(
          dispatch, retrieve, tag_max, n_walk_limit, list_mode, clear, write_back_to, std::span<const EPJ>(t.epj),
          std::span<const NoSuperParticle>(), [&](std::size_t g, std::vector<EPJ>& ep, std::vector<NoSuperParticle>&) {
            thread_local std::vector<std::int32_t> stack;
            searchTree<Walk>(t.shape, t.boxes, std::span<const EPJ>(t.epj), groups_[g].reach, Vec3d{}, stack,
                             [&](std::uint32_t j) { ep.push_back(t.epj[j]); });
          });
    }
  }
  // The lists of groups [g0, g1) into lists_ (after lists_.reset).
  void buildListRange(std::size_t g0, std::size_t g1) {
    lists_.build(g0, g1, [&](std::size_t g, auto& ep, auto&) {
      thread_local std::vector<std::int32_t> stack;
      collectGroupList(g, ep, stack);
    });
  }
  void collectGroupList(std::size_t g, std::vector<std::int32_t>& ep, std::vector<std::int32_t>& stack) const {
    const Built& t = searchSource();
    searchTree<Walk>(t.shape, t.boxes, std::span<const EPJ>(t.epj), groups_[g].reach, Vec3d{}, stack,
                     [&](std::uint32_t j) { ep.push_back(static_cast<std::int32_t>(j)); });
  }

  int n_leaf_limit_ = 8;
  int n_group_limit_ = 64;
  bool initialized_ = false;
  SortedParticles<EPI, EPJ, Force> sorted_;
  Built local_, global_;
  bool global_built_ = false;
  struct ShortGroup {
    std::uint32_t first = 0, count = 0;
    SearchReach reach;
  };
  std::vector<ShortGroup> groups_;
  InteractionLists lists_;
  MultiwalkBuffers<EPI, EPJ, NoSuperParticle, Force> multiwalk_buffers_;
  // What MAKE_LIST_FOR_REUSE keeps besides the lists.
  struct Reuse {
    ReuseGuard guard;
    ShortRangeLetPlan let_plan;
    std::vector<std::uint32_t> global_source;
  } reuse_;
  std::unordered_map<std::int64_t, std::uint32_t> id_table_;  // getEpjFromId's, for the current tree
  bool id_table_valid_ = false;
};

template <class Force, class EPI, class EPJ, SearchMode M>
template <class PSys>
void TreeForForceShortWith<Force, EPI, EPJ, M>::prepare(const PSys& psys, const DomainInfo& dinfo, ForceStart start,
                                                         InteractionListMode list_mode, bool keep_lists,
                                                         PSys* reorder) {
  require(initialized_, "TreeForForceShort", "call initialize(n, theta, n_leaf, n_group) first");
  beginCalculation(dinfo.comm());
  id_table_valid_ = false;
  profile_.n_local = static_cast<std::int64_t>(psys.size());
  if (list_mode == REUSE_LIST) {
    refreshForReuse(psys, dinfo, start);
    profile_.n_groups = static_cast<std::int64_t>(groups_.size());
    profile_.n_cells = static_cast<std::int64_t>(local_.shape.cells.size());
    return;
  }
  buildTrees(psys, dinfo, start, list_mode == MAKE_LIST_FOR_REUSE, reorder);
  makeInteractionGroups();
  reuse_.guard.forget();
  if (keep_lists) {
    const double t = omp_get_wtime();
    lists_.reset(groups_.size());
    buildListRange(0, groups_.size());
    profile_.walk = omp_get_wtime() - t;
  }
  if (list_mode == MAKE_LIST_FOR_REUSE) reuse_.guard.record(psys, dinfo.comm());
}

template <class Force, class EPI, class EPJ, SearchMode M>
template <class PSys>
void TreeForForceShortWith<Force, EPI, EPJ, M>::refreshForReuse(const PSys& psys, const DomainInfo& dinfo, ForceStart start) {
  reuse_.guard.check(psys, dinfo.comm(), "TreeForForceShort (REUSE_LIST)");
  sorted_.refresh(psys, start, local_.epj, profile_);
  double t = omp_get_wtime();
  computeCellBoxes<Walk, EPJ>(local_.shape, std::span<const EPJ>(local_.epj), local_.boxes);
  profile_.local_moments = omp_get_wtime() - t;
  if (!global_built_) return;
  t = omp_get_wtime();
  const std::vector<EPJ> received =
      exchangeShortRangeLet(dinfo.comm(), reuse_.let_plan, std::span<const EPJ>(local_.epj), profile_);
  profile_.let_exchange = omp_get_wtime() - t;
  t = omp_get_wtime();
  replayMerge(Cpu{}, std::span<const std::uint32_t>(reuse_.global_source), std::span<const EPJ>(local_.epj),
              std::span<const EPJ>(received), std::span<EPJ>(global_.epj));
  profile_.global_tree = omp_get_wtime() - t;
  t = omp_get_wtime();
  computeCellBoxes<Walk, EPJ>(global_.shape, std::span<const EPJ>(global_.epj), global_.boxes);
  profile_.global_moments = omp_get_wtime() - t;
}

template <class Force, class EPI, class EPJ, SearchMode M>
template <class PSys>
void TreeForForceShortWith<Force, EPI, EPJ, M>::buildTrees(const PSys& psys, const DomainInfo& dinfo, ForceStart start,
                                                            bool keep_plan, PSys* reorder) {
  const Comm& comm = dinfo.comm();
  double t = omp_get_wtime();
  // Root: every rank's positions, widened by the largest search radius (where the images within
  // reach land, of whichever shell).
  Boxd bounds = boundingBox(Cpu{}, psys.particles());
  double r_max = 0.0;
  const auto n = static_cast<std::int64_t>(psys.size());
  const auto widen = [&](double r, std::int64_t i) {
    return Walk::template widenRadius<EPI, EPJ>(r, psys[static_cast<std::size_t>(i)]);
  };
  if (hostLoopsShareThreads()) {
#pragma omp parallel for reduction(max : r_max) schedule(static)
    for (std::int64_t i = 0; i < n; ++i) r_max = widen(r_max, i);
  } else {
    for (std::int64_t i = 0; i < n; ++i) r_max = widen(r_max, i);
  }
  bounds = comm.allreduceUnion(bounds);
  r_max = comm.allreduceMax(r_max);
  const Boxd outer{bounds.low - Vec3d(r_max), bounds.high + Vec3d(r_max)};
  const BoundaryCondition bc = dinfo.getBoundaryCondition();
  const std::array<bool, 3> periodic{isPeriodic(bc, 0), isPeriodic(bc, 1), isPeriodic(bc, 2)};
  const RootCell root = periodic[0] || periodic[1] || periodic[2]
                            ? periodicRootCell(outer, dinfo.getPosRootDomain(), periodic)
                            : rootCellAround(outer);

  // Periodic images: every whole period that can come within r_max of a particle (several shells
  // when r_max exceeds the period; each image within reach is an entry of the global tree).
  const std::vector<Vec3d> shifts =
      periodicImageShifts(dinfo.getBoundaryCondition(), dinfo.getPosRootDomain(), r_max, "TreeForForceShort");
  if (shifts.size() > 1)
    require(HasSetPos<EPJ>, "TreeForForceShort", "periodic boundaries need `setPos(const Vec3d&)` on the EPJ type");
  profile_.root_cell = omp_get_wtime() - t;

  sorted_.build(psys, root, start, local_.epj, local_.ep_keys, profile_, reorder);
  t = omp_get_wtime();
  linkCells(Cpu{}, local_.ep_keys, {}, n_leaf_limit_, local_.shape);
  profile_.link = omp_get_wtime() - t;
  t = omp_get_wtime();
  computeCellBoxes<Walk, EPJ>(local_.shape, std::span<const EPJ>(local_.epj), local_.boxes);
  profile_.local_moments = omp_get_wtime() - t;
  profile_.n_cells = static_cast<std::int64_t>(local_.shape.cells.size());

  global_built_ = comm.size() > 1 || shifts.size() > 1;
  if (!global_built_) return;
  const SearchReach my_reach = targetReach<Walk>(std::span<const EPI>(sorted_.epi));
  t = omp_get_wtime();
  ShortRangeLetPlan plan = planShortRangeLet<Walk, EPJ>(comm, local_.shape, local_.boxes,
                                                        std::span<const EPJ>(local_.epj), my_reach, shifts);
  profile_.let_build = omp_get_wtime() - t;
  t = omp_get_wtime();
  const std::vector<EPJ> received = exchangeShortRangeLet(comm, plan, std::span<const EPJ>(local_.epj), profile_);
  profile_.let_exchange = omp_get_wtime() - t;
  t = omp_get_wtime();
  mergeIntoSorted(root, std::span<const MortonKey>(local_.ep_keys), std::span<const EPJ>(local_.epj),
                  std::span<const EPJ>(received), global_.ep_keys, global_.epj,
                  keep_plan ? &reuse_.global_source : nullptr);
  if (keep_plan) reuse_.let_plan = std::move(plan);
  linkCells(Cpu{}, global_.ep_keys, {}, n_leaf_limit_, global_.shape);
  profile_.global_tree = omp_get_wtime() - t;
  t = omp_get_wtime();
  computeCellBoxes<Walk, EPJ>(global_.shape, std::span<const EPJ>(global_.epj), global_.boxes);
  profile_.global_moments = omp_get_wtime() - t;
}

template <class Force, class EPI, class EPJ, SearchMode M>
void TreeForForceShortWith<Force, EPI, EPJ, M>::makeInteractionGroups() {
  const double t = omp_get_wtime();
  const std::vector<InteractionGroup> cells = makeGroups(Cpu{}, local_.shape, n_group_limit_);
  groups_.resize(cells.size());
  const auto ng = static_cast<std::int64_t>(cells.size());
  forEachIndex(0, ng, [&](std::int64_t g) {
    const InteractionGroup& cell = cells[static_cast<std::size_t>(g)];
    groups_[static_cast<std::size_t>(g)] = {
        cell.first, cell.count, targetReach<Walk>(std::span<const EPI>(sorted_.epi).subspan(cell.first, cell.count))};
  });
  profile_.n_groups = ng;
  profile_.groups = omp_get_wtime() - t;
}

template <class Force, class EPI, class EPJ, SearchMode M>
template <class Kernel>
void TreeForForceShortWith<Force, EPI, EPJ, M>::computeOnHost(Kernel& kernel, bool from_kept_lists) {
  const Built& tree = searchSource();
  const double start = omp_get_wtime();
  struct Lists {
    std::vector<EPJ> ep;
    std::vector<std::int32_t> stack;
  };
  const GroupPassTotals totals = forEachGroupOnThreads<Lists>(
      groups_.size(),
      [&](std::size_t g, Lists& l) {
        l.ep.clear();
        if (from_kept_lists) {
          for (std::int32_t j : lists_.ep(g)) l.ep.push_back(tree.epj[static_cast<std::size_t>(j)]);
        } else {
          searchTree<Walk>(tree.shape, tree.boxes, std::span<const EPJ>(tree.epj), groups_[g].reach, Vec3d{},
                           l.stack, [&](std::uint32_t j) { l.ep.push_back(tree.epj[j]); });
        }
      },
      [&](std::size_t g, Lists& l) {
        const ShortGroup& group = groups_[g];
        kernel(sorted_.epi.data() + group.first, static_cast<int>(group.count), l.ep.data(),
               static_cast<int>(l.ep.size()), sorted_.force.data() + group.first);
        return GroupPairs{static_cast<std::int64_t>(group.count) * static_cast<std::int64_t>(l.ep.size()), 0};
      });
  profile_.splitWalkAndKernel(omp_get_wtime() - start, totals.walk_thread_seconds, totals.kernel_thread_seconds);
  profile_.n_ep_ep = totals.n_ep_ep;
}

/// FDPS's spelling: TreeForForceShort<Force, EPI, EPJ>::Gather and friends.
template <class Force, class EPI, class EPJ>
struct TreeForForceShort {
  /// Lists by the i-particle's search radius (EPI::getRSearch()).
  using Gather = TreeForForceShortWith<Force, EPI, EPJ, SearchMode::GATHER>;
  /// Lists by the j-particle's search radius (EPJ::getRSearch()).
  using Scatter = TreeForForceShortWith<Force, EPI, EPJ, SearchMode::SCATTER>;
  /// Lists by either particle's search radius (both types need getRSearch()).
  using Symmetry = TreeForForceShortWith<Force, EPI, EPJ, SearchMode::SYMMETRY>;

};

}  // namespace grove
