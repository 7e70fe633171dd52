#pragma once
/// @file
/// Local essential trees (LET). Each rank works out, for every other rank's particle box, which
/// of its cells that rank may accept whole (sent as superparticles, SPJ) and which it must open
/// (their particles sent as EPJ), with the same opening criterion as the interaction walk. Since
/// every group of the other rank lies inside its box, and the distance to a box is never more
/// than the distance to a group inside it, the LET holds all that any group's walk will need.
///
/// Three exchange modes:
///
///  - ALL_TO_ALL: every pair exchanges (possibly empty) LETs with one alltoallv per type.
///  - POINT_TO_POINT (FDPS's EXCHANGE_LET_P2P_EXACT): ranks allgather their particle boxes and
///    root superparticles; a rank whose whole tree the criterion accepts from my box is "far",
///    and its allgathered root superparticle stands for it without a message; detailed LETs
///    travel only between near ranks. It gives the same received arrays as ALL_TO_ALL, in rank
///    order. But the root cell is the common cube of all ranks, which the criterion (edge / theta)
///    opens from anywhere inside it unless theta > 0.87: in practice every pair is near.
///  - POINT_TO_POINT_FAST (FDPS's EXCHANGE_LET_P2P_FAST): the same, with "far" judged by the
///    criterion for the other rank's particles as a whole, their box's longest side as the edge
///    (OpeningCriterion::opensExtent). A rank then talks to the ranks within about
///    (1 + 2 / theta) domain widths, a number that does not grow with the rank count; a far
///    rank's root superparticle replaces cells of the common tree that would have held its
///    particles, so forces differ from the exact modes by about the tree's own error.
///
/// The decision (planLet) and the payloads (exchangeLet) are separate, so that a step that
/// reuses its interaction lists resends fresh payloads along the same plan.
#include <omp.h>

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "grove/comm/comm.hpp"
#include "grove/let/let_exchange_mode.hpp"
#include "grove/tree/profile.hpp"
#include "grove/tree/tree_cells.hpp"
#include "grove/walk/opening_criterion.hpp"

namespace grove {


/// What a rank receives in a LET exchange, sources in rank order.
template <class EPJ, class SPJ>
struct ReceivedLet {
  std::vector<EPJ> epj;  ///< received particles
  std::vector<SPJ> spj;  ///< received superparticles (far ranks' root superparticles included)
};

/// What one target needs of my tree: EPJ indices and cell indices (whose SPJs are sent).
struct LetSelection {
  std::vector<std::uint32_t> ep;    ///< indices into my key-sorted EPJ array
  std::vector<std::int32_t> cells;  ///< indices of my cells, sent as their superparticles
};

/// The decision of a LET exchange (planLet, planSearchLet), kept to resend fresh payloads along
/// it (exchangeLet) on list-reusing steps.
struct LetPlan {
  LetExchangeMode mode = LetExchangeMode::POINT_TO_POINT;  ///< the exchange mode it was made for
  std::vector<LetSelection> to;  ///< per target rank (empty for me and for far targets)
  std::vector<char> near_from;   ///< point-to-point: ranks that send me a detailed LET
  std::vector<char> far_from;    ///< point-to-point: ranks whose root superparticle stands in
};

namespace detail {
inline constexpr int kLetCountTag = 0x6702, kLetEpjTag = 0x6703, kLetSpjTag = 0x6704;
}  // namespace detail

/// Which parts of my local tree each rank needs. Collective over comm (allgathers). my_box:
/// bounding box of this rank's particles (empty if none); cell_pos: the expansion centre of every
/// cell of my local tree; criterion: the walk's. Every rank must pass the same mode and
/// criterion: the near/far decisions are made alike on both sides from allgathered data.
/// cell_open_sq: the cells' own opening distances for rules other than FDPS's (walkTree).
inline LetPlan planLet(const Comm& comm, LetExchangeMode mode, const TreeShape& shape,
                       std::span<const Vec3d> cell_pos, const OpeningCriterion& criterion, const Boxd& my_box,
                       std::span<const double> cell_open_sq = {}) {
  const int ranks = comm.size(), me = comm.rank();
  const auto R = static_cast<std::size_t>(ranks);
  const std::vector<Boxd> boxes = comm.allgather(my_box);
  const bool i_have_particles = !shape.cells.empty() && shape.cells[0].count() > 0;
  LetPlan plan;
  plan.mode = mode;
  plan.to.resize(R);
  std::vector<char> near_to(R, 1);
  plan.near_from.assign(R, 1);
  plan.far_from.assign(R, 0);
  if (mode != LetExchangeMode::ALL_TO_ALL) {
    // Decided identically on both sides from allgathered data.
    const std::vector<Vec3d> root_pos = comm.allgather(i_have_particles ? cell_pos[0] : Vec3d{});
    const std::vector<char> has = comm.allgather(static_cast<char>(i_have_particles));
    const bool fast = mode == LetExchangeMode::POINT_TO_POINT_FAST;
    // Whether rank `source`'s tree (centre, particle box) must be opened for `target`.
    auto opens = [&](const Boxd& target, const Vec3d& centre, const Boxd& source_box) {
      return fast ? criterion.opensExtent(target, centre, source_box) : criterion.opens(target, centre, 0);
    };
    for (std::size_t r = 0; r < R; ++r) {
      near_to[r] = i_have_particles && !boxes[r].isEmpty() && opens(boxes[r], cell_pos[0], my_box);
      plan.near_from[r] = has[r] && !my_box.isEmpty() && opens(my_box, root_pos[r], boxes[r]);
      plan.far_from[r] = static_cast<int>(r) != me && has[r] && !my_box.isEmpty() && !plan.near_from[r];
    }
  }
#pragma omp parallel
  {
    std::vector<std::int32_t> stack;
#pragma omp for schedule(dynamic, 1)
    for (int j = 0; j < ranks; ++j) {
      const auto jj = static_cast<std::size_t>(j);
      if (j == me || !near_to[jj] || boxes[jj].isEmpty() || !i_have_particles) continue;
      LetSelection& s = plan.to[jj];
      walkTree(
          shape, cell_pos, criterion, boxes[jj], false, stack, [&](std::int32_t cell) { s.cells.push_back(cell); },
          [&](const TreeCell& leaf) {
            for (std::uint32_t i = leaf.ep_first; i < leaf.ep_first + leaf.ep_count; ++i) s.ep.push_back(i);
          },
          cell_open_sq);
    }
  }
  return plan;
}

/// Collective over comm. Sends the planned payloads (current values of epj and cell_spj, indexed
/// as when the plan was made) and returns what arrives, in rank order; in the point-to-point
/// modes a far rank's root superparticle (cell_spj[0]) comes in its place. Sets profile's LET
/// counts. plan: this rank's planLet or planSearchLet result of the same step on every rank.
template <class EPJ, class SPJ>
ReceivedLet<EPJ, SPJ> exchangeLet(const Comm& comm, const LetPlan& plan, std::span<const EPJ> epj,
                                  std::span<const SPJ> cell_spj, TreeProfile& profile) {
  const int me = comm.rank();
  const auto R = plan.to.size();
  std::vector<int> ep_counts(R, 0), sp_counts(R, 0);
  std::size_t ep_total = 0, sp_total = 0;
  for (std::size_t j = 0; j < R; ++j) {
    ep_counts[j] = static_cast<int>(plan.to[j].ep.size());
    sp_counts[j] = static_cast<int>(plan.to[j].cells.size());
    ep_total += plan.to[j].ep.size();
    sp_total += plan.to[j].cells.size();
  }
  std::vector<EPJ> ep_send(ep_total);
  std::vector<SPJ> sp_send(sp_total);
  {
    std::size_t e = 0, s = 0;
    for (std::size_t j = 0; j < R; ++j) {
      for (std::uint32_t i : plan.to[j].ep) ep_send[e++] = epj[i];
      for (std::int32_t c : plan.to[j].cells) sp_send[s++] = cell_spj[static_cast<std::size_t>(c)];
    }
  }
  profile.let_ep_sent = static_cast<std::int64_t>(ep_total);
  profile.let_sp_sent = static_cast<std::int64_t>(sp_total);

  ReceivedLet<EPJ, SPJ> received;
  if (plan.mode == LetExchangeMode::ALL_TO_ALL) {
    received.epj = comm.alltoallv(std::span<const EPJ>(ep_send), std::span<const int>(ep_counts));
    received.spj = comm.alltoallv(std::span<const SPJ>(sp_send), std::span<const int>(sp_counts));
  } else {
    const bool i_have_particles = !cell_spj.empty();
    const std::vector<SPJ> root_spj = comm.allgather(i_have_particles ? cell_spj[0] : SPJ{});
    // Counts first (near pairs only), then payloads.
    std::vector<std::array<int, 2>> send_counts(R), recv_counts(R, {0, 0});
    std::vector<Request> requests;
    for (std::size_t r = 0; r < R; ++r) {
      if (static_cast<int>(r) == me) continue;
      if (plan.near_from[r])
        requests.push_back(comm.irecv(std::span<std::array<int, 2>>(&recv_counts[r], 1), static_cast<int>(r),
                                      detail::kLetCountTag));
      if (ep_counts[r] > 0 || sp_counts[r] > 0) {
        send_counts[r] = {ep_counts[r], sp_counts[r]};
        requests.push_back(comm.isend(std::span<const std::array<int, 2>>(&send_counts[r], 1),
                                      static_cast<int>(r), detail::kLetCountTag));
      }
    }
    waitAll(requests);
    requests.clear();
    // A far rank's root superparticle takes its place in the SPJ array, exactly where the
    // all-to-all mode puts the same superparticle.
    std::vector<std::size_t> ep_offset(R + 1, 0), sp_offset(R + 1, 0);
    for (std::size_t r = 0; r < R; ++r) {
      ep_offset[r + 1] = ep_offset[r] + static_cast<std::size_t>(recv_counts[r][0]);
      sp_offset[r + 1] = sp_offset[r] + static_cast<std::size_t>(recv_counts[r][1]) + (plan.far_from[r] ? 1 : 0);
    }
    received.epj.resize(ep_offset[R]);
    received.spj.resize(sp_offset[R]);
    std::size_t ep_sent = 0, sp_sent = 0;
    for (std::size_t r = 0; r < R; ++r) {
      const int rank = static_cast<int>(r);
      if (plan.far_from[r]) {
        received.spj[sp_offset[r]] = root_spj[r];
      } else if (rank != me && plan.near_from[r]) {
        if (recv_counts[r][0] > 0)
          requests.push_back(comm.irecv(
              std::span<EPJ>(received.epj.data() + ep_offset[r], static_cast<std::size_t>(recv_counts[r][0])), rank,
              detail::kLetEpjTag));
        if (recv_counts[r][1] > 0)
          requests.push_back(comm.irecv(
              std::span<SPJ>(received.spj.data() + sp_offset[r], static_cast<std::size_t>(recv_counts[r][1])), rank,
              detail::kLetSpjTag));
      }
      const auto ne = static_cast<std::size_t>(ep_counts[r]), ns = static_cast<std::size_t>(sp_counts[r]);
      if (ne > 0)
        requests.push_back(comm.isend(std::span<const EPJ>(ep_send.data() + ep_sent, ne), rank, detail::kLetEpjTag));
      if (ns > 0)
        requests.push_back(comm.isend(std::span<const SPJ>(sp_send.data() + sp_sent, ns), rank, detail::kLetSpjTag));
      ep_sent += ne;
      sp_sent += ns;
    }
    waitAll(requests);
  }
  profile.let_ep_received = static_cast<std::int64_t>(received.epj.size());
  profile.let_sp_received = static_cast<std::int64_t>(received.spj.size());
  return received;
}

}  // namespace grove
