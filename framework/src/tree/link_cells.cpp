#include "grove/core/execution.hpp"
#include "grove/core/host_loop.hpp"
#include "grove/tree/cell_linking.hpp"
#include "grove/tree/tree_cells.hpp"

namespace grove {

void linkCells(Cpu, std::span<const MortonKey> ep_keys, std::span<const MortonKey> sp_keys, int n_leaf_limit,
               TreeShape& shape) {
  // Trees of leaf limit 8 or so have well under one cell per entry; reserving that avoids
  // regrowing (and faulting in) the cell array level by level. (Chains of single-child cells
  // can exceed it; the array then grows as usual.)
  shape.cells.clear();
  shape.cells.reserve(ep_keys.size() + sp_keys.size() + kMortonLevels + 1);
  shape.level_begin.clear();
  shape.cells.push_back(
      linking::rootOf(static_cast<std::uint32_t>(ep_keys.size()), static_cast<std::uint32_t>(sp_keys.size())));
  shape.level_begin.assign({0, 1});

  std::vector<std::uint32_t> child_offset;  // read by every thread of the level loops
  for (int level = 0; level < kMortonLevels; ++level) {
    const std::uint32_t begin = shape.level_begin[static_cast<std::size_t>(level)];
    const std::uint32_t end = shape.level_begin[static_cast<std::size_t>(level) + 1];
    const auto n = static_cast<std::int64_t>(end - begin);
    // Pass 1: how many non-empty children each splitting cell has. (Pass 2 searches again:
    // keeping 72 bytes of bounds per cell costs more, in fresh memory, than the searches.)
    child_offset.assign(static_cast<std::size_t>(n) + 1, 0);
    forEachIndex(0, n, [&](std::int64_t i) {
      const auto ii = static_cast<std::size_t>(i);
      child_offset[ii + 1] = linking::childCount(shape.cells[begin + ii], ep_keys.data(), sp_keys.data(), n_leaf_limit);
    });
    for (std::size_t i = 0; i < static_cast<std::size_t>(n); ++i) child_offset[i + 1] += child_offset[i];
    const std::uint32_t new_cells = child_offset[static_cast<std::size_t>(n)];
    if (new_cells == 0) break;
    shape.cells.resize(shape.cells.size() + new_cells);
    // Pass 2: write the children, contiguous per parent, in Morton order.
    forEachIndex(0, n, [&](std::int64_t i) {
      const auto ii = static_cast<std::size_t>(i);
      linking::writeChildren(shape.cells[begin + ii], shape.cells.data(), end + child_offset[ii],
                             child_offset[ii + 1] - child_offset[ii], ep_keys.data(), sp_keys.data());
    });
    shape.level_begin.push_back(end + new_cells);
  }
}

}  // namespace grove
