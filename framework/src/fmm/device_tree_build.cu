// The FMM's tree built on a CUDA device (device_tree_build.cuh): keys and their stable sort as every
// grove tree takes them (grove/tree/key_order_gpu.cuh), the FMM's breadth-first split, then the
// centres, radii and multipoles from the deepest generation up. Each stage computes what
// FmmTree::build computes, in the same order of operations (no fused multiply-add: __dmul_rn and
// __dadd_rn), so the tree is the host's bit for bit and the traversal's lists are the host's.
#include "device_tree_build.cuh"

#include <algorithm>
#include <vector>

#include "grove/core/error.hpp"
#include "grove/tree/key_order.hpp"

namespace grove::fmm::detail {

namespace {



constexpr int kThreads = 256;   // a block per cell in the moments' kernel; wideCellRadii's blocks too
constexpr int kTile = 16;       // particles whose powers the block holds at once (P2M)
constexpr int kMaxChildren = 8;
// A generation of at most this many cells has its radii found by blocks of kRadiusChunk particles
// (wideCellRadii): the tree's top generations hold many particles a cell, and a block per cell
// scanned a whole cell alone (the root's block read every particle on one multiprocessor). A deep
// generation of few small cells (a chain of splits around a cluster) also qualifies; it then
// launches ceil(n / kRadiusChunk) blocks a cell that mostly end at once (not measured apart).
constexpr int kWideGenerationCells = 64;
constexpr int kRadiusChunk = 4096;
static_assert(kMaxCoefficients <= kThreads, "one thread per multipole coefficient");

__device__ double mul(double a, double b) { return __dmul_rn(a, b); }
__device__ double add(double a, double b) { return __dadd_rn(a, b); }

// Per cell of a generation: its children's particle bounds, as FmmTree::splitCells cuts them (the
// runs of equal octant digit at the first level where the cell's keys differ), or none for a leaf.
// counts[count] is set to 0 for the exclusive sum that places the children.
__global__ void countChildren(const FmmCell* __restrict__ cells, int first, int count,
                              const MortonKey* __restrict__ keys, int n_leaf, int* __restrict__ counts,
                              int* __restrict__ bounds) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i == count) counts[count] = 0;
  if (i >= count) return;
  counts[i] = 0;
  const FmmCell& cell = cells[first + i];
  if (cell.end - cell.begin <= n_leaf) return;
  const MortonKey low = keys[cell.begin], high = keys[cell.end - 1];
  if (low == high) return;  // coincident particles (to key resolution): cannot split
  const int bit = 63 - __clzll(static_cast<long long>(low ^ high));
  const int shift = bit - bit % 3;
  int* out = bounds + static_cast<long long>(i) * (kMaxChildren + 1);
  int m = 0;
  out[m++] = cell.begin;
  const MortonKey prefix = low >> (shift + 3);
  for (MortonKey digit = ((low >> shift) & 7u) + 1; digit <= ((high >> shift) & 7u); ++digit) {
    const MortonKey bound = ((prefix << 3) | digit) << shift;
    int lo = cell.begin, hi = cell.end;  // the first key >= bound (std::lower_bound)
    while (lo < hi) {
      const int mid = lo + (hi - lo) / 2;
      if (keys[mid] < bound) lo = mid + 1;
      else hi = mid;
    }
    if (lo > out[m - 1]) out[m++] = lo;
  }
  out[m++] = cell.end;
  counts[i] = m - 1;
}

// The children of a generation's cells, placed by the exclusive sum of their counts after the
// cells made so far (next_first), in the cells' order: the host's generation, cell for cell.
__global__ void writeChildren(FmmCell* __restrict__ cells, int first, int count, int next_first,
                              const int* __restrict__ offsets, const int* __restrict__ bounds) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i >= count) return;
  const int children = offsets[i + 1] - offsets[i];
  if (children == 0) return;
  const int parent = first + i, child0 = next_first + offsets[i];
  cells[parent].first_child = child0;
  cells[parent].child_count = children;
  const int* b = bounds + static_cast<long long>(i) * (kMaxChildren + 1);
  for (int j = 0; j < children; ++j) {
    FmmCell& child = cells[child0 + j];
    child.center = Vec3d(0.0);
    child.radius = 0.0;
    child.charge = 0.0;
    child.begin = b[j];
    child.end = b[j + 1];
    child.first_child = -1;
    child.child_count = 0;
    child.parent = parent;
    child.multipole_only = 0;
  }
}

// The powers x_p^k of m (<= kTile) vectors x_p, a degree at a time across the block, each as
// MultiIndexSet::powers forms it (x^k = x^(k - e_a) x_a). Every thread of the block calls it.
__device__ void tilePowers(const Tables& tb, const double (*x)[3], int m, double (*pw)[kMaxCoefficients]) {
  for (int p = threadIdx.x; p < m; p += blockDim.x) pw[p][0] = 1.0;
  __syncthreads();
  for (int d = 1; d <= tb.order; ++d) {
    const int lo = tb.degree_begin[d], width = tb.degree_begin[d + 1] - lo;
    for (int item = threadIdx.x; item < m * width; item += blockDim.x) {
      const int p = item / width, i = lo + item % width;
      const int axis = tb.power_axis[i];
      pw[p][i] = mul(pw[p][tb.lower[6 * i + axis]], x[p][axis]);
    }
    __syncthreads();
  }
}

// The squared distance from z to x, as FmmTree::computeMoments forms it (norm2 of the difference).
__device__ double distance2(const Vec3d& x, const Vec3d& z) {
  const double dx = x.x - z.x, dy = x.y - z.y, dz = x.z - z.z;
  return add(add(mul(dx, dx), mul(dy, dy)), mul(dz, dz));
}

// The radii of a wide generation's cells (cellMoments with radius_here false left them), after
// their centres: block (x, y) takes the x-th chunk of kRadiusChunk particles of the generation's
// y-th cell, and folds its largest squared distance into r2_bits[y] (a maximum, so any order
// gives the host's; a non-negative double's bits order as the double does).
__global__ void __launch_bounds__(kThreads)
    wideCellRadii(const FmmCell* __restrict__ cells, int first, const Vec3d* __restrict__ pos,
                  unsigned long long* __restrict__ r2_bits) {
  __shared__ double warp_r2[kThreads / 32];
  const FmmCell& cell = cells[first + static_cast<int>(blockIdx.y)];
  const long long begin = cell.begin + static_cast<long long>(blockIdx.x) * kRadiusChunk;
  if (begin >= cell.end) return;  // the whole block
  const long long end = ::min(static_cast<long long>(cell.end), begin + kRadiusChunk);
  const Vec3d z = cell.center;
  double r2 = 0.0;
  for (long long k = begin + threadIdx.x; k < end; k += blockDim.x) r2 = fmax(r2, distance2(pos[k], z));
  for (int offset = 16; offset > 0; offset /= 2) r2 = fmax(r2, __shfl_xor_sync(0xffffffffu, r2, offset));
  if (threadIdx.x % 32 == 0) warp_r2[threadIdx.x / 32] = r2;
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int w = 1; w < kThreads / 32; ++w) r2 = fmax(r2, warp_r2[w]);
    atomicMax(r2_bits + blockIdx.y, static_cast<unsigned long long>(__double_as_longlong(r2)));
  }
}

// A wide generation's radii from wideCellRadii's maxima.
__global__ void setWideCellRadii(FmmCell* __restrict__ cells, int first, int count,
                                 const unsigned long long* __restrict__ r2_bits) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < count) cells[first + i].radius = sqrt(__longlong_as_double(static_cast<long long>(r2_bits[i])));
}

// One generation's cells, a block each (their children done before): sums and centre, radius
// (unless radius_here is false: a wide generation's, wideCellRadii's), and the multipole (P2M
// over a leaf's particles in order, M2M over the children in order), as
// FmmTree::computeMoments.
__global__ void __launch_bounds__(kThreads)
    cellMoments(Tables tb, FmmCell* __restrict__ cells, int first, CellSums* __restrict__ sums,
                const Vec3d* __restrict__ pos, const double* __restrict__ charge, double* __restrict__ multipoles,
                int stride, bool radius_here) {
  __shared__ double pw[kTile][kMaxCoefficients];
  __shared__ double x[kTile][3];
  __shared__ double centre[3];
  __shared__ double warp_r2[kThreads / 32];
  const int c = first + static_cast<int>(blockIdx.x);
  const FmmCell cell = cells[c];
  const bool leaf = cell.child_count == 0;
  if (threadIdx.x == 0) {
    CellSums s{0.0, 0.0, Vec3d(0.0), Vec3d(0.0)};
    if (leaf) {
      for (int k = cell.begin; k < cell.end; ++k) {
        const double q = charge[k], aq = fabs(q);
        const Vec3d y = pos[k];
        s.charge = add(s.charge, q);
        s.weight = add(s.weight, aq);
        s.weighted = Vec3d(add(s.weighted.x, mul(aq, y.x)), add(s.weighted.y, mul(aq, y.y)),
                           add(s.weighted.z, mul(aq, y.z)));
        s.position = Vec3d(add(s.position.x, y.x), add(s.position.y, y.y), add(s.position.z, y.z));
      }
    } else {
      for (int child = cell.first_child; child < cell.first_child + cell.child_count; ++child) {
        const CellSums part = sums[child];
        s.charge = add(s.charge, part.charge);
        s.weight = add(s.weight, part.weight);
        s.weighted = Vec3d(add(s.weighted.x, part.weighted.x), add(s.weighted.y, part.weighted.y),
                           add(s.weighted.z, part.weighted.z));
        s.position = Vec3d(add(s.position.x, part.position.x), add(s.position.y, part.position.y),
                           add(s.position.z, part.position.z));
      }
    }
    sums[c] = s;
    const bool weighted = s.weight > 0.0;
    const double scale = weighted ? 1.0 / s.weight : 1.0 / static_cast<double>(::max(cell.end - cell.begin, 1));
    const Vec3d& sum = weighted ? s.weighted : s.position;
    centre[0] = mul(scale, sum.x);
    centre[1] = mul(scale, sum.y);
    centre[2] = mul(scale, sum.z);
    cells[c].charge = s.charge;
    cells[c].center = Vec3d(centre[0], centre[1], centre[2]);
  }
  __syncthreads();
  const Vec3d z(centre[0], centre[1], centre[2]);

  // The radius: the largest distance to a particle (a maximum: any order gives the host's).
  if (radius_here) {
    double r2 = 0.0;
    for (int k = cell.begin + static_cast<int>(threadIdx.x); k < cell.end; k += blockDim.x)
      r2 = fmax(r2, distance2(pos[k], z));
    for (int offset = 16; offset > 0; offset /= 2) r2 = fmax(r2, __shfl_xor_sync(0xffffffffu, r2, offset));
    if (threadIdx.x % 32 == 0) warp_r2[threadIdx.x / 32] = r2;
    __syncthreads();
    if (threadIdx.x == 0) {
      for (int w = 1; w < kThreads / 32; ++w) r2 = fmax(r2, warp_r2[w]);
      cells[c].radius = sqrt(r2);
    }
  }

  // The multipole: a thread per coefficient, adding in the host's order.
  const int n = threadIdx.x;
  double m = 0.0;
  if (leaf) {
    for (int base = cell.begin; base < cell.end; base += kTile) {
      const int count = ::min(kTile, cell.end - base);
      __syncthreads();  // the last tile's powers are read
      for (int p = threadIdx.x; p < count; p += blockDim.x) {
        x[p][0] = z.x - pos[base + p].x;
        x[p][1] = z.y - pos[base + p].y;
        x[p][2] = z.z - pos[base + p].z;
      }
      tilePowers(tb, x, count, pw);
      if (n < tb.rows)
        for (int p = 0; p < count; ++p) m = add(m, mul(charge[base + p], pw[p][n]));
    }
  } else {
    for (int child = cell.first_child; child < cell.first_child + cell.child_count; ++child) {
      __syncthreads();  // the last child's powers are read
      if (threadIdx.x == 0) {
        const Vec3d zc = cells[child].center;
        x[0][0] = z.x - zc.x;
        x[0][1] = z.y - zc.y;
        x[0][2] = z.z - zc.z;
      }
      tilePowers(tb, x, 1, pw);
      if (n < tb.rows) {
        const double* mc = multipoles + static_cast<long long>(child) * stride;
        for (int t = tb.m2m_begin[n]; t < tb.m2m_begin[n + 1]; ++t) {
          const ushort2 f = tb.m2m_factors[t];
          m = add(m, mul(mul(tb.m2m_weight[t], mc[f.x]), pw[0][f.y]));
        }
      }
    }
  }
  if (n < tb.rows) multipoles[static_cast<long long>(c) * stride + n] = m;
}

}  // namespace

void buildTreeOnDevice(DeviceTreeBuild& build, const DeviceTables& tables, cudaStream_t stream,
                       std::span<const Vec3d> positions, std::span<const double> charges, int n_leaf,
                       const MultiIndexSet& expansion, FmmTree& tree, FmmTree::Built& built,
                       DeviceVector<Vec3d>& key_positions, DeviceVector<double>& multipoles) {
  constexpr const char* kWhere = "fmm::DeviceFarField::buildTree";
  requireTreeArguments(positions, charges, n_leaf, kWhere);
  require(tables.order == expansion.order(), kWhere, "tables of order {} for an expansion of order {}",
          tables.order, expansion.order());
  const std::size_t n = positions.size();
  const Gpu policy{stream};
  built.bounds = boundingBox(Cpu{}, positions);

  // Keys and their stable sort, then positions and charges in key order.
  // Through page-locked staging, slice by slice: the bus carries one slice while the threads copy the next.
  build.positions.resize(n);
  build.charges_in.resize(n);
  build.positions_staging.reserve(n);
  build.charges_staging.reserve(n);
  gpu::convertAndCopyInSlices(build.positions.data(), build.positions_staging.data(), positions.data(), n,
                              [](const Vec3d& x) { return x; }, stream);
  gpu::convertAndCopyInSlices(build.charges_in.data(), build.charges_staging.data(), charges.data(), n,
                              [](double q) { return q; }, stream);
  gpu::sortIntoKeyOrder(policy, FmmTree::keyRoot(built.bounds, n), build.positions.data(), n, build.order,
                        build.cub);
  key_positions.resize(n);
  build.charges.resize(n);
  if (n > 0) {
    gpu::kernel::gatherSelected<<<gpu::blocksFor(n, 256), 256, 0, stream>>>(
        build.positions.data(), build.order.index.data(), n, key_positions.data());
    gpu::kernel::gatherSelected<<<gpu::blocksFor(n, 256), 256, 0, stream>>>(
        build.charges_in.data(), build.order.index.data(), n, build.charges.data());
    check(cudaGetLastError(), "gatherSelected (FMM tree)");
  }
  // The order now: the host gathers its key-ordered copies while the device computes the moments.
  built.order.resize(n);
  static_assert(sizeof(int) == sizeof(std::uint32_t));
  build.order.index.copyTo(reinterpret_cast<std::uint32_t*>(built.order.data()), stream);  // waits

  // The split, a generation at a time (each waits for its children's count).
  FmmCell root;
  root.end = static_cast<int>(n);
  build.cells.assignAsync(&root, 1, stream);
  built.generation_begin.assign(1, 0);
  int gen_begin = 0, gen_end = 1;
  while (gen_begin < gen_end) {
    const int count = gen_end - gen_begin;
    build.child_counts.resize(static_cast<std::size_t>(count) + 1);
    build.bounds.resize(static_cast<std::size_t>(count) * (kMaxChildren + 1));
    countChildren<<<gpu::blocksFor(static_cast<std::size_t>(count) + 1, 128), 128, 0, stream>>>(
        build.cells.data(), gen_begin, count, build.order.keys.data(), n_leaf, build.child_counts.data(),
        build.bounds.data());
    check(cudaGetLastError(), "countChildren (FMM tree)");
    gpu::exclusiveSum(build.cub, build.child_counts.data(), build.child_counts.data(), count + 1LL, stream,
                      "cub::DeviceScan::ExclusiveSum (FMM tree children)");
    const int children = build.child_counts.elementToHost(static_cast<std::size_t>(count), stream);  // waits
    if (children > 0) {
      build.cells.resizeKeep(static_cast<std::size_t>(gen_end) + static_cast<std::size_t>(children), stream);
      writeChildren<<<gpu::blocksFor(static_cast<std::size_t>(count), 128), 128, 0, stream>>>(
          build.cells.data(), gen_begin, count, gen_end, build.child_counts.data(), build.bounds.data());
      check(cudaGetLastError(), "writeChildren (FMM tree)");
    }
    built.generation_begin.push_back(gen_end);
    gen_begin = gen_end;
    gen_end += children;
  }

  // Centres, radii and multipoles, from the deepest generation up.
  const std::size_t cell_count = build.cells.size();
  const auto stride = static_cast<std::size_t>(expansion.size());
  build.sums.resize(cell_count);
  multipoles.resize(cell_count * stride);
  const Tables tb = tables.view();
  // The wide generations' radii: a maximum per cell, in one array for all of them.
  build.wide_r2.resize(static_cast<std::size_t>(kWideGenerationCells));
  for (std::size_t g = built.generation_begin.size() - 1; g-- > 0;) {
    const int first = built.generation_begin[g], cells = built.generation_begin[g + 1] - first;
    const bool wide = cells <= kWideGenerationCells;
    cellMoments<<<static_cast<unsigned>(cells), kThreads, 0, stream>>>(tb, build.cells.data(), first,
                                                                       build.sums.data(), key_positions.data(),
                                                                       build.charges.data(), multipoles.data(),
                                                                       static_cast<int>(stride), !wide);
    check(cudaGetLastError(), "cellMoments (FMM tree)");
    if (wide && cells > 0) {
      check(cudaMemsetAsync(build.wide_r2.data(), 0, static_cast<std::size_t>(cells) * sizeof(unsigned long long),
                            stream),
            "cudaMemsetAsync (FMM tree radii)");
      // Chunks enough for the largest cell (every cell of the generation is within the particles).
      const dim3 grid(std::max(gpu::blocksFor(n, kRadiusChunk), 1u), static_cast<unsigned>(cells));
      wideCellRadii<<<grid, kThreads, 0, stream>>>(build.cells.data(), first, key_positions.data(),
                                                   build.wide_r2.data());
      setWideCellRadii<<<gpu::blocksFor(static_cast<std::size_t>(cells), 128), 128, 0, stream>>>(
          build.cells.data(), first, cells, build.wide_r2.data());
      check(cudaGetLastError(), "wideCellRadii, setWideCellRadii (FMM tree)");
    }
  }

  // Meanwhile on the host: the positions and charges in key order (adopt() checks the order and
  // gathers them itself if an entry was out of range).
  built.key_gathered =
      FmmTree::gatherInKeyOrder(built.order, positions, charges, built.key_positions, built.key_charges);

  // What the host keeps: the cells, the multipoles (the LET sends them) and the order.
  built.cells.resize(cell_count);
  build.cells.copyTo(built.cells.data(), stream);
  built.multipoles.resize(multipoles.size());
  gpu::downloadThroughStaging(built.multipoles.data(), multipoles.data(), multipoles.size(), build.multipoles_staging,
                              stream);
  built.stride = stride;
  tree.adopt(positions, charges, built);
}

}  // namespace grove::fmm::detail
