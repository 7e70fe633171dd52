#pragma once
// Short-range local essential trees. Every rank allgathers its i-particles' reach (the box of
// their positions and the box of their search spheres); each rank then selects, for every other
// rank and every periodic image shift, exactly the EPJs that rank's particles may need, with the
// same tests as the group search. Because the selection is made against every rank's actual
// reach, a search radius spanning several domains needs no extra hops: the particles come
// straight from wherever they are. Periodic images of a rank's own particles come to itself.
// Search radii must stay below half the periodic length (checked by the tree).
#include <omp.h>

#include <cstdint>
#include <span>
#include <vector>

#include "grove/comm/comm.hpp"
#include "grove/tree/profile.hpp"
#include "grove/walk/short_range_search.hpp"

namespace grove {

template <SearchMode M, class EPJ>
std::vector<EPJ> exchangeShortRangeLet(const Comm& comm, const TreeShape& shape, std::span<const CellBoxes> boxes,
                                       std::span<const EPJ> epj, const SearchReach& my_reach,
                                       std::span<const Vec3d> image_shifts, TreeProfile& profile) {
  const double build_start = omp_get_wtime();
  const int ranks = comm.size(), me = comm.rank();
  const std::vector<SearchReach> reaches = comm.allgather(my_reach);
  struct Pick {
    std::uint32_t index;
    std::uint32_t shift;
  };
  std::vector<std::vector<Pick>> picks(static_cast<std::size_t>(ranks));
#pragma omp parallel
  {
    std::vector<std::int32_t> stack;
#pragma omp for schedule(dynamic, 1)
    for (int t = 0; t < ranks; ++t) {
      const SearchReach& target = reaches[static_cast<std::size_t>(t)];
      if (target.inner.isEmpty() || shape.cells.empty()) continue;
      auto& mine = picks[static_cast<std::size_t>(t)];
      for (std::size_t s = 0; s < image_shifts.size(); ++s) {
        const bool itself = t == me && norm2(image_shifts[s]) == 0.0;
        if (itself || !cellNeeded<M>(boxes[0], target, image_shifts[s])) continue;
        searchTree<M>(shape, boxes, epj, target, image_shifts[s], stack,
                      [&](std::uint32_t i) { mine.push_back({i, static_cast<std::uint32_t>(s)}); });
      }
    }
  }
  std::vector<int> counts(static_cast<std::size_t>(ranks));
  std::size_t total = 0;
  for (int t = 0; t < ranks; ++t) {
    counts[static_cast<std::size_t>(t)] = static_cast<int>(picks[static_cast<std::size_t>(t)].size());
    total += picks[static_cast<std::size_t>(t)].size();
  }
  std::vector<EPJ> send(total);
  std::size_t out = 0;
  for (const auto& list : picks)
    for (const Pick& p : list) {
      send[out] = epj[p.index];
      if (norm2(image_shifts[p.shift]) != 0.0) {
        if constexpr (HasSetPos<EPJ>) send[out].setPos(positionOf(epj[p.index]) + image_shifts[p.shift]);
      }
      ++out;
    }
  profile.let_ep_sent = static_cast<std::int64_t>(total);
  profile.let_build = omp_get_wtime() - build_start;

  const double exchange_start = omp_get_wtime();
  std::vector<EPJ> received = comm.alltoallv(std::span<const EPJ>(send), std::span<const int>(counts));
  profile.let_exchange = omp_get_wtime() - exchange_start;
  profile.let_ep_received = static_cast<std::int64_t>(received.size());
  return received;
}

}  // namespace grove
