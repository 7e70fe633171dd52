#pragma once
/// @file
/// The groups' interaction lists on the device, as a stage (nvcc only): the walks that write them
/// (walk/walk_gpu.cuh's buildLists), their offsets, the list kernel's description of them, their
/// split by origin for the LET overlap, and their evaluation by the multiwalk engine's list
/// kernel (gpu/multiwalk/multiwalk_kernel.cuh). grove::gpu::ResidentTreeLong sequences these; a
/// DeviceWalker holds what every walk needs (its stacks, its work counter, the overflow flag and
/// the interaction counters) and the persistent launch shape.
/// @verbatim
///   DeviceWalker::writeLists     count walk -> scanListCounts -> write walk   (targets' lists)
///   describeGroupLists           the list kernel's walk descriptors and tasks of the groups
///   splitListsByOrigin           a global tree's lists -> (this rank's entries, the others')
///   evaluateGroupLists           the user's interaction over a set of lists, into the forces
/// @endverbatim
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <utility>
#include <vector>

#include "grove/core/box.hpp"
#include "grove/core/error.hpp"
#include "grove/core/execution.hpp"
#include "grove/gpu/cuda_resources.hpp"
#include "grove/gpu/device_primitives.cuh"
#include "grove/gpu/device_vector.hpp"
#include "grove/gpu/multiwalk/multiwalk_kernel.cuh"
#include "grove/tree/tree_build_gpu.cuh"
#include "grove/walk/neighbour_search_gpu.cuh"
#include "grove/walk/walk_gpu.cuh"

namespace grove::gpu {

namespace kernel {

// Non-template kernels in a header are static: each .cu that includes it compiles its own copy
// (its device code is its own anyway) and no host stub is defined twice at link time. `inline`
// did that too, but nvcc ignores it on __global__ functions and warns (#20050-D) in user code.

static __global__ void splitListCounts(const int* __restrict__ counts, std::uint32_t n_groups,
                                       std::int64_t* __restrict__ j_counts, std::int64_t* __restrict__ s_counts) {
  const std::uint32_t g = blockIdx.x * blockDim.x + threadIdx.x;
  if (g < n_groups) j_counts[g] = counts[2 * g], s_counts[g] = counts[2 * g + 1];
  if (g == n_groups) j_counts[g] = 0, s_counts[g] = 0;
}

static __global__ void countInteractions(const WalkDesc* __restrict__ walks, std::uint32_t n_walks,
                                         unsigned long long* __restrict__ counters) {
  const std::uint32_t w = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned long long ep = 0, sp = 0;
  if (w < n_walks) {
    ep = static_cast<unsigned long long>(walks[w].n_i) * static_cast<unsigned long long>(walks[w].n_j);
    sp = static_cast<unsigned long long>(walks[w].n_i) * static_cast<unsigned long long>(walks[w].n_s);
  }
  for (int offset = 16; offset > 0; offset /= 2) {
    ep += __shfl_xor_sync(0xffffffffu, ep, offset);
    sp += __shfl_xor_sync(0xffffffffu, sp, offset);
  }
  if (threadIdx.x % 32 == 0) {
    atomicAdd(counters, ep);
    atomicAdd(counters + 1, sp);
  }
}

// Cells of the global tree that hold this rank's particles alone (level by level, deepest first):
// a leaf whose EPJs all come from below n_local and that holds no received superparticle, or a
// cell whose children all are such.
static __global__ void localOnlyCells(const TreeCell* __restrict__ cells, std::uint32_t begin, std::uint32_t n,
                                      const std::uint32_t* __restrict__ ep_source, std::uint32_t n_local,
                                      std::uint8_t* __restrict__ flags) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const std::uint32_t c = begin + i;
  const TreeCell cell = cells[c];
  bool local = true;
  if (cell.isLeaf()) {
    local = cell.sp_count == 0;
    for (std::uint32_t k = cell.ep_first; k < cell.ep_first + cell.ep_count && local; ++k) local = ep_source[k] < n_local;
  } else {
    for (int k = 0; k < cell.child_count && local; ++k) local = flags[cell.child_first + k] != 0;
  }
  flags[c] = local ? 1 : 0;
}

// Whether a list entry needs nothing from other ranks: a global EPJ of this rank's, or a cell of
// this rank's particles alone (received superparticles, indexed after the cells, never).
struct LocalEntry {
  const std::uint32_t* ep_source;
  std::uint32_t n_local;
  const std::uint8_t* local_cells;
  std::uint32_t n_cells;
  __device__ bool j(int k) const { return ep_source[k] < n_local; }
  __device__ bool s(int c) const { return static_cast<std::uint32_t>(c) < n_cells && local_cells[c]; }
};

// One warp per group. Pass 1 (kWrite = false): how many of the group's j and s entries are local
// (local_counts) and how many not (remote_counts), as [2g] and [2g + 1]. Pass 2: the entries, each
// side in the list's order, at the scanned offsets.
template <bool kWrite>
__global__ void splitListsByOrigin(std::uint32_t n_groups, const std::int64_t* __restrict__ j_offsets,
                                   const std::int64_t* __restrict__ s_offsets, const int* __restrict__ j_list,
                                   const int* __restrict__ s_list, LocalEntry is_local, int* __restrict__ local_counts,
                                   int* __restrict__ remote_counts, const std::int64_t* __restrict__ local_j_offsets,
                                   const std::int64_t* __restrict__ local_s_offsets,
                                   const std::int64_t* __restrict__ remote_j_offsets,
                                   const std::int64_t* __restrict__ remote_s_offsets, int* __restrict__ local_j,
                                   int* __restrict__ local_s, int* __restrict__ remote_j, int* __restrict__ remote_s) {
  const std::uint32_t g = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  const unsigned lane = threadIdx.x % 32;
  if (g >= n_groups) return;
  for (int side = 0; side < 2; ++side) {
    const std::int64_t begin = side == 0 ? j_offsets[g] : s_offsets[g];
    const std::int64_t end = side == 0 ? j_offsets[g + 1] : s_offsets[g + 1];
    const int* list = side == 0 ? j_list : s_list;
    std::int64_t at_local = 0, at_remote = 0;
    if constexpr (kWrite) {
      at_local = side == 0 ? local_j_offsets[g] : local_s_offsets[g];
      at_remote = side == 0 ? remote_j_offsets[g] : remote_s_offsets[g];
    }
    int n_local = 0, n_remote = 0;
    for (std::int64_t base = begin; base < end; base += 32) {
      const std::int64_t k = base + lane;
      const bool valid = k < end;
      const int entry = valid ? list[k] : 0;
      const bool local = valid && (side == 0 ? is_local.j(entry) : is_local.s(entry));
      const unsigned local_mask = __ballot_sync(0xffffffffu, local);
      const unsigned remote_mask = __ballot_sync(0xffffffffu, valid && !local);
      const unsigned below = (1u << lane) - 1u;
      if constexpr (kWrite) {
        if (local) (side == 0 ? local_j : local_s)[at_local + n_local + __popc(local_mask & below)] = entry;
        else if (valid) (side == 0 ? remote_j : remote_s)[at_remote + n_remote + __popc(remote_mask & below)] = entry;
      }
      n_local += __popc(local_mask);
      n_remote += __popc(remote_mask);
    }
    if (!kWrite && lane == 0) {
      local_counts[2 * g + side] = n_local;
      remote_counts[2 * g + side] = n_remote;
    }
  }
}

}  // namespace kernel

/// Index lists of walks for targets (a tree's groups, or other ranks' boxes for the LET): per
/// target, its particle (j) and superparticle (s) entries, in device memory.
struct DeviceIndexLists {
  DeviceVector<int> counts;                         ///< [2t]: target t's particles, [2t + 1]: its superparticles
  DeviceVector<std::int64_t> j_offsets;  ///< where each target's particle entries start, the total last
  DeviceVector<std::int64_t> s_offsets;  ///< where each target's superparticle entries start, the total last
  DeviceVector<int> j;                              ///< particle indices, target after target
  DeviceVector<int> s;                              ///< superparticle (cell) indices, target after target
  /// Device bytes allocated by the five arrays.
  std::size_t bytes() const { return counts.bytes() + j_offsets.bytes() + s_offsets.bytes() + j.bytes() + s.bytes(); }
};

/// The groups' interaction lists over one tree, and the list kernel's description of them (one
/// walk per group, one task per chunk of a group's i-particles).
struct DeviceGroupLists {
  DeviceIndexLists lists;                ///< the groups' entries
  DeviceVector<kernel::WalkDesc> walks;  ///< per group: its i-particles and its entries' ranges
  DeviceVector<int> task_offsets;        ///< where each group's tasks start, the total last
  DeviceVector<kernel::WalkTask> tasks;  ///< the list kernel's blocks
  /// Device bytes allocated by the lists and their description.
  std::size_t bytes() const { return lists.bytes() + walks.bytes() + task_offsets.bytes() + tasks.bytes(); }
};

/// What a walk reads of one tree: its cells, each cell's WalkCell and, for search trees, each
/// cell's boxes (null otherwise). Device arrays of n_cells entries.
struct WalkedCells {
  const TreeCell* cells = nullptr;                ///< the cells, root first
  const WalkCell* walk_cells = nullptr;           ///< each cell's centre and opening distance
  std::uint32_t n_cells = 0;                      ///< how many
  const DeviceCellBoxes* search_boxes = nullptr;  ///< search trees: each cell's boxes; else null
};

/// Each target's j and s list offsets from lists.counts (of n targets): the counts split into two
/// 64-bit arrays with a 0 appended, then exclusive scans (offsets[n] is the total). Not waited for.
inline void scanListCounts(Gpu policy, CubScratch& cub, DeviceIndexLists& lists, std::uint32_t n) {
  lists.j_offsets.resize(std::size_t{n} + 1);
  lists.s_offsets.resize(std::size_t{n} + 1);
  kernel::splitListCounts<<<blocksFor(std::size_t{n} + 1, 256), 256, 0, policy.stream>>>(
      lists.counts.data(), n, lists.j_offsets.data(), lists.s_offsets.data());
  check(cudaGetLastError(), "splitListCounts kernel launch");
  for (DeviceVector<std::int64_t>* offsets : {&lists.j_offsets, &lists.s_offsets}) {
    exclusiveSum(cub, offsets->data(), offsets->data(), static_cast<std::int64_t>(n) + 1, policy.stream,
                 "cub::DeviceScan::ExclusiveSum (list offsets)");
  }
}

/// The list kernel's walk descriptors and tasks (chunks of `chunk` i-particles) for the groups'
/// lists in out.lists; groups: (first << 32 | count) per group. Waits for the task count.
inline void describeGroupLists(Gpu policy, CubScratch& cub, const DeviceVector<std::uint64_t>& groups, int chunk,
                               DeviceGroupLists& out) {
  const auto ng = static_cast<std::uint32_t>(groups.size());
  out.walks.resize(ng);
  if (ng > 0)  // a rank without particles has no groups (several ranks)
    kernel::describeWalks<<<blocksFor(ng, 256), 256, 0, policy.stream>>>(groups.data(), ng, out.lists.counts.data(),
                                                                          out.lists.j_offsets.data(),
                                                                          out.lists.s_offsets.data(), out.walks.data());
  out.task_offsets.resize(std::size_t{ng} + 1);
  kernel::countTasks<<<blocksFor(std::size_t{ng} + 1, 256), 256, 0, policy.stream>>>(groups.data(), ng, chunk,
                                                                                      out.task_offsets.data());
  exclusiveSum(cub, out.task_offsets.data(), out.task_offsets.data(), static_cast<std::int64_t>(ng) + 1, policy.stream,
               "cub::DeviceScan::ExclusiveSum (tasks)");
  const int n_tasks = out.task_offsets.elementToHost(ng, policy.stream);
  out.tasks.resize(static_cast<std::size_t>(n_tasks));
  if (ng > 0)
    kernel::writeTasks<<<blocksFor(ng, 256), 256, 0, policy.stream>>>(ng, out.task_offsets.data(), out.tasks.data(),
                                                                        chunk);
  check(cudaGetLastError(), "list description kernels launch");
}

/// A merged global tree's lists of n_groups groups split by origin: the entries that need nothing
/// from other ranks (global EPJ k with ep_source[k] < n_local; cells of such particles alone) stay
/// in `lists`, the rest go to `remote`, each side in the list's order. local_only_cells: scratch
/// (one flag per cell of shape). Waits for the sizes.
inline void splitListsByOrigin(Gpu policy, CubScratch& cub, const DeviceTreeShape& shape,
                               const std::uint32_t* ep_source, std::uint32_t n_local, std::uint32_t n_groups,
                               DeviceVector<std::uint8_t>& local_only_cells, DeviceIndexLists& lists,
                               DeviceIndexLists& remote) {
  const cudaStream_t stream = policy.stream;
  const auto nc = static_cast<std::uint32_t>(shape.size());
  local_only_cells.resize(nc);
  for (int level = shape.levels() - 1; level >= 0; --level) {
    const std::uint32_t begin = shape.level_begin[static_cast<std::size_t>(level)];
    const std::uint32_t n = shape.level_begin[static_cast<std::size_t>(level) + 1] - begin;
    kernel::localOnlyCells<<<blocksFor(n, 256), 256, 0, stream>>>(shape.cells.data(), begin, n, ep_source, n_local,
                                                                   local_only_cells.data());
    check(cudaGetLastError(), "localOnlyCells kernel launch");
  }
  const kernel::LocalEntry is_local{ep_source, n_local, local_only_cells.data(), nc};
  const DeviceIndexLists& all = lists;
  DeviceIndexLists local, others;
  local.counts.resize(2 * std::size_t{n_groups});
  others.counts.resize(2 * std::size_t{n_groups});
  const unsigned blocks = blocksFor(std::size_t{n_groups} * 32, 128);
  if (n_groups > 0) {
    kernel::splitListsByOrigin<false><<<blocks, 128, 0, stream>>>(
        n_groups, all.j_offsets.data(), all.s_offsets.data(), all.j.data(), all.s.data(), is_local,
        local.counts.data(), others.counts.data(), nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
        nullptr);
    check(cudaGetLastError(), "splitListsByOrigin (count) kernel launch");
  }
  scanListCounts(policy, cub, local, n_groups);
  scanListCounts(policy, cub, others, n_groups);
  for (DeviceIndexLists* side : {&local, &others}) {
    side->j.resize(static_cast<std::size_t>(side->j_offsets.elementToHost(n_groups, stream)));
    side->s.resize(static_cast<std::size_t>(side->s_offsets.elementToHost(n_groups, stream)));
  }
  if (n_groups > 0) {
    kernel::splitListsByOrigin<true><<<blocks, 128, 0, stream>>>(
        n_groups, all.j_offsets.data(), all.s_offsets.data(), all.j.data(), all.s.data(), is_local, nullptr, nullptr,
        local.j_offsets.data(), local.s_offsets.data(), others.j_offsets.data(), others.s_offsets.data(),
        local.j.data(), local.s.data(), others.j.data(), others.s.data());
    check(cudaGetLastError(), "splitListsByOrigin (write) kernel launch");
  }
  std::swap(lists, local);  // the full lists go with `local` at the end of the call
  remote = std::move(others);
}

/// The multiwalk engine's list kernel (kThreads threads, kIPerThread i-particles each; chunk
/// kThreads * kIPerThread, as the lists were described with) over one set of lists: the user's
/// ep over epj[j entries], sp over spj[s entries], into force (accumulate: adding to the forces
/// there, else replacing them). Not waited for.
template <int kThreads, int kIPerThread, class DI, class DJ, class DS, class Force, class Ep, class Sp>
void evaluateGroupLists(Gpu policy, const DeviceGroupLists& gl, const DI* epi, const DJ* epj, const DS* spj, Ep ep,
                        Sp sp, Force* force, bool accumulate) {
  if (gl.tasks.empty()) return;
  const auto blocks = static_cast<unsigned>(gl.tasks.size());
  const kernel::IndexedSource<DJ> j{epj, gl.lists.j.data()};
  const kernel::IndexedSource<DS> s{spj, gl.lists.s.data()};
  using J = kernel::IndexedSource<DJ>;
  using S = kernel::IndexedSource<DS>;
  if (accumulate)
    kernel::multiwalkKernel<kThreads, kIPerThread, true, DI, DJ, DS, Force, Ep, Sp, J, S, true>
        <<<blocks, kThreads, 0, policy.stream>>>(gl.tasks.data(), gl.walks.data(), epi, j, s, ep, sp, force);
  else
    kernel::multiwalkKernel<kThreads, kIPerThread, true, DI, DJ, DS, Force, Ep, Sp, J, S>
        <<<blocks, kThreads, 0, policy.stream>>>(gl.tasks.data(), gl.walks.data(), epi, j, s, ep, sp, force);
  check(cudaGetLastError(), "list force kernel launch");
}

/// What every device walk of a tree needs (walk/walk_gpu.cuh's WalkTree): a stack per block, the
/// blocks' work counter, the overflow flag and the interaction counters, with the persistent
/// launch shape (as many blocks of kThreads as the device keeps resident). `owner` names the tree
/// in errors; stack_capacity: cells per block's stack.
template <int kThreads>
class DeviceWalker {
 public:
  /// owner: the tree's name, for errors (a string that outlives the walker); stack_capacity: cells
  /// per block's stack (at least one chunk's children, 8 * kThreads: the tree checks it).
  DeviceWalker(const char* owner, int stack_capacity) : owner_(owner), stack_capacity_(stack_capacity) {}

  /// Blocks for a persistent launch of kernel_function (kThreads threads) over work_items items:
  /// the device's resident blocks, at most one per item (at least one).
  unsigned persistentBlocks(const void* kernel_function, std::size_t work_items) {
    if (sm_count_ == 0) {
      int device = 0;
      check(cudaGetDevice(&device), "cudaGetDevice");
      check(cudaDeviceGetAttribute(&sm_count_, cudaDevAttrMultiProcessorCount, device), "cudaDeviceGetAttribute");
    }
    int per_sm = 0;
    check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel_function, kThreads, 0),
          "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
    const auto blocks = static_cast<unsigned>(std::max(1, per_sm) * sm_count_);
    return std::min<unsigned>(blocks, std::max<std::size_t>(1, work_items));
  }

  /// A walk of `cells` for n_targets targets (their boxes; SYMMETRY search trees: their boxes of
  /// search spheres, else null) by `blocks` blocks: the stacks sized, the counter zeroed, the
  /// overflow flag cleared (on the policy's stream). open_root: the root is always opened (the
  /// targets are the tree's groups); groups: the tree's groups (fused walk), else may be null.
  kernel::WalkTree prepare(Gpu policy, const WalkedCells& cells, unsigned blocks, const std::uint64_t* groups,
                           const Boxd* targets, const Boxd* target_search_boxes, std::size_t n_targets,
                           bool open_root) {
    int* stack = stackFor(blocks);
    next_group_.resize(1);
    overflow_.resize(1);
    check(cudaMemsetAsync(next_group_.data(), 0, sizeof(unsigned), policy.stream), "cudaMemsetAsync (group counter)");
    const int none = -1;
    check(cudaMemcpyAsync(overflow_.data(), &none, sizeof(int), cudaMemcpyHostToDevice, policy.stream),
          "cudaMemcpyAsync (overflow flag)");
    return {cells.cells,         cells.walk_cells,   cells.n_cells,   groups,
            targets,             static_cast<std::uint32_t>(n_targets), open_root, next_group_.data(),
            stack,               stack_capacity_,    overflow_.data(), counters_.data(),
            cells.search_boxes,  target_search_boxes};
  }

  /// The lists of n targets over `cells` (see prepare): the counting walk, the offsets, then the
  /// writing walk, into `lists`. Waits for the sizes and checks the stacks; `what` names the lists
  /// in errors.
  void writeLists(Gpu policy, CubScratch& cub, const WalkedCells& cells, const Boxd* targets,
                  const Boxd* target_search_boxes, std::uint32_t n, bool open_root, const char* what,
                  DeviceIndexLists& lists) {
    lists.counts.resize(2 * std::size_t{n});
    auto count = &kernel::buildLists<kThreads, false>;
    auto write = &kernel::buildLists<kThreads, true>;
    const unsigned blocks = persistentBlocks(reinterpret_cast<const void*>(count), n);
    kernel::WalkTree tree = prepare(policy, cells, blocks, nullptr, targets, target_search_boxes, n, open_root);
    if (n > 0) {
      count<<<blocks, kThreads, 0, policy.stream>>>(tree, lists.counts.data(), nullptr, nullptr, nullptr, nullptr);
      check(cudaGetLastError(), "buildLists (count) kernel launch");
    }
    checkOverflow(policy);
    scanListCounts(policy, cub, lists, n);
    const auto n_j = lists.j_offsets.elementToHost(n, policy.stream);
    const auto n_s = lists.s_offsets.elementToHost(n, policy.stream);
    require(n_j < (std::int64_t{1} << 31) && n_s < (std::int64_t{1} << 31), owner_,
            "{} of {} + {} entries exceed the 2^31 the list kernel indexes (lower theta's reach or "
            "n_group_limit)", what, n_j, n_s);
    lists.j.resize(static_cast<std::size_t>(n_j));
    lists.s.resize(static_cast<std::size_t>(n_s));
    check(cudaMemsetAsync(next_group_.data(), 0, sizeof(unsigned), policy.stream), "cudaMemsetAsync (group counter)");
    if (n > 0) {
      write<<<blocks, kThreads, 0, policy.stream>>>(tree, nullptr, lists.j_offsets.data(), lists.s_offsets.data(),
                                                     lists.j.data(), lists.s.data());
      check(cudaGetLastError(), "buildLists (write) kernel launch");
    }
    checkOverflow(policy);
  }

  /// Waits for the last walk and throws grove::Error, naming the group, when its stack overflowed.
  void checkOverflow(Gpu policy) const {
    const int group = overflow_.elementToHost(0, policy.stream);
    require(group < 0, owner_,
            "the walk of group {} needed more than the {} stack entries per block of ResidentTreeOptions::stack_capacity "
            "(raise it)", group, stack_capacity_);
  }

  /// Zeroes the interaction counters (the fused walk counts into them; lists are counted with
  /// countInteractions).
  void resetCounters(Gpu policy) {
    counters_.resize(2);
    check(cudaMemsetAsync(counters_.data(), 0, 2 * sizeof(unsigned long long), policy.stream),
          "cudaMemsetAsync (counters)");
  }

  /// Adds the i-j and i-s pairs of a set of lists' walks to the counters.
  void countInteractions(Gpu policy, const DeviceGroupLists& gl) {
    if (gl.walks.empty()) return;
    kernel::countInteractions<<<blocksFor(gl.walks.size(), 256), 256, 0, policy.stream>>>(
        gl.walks.data(), static_cast<std::uint32_t>(gl.walks.size()), counters_.data());
    check(cudaGetLastError(), "countInteractions kernel launch");
  }

  /// The counters (i-j pairs, i-s pairs); waits for them. (0, 0) before the first
  /// resetCounters(), which the fused walk needs before prepare() (the list walks leave the
  /// counters alone).
  std::pair<std::int64_t, std::int64_t> interactions(Gpu policy) const {
    if (counters_.empty()) return {0, 0};
    const std::vector<unsigned long long> counts = counters_.toHost(policy.stream);
    return {static_cast<std::int64_t>(counts[0]), static_cast<std::int64_t>(counts[1])};
  }

  /// Lends the walks device memory for their stacks: `ints` ints at `memory` (device memory, 4-byte
  /// aligned), which the caller does not touch until it lends none (lendStack(nullptr, 0)) and
  /// the walks enqueued meanwhile are done (stream order suffices). A walk whose stacks do not fit
  /// in it uses the walker's own. Memory dead between two uses elsewhere (a particle system's
  /// reorder buffer between builds) so holds the stacks instead of a buffer of their own.
  void lendStack(int* memory, std::size_t ints) {
    lent_ = memory;
    lent_ints_ = memory ? ints : 0;
  }

  /// Whether the last walk kept its stacks in lent memory.
  bool lastStacksLent() const { return last_lent_; }
  /// The ints the largest walk's stacks took so far (0 before the first walk): what memory lent
  /// for the next walks must hold.
  std::size_t largestStackInts() const { return largest_stack_ints_; }

  /// Device bytes of the walker's own stacks (lent memory is not counted; the rest is a few words).
  std::size_t bytes() const { return stack_.bytes(); }

 private:
  const char* owner_;
  int stack_capacity_;
  int sm_count_ = 0;  // read on the first launch
  int* lent_ = nullptr;  // lendStack's memory
  std::size_t lent_ints_ = 0;
  bool last_lent_ = false;
  std::size_t largest_stack_ints_ = 0;

  // The stacks of `blocks` blocks: in lent memory when it holds them (the walker's own stacks are
  // then released), else the walker's own.
  int* stackFor(unsigned blocks) {
    const std::size_t ints = static_cast<std::size_t>(blocks) * static_cast<std::size_t>(stack_capacity_);
    largest_stack_ints_ = std::max(largest_stack_ints_, ints);
    last_lent_ = lent_ && ints <= lent_ints_;
    if (last_lent_) {
      if (stack_.bytes() > 0) stack_.release();  // waits for the device: once, when lent memory first suffices
      return lent_;
    }
    stack_.resize(ints);
    return stack_.data();
  }
  DeviceVector<int> stack_, overflow_;
  DeviceVector<unsigned> next_group_;
  DeviceVector<unsigned long long> counters_;
};

}  // namespace grove::gpu
