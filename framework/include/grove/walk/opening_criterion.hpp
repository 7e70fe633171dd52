#pragma once
/// @file
/// The long-range opening criterion. FDPS 7.1's (the default): a cell at level l, with edge
/// L_l = L_root / 2^l (the Morton cube's, whatever its particles fill), is opened for a target
/// box (a group's bounding box) when the squared distance from the box to the cell's expansion
/// centre (its moment's position: the centre of mass for grove's centre-of-mass moments) is at
/// most (L_l / theta)^2. theta = 0 opens everything (direct summation).
///
/// OpeningRule picks another test with the same target and distance, each cell with an opening
/// distance of its own (OpeningCriterion::cellOpeningSq):
///   kFdps      L_l / theta                                     (per level, as above)
///   kNakasato  L_l / theta + s, s = |expansion centre - cube centre|
///   kRmax      r_max / theta, r_max = the largest distance from the expansion centre to a corner
///              of the tight box of the cell's entries (particles and received superparticles):
///              Dehnen's (falcON) and Bonsai's size, an upper bound on the distance to any body
///              of the cell. The multipole's error at distance d is bounded by a power of
///              r_max / d, so the test measures what the error depends on: a cell whose bodies
///              fill a corner of its cube (leaves of few bodies, cells on a surface) is accepted
///              nearer, one whose centre of mass sits off-centre is opened farther.
/// theta = 0 opens everything for each rule.
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "grove/tree/morton.hpp"
#include "grove/tree/tree_cells.hpp"

namespace grove {

/// Squared distance from p to the nearest point of box (0 when p is inside).
GROVE_HOST_DEVICE inline double distanceMinSq(const Boxd& box, const Vec3d& p) {
  double d2 = 0.0;
  for (std::size_t a = 0; a < 3; ++a) {
    const double below = box.low[a] - p[a], above = p[a] - box.high[a];
    const double d = below > 0.0 ? below : (above > 0.0 ? above : 0.0);
    d2 += d * d;
  }
  return d2;
}

/// Which opening test the long-range walks use (see the top of the file). FDPS's is the default
/// of every tree; the others are options (TreeForForceLong's setOpeningRule,
/// gpu::ResidentTreeOptions::opening).
enum class OpeningRule : std::uint8_t {
  kFdps,      ///< FDPS's: distance from the group box to the expansion centre at most L_level / theta
  kNakasato,  ///< Nakasato's L_level / theta + s (s: distance of the expansion centre from the cube's centre)
  kRmax,      ///< r_max / theta (r_max: expansion centre to the farthest corner of the entries' tight box)
};

/// The rule's name as the benchmarks print it ("fdps", "nakasato", "rmax").
inline const char* openingRuleName(OpeningRule rule) {
  return rule == OpeningRule::kFdps ? "fdps" : rule == OpeningRule::kNakasato ? "nakasato" : "rmax";
}

/// The centre of the Morton cube (prefix, level) of root. Host and device (the same arithmetic).
GROVE_HOST_DEVICE inline Vec3d cubeCentre(const RootCell& root, MortonKey prefix, int level) {
  std::uint32_t c[3];
  cellCoordinates(prefix, level, c);
  const double edge = ::ldexp(root.length, -level);
  return {root.low.x + (c[0] + 0.5) * edge, root.low.y + (c[1] + 0.5) * edge, root.low.z + (c[2] + 0.5) * edge};
}

/// The largest distance from p to a corner of box, squared (0 for an empty box).
GROVE_HOST_DEVICE inline double farthestCornerSq(const Boxd& box, const Vec3d& p) {
  double d2 = 0.0;
  for (std::size_t a = 0; a < 3; ++a) {
    if (box.low[a] > box.high[a]) return 0.0;
    const double below = p[a] - box.low[a], above = box.high[a] - p[a];
    const double d = below > above ? below : above;
    d2 += d * d;
  }
  return d2;
}

/// The opening test of the long-range walks, with each level's opening distance precomputed.
class OpeningCriterion {
 public:
  /// A placeholder until assigned: every opening distance is 0 (a cell opens only when its
  /// centre lies in the target box).
  OpeningCriterion() = default;
  /// The criterion for the tree over `root` with opening angle theta (>= 0; 0: open every cell).
  /// rule: see OpeningRule (the per-level distances below are FDPS's whatever the rule).
  OpeningCriterion(const RootCell& root, double theta, OpeningRule rule = OpeningRule::kFdps)
      : inv_theta_sq_(theta > 0.0 ? 1.0 / (theta * theta) : std::numeric_limits<double>::infinity()), rule_(rule) {
    for (int l = 0; l <= kMortonLevels; ++l) {
      const double edge = root.cellLength(l);
      r_crit_sq_[static_cast<std::size_t>(l)] =
          theta > 0.0 ? edge * edge / (theta * theta) : std::numeric_limits<double>::infinity();
    }
  }
  /// Whether a cell at `level` (0 to kMortonLevels) with expansion centre cell_pos is opened for
  /// the target box.
  GROVE_HOST_DEVICE bool opens(const Boxd& target, const Vec3d& cell_pos, int level) const {
    return opensAt(distanceMinSq(target, cell_pos), level);
  }
  /// The same test for a distance measured by the caller (e.g. to the nearest periodic image).
  GROVE_HOST_DEVICE bool opensAt(double distance_sq, int level) const {
    return distance_sq <= r_crit_sq_[static_cast<std::size_t>(level)];
  }
  /// The squared opening distance of a cell at `level`: (L_level / theta)^2, infinite at theta 0.
  GROVE_HOST_DEVICE double rCritSq(int level) const { return r_crit_sq_[static_cast<std::size_t>(level)]; }
  /// The rule in use.
  GROVE_HOST_DEVICE OpeningRule rule() const { return rule_; }
  /// Whether each cell has an opening distance of its own (every rule but kFdps): the walks then
  /// read per-cell distances (cellOpeningSq) instead of rCritSq(level).
  GROVE_HOST_DEVICE bool perCell() const { return rule_ != OpeningRule::kFdps; }
  /// The squared opening distance of one cell under the rule: a target box whose distance to
  /// `pos` (the expansion centre) is at most this opens it. level: the cell's; cube_centre: its
  /// Morton cube's centre (kNakasato); extent: the tight box of its entries (kRmax). Infinite at
  /// theta 0. Host and device evaluate the same arithmetic.
  /// holds_superparticles: the cell's entries include received superparticles (sp_count > 0).
  /// Their extents are not known here (they arrive as points), so under kRmax such a cell is
  /// opened at least as far out as FDPS's L_level / theta: without that floor, r_max from their
  /// positions alone underestimated those cells and the p99 error at 2 ranks was 6x one rank's.
  GROVE_HOST_DEVICE double cellOpeningSq(int level, const Vec3d& pos, const Vec3d& cube_centre, const Boxd& extent,
                                         bool holds_superparticles = false) const {
    const double r2 = rCritSq(level);
    if (rule_ == OpeningRule::kFdps || inv_theta_sq_ == std::numeric_limits<double>::infinity()) return r2;
    if (rule_ == OpeningRule::kNakasato) {
      const double r = ::sqrt(r2) + ::sqrt(norm2(pos - cube_centre));
      return r * r;
    }
    const double rmax2 = farthestCornerSq(extent, pos) * inv_theta_sq_;
    return holds_superparticles && r2 > rmax2 ? r2 : rmax2;
  }
  /// The same criterion for particles that are no cell of the tree (another rank's, as a whole):
  /// the edge is the longest side of their box `extent`, the distance is from target to centre
  /// (kRmax: r_max is the farthest corner of extent from centre, as for a cell).
  /// theta = 0 opens everything.
  GROVE_HOST_DEVICE bool opensExtent(const Boxd& target, const Vec3d& centre, const Boxd& extent) const {
    if (rule_ == OpeningRule::kRmax)
      return inv_theta_sq_ == std::numeric_limits<double>::infinity() ||
             distanceMinSq(target, centre) <= farthestCornerSq(extent, centre) * inv_theta_sq_;
    double edge = 0.0;
    for (std::size_t a = 0; a < 3; ++a) edge = edge > extent.high[a] - extent.low[a] ? edge : extent.high[a] - extent.low[a];
    const double d2 = distanceMinSq(target, centre);
    return inv_theta_sq_ == std::numeric_limits<double>::infinity() || d2 <= edge * edge * inv_theta_sq_;
  }

 private:
  std::array<double, kMortonLevels + 1> r_crit_sq_{};
  double inv_theta_sq_ = 0.0;
  OpeningRule rule_ = OpeningRule::kFdps;
};

/// The depth-first walk every long-range tree shares. From the root: a cell that skip(c) drops
/// is left out with its subtree; a cell that opens(c, cell) does not open goes to on_far(c); an
/// opened leaf goes to on_leaf(cell); an opened inner cell gives its children. With open_root the
/// root is opened unconditionally (a group always lies inside the root, so this only matters at
/// large theta). The plain, cutoff (walk/cutoff.hpp) and search (walk/long_search.hpp) walks
/// differ only in skip and opens. Empty cells are skipped; children are visited in Morton order.
/// stack is scratch (cleared first), kept by the caller to reuse its memory. Needs a non-empty
/// shape (cells[0] the root).
template <class Skip, class Opens, class OnFar, class OnLeaf>
void walkCells(const TreeShape& shape, bool open_root, std::vector<std::int32_t>& stack, Skip&& skip, Opens&& opens,
               OnFar&& on_far, OnLeaf&& on_leaf) {
  stack.clear();
  stack.push_back(0);
  bool first = true;
  while (!stack.empty()) {
    const std::int32_t index = stack.back();
    stack.pop_back();
    const auto c = static_cast<std::size_t>(index);
    const TreeCell& cell = shape.cells[c];
    if (cell.count() == 0 || skip(c)) {
      first = false;
      continue;
    }
    const bool open = (first && open_root) || opens(c, cell);
    first = false;
    if (!open) {
      on_far(index);
    } else if (cell.isLeaf()) {
      on_leaf(cell);
    } else {
      for (int k = cell.child_count - 1; k >= 0; --k) stack.push_back(cell.child_first + k);
    }
  }
}

/// Barnes-Hut walk for one target box: cells the criterion accepts go to on_far(c) (c the cell
/// index), leaves it opens to on_leaf(cell). cell_pos: each cell's expansion centre, indexed like
/// shape.cells. cell_open_sq: empty for FDPS's per-level distances, else each cell's squared
/// opening distance (cellOpeningSqOf, for the criterion's other rules).
template <class OnFar, class OnLeaf>
void walkTree(const TreeShape& shape, std::span<const Vec3d> cell_pos, const OpeningCriterion& criterion,
              const Boxd& target, bool open_root, std::vector<std::int32_t>& stack, OnFar&& on_far,
              OnLeaf&& on_leaf, std::span<const double> cell_open_sq = {}) {
  if (cell_open_sq.empty()) {
    walkCells(
        shape, open_root, stack, [](std::size_t) { return false; },
        [&](std::size_t c, const TreeCell& cell) { return criterion.opens(target, cell_pos[c], cell.level); }, on_far,
        on_leaf);
  } else {
    walkCells(
        shape, open_root, stack, [](std::size_t) { return false; },
        [&](std::size_t c, const TreeCell&) { return distanceMinSq(target, cell_pos[c]) <= cell_open_sq[c]; },
        on_far, on_leaf);
  }
}

/// Each cell's squared opening distance under criterion's rule (criterion.perCell()), indexed like
/// shape.cells: from its expansion centre cell_pos, its cube of root, and the tight box of its
/// entries (extent, from computeCellExtents; read by kRmax only).
inline void cellOpeningSqOf(const TreeShape& shape, const RootCell& root, std::span<const Vec3d> cell_pos,
                            std::span<const Boxd> extent, const OpeningCriterion& criterion,
                            std::vector<double>& cell_open_sq) {
  cell_open_sq.resize(shape.cells.size());
  const auto nc = static_cast<std::int64_t>(shape.cells.size());
#pragma omp parallel for schedule(static)
  for (std::int64_t k = 0; k < nc; ++k) {
    const auto c = static_cast<std::size_t>(k);
    const TreeCell& cell = shape.cells[c];
    cell_open_sq[c] = criterion.cellOpeningSq(cell.level, cell_pos[c], cubeCentre(root, cell.prefix, cell.level),
                                              extent.empty() ? Boxd::empty() : extent[c], cell.sp_count > 0);
  }
}

}  // namespace grove
