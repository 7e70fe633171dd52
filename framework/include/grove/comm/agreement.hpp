#pragma once
// Collective error handling. When one rank finds bad input inside a collective stage, every
// rank must leave the stage together, or the others wait forever in the next message. Each rank
// passes its own finding (or none); if any rank found something, all ranks throw grove::Error:
// the finder with its own message, the others naming the finder.
#include <optional>
#include <string>
#include <string_view>

#include "grove/comm/comm.hpp"

namespace grove {

inline void throwIfAnyRankFailed(const Comm& comm, const std::optional<std::string>& my_failure,
                                 std::string_view stage) {
  const int no_failure = comm.size();
  const int first_failed_rank = comm.allreduceMin(my_failure ? comm.rank() : no_failure);
  if (first_failed_rank == no_failure) return;
  if (my_failure) throw Error(stage, *my_failure);
  throw Error(stage, fmt::format("stopped because rank {} found bad input (its message names it); nothing was "
                                 "changed here",
                                 first_failed_rank));
}

}  // namespace grove
