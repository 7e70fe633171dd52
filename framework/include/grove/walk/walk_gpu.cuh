#pragma once
/// @file
/// The device tree walks of the GPU-resident pipeline (nvcc only).
/// @verbatim
/// One thread block walks the tree for one interaction group at a time (blocks take groups from
/// an atomic counter until none are left). The walk is breadth-first in chunks: the block pops up
/// to kThreads cells from its stack (global memory), each thread tests one against the group's
/// box with the host's opening criterion, and block-wide scans turn the outcomes into
///   far cells        -> superparticle indices (the cell's own SPJ),
///   opened leaves    -> particle index ranges (and the leaf's received superparticles),
///   opened inner     -> children pushed on the stack.
/// What happens to the indices is the sink's business:
///   FusedSink   gathers them in shared memory and, when a buffer fills, evaluates the user's
///               interaction for them against the group's i-particles held in registers: no
///               list reaches global memory (Bonsai's and Ryoanji's scheme; MAKE_LIST steps
///               with ResidentTreeOptions::fused_walk);
///   CountSink / WriteSink   count, then write, each group's lists to global memory, for the
///               list kernel (the multiwalk engine's, kernel::multiwalkKernel) to evaluate now
///               and again on REUSE_LIST steps (the default for every list mode: faster on the
///               H100, see ResidentTreeOptions).
/// With OpeningRule::kFdps both visit the same cells as the host's walkTree for the same tree and
/// box, so the lists are the host's (in another order).
/// @endverbatim
/// The walk kernels and the sinks are in grove::gpu::kernel (internals of the device list stage,
/// grove/walk/group_lists_gpu.cuh, and of grove/force/resident_tree_long.cuh's fused walk).
#include <cuda_runtime.h>

#include <cstdint>
#include <cub/block/block_scan.cuh>

#include "grove/core/box.hpp"
#include "grove/core/execution.hpp"
#include "grove/gpu/multiwalk/multiwalk_kernel.cuh"
#include "grove/tree/device_form.hpp"
#include "grove/tree/tree_cells.hpp"
#include "grove/walk/cutoff.hpp"
#include "grove/walk/neighbour_search_gpu.cuh"
#include "grove/walk/opening_criterion.hpp"

namespace grove::gpu {

/// What the walk reads of a cell besides its TreeCell: the expansion centre and the squared
/// distance within which a target opens it (the criterion, evaluated once per cell and step).
struct alignas(32) WalkCell {
  /// @var x
  /// The expansion centre's x (positionOf the cell's moment).
  /// @var y
  /// The expansion centre's y.
  /// @var z
  /// The expansion centre's z.
  double x, y, z, r2;  ///< r2: a target whose box comes within sqrt(r2) of the centre opens the cell
};

/// Which opening criterion the device walk uses (walk/opening_criterion.hpp, shared with the host
/// walk): kFdps (the default), kNakasato or kRmax.
using grove::OpeningRule;

namespace kernel {

// The walk cells and the superparticle images of every cell, from the moments. Cells whose cube
// meets one of the n_cut boxes ("cut" cells: their cube also holds particles that are not in this
// tree, as when the local tree and the tree of the LET are walked apart) open within
// l / theta * cut_scale + s (Nakasato's offset s, the centre of mass's distance from the cube's
// centre): their content sits off to one side, and such cells along a domain edge err alike.
template <class Moment, class SPJ, class DS>
__global__ void finishCells(const TreeCell* __restrict__ cells, const Moment* __restrict__ moments, std::uint32_t n,
                            RootCell root, OpeningCriterion criterion,
                            WalkCell* __restrict__ walk_cells, DS* __restrict__ spj_images,
                            const Boxd* __restrict__ cut_boxes, int n_cut, double cut_scale,
                            const Boxd* __restrict__ extents) {
  const std::uint32_t c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= n) return;
  const Moment& m = moments[c];
  SPJ spj;
  spj.copyFromMoment(m);
  spj_images[c] = DeviceForm<SPJ>::make(spj);
  if (!walk_cells) return;
  const TreeCell cell = cells[c];
  const Vec3d pos = positionOf(m);
  double r2 = criterion.rCritSq(cell.level);
  const Vec3d centre = cubeCentre(root, cell.prefix, cell.level);
  bool cut = false;
  if (n_cut > 0) {
    const double half = 0.5 * ::ldexp(root.length, -cell.level);
    const Boxd cube{centre - Vec3d(half), centre + Vec3d(half)};
    for (int k = 0; k < n_cut && !cut; ++k) cut = overlapsClosed(cube, cut_boxes[k]);
  }
  if (criterion.rule() == OpeningRule::kRmax) {
    // The host's cellOpeningSq (the same arithmetic, so host and device lists agree); a cut
    // cell's distance is scaled as the others' (r_max already holds the offset).
    r2 = criterion.cellOpeningSq(cell.level, pos, centre, extents[c], cell.sp_count > 0);
    if (cut) r2 *= cut_scale * cut_scale;
  } else if (criterion.rule() == OpeningRule::kNakasato || cut) {
    const double s = ::sqrt(norm2(pos - centre));
    const double r = ::sqrt(r2) * (cut ? cut_scale : 1.0) + s;
    r2 = r * r;
  }
  walk_cells[c] = {pos.x, pos.y, pos.z, r2};
}

// One level of cells' tight boxes of their entries (EPJ and received SPJ positions; leaves) or of
// their children's boxes (the deeper level, done): walk/cutoff.hpp's cellExtentOf, as the host's
// computeCellExtents.
template <class EPJ, class SPJ>
__global__ void cellExtents(const TreeCell* __restrict__ cells, std::uint32_t begin, std::uint32_t n,
                            const EPJ* __restrict__ epj, const SPJ* __restrict__ spj, Boxd* __restrict__ extents) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) extents[begin + i] = cellExtentOf(cells[begin + i], epj, spj, extents);
}

// The union of each lane's box over a warp (every lane gets it).
__device__ inline Boxd warpUnion(Boxd box) {
  for (int offset = 16; offset > 0; offset /= 2) {
    Boxd other;
    other.low = {__shfl_xor_sync(0xffffffffu, box.low.x, offset), __shfl_xor_sync(0xffffffffu, box.low.y, offset),
                 __shfl_xor_sync(0xffffffffu, box.low.z, offset)};
    other.high = {__shfl_xor_sync(0xffffffffu, box.high.x, offset), __shfl_xor_sync(0xffffffffu, box.high.y, offset),
                  __shfl_xor_sync(0xffffffffu, box.high.z, offset)};
    box.merge(other);
  }
  return box;
}

// The bounding box of each group's particles (one warp per group), in double as the host's;
// with search_boxes (symmetry search trees), in the same pass also the box of their search
// spheres (EPI::getRSearch).
template <class EPI>
__global__ void groupBoxes(const std::uint64_t* __restrict__ groups, std::uint32_t n_groups,
                           const EPI* __restrict__ epi, Boxd* __restrict__ boxes, Boxd* __restrict__ search_boxes) {
  const std::uint32_t warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  const unsigned lane = threadIdx.x % 32;
  if (warp >= n_groups) return;
  const auto first = static_cast<std::uint32_t>(groups[warp] >> 32);
  const auto count = static_cast<std::uint32_t>(groups[warp]);
  Boxd box = Boxd::empty(), reach = Boxd::empty();
  for (std::uint32_t i = first + lane; i < first + count; i += 32) {
    const EPI p = epi[i];
    box.merge(positionOf(p));
    if constexpr (HasRSearch<EPI>)
      if (search_boxes) reach.merge(search::SearchBoxOf{}(p));
  }
  box = warpUnion(box);
  if (lane == 0) boxes[warp] = box;
  if constexpr (HasRSearch<EPI>) {
    if (search_boxes) {
      reach = warpUnion(reach);
      if (lane == 0) search_boxes[warp] = reach;
    }
  }
}

// What every walk kernel reads.
struct WalkTree {
  const TreeCell* cells;
  const WalkCell* walk_cells;
  std::uint32_t n_cells;         // superparticles received into leaves (a global tree's) are
                                 // indexed n_cells + sp index, after the cells' own
  const std::uint64_t* groups;   // (first << 32 | count), Morton order (fused walk)
  const Boxd* group_boxes;       // the targets: groups' boxes, or other ranks' boxes (LET)
  std::uint32_t n_groups;
  bool open_root;                // groups: the root is always opened (a group lies inside it)
  unsigned* next_group;          // the blocks' work counter (zeroed before the launch)
  int* stack;                    // stack_capacity ints per block
  int stack_capacity;
  int* overflow;                 // set to the group whose walk did not fit its stack
  unsigned long long* interactions;  // [0] i-EPJ pairs, [1] i-SPJ pairs (fused walk)
  // Long-range trees with a search (FDPS's SEARCH_MODE_LONG_SCATTER / LONG_SYMMETRY): a cell the
  // criterion accepts is still opened when it may hold a particle within search reach of the
  // target, so such particles reach the kernel one by one (the host's walkTreeWithSearch):
  //   SCATTER   the cell's box of search spheres (outer) overlaps the target's box
  //   SYMMETRY  that, or the cell's positions (inner) overlap the target's box of search spheres
  // Closed boxes, as the host's. Null: no search.
  const DeviceCellBoxes* search_boxes = nullptr;
  const Boxd* target_search_boxes = nullptr;  // SYMMETRY: each target's box of search spheres
};

// Whether cell c may hold a particle within search reach of the target (box; reach: its search
// spheres, SYMMETRY only). Empty boxes (cells without particles) overlap nothing.
__device__ inline bool withinSearchReach(const WalkTree& tree, int c, const Boxd& box, const Boxd& reach) {
  if (!tree.search_boxes) return false;
  const DeviceCellBoxes& b = tree.search_boxes[c];
  return overlapsClosed(b.outer(), box) || (tree.target_search_boxes && overlapsClosed(b.inner(), reach));
}

// One thread's outcome for its popped cell: children to push, particles and superparticles to
// add. Scanned together (one block-wide scan per chunk of pops instead of three).
struct WalkCounts {
  int push, j, s;
  GROVE_HOST_DEVICE WalkCounts operator+(const WalkCounts& o) const { return {push + o.push, j + o.j, s + o.s}; }
};
struct AddWalkCounts {
  GROVE_HOST_DEVICE WalkCounts operator()(const WalkCounts& a, const WalkCounts& b) const { return a + b; }
};

// The block-wide walk for one group: calls sink.addJ / sink.addS with each thread's run of
// indices (first, count) and its offset and the block's total, all threads together.
// Returns false when the stack overflowed (then *tree.overflow names the group).
template <int kThreads, class Sink>
__device__ bool walkGroup(const WalkTree& tree, std::uint32_t group, const Boxd& box, Sink& sink) {
  using Scan = cub::BlockScan<WalkCounts, kThreads>;
  __shared__ typename Scan::TempStorage scan_storage;
  int* stack = tree.stack + static_cast<std::size_t>(blockIdx.x) * tree.stack_capacity;
  if (threadIdx.x == 0) stack[0] = 0;
  int top = 1;  // the same in every thread
  bool root = tree.open_root;
  const Boxd reach = tree.target_search_boxes ? tree.target_search_boxes[group] : Boxd::empty();
  __syncthreads();
  while (top > 0) {
    const int n_pop = top < kThreads ? top : kThreads;
    const int base = top - n_pop;
    const int c = static_cast<int>(threadIdx.x) < n_pop ? stack[base + static_cast<int>(threadIdx.x)] : -1;
    int j_first = 0, j_count = 0, s_first = 0, s_count = 0, push_first = 0, push_count = 0;
    if (c >= 0) {
      // The criterion first: a far cell needs nothing else. (Every cell but an empty root holds
      // entries; a group's walk opens the root unconditionally, as on the host; an empty root is
      // a leaf with nothing to add.)
      const WalkCell w = tree.walk_cells[c];
      if (!root && distanceMinSq(box, Vec3d(w.x, w.y, w.z)) > w.r2 && !withinSearchReach(tree, c, box, reach)) {
        s_first = c, s_count = 1;
      } else {
        const TreeCell cell = tree.cells[c];
        if (cell.isLeaf()) {
          j_first = static_cast<int>(cell.ep_first), j_count = static_cast<int>(cell.ep_count);
          s_first = static_cast<int>(tree.n_cells + cell.sp_first), s_count = static_cast<int>(cell.sp_count);
        } else {
          push_first = cell.child_first, push_count = cell.child_count;
        }
      }
    }
    root = false;
    WalkCounts offset, total;
    Scan(scan_storage).ExclusiveScan(WalkCounts{push_count, j_count, s_count}, offset, WalkCounts{0, 0, 0},
                                     AddWalkCounts{}, total);
    const int push_offset = offset.push, push_total = total.push;
    if (base + push_total > tree.stack_capacity) {
      if (threadIdx.x == 0) atomicExch(tree.overflow, static_cast<int>(group));
      return false;
    }
    // Every thread has read its cell (before the scans' barriers): the pops may be overwritten.
    for (int k = 0; k < push_count; ++k) stack[base + push_offset + k] = push_first + k;
    top = base + push_total;
    sink.addJ(j_first, j_count, offset.j, total.j);
    sink.addS(s_first, s_count, offset.s, total.s);
    __syncthreads();  // the pushes are visible to the next pop, the scan storage free again
  }
  sink.finish();
  return true;
}

// Takes the next group for the block (all threads get the same answer).
__device__ inline std::uint32_t nextGroup(const WalkTree& tree) {
  __shared__ std::uint32_t taken;
  __syncthreads();
  if (threadIdx.x == 0) taken = atomicAdd(tree.next_group, 1u);
  __syncthreads();
  return taken;
}

// ---- list sinks ---------------------------------------------------------------------------------

struct CountSink {
  int n_j = 0, n_s = 0;
  __device__ void addJ(int, int, int, int total) { n_j += total; }
  __device__ void addS(int, int, int, int total) { n_s += total; }
  __device__ void finish() {}
};

struct WriteSink {
  int* j_list;
  int* s_list;
  int n_j = 0, n_s = 0;
  __device__ void addJ(int first, int count, int offset, int total) {
    for (int k = 0; k < count; ++k) j_list[n_j + offset + k] = first + k;
    n_j += total;
  }
  __device__ void addS(int first, int count, int offset, int total) {
    for (int k = 0; k < count; ++k) s_list[n_s + offset + k] = first + k;
    n_s += total;
  }
  __device__ void finish() {}
};

// Pass 1 (kWrite = false): each group's list lengths into counts[2g], counts[2g + 1].
// Pass 2 (kWrite = true): the lists at the scanned offsets.
template <int kThreads, bool kWrite>
__global__ void __launch_bounds__(kThreads)
    buildLists(WalkTree tree, int* __restrict__ counts, const std::int64_t* __restrict__ j_offsets,
               const std::int64_t* __restrict__ s_offsets, int* __restrict__ j_lists, int* __restrict__ s_lists) {
  for (;;) {
    const std::uint32_t g = nextGroup(tree);
    if (g >= tree.n_groups) return;
    if constexpr (kWrite) {
      WriteSink sink{j_lists + j_offsets[g], s_lists + s_offsets[g]};
      if (!walkGroup<kThreads>(tree, g, tree.group_boxes[g], sink)) return;
    } else {
      CountSink sink;
      if (!walkGroup<kThreads>(tree, g, tree.group_boxes[g], sink)) return;
      if (threadIdx.x == 0) counts[2 * g] = sink.n_j, counts[2 * g + 1] = sink.n_s;
    }
  }
}

// Non-template kernels in a header are static: each .cu that includes it compiles its own copy
// (its device code is its own anyway) and no host stub is defined twice at link time. `inline`
// did that too, but nvcc ignores it on __global__ functions and warns (#20050-D) in user code.

// The list kernel's walk descriptors and tasks (chunks of kChunk i-particles) of every group.
static __global__ void describeWalks(const std::uint64_t* __restrict__ groups, std::uint32_t n_groups,
                                     const int* __restrict__ counts, const std::int64_t* __restrict__ j_offsets,
                                     const std::int64_t* __restrict__ s_offsets, WalkDesc* __restrict__ walks) {
  const std::uint32_t g = blockIdx.x * blockDim.x + threadIdx.x;
  if (g >= n_groups) return;
  walks[g] = {static_cast<int>(groups[g] >> 32), static_cast<int>(static_cast<std::uint32_t>(groups[g])),
              static_cast<int>(j_offsets[g]), counts[2 * g], static_cast<int>(s_offsets[g]), counts[2 * g + 1]};
}

static __global__ void countTasks(const std::uint64_t* __restrict__ groups, std::uint32_t n_groups, int chunk,
                                  int* __restrict__ tasks_per_group) {
  const std::uint32_t g = blockIdx.x * blockDim.x + threadIdx.x;
  if (g < n_groups) tasks_per_group[g] = (static_cast<int>(static_cast<std::uint32_t>(groups[g])) + chunk - 1) / chunk;
  if (g == n_groups) tasks_per_group[g] = 0;
}

static __global__ void writeTasks(std::uint32_t n_groups, const int* __restrict__ task_offsets,
                                  WalkTask* __restrict__ tasks, int chunk) {
  const std::uint32_t g = blockIdx.x * blockDim.x + threadIdx.x;
  if (g >= n_groups) return;
  for (int t = task_offsets[g]; t < task_offsets[g + 1]; ++t)
    tasks[t] = {static_cast<int>(g), (t - task_offsets[g]) * chunk};
}

// ---- the fused walk -----------------------------------------------------------------------------

// Index buffers in shared memory and the i-particles' forces in registers; a full buffer is
// evaluated at once (all threads), kThreads sources per tile.
template <int kThreads, int kIPerThread, int kJCapacity, int kSCapacity, class DI, class DJ, class DS, class Force,
          class Ep, class Sp>
struct FusedSink {
  int* j_ids;  // shared
  int* s_ids;  // shared
  unsigned char* tile;  // shared, kThreads * max(sizeof(DJ), sizeof(DS)) bytes
  const DJ* epj;
  const DS* spj;
  const Ep& ep;
  const Sp& sp;
  const DI (&xi)[kIPerThread];
  Force (&f)[kIPerThread];
  int valid_slots;  // this warp's i-slots that hold particles (the same in the whole warp)
  int n_j = 0, n_s = 0;
  long long total_j = 0, total_s = 0;  // list lengths, for the interaction counts

  // Every thread's writes to ids are done before anyone reads them (the barrier first), and all
  // reads are done before the buffer or the tile is written again (the barrier last).
  template <class T, class Interaction>
  __device__ void evaluate(const int* ids, int count, const T* all, const Interaction& interact) {
    if (count == 0) return;  // the same in every thread
    __syncthreads();
    T* t = reinterpret_cast<T*>(tile);
    for (int base = 0; base < count; base += kThreads) {
      const int k = base + static_cast<int>(threadIdx.x);
      if (k < count) storeWide(t + threadIdx.x, loadWide(all + ids[k]));
      __syncthreads();
      const int m = count - base < kThreads ? count - base : kThreads;
#pragma unroll 4
      for (int q = 0; q < m; ++q) {
        const T j = loadWide(t + q);
#pragma unroll
        for (int u = 0; u < kIPerThread; ++u)
          if (u < valid_slots) interact(xi[u], j, f[u]);
      }
      __syncthreads();
    }
  }

  // Appends each thread's run to a buffer through windows of the space left, evaluating the
  // buffer whenever it fills (all threads see the same counts, so all take the same branches).
  // Threads write disjoint slots; evaluate() holds the barriers that order writes and reads.
  template <int kCapacity, class T, class Interaction>
  __device__ void append(int* ids, int& n, int first, int count, int offset, int total, const T* all,
                         const Interaction& interact) {
    int written = 0;
    while (written < total) {
      if (n == kCapacity) {
        evaluate(ids, n, all, interact);
        n = 0;
      }
      const int window = total - written < kCapacity - n ? total - written : kCapacity - n;
      const int lo = offset > written ? offset : written;
      const int hi = offset + count < written + window ? offset + count : written + window;
      for (int q = lo; q < hi; ++q) ids[n + (q - written)] = first + (q - offset);
      n += window;
      written += window;
    }
  }

  __device__ void addJ(int first, int count, int offset, int total) {
    total_j += total;
    append<kJCapacity>(j_ids, n_j, first, count, offset, total, epj, ep);
  }
  __device__ void addS(int first, int count, int offset, int total) {
    total_s += total;
    append<kSCapacity>(s_ids, n_s, first, count, offset, total, spj, sp);
  }
  __device__ void finish() {
    evaluate(j_ids, n_j, epj, ep);
    evaluate(s_ids, n_s, spj, sp);
    n_j = n_s = 0;
  }
};

// Walk and force in one kernel: per group, the i-particles [first, first + count) in chunks of
// kThreads * kIPerThread (a chunk per walk: groups larger than a chunk, from n_group_limit above
// it or from leaves that cannot split, walk once per chunk), forces stored in key order.
template <int kThreads, int kIPerThread, int kJCapacity, int kSCapacity, class DI, class DJ, class DS, class Force,
          class Ep, class Sp>
__global__ void __launch_bounds__(kThreads, 1024 / kThreads)  // 8 blocks of 128 per SM: 64 registers
    fusedWalk(WalkTree tree, const DI* __restrict__ epi, const DJ* __restrict__ epj, const DS* __restrict__ spj,
              Ep ep, Sp sp, Force* __restrict__ force) {
  __shared__ int j_ids[kJCapacity];
  __shared__ int s_ids[kSCapacity];
  __shared__ alignas(16) unsigned char tile[tileBytes<DJ, DS>(kThreads)];
  constexpr int kChunk = kThreads * kIPerThread;
  const int warp_first = static_cast<int>(threadIdx.x) / 32 * 32;
  for (;;) {
    const std::uint32_t g = nextGroup(tree);
    if (g >= tree.n_groups) return;
    const auto first = static_cast<int>(tree.groups[g] >> 32);
    const auto count = static_cast<int>(static_cast<std::uint32_t>(tree.groups[g]));
    const Boxd box = tree.group_boxes[g];
    for (int chunk = 0; chunk < count; chunk += kChunk) {
      DI xi[kIPerThread];
      Force f[kIPerThread];
      int valid_slots = 0;
#pragma unroll
      for (int u = 0; u < kIPerThread; ++u) {
        const int i = chunk + u * kThreads + static_cast<int>(threadIdx.x);
        xi[u] = loadWide(epi + first + (i < count ? i : count - 1));
        f[u] = Force{};
        if (chunk + u * kThreads + warp_first < count) valid_slots = u + 1;
      }
      FusedSink<kThreads, kIPerThread, kJCapacity, kSCapacity, DI, DJ, DS, Force, Ep, Sp> sink{
          j_ids, s_ids, tile, epj, spj, ep, sp, xi, f, valid_slots};
      if (!walkGroup<kThreads>(tree, g, box, sink)) return;
      if (threadIdx.x == 0) {
        const long long n_i = count - chunk < kChunk ? count - chunk : kChunk;
        atomicAdd(tree.interactions, static_cast<unsigned long long>(n_i * sink.total_j));
        atomicAdd(tree.interactions + 1, static_cast<unsigned long long>(n_i * sink.total_s));
      }
#pragma unroll
      for (int u = 0; u < kIPerThread; ++u) {
        const int i = chunk + u * kThreads + static_cast<int>(threadIdx.x);
        if (i < count) storeWide(force + first + i, f[u]);
      }
    }
  }
}

}  // namespace kernel
}  // namespace grove::gpu
