#pragma once
// Groups of i-particles that share one interaction list: the largest cells holding at most
// n_group_limit particles (or leaves). A group is a contiguous range of the sorted EPI array.
#include <cstdint>
#include <vector>

#include "grove/core/box.hpp"
#include "grove/tree/tree_cells.hpp"

namespace grove {

struct InteractionGroup {
  std::uint32_t first = 0;  // in the key-sorted EPI array
  std::uint32_t count = 0;
  Boxd box;                 // bounding box of the group's particles
};

// Groups in Morton order (boxes left empty: the caller knows the particle type).
std::vector<InteractionGroup> makeGroups(const TreeShape& shape, int n_group_limit);

}  // namespace grove
