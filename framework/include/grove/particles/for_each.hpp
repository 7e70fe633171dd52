#pragma once
/// @file
/// forEach and transformReduce over host particles with the grove::Cpu policy: the same functors
/// as the device forms (grove/gpu/for_each.cuh), run by OpenMP threads. Local to this
/// rank: reduce across ranks with grove::Comm.
#include <cstddef>
#include <cstdint>
#include <vector>

#include <omp.h>

#include "grove/core/execution.hpp"

namespace grove {

/// Calls f(p) for every particle of a ParticleSystem (or any sized random-access range), the
/// particles shared among OpenMP threads (static schedule); returns when all are done.
///
/// Needs: f callable as f(particles[i]) from several threads at once, with no order between
/// particles. Not collective.
template <class Particles, class F>
void forEach(Cpu, Particles& particles, F f) {
  const auto n = static_cast<std::int64_t>(particles.size());
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < n; ++i) f(particles[static_cast<std::size_t>(i)]);
}

/// op-reduction of map(p) over the particles, starting from init (an identity of op); init when
/// there are no particles. Threads reduce contiguous shares and the partial results are combined
/// in thread order, so the result is reproducible for a fixed thread count.
///
/// Needs: init an identity of op (0 for a sum, -inf for a max); op associative; map and op
/// callable from several threads at once. Not collective: sums over ranks are the caller's
/// (Comm::allreduceSum).
template <class Particles, class T, class Op, class Map>
T transformReduce(Cpu, const Particles& particles, T init, Op op, Map map) {
  const auto n = static_cast<std::int64_t>(particles.size());
  std::vector<T> partial(static_cast<std::size_t>(omp_get_max_threads()), init);
#pragma omp parallel
  {
    T mine = init;
#pragma omp for schedule(static) nowait
    for (std::int64_t i = 0; i < n; ++i) mine = op(mine, map(particles[static_cast<std::size_t>(i)]));
    partial[static_cast<std::size_t>(omp_get_thread_num())] = mine;
  }
  // init is an identity of op (0 for a sum, -inf for a max), as for std::transform_reduce.
  T result = init;
  for (const T& p : partial) result = op(result, p);
  return result;
}

}  // namespace grove
