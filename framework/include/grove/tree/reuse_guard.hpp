#pragma once
/// @file
/// What a tree remembers of the particles when it keeps interaction lists for reuse
/// (MAKE_LIST_FOR_REUSE), and the check a REUSE_LIST call makes against it. The check is
/// collective: a misuse found on one rank stops every rank with a clear error.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "grove/comm/comm.hpp"
#include "grove/core/list_mode.hpp"

namespace grove {

/// psys.layoutVersion() where PSys has it (a grove::ParticleSystem: it changes when particles are
/// added, removed, reordered or exchanged), else 0.
template <class PSys>
std::uint64_t layoutVersionOf(const PSys& psys) {
  if constexpr (requires { psys.layoutVersion(); }) return psys.layoutVersion();
  return 0;
}

/// What a tree remembers of the particles for list reuse, and the check against it.
class ReuseGuard {
 public:
  /// Remembers psys (its address, layout version and size) and comm's size: called by a
  /// MAKE_LIST_FOR_REUSE call. Not collective.
  template <class PSys>
  void record(const PSys& psys, const Comm& comm) {
    valid_ = true;
    psys_ = &psys;
    layout_version_ = layoutVersionOf(psys);
    n_local_ = psys.size();
    ranks_ = comm.size();
  }
  /// Forgets the recorded particles (a later check fails until the next record). New lists:
  /// whatever an accelerator kept from earlier steps is stale as well.
  void forget() {
    valid_ = false;
    device_batch_size_ = 0;
  }

  /// Multiwalk: whether an index dispatch may be told that its lists are those it was sent on
  /// the last list-building step (same batches, so the same n_walk_limit): true for a REUSE_LIST
  /// call whose n_walk_limit is the one noteDeviceBatches recorded.
  bool deviceListsUnchanged(InteractionListMode list_mode, int n_walk_limit) const {
    return list_mode == REUSE_LIST && device_batch_size_ == n_walk_limit;
  }
  /// A list-building multiwalk call (any list_mode but REUSE_LIST) records its batch size.
  void noteDeviceBatches(InteractionListMode list_mode, int n_walk_limit) {
    if (list_mode != REUSE_LIST) device_batch_size_ = n_walk_limit;
  }

  /// The check of a REUSE_LIST call: a preceding record() on this guard, the same particle system,
  /// unchanged layout and size, a communicator of the same size. Collective over comm: every
  /// rank calls it, and all throw grove::Error (naming `stage`) when any rank finds a problem.
  template <class PSys>
  void check(const PSys& psys, const Comm& comm, std::string_view stage) const {
    std::optional<std::string> problem;
    if (!valid_)
      problem = "REUSE_LIST needs a preceding MAKE_LIST_FOR_REUSE call on this tree";
    else if (psys_ != &psys)
      problem = "REUSE_LIST was given a different particle system than the MAKE_LIST_FOR_REUSE call";
    else if (layoutVersionOf(psys) != layout_version_ || psys.size() != n_local_)
      problem = fmt::format("particles were added, removed, reordered or exchanged since MAKE_LIST_FOR_REUSE "
                            "({} particles then, {} now): call MAKE_LIST_FOR_REUSE again after exchangeParticle (a tree with "
                            "ParticleOrder::TREE_ORDER reorders them on its list-building calls)",
                            n_local_, psys.size());
    else if (ranks_ != comm.size())
      problem = "REUSE_LIST on a different communicator than MAKE_LIST_FOR_REUSE";
    comm.throwIfAnyFailed(problem, stage);
  }

 private:
  bool valid_ = false;
  const void* psys_ = nullptr;
  std::uint64_t layout_version_ = 0;
  std::size_t n_local_ = 0;
  int ranks_ = 0;
  int device_batch_size_ = 0;  // n_walk_limit of the lists an accelerator holds; 0: none current
};

}  // namespace grove
