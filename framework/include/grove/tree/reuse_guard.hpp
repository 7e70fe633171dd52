#pragma once
// What a tree remembers of the particles when it keeps interaction lists for reuse
// (MAKE_LIST_FOR_REUSE), and the check a REUSE_LIST call makes against it. The check is
// collective: a misuse found on one rank stops every rank with a clear error.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "grove/comm/comm.hpp"
#include "grove/core/list_mode.hpp"

namespace grove {

template <class PSys>
std::uint64_t layoutVersionOf(const PSys& psys) {
  if constexpr (requires { psys.layoutVersion(); }) return psys.layoutVersion();
  return 0;
}

class ReuseGuard {
 public:
  template <class PSys>
  void record(const PSys& psys, const Comm& comm) {
    valid_ = true;
    psys_ = &psys;
    layout_version_ = layoutVersionOf(psys);
    n_local_ = psys.size();
    ranks_ = comm.size();
  }
  // New lists: whatever an accelerator kept from earlier steps is stale as well.
  void forget() {
    valid_ = false;
    device_batch_size_ = 0;
  }

  // Multiwalk: whether an index dispatch may be told that its lists are those it was sent on
  // the last list-building step (same batches, so the same n_walk_limit). A list-building
  // multiwalk call records its batch size.
  bool deviceListsUnchanged(InteractionListMode list_mode, int n_walk_limit) const {
    return list_mode == REUSE_LIST && device_batch_size_ == n_walk_limit;
  }
  void noteDeviceBatches(InteractionListMode list_mode, int n_walk_limit) {
    if (list_mode != REUSE_LIST) device_batch_size_ = n_walk_limit;
  }

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
