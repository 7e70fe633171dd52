#pragma once
/// @file
/// grove::agreeOnFailure: the step a collective I/O path takes after every stage that can fail on
/// one rank alone (a write on a full disk, a read error), before any rank enters the next
/// collective call. Unlike Comm::throwIfAnyFailed, whose other ranks say only that some rank
/// failed, every rank throws the same message, that of the lowest rank with a problem, so that
/// each rank's log names the file and the system's reason:
///
///     std::optional<std::string> problem = file.writeAt(offset, bytes);   // this rank alone
///     grove::agreeOnFailure(comm, problem, "Checkpoint::write");           // collective
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "grove/comm/comm.hpp"
#include "grove/core/error.hpp"

namespace grove {

/// Collective over comm: every rank calls it, with its own problem (nullopt: none). Returns when no
/// rank has a problem; otherwise every rank throws grove::Error(stage, "<the lowest failing rank's
/// problem> (found by rank F)"), the rank named when comm has several ranks.
inline void agreeOnFailure(const Comm& comm, const std::optional<std::string>& problem, std::string_view stage) {
  const int first = comm.allreduceMin(problem ? comm.rank() : comm.size());
  if (first == comm.size()) return;
  std::vector<char> text;
  if (comm.rank() == first) text.assign(problem->begin(), problem->end());
  comm.broadcast(text, first);
  const std::string message(text.begin(), text.end());
  throw Error(stage, comm.size() == 1 ? message : fmt::format("{} (found by rank {})", message, first));
}

/// The same for a problem only rank 0 can find (it alone lists, renames, reads a frame): an empty
/// root_problem is none; the other ranks pass an empty string. Collective over comm.
inline void agreeOnRootFailure(const Comm& comm, const std::string& root_problem, std::string_view stage) {
  agreeOnFailure(comm, root_problem.empty() ? std::nullopt : std::optional<std::string>(root_problem), stage);
}

}  // namespace grove
