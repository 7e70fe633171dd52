#pragma once
// FDPS 7.1's Initialize, Finalize and Abort over a grove::Runtime. Part of grove/fdps.hpp.
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

// Starts MPI (when grove has it) and OpenMP. mpool_size sized FDPS's memory pool; grove has none.
inline void Initialize(int& argc, char**& argv, const S64 mpool_size = 100000000) {
  (void)mpool_size;
  auto& runtime = detail::runtimeSlot();
  require(!runtime, "PS::Initialize", "called twice without PS::Finalize in between");
  runtime = std::make_unique<Runtime>(argc, argv);
}

// Stops what Initialize started. No grove object may be used afterwards.
inline void Finalize() { detail::runtimeSlot().reset(); }

// Ends every rank at once with exit code err (FDPS: MPI_Abort).
[[noreturn]] inline void Abort(const int err = -1) {
  Runtime::abortAll(fmt::format("PS::Abort({}) called on rank {}", err, ::grove::detail::worldRankForMessages()), err);
}

// Seconds on a monotonic clock; differences are elapsed time.
inline F64 GetWtime() {
  return std::chrono::duration<F64>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
inline F64 GetWtimeNoBarrier() { return GetWtime(); }

}  // namespace grove::fdps
