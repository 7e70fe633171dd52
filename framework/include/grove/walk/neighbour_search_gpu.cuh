#pragma once
/// @file
/// The short-range neighbour search of the GPU-resident pipeline (nvcc only): exact neighbour
/// lists on the device, for grove::gpu::ResidentTreeShort (force/resident_tree_short.cuh).
/// @verbatim
///   cellSearchBoxes   bottom-up, level by level: each cell's box of positions (inner) and of its
///                     particles' search boxes (outer), as the host's computeCellBoxes
///   findNeighbours    1-8 threads per i-particle walk the tree with a stack of their own; cells
///                     are culled by sphere (GATHER) or box (SCATTER) tests, and each leaf's
///                     particles are tested exactly, so the lists hold the true neighbours only
///                     (the host's lists are supersets, about 3.5x):
///                       GATHER    |x_i - x_j| < r_i
///                       SCATTER   |x_i - x_j| < r_j
///                       SYMMETRY  |x_i - x_j| < max(r_i, r_j)
///                     (i itself included). One walk writes each particle's list into fixed
///                     slots (the capacity learnt from the last search), or, where slots would
///                     not fit or overflow, two walks count and then write at scanned offsets.
///
/// Periodic axes: positions lie in [low, low + L) (the caller wraps them) and every search radius
/// is below L/2, so a pair meets through at most one image, the nearest. Cells are tested against
/// the three images of the target on each periodic axis; particles through the nearest image.
/// The separation uses round-to-nearest products and sums without contraction (__dmul_rn,
/// __dadd_rn), so a host brute force with plain double arithmetic draws the same line.
/// @endverbatim
#include <cuda_runtime.h>

#include <cstdint>

#include "grove/core/box.hpp"
#include "grove/core/execution.hpp"
#include "grove/tree/tree_build_gpu.cuh"
#include "grove/core/particle_traits.hpp"
#include "grove/tree/tree_cells.hpp"
#include "grove/walk/short_range_search.hpp"

namespace grove::gpu {

/// The period of each axis (0: open), as the device search and the short-range LET read it.
struct Periods {
  double length[3] = {0.0, 0.0, 0.0};  ///< period of x, y and z (0: open; > 0: periodic)
  /// Whether any axis is periodic.
  GROVE_HOST_DEVICE bool any() const { return length[0] > 0.0 || length[1] > 0.0 || length[2] > 0.0; }
};

/// A cell's two boxes, as the device tests and the kernels read them (computeCellSearchBoxes).
struct alignas(16) DeviceCellBoxes {
  /// Low corner of the box of the cell's particles' positions (empty: low > high).
  double inner_low[3], inner_high[3];  ///< High corner of the box of the cell's particles' positions.
  /// Low corner of the box of their positions +- search radius (plus skin); empty for GATHER.
  double outer_low[3], outer_high[3];  ///< High corner of the box of their positions +- search radius (plus skin).
  /// The largest search radius (plus skin) of the cell's particles; 0 for GATHER. A particle
  /// within its radius of x lies in the sphere of this radius about the inner box, a tighter test
  /// than the outer box alone where the radii are alike (the sphere's corners).
  double radius_max = 0.0;
  /// The inner box (positions) as a Boxd.
  GROVE_HOST_DEVICE Boxd inner() const {
    return {{inner_low[0], inner_low[1], inner_low[2]}, {inner_high[0], inner_high[1], inner_high[2]}};
  }
  /// The outer box (search boxes) as a Boxd.
  GROVE_HOST_DEVICE Boxd outer() const {
    return {{outer_low[0], outer_low[1], outer_low[2]}, {outer_high[0], outer_high[1], outer_high[2]}};
  }
};

/// Device helpers of the neighbour search: separations through periodic images, box tests,
/// search radii, and the functors of its CUB reductions (device code, used by the resident trees).
namespace search {

/// x_j - x_i on one axis, through the nearest image on a periodic one (period > 0; 0: open);
/// *shift receives what was added to x_j (a whole number of periods: one at most for two
/// positions in the box, more for a kept image whose particle was wrapped by its owner since).
/// The sum rounds to nearest without contraction (__dadd_rn).
__device__ inline double separation(double xi, double xj, double period, double* shift) {
  double d = __dadd_rn(xj, -xi);
  *shift = 0.0;
  if (period > 0.0 && ::fabs(d) > 0.5 * period) {  // rare: only then the division
    const double periods = ::rint(d / period);
    if (periods != 0.0) {
      *shift = -periods * period;
      d = __dadd_rn(d, *shift);
    }
  }
  return d;
}

/// A pair's squared separation through the nearest image, and the shift that gives that image.
struct Separation {
  double r2;    ///< |x_j + shift - x_i|^2, rounded to nearest without contraction
  Vec3d shift;  ///< added to x_j: its image nearest x_i (0 on open axes)
};
/// The separation of x_j from x_i through the nearest image on each periodic axis (separation()
/// per axis), with round-to-nearest products and sums, so a host brute force with plain double
/// arithmetic gets the same r2.
__device__ inline Separation separationOf(const Vec3d& xi, const Vec3d& xj, const Periods& periods) {
  Separation s;
  const double dx = separation(xi.x, xj.x, periods.length[0], &s.shift.x);
  const double dy = separation(xi.y, xj.y, periods.length[1], &s.shift.y);
  const double dz = separation(xi.z, xj.z, periods.length[2], &s.shift.z);
  s.r2 = __dadd_rn(__dadd_rn(__dmul_rn(dx, dx), __dmul_rn(dy, dy)), __dmul_rn(dz, dz));
  return s;
}

/// Whether [lo, hi] meets [a, b] (closed intervals) on an axis of the given period (0: open),
/// directly or through the images one period either way. A slack of 1e-12 of the magnitudes
/// involved, so that the rounding of a shifted box never drops a cell that holds a particle the
/// pair test (which shifts the difference, not the box) keeps.
__device__ inline bool intervalsMeet(double lo, double hi, double a, double b, double period) {
  const double slack = 1e-12 * (::fabs(lo) + ::fabs(hi) + ::fabs(a) + ::fabs(b) + period);
  lo -= slack, hi += slack;
  if (lo <= b && a <= hi) return true;
  if (period <= 0.0) return false;
  return (lo + period <= b && a <= hi + period) || (lo - period <= b && a <= hi - period);
}

/// Whether the box [lo, hi] meets the box [a, b] on all three axes (intervalsMeet() per axis,
/// through periodic images on the periodic axes of p).
__device__ inline bool boxesMeet(const double (&lo)[3], const double (&hi)[3], const Vec3d& a, const Vec3d& b,
                                 const Periods& p) {
  return intervalsMeet(lo[0], hi[0], a.x, b.x, p.length[0]) && intervalsMeet(lo[1], hi[1], a.y, b.y, p.length[1]) &&
         intervalsMeet(lo[2], hi[2], a.z, b.z, p.length[2]);
}

/// The gap from x to the interval [lo, hi] on one axis (0 inside it); no periodic images.
__device__ inline double axisGap(double x, double lo, double hi) {
  return x < lo ? lo - x : (x > hi ? x - hi : 0.0);
}
/// The squared distance from x to the box [lo, hi] (0 inside it), through the nearest image on
/// the periodic axes of p.
__device__ inline double distanceSqToBox(const Vec3d& x, const double (&lo)[3], const double (&hi)[3],
                                         const Periods& p) {
  const double xs[3] = {x.x, x.y, x.z};
  double d2 = 0.0;
  for (int a = 0; a < 3; ++a) {
    double g = axisGap(xs[a], lo[a], hi[a]);
    if (p.length[a] > 0.0 && g > 0.0)
      g = ::fmin(g, ::fmin(axisGap(xs[a] + p.length[a], lo[a], hi[a]), axisGap(xs[a] - p.length[a], lo[a], hi[a])));
    d2 += g * g;
  }
  return d2;
}

/// The radius that decides a pair, by mode: r_i (GATHER), r_j (SCATTER), max(r_i, r_j) (SYMMETRY).
template <SearchMode M>
__device__ inline double pairRadius(double r_i, double r_j) {
  if constexpr (M == SearchMode::GATHER) return r_i;
  else if constexpr (M == SearchMode::SCATTER) return r_j;
  else return r_i > r_j ? r_i : r_j;
}

/// p.getRSearch() as a double, or 0 for a type without getRSearch (HasRSearch).
template <class P>
__device__ inline double radiusOf(const P& p) {
  if constexpr (HasRSearch<P>) return static_cast<double>(p.getRSearch());
  else return 0.0;
}

/// A particle's search box, widened by a skin (the map of a CUB reduce of their union).
struct SearchBoxOf {
  double skin = 0.0;  ///< added to every search radius (0: none)
  /// The box positionOf(p) -/+ (radiusOf(p) + skin) on each axis.
  template <class P>
  __device__ Boxd operator()(const P& p) const {
    const Vec3d x = positionOf(p);
    const double r = radiusOf(p) + skin;
    return {x - Vec3d(r), x + Vec3d(r)};
  }
};

/// Lists kept over steps with a skin (Verlet lists): what a particle was at the search
/// (written by the recordForSkin kernel), for DriftSince to measure how far it has gone since.
struct SkinRecord {
  Vec3d x;         ///< the EPJ's position at the search
  /// The EPI's search radius at the search (0 without getRSearch).
  double r_i, r_j;  ///< The EPJ's search radius at the search (0 without getRSearch).
};
/// How far particles have gone since their SkinRecord: the largest displacement and the largest
/// growth of a search radius (both >= 0).
struct SkinDrift {
  /// The largest |x - x_recorded| (through the nearest image).
  double displacement = 0.0, growth = 0.0;  ///< The largest growth of a search radius.
};
/// Combines two SkinDrifts by taking the larger of each field (a CUB reduce's operator).
struct MaxDrift {
  /// {max of the displacements, max of the growths}.
  __device__ SkinDrift operator()(const SkinDrift& a, const SkinDrift& b) const {
    return {::fmax(a.displacement, b.displacement), ::fmax(a.growth, b.growth)};
  }
};
/// The drift of particle k since its SkinRecord (the map of a CUB reduce over k with MaxDrift).
/// The pointers are device arrays of the same length, indexed alike.
template <class EPI, class EPJ>
struct DriftSince {
  const EPI* epi;            ///< the i-particles now
  const EPJ* epj;            ///< the j-particles now
  const SkinRecord* record;  ///< what they were at the search
  Periods periods;           ///< the axes' periods (displacements through the nearest image)
  /// k's displacement (through the nearest image) and the larger growth of its two radii (EPI's
  /// and EPJ's; 0 if neither grew).
  __device__ SkinDrift operator()(int k) const {
    const SkinRecord r = record[k];
    const double d2 = separationOf(r.x, positionOf(epj[k]), periods).r2;
    return {::sqrt(d2), ::fmax(0.0, ::fmax(radiusOf(epi[k]) - r.r_i, radiusOf(epj[k]) - r.r_j))};
  }
};

/// The map of a CUB reduce for the largest search radius: radiusOf(p).
struct RadiusOf {
  /// radiusOf(p).
  template <class P>
  __device__ double operator()(const P& p) const {
    return radiusOf(p);
  }
};
/// The larger of two values (a CUB reduce's operator).
struct Max {
  /// a if a > b, else b.
  template <class T>
  __device__ T operator()(T a, T b) const {
    return a > b ? a : b;
  }
};
/// The sum of two 64-bit counts (a CUB reduce's operator).
struct Sum {
  /// a + b.
  __device__ std::int64_t operator()(std::int64_t a, std::int64_t b) const { return a + b; }
};
/// Widens an int count to 64 bits (the map of a CUB reduce with Sum).
struct Widen {
  /// c as std::int64_t.
  __device__ std::int64_t operator()(int c) const { return c; }
};

}  // namespace search

namespace kernel {

template <class EPI, class EPJ>
__global__ void recordForSkin(const EPI* __restrict__ epi, const EPJ* __restrict__ epj, std::size_t n,
                              search::SkinRecord* __restrict__ out) {
  const std::size_t k = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (k < n) out[k] = {positionOf(epj[k]), search::radiusOf(epi[k]), search::radiusOf(epj[k])};
}

// One level of cells' boxes from their particles (leaves) or children (the deeper level, done).
// The outer box is of the search radius that culls cells: EPJ's plus the skin (SCATTER,
// SYMMETRY), or none.
template <SearchMode M, class EPJ>
__global__ void cellSearchBoxes(const TreeCell* __restrict__ cells, std::uint32_t begin, std::uint32_t n,
                                const EPJ* __restrict__ epj, double skin, DeviceCellBoxes* boxes) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const std::uint32_t c = begin + i;
  const TreeCell cell = cells[c];
  Boxd inner = Boxd::empty(), outer = Boxd::empty();
  double radius_max = 0.0;
  if (cell.isLeaf()) {
    for (std::uint32_t k = cell.ep_first; k < cell.ep_first + cell.ep_count; ++k) {
      const Vec3d x = positionOf(epj[k]);
      inner.merge(x);
      if constexpr (M != SearchMode::GATHER) {
        const double r = search::radiusOf(epj[k]) + skin;
        outer.merge(Boxd{x - Vec3d(r), x + Vec3d(r)});
        radius_max = ::fmax(radius_max, r);
      }
    }
  } else {
    for (int k = 0; k < cell.child_count; ++k) {
      const DeviceCellBoxes& b = boxes[cell.child_first + k];
      inner.merge(b.inner());
      outer.merge(b.outer());
      radius_max = ::fmax(radius_max, b.radius_max);
    }
  }
  boxes[c] = {{inner.low.x, inner.low.y, inner.low.z}, {inner.high.x, inner.high.y, inner.high.z},
              {outer.low.x, outer.low.y, outer.low.z}, {outer.high.x, outer.high.y, outer.high.z}, radius_max};
}

// Every stack fits: a walk holds at most 7 siblings per level plus the children in hand.
constexpr int kNeighbourStack = 8 * 22;
constexpr int kSearchThreads = 128;

// kLanes threads per i-particle (1, 2, 4 or 8 neighbouring lanes of a warp; consecutive
// particles in Morton order, so a warp's walks run close together) walk the tree together: the
// same stack in every lane, a cell's children tested kLanes at a time, a leaf's particles split
// among the lanes and their hits written in tree order (a ballot and a prefix count). More lanes
// per particle keep the GPU busy when particles are few; one lane is fastest when they are many.
// GATHER tests a cell by the distance from x_i to its box of positions against r_i (a sphere,
// not its bounding box: about half the candidates of a box test), with a slack of 1e-12 of the
// coordinates' magnitude so that rounding never drops a cell that holds a neighbour; SCATTER asks whether x_i lies
// in the cell's box of search boxes and within the cell's largest radius of its box of positions
// (a sphere again: where radii are alike, about half the candidates of the box alone); SYMMETRY
// takes either. Leaf particles are tested exactly.
// Writes counts[i] (all of i's neighbours) and up to `capacity` of their EPJ indices, in tree
// order, from list + base: base = i * stride (stride > 0: fixed slots; first[i] is set to it),
// else first[i] (offsets from a counting pass). With list null it only counts. A skin > 0 widens
// every pair's radius by it (lists kept over steps: Verlet lists).
template <int kLanes, SearchMode M, class EPI, class EPJ>
__global__ void __launch_bounds__(kSearchThreads)
    findNeighbours(const TreeCell* __restrict__ cells, const DeviceCellBoxes* __restrict__ boxes,
                   const EPI* __restrict__ epi, std::uint32_t n_i, const EPJ* __restrict__ epj, Periods periods,
                   int* __restrict__ counts, std::int64_t* __restrict__ first, int* __restrict__ list,
                   std::int64_t stride, int capacity, double skin) {
  static_assert(kLanes == 1 || kLanes == 2 || kLanes == 4 || kLanes == 8, "1, 2, 4 or 8 lanes per particle");
  const std::size_t t = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t / kLanes >= n_i) return;  // the particle's lanes together
  const auto i = static_cast<std::uint32_t>(t / kLanes);
  const unsigned sub = t % kLanes;
  const unsigned shift = threadIdx.x % 32 / kLanes * kLanes;
  const unsigned group = (kLanes == 32 ? 0xffffffffu : ((1u << kLanes) - 1u)) << shift;
  const unsigned below = (1u << sub) - 1u;  // lanes of my group before me

  const EPI pi = epi[i];
  const Vec3d xi = positionOf(pi);
  const double ri = M == SearchMode::SCATTER ? 0.0 : search::radiusOf(pi);
  // Slack for the rounding of shifted boxes, which scales with the coordinates, not with r.
  const double slack = 1e-12 * (::fabs(xi.x) + ::fabs(xi.y) + ::fabs(xi.z) + periods.length[0] + periods.length[1] +
                                periods.length[2] + ri + skin);
  const double reach2 = (ri + skin + slack) * (ri + skin + slack);
  const auto needed = [&](int c) {
    const DeviceCellBoxes& b = boxes[c];
    const double d2 = search::distanceSqToBox(xi, b.inner_low, b.inner_high, periods);
    bool need = false;
    if constexpr (M != SearchMode::SCATTER) need = d2 <= reach2;
    if constexpr (M != SearchMode::GATHER) {
      const double r = b.radius_max * (1.0 + 1e-12) + slack;
      need = need || (d2 <= r * r && search::boxesMeet(b.outer_low, b.outer_high, xi, xi, periods));
    }
    return need;
  };
  std::int64_t base = 0;
  if (stride > 0) {
    base = static_cast<std::int64_t>(i) * stride;
    if (sub == 0) first[i] = base;
  } else if (list) {
    base = first[i];
  }
  int* out = list ? list + base : nullptr;
  int found = 0;
  int stack[kNeighbourStack];
  int top = 0;
  if (needed(0)) stack[top++] = 0;
  while (top > 0) {
    const int c = stack[--top];
    const TreeCell cell = cells[c];
    if (cell.isLeaf()) {
      const std::uint32_t end = cell.ep_first + cell.ep_count;
      for (std::uint32_t j0 = cell.ep_first; j0 < end; j0 += kLanes) {
        const std::uint32_t j = j0 + sub;
        bool hit = false;
        if (j < end) {
          const EPJ pj = epj[j];
          const double r = search::pairRadius<M>(ri, M == SearchMode::GATHER ? 0.0 : search::radiusOf(pj)) + skin;
          hit = search::separationOf(xi, positionOf(pj), periods).r2 < r * r;
        }
        const unsigned hits = kLanes == 1 ? unsigned{hit} : __ballot_sync(group, hit) >> shift;
        const int k = found + __popc(hits & below);
        if (hit && out && k < capacity) out[k] = static_cast<int>(j);
        found += __popc(hits);
      }
    } else {
      unsigned taken = 0;  // bit k: child k is needed
      for (int k0 = 0; k0 < cell.child_count; k0 += kLanes) {
        const int k = k0 + static_cast<int>(sub);
        const bool take = k < cell.child_count && needed(cell.child_first + k);
        const unsigned takes = kLanes == 1 ? unsigned{take} : __ballot_sync(group, take) >> shift;
        taken |= takes << k0;
      }
      for (int k = cell.child_count - 1; k >= 0; --k)  // the first child on top
        if (taken >> k & 1u) stack[top++] = cell.child_first + k;
    }
  }
  if (sub == 0) counts[i] = found;
}

}  // namespace kernel

/// Every cell's search boxes (DeviceCellBoxes) over a tree's EPJs (device array, key order),
/// deepest level first, one kernel per level queued on policy.stream (not waited for). Both
/// resident trees use them: the short-range search (M its mode) and the long-range trees with a
/// search (SCATTER: the outer boxes are what their walks test). The outer box of a cell is its
/// particles' positions +- (EPJ::getRSearch + skin) for SCATTER and SYMMETRY, empty for GATHER.
/// Resizes boxes to shape.size(). Throws grove::Error when a launch fails.
template <SearchMode M, class EPJ>
void computeCellSearchBoxes(Gpu policy, const DeviceTreeShape& shape, const EPJ* epj, double skin,
                            DeviceVector<DeviceCellBoxes>& boxes) {
  boxes.resize(shape.size());
  for (int level = shape.levels() - 1; level >= 0; --level) {
    const std::uint32_t begin = shape.level_begin[static_cast<std::size_t>(level)];
    const std::uint32_t n = shape.level_begin[static_cast<std::size_t>(level) + 1] - begin;
    if (n == 0) continue;
    kernel::cellSearchBoxes<M, EPJ>
        <<<blocksFor(n, 128), 128, 0, policy.stream>>>(shape.cells.data(), begin, n, epj, skin, boxes.data());
    check(cudaGetLastError(), "cellSearchBoxes kernel launch");
  }
}

}  // namespace grove::gpu
