#pragma once
/// @file
/// Short-range search: which j-particles a target (a group of i-particles, or a whole rank) may
/// interact with, by mode:
///
///     GATHER   j within the search radius of some i      (j position inside the i search boxes)
///     SCATTER  i within the search radius of some j      (j search box overlaps the i positions;
///                                                          one j: its sphere reaches their box)
///     SYMMETRY either
///
/// Cells carry two boxes: `inner` bounds their particles' positions, `outer` their search boxes.
/// All tests use closed boxes (ScatterWalk's test of one j its closed sphere), so the selection is
/// a superset of the exact neighbours.
///
/// Each mode is a walk policy, a small type that the short-range tree, its LET and the long-range
/// search trees call instead of branching on the mode: GatherWalk, ScatterWalk and SymmetryWalk
/// (ShortRangeWalkOf<M>::type names the one of a SearchMode). Each has
///     checkTypes<EPI, EPJ>()          which particle types carry a radius (static_asserts)
///     widenRadius<EPI, EPJ>(r, fp)    the largest search radius so far, fp's included (the root's margin)
///     targetRadius(p)                 the radius a target (an i-particle, a query) searches with
///     pairRadius(r_i, epj)            the distance within which j is a neighbour of i
///     addTarget(reach, epi)           what a target keeps: positions, and search boxes (GATHER, SYMMETRY)
///     addSource(boxes, epj)           what a leaf keeps: positions, and search boxes (SCATTER, SYMMETRY)
///     cellNeeded / particleNeeded     the search tests, of a cell and of one j-particle
/// SymmetryWalk is GatherWalk's test or ScatterWalk's.
#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "grove/core/box.hpp"
#include "grove/core/execution.hpp"
#include "grove/core/particle_traits.hpp"
#include "grove/tree/staged_particles.hpp"
#include "grove/tree/tree_cells.hpp"

namespace grove {

/// Which pairs a short-range search selects.
enum class SearchMode {
  GATHER,   ///< j within the search radius of some i
  SCATTER,  ///< i within the search radius of some j
  SYMMETRY  ///< either
};

/// The two boxes of a cell (or of a target).
struct CellBoxes {
  Boxd inner = Boxd::empty();  ///< bounds of the positions
  Boxd outer = Boxd::empty();  ///< bounds of the search boxes, positions +- search radius (SCATTER, SYMMETRY)
};

/// The i-side of a search: positions and search boxes of the targets.
using SearchReach = CellBoxes;

/// Whether closed boxes a and b share a point (touching counts).
GROVE_HOST_DEVICE inline bool overlapsClosed(const Boxd& a, const Boxd& b) {
  return a.low.x <= b.high.x && b.low.x <= a.high.x && a.low.y <= b.high.y && b.low.y <= a.high.y &&
         a.low.z <= b.high.z && b.low.z <= a.high.z;
}

/// b translated by s.
GROVE_HOST_DEVICE inline Boxd shifted(const Boxd& b, const Vec3d& s) { return {b.low + s, b.high + s}; }

/// GATHER: j is a neighbour of i within i's search radius (EPI::getRSearch). Targets keep their
/// positions and search boxes, cells their positions only.
struct GatherWalk {
  static constexpr SearchMode kMode = SearchMode::GATHER;  ///< the mode this policy searches by

  /// The EPI carries the search radius (getRSearch); a static_assert says so otherwise.
  template <class EPI, class EPJ>
  static constexpr bool checkTypes() {
    static_assert(HasRSearch<EPI>, "grove: the EPI type needs `getRSearch() const` (Gather and Symmetry search)");
    return HasRSearch<EPI>;
  }
  /// max(r, the search radius of fp loaded as an EPI); a NaN radius is passed over (std::max keeps r).
  template <class EPI, class EPJ, class FP>
  static double widenRadius(double r, const FP& fp) {
    EPI e;
    loadEssential(e, fp);
    return std::max(r, static_cast<double>(e.getRSearch()));
  }
  /// The radius p searches with: its own.
  template <class P>
  static double targetRadius(const P& p) {
    return static_cast<double>(p.getRSearch());
  }
  /// j is a neighbour of an i of radius r_i when strictly closer than r_i.
  template <class EPJ>
  static double pairRadius(double r_i, const EPJ&) {
    return r_i;
  }
  /// A target keeps i's position and search box.
  template <class EPI>
  static void addTarget(SearchReach& reach, const EPI& i) {
    reach.inner.merge(positionOf(i));
    reach.outer.merge(searchBoxOf(i));
  }
  /// A leaf keeps j's position (its outer box stays empty).
  template <class EPJ>
  static void addSource(CellBoxes& boxes, const EPJ& j) {
    boxes.inner.merge(positionOf(j));
  }
  /// Whether the cell, seen translated by shift, may hold a position inside the target's search
  /// boxes.
  static bool cellNeeded(const CellBoxes& cell, const SearchReach& target, const Vec3d& shift) {
    return overlapsClosed(shifted(cell.inner, shift), target.outer);
  }
  /// Whether j, seen translated by shift, lies inside the target's search boxes.
  template <class EPJ>
  static bool particleNeeded(const EPJ& j, const SearchReach& target, const Vec3d& shift) {
    return target.outer.containsClosed(positionOf(j) + shift);
  }
};

/// SCATTER: j is a neighbour of i within j's search radius (EPJ::getRSearch). Targets keep their
/// positions only, cells their positions and search boxes.
struct ScatterWalk {
  static constexpr SearchMode kMode = SearchMode::SCATTER;  ///< the mode this policy searches by

  /// The EPJ carries the search radius (getRSearch); a static_assert says so otherwise.
  template <class EPI, class EPJ>
  static constexpr bool checkTypes() {
    static_assert(HasRSearch<EPJ>, "grove: the EPJ type needs `getRSearch() const` (Scatter and Symmetry search)");
    return HasRSearch<EPJ>;
  }
  /// max(r, the search radius of fp loaded as an EPJ); a NaN radius is passed over (std::max keeps r).
  template <class EPI, class EPJ, class FP>
  static double widenRadius(double r, const FP& fp) {
    EPJ e;
    loadEssential(e, fp);
    return std::max(r, static_cast<double>(e.getRSearch()));
  }
  /// The radius a target searches with: none, 0 (the sources' radii decide).
  template <class P>
  static double targetRadius(const P&) {
    return 0.0;
  }
  /// j is a neighbour of i when strictly closer than j's radius (r_i is not used).
  template <class EPJ>
  static double pairRadius(double, const EPJ& j) {
    return static_cast<double>(j.getRSearch());
  }
  /// A target keeps i's position (its outer box stays empty).
  template <class EPI>
  static void addTarget(SearchReach& reach, const EPI& i) {
    reach.inner.merge(positionOf(i));
  }
  /// A leaf keeps j's position and search box.
  template <class EPJ>
  static void addSource(CellBoxes& boxes, const EPJ& j) {
    boxes.inner.merge(positionOf(j));
    boxes.outer.merge(searchBoxOf(j));
  }
  /// Whether the cell's search boxes, seen translated by shift, may reach the target's positions.
  static bool cellNeeded(const CellBoxes& cell, const SearchReach& target, const Vec3d& shift) {
    return overlapsClosed(shifted(cell.outer, shift), target.inner);
  }
  /// Whether j's search sphere, seen translated by shift, reaches the target's positions: the
  /// distance from j to their box is at most j's radius (as FDPS selects). The sphere, not its
  /// box: the box's corners reach past the sphere, and for a radius large against a group's box
  /// (water's 28 A against ~10 A) they held a third of the pairs a kernel was given, none of them
  /// neighbours. Rounding cannot drop a neighbour: the box's faces are i positions, so each axis
  /// gap is at most that axis's |x_i - x_j| as computed; the slack of 1e-12 covers a kernel that
  /// sums the squares otherwise (fused multiply-adds).
  template <class EPJ>
  static bool particleNeeded(const EPJ& j, const SearchReach& target, const Vec3d& shift) {
    const Vec3d x = positionOf(j) + shift;
    const double r = static_cast<double>(j.getRSearch());
    double d2 = 0.0;
    for (std::size_t a = 0; a < 3; ++a) {
      const double below = target.inner.low[a] - x[a], above = x[a] - target.inner.high[a];
      const double d = below > 0.0 ? below : (above > 0.0 ? above : 0.0);
      d2 += d * d;
    }
    // A negative or NaN radius reaches nothing, as its (empty) box did.
    return r >= 0.0 && !target.inner.isEmpty() && d2 <= r * r * (1.0 + 1e-12);
  }
};

/// SYMMETRY: j is a neighbour of i within the larger of both radii. Targets keep what
/// GatherWalk's keep, cells what ScatterWalk's keep, and a cell or particle is needed by either
/// test.
struct SymmetryWalk {
  static constexpr SearchMode kMode = SearchMode::SYMMETRY;  ///< the mode this policy searches by

  /// Both the EPI and the EPJ carry the search radius; static_asserts say so otherwise.
  template <class EPI, class EPJ>
  static constexpr bool checkTypes() {
    constexpr bool gather = GatherWalk::checkTypes<EPI, EPJ>();
    constexpr bool scatter = ScatterWalk::checkTypes<EPI, EPJ>();
    return gather && scatter;
  }
  /// max(r, fp's radius as an EPI, fp's radius as an EPJ), in that order.
  template <class EPI, class EPJ, class FP>
  static double widenRadius(double r, const FP& fp) {
    return ScatterWalk::widenRadius<EPI, EPJ>(GatherWalk::widenRadius<EPI, EPJ>(r, fp), fp);
  }
  /// The radius p searches with: its own (GatherWalk's).
  template <class P>
  static double targetRadius(const P& p) {
    return GatherWalk::targetRadius(p);
  }
  /// j is a neighbour of an i of radius r_i when strictly closer than the larger radius.
  template <class EPJ>
  static double pairRadius(double r_i, const EPJ& j) {
    return std::max(r_i, static_cast<double>(j.getRSearch()));
  }
  /// A target keeps i's position and search box (GatherWalk's).
  template <class EPI>
  static void addTarget(SearchReach& reach, const EPI& i) {
    GatherWalk::addTarget(reach, i);
  }
  /// A leaf keeps j's position and search box (ScatterWalk's).
  template <class EPJ>
  static void addSource(CellBoxes& boxes, const EPJ& j) {
    ScatterWalk::addSource(boxes, j);
  }
  /// GatherWalk's test, else ScatterWalk's.
  static bool cellNeeded(const CellBoxes& cell, const SearchReach& target, const Vec3d& shift) {
    return GatherWalk::cellNeeded(cell, target, shift) || ScatterWalk::cellNeeded(cell, target, shift);
  }
  /// GatherWalk's test, else ScatterWalk's.
  template <class EPJ>
  static bool particleNeeded(const EPJ& j, const SearchReach& target, const Vec3d& shift) {
    return GatherWalk::particleNeeded(j, target, shift) || ScatterWalk::particleNeeded(j, target, shift);
  }
};

/// The walk policy of search mode M: GatherWalk, ScatterWalk or SymmetryWalk.
template <SearchMode M>
struct ShortRangeWalkOf;
/// SearchMode::GATHER's policy.
template <>
struct ShortRangeWalkOf<SearchMode::GATHER> {
  using type = GatherWalk;  ///< the walk policy
};
/// SearchMode::SCATTER's policy.
template <>
struct ShortRangeWalkOf<SearchMode::SCATTER> {
  using type = ScatterWalk;  ///< the walk policy
};
/// SearchMode::SYMMETRY's policy.
template <>
struct ShortRangeWalkOf<SearchMode::SYMMETRY> {
  using type = SymmetryWalk;  ///< the walk policy
};

/// The reach of the targets epi, as Walk's targets keep it: the box of their positions, and
/// (GatherWalk, SymmetryWalk) of their search spheres. A group's reach, or a whole rank's.
template <class Walk, class EPI>
SearchReach targetReach(std::span<const EPI> epi) {
  SearchReach reach;
  for (const EPI& i : epi) Walk::addTarget(reach, i);
  return reach;
}

/// Bottom-up cell boxes over the tree's EPJs (SPJs are not included), indexed like shape.cells;
/// each leaf keeps what Walk::addSource adds (GatherWalk: the outer boxes stay empty).
template <class Walk, class EPJ>
void computeCellBoxes(const TreeShape& shape, std::span<const EPJ> epj, std::vector<CellBoxes>& boxes) {
  boxes.assign(shape.cells.size(), CellBoxes{});
  forEachCellBottomUp(shape, [&](std::size_t c, const TreeCell& cell) {
    CellBoxes& b = boxes[c];
    if (cell.isLeaf()) {
      for (std::uint32_t i = cell.ep_first; i < cell.ep_first + cell.ep_count; ++i) Walk::addSource(b, epj[i]);
    } else {
      for (int k = 0; k < cell.child_count; ++k) {
        const CellBoxes& child = boxes[static_cast<std::size_t>(cell.child_first + k)];
        b.inner.merge(child.inner);
        b.outer.merge(child.outer);
      }
    }
  });
}

/// Calls on_particle(index) for every EPJ the target may need, with the tree seen shifted by
/// `shift`, by Walk's tests. boxes: from computeCellBoxes with the same Walk; stack is scratch
/// (cleared first).
template <class Walk, class EPJ, class OnParticle>
void searchTree(const TreeShape& shape, std::span<const CellBoxes> boxes, std::span<const EPJ> epj,
                const SearchReach& target, const Vec3d& shift, std::vector<std::int32_t>& stack,
                OnParticle&& on_particle) {
  if (shape.cells.empty() || shape.cells[0].ep_count == 0) return;
  stack.clear();
  stack.push_back(0);
  while (!stack.empty()) {
    const auto index = static_cast<std::size_t>(stack.back());
    stack.pop_back();
    if (!Walk::cellNeeded(boxes[index], target, shift)) continue;
    const TreeCell& cell = shape.cells[index];
    if (cell.isLeaf()) {
      for (std::uint32_t i = cell.ep_first; i < cell.ep_first + cell.ep_count; ++i)
        if (Walk::particleNeeded(epj[i], target, shift)) on_particle(i);
    } else {
      for (int k = cell.child_count - 1; k >= 0; --k) stack.push_back(cell.child_first + k);
    }
  }
}

}  // namespace grove
