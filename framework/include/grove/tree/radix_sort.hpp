#pragma once
/// @file
/// Thread-parallel LSD radix sort of (Morton key, index) pairs: the tree's first cost every step.
#include <cstdint>
#include <span>
#include <vector>

#include "grove/core/large_vector.hpp"
#include "grove/tree/morton.hpp"

namespace grove {

/// A Morton key and the index of the item it belongs to.
struct KeyIndex {
  MortonKey key;        ///< the sort key
  std::uint32_t index;  ///< the item's position in the unsorted input
};

/// Sorts items by key, stably (equal keys keep their input order, so results are reproducible).
/// Only the digits that differ between the smallest and the largest key are processed.
/// scratch is resized as needed and may be kept between calls to avoid reallocation.
void radixSortByKey(LargeVector<KeyIndex>& items, LargeVector<KeyIndex>& scratch);

}  // namespace grove
