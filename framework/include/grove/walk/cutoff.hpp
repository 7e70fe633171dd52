#pragma once
/// @file
/// Cutoff walks (FDPS's SEARCH_MODE_LONG_CUTOFF): forces that vanish beyond a radius r_cut, such
/// as the short-range part of a TreePM split or gravity/Coulomb in a periodic box by Ewald-like
/// splitting. A cell whose contents all lie farther than r_cut from the target box cannot
/// contribute (the user kernel gives zero there), so it is skipped: neither opened nor made a
/// superparticle. Cells within reach follow the usual opening criterion.
///
/// Periodic boundaries enter as image shifts (whole periods along periodic axes, as many shells
/// as reach: domain/periodic_images.hpp), materialised as shifted copies (let/cutoff_let.hpp).
/// Each image within r_cut is an entry of its own: with r_cut < L/2 a pair has at most one image
/// within r_cut; with a larger cutoff it is met once per image within reach, as in FDPS.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>
#include <vector>

#include "grove/core/box.hpp"
#include "grove/domain/boundary.hpp"
#include "grove/core/particle_traits.hpp"
#include "grove/tree/tree_cells.hpp"
#include "grove/walk/opening_criterion.hpp"

namespace grove {

/// P has `getRSearch()` (convertible to double): the cutoff radius of a cutoff tree's EPJ.
template <class P>
concept HasCutoffRadius = requires(const P& p) {
  { p.getRSearch() } -> std::convertible_to<double>;
};

/// Squared gap between two boxes (0 when they touch or overlap).
inline double distanceSq(const Boxd& a, const Boxd& b) {
  double d2 = 0.0;
  for (std::size_t k = 0; k < 3; ++k) {
    const double gap = std::max({0.0, a.low[k] - b.high[k], b.low[k] - a.high[k]});
    d2 += gap * gap;
  }
  return d2;
}

/// Where a cutoff tree's entries can lie: the particles' bounds, and on periodic axes the root
/// domain widened by r_cut on both sides: every image, of whichever shell, that comes within
/// r_cut of some particle of the root domain lies there.
inline Boxd cutoffTreeBounds(Boxd particle_bounds, BoundaryCondition bc, const Boxd& root_domain, double r_cut) {
  for (int a = 0; a < 3; ++a) {
    if (!isPeriodic(bc, a)) continue;
    const auto k = static_cast<std::size_t>(a);
    particle_bounds.low[k] = std::min(particle_bounds.low[k], root_domain.low[k] - r_cut);
    particle_bounds.high[k] = std::max(particle_bounds.high[k], root_domain.high[k] + r_cut);
  }
  return particle_bounds;
}

/// The tight box of one cell's entries: at a leaf, its particles' and received superparticles'
/// positions; above, the union of its children's boxes (extent, made before it: bottom-up). The
/// host's computeCellExtents and the device's cellExtents kernel (walk/walk_gpu.cuh) both call it.
template <class EPJ, class SPJ>
GROVE_HD_TEMPLATE Boxd cellExtentOf(const TreeCell& cell, const EPJ* epj, const SPJ* spj, const Boxd* extent) {
  Boxd b = Boxd::empty();
  if (cell.isLeaf()) {
    for (std::uint32_t i = cell.ep_first; i < cell.ep_first + cell.ep_count; ++i) b.merge(positionOf(epj[i]));
    // A superparticle type without a position (a one-rank user SPJ) is never received.
    if constexpr (requires(const SPJ& sp) { positionOf(sp); })
      for (std::uint32_t i = cell.sp_first; i < cell.sp_first + cell.sp_count; ++i) b.merge(positionOf(spj[i]));
  } else {
    for (int k = 0; k < cell.child_count; ++k) b.merge(extent[cell.child_first + k]);
  }
  return b;
}

/// Bottom-up bounding boxes of every cell's entries (particles and received superparticles):
/// the reach test of a cutoff walk. Tight boxes, not the Morton cells, so that a cell whose
/// particles sit far from its faces is skipped as early as possible. extent is resized to the
/// cell count and indexed like shape.cells.
template <class EPJ, class SPJ>
void computeCellExtents(const TreeShape& shape, std::span<const EPJ> epj, std::span<const SPJ> spj,
                        std::vector<Boxd>& extent) {
  extent.assign(shape.cells.size(), Boxd::empty());
  forEachCellBottomUp(shape, [&](std::size_t c, const TreeCell& cell) {
    extent[c] = cellExtentOf(cell, epj.data(), spj.data(), extent.data());
  });
}

/// walkTree (walk/opening_criterion.hpp) with the cutoff: cells whose extent lies farther than
/// r_cut from the target are dropped before the opening test. Cells at exactly r_cut are kept:
/// the kernel decides about the boundary itself. extent: from computeCellExtents.
template <class OnFar, class OnLeaf>
void walkTreeWithinCutoff(const TreeShape& shape, std::span<const Vec3d> cell_pos, std::span<const Boxd> extent,
                          const OpeningCriterion& criterion, const Boxd& target, double r_cut, bool open_root,
                          std::vector<std::int32_t>& stack, OnFar&& on_far, OnLeaf&& on_leaf) {
  const double r_cut_sq = r_cut * r_cut;
  walkCells(
      shape, open_root, stack, [&](std::size_t c) { return distanceSq(target, extent[c]) > r_cut_sq; },
      [&](std::size_t c, const TreeCell& cell) { return criterion.opens(target, cell_pos[c], cell.level); }, on_far,
      on_leaf);
}

}  // namespace grove
