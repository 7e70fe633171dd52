#pragma once
/// @file
/// Long-range walks with a neighbour search (FDPS's SEARCH_MODE_LONG_SCATTER and
/// SEARCH_MODE_LONG_SYMMETRY): a Barnes-Hut walk in which a cell is also opened whenever it may
/// hold a j-particle within search reach of the target, so that such particles always reach the
/// kernel one by one and never inside a superparticle:
///
///     SCATTER   the cell's box of j search spheres (EPJ::getRSearch) overlaps the target's positions
///     SYMMETRY  that, or the cell's positions overlap the target's box of i search spheres
///
/// (closed boxes, the tests of walk/short_range_search.hpp). Cells that pass both the opening
/// criterion and the search test are accepted as superparticles as usual.
///
/// Distances may be measured to the nearest periodic image along chosen axes while the boundary
/// stays open (FDPS's CALC_DISTANCE_TYPE_NEAREST_*; e.g. a ring segment periodic in azimuth):
/// NearestImage applies that to the opening criterion and to the search boxes alike. Nothing is
/// copied: the tree holds each particle once, and kernels take the nearest image themselves.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>
#include <vector>

#include "grove/core/box.hpp"
#include "grove/tree/tree_cells.hpp"
#include "grove/walk/long_search_mode.hpp"
#include "grove/walk/opening_criterion.hpp"
#include "grove/walk/short_range_search.hpp"

namespace grove {

/// A long-range tree's search option (a template argument of TreeForForceLongWith).
/// nearest_axes: bit 0 x, bit 1 y, bit 2 z, as FDPS's CALC_DISTANCE_TYPE values; the period of
/// each is the root domain's length there (DomainInfo::setPosRootDomain).
struct LongSearch {
  LongSearchMode mode = LongSearchMode::NONE;  ///< the neighbour search added to the walk
  std::uint8_t nearest_axes = 0;               ///< axes measured to the nearest image (bits: x 1, y 2, z 4)

  /// Whether the walk differs from a plain one (a search or nearest-image axes).
  constexpr bool active() const { return mode != LongSearchMode::NONE || nearest_axes != 0; }
  /// Whether a neighbour search is on.
  constexpr bool searches() const { return mode != LongSearchMode::NONE; }
};

/// FDPS's SEARCH_MODE_LONG_SCATTER, no nearest-image axes.
inline constexpr LongSearch kScatterSearch{LongSearchMode::SCATTER, 0};
/// FDPS's SEARCH_MODE_LONG_SYMMETRY, no nearest-image axes.
inline constexpr LongSearch kSymmetrySearch{LongSearchMode::SYMMETRY, 0};

/// Distances to the nearest image along the axes with a positive period; ordinary elsewhere.
class NearestImage {
 public:
  /// No periodic axis: ordinary distances.
  NearestImage() = default;
  /// period: per axis, the period (> 0) or 0 for an ordinary axis.
  explicit NearestImage(const Vec3d& period) : period_(period) {}

  /// The periods (0: an ordinary axis).
  const Vec3d& period() const { return period_; }

  /// Gap between two closed intervals along axis a (0 when they touch or overlap): on a periodic
  /// axis the smallest over b shifted by -L, 0 and +L.
  double gap(std::size_t a, double a_low, double a_high, double b_low, double b_high) const {
    double g = std::max({0.0, a_low - b_high, b_low - a_high});
    const double length = period_[a];
    if (length > 0.0 && g > 0.0)
      for (double s : {-length, length}) g = std::min(g, std::max({0.0, a_low - (b_high + s), (b_low + s) - a_high}));
    return g;
  }
  /// Squared gap between two boxes, each axis at its nearest image (0 when they touch or overlap).
  double distanceSq(const Boxd& a, const Boxd& b) const {
    double d2 = 0.0;
    for (std::size_t k = 0; k < 3; ++k) {
      const double g = gap(k, a.low[k], a.high[k], b.low[k], b.high[k]);
      d2 += g * g;
    }
    return d2;
  }
  /// Squared distance from p to box, each axis at its nearest image.
  double distanceSq(const Boxd& box, const Vec3d& p) const { return distanceSq(box, Boxd{p, p}); }
  /// Whether the closed boxes overlap or touch at some image.
  bool overlaps(const Boxd& a, const Boxd& b) const {
    for (std::size_t k = 0; k < 3; ++k)
      if (gap(k, a.low[k], a.high[k], b.low[k], b.high[k]) > 0.0) return false;
    return true;
  }
  /// to - from, at the nearest image (each periodic component brought to [-L/2, L/2]).
  Vec3d difference(const Vec3d& to, const Vec3d& from) const {
    Vec3d d = to - from;
    for (std::size_t k = 0; k < 3; ++k)
      if (period_[k] > 0.0) d[k] -= period_[k] * std::round(d[k] / period_[k]);
    return d;
  }

 private:
  Vec3d period_{};  // 0: an ordinary axis
};

/// Whether a cell may hold a j-particle within search reach of the target (see the top); always
/// false for LongSearchMode::NONE.
template <LongSearchMode kMode>
bool cellWithinSearchReach(const CellBoxes& cell, const SearchReach& target, const NearestImage& image) {
  if constexpr (kMode == LongSearchMode::NONE) return false;
  else if constexpr (kMode == LongSearchMode::SCATTER) return image.overlaps(cell.outer, target.inner);
  else return image.overlaps(cell.outer, target.inner) || image.overlaps(cell.inner, target.outer);
}

/// walkTree (walk/opening_criterion.hpp) with the search test and nearest-image distances: cells
/// accepted go to on_far(c) (c the cell index), opened leaves to on_leaf(cell). boxes: per cell,
/// from computeCellBoxes (unused with LongSearchMode::NONE).
template <LongSearchMode kMode, class OnFar, class OnLeaf>
void walkTreeWithSearch(const TreeShape& shape, std::span<const Vec3d> cell_pos, std::span<const CellBoxes> boxes,
                        const OpeningCriterion& criterion, const SearchReach& target, const NearestImage& image,
                        bool open_root, std::vector<std::int32_t>& stack, OnFar&& on_far, OnLeaf&& on_leaf) {
  walkCells(
      shape, open_root, stack, [](std::size_t) { return false; },
      [&](std::size_t c, const TreeCell& cell) {
        if (criterion.opensAt(image.distanceSq(target.inner, cell_pos[c]), cell.level)) return true;
        if constexpr (kMode != LongSearchMode::NONE) return cellWithinSearchReach<kMode>(boxes[c], target, image);
        return false;
      },
      on_far, on_leaf);
}

/// Calls on_particle(index) for every EPJ of the leaves within search reach of the target (a
/// superset of the neighbours; the caller tests the distances). stack is scratch (cleared first).
template <LongSearchMode kMode, class OnParticle>
void searchCandidates(const TreeShape& shape, std::span<const CellBoxes> boxes, const SearchReach& target,
                      const NearestImage& image, std::vector<std::int32_t>& stack, OnParticle&& on_particle) {
  if (shape.cells.empty() || shape.cells[0].ep_count == 0) return;
  stack.clear();
  stack.push_back(0);
  while (!stack.empty()) {
    const auto c = static_cast<std::size_t>(stack.back());
    stack.pop_back();
    const TreeCell& cell = shape.cells[c];
    if (cell.ep_count == 0 || !cellWithinSearchReach<kMode>(boxes[c], target, image)) continue;
    if (cell.isLeaf()) {
      for (std::uint32_t i = cell.ep_first; i < cell.ep_first + cell.ep_count; ++i) on_particle(i);
    } else {
      for (int k = cell.child_count - 1; k >= 0; --k) stack.push_back(cell.child_first + k);
    }
  }
}

}  // namespace grove
