#pragma once
// Which neighbour search a long-range tree adds to its walk (FDPS's SEARCH_MODE_LONG_SCATTER and
// SEARCH_MODE_LONG_SYMMETRY; walk/long_search.hpp states the tests). Apart, so that device code
// (grove/gpu/resident/resident_tree.cuh) names the mode without the host walks.
#include <cstdint>

namespace grove {

enum class LongSearchMode : std::uint8_t { NONE, SCATTER, SYMMETRY };

}  // namespace grove
