#pragma once
/// @file
/// The tree build's stages on the device (nvcc only), each the grove::Gpu form of a host stage.
/// @verbatim
///   boundingBox(Gpu, items, n[, box_of]) CUB reduce of the positions (or boxes) (host: boundingBox(Cpu, ..))
///   mortonKeys(Gpu, root, items, n, ..)  RootCell::keyOf per item                (host: mortonKeys(Cpu, ..))
///   sortByKey(Gpu, keys, index, ..)      CUB radix sort, stable                   (host: sortByKey(Cpu, ..))
///   linkCells(Gpu, keys, .., shape)      grove::linking's per-cell steps by level (host: linkCells(Cpu, ..))
///   computeMoments(Gpu, shape, ..)       momentOfCell, deepest level first        (host: computeMoments(Cpu, ..))
///   makeGroups(Gpu, shape, ..)           cells the host's makeGroups picks, Morton order (host: makeGroups(Cpu, ..))
/// @endverbatim
/// boundingBox, with CubScratch, exclusiveSum and blocksFor, lives in the device runtime
/// (grove/gpu/device_primitives.cuh, included here), where the domain decomposition reaches it too.
///
/// Host and device share the per-item bodies (RootCell::keyOf, grove/tree/cell_linking.hpp,
/// momentOfCell), so the device's keys, order, cells and groups equal the host's exactly, and its
/// moments equal them up to the order of floating-point sums (the same order here too: one
/// thread per cell, children and particles in index order). Work goes on the policy's stream;
/// the functions that return a host value (boundingBox, the level counts of linkCells, the group
/// count) wait for it. CUDA failures throw grove::Error (grove::gpu::check).
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_select.cuh>
#include <utility>
#include <vector>

#include "grove/core/box.hpp"
#include "grove/core/execution.hpp"
#include "grove/gpu/cuda_resources.hpp"
#include "grove/gpu/device_primitives.cuh"
#include "grove/gpu/device_vector.hpp"
#include "grove/core/particle_traits.hpp"
#include "grove/tree/cell_linking.hpp"
#include "grove/tree/moment_pass.hpp"
#include "grove/tree/morton.hpp"
#include "grove/tree/tree_cells.hpp"

namespace grove::gpu {

/// The octree's shape on the device: the cells in the host's layout (grove/tree/tree_cells.hpp),
/// the level boundaries on the host (the link loop knows them as it goes).
struct DeviceTreeShape {
  DeviceVector<TreeCell> cells;            ///< cells[0] is the root (device memory)
  std::vector<std::uint32_t> level_begin;  ///< cells of level l: [level_begin[l], level_begin[l + 1]) (host)
  /// Number of levels (level_begin.size() - 1).
  int levels() const { return static_cast<int>(level_begin.size()) - 1; }
  /// Number of cells.
  std::size_t size() const { return cells.size(); }
};

// ---- kernels ------------------------------------------------------------------------------------
namespace kernel {

// out[k] = items[index[k]]: a selection, or a permutation, gathered.
template <class T, class Index>
__global__ void gatherSelected(const T* __restrict__ items, const Index* __restrict__ index, std::size_t n,
                               T* __restrict__ out) {
  const std::size_t k = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (k < n) out[k] = items[index[k]];
}

template <class P>
__global__ void mortonKeys(RootCell root, const P* __restrict__ items, std::size_t n, MortonKey* __restrict__ keys,
                           std::uint32_t* __restrict__ index, std::uint32_t first_index) {
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  keys[i] = root.keyOf(positionOf(items[i]));
  index[i] = first_index + static_cast<std::uint32_t>(i);
}

// Non-template kernels in a header are static: each .cu that includes it compiles its own copy
// (its device code is its own anyway) and no host stub is defined twice at link time. `inline`
// did that too, but nvcc ignores it on __global__ functions and warns (#20050-D) in user code.

static __global__ void countChildren(const TreeCell* __restrict__ cells, std::uint32_t begin, std::uint32_t n,
                                     const MortonKey* __restrict__ ep_keys, const MortonKey* __restrict__ sp_keys,
                                     int n_leaf_limit, std::uint32_t* __restrict__ counts) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) counts[i] = linking::childCount(cells[begin + i], ep_keys, sp_keys, n_leaf_limit);
  if (i == n) counts[n] = 0;  // the exclusive scan's total lands here
}

static __global__ void writeChildren(TreeCell* __restrict__ cells, std::uint32_t begin, std::uint32_t end,
                                     std::uint32_t n, const std::uint32_t* __restrict__ offsets,
                                     const MortonKey* __restrict__ ep_keys, const MortonKey* __restrict__ sp_keys) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  linking::writeChildren(cells[begin + i], cells, end + offsets[i], offsets[i + 1] - offsets[i], ep_keys, sp_keys);
}

template <class Moment, class EPJ, class SPJ>
__global__ void momentsOfLevel(int pass, const TreeCell* __restrict__ cells, std::uint32_t begin, std::uint32_t n,
                               const EPJ* __restrict__ epj, const SPJ* __restrict__ spj, Moment* moments) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const std::uint32_t c = begin + i;
  moments[c] = momentOfCell<Moment>(pass, cells[c], epj, spj, moments, moments[c]);
}

// Group cells, as the host's depth-first makeGroups chooses them: a cell with particles that is
// a leaf or holds at most n_group_limit of them, whose parent was opened (the root: always
// considered). Written as (ep_first << 32 | ep_count), so that sorting sorts by ep_first.
static __global__ void flagGroups(const TreeCell* __restrict__ cells, std::uint32_t n_cells, int n_group_limit,
                                  std::uint8_t* __restrict__ flags) {
  const std::uint32_t c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= n_cells) return;
  const auto groupable = [&](const TreeCell& cell) {
    return cell.ep_count > 0 && (cell.isLeaf() || cell.ep_count <= static_cast<std::uint32_t>(n_group_limit));
  };
  const TreeCell& cell = cells[c];
  if (c == 0) flags[0] = groupable(cell) ? 1 : 0;
  // Opened: holds particles and is not itself a group. Its children start unflagged (set here).
  if (cell.isLeaf() || !(cell.ep_count > 0 && !groupable(cell))) return;
  for (int k = 0; k < cell.child_count; ++k) {
    const auto child = static_cast<std::uint32_t>(cell.child_first + k);
    flags[child] = groupable(cells[child]) ? 1 : 0;
  }
}

// Groups of more than `target` particles cut into ceil(count / target) runs of equal length.
static __global__ void countGroupPieces(const std::uint64_t* __restrict__ groups, std::uint32_t n, std::uint32_t target,
                                        std::uint32_t* __restrict__ pieces) {
  const std::uint32_t g = blockIdx.x * blockDim.x + threadIdx.x;
  if (g < n) pieces[g] = (static_cast<std::uint32_t>(groups[g]) + target - 1) / target;
  if (g == n) pieces[n] = 0;  // the exclusive scan's total lands here
}

static __global__ void writeGroupPieces(const std::uint64_t* __restrict__ groups, std::uint32_t n,
                                        const std::uint32_t* __restrict__ offsets, std::uint64_t* __restrict__ out) {
  const std::uint32_t g = blockIdx.x * blockDim.x + threadIdx.x;
  if (g >= n) return;
  const std::uint64_t first = groups[g] >> 32, count = groups[g] & 0xffffffffull;
  const std::uint64_t m = offsets[g + 1] - offsets[g];
  for (std::uint64_t k = 0; k < m; ++k) {
    const std::uint64_t begin = first + count * k / m, end = first + count * (k + 1) / m;
    out[offsets[g] + k] = (begin << 32) | (end - begin);
  }
}

static __global__ void packGroupCells(const TreeCell* __restrict__ cells, std::uint32_t n_cells,
                                      std::uint64_t* __restrict__ packed) {
  const std::uint32_t c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c < n_cells) packed[c] = (std::uint64_t{cells[c].ep_first} << 32) | cells[c].ep_count;
}

}  // namespace kernel

// ---- stages ---------------------------------------------------------------------------------------

/// keys[i] = root.keyOf(position of items[i]), index[i] = first_index + i, for i < n (device
/// arrays of n elements each); not waited for.
template <class P>
void mortonKeys(Gpu policy, const RootCell& root, const P* items, std::size_t n, MortonKey* keys,
                std::uint32_t* index, std::uint32_t first_index = 0) {
  if (n == 0) return;
  kernel::mortonKeys<<<blocksFor(n, 256), 256, 0, policy.stream>>>(root, items, n, keys, index, first_index);
  check(cudaGetLastError(), "mortonKeys kernel launch");
}

namespace detail {
// CUB's stable radix sort of n (key, index) pairs over the key bits, from keys/index with the
// second buffers keys_alt/index_alt; returns whether the sorted keys and indices ended in the
// second buffers. Not waited for.
inline std::pair<bool, bool> sortPairsByKey(Gpu policy, MortonKey* keys, MortonKey* keys_alt, std::uint32_t* index,
                                            std::uint32_t* index_alt, std::size_t n, CubScratch& scratch) {
  cub::DoubleBuffer<MortonKey> k(keys, keys_alt);
  cub::DoubleBuffer<std::uint32_t> v(index, index_alt);
  constexpr int kKeyBits = 3 * kMortonLevels;
  std::size_t temp_bytes = 0;
  check(cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, k, v, static_cast<std::int64_t>(n), 0, kKeyBits,
                                        policy.stream),
        "cub::DeviceRadixSort::SortPairs (size)");
  check(cub::DeviceRadixSort::SortPairs(scratch.get(temp_bytes), temp_bytes, k, v, static_cast<std::int64_t>(n), 0,
                                        kKeyBits, policy.stream),
        "cub::DeviceRadixSort::SortPairs");
  return {k.Current() != keys, v.Current() != index};
}
}  // namespace detail

/// Stable sort of (key, index) by key; keys_alt and index_alt are the radix sort's second buffers
/// (resized to keys.size(); the sorted data end up in keys and index, possibly by swapping
/// buffers). Needs index.size() == keys.size(). Not waited for.
inline void sortByKey(Gpu policy, DeviceVector<MortonKey>& keys, DeviceVector<MortonKey>& keys_alt,
                      DeviceVector<std::uint32_t>& index, DeviceVector<std::uint32_t>& index_alt,
                      CubScratch& scratch) {
  const std::size_t n = keys.size();
  keys_alt.resize(n);
  index_alt.resize(n);
  if (n == 0) return;
  const auto [keys_moved, index_moved] =
      detail::sortPairsByKey(policy, keys.data(), keys_alt.data(), index.data(), index_alt.data(), n, scratch);
  if (keys_moved) keys.swap(keys_alt);
  if (index_moved) index.swap(index_alt);
}

/// The same sort with second buffers the caller lends (device memory of keys.size() keys and
/// indices, 8-byte aligned, untouched by others until the sort is done): the sorted data are
/// copied back into keys and index when they end in the lent buffers. Not waited for.
inline void sortByKey(Gpu policy, DeviceVector<MortonKey>& keys, MortonKey* keys_alt, DeviceVector<std::uint32_t>& index,
                      std::uint32_t* index_alt, CubScratch& scratch) {
  const std::size_t n = keys.size();
  if (n == 0) return;
  const auto [keys_moved, index_moved] =
      detail::sortPairsByKey(policy, keys.data(), keys_alt, index.data(), index_alt, n, scratch);
  if (keys_moved)
    check(cudaMemcpyAsync(keys.data(), keys_alt, n * sizeof(MortonKey), cudaMemcpyDeviceToDevice, policy.stream),
          "cudaMemcpyAsync (sorted keys)");
  if (index_moved)
    check(cudaMemcpyAsync(index.data(), index_alt, n * sizeof(std::uint32_t), cudaMemcpyDeviceToDevice,
                          policy.stream),
          "cudaMemcpyAsync (sorted indices)");
}

/// Links the cells of the sorted key arrays (device arrays of n_ep and n_sp keys), level by level,
/// as the host's linkCells does (the same cells in the same order), into `shape` (rebuilt, its
/// memory reused). A cell holding more than n_leaf_limit entries splits. `offsets` is scratch
/// for the per-level child counts; waits for each level's cell count.
inline void linkCells(Gpu policy, const MortonKey* ep_keys, std::size_t n_ep, const MortonKey* sp_keys,
                      std::size_t n_sp, int n_leaf_limit, DeviceTreeShape& shape,
                      DeviceVector<std::uint32_t>& offsets, CubScratch& scratch) {
  cudaStream_t stream = policy.stream;
  shape.cells.resize(n_ep + n_sp + kMortonLevels + 1);  // the host's reservation; grows if needed
  const TreeCell root = linking::rootOf(static_cast<std::uint32_t>(n_ep), static_cast<std::uint32_t>(n_sp));
  check(cudaMemcpyAsync(shape.cells.data(), &root, sizeof(TreeCell), cudaMemcpyHostToDevice, stream),
        "cudaMemcpyAsync (root cell)");
  shape.level_begin.assign({0, 1});
  std::uint32_t n_cells = 1;
  for (int level = 0; level < kMortonLevels; ++level) {
    const std::uint32_t begin = shape.level_begin[static_cast<std::size_t>(level)];
    const std::uint32_t end = shape.level_begin[static_cast<std::size_t>(level) + 1];
    const std::uint32_t n = end - begin;
    offsets.resize(std::size_t{n} + 1);
    kernel::countChildren<<<blocksFor(std::size_t{n} + 1, 128), 128, 0, stream>>>(
        shape.cells.data(), begin, n, ep_keys, sp_keys, n_leaf_limit, offsets.data());
    check(cudaGetLastError(), "countChildren kernel launch");
    exclusiveSum(scratch, offsets.data(), offsets.data(), static_cast<std::int64_t>(n) + 1, stream,
                 "cub::DeviceScan::ExclusiveSum (children)");
    const std::uint32_t new_cells = offsets.elementToHost(n, stream);
    if (new_cells == 0) break;
    if (std::size_t{end} + new_cells > shape.cells.size())
      shape.cells.resizeKeep(std::size_t{end} + new_cells + (n_ep + n_sp) / 8 + 64, stream);
    kernel::writeChildren<<<blocksFor(n, 128), 128, 0, stream>>>(shape.cells.data(), begin, end, n, offsets.data(),
                                                                   ep_keys, sp_keys);
    check(cudaGetLastError(), "writeChildren kernel launch");
    n_cells = end + new_cells;
    shape.level_begin.push_back(n_cells);
  }
  shape.cells.resizeKeep(n_cells, stream);
}

/// Moments of every cell, bottom-up, pass 1 then (if the moment type has one) pass 2, into
/// `moments` (a device array of shape.size() elements, indexed like the cells), from the
/// key-sorted epj and spj the cells index; not waited for.
template <class Moment, class EPJ, class SPJ>
void computeMoments(Gpu policy, const DeviceTreeShape& shape, const EPJ* epj, const SPJ* spj, Moment* moments) {
  constexpr int kPasses = momentHasSecondPass<Moment>() ? 2 : 1;
  for (int pass = 1; pass <= kPasses; ++pass) {
    for (int level = shape.levels() - 1; level >= 0; --level) {
      const std::uint32_t begin = shape.level_begin[static_cast<std::size_t>(level)];
      const std::uint32_t n = shape.level_begin[static_cast<std::size_t>(level) + 1] - begin;
      kernel::momentsOfLevel<Moment, EPJ, SPJ>
          <<<blocksFor(n, 128), 128, 0, policy.stream>>>(pass, shape.cells.data(), begin, n, epj, spj, moments);
      check(cudaGetLastError(), "momentsOfLevel kernel launch");
    }
  }
}

/// The interaction groups, in Morton order, as (ep_first << 32 | ep_count) (waits for their count):
/// the cells the host's makeGroups picks (cells with EPJ that are leaves or hold at most
/// n_group_limit of them, whose parent was opened). scratch_keys and flags are scratch.
inline void makeGroups(Gpu policy, const DeviceTreeShape& shape, int n_group_limit,
                       DeviceVector<std::uint64_t>& groups, DeviceVector<std::uint64_t>& scratch_keys,
                       DeviceVector<std::uint8_t>& flags, CubScratch& scratch) {
  cudaStream_t stream = policy.stream;
  const auto n_cells = static_cast<std::uint32_t>(shape.size());
  flags.resize(n_cells);
  scratch_keys.resize(std::size_t{n_cells} + 1);  // packed cells, then the selected count
  groups.resize(n_cells);
  check(cudaMemsetAsync(flags.data(), 0, n_cells, stream), "cudaMemsetAsync (group flags)");
  kernel::flagGroups<<<blocksFor(n_cells, 256), 256, 0, stream>>>(shape.cells.data(), n_cells, n_group_limit,
                                                                    flags.data());
  kernel::packGroupCells<<<blocksFor(n_cells, 256), 256, 0, stream>>>(shape.cells.data(), n_cells,
                                                                        scratch_keys.data());
  check(cudaGetLastError(), "group kernels launch");
  std::uint64_t* selected_count = scratch_keys.data() + n_cells;
  std::size_t temp_bytes = 0;
  check(cub::DeviceSelect::Flagged(nullptr, temp_bytes, scratch_keys.data(), flags.data(), groups.data(),
                                   selected_count, static_cast<std::int64_t>(n_cells), stream),
        "cub::DeviceSelect::Flagged (size)");
  check(cub::DeviceSelect::Flagged(scratch.get(temp_bytes), temp_bytes, scratch_keys.data(), flags.data(),
                                   groups.data(), selected_count, static_cast<std::int64_t>(n_cells), stream),
        "cub::DeviceSelect::Flagged (groups)");
  const auto n_groups = static_cast<std::size_t>(scratch_keys.elementToHost(n_cells, stream));
  groups.resize(n_groups);
  if (n_groups < 2) return;
  // Level order to Morton order: sort by ep_first (the high half).
  scratch_keys.resize(n_groups);
  temp_bytes = 0;
  check(cub::DeviceRadixSort::SortKeys(nullptr, temp_bytes, groups.data(), scratch_keys.data(),
                                       static_cast<std::int64_t>(n_groups), 32, 64, stream),
        "cub::DeviceRadixSort::SortKeys (size)");
  check(cub::DeviceRadixSort::SortKeys(scratch.get(temp_bytes), temp_bytes, groups.data(), scratch_keys.data(),
                                       static_cast<std::int64_t>(n_groups), 32, 64, stream),
        "cub::DeviceRadixSort::SortKeys (groups)");
  groups.swap(scratch_keys);
}

/// Cuts every group of more than `target` particles into ceil(count / target) runs of equal
/// length in key order (a run of a cell's particles is a union of its sub-cells: still compact),
/// so that the pieces hold between target / 2 and target particles, whatever size the cells have
/// at this N (waits for the new count). target <= 0 or no groups: nothing changes.
/// scratch_groups and offsets are scratch.
inline void splitGroups(Gpu policy, DeviceVector<std::uint64_t>& groups, int target,
                        DeviceVector<std::uint64_t>& scratch_groups, DeviceVector<std::uint32_t>& offsets,
                        CubScratch& scratch) {
  cudaStream_t stream = policy.stream;
  const auto n = static_cast<std::uint32_t>(groups.size());
  if (n == 0 || target <= 0) return;
  offsets.resize(std::size_t{n} + 1);
  kernel::countGroupPieces<<<blocksFor(std::size_t{n} + 1, 256), 256, 0, stream>>>(
      groups.data(), n, static_cast<std::uint32_t>(target), offsets.data());
  check(cudaGetLastError(), "countGroupPieces kernel launch");
  exclusiveSum(scratch, offsets.data(), offsets.data(), static_cast<std::int64_t>(n) + 1, stream,
               "cub::DeviceScan::ExclusiveSum (group pieces)");
  const std::uint32_t pieces = offsets.elementToHost(n, stream);
  if (pieces == n) return;  // none larger than the target
  scratch_groups.resize(pieces);
  kernel::writeGroupPieces<<<blocksFor(n, 256), 256, 0, stream>>>(groups.data(), n, offsets.data(),
                                                                    scratch_groups.data());
  check(cudaGetLastError(), "writeGroupPieces kernel launch");
  groups.swap(scratch_groups);
}

}  // namespace grove::gpu
