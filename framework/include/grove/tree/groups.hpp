#pragma once
/// @file
/// Groups of i-particles that share one interaction list: the largest cells holding at most
/// n_group_limit particles (or leaves). A group is a contiguous range of the sorted EPI array.
#include <cstdint>
#include <vector>

#include "grove/core/box.hpp"
#include "grove/core/execution.hpp"
#include "grove/tree/tree_cells.hpp"

namespace grove {

/// One group of i-particles: a contiguous range of the key-sorted EPI array, walked with one
/// interaction list.
struct InteractionGroup {
  std::uint32_t first = 0;  ///< first index in the key-sorted EPI array
  std::uint32_t count = 0;  ///< number of particles
  Boxd box;                 ///< bounding box of the group's particles
};

/// The groups of a linked tree, in Morton order: the largest cells holding at most
/// n_group_limit EPJ, or leaves; cells without EPJ give no group. Boxes are left empty
/// (Boxd::empty()): the caller knows the particle type.
std::vector<InteractionGroup> makeGroups(Cpu, const TreeShape& shape, int n_group_limit);

}  // namespace grove
