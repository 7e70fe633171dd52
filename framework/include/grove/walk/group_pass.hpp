#pragma once
/// @file
/// The host's pass over interaction groups, shared by the long- and short-range trees: OpenMP
/// threads take groups dynamically (chunks of 4, since list lengths vary a lot between groups),
/// each thread fills its own scratch lists for a group (the walk, or a copy of kept lists) and then
/// calls the user's kernel on them. The pass adds up each thread's walk and kernel seconds and the
/// pairs it computed, for the trees' profiles.
#include <cstddef>
#include <cstdint>

#include <omp.h>

#include "grove/core/host_loop.hpp"

namespace grove {

/// What a pass over the groups took and computed.
struct GroupPassTotals {
  double walk_thread_seconds = 0.0;    ///< seconds in collect, summed over threads
  double kernel_thread_seconds = 0.0;  ///< seconds in compute, summed over threads
  std::int64_t n_ep_ep = 0;            ///< i-particle x j-particle pairs
  std::int64_t n_ep_sp = 0;            ///< i-particle x superparticle pairs
};

/// The pairs one group's kernel calls computed.
struct GroupPairs {
  std::int64_t ep_ep = 0;  ///< i-particle x j-particle pairs
  std::int64_t ep_sp = 0;  ///< i-particle x superparticle pairs
};

/// For each group g in [0, n_groups): collect(g, scratch), then pairs = compute(g, scratch).
/// Scratch is default-constructed once per thread and reused across its groups, so its vectors
/// keep their capacity. collect and compute run concurrently on different groups: they must only
/// write to the scratch and to the group's own outputs. Returns the summed seconds and pairs.
template <class Scratch, class Collect, class Compute>
GroupPassTotals forEachGroupOnThreads(std::size_t n_groups, Collect&& collect, Compute&& compute) {
  double walk = 0.0, kernel = 0.0;
  std::int64_t ep_ep = 0, ep_sp = 0;
  const auto ng = static_cast<std::int64_t>(n_groups);
  const auto one_group = [&](std::int64_t g, Scratch& scratch, double& walk_s, double& kernel_s,
                             std::int64_t& n_ep_ep, std::int64_t& n_ep_sp) {
    const auto gg = static_cast<std::size_t>(g);
    const double t0 = omp_get_wtime();
    collect(gg, scratch);
    const double t1 = omp_get_wtime();
    const GroupPairs pairs = compute(gg, scratch);
    walk_s += t1 - t0;
    kernel_s += omp_get_wtime() - t1;
    n_ep_ep += pairs.ep_ep;
    n_ep_sp += pairs.ep_sp;
  };
  if (!hostLoopsShareThreads()) {
    Scratch scratch;
    for (std::int64_t g = 0; g < ng; ++g) one_group(g, scratch, walk, kernel, ep_ep, ep_sp);
    return {walk, kernel, ep_ep, ep_sp};
  }
#pragma omp parallel reduction(+ : walk, kernel, ep_ep, ep_sp)
  {
    Scratch scratch;
#pragma omp for schedule(dynamic, 4)
    for (std::int64_t g = 0; g < ng; ++g) one_group(g, scratch, walk, kernel, ep_ep, ep_sp);
  }
  return {walk, kernel, ep_ep, ep_sp};
}

}  // namespace grove
