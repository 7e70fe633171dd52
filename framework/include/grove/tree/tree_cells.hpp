#pragma once
/// @file
/// The octree's shape: cells over two key-sorted arrays (EPJ keys and SPJ keys), built level by
/// level. A cell covers one Morton prefix; its particles are a contiguous range of each array,
/// its non-empty children are contiguous in the cell array (in Morton order), and cells of one
/// level are contiguous, so every pass over the tree is a parallel loop over a level.
#include <cstdint>
#include <span>
#include <vector>

#include "grove/core/execution.hpp"
#include "grove/core/host_loop.hpp"
#include "grove/tree/morton.hpp"

namespace grove {

/// One octree cell: a Morton prefix, its ranges of the key-sorted EPJ and SPJ arrays, and its
/// children.
struct TreeCell {
  MortonKey prefix = 0;            ///< the keys of this cell's particles start with these 3*level bits
  std::uint32_t ep_first = 0;      ///< first index of the cell's range in the key-sorted EPJ array
  std::uint32_t ep_count = 0;      ///< EPJ in the cell
  std::uint32_t sp_first = 0;      ///< first index of the cell's range in the key-sorted SPJ array
  std::uint32_t sp_count = 0;      ///< SPJ in the cell
  std::int32_t child_first = -1;   ///< index of the first child in the cell array; -1: a leaf
  std::uint8_t child_count = 0;    ///< non-empty children (0 to 8), contiguous from child_first
  std::uint8_t level = 0;          ///< depth: 0 for the root, at most kMortonLevels

  /// Whether the cell has no children.
  GROVE_HOST_DEVICE bool isLeaf() const { return child_first < 0; }
  /// EPJ plus SPJ in the cell.
  GROVE_HOST_DEVICE std::uint32_t count() const { return ep_count + sp_count; }
};

/// The cells of an octree, level by level.
struct TreeShape {
  std::vector<TreeCell> cells;             ///< cells[0] is the root
  std::vector<std::uint32_t> level_begin;  ///< cells of level l: [level_begin[l], level_begin[l + 1])
  /// Number of levels (level_begin.size() - 1).
  int levels() const { return static_cast<int>(level_begin.size()) - 1; }
};

/// Calls visit(index, cell) for every cell, deepest level first, each level in parallel (OpenMP):
/// the order of every bottom-up pass (moments, boxes), where a cell needs its children done.
/// visit must be safe to call concurrently for cells of one level.
template <class Visit>
void forEachCellBottomUp(const TreeShape& shape, Visit&& visit) {
  for (int level = shape.levels() - 1; level >= 0; --level) {
    const auto begin = static_cast<std::int64_t>(shape.level_begin[static_cast<std::size_t>(level)]);
    const auto end = static_cast<std::int64_t>(shape.level_begin[static_cast<std::size_t>(level) + 1]);
    forEachIndex(begin, end, [&](std::int64_t c) {
      visit(static_cast<std::size_t>(c), shape.cells[static_cast<std::size_t>(c)]);
    });
  }
}

/// Links the cells of both sorted key arrays. A cell holding more than n_leaf_limit entries is
/// split into its non-empty octants, down to the deepest Morton level.
/// `shape` is rebuilt in place: its memory is reused from step to step.
/// The host form (OpenMP threads over the cells of a level); the device one takes grove::Gpu.
void linkCells(Cpu, std::span<const MortonKey> ep_keys, std::span<const MortonKey> sp_keys, int n_leaf_limit,
               TreeShape& shape);
/// linkCells into a new TreeShape.
inline TreeShape linkCells(Cpu policy, std::span<const MortonKey> ep_keys, std::span<const MortonKey> sp_keys,
                           int n_leaf_limit) {
  TreeShape shape;
  linkCells(policy, ep_keys, sp_keys, n_leaf_limit, shape);
  return shape;
}

}  // namespace grove
