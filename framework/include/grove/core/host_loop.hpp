#pragma once
/// @file
/// Host loops over an index range: shared among OpenMP threads where more than one may run, and
/// run on the calling thread, without a parallel region, where only one may.
///
/// Opening a parallel region costs about a thousand instructions even when it has one thread
/// (libgomp allocates and frees a team for every region; an `if` clause does not avoid it). A
/// short-range tree of a few particles, rebuilt every step (FDPS's DEM sample), opens about twenty
/// a step, as many instructions as the rest of its step; with OMP_NUM_THREADS=1 they buy nothing.
#include <cstdint>

#include <omp.h>

namespace grove {

/// Whether host loops open a parallel region: more than one OpenMP thread may run.
inline bool hostLoopsShareThreads() { return omp_get_max_threads() > 1; }

/// body(i) for every i in [begin, end): among OpenMP threads with a static schedule (contiguous
/// shares, as `omp parallel for schedule(static)`) where hostLoopsShareThreads(), else in order on
/// the calling thread. body must be safe to call concurrently for different i.
template <class Body>
void forEachIndex(std::int64_t begin, std::int64_t end, Body&& body) {
  if (!hostLoopsShareThreads()) {
    for (std::int64_t i = begin; i < end; ++i) body(i);
    return;
  }
#pragma omp parallel for schedule(static)
  for (std::int64_t i = begin; i < end; ++i) body(i);
}

}  // namespace grove
