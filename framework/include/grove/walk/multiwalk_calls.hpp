#pragma once
// The four public multiwalk calls of a tree (FDPS 7.1's names), written once for every tree
// kind: a tree derives from MultiWalkCalls<itself> and provides
//   template <bool kIndexForm, ...> void multiWalk(dispatch, retrieve, tag_max, psys, dinfo,
//                                                  n_walk_limit, clear, list_mode, write_back_to);
// where write_back_to is the particle system to write forces back to (batch by batch, while the
// accelerator computes the next batch), or null.
// (see grove/walk/multiwalk.hpp for the dispatch/retrieve signatures of each form).
#include "grove/core/list_mode.hpp"
#include "grove/domain/domain_info.hpp"

namespace grove {

template <class Tree>
class MultiWalkCalls {
 public:
  // Plain form: per walk, contiguous copies of its EPJs (and SPJs).
  template <class Dispatch, class Retrieve, class PSys>
  void calcForceAllAndWriteBackMultiWalk(Dispatch&& dispatch, Retrieve&& retrieve, int tag_max, PSys& psys,
                                         const DomainInfo& dinfo, int n_walk_limit, bool clear = true,
                                         InteractionListMode list_mode = MAKE_LIST) {
    tree().template multiWalk<false>(dispatch, retrieve, tag_max, psys, dinfo, n_walk_limit, clear, list_mode, &psys);
  }
  template <class Dispatch, class Retrieve, class PSys>
  void calcForceAllMultiWalk(Dispatch&& dispatch, Retrieve&& retrieve, int tag_max, const PSys& psys,
                             const DomainInfo& dinfo, int n_walk_limit, bool clear = true,
                             InteractionListMode list_mode = MAKE_LIST) {
    tree().template multiWalk<false>(dispatch, retrieve, tag_max, psys, dinfo, n_walk_limit, clear, list_mode,
                                     static_cast<PSys*>(nullptr));
  }
  // Index form: the whole EPJ (and SPJ) arrays once per step, then index lists per walk.
  template <class Dispatch, class Retrieve, class PSys>
  void calcForceAllAndWriteBackMultiWalkIndex(Dispatch&& dispatch, Retrieve&& retrieve, int tag_max, PSys& psys,
                                              const DomainInfo& dinfo, int n_walk_limit, bool clear = true,
                                              InteractionListMode list_mode = MAKE_LIST) {
    tree().template multiWalk<true>(dispatch, retrieve, tag_max, psys, dinfo, n_walk_limit, clear, list_mode, &psys);
  }
  template <class Dispatch, class Retrieve, class PSys>
  void calcForceAllMultiWalkIndex(Dispatch&& dispatch, Retrieve&& retrieve, int tag_max, const PSys& psys,
                                  const DomainInfo& dinfo, int n_walk_limit, bool clear = true,
                                  InteractionListMode list_mode = MAKE_LIST) {
    tree().template multiWalk<true>(dispatch, retrieve, tag_max, psys, dinfo, n_walk_limit, clear, list_mode,
                                    static_cast<PSys*>(nullptr));
  }

 private:
  Tree& tree() { return static_cast<Tree&>(*this); }
};

}  // namespace grove
