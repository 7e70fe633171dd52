#pragma once
/// @file
/// Short-range local essential trees. Every rank allgathers its i-particles' reach (the box of
/// their positions and the box of their search spheres); each rank then selects, for every other
/// rank and every periodic image shift, exactly the EPJs that rank's particles may need, with the
/// same tests as the group search. Because the selection is made against every rank's actual
/// reach, a search radius spanning several domains needs no extra hops: the particles come
/// straight from wherever they are. Periodic images of a rank's own particles come to itself.
/// The shifts are every whole period within reach (domain/periodic_images.hpp), several shells
/// when a radius exceeds the period; each is selected on its own, so a radius beyond half the
/// period sends one particle under several shifts, one entry per image.
#include <omp.h>

#include <cstdint>
#include <span>
#include <vector>

#include "grove/comm/comm.hpp"
#include "grove/core/host_loop.hpp"
#include "grove/tree/profile.hpp"
#include "grove/walk/short_range_search.hpp"

namespace grove {

/// Which of my EPJs each rank gets, with which image shift.
struct ShortRangeLetPlan {
  /// One EPJ to send and its image.
  struct Pick {
    std::uint32_t index;  ///< index into my key-sorted EPJ array
    std::uint32_t shift;  ///< index into shifts
  };
  std::vector<std::vector<Pick>> to;  ///< per target rank
  std::vector<Vec3d> shifts;          ///< the image shifts (a copy of image_shifts)
};

/// Collective: allgathers every rank's reach and selects what each needs of my tree, by Walk's
/// tests (walk/short_range_search.hpp). boxes: from computeCellBoxes with the same Walk;
/// my_reach: this rank's i-particles as Walk's targets keep them (targetReach; inner: positions,
/// outer: search boxes); image_shifts: the periodic image shifts to consider (the zero shift
/// included). My own particles at the zero shift are not selected.
template <class Walk, class EPJ>
ShortRangeLetPlan planShortRangeLet(const Comm& comm, const TreeShape& shape, std::span<const CellBoxes> boxes,
                                    std::span<const EPJ> epj, const SearchReach& my_reach,
                                    std::span<const Vec3d> image_shifts) {
  const int ranks = comm.size(), me = comm.rank();
  const std::vector<SearchReach> reaches = comm.allgather(my_reach);
  ShortRangeLetPlan plan;
  plan.shifts.assign(image_shifts.begin(), image_shifts.end());
  plan.to.resize(static_cast<std::size_t>(ranks));
  const auto plan_for = [&](int t, std::vector<std::int32_t>& stack) {
    const SearchReach& target = reaches[static_cast<std::size_t>(t)];
    if (target.inner.isEmpty() || shape.cells.empty()) return;
    auto& mine = plan.to[static_cast<std::size_t>(t)];
    for (std::size_t s = 0; s < image_shifts.size(); ++s) {
      const bool itself = t == me && norm2(image_shifts[s]) == 0.0;
      if (itself || !Walk::cellNeeded(boxes[0], target, image_shifts[s])) continue;
      searchTree<Walk>(shape, boxes, epj, target, image_shifts[s], stack,
                       [&](std::uint32_t i) { mine.push_back({i, static_cast<std::uint32_t>(s)}); });
    }
  };
  if (!hostLoopsShareThreads()) {
    std::vector<std::int32_t> stack;
    for (int t = 0; t < ranks; ++t) plan_for(t, stack);
    return plan;
  }
#pragma omp parallel
  {
    std::vector<std::int32_t> stack;
#pragma omp for schedule(dynamic, 1)
    for (int t = 0; t < ranks; ++t) plan_for(t, stack);
  }
  return plan;
}

/// Collective (one alltoallv): sends the planned EPJs (current values, images moved by
/// `setPos` where the type has it) and returns what arrives, in rank order. Sets
/// profile.let_ep_sent and let_ep_received.
template <class EPJ>
std::vector<EPJ> exchangeShortRangeLet(const Comm& comm, const ShortRangeLetPlan& plan, std::span<const EPJ> epj,
                                       TreeProfile& profile) {
  std::vector<int> counts(plan.to.size());
  std::size_t total = 0;
  for (std::size_t t = 0; t < plan.to.size(); ++t) {
    counts[t] = static_cast<int>(plan.to[t].size());
    total += plan.to[t].size();
  }
  std::vector<EPJ> send(total);
  std::size_t out = 0;
  for (const auto& list : plan.to)
    for (const auto& p : list) {
      send[out] = epj[p.index];
      if (norm2(plan.shifts[p.shift]) != 0.0) {
        if constexpr (HasSetPos<EPJ>) send[out].setPos(positionOf(epj[p.index]) + plan.shifts[p.shift]);
      }
      ++out;
    }
  profile.let_ep_sent = static_cast<std::int64_t>(total);
  std::vector<EPJ> received = comm.alltoallv(std::span<const EPJ>(send), std::span<const int>(counts));
  profile.let_ep_received = static_cast<std::int64_t>(received.size());
  return received;
}

}  // namespace grove
