#pragma once
// The long-range opening criterion (as FDPS 7.1): a cell at level l, with edge L_l = L_root / 2^l,
// is opened for a target box when the squared distance from the box to the cell's expansion
// centre is at most (L_l / theta)^2. theta = 0 opens everything (direct summation).
#include <array>
#include <limits>
#include <span>
#include <vector>

#include "grove/tree/morton.hpp"
#include "grove/tree/tree_cells.hpp"

namespace grove {

inline double distanceMinSq(const Boxd& box, const Vec3d& p) {
  double d2 = 0.0;
  for (std::size_t a = 0; a < 3; ++a) {
    const double below = box.low[a] - p[a], above = p[a] - box.high[a];
    const double d = below > 0.0 ? below : (above > 0.0 ? above : 0.0);
    d2 += d * d;
  }
  return d2;
}

class OpeningCriterion {
 public:
  OpeningCriterion() = default;
  OpeningCriterion(const RootCell& root, double theta) {
    for (int l = 0; l <= kMortonLevels; ++l) {
      const double edge = root.cellLength(l);
      r_crit_sq_[static_cast<std::size_t>(l)] =
          theta > 0.0 ? edge * edge / (theta * theta) : std::numeric_limits<double>::infinity();
    }
  }
  bool opens(const Boxd& target, const Vec3d& cell_pos, int level) const {
    return distanceMinSq(target, cell_pos) <= r_crit_sq_[static_cast<std::size_t>(level)];
  }

 private:
  std::array<double, kMortonLevels + 1> r_crit_sq_{};
};

// Depth-first walk of a tree for one target box. Cells the criterion accepts go to
// on_far(cell); leaves it opens go to on_leaf(cell). With open_root the root is opened
// unconditionally (a group always lies inside the root, so this only matters at large theta).
template <class OnFar, class OnLeaf>
void walkTree(const TreeShape& shape, std::span<const Vec3d> cell_pos, const OpeningCriterion& criterion,
              const Boxd& target, bool open_root, std::vector<std::int32_t>& stack, OnFar&& on_far,
              OnLeaf&& on_leaf) {
  stack.clear();
  stack.push_back(0);
  bool first = true;
  while (!stack.empty()) {
    const std::int32_t index = stack.back();
    stack.pop_back();
    const TreeCell& cell = shape.cells[static_cast<std::size_t>(index)];
    if (cell.count() == 0) continue;
    const bool open = (first && open_root) ||
                      criterion.opens(target, cell_pos[static_cast<std::size_t>(index)], cell.level);
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

}  // namespace grove
