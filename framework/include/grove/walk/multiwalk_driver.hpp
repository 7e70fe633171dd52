#pragma once
/// @file
/// The multiwalk driver: hands groups to an accelerator's dispatch/retrieve pair (FDPS 7.1's
/// signatures) in batches of at most n_walk_limit walks, tags cycling through [0, tag_max).
/// With tag_max >= 2 up to tag_max batches are in flight, one per tag: batch k is dispatched
/// before batch k - tag_max + 1 is retrieved, so the accelerator always has queued work while the
/// host builds and packs the next lists and writes finished forces back. (One batch of ~1000
/// walks is about one wave of thread blocks on a large GPU; with only two in flight each batch's
/// last blocks left the device part idle.) Long-range trees pass superparticles (kWithSpj),
/// short-range trees do not.
///
///     Plain form:  dispatch(tag, n_walk, epi**, n_epi*, epj**, n_epj* [, spj**, n_spj*])
///     Index form:  dispatch(tag, n_walk, epi**, n_epi*, id_epj**, n_epj* [, id_spj**, n_spj*],
///                           epj*, n_epj_total [, spj*, n_spj_total], send_flag [, lists_unchanged])
///
/// retrieve(tag, n_walk, n_epi*, force**) adds (or writes, when forces were cleared) each walk's
/// forces. lists_unchanged (grove's addition, passed when dispatch takes it) is true when every
/// walk's index list equals that of the preceding MAKE_LIST_FOR_REUSE step, batch by batch and
/// tag by tag.
///
/// The calling sequence is FDPS 7.1's, so that a dispatch written for FDPS works unchanged (its
/// samples and the Accelerated FDPS paper send the whole arrays and return when send_flag is set):
///
///       index form, every list mode, also with no groups on this rank:
///         dispatch(tag 0, n_walk 0, null walk arrays, epj, n_epj_total, spj, n_spj_total, send_flag true)
///       then, both forms, for batches k = 0, 1, ...:
///         [build batch k's lists]  retrieve(batch k - tag_max) when tag_max == 1 and k > 0
///         dispatch(tag k % tag_max, batch k, send_flag false)
///       and the batches still in flight, oldest first.
///
/// With tag_max == 1 (FDPS's only behaviour:
/// it ignores larger values) batch sizes and calls are exactly FDPS's; larger tag_max keep
/// several batches in flight and taper the batch sizes at both ends (multiwalkBatchStarts).
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <deque>
#include <span>
#include <type_traits>
#include <vector>

#include "grove/core/error.hpp"
#include "grove/tree/profile.hpp"
#include "grove/walk/interaction_lists.hpp"

namespace grove {

/// The SPJ type of trees without superparticles (short-range trees): the driver then passes no
/// SPJ arguments.
struct NoSuperParticle {};

/// What one batch hands to dispatch (pointer and count arrays, and the plain form's packed copies)
/// and what its retrieve needs later. One per batch in flight (at least two), kept by the tree
/// between steps so that their memory (tens of MB of copies at millions of particles) is reused
/// rather than faulted in anew.
template <class EPI, class EPJ, class SPJ, class Force>
struct MultiwalkBuffers {
  /// One batch's arguments, per walk w (a group) unless noted.
  struct Batch {
    int tag = 0, n_walk = 0;  ///< the batch's number of walks (tag: documented below)
    std::size_t first_group = 0;  ///< the group of walk 0
    std::vector<const EPI*> epi;  ///< the walk's first EPI (in the tree's key-ordered array)
    std::vector<int> n_epi, n_epj, n_spj;  ///< the walk's SPJ count
    std::vector<Force*> force;  ///< the walk's first force
    std::vector<const std::int32_t*> id_epj, id_spj;  ///< index form: the walk's SPJ index list
    std::vector<const EPJ*> epj;  ///< plain form: the walk's packed EPJ
    std::vector<const SPJ*> spj;  ///< plain form: the walk's packed SPJ
    GroupLists<EPJ, SPJ> packed;  ///< plain form: each walk's sources, walk w as group w
  };
  std::deque<Batch> batches;  ///< a deque: growing it leaves the existing batches where they are
};

/// @var MultiwalkBuffers::Batch::tag
/// The batch's tag, in [0, tag_max).

/// @var MultiwalkBuffers::Batch::n_epi
/// The walk's EPI count.

/// @var MultiwalkBuffers::Batch::n_epj
/// The walk's EPJ count.

/// @var MultiwalkBuffers::Batch::id_epj
/// Index form: the walk's EPJ index list.

/// Where each batch of a multiwalk step starts (and, last, n_groups). As FDPS 7.1 does: the
/// fewest batches of at most n_walk_limit groups, their sizes as equal as they can be (the first
/// n_groups % n_batches one larger). With several batches in flight (tag_max >= 2) and enough
/// groups the first and the last three batches are smaller, halving towards both ends (1/8, 1/4,
/// 1/2 of the limit): the first kernel then starts sooner (its data are fewer) and the last
/// batches, which come back together, leave less retrieve and write-back work after the device
/// has finished. The same arguments give the same batches, so the calls of a MAKE_LIST_FOR_REUSE
/// step and its REUSE_LIST steps match.
inline std::vector<std::size_t> multiwalkBatchStarts(std::size_t n_groups, std::size_t n_walk_limit, int tag_max) {
  std::vector<std::size_t> sizes;
  const bool taper = tag_max >= 2 && n_walk_limit >= 8 && n_groups >= 4 * n_walk_limit;
  std::size_t left = n_groups;
  std::vector<std::size_t> tail;
  if (taper)
    for (std::size_t d : {8, 4, 2}) {
      sizes.push_back(n_walk_limit / d);
      tail.push_back(n_walk_limit / d);
      left -= 2 * (n_walk_limit / d);
    }
  const std::size_t n_even = (left + n_walk_limit - 1) / n_walk_limit;
  for (std::size_t k = 0; k < n_even; ++k) sizes.push_back(left / n_even + (k < left % n_even ? 1 : 0));
  sizes.insert(sizes.end(), tail.rbegin(), tail.rend());
  std::vector<std::size_t> starts{0};
  for (std::size_t size : sizes) starts.push_back(starts.back() + size);
  return starts;
}

/// Throws grove::Error unless tag_max >= 1 and n_walk_limit >= 1.
inline void checkMultiWalkArguments(int tag_max, int n_walk_limit) {
  require(tag_max >= 1, "calcForceAllMultiWalk", "tag_max must be at least 1, got {}", tag_max);
  require(n_walk_limit >= 1, "calcForceAllMultiWalk", "n_walk_limit must be at least 1, got {}", n_walk_limit);
}

/// Calls an index-form dispatch with FDPS's arguments (ending with send_flag), adding grove's
/// trailing lists_unchanged when the dispatch takes it.
template <class Dispatch, class... Args>
void callIndexDispatch(Dispatch& dispatch, bool lists_unchanged, Args... args) {
  if constexpr (std::is_invocable_v<Dispatch&, Args..., bool>)
    dispatch(args..., lists_unchanged);
  else
    dispatch(args...);
}

/// Runs one multiwalk step over groups [0, n_groups) in the calling sequence described at the top
/// of this file. group_range(g) -> {first, count} in epi/force. spj is ignored when SPJ is
/// NoSuperParticle.
/// build_lists(g0, g1) makes the index lists of groups [g0, g1) that this call needs (a no-op when
/// they are kept from an earlier step or, in the plain form, not kept at all): it runs for batch
/// k + 1 while the accelerator computes batch k. Plain form only: collect_sources(g, ep, sp)
/// appends group g's EPJs and SPJs themselves (straight from a walk, or through kept lists).
/// forces_final(g0, g1) runs once the forces of groups [g0, g1) are complete (after their retrieve),
/// while the accelerator computes the next batch: the write-back goes there. clear_forces: the
/// forces were left uncleared (ForceStart::kClearedLater): each batch's are cleared just before its
/// retrieve adds to them. Needs tag_max >= 1 and n_walk_limit >= 1 (checkMultiWalkArguments).
/// Adds to profile.walk (lists and packing) and write_back; sets kernel (dispatch and retrieve:
/// the accelerator's share) and the interaction counts.
template <bool kIndexForm, class EPI, class EPJ, class SPJ, class Force, class GroupRange, class BuildLists,
          class CollectSources, class ForcesFinal, class Dispatch, class Retrieve>
void runMultiWalkBatches(std::size_t n_groups, GroupRange&& group_range, const InteractionLists& lists,
                         BuildLists&& build_lists, CollectSources&& collect_sources, ForcesFinal&& forces_final,
                         const EPI* epi, Force* force, std::span<const EPJ> epj, std::span<const SPJ> spj,
                         Dispatch& dispatch, Retrieve& retrieve, int tag_max, int n_walk_limit, bool lists_unchanged,
                         bool clear_forces, MultiwalkBuffers<EPI, EPJ, SPJ, Force>& buffers, TreeProfile& profile) {
  constexpr bool kWithSpj = !std::is_same_v<SPJ, NoSuperParticle>;
  const double start = omp_get_wtime();
  const auto batch_size = static_cast<std::size_t>(n_walk_limit);
  // Batches in flight at once: one per tag. With one tag, batch k's lists are still built while
  // batch k - 1 is in flight, so there are two slots.
  const auto in_flight = static_cast<std::size_t>(std::max(tag_max, 1));
  const std::size_t slots = std::max<std::size_t>(in_flight, 2);
  auto& batches = buffers.batches;
  if (batches.size() < slots) batches.resize(slots);
  double walk_seconds = 0.0, pack_seconds = 0.0, write_back_seconds = 0.0;
  std::int64_t n_ep_ep = 0, n_ep_sp = 0;
  using Batch = typename MultiwalkBuffers<EPI, EPJ, SPJ, Force>::Batch;
  auto retrieveBatch = [&](Batch& b) {
    if (clear_forces) {
#pragma omp parallel for schedule(dynamic, 16)
      for (int w = 0; w < b.n_walk; ++w)
        for (int i = 0; i < b.n_epi[static_cast<std::size_t>(w)]; ++i) b.force[static_cast<std::size_t>(w)][i].clear();
    }
    retrieve(b.tag, b.n_walk, b.n_epi.data(), b.force.data());
    const double t = omp_get_wtime();
    forces_final(b.first_group, b.first_group + static_cast<std::size_t>(b.n_walk));
    write_back_seconds += omp_get_wtime() - t;
  };
  const auto n_epj_total = static_cast<int>(epj.size());
  const auto n_spj_total = static_cast<int>(spj.size());
  // Index form: the step's whole arrays in a call of their own, with no walks (FDPS's order).
  if constexpr (kIndexForm) {
    const EPI** no_epi = nullptr;
    const int* no_count = nullptr;
    const std::int32_t** no_ids = nullptr;
    if constexpr (kWithSpj)
      callIndexDispatch(dispatch, lists_unchanged, 0, 0, no_epi, no_count, no_ids, no_count, no_ids, no_count,
                        epj.data(), n_epj_total, spj.data(), n_spj_total, true);
    else
      callIndexDispatch(dispatch, lists_unchanged, 0, 0, no_epi, no_count, no_ids, no_count, epj.data(), n_epj_total,
                        true);
  }
  const std::vector<std::size_t> starts = multiwalkBatchStarts(n_groups, batch_size, tag_max);
  const std::size_t n_batches = starts.size() - 1;
  for (std::size_t k = 0; k < n_batches; ++k) {
    Batch& b = batches[k % slots];
    const std::size_t g0 = starts[k], g1 = starts[k + 1], nw = g1 - g0;
    const double w0 = omp_get_wtime();
    build_lists(g0, g1);
    const double p0 = omp_get_wtime();
    walk_seconds += p0 - w0;
    b.tag = static_cast<int>(k % static_cast<std::size_t>(tag_max));
    b.n_walk = static_cast<int>(nw);
    b.first_group = g0;
    b.epi.resize(nw), b.n_epi.resize(nw), b.n_epj.resize(nw), b.n_spj.resize(nw), b.force.resize(nw);
    if constexpr (kIndexForm) {
      b.id_epj.resize(nw), b.id_spj.resize(nw);
      for (std::size_t w = 0; w < nw; ++w) {
        b.id_epj[w] = lists.ep(g0 + w).data();
        b.id_spj[w] = lists.sp(g0 + w).data();
        b.n_epj[w] = static_cast<int>(lists.ep(g0 + w).size());
        b.n_spj[w] = static_cast<int>(lists.sp(g0 + w).size());
      }
    } else {
      // Plain form: each walk's sources packed contiguously, in parallel over walks.
      b.packed.reset(nw);
      b.packed.build(0, nw, [&](std::size_t w, auto& ep, auto& sp) { collect_sources(g0 + w, ep, sp); });
      b.epj.resize(nw), b.spj.resize(nw);
      for (std::size_t w = 0; w < nw; ++w) {
        b.epj[w] = b.packed.ep(w).data();
        b.spj[w] = b.packed.sp(w).data();
        b.n_epj[w] = static_cast<int>(b.packed.ep(w).size());
        b.n_spj[w] = static_cast<int>(b.packed.sp(w).size());
      }
    }
    for (std::size_t w = 0; w < nw; ++w) {
      const auto [first, count] = group_range(g0 + w);
      b.epi[w] = epi + first;
      b.force[w] = force + first;
      b.n_epi[w] = static_cast<int>(count);
      n_ep_ep += static_cast<std::int64_t>(count) * b.n_epj[w];
      n_ep_sp += static_cast<std::int64_t>(count) * b.n_spj[w];
    }
    pack_seconds += omp_get_wtime() - p0;

    // With one tag, the previous batch must come back before its tag is reused.
    if (tag_max == 1 && k > 0) retrieveBatch(batches[(k - 1) % slots]);
    if constexpr (kIndexForm && kWithSpj) {
      callIndexDispatch(dispatch, lists_unchanged, b.tag, b.n_walk, b.epi.data(), b.n_epi.data(), b.id_epj.data(),
                        b.n_epj.data(), b.id_spj.data(), b.n_spj.data(), epj.data(), n_epj_total, spj.data(),
                        n_spj_total, false);
    } else if constexpr (kIndexForm) {
      callIndexDispatch(dispatch, lists_unchanged, b.tag, b.n_walk, b.epi.data(), b.n_epi.data(), b.id_epj.data(),
                        b.n_epj.data(), epj.data(), n_epj_total, false);
    } else if constexpr (kWithSpj) {
      dispatch(b.tag, b.n_walk, b.epi.data(), b.n_epi.data(), b.epj.data(), b.n_epj.data(), b.spj.data(),
               b.n_spj.data());
    } else {
      dispatch(b.tag, b.n_walk, b.epi.data(), b.n_epi.data(), b.epj.data(), b.n_epj.data());
    }
    // The oldest batch in flight comes back once every tag is taken.
    if (tag_max > 1 && k + 1 >= in_flight) retrieveBatch(batches[(k + 1 - in_flight) % slots]);
  }
  // The batches still in flight, oldest first.
  const std::size_t unretrieved = tag_max > 1 ? std::min(n_batches, in_flight - 1) : std::min<std::size_t>(n_batches, 1);
  for (std::size_t k = n_batches - unretrieved; k < n_batches; ++k) retrieveBatch(batches[k % slots]);
  profile.walk += walk_seconds + pack_seconds;
  profile.n_ep_ep = n_ep_ep;
  profile.n_ep_sp = n_ep_sp;
  profile.write_back += write_back_seconds;
  // dispatch + retrieve: the accelerator's share, and what the host waits for it
  profile.kernel = omp_get_wtime() - start - walk_seconds - pack_seconds - write_back_seconds;
}

}  // namespace grove
