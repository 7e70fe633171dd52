#pragma once
/// @file
/// The four public multiwalk calls of a tree (FDPS 7.1's names), written once for every tree
/// kind: a tree derives from MultiWalkCalls<itself> and provides
///
///     template <bool kIndexForm, ...> void multiWalk(dispatch, retrieve, tag_max, psys, dinfo,
///                                                    n_walk_limit, clear, list_mode, write_back_to);
///
/// where write_back_to is the particle system to write forces back to (batch by batch, while the
/// accelerator computes the next batch), or null.
/// (see grove/walk/multiwalk_driver.hpp for the dispatch/retrieve signatures of each form).
#include "grove/core/large_vector.hpp"
#include "grove/core/list_mode.hpp"
#include "grove/domain/domain_info.hpp"

namespace grove {

/// The multiwalk calls of tree type Tree (CRTP base). Each is a force calculation with the
/// tree's usual preconditions (collective as the tree's calcForceAll is); clear and list_mode as
/// in calcForceAll; tag_max >= 1 and n_walk_limit >= 1. flag_serialize = true (LET
/// serialization) is refused with grove::Error, as FDPS 7.1 does not support it either.
template <class Tree>
class MultiWalkCalls {
 public:
  /// Plain form: per walk, contiguous copies of its EPJs (and SPJs); the forces are written back
  /// to psys, batch by batch.
  template <class Dispatch, class Retrieve, class PSys>
  void calcForceAllAndWriteBackMultiWalk(Dispatch&& dispatch, Retrieve&& retrieve, int tag_max, PSys& psys,
                                         const DomainInfo& dinfo, int n_walk_limit, bool clear = true,
                                         InteractionListMode list_mode = MAKE_LIST, bool flag_serialize = false) {
    refuseLetSerialization(flag_serialize, "calcForceAllAndWriteBackMultiWalk");
    tree().template multiWalk<false>(dispatch, retrieve, tag_max, psys, dinfo, n_walk_limit, clear, list_mode, &psys);
  }
  /// Plain form, without write-back: the forces stay in the tree.
  template <class Dispatch, class Retrieve, class PSys>
  void calcForceAllMultiWalk(Dispatch&& dispatch, Retrieve&& retrieve, int tag_max, const PSys& psys,
                             const DomainInfo& dinfo, int n_walk_limit, bool clear = true,
                             InteractionListMode list_mode = MAKE_LIST, bool flag_serialize = false) {
    refuseLetSerialization(flag_serialize, "calcForceAllMultiWalk");
    tree().template multiWalk<false>(dispatch, retrieve, tag_max, psys, dinfo, n_walk_limit, clear, list_mode,
                                     static_cast<PSys*>(nullptr));
  }
  /// Index form: the whole EPJ (and SPJ) arrays once per step, then index lists per walk; the
  /// forces are written back to psys, batch by batch.
  template <class Dispatch, class Retrieve, class PSys>
  void calcForceAllAndWriteBackMultiWalkIndex(Dispatch&& dispatch, Retrieve&& retrieve, int tag_max, PSys& psys,
                                              const DomainInfo& dinfo, int n_walk_limit, bool clear = true,
                                              InteractionListMode list_mode = MAKE_LIST, bool flag_serialize = false) {
    refuseLetSerialization(flag_serialize, "calcForceAllAndWriteBackMultiWalkIndex");
    tree().template multiWalk<true>(dispatch, retrieve, tag_max, psys, dinfo, n_walk_limit, clear, list_mode, &psys);
  }
  /// Index form, without write-back: the forces stay in the tree.
  template <class Dispatch, class Retrieve, class PSys>
  void calcForceAllMultiWalkIndex(Dispatch&& dispatch, Retrieve&& retrieve, int tag_max, const PSys& psys,
                                  const DomainInfo& dinfo, int n_walk_limit, bool clear = true,
                                  InteractionListMode list_mode = MAKE_LIST, bool flag_serialize = false) {
    refuseLetSerialization(flag_serialize, "calcForceAllMultiWalkIndex");
    tree().template multiWalk<true>(dispatch, retrieve, tag_max, psys, dinfo, n_walk_limit, clear, list_mode,
                                    static_cast<PSys*>(nullptr));
  }

 protected:
  /// The arrays dispatch reads from the tree (the EPI array; the whole EPJ arrays in the index
  /// form) move into page-locked memory once a GPU library has installed the hooks
  /// (grove/core/large_vector.hpp), so that the device copies them straight from the tree. Called
  /// before the tree is built: a fresh tree then allocates them locked and nothing is copied.
  /// Does nothing without the hooks.
  template <bool kIndexForm, class EpiVector, class... EpjVectors>
  static void pageLockTransferArrays(EpiVector& epi, EpjVectors&... epj) {
    if (!pageLockingAvailable()) return;
    pageLock(epi);
    if constexpr (kIndexForm) (pageLock(epj), ...);
  }

  /// Hands the prepared tree's groups to the driver (runMultiWalkBatches). clear: the forces were
  /// left for the driver to clear batch by batch (ForceStart::kClearedLater). epj / spj: the arrays
  /// the lists index. walk_sources(g, ep, sp) appends group g's sources
  /// straight from a walk (the plain form's MAKE_LIST steps, which keep no index lists);
  /// otherwise the sources come through the kept lists. write_back_to: the particle system the
  /// forces go to, group range by group range, or null.
  template <bool kIndexForm, class EPJ, class SPJ, class Dispatch, class Retrieve, class PSys, class WalkSources>
  void runBatches(Dispatch& dispatch, Retrieve& retrieve, int tag_max, int n_walk_limit,
                  InteractionListMode list_mode, bool clear, PSys* write_back_to, std::span<const EPJ> epj,
                  std::span<const SPJ> spj, WalkSources&& walk_sources) {
    Tree& t = tree();
    const bool make_lists = list_mode != REUSE_LIST && (kIndexForm || list_mode == MAKE_LIST_FOR_REUSE);
    if (make_lists) t.lists_.reset(t.groups_.size());
    const bool lists_unchanged = t.reuse_.guard.deviceListsUnchanged(list_mode, n_walk_limit);
    t.reuse_.guard.noteDeviceBatches(list_mode, n_walk_limit);
    auto group_range = [&](std::size_t g) { return std::pair{t.groups_[g].first, t.groups_[g].count}; };
    runMultiWalkBatches<kIndexForm>(
        t.groups_.size(), group_range, t.lists_,
        [&](std::size_t g0, std::size_t g1) {
          if (make_lists) t.buildListRange(g0, g1);
        },
        [&](std::size_t g, std::vector<EPJ>& ep, std::vector<SPJ>& sp) {
          if (list_mode == MAKE_LIST) return walk_sources(g, ep, sp);
          for (std::int32_t j : t.lists_.ep(g)) ep.push_back(epj[static_cast<std::size_t>(j)]);
          for (std::int32_t j : t.lists_.sp(g)) sp.push_back(spj[static_cast<std::size_t>(j)]);
        },
        [&](std::size_t g0, std::size_t g1) {
          if (write_back_to) t.sorted_.writeBackGroups(*write_back_to, g0, g1, group_range);
        },
        t.sorted_.epi.data(), t.sorted_.force.data(), epj, spj, dispatch, retrieve, tag_max, n_walk_limit,
        lists_unchanged, clear, t.multiwalk_buffers_, t.profile_);
  }

 private:
  Tree& tree() { return static_cast<Tree&>(*this); }
};

}  // namespace grove
