#pragma once
/// @file
/// FDPS 7.1's Initialize, Finalize and Abort over a grove::Runtime. Part of grove/fdps.hpp.
#include <memory>

#include "grove/fdps/vectors.hpp"
#include "grove/runtime/runtime.hpp"

namespace grove::fdps {

// ---- Initialize / Finalize / Abort ---------------------------------------------------------------------
namespace detail {
// The runtime an FDPS program starts with Initialize and stops with Finalize (or at exit).
inline std::unique_ptr<Runtime>& runtimeSlot() {
  static std::unique_ptr<Runtime> runtime;
  return runtime;
}
}  // namespace detail

/// Starts the grove::Runtime of an FDPS program: MPI (when grove has it) and the fatal-error
/// handler (grove::Runtime's constructor; MPI may remove its own arguments from argc/argv).
/// Call it first thing in main, on every rank, before any other PS:: or grove call.
/// mpool_size sized FDPS's memory pool; grove has none and ignores it.
/// Throws grove::Error when called twice without Finalize() in between.
inline void Initialize(int& argc, char**& argv, const S64 mpool_size = 100000000) {
  (void)mpool_size;
  auto& runtime = detail::runtimeSlot();
  require(!runtime, "PS::Initialize", "called twice without PS::Finalize in between");
  runtime = std::make_unique<Runtime>(argc, argv);
}

/// Stops what Initialize started (MPI is finalised if the Runtime initialised it). No grove
/// object may be used afterwards. Without it the Runtime stops at program exit. Calling it
/// without Initialize does nothing.
inline void Finalize() { detail::runtimeSlot().reset(); }

/// Ends every rank at once with exit code err (FDPS: MPI_Abort), after printing
/// "PS::Abort(err) called on rank R" (grove::Runtime::abortAll). Never returns.
[[noreturn]] inline void Abort(const int err = -1) {
  Runtime::abortAll(fmt::format("PS::Abort({}) called on rank {}", err, ::grove::detail::worldRankForMessages()), err);
}

/// Seconds on a monotonic clock; differences are elapsed time. Local: no barrier, no
/// communication.
inline F64 GetWtime() {
  return std::chrono::duration<F64>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
/// Same as GetWtime() (which has no barrier either).
inline F64 GetWtimeNoBarrier() { return GetWtime(); }

}  // namespace grove::fdps
