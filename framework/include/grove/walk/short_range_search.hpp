#pragma once
/// @file
/// Short-range search: which j-particles a target (a group of i-particles, or a whole rank) may
/// interact with, by mode:
///
///     GATHER   j within the search radius of some i      (j position inside the i search boxes)
///     SCATTER  i within the search radius of some j      (j search box overlaps the i positions)
///     SYMMETRY either
///
/// Cells carry two boxes: `inner` bounds their particles' positions, `outer` their search boxes.
/// All tests use closed boxes, so the selection is a superset of the exact neighbours.
#include <cstdint>
#include <span>
#include <vector>

#include "grove/core/box.hpp"
#include "grove/core/execution.hpp"
#include "grove/core/particle_traits.hpp"
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

/// Whether a cell, seen translated by shift, may hold a j-particle the target needs under mode M.
template <SearchMode M>
bool cellNeeded(const CellBoxes& cell, const SearchReach& target, const Vec3d& shift) {
  const bool gather = M != SearchMode::SCATTER && overlapsClosed(shifted(cell.inner, shift), target.outer);
  if (gather) return true;
  return M != SearchMode::GATHER && overlapsClosed(shifted(cell.outer, shift), target.inner);
}

/// Whether j, seen translated by shift, is selected for the target under mode M (a closed-box
/// test: a superset of the exact neighbours).
template <SearchMode M, class EPJ>
bool particleNeeded(const EPJ& j, const SearchReach& target, const Vec3d& shift) {
  if constexpr (M != SearchMode::SCATTER)
    if (target.outer.containsClosed(positionOf(j) + shift)) return true;
  if constexpr (M != SearchMode::GATHER) return overlapsClosed(shifted(searchBoxOf(j), shift), target.inner);
  return false;
}

/// Bottom-up cell boxes over the tree's EPJs (SPJs are not included), indexed like shape.cells;
/// with GATHER the outer boxes stay empty.
template <SearchMode M, class EPJ>
void computeCellBoxes(const TreeShape& shape, std::span<const EPJ> epj, std::vector<CellBoxes>& boxes) {
  boxes.assign(shape.cells.size(), CellBoxes{});
  forEachCellBottomUp(shape, [&](std::size_t c, const TreeCell& cell) {
    CellBoxes& b = boxes[c];
    if (cell.isLeaf()) {
      for (std::uint32_t i = cell.ep_first; i < cell.ep_first + cell.ep_count; ++i) {
        b.inner.merge(positionOf(epj[i]));
        if constexpr (M != SearchMode::GATHER) b.outer.merge(searchBoxOf(epj[i]));
      }
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
/// `shift`. boxes: from computeCellBoxes with the same M; stack is scratch (cleared first).
template <SearchMode M, class EPJ, class OnParticle>
void searchTree(const TreeShape& shape, std::span<const CellBoxes> boxes, std::span<const EPJ> epj,
                const SearchReach& target, const Vec3d& shift, std::vector<std::int32_t>& stack,
                OnParticle&& on_particle) {
  if (shape.cells.empty() || shape.cells[0].ep_count == 0) return;
  stack.clear();
  stack.push_back(0);
  while (!stack.empty()) {
    const auto index = static_cast<std::size_t>(stack.back());
    stack.pop_back();
    if (!cellNeeded<M>(boxes[index], target, shift)) continue;
    const TreeCell& cell = shape.cells[index];
    if (cell.isLeaf()) {
      for (std::uint32_t i = cell.ep_first; i < cell.ep_first + cell.ep_count; ++i)
        if (particleNeeded<M>(epj[i], target, shift)) on_particle(i);
    } else {
      for (int k = cell.child_count - 1; k >= 0; --k) stack.push_back(cell.child_first + k);
    }
  }
}

}  // namespace grove
