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
  comm.throwIfAnyFailed(my_failure, stage);
}

}  // namespace grove
