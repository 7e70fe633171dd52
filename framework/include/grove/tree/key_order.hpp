#pragma once
/// @file
/// The key stages of a tree build on the host, each the grove::Cpu form of a device stage
/// (grove::Gpu forms: the device tree-build stages, nvcc only):
///
///     boundingBox(Cpu, items)                     the box of the items' positions
///     mortonKeys(Cpu, root, items, keys)          RootCell::keyOf per item, with its index
///     sortByKey(Cpu, keys, scratch)               radix sort of (key, index) pairs, stable
///     sortIntoKeyOrder(Cpu, root, items, ..)      the three above, the items gathered in key order
///
/// The per-item work (RootCell::keyOf, positionOf) is the same function on both sides, so host
/// and device give the same keys and, the sorts being stable, the same order.
#include <omp.h>

#include <cstdint>
#include <span>
#include <vector>

#include "grove/core/box.hpp"
#include "grove/core/execution.hpp"
#include "grove/core/host_loop.hpp"
#include "grove/core/large_vector.hpp"
#include "grove/core/particle_traits.hpp"
#include "grove/tree/morton.hpp"
#include "grove/tree/radix_sort.hpp"

namespace grove {

/// The bounding box of items' positions (OpenMP threads; Boxd::empty() for no items).
template <class T>
Boxd boundingBox(Cpu, std::span<const T> items) {
  Boxd box = Boxd::empty();
  if (!hostLoopsShareThreads()) {
    for (std::size_t i = 0; i < items.size(); ++i) box.merge(positionOf(items[i]));
    return box;
  }
#pragma omp parallel
  {
    Boxd mine = Boxd::empty();
#pragma omp for schedule(static) nowait
    for (std::size_t i = 0; i < items.size(); ++i) mine.merge(positionOf(items[i]));
#pragma omp critical(grove_bounding_box)
    box.merge(mine);
  }
  return box;
}

/// keys[i] = {root.keyOf(position of items[i]), i} for every item (OpenMP threads); keys is
/// resized to items.size(). Items: anything with size() and operator[] giving a positioned item
/// (a span, a particle system). Needs fewer than 2^32 items.
template <class Items>
void mortonKeys(Cpu, const RootCell& root, const Items& items, LargeVector<KeyIndex>& keys) {
  const auto n = static_cast<std::int64_t>(items.size());
  keys.resize(items.size());
  forEachIndex(0, n, [&](std::int64_t i) {
    keys[static_cast<std::size_t>(i)] = {root.keyOf(positionOf(items[static_cast<std::size_t>(i)])),
                                         static_cast<std::uint32_t>(i)};
  });
}

/// Sorts (key, index) pairs by key, stably (radixSortByKey). scratch is resized as needed and may
/// be kept between calls.
inline void sortByKey(Cpu, LargeVector<KeyIndex>& keys, LargeVector<KeyIndex>& scratch) {
  radixSortByKey(keys, scratch);
}

/// items in key order (keys relative to root), with their keys, stably (equal keys keep their
/// input order): out and keys_out are resized to items.size(). source (optional) gets, for each
/// output position, the input index it came from, so the same order can be replayed.
/// P: a position readable by positionOf.
template <class P, class Alloc>
void sortIntoKeyOrder(Cpu policy, const RootCell& root, std::span<const P> items, std::vector<MortonKey>& keys_out,
                      std::vector<P, Alloc>& out, std::vector<std::uint32_t>* source = nullptr) {
  LargeVector<KeyIndex> keyed, scratch;
  mortonKeys(policy, root, items, keyed);
  sortByKey(policy, keyed, scratch);
  keys_out.resize(items.size());
  out.resize(items.size());
  if (source) source->resize(items.size());
  for (std::size_t i = 0; i < keyed.size(); ++i) {
    keys_out[i] = keyed[i].key;
    out[i] = items[keyed[i].index];
    if (source) (*source)[i] = keyed[i].index;
  }
}

}  // namespace grove
