#pragma once
/// @file
/// Local essential trees for long-range trees with a neighbour search (FDPS's
/// SEARCH_MODE_LONG_SCATTER / LONG_SYMMETRY, walk/long_search.hpp). The decision is planLet's
/// (let/local_essential_tree.hpp) with the search test added: ranks allgather their i-particles'
/// reach (box of positions, box of search spheres), and a cell is sent whole only if the opening
/// criterion accepts it from the target's box and it cannot hold a particle within search reach
/// of the target; otherwise it is opened, down to leaves whose particles travel one by one. Every
/// group of the target lies in its reach, so its walk then finds each such particle in its global
/// tree. Distances are nearest-image ones where the tree asks for them.
///
/// The result is an ordinary LetPlan: exchangeLet sends it (both exchange modes), and a
/// MAKE_LIST_FOR_REUSE step keeps it. In the point-to-point modes a rank stands in by its
/// allgathered root superparticle only when its whole tree passes both tests, decided alike on
/// both sides (POINT_TO_POINT_FAST is exact here: particles within search reach must travel).
#include <omp.h>

#include <cstdint>
#include <span>
#include <vector>

#include "grove/comm/comm.hpp"
#include "grove/let/local_essential_tree.hpp"
#include "grove/walk/long_search.hpp"

namespace grove {

/// planLet with the search test: which parts of my local tree each rank needs. Collective over
/// comm (allgathers). my_reach: this rank's i-particles (inner: positions; outer: search spheres,
/// used by SYMMETRY); cell_pos, boxes: expansion centre and search boxes of every cell of my local
/// tree; image: nearest-image distances (or none). Every rank must pass the same mode, criterion
/// and kMode.
template <LongSearchMode kMode>
LetPlan planSearchLet(const Comm& comm, LetExchangeMode mode, const TreeShape& shape, std::span<const Vec3d> cell_pos,
                      std::span<const CellBoxes> boxes, const OpeningCriterion& criterion,
                      const SearchReach& my_reach, const NearestImage& image) {
  const int ranks = comm.size(), me = comm.rank();
  const auto R = static_cast<std::size_t>(ranks);
  const std::vector<SearchReach> reaches = comm.allgather(my_reach);
  const bool i_have_particles = !shape.cells.empty() && shape.cells[0].count() > 0;
  // Whether a tree with this root must be opened for this target (rather than sent as its root).
  auto root_opens = [&](const SearchReach& target, const Vec3d& root_pos, const CellBoxes& root_boxes) {
    return criterion.opensAt(image.distanceSq(target.inner, root_pos), 0) ||
           cellWithinSearchReach<kMode>(root_boxes, target, image);
  };
  LetPlan plan;
  plan.mode = mode;
  plan.to.resize(R);
  std::vector<char> near_to(R, 1);
  plan.near_from.assign(R, 1);
  plan.far_from.assign(R, 0);
  if (mode != LetExchangeMode::ALL_TO_ALL) {
    const CellBoxes my_root_boxes = i_have_particles && !boxes.empty() ? boxes[0] : CellBoxes{};
    const std::vector<Vec3d> root_pos = comm.allgather(i_have_particles ? cell_pos[0] : Vec3d{});
    const std::vector<CellBoxes> root_boxes = comm.allgather(my_root_boxes);
    const std::vector<char> has = comm.allgather(static_cast<char>(i_have_particles));
    const bool i_need = !my_reach.inner.isEmpty();
    for (std::size_t r = 0; r < R; ++r) {
      near_to[r] = i_have_particles && !reaches[r].inner.isEmpty() && root_opens(reaches[r], cell_pos[0], my_root_boxes);
      plan.near_from[r] = has[r] && i_need && root_opens(my_reach, root_pos[r], root_boxes[r]);
      plan.far_from[r] = static_cast<int>(r) != me && has[r] && i_need && !plan.near_from[r];
    }
  }
#pragma omp parallel
  {
    std::vector<std::int32_t> stack;
#pragma omp for schedule(dynamic, 1)
    for (int j = 0; j < ranks; ++j) {
      const auto jj = static_cast<std::size_t>(j);
      if (j == me || !near_to[jj] || reaches[jj].inner.isEmpty() || !i_have_particles) continue;
      LetSelection& s = plan.to[jj];
      walkTreeWithSearch<kMode>(
          shape, cell_pos, boxes, criterion, reaches[jj], image, false, stack,
          [&](std::int32_t cell) { s.cells.push_back(cell); },
          [&](const TreeCell& leaf) {
            for (std::uint32_t i = leaf.ep_first; i < leaf.ep_first + leaf.ep_count; ++i) s.ep.push_back(i);
          });
    }
  }
  return plan;
}

}  // namespace grove
