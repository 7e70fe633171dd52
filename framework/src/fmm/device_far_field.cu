// grove::fmm::DeviceFarField (grove/fmm/device_far_field_gpu.h): the FMM's traversal and far field
// on the current CUDA device.
#include "grove/fmm/device_far_field_gpu.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <cub/cub.cuh>
#include <vector>

#include "grove/core/error.hpp"
#include "grove/gpu/cuda_resources.hpp"
#include "grove/gpu/device_gpu.h"
#include "grove/gpu/device_vector.hpp"
#include "device_expansion_tables.cuh"
#include "device_tree_build.cuh"

namespace grove::fmm {

namespace {

using gpu::check;
using gpu::DeviceVector;
using detail::DeviceTables;
using detail::kM2lBundle;
using detail::kM2lGroups;
using detail::kM2lLanes;
using detail::kM2lThreads;
using detail::kMaxHarmonic;
using detail::kMaxItems;
using detail::kMaxTaylorRows;
using detail::powers;
using detail::Tables;

static_assert(sizeof(Vec3d) == 3 * sizeof(double), "gradients are copied as three doubles per particle");

// ---------------------------------------------------------------------------------------------
// Traversal: a generation of cell pairs at a time. Each pair is visited twice by one thread, once
// to count what it yields and once, after a prefix sum over the counts, to write it.

enum PairKind : int { kSelf = 0, kMutual = 1, kDirected = 2 };
struct CellPair {
  int a, b, kind;  // self: a = b; mutual: local cells a and b; directed: target a, received source b
};
struct PairCounts {
  long long m2l, p2p, m2p, next;
};
struct AddCounts {
  __host__ __device__ PairCounts operator()(const PairCounts& x, const PairCounts& y) const {
    return {x.m2l + y.m2l, x.p2p + y.p2p, x.m2p + y.m2p, x.next + y.next};
  }
};

__device__ bool isLeaf(const FmmCell& c) { return c.child_count == 0; }

// r_a + r_b < theta |z_b - z_a|, rounded as the host's expression is (no fused multiply-adds), so
// that both traversals take the same decisions.
__device__ bool accepted(const FmmCell& a, const FmmCell& b, double theta) {
  const double dx = __dsub_rn(b.center.x, a.center.x), dy = __dsub_rn(b.center.y, a.center.y),
               dz = __dsub_rn(b.center.z, a.center.z);
  const double d2 = __dadd_rn(__dadd_rn(__dmul_rn(dx, dx), __dmul_rn(dy, dy)), __dmul_rn(dz, dz));
  return __dadd_rn(a.radius, b.radius) < __dmul_rn(theta, sqrt(d2));
}

// The host traversal's rules (grove/fmm/dual_traversal.cpp), one pair at a time: `out` either
// counts or writes what the pair yields.
template <class Out>
__device__ void visit(const CellPair& pair, const FmmCell* cells, double theta, Out& out) {
  const FmmCell& a = cells[pair.a];
  if (pair.kind == kSelf) {
    if (isLeaf(a)) {
      out.p2p(pair.a, pair.a);
      return;
    }
    for (int i = a.first_child; i < a.first_child + a.child_count; ++i) {
      out.next(CellPair{i, i, kSelf});
      for (int j = i + 1; j < a.first_child + a.child_count; ++j) out.next(CellPair{i, j, kMutual});
    }
    return;
  }
  const FmmCell& b = cells[pair.b];
  if (pair.kind == kMutual) {
    if (accepted(a, b, theta)) {
      out.m2l(pair.a, pair.b);
      out.m2l(pair.b, pair.a);
      return;
    }
    if (isLeaf(a) && isLeaf(b)) {
      out.p2p(pair.a, pair.b);
      out.p2p(pair.b, pair.a);
      return;
    }
    const bool open_a = !isLeaf(a) && (isLeaf(b) || a.radius >= b.radius);
    const FmmCell& opened = open_a ? a : b;
    for (int c = opened.first_child; c < opened.first_child + opened.child_count; ++c)
      out.next(open_a ? CellPair{c, pair.b, kMutual} : CellPair{pair.a, c, kMutual});
    return;
  }
  // Directed: received source b on local target a.
  if (accepted(a, b, theta)) {
    out.m2l(pair.a, pair.b);
    return;
  }
  const bool open_source = !isLeaf(b) && (isLeaf(a) || b.radius > a.radius);
  if (b.multipole_only || !open_source) {
    if (isLeaf(a)) {
      if (b.multipole_only) out.m2p(pair.a, pair.b);
      else out.p2p(pair.a, pair.b);
      return;
    }
    for (int c = a.first_child; c < a.first_child + a.child_count; ++c) out.next(CellPair{c, pair.b, kDirected});
    return;
  }
  for (int c = b.first_child; c < b.first_child + b.child_count; ++c) out.next(CellPair{pair.a, c, kDirected});
}

struct CountPair {
  PairCounts counts{0, 0, 0, 0};
  __device__ void m2l(int, int) { ++counts.m2l; }
  __device__ void p2p(int, int) { ++counts.p2p; }
  __device__ void m2p(int, int) { ++counts.m2p; }
  __device__ void next(const CellPair&) { ++counts.next; }
};

__device__ std::uint64_t pairKey(int target, int source) {
  return (static_cast<std::uint64_t>(target) << 32) | static_cast<std::uint32_t>(source);
}

struct WritePair {
  std::uint64_t *m2l_keys, *p2p_keys, *m2p_keys;  // at this pair's first slot
  CellPair* next_pairs;
  __device__ void m2l(int t, int s) { *m2l_keys++ = pairKey(t, s); }
  __device__ void p2p(int t, int s) { *p2p_keys++ = pairKey(t, s); }
  __device__ void m2p(int t, int s) { *m2p_keys++ = pairKey(t, s); }
  __device__ void next(const CellPair& p) { *next_pairs++ = p; }
};

__global__ void countPairs(const CellPair* pairs, long long n, const FmmCell* cells, double theta,
                           PairCounts* counts) {
  const long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  CountPair out;
  visit(pairs[i], cells, theta, out);
  counts[i] = out.counts;
}

// ends: the inclusive prefix sum of the counts; base: the lists' sizes before this generation.
__global__ void writePairs(const CellPair* pairs, long long n, const FmmCell* cells, double theta,
                           const PairCounts* counts, const PairCounts* ends, PairCounts base, std::uint64_t* m2l_keys,
                           std::uint64_t* p2p_keys, std::uint64_t* m2p_keys, CellPair* next_pairs) {
  const long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  const PairCounts c = counts[i], e = ends[i];
  WritePair out{m2l_keys + base.m2l + e.m2l - c.m2l, p2p_keys + base.p2p + e.p2p - c.p2p,
                m2p_keys + base.m2p + e.m2p - c.m2p, next_pairs + e.next - c.next};
  visit(pairs[i], cells, theta, out);
}

// CSR from sorted (target, source) keys: offsets[t] = the first key of target t or above.
__global__ void csrFromSortedKeys(const std::uint64_t* keys, long long n, int target_count, std::int64_t* offsets,
                                  int* items) {
  const long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (i < n) items[i] = static_cast<int>(keys[i] & 0xffffffffu);
  if (i <= target_count) {
    const std::uint64_t first = static_cast<std::uint64_t>(i) << 32;
    long long lo = 0, hi = n;
    while (lo < hi) {
      const long long mid = lo + (hi - lo) / 2;
      if (keys[mid] < first) lo = mid + 1;
      else hi = mid;
    }
    offsets[i] = lo;
  }
}

// ---------------------------------------------------------------------------------------------
// Far field. The operator tables of grove::fmm::MultiIndexSet, on the device.

struct Multipoles {
  const double* local;
  const double* remote;
  const int* remote_rows;  // SourceCells::remote_multipole_rows; nullptr: row c - local_count
  long long local_count;
  int stride;
  __device__ const double* of(int cell) const {
    if (cell < local_count) return local + static_cast<long long>(cell) * stride;
    const long long r = static_cast<long long>(cell) - local_count;
    const long long row = remote_rows ? remote_rows[r] : r;
    return row >= 0 ? remote + row * stride : local + (-1 - row) * stride;
  }
};

// The multipoles of `count` cells (rows of `stride`) folded onto the harmonic indices
// (MultiIndexSet::foldMultipole, the same terms in the same order): a thread per (cell, index).
__global__ void foldMultipoles(Tables tb, const double* multipoles, long long count, int stride, double* folded) {
  const long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (i >= count * tb.harmonic) return;
  const long long cell = i / tb.harmonic;
  const int j = static_cast<int>(i - cell * tb.harmonic);
  const double* multipole = multipoles + cell * stride;
  double sum = 0.0;
  for (int f = tb.fold_begin[j]; f < tb.fold_begin[j + 1]; ++f) sum += tb.fold_weight[f] * multipole[tb.fold_source[f]];
  folded[i] = sum;
}

// One block per target cell: its M2L sources kM2lLanes at a time, added to its local expansion
// (cleared before the first list: a calculation begun by startLocal() has two), in the harmonic
// form (MultiIndexSet::harmonicIndices(); `folded`: the sources' multipoles folded, rows of
// tb.harmonic). The Taylor coefficients with kz <= 2 are built a degree at a time across the block;
// then the contraction n! L_n += sum_j D_{n+k_j} folded_j for the harmonic n runs across the lanes:
// kM2lGroups groups of kM2lLanes threads, a thread per source lane, each group an equal share (by
// cost) of the contraction's work items. An item is a run of j for a bundle of kM2lBundle
// coefficients n (Tables::bundle_rows): per j, one load of folded_j and one of the rows' indices
// serve the bundle's kM2lBundle multiply-adds (a term of its own for every n took two loads a multiply-add
// and an index load). The lanes of a group read one row of D and one of M side by side (no
// shared-memory bank conflicts), an item's sums are reduced across the lanes by shuffles, and each
// n's partial sums are added in a fixed order at the end: no atomics, so the result does not
// depend on timing. The other n! L_n then follow from the trace identity (tb.unfold), a kz level
// at a time. The harmonic form halves the work (order 8: 1 365 multiply-adds an M2L against 3 003,
// 109 rows of D against 165, 81 coefficients of M against 165).
//
// The kernel is bound by the L1 / shared-memory pipe (Nsight Compute, run 230: 86 % busy), so its
// loads are kept few and conflict-free (run 231: the M2L 0.073 -> 0.059 s at 2^22):
// - M is stored transposed (a row per k, a column per source) by lanes that each take one k of one
//   source; at M's plain address k * kM2lLanes + s all 16 lanes hit one bank. The column is swizzled
//   (s ^ (k % kM2lLanes)), which spreads those stores over every bank and leaves each row's reads,
//   a permutation of its 16 columns, conflict-free.
// - The recurrence's six neighbours are read as three int2, and a thread's source (its geometry)
//   is the same for every row it builds, so that is read once a chunk.
static_assert((kM2lLanes & (kM2lLanes - 1)) == 0, "M's columns are swizzled by s ^ (k % kM2lLanes)");
__global__ void __launch_bounds__(kM2lThreads) multipolesToLocals(Tables tb, const FmmCell* cells,
                                                                        Multipoles folded, const std::int64_t* offsets,
                                                                        const int* items, double* locals,
                                                                        int local_stride) {
  __shared__ double d[(kMaxTaylorRows + 1) * kM2lLanes];
  __shared__ double m[kMaxHarmonic * kM2lLanes];
  static_assert((kMaxTaylorRows + 1) * kM2lLanes >= kMaxCoefficients, "d holds n! L_n at the end");
  __shared__ double rx[kM2lLanes], ry[kM2lLanes], rz[kM2lLanes], inv_r2[kM2lLanes];
  __shared__ double partial[kMaxItems * kM2lBundle];
  __shared__ int source[kM2lLanes];
  const int t = blockIdx.x;
  const std::int64_t begin = offsets[t], end = offsets[t + 1];
  if (begin == end) return;  // nothing to add
  const int rows = tb.rows;
  const int lane = threadIdx.x % kM2lLanes, group = threadIdx.x / kM2lLanes;
  const unsigned group_mask = 0xffffu << (kM2lLanes * (group % 2));
  for (int w = threadIdx.x; w < tb.item_count * kM2lBundle; w += blockDim.x) partial[w] = 0.0;
  const Vec3d z = cells[t].center;
  for (std::int64_t first = begin; first < end; first += kM2lLanes) {
    const int lanes = end - first < kM2lLanes ? static_cast<int>(end - first) : kM2lLanes;
    if (threadIdx.x < kM2lLanes) {
      const int s = threadIdx.x;
      double x = 1.0, y = 0.0, w = 0.0;  // lanes past the last source: finite, with a zero multipole
      source[s] = -1;
      if (s < lanes) {
        source[s] = items[first + s];
        const Vec3d c = cells[source[s]].center;
        x = z.x - c.x, y = z.y - c.y, w = z.z - c.z;
      }
      rx[s] = x, ry[s] = y, rz[s] = w;
      inv_r2[s] = 1.0 / (x * x + y * y + w * w);
      d[s] = sqrt(inv_r2[s]);
      d[tb.taylor_count * kM2lLanes + s] = 0.0;  // the row of absent lower neighbours
    }
    __syncthreads();
    for (int s = group; s < kM2lLanes; s += kM2lGroups) {
      const double* multipole = source[s] >= 0 ? folded.of(source[s]) : nullptr;
      for (int k = lane; k < tb.harmonic; k += kM2lLanes)
        m[k * kM2lLanes + (s ^ (k & (kM2lLanes - 1)))] = multipole ? multipole[k] : 0.0;
    }
    // Every row this thread builds is of source `lane` (kM2lThreads is a multiple of kM2lLanes).
    const double sx = rx[lane], sy = ry[lane], sz = rz[lane], s_inv_r2 = inv_r2[lane];
    auto at = [&](int j) { return d[j * kM2lLanes + lane]; };
    for (int degree = 1; degree <= tb.order; ++degree) {
      const int row0 = tb.taylor_row_begin[degree], count = tb.taylor_row_begin[degree + 1] - row0;
      const double c1 = -(2.0 * degree - 1.0) / degree, c2 = -(degree - 1.0) / degree;
      for (int item = threadIdx.x; item < kM2lLanes * count; item += blockDim.x) {
        const int i = row0 + item / kM2lLanes;
        const int2* low = reinterpret_cast<const int2*>(tb.taylor_lower + 6 * i);  // 6 i ints: 8-byte aligned
        const int2 x_y = low[0], z_xx = low[1], yy_zz = low[2];
        d[i * kM2lLanes + lane] =
            (c1 * (sx * at(x_y.x) + sy * at(x_y.y) + sz * at(z_xx.x)) + c2 * (at(z_xx.y) + at(yy_zz.x) + at(yy_zz.y))) *
            s_inv_r2;
      }
      __syncthreads();
    }
    for (int item = threadIdx.x; item < kM2lLanes * tb.taylor_count; item += blockDim.x)
      d[item] *= tb.taylor_factorial[item / kM2lLanes];
    __syncthreads();
    for (int w = tb.group_items[group]; w < tb.group_items[group + 1]; ++w) {
      const int4 item = tb.items[w];
      double sum[kM2lBundle] = {0.0, 0.0, 0.0, 0.0};
      for (int j = 0; j < item.y; ++j) {
        const ushort4 row = tb.bundle_rows[item.x + j];
        const int k = item.z + j;
        const double mk = m[k * kM2lLanes + (lane ^ (k & (kM2lLanes - 1)))];
        sum[0] += d[row.x * kM2lLanes + lane] * mk;
        sum[1] += d[row.y * kM2lLanes + lane] * mk;
        sum[2] += d[row.z * kM2lLanes + lane] * mk;
        sum[3] += d[row.w * kM2lLanes + lane] * mk;
      }
#pragma unroll
      for (int r = 0; r < kM2lBundle; ++r) {
#pragma unroll
        for (int offset = kM2lLanes / 2; offset > 0; offset /= 2)
          sum[r] += __shfl_xor_sync(group_mask, sum[r], offset, kM2lLanes);
      }
      if (lane == 0)
        for (int r = 0; r < kM2lBundle; ++r) partial[w * kM2lBundle + r] += sum[r];
    }
    __syncthreads();
  }
  // D is not read after the last chunk (its loop ends at a barrier): n! L_n for every n go there.
  double* scaled_local = d;
  for (int h = threadIdx.x; h < tb.harmonic; h += blockDim.x) {
    double sum = 0.0;
    for (int p = tb.part_begin[h]; p < tb.part_begin[h + 1]; ++p) sum += partial[tb.parts[p]];
    scaled_local[tb.harmonic_position[h]] = sum;
  }
  __syncthreads();
  for (int z = 2; z <= tb.order; ++z) {
    for (int u = tb.unfold_begin[z - 2] + threadIdx.x; u < tb.unfold_begin[z - 1]; u += blockDim.x) {
      const ushort4 step = tb.unfold[u];
      scaled_local[step.x] = -scaled_local[step.y] - scaled_local[step.z];
    }
    __syncthreads();
  }
  for (int n = threadIdx.x; n < rows; n += blockDim.x)
    locals[static_cast<long long>(t) * local_stride + n] += scaled_local[n] * tb.inverse_factorial[n];
}

// L2L for one generation: a block per child cell, a thread per child coefficient.
__global__ void shiftLocalsDown(Tables tb, const FmmCell* cells, int first_cell, int stride, double* locals) {
  __shared__ double pw[kMaxCoefficients];
  __shared__ double parent_local[kMaxCoefficients];
  const int c = first_cell + blockIdx.x;
  const FmmCell cell = cells[c];
  if (threadIdx.x == 0) {
    const Vec3d p = cells[cell.parent].center;
    powers(tb, Vec3d(cell.center.x - p.x, cell.center.y - p.y, cell.center.z - p.z), tb.order, pw);
  }
  for (int k = threadIdx.x; k < tb.rows; k += blockDim.x)
    parent_local[k] = locals[static_cast<long long>(cell.parent) * stride + k];
  __syncthreads();
  for (int l = threadIdx.x; l < tb.rows; l += blockDim.x) {
    double sum = locals[static_cast<long long>(c) * stride + l];
    for (int term = tb.l2l_begin[l]; term < tb.l2l_begin[l + 1]; ++term) {
      const ushort2 f = tb.l2l_factors[term];
      sum += tb.l2l_weight[term] * parent_local[f.x] * pw[f.y];
    }
    locals[static_cast<long long>(c) * stride + l] = sum;
  }
}

// L2P: a block per leaf, a thread per particle.
__global__ void evaluateAtParticles(Tables tb, const FmmCell* cells, const double* locals, int stride,
                                    const Vec3d* positions, double* phi, double* gradient) {
  __shared__ double local[kMaxCoefficients];
  const int c = blockIdx.x;
  const FmmCell cell = cells[c];
  if (cell.child_count != 0 || cell.end == cell.begin) return;
  for (int k = threadIdx.x; k < tb.rows; k += blockDim.x) local[k] = locals[static_cast<long long>(c) * stride + k];
  __syncthreads();
  double power[kMaxCoefficients];
  for (int k = cell.begin + threadIdx.x; k < cell.end; k += blockDim.x) {
    const Vec3d x = positions[k];
    powers(tb, Vec3d(x.x - cell.center.x, x.y - cell.center.y, x.z - cell.center.z), tb.order, power);
    double p = 0.0, g[3] = {0.0, 0.0, 0.0};
    for (int i = 0; i < tb.rows; ++i) {
      const double l = local[i];
      p += l * power[i];
      for (int axis = 0; axis < 3; ++axis) {
        const int ka = tb.index[3 * i + axis];
        if (ka > 0) g[axis] += l * ka * power[tb.lower[6 * i + axis]];
      }
    }
    phi[k] = p;
    gradient[3LL * k + 0] = g[0];
    gradient[3LL * k + 1] = g[1];
    gradient[3LL * k + 2] = g[2];
  }
}

// M2P: the contents-less received cells of a leaf's list evaluated at its particles, added to the
// L2P's phi and gradient. A leaf's list is cut into tasks of at most `sources_per_task` sources
// (M2pTask; countM2pTasks, writeM2pTasks): a leaf on a domain's border meets thousands of
// received cells, and alone in one block it ran long after the rest of the far field (0.07 s at
// 2^20 bodies on two ranks, where a few leaves held 3 500 sources each). A target's only task adds
// to phi and the gradient; a task among several writes its sums to `partials` (4 a particle: phi,
// then the gradient's axes), which sumM2pSegments adds in task order. A work item is a task and a
// tile of kM2pParticles of its leaf's particles (a leaf's tiles side by side); per source, the
// Taylor coefficients of 1/r up to order + 1 at the tile's particles (MultiIndexSet::
// taylorCoefficients' recurrence, term for term) are built a degree at a time across the block in
// shared memory, a row per coefficient and a column per particle (the lanes read side by side);
// then a thread per (particle, component: phi or a gradient axis) contracts them with the source's
// multipole and keeps the sum over the sources. Each particle's M2P used to run on one thread with
// its 220 coefficients in local memory; at two ranks, 2^22 bodies and order 8, the downward pass
// with those M2P ended 0.05 s after the near field (run 215).
constexpr int kM2pParticles = 16, kM2pThreads = 4 * kM2pParticles;

// A block's share of the M2P: the sources items[first .. last) of leaf `target`; `segment` >= 0
// when the leaf's list is cut into several tasks (its sums then go to the partials), else -1.
struct M2pTask {
  std::int64_t first, last;
  int target, segment;
};

// One block of kM2pCountThreads: per target cell t its M2P tasks (none for a cell with children or
// without particles, or with an empty list) and the partial sums they leave (4 n_i per task when
// there are several), scanned: target t's begin at task_begin[t] and partial_begin[t], the totals
// at [target_count]. One small block, because the host waits for the totals while the near
// field's blocks may hold every multiprocessor: it takes the first room that frees.
constexpr int kM2pCountThreads = 128;
__global__ void __launch_bounds__(kM2pCountThreads)
    countM2pTasks(const FmmCell* cells, int target_count, const std::int64_t* offsets, int sources_per_task,
                  int* task_begin, std::int64_t* partial_begin) {
  __shared__ long long task_sums[kM2pCountThreads], partial_sums[kM2pCountThreads];
  const int chunk = (target_count + kM2pCountThreads - 1) / kM2pCountThreads;
  const int first = static_cast<int>(threadIdx.x) * chunk, last = ::min(first + chunk, target_count);
  auto tasksOf = [&](int t) -> long long {
    const FmmCell cell = cells[t];
    const std::int64_t sources = offsets[t + 1] - offsets[t];
    return cell.child_count == 0 && cell.end > cell.begin ? (sources + sources_per_task - 1) / sources_per_task : 0;
  };
  auto partialsOf = [&](int t, long long tasks) -> long long {
    return tasks > 1 ? 4LL * tasks * (cells[t].end - cells[t].begin) : 0;
  };
  long long tasks = 0, partials = 0;
  for (int t = first; t < last; ++t) {
    const long long k = tasksOf(t);
    tasks += k;
    partials += partialsOf(t, k);
  }
  task_sums[threadIdx.x] = tasks;
  partial_sums[threadIdx.x] = partials;
  __syncthreads();
  if (threadIdx.x == 0) {  // 128 sums: an exclusive scan on one thread
    long long task_total = 0, partial_total = 0;
    for (int i = 0; i < kM2pCountThreads; ++i) {
      const long long k = task_sums[i], p = partial_sums[i];
      task_sums[i] = task_total, partial_sums[i] = partial_total;
      task_total += k, partial_total += p;
    }
    task_begin[target_count] = static_cast<int>(task_total);
    partial_begin[target_count] = partial_total;
  }
  __syncthreads();
  tasks = task_sums[threadIdx.x];
  partials = partial_sums[threadIdx.x];
  for (int t = first; t < last; ++t) {
    task_begin[t] = static_cast<int>(tasks);
    partial_begin[t] = partials;
    const long long k = tasksOf(t);
    tasks += k;
    partials += partialsOf(t, k);
  }
}

// Thread t writes target t's tasks from task_begin[t] on (countM2pTasks' counts, scanned).
__global__ void writeM2pTasks(int target_count, const std::int64_t* offsets, int sources_per_task,
                              const int* task_begin, M2pTask* out) {
  const int t = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (t >= target_count) return;
  const int count = task_begin[t + 1] - task_begin[t];
  for (int k = 0; k < count; ++k) {
    const std::int64_t first = offsets[t] + static_cast<std::int64_t>(k) * sources_per_task;
    out[task_begin[t] + k] = M2pTask{first, ::min(first + sources_per_task, offsets[t + 1]), t, count > 1 ? k : -1};
  }
}

__global__ void __launch_bounds__(kM2pThreads)
    multipolesToParticles(Tables tb, const FmmCell* cells, Multipoles mp, const M2pTask* tasks,
                          long long task_count, long long tiles, unsigned long long* next_item, const int* m2p_items,
                          const Vec3d* positions, double* phi, double* gradient, const std::int64_t* partial_begin,
                          double* partials) {
  __shared__ double t[kMaxGradientCoefficients * kM2pParticles];
  __shared__ double m[kMaxCoefficients];
  __shared__ double rx[kM2pParticles], ry[kM2pParticles], rz[kM2pParticles], inv_r2[kM2pParticles];
  __shared__ long long taken;
  const int q = static_cast<int>(threadIdx.x) % kM2pParticles, component = static_cast<int>(threadIdx.x) / kM2pParticles;
  // The blocks take the work items (task, tile) from a counter (tasks differ in length: a fixed
  // share per block left some running long after the rest), tile y being particles [16 y,
  // 16 y + 16) of the task's leaf (a leaf's tiles side by side).
  const long long items = task_count * tiles;
  for (;;) {
    if (threadIdx.x == 0) taken = static_cast<long long>(atomicAdd(next_item, 1ULL));
    __syncthreads();
    const long long item = taken;
    __syncthreads();  // every thread has read it before thread 0 takes the next
    if (item >= items) break;
    const M2pTask task = tasks[item / tiles];
    const FmmCell cell = cells[task.target];
    const int base = cell.begin + static_cast<int>(item % tiles) * kM2pParticles;
    if (base >= cell.end) continue;  // the whole block: a tile past the leaf's end
    const int count = ::min(kM2pParticles, cell.end - base);
    double sum = 0.0;
    for (std::int64_t e = task.first; e < task.last; ++e) {
      const int s = m2p_items[e];
      __syncthreads();  // the last source's (or item's) coefficients and multipole are read
      const double* multipole = mp.of(s);
      for (int i = threadIdx.x; i < tb.rows; i += blockDim.x) m[i] = multipole[i];
      if (threadIdx.x < kM2pParticles) {
        // Columns past the leaf's end repeat the tile's first particle (finite) and are not stored.
        const Vec3d x = positions[base + (q < count ? q : 0)], z = cells[s].center;
        rx[q] = x.x - z.x, ry[q] = x.y - z.y, rz[q] = x.z - z.z;
        const double r2 = rx[q] * rx[q] + ry[q] * ry[q] + rz[q] * rz[q];
        inv_r2[q] = 1.0 / r2;
        t[q] = 1.0 / sqrt(r2);
      }
      __syncthreads();
      for (int d = 1; d <= tb.order + 1; ++d) {
        const int row0 = tb.degree_begin[d], n_rows = tb.degree_begin[d + 1] - row0;
        for (int entry = threadIdx.x; entry < n_rows * kM2pParticles; entry += blockDim.x) {
          const int i = row0 + entry / kM2pParticles, col = entry % kM2pParticles;
          const int* low = tb.lower + 6 * i;
          const double axis_value[3] = {rx[col], ry[col], rz[col]};
          double first_sum = 0.0, second_sum = 0.0;
          for (int axis = 0; axis < 3; ++axis) {
            if (low[axis] >= 0) first_sum += axis_value[axis] * t[low[axis] * kM2pParticles + col];
            if (low[axis + 3] >= 0) second_sum += t[low[axis + 3] * kM2pParticles + col];
          }
          t[i * kM2pParticles + col] = -((2.0 * d - 1.0) * first_sum + (d - 1.0) * second_sum) * inv_r2[col] / d;
        }
        __syncthreads();
      }
      if (component == 0) {
        for (int i = 0; i < tb.rows; ++i) sum += m[i] * t[i * kM2pParticles + q];
      } else {
        const int axis = component - 1;
        for (int i = 0; i < tb.rows; ++i)
          sum += m[i] * (tb.index[3 * i + axis] + 1) * t[tb.upper[3 * i + axis] * kM2pParticles + q];
      }
    }
    if (q < count) {
      const long long k = base + q;
      if (task.segment >= 0)
        partials[partial_begin[task.target] +
                 4LL * (static_cast<long long>(task.segment) * (cell.end - cell.begin) + (k - cell.begin)) +
                 component] = sum;
      else if (component == 0)
        phi[k] += sum;
      else
        gradient[3 * k + component - 1] += sum;
    }
  }
}

// Block c, for a target cell whose M2P list was cut into several tasks: its particles' phi and
// gradient gain the tasks' partial sums, added in task order.
__global__ void sumM2pSegments(const FmmCell* cells, const int* task_begin, const std::int64_t* partial_begin,
                               const double* partials, double* phi, double* gradient) {
  const int c = blockIdx.x;
  const int segments = task_begin[c + 1] - task_begin[c];
  if (segments < 2) return;
  const int begin = cells[c].begin, n_i = cells[c].end - begin;
  const double* p = partials + partial_begin[c];
  for (int item = threadIdx.x; item < 4 * n_i; item += blockDim.x) {
    double sum = p[item];
    for (int segment = 1; segment < segments; ++segment) sum += p[4LL * segment * n_i + item];
    const long long k = begin + item / 4;
    const int component = item % 4;
    if (component == 0) phi[k] += sum;
    else gradient[3 * k + component - 1] += sum;
  }
}

// Periodic boxes: the lattice's field (LatticeField, its arrays on the device) added at every
// particle, a thread per particle, as PeriodicLattice::evaluate adds it on the host.
__global__ void addLatticeField(Tables tb, LatticeField field, const Vec3d* positions, long long n, double* phi,
                                double* gradient) {
  const long long k = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (k >= n) return;
  const Vec3d x = positions[k];
  const int part = field.partOf(x);
  const Vec3d c = field.part_centres[part];
  double power[kMaxCoefficients];
  powers(tb, Vec3d(x.x - c.x, x.y - c.y, x.z - c.z), tb.order, power);
  double p = phi[k];
  Vec3d g(gradient[3 * k], gradient[3 * k + 1], gradient[3 * k + 2]);
  field.addPolynomials(part, power, &p, &g);
  field.addBackground(x, &p, &g);
  phi[k] = p;
  gradient[3 * k] = g.x;
  gradient[3 * k + 1] = g.y;
  gradient[3 * k + 2] = g.z;
}

unsigned blocksFor(long long n, int threads) { return static_cast<unsigned>((n + threads - 1) / threads); }


// The three lists of a traversal, by index into DeviceFarField::State's arrays.
constexpr int kM2l = 0, kP2p = 1, kM2p = 2;

}  // namespace

struct DeviceFarField::State {
  int device = -1;
  // Priorities, for when blocks of several kernels wait for room. First the tree's build and the
  // traversal: small kernels, each waited for by the host. Queued behind the M2L's blocks
  // (startLocal's M2L runs while the LET is exchanged, and start()'s traversal of the received
  // trees follows the LET), they would keep the host waiting until the M2L ended. Then the far
  // field: a near-field kernel (of the default priority, launched after the M2L; grove/fmm/
  // device_near_field.cuh) would otherwise hold every multiprocessor until it ends, and only then
  // would the L2L, L2P and M2P start, after it instead of beside it.
  gpu::Stream traversal_stream{gpu::Stream::Priority{0}};
  // (On a device of two levels both get the highest: a Priority stream stays above the default.)
  gpu::Stream far_stream{gpu::Stream::Priority{1}};
  gpu::Event traversed, far_start{true}, m2l_done{true}, far_done{true}, downloaded;
  // A calculation begun by startLocal(): the local pairs' M2L ran from far_start to local_m2l_done,
  // the received cells' from m2l_start to m2l_done.
  gpu::Event local_m2l_done{true}, m2l_start{true};
  gpu::PinnedArray<double> phi_host, gradient_host;  // the far field's results, as start() downloads them
  DeviceTables tables;
  DeviceVector<FmmCell> cells;
  DeviceVector<double> local_multipoles, remote_multipoles, locals, phi, gradient;
  // The multipoles folded for the M2L (foldMultipoles; rows of the tables' `harmonic`).
  DeviceVector<double> folded_local, folded_remote;
  DeviceVector<int> remote_multipole_rows;
  DeviceVector<Vec3d> positions;
  // Periodic boxes: the lattice offered for the next start() (offerLattice), and its field's
  // arrays as start() uploaded them.
  const PeriodicLattice* lattice = nullptr;
  DeviceVector<double> lattice_polynomials;
  DeviceVector<Vec3d> lattice_part_centres;
  // The traversal's generations and its lists (keys, then CSR).
  DeviceVector<CellPair> frontier, next;
  DeviceVector<PairCounts> counts, ends;
  DeviceVector<std::uint64_t> keys[3], keys_alt;
  DeviceVector<std::int64_t> offsets[3];
  DeviceVector<int> items[3];
  DeviceVector<std::uint8_t> cub_scratch;
  // startLocal()'s calculation, until start() completes it: its tree, theta and order, the local
  // pairs' counts (their M2L list in offsets/items[kM2l], queued on the far stream; their P2P keys
  // in keys[kP2p]) and the seconds it took. start() then lists the received cells' M2L in
  // remote_m2l_offsets/items (`split`: lists() merges the two).
  bool local_phase = false, split = false;
  std::uint64_t local_tree = 0;
  double local_theta = 0.0, local_seconds = 0.0;
  int local_order = 0;
  PairCounts local_counts{0, 0, 0, 0};
  DeviceVector<std::int64_t> remote_m2l_offsets;
  DeviceVector<int> remote_m2l_items;
  // The P2P lists in the two parts of a split calculation, beside the whole list (offsets/items
  // [kP2p]): the tree's own leaf pairs (startLocal) and the received leaves' (start), for a near
  // field that starts on the local pairs before the LET (deviceLocalP2p, deviceReceivedP2p).
  DeviceVector<std::int64_t> local_p2p_offsets, received_p2p_offsets;
  DeviceVector<int> local_p2p_items, received_p2p_items;
  std::int64_t local_particles = 0;
  // The M2P list cut into tasks (queueM2p), and the partial sums of targets with several.
  int m2p_sources_per_task = 32;
  DeviceVector<int> m2p_task_begin;
  DeviceVector<std::int64_t> m2p_partial_begin;
  DeviceVector<M2pTask> m2p_tasks;
  DeviceVector<double> m2p_partials;
  DeviceVector<unsigned long long> m2p_next_item;  // the M2P kernel's work counter
  int multiprocessors = 1;
  // The tree's build (buildTree), and the tree whose key-ordered positions and multipoles it left
  // in `positions` and `local_multipoles` (FmmTree::buildId(); 0: none).
  detail::DeviceTreeBuild build;
  FmmTree::Built built;  // the host arrays the tree adopts (FmmTree::adopt gives the old ones back)
  std::uint64_t built_tree = 0;
  // Where finish() puts the far field.
  std::span<double> phi_out;
  std::span<Vec3d> gradient_out;
  bool running = false;
  bool traversed_once = false;
  std::int64_t p2p_pairs = 0, target_particles = 0, source_particles = 0;

  // The operator tables of expansion's order (built on `stream` when the order changes).
  const DeviceTables& tablesFor(const MultiIndexSet& expansion, cudaStream_t stream) {
    if (tables.order != expansion.order()) tables.build(expansion, stream);
    return tables;
  }
  void* scratch(std::size_t bytes) {
    if (cub_scratch.size() < bytes) cub_scratch.resize(bytes);
    return cub_scratch.data();
  }
  // One of the last traversal's lists (kM2l, kP2p, kM2p), downloaded; a split calculation's M2L
  // list is its two parts merged target by target (the received cells follow the local ones, as
  // in the sorted list of one traversal).
  CsrList download(int list) const {
    CsrList out = downloadCsr(offsets[list], items[list]);
    if (list != kM2l || !split) return out;
    const CsrList received = downloadCsr(remote_m2l_offsets, remote_m2l_items);
    CsrList merged;
    merged.offsets.push_back(0);
    for (std::size_t t = 0; t + 1 < out.offsets.size(); ++t) {
      for (const int item : out.of(static_cast<int>(t))) merged.items.push_back(item);
      for (const int item : received.of(static_cast<int>(t))) merged.items.push_back(item);
      merged.offsets.push_back(static_cast<std::int64_t>(merged.items.size()));
    }
    return merged;
  }
  CsrList downloadCsr(const DeviceVector<std::int64_t>& csr_offsets, const DeviceVector<int>& csr_items) const {
    CsrList out;
    out.offsets.resize(csr_offsets.size());
    out.items.resize(csr_items.size());
    csr_offsets.copyTo(out.offsets.data(), traversal_stream.get());
    csr_items.copyTo(out.items.data(), traversal_stream.get());
    return out;
  }

  // The traversal from `roots` on the traversal stream, a generation of pairs at a time, each
  // list's keys written after the `total` already in keys[]. Returns the totals after it.
  PairCounts traverse(const std::vector<CellPair>& roots, double theta, PairCounts total) {
    const cudaStream_t ts = traversal_stream.get();
    frontier.assignAsync(roots.data(), roots.size(), ts);
    constexpr int kThreads = 256;
    while (frontier.size() > 0) {
      const auto pairs = static_cast<long long>(frontier.size());
      counts.resize(static_cast<std::size_t>(pairs));
      ends.resize(static_cast<std::size_t>(pairs));
      countPairs<<<blocksFor(pairs, kThreads), kThreads, 0, ts>>>(frontier.data(), pairs, cells.data(), theta,
                                                                  counts.data());
      check(cudaGetLastError(), "countPairs");
      std::size_t bytes = 0;
      check(cub::DeviceScan::InclusiveScan(nullptr, bytes, counts.data(), ends.data(), AddCounts{}, pairs, ts),
            "cub::DeviceScan::InclusiveScan (size)");
      check(cub::DeviceScan::InclusiveScan(scratch(bytes), bytes, counts.data(), ends.data(), AddCounts{}, pairs, ts),
            "cub::DeviceScan::InclusiveScan (pair counts)");
      const PairCounts level = ends.elementToHost(static_cast<std::size_t>(pairs) - 1, ts);  // waits
      keys[kM2l].resizeKeep(static_cast<std::size_t>(total.m2l + level.m2l), ts);
      keys[kP2p].resizeKeep(static_cast<std::size_t>(total.p2p + level.p2p), ts);
      keys[kM2p].resizeKeep(static_cast<std::size_t>(total.m2p + level.m2p), ts);
      next.resize(static_cast<std::size_t>(level.next));
      writePairs<<<blocksFor(pairs, kThreads), kThreads, 0, ts>>>(frontier.data(), pairs, cells.data(), theta,
                                                                  counts.data(), ends.data(), total, keys[kM2l].data(),
                                                                  keys[kP2p].data(), keys[kM2p].data(), next.data());
      check(cudaGetLastError(), "writePairs");
      total = AddCounts{}(total, PairCounts{level.m2l, level.p2p, level.m2p, 0});
      frontier.swap(next);
    }
    return total;
  }

  // `list_keys` sorted by (target, source), as the host's lists, then as CSR over target_count
  // targets, on the traversal stream.
  void toCsr(DeviceVector<std::uint64_t>& list_keys, int target_count, DeviceVector<std::int64_t>& csr_offsets,
             DeviceVector<int>& csr_items) {
    const cudaStream_t ts = traversal_stream.get();
    const auto count = static_cast<long long>(list_keys.size());
    keys_alt.resize(list_keys.size());
    if (count > 0) {
      cub::DoubleBuffer<std::uint64_t> buffer(list_keys.data(), keys_alt.data());
      std::size_t bytes = 0;
      const int key_bits = keyBits(target_count);
      check(cub::DeviceRadixSort::SortKeys(nullptr, bytes, buffer, count, 0, key_bits, ts),
            "cub::DeviceRadixSort::SortKeys (size)");
      check(cub::DeviceRadixSort::SortKeys(scratch(bytes), bytes, buffer, count, 0, key_bits, ts),
            "cub::DeviceRadixSort::SortKeys (interaction lists)");
      if (buffer.Current() != list_keys.data()) list_keys.swap(keys_alt);
    }
    sortedKeysToCsr(list_keys.data(), count, target_count, csr_offsets, csr_items);
  }

  // The keys [first, first + count) as CSR over target_count targets, sorted into keys_alt
  // (they stay as they are, where a later traversal appends to them), on the traversal stream.
  void rangeToCsr(const std::uint64_t* first, long long count, int target_count,
                  DeviceVector<std::int64_t>& csr_offsets, DeviceVector<int>& csr_items) {
    const cudaStream_t ts = traversal_stream.get();
    keys_alt.resize(static_cast<std::size_t>(count));
    if (count > 0) {
      std::size_t bytes = 0;
      const int key_bits = keyBits(target_count);
      check(cub::DeviceRadixSort::SortKeys(nullptr, bytes, first, keys_alt.data(), count, 0, key_bits, ts),
            "cub::DeviceRadixSort::SortKeys (size)");
      check(cub::DeviceRadixSort::SortKeys(scratch(bytes), bytes, first, keys_alt.data(), count, 0, key_bits, ts),
            "cub::DeviceRadixSort::SortKeys (a part of the interaction lists)");
    }
    sortedKeysToCsr(keys_alt.data(), count, target_count, csr_offsets, csr_items);
  }

  // The M2P list (offsets/items[kM2p], made on the traversal stream) cut into tasks of at most
  // m2p_sources_per_task sources, on that stream: their count and that of the partial sums are
  // read back (one small block; the host waits for it) to size m2p_tasks and m2p_partials.
  // total_m2p: the list's items.
  void makeM2pTasks(int target_count, long long total_m2p) {
    const cudaStream_t ts = traversal_stream.get();
    const int per_task = m2p_sources_per_task;
    const auto n = static_cast<std::size_t>(target_count);
    m2p_task_begin.resize(n + 1);
    m2p_partial_begin.resize(n + 1);
    if (total_m2p == 0) {
      m2p_tasks.resize(0);
      m2p_partials.resize(0);
      return;
    }
    // Tasks are counted in int: a target with c sources has ceil(c / per_task) of them.
    require(total_m2p / per_task + target_count < (1LL << 31), "fmm::DeviceFarField::start",
            "{} M2P in tasks of {} sources: at most 2^31 - 1 tasks are supported", total_m2p, per_task);
    countM2pTasks<<<1, kM2pCountThreads, 0, ts>>>(cells.data(), target_count, offsets[kM2p].data(), per_task,
                                                  m2p_task_begin.data(), m2p_partial_begin.data());
    check(cudaGetLastError(), "countM2pTasks");
    const int task_count = m2p_task_begin.elementToHost(n, ts);  // waits
    m2p_tasks.resize(static_cast<std::size_t>(task_count));
    m2p_partials.resize(static_cast<std::size_t>(m2p_partial_begin.elementToHost(n, ts)));
    constexpr int kThreads = 256;
    writeM2pTasks<<<blocksFor(target_count, kThreads), kThreads, 0, ts>>>(
        target_count, offsets[kM2p].data(), per_task, m2p_task_begin.data(), m2p_tasks.data());
    check(cudaGetLastError(), "writeM2pTasks");
  }

  // makeM2pTasks' tasks on the far stream, added to phi and the gradient: their kernel, then the
  // sums of targets cut into several. largest_leaf: the tree's largest leaf (its tiles of
  // kM2pParticles particles make a task's work items).
  void queueM2p(const Tables& tb, const Multipoles& mp, int target_count, int largest_leaf) {
    if (m2p_tasks.empty()) return;
    const cudaStream_t fs = far_stream.get();
    // Blocks enough to fill the device beside the near field; each takes work items from the
    // counter.
    const long long tiles = std::max(1, (largest_leaf + kM2pParticles - 1) / kM2pParticles);
    const long long work_items = static_cast<long long>(m2p_tasks.size()) * tiles;
    const auto blocks = static_cast<unsigned>(std::min<long long>(work_items, 8LL * multiprocessors));
    m2p_next_item.resize(1);
    check(cudaMemsetAsync(m2p_next_item.data(), 0, sizeof(unsigned long long), fs), "cudaMemsetAsync");
    multipolesToParticles<<<blocks, kM2pThreads, 0, fs>>>(
        tb, cells.data(), mp, m2p_tasks.data(), static_cast<long long>(m2p_tasks.size()), tiles,
        m2p_next_item.data(), items[kM2p].data(), positions.data(), phi.data(), gradient.data(),
        m2p_partial_begin.data(), m2p_partials.data());
    check(cudaGetLastError(), "multipolesToParticles");
    if (!m2p_partials.empty()) {
      sumM2pSegments<<<static_cast<unsigned>(target_count), 128, 0, fs>>>(
          cells.data(), m2p_task_begin.data(), m2p_partial_begin.data(), m2p_partials.data(), phi.data(),
          gradient.data());
      check(cudaGetLastError(), "sumM2pSegments");
    }
  }

  // A key holds its target above bit 32 (pairKey).
  static int keyBits(int target_count) { return 32 + std::bit_width(static_cast<unsigned>(target_count)); }

  void sortedKeysToCsr(const std::uint64_t* sorted, long long count, int target_count,
                       DeviceVector<std::int64_t>& csr_offsets, DeviceVector<int>& csr_items) {
    csr_offsets.resize(static_cast<std::size_t>(target_count) + 1);
    csr_items.resize(static_cast<std::size_t>(count));
    constexpr int kThreads = 256;
    const long long threads_needed = std::max<long long>(count, target_count + 1LL);
    csrFromSortedKeys<<<blocksFor(threads_needed, kThreads), kThreads, 0, traversal_stream.get()>>>(
        sorted, count, target_count, csr_offsets.data(), csr_items.data());
    check(cudaGetLastError(), "csrFromSortedKeys");
  }

  // The P2P lists of CSR `csr_offsets`, `csr_items` as a near field on this device reads them.
  DeviceP2pLists p2pLists(const DeviceVector<std::int64_t>& csr_offsets, const DeviceVector<int>& csr_items,
                          std::int64_t pairs, std::int64_t targets, std::int64_t sources) const {
    return DeviceP2pLists{cells.data(), csr_offsets.data(), csr_items.data(),
                          static_cast<int>(csr_offsets.size()) - 1, pairs, targets, sources, device,
                          traversal_stream.get()};
  }

  // The far field's inputs from the tree, on the far stream: independent of the traversal, so
  // they need not wait for it (from pageable memory, each copy returns once staged). A tree built
  // here left its positions and multipoles on the device (buildTree, which waited for them).
  void uploadTree(const FmmTree& tree, std::span<const double> tree_multipoles) {
    const cudaStream_t fs = far_stream.get();
    const bool built_here = built_tree != 0 && tree.buildId() == built_tree &&
                            tree_multipoles.data() == tree.multipoles().data() &&
                            tree_multipoles.size() == tree.multipoles().size();
    if (built_here) return;
    built_tree = 0;
    local_multipoles.assignAsync(tree_multipoles.data(), tree_multipoles.size(), fs);
    positions.assignAsync(tree.positions().data(), tree.positions().size(), fs);
  }

  // The rows of `multipoles` (of `stride`) folded into `out` (rows of tb.harmonic), on the far stream.
  void fold(const Tables& tb, const DeviceVector<double>& multipoles, std::size_t stride, DeviceVector<double>& out) {
    const std::size_t count = stride > 0 ? multipoles.size() / stride : 0;
    out.resize(count * static_cast<std::size_t>(tb.harmonic));
    if (count == 0) return;
    constexpr int kThreads = 128;
    foldMultipoles<<<blocksFor(static_cast<long long>(out.size()), kThreads), kThreads, 0, far_stream.get()>>>(
        tb, multipoles.data(), static_cast<long long>(count), static_cast<int>(stride), out.data());
    check(cudaGetLastError(), "foldMultipoles");
  }

  // The M2L of a CSR list (target_count targets) on the far stream, added to the locals (of
  // `stride`), from the folded multipoles of `mp`'s cells.
  void queueM2l(const Tables& tb, const Multipoles& mp, const DeviceVector<std::int64_t>& csr_offsets,
                const DeviceVector<int>& csr_items, int target_count) {
    const Multipoles folded_mp{folded_local.data(), folded_remote.data(), mp.remote_rows, mp.local_count, tb.harmonic};
    multipolesToLocals<<<static_cast<unsigned>(target_count), kM2lThreads, 0, far_stream.get()>>>(
        tb, cells.data(), folded_mp, csr_offsets.data(), csr_items.data(), locals.data(), mp.stride);
    check(cudaGetLastError(), "multipolesToLocals");
  }
};

DeviceFarField::DeviceFarField() {
  require(gpu::deviceCount() > 0, "fmm::DeviceFarField", "no CUDA device: the FMM's device far field needs one");
  const int device = gpu::currentDevice();
  state_ = std::make_unique<State>();
  state_->device = device;
  check(cudaDeviceGetAttribute(&state_->multiprocessors, cudaDevAttrMultiProcessorCount, device),
        "cudaDeviceGetAttribute (multiprocessors)");
}

DeviceFarField::~DeviceFarField() { abandon(); }

void DeviceFarField::abandon() noexcept {
  if (!state_ || (!state_->running && !state_->local_phase)) return;
  int current = -1;
  cudaGetDevice(&current);
  cudaSetDevice(state_->device);
  cudaStreamSynchronize(state_->far_stream.get());
  cudaSetDevice(current);
  state_->running = false;
  state_->local_phase = false;
  state_->split = false;
  state_->traversed_once = false;  // its lists may be half made: deviceP2p() refuses them
  state_->lattice = nullptr;
}

void DeviceFarField::buildTree(std::span<const Vec3d> positions, std::span<const double> charges, int n_leaf,
                               const MultiIndexSet& expansion, FmmTree& tree) {
  State& s = *state_;
  require(!s.running && !s.local_phase, "fmm::DeviceFarField::buildTree",
          "a far field is still running: an engine serves one calculation at a time");
  if (!tree_on_device_) {
    FarFieldEngine::buildTree(positions, charges, n_leaf, expansion, tree);
    return;
  }
  const gpu::ScopedDevice on_device(s.device);
  const cudaStream_t ts = s.traversal_stream.get();
  s.built_tree = 0;  // positions and local_multipoles are overwritten below
  detail::buildTreeOnDevice(s.build, s.tablesFor(expansion, ts), ts, positions, charges, n_leaf, expansion, tree,
                            s.built, s.positions, s.local_multipoles);
  s.built_tree = tree.buildId();
}

bool DeviceFarField::startLocal(const FmmTree& tree, double theta, const MultiIndexSet& expansion) {
  State& s = *state_;
  require(!s.running && !s.local_phase, "fmm::DeviceFarField::startLocal",
          "a far field is still running: an engine serves one calculation at a time");
  require(theta > 0.0 && theta < 1.0, "fmm::DeviceFarField::startLocal", "theta {} is outside (0, 1)", theta);
  require(!tree.cells().empty() && tree.stride() == static_cast<std::size_t>(expansion.size()) &&
              tree.multipoles().size() == tree.cells().size() * tree.stride(),
          "fmm::DeviceFarField::startLocal", "a tree of {} cells and {} multipole coefficients of stride {}, for an "
          "expansion of {}: build the tree with this expansion",
          tree.cells().size(), tree.multipoles().size(), tree.stride(), expansion.size());
  const gpu::ScopedDevice on_device(s.device);
  const double begin_seconds = wallSeconds();
  const cudaStream_t ts = s.traversal_stream.get();
  const cudaStream_t fs = s.far_stream.get();
  const int target_count = static_cast<int>(tree.cells().size());
  // Flagged before anything is queued, so that abandon() waits for what was, should this throw.
  s.local_phase = true;
  s.split = false;
  FarFieldInFlight unwinding(*this);
  s.uploadTree(tree, tree.multipoles());
  const DeviceTables& dt = s.tablesFor(expansion, ts);
  s.cells.assignAsync(tree.cells().data(), tree.cells().size(), ts);
  for (auto& k : s.keys) k.resize(0);
  s.local_counts = s.traverse({CellPair{0, 0, kSelf}}, theta, PairCounts{0, 0, 0, 0});
  s.toCsr(s.keys[kM2l], target_count, s.offsets[kM2l], s.items[kM2l]);
  s.traversed.record(ts);
  // The local leaf pairs' P2P list too (deviceLocalP2p), after the event the M2L waits for; their
  // keys stay in keys[kP2p], where start() appends the received ones.
  s.rangeToCsr(s.keys[kP2p].data(), static_cast<long long>(s.local_counts.p2p), target_count, s.local_p2p_offsets,
               s.local_p2p_items);
  s.local_particles = static_cast<std::int64_t>(tree.positions().size());
  // The local pairs' M2L on the far stream, running while the caller exchanges the LET.
  s.far_stream.waitFor(s.traversed.get());
  s.far_start.record(fs);
  s.locals.resize(static_cast<std::size_t>(target_count) * tree.stride());
  check(cudaMemsetAsync(s.locals.data(), 0, s.locals.size() * sizeof(double), fs), "cudaMemsetAsync (locals)");
  const Multipoles mp{s.local_multipoles.data(), nullptr, nullptr, static_cast<long long>(target_count),
                      static_cast<int>(tree.stride())};
  s.fold(dt.view(), s.local_multipoles, tree.stride(), s.folded_local);
  s.queueM2l(dt.view(), mp, s.offsets[kM2l], s.items[kM2l], target_count);
  s.local_m2l_done.record(fs);
  s.local_tree = tree.buildId();
  s.local_theta = theta;
  s.local_order = expansion.order();
  s.local_seconds = wallSeconds() - begin_seconds;
  unwinding.release();
  return true;
}

TraversalSummary DeviceFarField::start(const FmmTree& tree, const SourceCells& sources, double theta,
                                       const MultiIndexSet& expansion, std::span<double> phi,
                                       std::span<Vec3d> gradient, bool, bool p2p_to_host) {
  State& s = *state_;
  require(!s.running, "fmm::DeviceFarField::start",
          "a far field is still running: an engine serves one calculation at a time");
  // Whatever throws below leaves no local phase queued for a later calculation to complete.
  FarFieldInFlight unwinding(*this);
  const int target_count = static_cast<int>(tree.cells().size());
  const bool completes_local = s.local_phase;
  if (completes_local)
    require(s.local_tree == tree.buildId() && s.local_theta == theta && s.local_order == expansion.order() &&
                sources.local_multipoles.data() == tree.multipoles().data() &&
                sources.localCount() == tree.cells().size(),
            "fmm::DeviceFarField::start",
            "startLocal() began a calculation for another tree, theta or expansion, or these sources do not begin "
            "with that tree's cells and multipoles: start() completes the calculation startLocal() began");
  checkTraversal(sources, target_count, theta, "fmm::DeviceFarField::start");
  checkFarField(tree, sources, expansion, phi, gradient, "fmm::DeviceFarField::start");
  const std::size_t n = tree.positions().size();
  const gpu::ScopedDevice on_device(s.device);
  const double begin_seconds = wallSeconds();
  const cudaStream_t ts = s.traversal_stream.get();
  const cudaStream_t fs = s.far_stream.get();
  // The far field's page-locked destination grown before anything is queued (freeing the old one
  // would wait for the device).
  s.phi_host.reserve(n);
  s.gradient_host.reserve(3 * n);
  // Running from here on: abandon() (the guard's, should anything below throw) waits for what is
  // queued.
  s.running = true;
  if (!completes_local) s.uploadTree(tree, sources.local_multipoles);
  // The received multipoles go on the traversal's stream, which the far stream waits for before
  // their M2L (`traversed`). From pageable memory a copy returns once staged, and staging tens of
  // MB waits for the copy's stream to drain it: on the far stream, behind startLocal's M2L, the
  // host stopped here until that M2L ended, and the traversal and near field started late.
  s.remote_multipoles.assignAsync(sources.remote_multipoles.data(), sources.remote_multipoles.size(), ts);
  s.remote_multipole_rows.assignAsync(sources.remote_multipole_rows.data(), sources.remote_multipole_rows.size(), ts);
  const DeviceTables& dt = s.tablesFor(expansion, ts);
  if (completes_local) {
    // The local cells are on the device (startLocal's M2L may still read them): the received
    // ones after them.
    const std::size_t local = tree.cells().size(), received = sources.cells.size() - local;
    s.cells.resizeKeep(sources.cells.size(), ts);
    if (received > 0)
      check(cudaMemcpyAsync(s.cells.data() + local, sources.cells.data() + local, received * sizeof(FmmCell),
                            cudaMemcpyHostToDevice, ts),
            "cudaMemcpyAsync (received cells)");
  } else {
    s.cells.assignAsync(sources.cells.data(), sources.cells.size(), ts);
  }

  // The traversal (after startLocal, of the received trees only: the local pairs are listed),
  // then each list sorted by (target, source), as the host's, and as CSR. The local pairs' M2L
  // list is already queued: the received cells' goes to a list of its own.
  std::vector<CellPair> roots;
  if (!completes_local) roots.push_back(CellPair{0, 0, kSelf});
  if (n > 0)
    for (int root : sources.remote_roots) roots.push_back(CellPair{0, root, kDirected});
  PairCounts total{0, 0, 0, 0};
  if (completes_local) {
    total = s.local_counts;
    total.m2l = 0;
    s.keys[kM2l].resize(0);
  } else {
    for (auto& k : s.keys) k.resize(0);
  }
  total = s.traverse(roots, theta, total);
  DeviceVector<std::int64_t>& m2l_offsets = completes_local ? s.remote_m2l_offsets : s.offsets[kM2l];
  DeviceVector<int>& m2l_items = completes_local ? s.remote_m2l_items : s.items[kM2l];
  s.toCsr(s.keys[kM2l], target_count, m2l_offsets, m2l_items);
  // The received leaves' P2P list on its own (deviceReceivedP2p), then the whole list.
  if (completes_local)
    s.rangeToCsr(s.keys[kP2p].data() + s.local_counts.p2p, static_cast<long long>(total.p2p - s.local_counts.p2p),
                 target_count, s.received_p2p_offsets, s.received_p2p_items);
  s.toCsr(s.keys[kP2p], target_count, s.offsets[kP2p], s.items[kP2p]);
  s.toCsr(s.keys[kM2p], target_count, s.offsets[kM2p], s.items[kM2p]);
  s.makeM2pTasks(target_count, static_cast<long long>(total.m2p));
  s.traversed.record(ts);
  s.traversed_once = true;
  s.split = completes_local;
  s.p2p_pairs = static_cast<std::int64_t>(total.p2p);
  s.target_particles = static_cast<std::int64_t>(n);
  s.source_particles = 0;
  for (const FmmCell& cell : sources.cells) s.source_particles = std::max<std::int64_t>(s.source_particles, cell.end);

  // The far field, queued on its own stream behind the traversal.
  const std::size_t stride = sources.stride;
  s.far_stream.waitFor(s.traversed.get());
  if (completes_local) {
    s.m2l_start.record(fs);
  } else {
    s.far_start.record(fs);
    s.locals.resize(static_cast<std::size_t>(target_count) * stride);
    check(cudaMemsetAsync(s.locals.data(), 0, s.locals.size() * sizeof(double), fs), "cudaMemsetAsync (locals)");
  }
  const Tables tb = dt.view();
  const Multipoles mp{s.local_multipoles.data(), s.remote_multipoles.data(),
                      sources.remote_multipole_rows.empty() ? nullptr : s.remote_multipole_rows.data(),
                      static_cast<long long>(sources.localCount()), static_cast<int>(stride)};
  // startLocal folded the local multipoles (its M2L may still read them); the received ones now.
  if (!completes_local) s.fold(tb, s.local_multipoles, stride, s.folded_local);
  s.fold(tb, s.remote_multipoles, stride, s.folded_remote);
  s.queueM2l(tb, mp, m2l_offsets, m2l_items, target_count);
  s.m2l_done.record(fs);
  for (int g = 1; g < tree.generationCount(); ++g) {
    const int cells_in_generation = tree.generation(g + 1) - tree.generation(g);
    if (cells_in_generation == 0) continue;
    shiftLocalsDown<<<static_cast<unsigned>(cells_in_generation), 64, 0, fs>>>(tb, s.cells.data(), tree.generation(g),
                                                                              static_cast<int>(stride), s.locals.data());
    check(cudaGetLastError(), "shiftLocalsDown");
  }
  s.phi.resize(n);
  s.gradient.resize(3 * n);
  evaluateAtParticles<<<static_cast<unsigned>(target_count), 32, 0, fs>>>(
      tb, s.cells.data(), s.locals.data(), static_cast<int>(stride), s.positions.data(), s.phi.data(),
      s.gradient.data());
  check(cudaGetLastError(), "evaluateAtParticles");
  if (total.m2p > 0) {
    int largest_leaf = 0;
    for (const FmmCell& cell : tree.cells())
      if (cell.leaf()) largest_leaf = std::max(largest_leaf, cell.end - cell.begin);
    s.queueM2p(tb, mp, target_count, largest_leaf);
  }
  if (s.lattice && n > 0) {
    LatticeField field = s.lattice->field();
    constexpr int kParts = LatticeField::kPartsPerAxis * LatticeField::kPartsPerAxis * LatticeField::kPartsPerAxis;
    s.lattice_polynomials.assignAsync(field.polynomials, 4LL * kParts * field.coefficients, fs);
    s.lattice_part_centres.assignAsync(field.part_centres, kParts, fs);
    field.polynomials = s.lattice_polynomials.data();
    field.part_centres = s.lattice_part_centres.data();
    addLatticeField<<<blocksFor(static_cast<long long>(n), 128), 128, 0, fs>>>(
        tb, field, s.positions.data(), static_cast<long long>(n), s.phi.data(), s.gradient.data());
    check(cudaGetLastError(), "addLatticeField");
  }
  s.far_done.record(fs);
  // The far field to page-locked memory at the end of its stream: the bus carries it while the
  // near field may still run, and finish() only copies it out on the host's threads.
  if (n > 0) {
    check(cudaMemcpyAsync(s.phi_host.data(), s.phi.data(), n * sizeof(double), cudaMemcpyDeviceToHost, fs),
          "cudaMemcpyAsync (phi)");
    check(cudaMemcpyAsync(s.gradient_host.data(), s.gradient.data(), 3 * n * sizeof(double), cudaMemcpyDeviceToHost,
                          fs),
          "cudaMemcpyAsync (gradient)");
  }
  s.downloaded.record(fs);
  s.phi_out = phi;
  s.gradient_out = gradient;

  // The near field's lists to the host while the far field runs.
  TraversalSummary summary;
  summary.m2l = static_cast<std::int64_t>(total.m2l) + (completes_local ? s.local_counts.m2l : 0);
  summary.m2p = static_cast<std::int64_t>(total.m2p);
  summary.p2p_pairs = s.p2p_pairs;
  // Should the download throw, the guard abandons the far field queued above (nobody will call
  // finish()).
  if (p2p_to_host) summary.p2p = s.download(kP2p);
  summary.seconds = wallSeconds() - begin_seconds + (completes_local ? s.local_seconds : 0.0);
  s.local_phase = false;
  unwinding.release();
  return summary;
}

FarFieldSeconds DeviceFarField::finish() {
  State& s = *state_;
  require(s.running, "fmm::DeviceFarField::finish", "no far field was started");
  const gpu::ScopedDevice on_device(s.device);
  s.running = false;
  s.lattice = nullptr;  // an offer holds for one calculation
  s.downloaded.synchronize();
  gpu::copyFromStaging(s.phi_out.data(), s.phi_host.data(), s.phi_out.size());
  gpu::copyFromStaging(reinterpret_cast<double*>(s.gradient_out.data()), s.gradient_host.data(),
                       3 * s.gradient_out.size());
  // A split calculation's two M2L, without the wait for the LET between them.
  const double m2l = s.split ? s.local_m2l_done.secondsSince(s.far_start) + s.m2l_done.secondsSince(s.m2l_start)
                             : s.m2l_done.secondsSince(s.far_start);
  return FarFieldSeconds{m2l, s.far_done.secondsSince(s.m2l_done)};
}

bool DeviceFarField::offerLattice(const PeriodicLattice* lattice) {
  require(!state_->running, "fmm::DeviceFarField::offerLattice",
          "a far field is still running: an engine serves one calculation at a time");
  state_->lattice = lattice;
  return lattice != nullptr;
}

DeviceP2pLists DeviceFarField::deviceP2p() const {
  const State& s = *state_;
  require(s.traversed_once, "fmm::DeviceFarField::deviceP2p", "no traversal has run yet: call start() first");
  require(!s.local_phase, "fmm::DeviceFarField::deviceP2p",
          "startLocal() began a calculation that start() has not completed: its lists are not made yet");
  return s.p2pLists(s.offsets[kP2p], s.items[kP2p], s.p2p_pairs, s.target_particles, s.source_particles);
}

DeviceP2pLists DeviceFarField::deviceLocalP2p() const {
  const State& s = *state_;
  require(s.local_phase, "fmm::DeviceFarField::deviceLocalP2p",
          "no calculation begun by startLocal() is under way: call startLocal() first");
  return s.p2pLists(s.local_p2p_offsets, s.local_p2p_items, static_cast<std::int64_t>(s.local_counts.p2p),
                    s.local_particles, s.local_particles);
}

DeviceP2pLists DeviceFarField::deviceReceivedP2p() const {
  const State& s = *state_;
  require(s.split && !s.local_phase, "fmm::DeviceFarField::deviceReceivedP2p",
          "the last start() did not complete a calculation begun by startLocal(): there are no received pairs apart");
  return s.p2pLists(s.received_p2p_offsets, s.received_p2p_items,
                    s.p2p_pairs - static_cast<std::int64_t>(s.local_counts.p2p), s.target_particles,
                    s.source_particles);
}

bool DeviceFarField::completedLocalStart() const { return state_->split; }

void DeviceFarField::setM2pSourcesPerTask(int sources) {
  require(sources >= 1, "fmm::DeviceFarField::setM2pSourcesPerTask", "sources per task must be at least 1, got {}",
          sources);
  require(!state_->running && !state_->local_phase, "fmm::DeviceFarField::setM2pSourcesPerTask",
          "a far field is still running");
  state_->m2p_sources_per_task = sources;
}

int DeviceFarField::m2pSourcesPerTask() const { return state_->m2p_sources_per_task; }

InteractionLists DeviceFarField::lists() const {
  const State& s = *state_;
  require(!s.local_phase, "fmm::DeviceFarField::lists",
          "startLocal() began a calculation that start() has not completed: its lists are not made yet");
  const gpu::ScopedDevice on_device(s.device);
  return InteractionLists{s.download(kM2l), s.download(kP2p), s.download(kM2p)};
}

std::size_t DeviceFarField::deviceBytes() const {
  const State& s = *state_;
  std::size_t bytes = s.cells.bytes() + s.local_multipoles.bytes() + s.remote_multipoles.bytes() +
                      s.folded_local.bytes() + s.folded_remote.bytes() +
                      s.remote_multipole_rows.bytes() + s.locals.bytes() +
                      s.phi.bytes() + s.gradient.bytes() + s.positions.bytes() + s.frontier.bytes() + s.next.bytes() +
                      s.counts.bytes() + s.ends.bytes() + s.keys_alt.bytes() + s.cub_scratch.bytes() +
                      s.build.bytes() + s.lattice_polynomials.bytes() + s.lattice_part_centres.bytes();
  for (int list = 0; list < 3; ++list) bytes += s.keys[list].bytes() + s.offsets[list].bytes() + s.items[list].bytes();
  bytes += s.remote_m2l_offsets.bytes() + s.remote_m2l_items.bytes() + s.local_p2p_offsets.bytes() +
           s.local_p2p_items.bytes() + s.received_p2p_offsets.bytes() + s.received_p2p_items.bytes() +
           s.m2p_task_begin.bytes() + s.m2p_partial_begin.bytes() + s.m2p_tasks.bytes() + s.m2p_partials.bytes() +
           s.m2p_next_item.bytes();
  return bytes;
}

}  // namespace grove::fmm
