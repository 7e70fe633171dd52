#pragma once
/// @file
/// The walk policies of the long-range tree, TreeForForceLongWith's last template argument. A
/// policy says how far a group's walk reaches, what each cell keeps for that test, and how the
/// local essential tree is chosen to match; the tree class runs the same stages for all of them.
///
///     OpeningAngleWalk         Barnes-Hut: a cell far enough for theta is taken whole
///                              (walk/opening_criterion.hpp, let/local_essential_tree.hpp)
///     CutoffWalk               FDPS's SEARCH_MODE_LONG_CUTOFF: cells beyond r_cut are dropped
///                              first, periodic images come as shifted copies (walk/cutoff.hpp,
///                              let/cutoff_let.hpp)
///     SearchWalk<LongSearch>   FDPS's SEARCH_MODE_LONG_SCATTER / LONG_SYMMETRY and
///                              CALC_DISTANCE_TYPE_NEAREST_*: cells that may hold a particle within
///                              search reach are opened (walk/long_search.hpp, let/search_let.hpp)
///
/// Every policy has the same members, called by the tree at these points of a step:
///     checkTypes<EPI, EPJ>()                       the variant's compile-time contract (static_asserts)
///     setUp<EPJ, SPJ>(comm, dinfo, particles)      before the root cell; collective over comm
///     rootBounds(bounds)                           the box the root cell must cover
///     needsGlobalTree(comm)                        whether this step makes a global tree
///     computeCellData(tree) / refreshCellData(tree)  per-cell data of the walk and the LET test
///                                                  (refresh: on a REUSE_LIST step)
///     prepareGroups(groups, epi)                   per-group data (SYMMETRY: the search spheres)
///     walk(tree, criterion, groups, g, stack, on_far, on_leaf)   group g's walk
///     planLet(comm, mode, local, criterion, epi) -> Plan; exchangeLet(comm, plan, epj, cell_spj,
///                                                  profile) -> ReceivedLet
/// CutoffWalk and SearchWalk derive from OpeningAngleWalk and redefine what they change.
/// `tree` is the tree's built arrays (shape, cell_pos, cell_extent, search_boxes, epj, spj).
#include <cmath>
#include <cstdint>
#include <span>
#include <type_traits>
#include <vector>

#include "grove/comm/comm.hpp"
#include "grove/core/box.hpp"
#include "grove/core/error.hpp"
#include "grove/core/finite.hpp"
#include "grove/core/particle_traits.hpp"
#include "grove/domain/domain_info.hpp"
#include "grove/domain/periodic_images.hpp"
#include "grove/let/cutoff_let.hpp"
#include "grove/let/local_essential_tree.hpp"
#include "grove/let/search_let.hpp"
#include "grove/tree/contracts.hpp"
#include "grove/tree/groups.hpp"
#include "grove/tree/profile.hpp"
#include "grove/tree/sorted_particles.hpp"
#include "grove/tree/staged_particles.hpp"
#include "grove/walk/cutoff.hpp"
#include "grove/walk/long_search.hpp"
#include "grove/walk/opening_criterion.hpp"
#include "grove/walk/short_range_search.hpp"

namespace grove {

/// Barnes-Hut: a cell whose expansion centre is far enough for theta is taken as its
/// superparticle, any other is opened. The plain long-range tree (FDPS's SEARCH_MODE_LONG).
class OpeningAngleWalk {
 public:
  using Plan = LetPlan;  ///< what a MAKE_LIST_FOR_REUSE step keeps of the LET decision
  /// Whether getNeighborListOneParticle is available.
  static constexpr bool kSearches = false;
  /// Whether makeLocalTree(l, c) (a root cell given by the user) is allowed.
  static constexpr bool kTakesGivenRoot = true;

  /// No needs beyond the long-range contracts: true.
  template <class EPI, class EPJ>
  static constexpr bool checkTypes() {
    return true;
  }

  /// Nothing to set up.
  template <class EPJ, class SPJ, class Particles>
  void setUp(const Comm&, const DomainInfo&, const Particles&) {}
  /// The particles' bounds: the root cell covers them.
  Boxd rootBounds(const Boxd& bounds) const { return bounds; }
  /// A global tree on several ranks (to hold the received LET).
  bool needsGlobalTree(const Comm& comm) const { return comm.size() > 1; }
  /// No per-cell data beyond the moments.
  template <class Tree>
  void computeCellData(Tree&) const {}
  /// No per-cell data beyond the moments.
  template <class Tree>
  void refreshCellData(Tree&) const {}
  /// No per-group data beyond the groups' boxes.
  template <class EPI>
  void prepareGroups(std::span<const InteractionGroup>, std::span<const EPI>) {}

  /// Group g's walk (walkTree): on_far(cell) for cells taken whole, on_leaf(cell) for opened
  /// leaves. stack is scratch. The cells' own opening distances (t.cell_open_sq) where the
  /// criterion's rule has them.
  template <class Tree, class OnFar, class OnLeaf>
  void walk(const Tree& t, const OpeningCriterion& criterion, std::span<const InteractionGroup> groups, std::size_t g,
            std::vector<std::int32_t>& stack, OnFar&& on_far, OnLeaf&& on_leaf) const {
    walkTree(t.shape, t.cell_pos, criterion, groups[g].box, true, stack, on_far, on_leaf,
             std::span<const double>(t.cell_open_sq));
  }

  /// Which parts of the local tree each rank needs (planLet, by the opening criterion against
  /// each rank's box). Collective over comm.
  template <class Tree, class EPI>
  Plan planLet(const Comm& comm, LetExchangeMode mode, const Tree& local, const OpeningCriterion& criterion,
               std::span<const EPI>) const {
    return grove::planLet(comm, mode, local.shape, std::span<const Vec3d>(local.cell_pos), criterion,
                          boundingBox(Cpu{}, std::span<const typename Tree::Epj>(local.epj)),
                          std::span<const double>(local.cell_open_sq));
  }
  /// Sends the planned payloads (current values of epj and cell_spj) and returns what arrives.
  /// Collective over comm; sets profile's LET counts.
  template <class EPJ, class SPJ>
  ReceivedLet<EPJ, SPJ> exchangeLet(const Comm& comm, const Plan& plan, std::span<const EPJ> epj,
                                    std::span<const SPJ> cell_spj, TreeProfile& profile) const {
    return grove::exchangeLet<EPJ, SPJ>(comm, plan, epj, cell_spj, profile);
  }
};

/// FDPS's SEARCH_MODE_LONG_CUTOFF, for forces that vanish beyond r_cut = EPJ::getRSearch(): the
/// walks drop cells whose entries all lie beyond r_cut before the opening test, the LET is sized
/// by r_cut and carries periodic images as shifted copies, and the kernel applies the cutoff.
/// Barnes-Hut with a reach: what it does not redefine is OpeningAngleWalk's.
class CutoffWalk : public OpeningAngleWalk {
 public:
  using Plan = CutoffLetPlan;  ///< what a MAKE_LIST_FOR_REUSE step keeps of the LET decision
  static constexpr bool kTakesGivenRoot = false;  ///< the boundary and images come from the DomainInfo

  /// The EPJ carries the cutoff radius (getRSearch); a static_assert says so otherwise.
  template <class EPI, class EPJ>
  static constexpr bool checkTypes() {
    static_assert(HasCutoffRadius<EPJ>,
                  "grove: the EPJ type needs `getRSearch() const` returning the cutoff radius (cutoff trees)");
    return HasCutoffRadius<EPJ>;
  }

  /// r_cut: the largest EPJ::getRSearch() on every rank (FDPS asks for one r_cut shared by every
  /// EPJ; the largest is taken so that a mixture still finds every pair within its own radius);
  /// then the image shifts of dinfo's boundary (periodicImageShifts: every whole period that can
  /// come within r_cut, several shells when r_cut exceeds the period). Throws grove::Error on
  /// every rank when r_cut is not positive and finite, a periodic axis has no finite root domain,
  /// or periodic images need a setPos the EPJ or SPJ type lacks.
  template <class EPJ, class SPJ, class Particles>
  void setUp(const Comm& comm, const DomainInfo& dinfo, const Particles& particles) {
    double r_cut = 0.0;
    const auto n = static_cast<std::int64_t>(particles.size());
#pragma omp parallel for reduction(max : r_cut) schedule(static)
    for (std::int64_t i = 0; i < n; ++i) {
      EPJ e;
      loadEssential(e, particles[static_cast<std::size_t>(i)]);
      const double r = static_cast<double>(e.getRSearch());
      // NaN fails the comparison and lands in r_cut, to be reported below.
      r_cut = r > r_cut || r != r ? r : r_cut;
    }
    r_cut_ = comm.allreduceMax(r_cut);
    require(r_cut_ > 0.0 && isFiniteValue(r_cut_), "TreeForForceLong (cutoff)",
            "the cutoff radius (EPJ::getRSearch) must be positive and finite, got {}", r_cut_);
    boundary_ = dinfo.getBoundaryCondition();
    root_domain_ = dinfo.getPosRootDomain();
    image_shifts_ = periodicImageShifts(boundary_, root_domain_, r_cut_, "TreeForForceLong (cutoff)");
    if (image_shifts_.size() > 1) {
      require(HasSetPos<EPJ>, "TreeForForceLong (cutoff)",
              "periodic boundaries need `setPos(const Vec3d&)` on the EPJ type (images are shifted copies)");
      require(HasSetPos<SPJ>, "TreeForForceLong (cutoff)",
              "periodic boundaries need `setPos(const Vec3d&)` on the SPJ type (images are shifted copies)");
    }
  }
  /// The tree holds images up to r_cut outside the periodic box: the root covers them, so that
  /// local and global keys are relative to one cube.
  Boxd rootBounds(const Boxd& bounds) const { return cutoffTreeBounds(bounds, boundary_, root_domain_, r_cut_); }
  /// Periodic cutoff trees need a global tree on one rank too: it holds the images.
  bool needsGlobalTree(const Comm& comm) const { return comm.size() > 1 || image_shifts_.size() > 1; }
  /// The bounds of each cell's entries, the walk's and the LET's reach test.
  template <class Tree>
  void computeCellData(Tree& t) const {
    computeCellExtents(t.shape, std::span<const typename Tree::Epj>(t.epj), std::span<const typename Tree::Spj>(t.spj),
                       t.cell_extent);
  }
  // refreshCellData and prepareGroups: OpeningAngleWalk's (none). A REUSE_LIST step walks
  // nothing, so the extents of the MAKE_LIST_FOR_REUSE step stay.

  /// Group g's walk (walkTreeWithinCutoff): cells whose entries all lie beyond r_cut of the group
  /// are dropped, the others go through the opening test as in OpeningAngleWalk.
  template <class Tree, class OnFar, class OnLeaf>
  void walk(const Tree& t, const OpeningCriterion& criterion, std::span<const InteractionGroup> groups, std::size_t g,
            std::vector<std::int32_t>& stack, OnFar&& on_far, OnLeaf&& on_leaf) const {
    walkTreeWithinCutoff(t.shape, t.cell_pos, t.cell_extent, criterion, groups[g].box, r_cut_, true, stack, on_far,
                         on_leaf);
  }

  /// Which parts of the local tree, and of its periodic images, each rank needs within r_cut
  /// (planCutoffLet; alltoallv whatever the exchange mode). Collective over comm.
  template <class Tree, class EPI>
  Plan planLet(const Comm& comm, LetExchangeMode, const Tree& local, const OpeningCriterion& criterion,
               std::span<const EPI>) const {
    using EPJ = typename Tree::Epj;
    const std::span<const EPJ> epj(local.epj);
    return planCutoffLet(comm, local.shape, std::span<const Vec3d>(local.cell_pos),
                         std::span<const Boxd>(local.cell_extent), epj, criterion, r_cut_, boundingBox(Cpu{}, epj),
                         std::span<const Vec3d>(image_shifts_));
  }
  /// Sends the planned payloads (current values of epj and cell_spj) and returns what arrives.
  /// Collective over comm; sets profile's LET counts.
  template <class EPJ, class SPJ>
  ReceivedLet<EPJ, SPJ> exchangeLet(const Comm& comm, const Plan& plan, std::span<const EPJ> epj,
                                    std::span<const SPJ> cell_spj, TreeProfile& profile) const {
    return exchangeCutoffLet<EPJ, SPJ>(comm, plan, epj, cell_spj, profile);
  }

  /// The cutoff radius of the last step (0 before the first).
  double rCut() const { return r_cut_; }

 private:
  double r_cut_ = 0.0;
  std::vector<Vec3d> image_shifts_{Vec3d{}};  // zero shift first; one entry when open
  BoundaryCondition boundary_ = BoundaryCondition::OPEN;
  Boxd root_domain_ = Boxd::everything();
};

/// FDPS's SEARCH_MODE_LONG_SCATTER / LONG_SYMMETRY (kSearch.mode) with nearest-image distances
/// along kSearch.nearest_axes (CALC_DISTANCE_TYPE_NEAREST_*): the walk also opens every cell that
/// may hold a particle within search reach of the group, so such particles reach the ep-ep kernel
/// one by one, and getNeighborListOneParticle lists them. With mode NONE only the distances are
/// nearest-image ones. Barnes-Hut with a search test: the LET's plan type and exchange and the
/// root's bounds are OpeningAngleWalk's.
template <LongSearch kSearch>
class SearchWalk : public OpeningAngleWalk {
  static_assert(kSearch.active(), "grove: SearchWalk needs a search mode or nearest-image axes (else OpeningAngleWalk)");

 public:
  static constexpr bool kSearches = kSearch.searches();  ///< getNeighborListOneParticle is there
  static constexpr bool kTakesGivenRoot = false;         ///< the periods come from the DomainInfo

  /// The EPJ (and for SYMMETRY the EPI) carries the search radius; static_asserts say so otherwise.
  template <class EPI, class EPJ>
  static constexpr bool checkTypes() {
    static_assert(!kSearch.searches() || HasRSearch<EPJ>,
                  "grove: the EPJ type needs `getRSearch() const` (scatter and symmetry search trees)");
    static_assert(kSearch.mode != LongSearchMode::SYMMETRY || HasRSearch<EPI>,
                  "grove: the EPI type needs `getRSearch() const` (symmetry search trees)");
    return true;
  }

  /// The nearest-image periods: the root domain's length along each nearest-image axis. Throws
  /// grove::Error (on every rank: dinfo is the same everywhere) when that length is not finite
  /// and positive.
  template <class EPJ, class SPJ, class Particles>
  void setUp(const Comm&, const DomainInfo& dinfo, const Particles&) {
    Vec3d period{};
    const Vec3d root = dinfo.getPosRootDomain().size();
    for (std::size_t a = 0; a < 3; ++a) {
      if (!((kSearch.nearest_axes >> a) & 1u)) continue;
      require(std::isfinite(root[a]) && root[a] > 0.0, "TreeForForceLong (nearest image)",
              "distances to the nearest image along {} need the period there: the root domain is {} long; set it "
              "with DomainInfo::setPosRootDomain",
              "xyz"[a], root[a]);
      period[a] = root[a];
    }
    image_ = NearestImage(period);
  }
  /// Each cell's box of positions and of search spheres (the search test).
  template <class Tree>
  void computeCellData(Tree& t) const {
    using EPJ = typename Tree::Epj;
    if constexpr (kSearch.mode == LongSearchMode::SCATTER)
      computeCellBoxes<ScatterWalk, EPJ>(t.shape, std::span<const EPJ>(t.epj), t.search_boxes);
    if constexpr (kSearch.mode == LongSearchMode::SYMMETRY)
      computeCellBoxes<SymmetryWalk, EPJ>(t.shape, std::span<const EPJ>(t.epj), t.search_boxes);
  }
  /// A REUSE_LIST step walks nothing, but getNeighborListOneParticle reads the boxes of the
  /// particles as they are now.
  template <class Tree>
  void refreshCellData(Tree& t) const {
    computeCellData(t);
  }
  /// SYMMETRY: each group's box of its particles' search spheres.
  template <class EPI>
  void prepareGroups(std::span<const InteractionGroup> groups, std::span<const EPI> epi) {
    if constexpr (kSearch.mode == LongSearchMode::SYMMETRY) {
      group_search_box_.assign(groups.size(), Boxd::empty());
      const auto ng = static_cast<std::int64_t>(groups.size());
#pragma omp parallel for schedule(static)
      for (std::int64_t g = 0; g < ng; ++g) {
        const InteractionGroup& group = groups[static_cast<std::size_t>(g)];
        for (std::uint32_t i = group.first; i < group.first + group.count; ++i)
          group_search_box_[static_cast<std::size_t>(g)].merge(searchBoxOf(epi[i]));
      }
    }
  }

  /// Group g's walk (walkTreeWithSearch): a cell is opened when the opening criterion (at
  /// nearest-image distances) or the search test asks for it.
  template <class Tree, class OnFar, class OnLeaf>
  void walk(const Tree& t, const OpeningCriterion& criterion, std::span<const InteractionGroup> groups, std::size_t g,
            std::vector<std::int32_t>& stack, OnFar&& on_far, OnLeaf&& on_leaf) const {
    walkTreeWithSearch<kSearch.mode>(t.shape, t.cell_pos, t.search_boxes, criterion, groupReach(groups, g), image_,
                                     true, stack, on_far, on_leaf);
  }

  /// Which parts of the local tree each rank needs, by the opening criterion and the search test
  /// against each rank's i-particles (planSearchLet). Collective over comm.
  template <class Tree, class EPI>
  Plan planLet(const Comm& comm, LetExchangeMode mode, const Tree& local, const OpeningCriterion& criterion,
               std::span<const EPI> epi) const {
    SearchReach my_reach;
    my_reach.inner = boundingBox(Cpu{}, epi);
    if constexpr (kSearch.mode == LongSearchMode::SYMMETRY)
      for (const EPI& e : epi) my_reach.outer.merge(searchBoxOf(e));
    return planSearchLet<kSearch.mode>(comm, mode, local.shape, std::span<const Vec3d>(local.cell_pos),
                                       std::span<const CellBoxes>(local.search_boxes), criterion, my_reach, image_);
  }

  /// The EPJs of t within search reach of `particle` (strictly closer than the EPJ's radius for
  /// SCATTER, than the larger of the two radii for SYMMETRY; nearest-image distances where
  /// measured), appended to found. stack is scratch.
  template <class Tree, class P>
  void neighboursOf(const Tree& t, const P& particle, std::vector<typename Tree::Epj>& found,
                    std::vector<std::int32_t>& stack) const
    requires(kSearch.searches())
  {
    const Vec3d x = positionOf(particle);
    double r_i = 0.0;
    if constexpr (kSearch.mode == LongSearchMode::SYMMETRY) r_i = static_cast<double>(particle.getRSearch());
    const SearchReach target{{x, x}, {x - Vec3d(r_i), x + Vec3d(r_i)}};
    searchCandidates<kSearch.mode>(t.shape, std::span<const CellBoxes>(t.search_boxes), target, image_, stack,
                                   [&](std::uint32_t j) {
                                     const double r = std::max(r_i, static_cast<double>(t.epj[j].getRSearch()));
                                     if (norm2(image_.difference(positionOf(t.epj[j]), x)) < r * r)
                                       found.push_back(t.epj[j]);
                                   });
  }

 private:
  // Group g's positions and (SYMMETRY) its particles' search spheres.
  SearchReach groupReach(std::span<const InteractionGroup> groups, std::size_t g) const {
    if constexpr (kSearch.mode == LongSearchMode::SYMMETRY) return {groups[g].box, group_search_box_[g]};
    else return {groups[g].box, groups[g].box};
  }

  NearestImage image_;
  std::vector<Boxd> group_search_box_;  // SYMMETRY: per group, the box of its search spheres
};

/// The walk policy of a LongSearch option: SearchWalk when it searches or measures nearest-image
/// distances, OpeningAngleWalk otherwise.
template <LongSearch kSearch>
struct LongWalkOf {
  using type = SearchWalk<kSearch>;  ///< the walk policy
};
/// A LongSearch that neither searches nor measures nearest-image distances: plain Barnes-Hut.
template <>
struct LongWalkOf<LongSearch{}> {
  using type = OpeningAngleWalk;  ///< the walk policy
};

}  // namespace grove
