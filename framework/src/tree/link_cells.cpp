#include <algorithm>
#include <array>

#include "grove/tree/tree_cells.hpp"

namespace grove {

namespace {

// Where each of the 8 octants of `cell` begins in a sorted key range (and where the last ends).
std::array<std::uint32_t, 9> octantBounds(std::span<const MortonKey> keys, std::uint32_t first, std::uint32_t count,
                                          const TreeCell& cell) {
  std::array<std::uint32_t, 9> bounds{};
  if (count == 0) {  // e.g. the superparticle array of a local tree: nothing to search
    bounds.fill(first);
    return bounds;
  }
  const auto begin = keys.begin() + first, end = begin + count;
  bounds[0] = first;
  bounds[8] = first + count;
  const int child_level = cell.level + 1;
  auto lo = begin;
  for (int o = 1; o < 8; ++o) {
    const MortonKey start = cellKeyBegin((cell.prefix << 3) | static_cast<MortonKey>(o), child_level);
    lo = std::lower_bound(lo, end, start);
    bounds[static_cast<std::size_t>(o)] = static_cast<std::uint32_t>(lo - keys.begin());
  }
  return bounds;
}

bool splits(const TreeCell& c, int n_leaf_limit) {
  return c.count() > static_cast<std::uint32_t>(n_leaf_limit) && c.level < kMortonLevels;
}

}  // namespace

void linkCells(std::span<const MortonKey> ep_keys, std::span<const MortonKey> sp_keys, int n_leaf_limit,
               TreeShape& shape) {
  // Trees of leaf limit 8 or so have well under one cell per entry; reserving that avoids
  // regrowing (and faulting in) the cell array level by level. (Chains of single-child cells
  // can exceed it; the array then grows as usual.)
  shape.cells.clear();
  shape.cells.reserve(ep_keys.size() + sp_keys.size() + kMortonLevels + 1);
  shape.level_begin.clear();
  TreeCell root;
  root.ep_count = static_cast<std::uint32_t>(ep_keys.size());
  root.sp_count = static_cast<std::uint32_t>(sp_keys.size());
  shape.cells.push_back(root);
  shape.level_begin.assign({0, 1});

  std::vector<std::uint32_t> child_offset;  // read by every thread of the level loops
  for (int level = 0; level < kMortonLevels; ++level) {
    const std::uint32_t begin = shape.level_begin[static_cast<std::size_t>(level)];
    const std::uint32_t end = shape.level_begin[static_cast<std::size_t>(level) + 1];
    const auto n = static_cast<std::int64_t>(end - begin);
    // Pass 1: how many non-empty children each splitting cell has. (Pass 2 searches again:
    // keeping 72 bytes of bounds per cell costs more, in fresh memory, than the searches.)
    child_offset.assign(static_cast<std::size_t>(n) + 1, 0);
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < n; ++i) {
      const auto ii = static_cast<std::size_t>(i);
      const TreeCell& c = shape.cells[begin + ii];
      if (!splits(c, n_leaf_limit)) continue;
      const auto ep = octantBounds(ep_keys, c.ep_first, c.ep_count, c);
      const auto sp = octantBounds(sp_keys, c.sp_first, c.sp_count, c);
      std::uint32_t children = 0;
      for (int o = 0; o < 8; ++o) children += (ep[o + 1] > ep[o]) || (sp[o + 1] > sp[o]);
      child_offset[ii + 1] = children;
    }
    for (std::size_t i = 0; i < static_cast<std::size_t>(n); ++i) child_offset[i + 1] += child_offset[i];
    const std::uint32_t new_cells = child_offset[static_cast<std::size_t>(n)];
    if (new_cells == 0) break;
    shape.cells.resize(shape.cells.size() + new_cells);
    // Pass 2: write the children, contiguous per parent, in Morton order.
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < n; ++i) {
      const auto ii = static_cast<std::size_t>(i);
      TreeCell& c = shape.cells[begin + ii];
      if (!splits(c, n_leaf_limit)) continue;
      const auto ep = octantBounds(ep_keys, c.ep_first, c.ep_count, c);
      const auto sp = octantBounds(sp_keys, c.sp_first, c.sp_count, c);
      std::uint32_t out = end + child_offset[ii];
      c.child_first = static_cast<std::int32_t>(out);
      c.child_count = static_cast<std::uint8_t>(child_offset[ii + 1] - child_offset[ii]);
      for (int o = 0; o < 8; ++o) {
        if (ep[o + 1] == ep[o] && sp[o + 1] == sp[o]) continue;
        TreeCell& child = shape.cells[out++];
        child.prefix = (c.prefix << 3) | static_cast<MortonKey>(o);
        child.level = static_cast<std::uint8_t>(level + 1);
        child.ep_first = ep[o];
        child.ep_count = ep[o + 1] - ep[o];
        child.sp_first = sp[o];
        child.sp_count = sp[o + 1] - sp[o];
      }
    }
    shape.level_begin.push_back(end + new_cells);
  }
}

}  // namespace grove
