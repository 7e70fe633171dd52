#pragma once
/// @file
/// Merging key-sorted received particles into an already key-sorted local array: how
/// the global tree gets its particles without sorting the local ones again.
#include <cstdint>
#include <span>
#include <vector>

#include "grove/core/execution.hpp"
#include "grove/tree/key_order.hpp"
#include "grove/tree/morton.hpp"

namespace grove {

/// sorted (with sorted_keys) merged with `extra` (any order) into out / keys_out. Ties put the
/// sorted array's element first, so the result is deterministic. source (optional) gets, for each
/// output position, i < sorted.size() for sorted[i] or sorted.size() + k for extra[k].
/// Needs sorted_keys the keys of sorted (relative to the same root), ascending, one per element;
/// out must not alias sorted or extra.
template <class P, class Alloc>
void mergeIntoSorted(const RootCell& root, std::span<const MortonKey> sorted_keys, std::span<const P> sorted,
                     std::span<const P> extra, std::vector<MortonKey>& keys_out, std::vector<P, Alloc>& out,
                     std::vector<std::uint32_t>* source = nullptr) {
  std::vector<MortonKey> extra_keys;
  std::vector<P> extra_sorted;
  std::vector<std::uint32_t> extra_source;
  sortIntoKeyOrder(Cpu{}, root, extra, extra_keys, extra_sorted, source ? &extra_source : nullptr);
  const std::size_t na = sorted.size(), nb = extra_sorted.size();
  keys_out.resize(na + nb);
  out.resize(na + nb);
  if (source) source->resize(na + nb);
  std::size_t a = 0, b = 0, o = 0;
  while (a < na || b < nb) {
    if (b == nb || (a < na && sorted_keys[a] <= extra_keys[b])) {
      if (source) (*source)[o] = static_cast<std::uint32_t>(a);
      keys_out[o] = sorted_keys[a];
      out[o++] = sorted[a++];
    } else {
      if (source) (*source)[o] = static_cast<std::uint32_t>(na + extra_source[b]);
      keys_out[o] = extra_keys[b];
      out[o++] = extra_sorted[b++];
    }
  }
}

/// mergeIntoSorted replayed with new values (list reuse: the same particles, moved): out[o] is
/// sorted[source[o]] for source[o] < sorted.size(), else extra[source[o] - sorted.size()], for the
/// source a mergeIntoSorted of as many particles recorded. out.size() must equal source.size().
/// OpenMP threads.
template <class P>
void replayMerge(Cpu, std::span<const std::uint32_t> source, std::span<const P> sorted, std::span<const P> extra,
                 std::span<P> out) {
  const std::size_t n_sorted = sorted.size();
  const auto n = static_cast<std::int64_t>(source.size());
#pragma omp parallel for schedule(static)
  for (std::int64_t o = 0; o < n; ++o) {
    const std::uint32_t src = source[static_cast<std::size_t>(o)];
    out[static_cast<std::size_t>(o)] = src < n_sorted ? sorted[src] : extra[src - n_sorted];
  }
}

}  // namespace grove
