#pragma once
/// @file
/// The per-cell steps of linking an octree from sorted Morton keys, written once for the host
/// (linkCells(Cpu, ...), framework/src/tree/link_cells.cpp) and the device (linkCells(Gpu, ...),
/// grove/tree/tree_build_gpu.cuh), so that both give the same cells in the same order:
/// level by level, a cell holding more than n_leaf_limit entries splits into its non-empty
/// octants, which are written contiguously (Morton order) after the level's cells.
#include <cstdint>

#include "grove/core/execution.hpp"
#include "grove/tree/morton.hpp"
#include "grove/tree/tree_cells.hpp"

/// The per-cell steps of octree linking, shared by the host and the device (usable in kernels).
namespace grove::linking {

/// The first position in keys[first, last) whose key is not less than value (std::lower_bound).
/// Needs keys[first, last) sorted ascending; O(log(last - first)).
GROVE_HOST_DEVICE inline std::uint32_t lowerBound(const MortonKey* keys, std::uint32_t first, std::uint32_t last,
                                                  MortonKey value) {
  while (first < last) {
    const std::uint32_t mid = first + (last - first) / 2;
    if (keys[mid] < value) first = mid + 1;
    else last = mid;
  }
  return first;
}

/// Where each of the 8 octants of `cell` begins in the sorted key range [first, first + count)
/// (bounds[0] = first), and bounds[8] where the last ends. Needs the range sorted and its keys
/// inside the cell's prefix.
GROVE_HOST_DEVICE inline void octantBounds(const MortonKey* keys, std::uint32_t first, std::uint32_t count,
                                           const TreeCell& cell, std::uint32_t (&bounds)[9]) {
  bounds[0] = first;
  bounds[8] = first + count;
  const int child_level = cell.level + 1;
  std::uint32_t lo = first;
  for (int o = 1; o < 8; ++o) {
    if (count > 0) lo = lowerBound(keys, lo, first + count, cellKeyBegin((cell.prefix << 3) | MortonKey(o), child_level));
    bounds[o] = lo;
  }
}

/// Whether cell c is split: it holds more than n_leaf_limit entries (EPJ plus SPJ) and is not at
/// the deepest Morton level.
GROVE_HOST_DEVICE inline bool splits(const TreeCell& c, int n_leaf_limit) {
  return c.count() > static_cast<std::uint32_t>(n_leaf_limit) && c.level < kMortonLevels;
}

/// Pass 1 of a level: how many non-empty children (1 to 8) the cell gets, 0 for a leaf. A child
/// is non-empty when it holds an EPJ or an SPJ key.
GROVE_HOST_DEVICE inline std::uint32_t childCount(const TreeCell& c, const MortonKey* ep_keys,
                                                  const MortonKey* sp_keys, int n_leaf_limit) {
  if (!splits(c, n_leaf_limit)) return 0;
  std::uint32_t ep[9], sp[9];
  octantBounds(ep_keys, c.ep_first, c.ep_count, c, ep);
  octantBounds(sp_keys, c.sp_first, c.sp_count, c, sp);
  std::uint32_t children = 0;
  for (int o = 0; o < 8; ++o) children += (ep[o + 1] > ep[o]) || (sp[o + 1] > sp[o]);
  return children;
}

/// Pass 2: writes the cell's children at cells[out, out + children), Morton order, and links
/// them (sets c.child_first and c.child_count). `children` must be childCount() of the same
/// cell and keys; with 0 nothing changes and c stays a leaf.
GROVE_HOST_DEVICE inline void writeChildren(TreeCell& c, TreeCell* cells, std::uint32_t out, std::uint32_t children,
                                            const MortonKey* ep_keys, const MortonKey* sp_keys) {
  if (children == 0) return;
  std::uint32_t ep[9], sp[9];
  octantBounds(ep_keys, c.ep_first, c.ep_count, c, ep);
  octantBounds(sp_keys, c.sp_first, c.sp_count, c, sp);
  c.child_first = static_cast<std::int32_t>(out);
  c.child_count = static_cast<std::uint8_t>(children);
  for (int o = 0; o < 8; ++o) {
    if (ep[o + 1] == ep[o] && sp[o + 1] == sp[o]) continue;
    TreeCell child;
    child.prefix = (c.prefix << 3) | static_cast<MortonKey>(o);
    child.level = static_cast<std::uint8_t>(c.level + 1);
    child.ep_first = ep[o];
    child.ep_count = ep[o + 1] - ep[o];
    child.sp_first = sp[o];
    child.sp_count = sp[o + 1] - sp[o];
    cells[out++] = child;
  }
}

/// The root cell over both arrays: level 0, prefix 0, all n_ep EPJ and n_sp SPJ, a leaf until
/// its children are written.
GROVE_HOST_DEVICE inline TreeCell rootOf(std::uint32_t n_ep, std::uint32_t n_sp) {
  TreeCell root;
  root.ep_count = n_ep;
  root.sp_count = n_sp;
  return root;
}

}  // namespace grove::linking
