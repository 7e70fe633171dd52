#pragma once
/// @file
/// The long-range opening criterion (as FDPS 7.1): a cell at level l, with edge L_l = L_root / 2^l,
/// is opened for a target box when the squared distance from the box to the cell's expansion
/// centre is at most (L_l / theta)^2. theta = 0 opens everything (direct summation).
#include <array>
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

/// The opening test of the long-range walks, with each level's opening distance precomputed.
class OpeningCriterion {
 public:
  /// A placeholder until assigned: every opening distance is 0 (a cell opens only when its
  /// centre lies in the target box).
  OpeningCriterion() = default;
  /// The criterion for the tree over `root` with opening angle theta (>= 0; 0: open every cell).
  OpeningCriterion(const RootCell& root, double theta)
      : inv_theta_sq_(theta > 0.0 ? 1.0 / (theta * theta) : std::numeric_limits<double>::infinity()) {
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
  /// The same criterion for particles that are no cell of the tree (another rank's, as a whole):
  /// the edge is the longest side of their box `extent`, the distance is from target to centre.
  /// theta = 0 opens everything.
  GROVE_HOST_DEVICE bool opensExtent(const Boxd& target, const Vec3d& centre, const Boxd& extent) const {
    double edge = 0.0;
    for (std::size_t a = 0; a < 3; ++a) edge = edge > extent.high[a] - extent.low[a] ? edge : extent.high[a] - extent.low[a];
    const double d2 = distanceMinSq(target, centre);
    return inv_theta_sq_ == std::numeric_limits<double>::infinity() || d2 <= edge * edge * inv_theta_sq_;
  }

 private:
  std::array<double, kMortonLevels + 1> r_crit_sq_{};
  double inv_theta_sq_ = 0.0;
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
/// shape.cells.
template <class OnFar, class OnLeaf>
void walkTree(const TreeShape& shape, std::span<const Vec3d> cell_pos, const OpeningCriterion& criterion,
              const Boxd& target, bool open_root, std::vector<std::int32_t>& stack, OnFar&& on_far,
              OnLeaf&& on_leaf) {
  walkCells(
      shape, open_root, stack, [](std::size_t) { return false; },
      [&](std::size_t c, const TreeCell& cell) { return criterion.opens(target, cell_pos[c], cell.level); }, on_far,
      on_leaf);
}

}  // namespace grove
