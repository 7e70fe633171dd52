#pragma once
/// @file
/// GROVE_FAULT_INJECT: grove's file layer failing on purpose, so that tests can show what a full
/// disk or a killed process does to checkpoints, snapshots and particle files, on machines where
/// no small disk can be mounted (doc/io.md, "Fault injection"):
///
///     GROVE_FAULT_INJECT=enospc:N      from its N-th write on, every write of each process fails
///                                      with ENOSPC ("No space left on device"), as on a disk that
///                                      filled: nothing of that write reaches the file
///     GROVE_FAULT_INJECT=enospc:N@R    the same on world rank R alone
///     GROVE_FAULT_INJECT=kill:N[@R]    the process kills itself (SIGKILL) at its N-th write
///
/// A write is one call that puts bytes into a file on this process: a SharedFile write (a
/// checkpoint's block of one record, or rank 0's preamble, directory or end mark), an HDF5
/// snapshot's layout (rank 0) or its rows of one dataset, one particle file. Unset or empty: off.
/// A malformed value makes every write fail with a message saying so, rather than being ignored.
/// Header-only so that grove_io (HDF5) and the communication backends share one count.
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include <fmt/format.h>

namespace grove::detail {

struct FaultPlan {
  enum class Action { kNone, kNoSpace, kKill };
  Action action = Action::kNone;
  std::int64_t from_write = 0;  // 1: the first write
  int rank = -1;                // -1: every rank
  std::string text;             // the setting, for messages
  std::string malformed;        // not empty: the setting could not be read
  std::int64_t writes = 0;      // this process's writes so far
};

inline FaultPlan parseFaultPlan(const char* setting) {
  FaultPlan plan;
  if (!setting || !*setting) return plan;
  plan.text = setting;
  const std::string_view s(setting);
  const std::size_t colon = s.find(':');
  const std::string_view action = s.substr(0, colon);
  long long n = 0, rank = -1;
  char tail = 0;
  const std::string rest = colon == std::string_view::npos ? std::string() : std::string(s.substr(colon + 1));
  const int fields = rest.find('@') == std::string::npos ? std::sscanf(rest.c_str(), "%lld%c", &n, &tail)
                                                          : std::sscanf(rest.c_str(), "%lld@%lld%c", &n, &rank, &tail);
  const bool with_rank = rest.find('@') != std::string::npos;
  const bool numbers_ok = fields == (with_rank ? 2 : 1) && n >= 1 && (!with_rank || rank >= 0);
  if ((action != "enospc" && action != "kill") || !numbers_ok) {
    plan.malformed = fmt::format("GROVE_FAULT_INJECT='{}' is malformed (expected enospc:N, enospc:N@RANK, kill:N or "
                                 "kill:N@RANK, N >= 1)",
                                 plan.text);
    return plan;
  }
  plan.action = action == "kill" ? FaultPlan::Action::kKill : FaultPlan::Action::kNoSpace;
  plan.from_write = n;
  plan.rank = static_cast<int>(rank);
  return plan;
}

inline FaultPlan& faultPlan() {
  static FaultPlan plan = parseFaultPlan(std::getenv("GROVE_FAULT_INJECT"));
  return plan;
}

// For tests inside one process: the same setting as the variable's (null or empty: off), with the
// count of writes started again.
inline void setFaultInjection(const char* setting) { faultPlan() = parseFaultPlan(setting); }

// Called by each write of grove's file layer on world rank `rank`, before it writes: the problem to
// report instead of writing (errno's text), or empty to write.
inline std::string injectedWriteFault(int rank) {
  FaultPlan& plan = faultPlan();
  if (!plan.malformed.empty()) return plan.malformed;
  if (plan.action == FaultPlan::Action::kNone || (plan.rank >= 0 && plan.rank != rank)) return {};
  if (++plan.writes < plan.from_write) return {};
  if (plan.action == FaultPlan::Action::kKill) std::raise(SIGKILL);
  return fmt::format("{} (GROVE_FAULT_INJECT={})", std::strerror(ENOSPC), plan.text);
}

}  // namespace grove::detail
