#pragma once
/// @file
/// Which neighbour search a long-range tree adds to its walk (FDPS's SEARCH_MODE_LONG_SCATTER and
/// SEARCH_MODE_LONG_SYMMETRY; walk/long_search.hpp states the tests). Apart, so that device code
/// (grove/force/resident_tree_long.cuh) names the mode without the host walks.
#include <cstdint>

namespace grove {

/// The neighbour search of a long-range walk.
enum class LongSearchMode : std::uint8_t {
  NONE,      ///< none: a plain Barnes-Hut walk
  SCATTER,   ///< open cells whose j search spheres overlap the target's positions
  SYMMETRY   ///< SCATTER, or the cell's positions overlap the target's i search spheres
};

}  // namespace grove
