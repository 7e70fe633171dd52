#pragma once
/// @file
/// Local essential trees for cutoff trees (FDPS's SEARCH_MODE_LONG_CUTOFF). What rank t needs of
/// my tree is, for every image shift s, what a cutoff walk of my tree finds for t's particle box
/// moved by -s: particles and θ-accepted cells within r_cut of it. They travel with their
/// positions moved by +s, so the receiver's global tree holds each needed image as an ordinary
/// entry and its walks, kernels and interaction lists (index forms included) need no knowledge of
/// periodicity. My own images come back to me the same way (target = me, s != 0). The shifts
/// are every whole period within reach (domain/periodic_images.hpp), several shells when r_cut
/// exceeds a period; each shift's image is planned on its own, so a pair within r_cut through
/// several images arrives once per image.
///
/// The LET is sized by the cutoff alone: a rank whose box lies farther than r_cut from mine,
/// under every image, is sent nothing — not even a root superparticle, unlike the open-boundary
/// LET, because the kernel would give zero for it. Particles of an opened leaf are filtered one
/// by one, so at θ = 0 the LET holds exactly the images within r_cut of the target box.
///
/// Payloads go by alltoallv whatever the tree's LetExchangeMode: every pair's counts are needed
/// anyway, and far pairs exchange zero entries.
#include <omp.h>

#include <cstdint>
#include <span>
#include <vector>

#include "grove/comm/comm.hpp"
#include "grove/core/error.hpp"
#include "grove/let/local_essential_tree.hpp"
#include "grove/core/particle_traits.hpp"
#include "grove/tree/profile.hpp"
#include "grove/tree/tree_cells.hpp"
#include "grove/walk/cutoff.hpp"
#include "grove/walk/opening_criterion.hpp"

namespace grove {

/// The decision of a cutoff LET exchange: per target rank, which EPJs and cells of my tree are
/// sent under which image shift.
struct CutoffLetPlan {
  /// One entry to send and its image.
  struct Pick {
    std::uint32_t index;  ///< EPJ index, or cell index (whose superparticle is sent)
    std::uint32_t shift;  ///< index into shifts
  };
  std::vector<std::vector<Pick>> ep_to, cells_to;  ///< per target rank: the cells sent as superparticles
  std::vector<Vec3d> shifts;  ///< the image shifts (periodicImageShifts; zero shift first)
};

/// @var CutoffLetPlan::ep_to
/// Per target rank: the EPJs sent.

/// Which entries of my tree each rank needs, per image shift. Collective over comm (allgathers
/// the particle boxes). my_box: bounding box of this rank's particles (empty if none); cell_pos,
/// extent: expansion centre and entry bounds of every cell of my local tree; shifts from
/// periodicImageShifts (zero shift first). Nothing is planned for my own particles at the zero
/// shift (they are in the global tree already).
template <class EPJ>
CutoffLetPlan planCutoffLet(const Comm& comm, const TreeShape& shape, std::span<const Vec3d> cell_pos,
                            std::span<const Boxd> extent, std::span<const EPJ> epj, const OpeningCriterion& criterion,
                            double r_cut, const Boxd& my_box, std::span<const Vec3d> shifts) {
  const int ranks = comm.size(), me = comm.rank();
  const std::vector<Boxd> boxes = comm.allgather(my_box);
  const bool i_have_particles = !shape.cells.empty() && shape.cells[0].count() > 0;
  const double r_cut_sq = r_cut * r_cut;
  CutoffLetPlan plan;
  plan.shifts.assign(shifts.begin(), shifts.end());
  plan.ep_to.resize(static_cast<std::size_t>(ranks));
  plan.cells_to.resize(static_cast<std::size_t>(ranks));
#pragma omp parallel
  {
    std::vector<std::int32_t> stack;
#pragma omp for schedule(dynamic, 1)
    for (int t = 0; t < ranks; ++t) {
      const Boxd& target_box = boxes[static_cast<std::size_t>(t)];
      if (!i_have_particles || target_box.isEmpty()) continue;
      auto& ep = plan.ep_to[static_cast<std::size_t>(t)];
      auto& cells = plan.cells_to[static_cast<std::size_t>(t)];
      for (std::size_t s = 0; s < shifts.size(); ++s) {
        if (t == me && s == 0) continue;  // my own particles are in the global tree already
        // The target seen from my (unshifted) tree.
        const Boxd target = {target_box.low - shifts[s], target_box.high - shifts[s]};
        const auto shift = static_cast<std::uint32_t>(s);
        walkTreeWithinCutoff(
            shape, cell_pos, extent, criterion, target, r_cut, false, stack,
            [&](std::int32_t cell) { cells.push_back({static_cast<std::uint32_t>(cell), shift}); },
            [&](const TreeCell& leaf) {
              for (std::uint32_t i = leaf.ep_first; i < leaf.ep_first + leaf.ep_count; ++i)
                if (distanceMinSq(target, positionOf(epj[i])) <= r_cut_sq) ep.push_back({i, shift});
            });
      }
    }
  }
  return plan;
}

namespace detail {
// The planned entries, in target order, moved to their image.
template <class T>
std::vector<T> gatherShifted(const std::vector<std::vector<CutoffLetPlan::Pick>>& picks, std::span<const Vec3d> shifts,
                             std::span<const T> source, std::vector<int>& counts) {
  std::size_t total = 0;
  counts.resize(picks.size());
  for (std::size_t t = 0; t < picks.size(); ++t) {
    counts[t] = static_cast<int>(picks[t].size());
    total += picks[t].size();
  }
  std::vector<T> out(total);
  std::size_t o = 0;
  for (const auto& list : picks)
    for (const auto& p : list) {
      out[o] = source[p.index];
      if (p.shift != 0) {
        if constexpr (HasSetPos<T>) out[o].setPos(positionOf(source[p.index]) + shifts[p.shift]);
      }
      ++o;
    }
  return out;
}
}  // namespace detail

/// Collective over comm (alltoallv whatever the tree's LetExchangeMode). Sends the planned
/// payloads (current values of epj and cell_spj, images moved by their `setPos` where the type
/// has it) and returns what arrives, in rank order. Sets profile's LET counts.
template <class EPJ, class SPJ>
ReceivedLet<EPJ, SPJ> exchangeCutoffLet(const Comm& comm, const CutoffLetPlan& plan, std::span<const EPJ> epj,
                                        std::span<const SPJ> cell_spj, TreeProfile& profile) {
  std::vector<int> ep_counts, sp_counts;
  const std::vector<EPJ> ep_send = detail::gatherShifted(plan.ep_to, plan.shifts, epj, ep_counts);
  const std::vector<SPJ> sp_send = detail::gatherShifted(plan.cells_to, plan.shifts, cell_spj, sp_counts);
  profile.let_ep_sent = static_cast<std::int64_t>(ep_send.size());
  profile.let_sp_sent = static_cast<std::int64_t>(sp_send.size());
  ReceivedLet<EPJ, SPJ> received;
  received.epj = comm.alltoallv(std::span<const EPJ>(ep_send), std::span<const int>(ep_counts));
  received.spj = comm.alltoallv(std::span<const SPJ>(sp_send), std::span<const int>(sp_counts));
  profile.let_ep_received = static_cast<std::int64_t>(received.epj.size());
  profile.let_sp_received = static_cast<std::int64_t>(received.spj.size());
  return received;
}

}  // namespace grove
