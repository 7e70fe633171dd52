#pragma once
/// @file
/// Domain decomposition from device-resident particles (nvcc only), two ways:
///
/// - Samples (decomposeDomainAll): drawn as the host's DomainInfo draws them (the same
///   stratified indices), gathered on the device, and only they cross PCIe (1000 positions per
///   rank by default); the cut search then runs on the host as for host particles, so the domains
///   equal those of dinfo.decomposeDomainAll(host particles). Weighted (e.g. by force time).
/// - Counting (decomposeDomainByCounting): every particle counts. Level by level of the cut tree
///   (ORB: halves by rank count along the longest side; multisection: x slabs, y columns, z
///   cells), each cut is found by histograms of the particles' coordinates on the device, summed
///   over the ranks (the only messages: a few KB per round), each round narrowing the window to
///   the bin that holds the target count; the particles then learn their child cell on the
///   device. Domains hold equal particle counts to a particle or two per level, where samples
///   leave a few per cent (1/sqrt(samples per domain)).
///
/// @code
///   grove::gpu::decomposeDomainAll(dinfo, bodies);          // collective; or
///   grove::gpu::decomposeDomainByCounting(dinfo, bodies);   // collective
///   grove::gpu::exchangeParticles(bodies, dinfo);
/// @endcode
#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "grove/domain/domain_info.hpp"
#include "grove/gpu/cuda_resources.hpp"
#include "grove/gpu/device_particle_system.hpp"
#include "grove/gpu/device_primitives.cuh"

namespace grove::gpu {

/// One cut being searched (decomposeDomainByCounting's device state): particles of `node` along
/// `axis`, the window [low, high) known to hold the cut.
struct CutSearch {
  int node;     ///< the cut tree's node whose particles are counted
  int axis;     ///< 0, 1, 2: x, y, z
  double low;   ///< the window known to hold the cut: from
  double high;  ///< to (exclusive)
};

namespace kernel {

// Per search s: hist[s * (bins + 1) + b] counts the node's particles in window bin b, and
// hist[s * (bins + 1) + bins] those below the window. Non-finite positions are not counted (the
// exchange that follows names them). Block-private counts in shared memory when they fit.
template <class FP>
__global__ void countInWindows(const FP* __restrict__ particles, std::size_t n, const int* __restrict__ node_of,
                               const int* __restrict__ first_search, const int* __restrict__ search_count,
                               const CutSearch* __restrict__ searches, int n_searches, int bins, bool shared,
                               unsigned long long* __restrict__ hist) {
  extern __shared__ unsigned int local[];
  const int n_hist = n_searches * (bins + 1);
  if (shared) {
    for (int k = static_cast<int>(threadIdx.x); k < n_hist; k += static_cast<int>(blockDim.x)) local[k] = 0;
    __syncthreads();
  }
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const int node = node_of[i];
    const int count = search_count[node];
    if (count == 0) continue;
    const Vec3d x = positionOf(particles[i]);
    for (int s = first_search[node]; s < first_search[node] + count; ++s) {
      const CutSearch c = searches[s];
      const double v = x[static_cast<std::size_t>(c.axis)];
      if (!isfinite(v) || v >= c.high) continue;
      int bin = bins;  // below the window
      if (v >= c.low) bin = ::min(bins - 1, static_cast<int>((v - c.low) / (c.high - c.low) * bins));
      const int slot = s * (bins + 1) + bin;
      if (shared) atomicAdd(local + slot, 1u);
      else atomicAdd(hist + slot, 1ull);
    }
  }
  if (!shared) return;
  __syncthreads();
  for (int k = static_cast<int>(threadIdx.x); k < n_hist; k += static_cast<int>(blockDim.x))
    if (local[k]) atomicAdd(hist + k, static_cast<unsigned long long>(local[k]));
}

// Particles of a split node move to the child whose [cut[c - 1], cut[c]) holds them (a point on
// a cut goes up, as CutTree::ownerOf decides).
template <class FP>
__global__ void descendCuts(const FP* __restrict__ particles, std::size_t n, int* __restrict__ node_of,
                            const CutNode* __restrict__ nodes, const double* __restrict__ cuts) {
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const CutNode node = nodes[node_of[i]];
  if (node.axis < 0 || node.first_child < 0) return;
  const double v = positionOf(particles[i])[static_cast<std::size_t>(node.axis)];
  int child = 0;
  while (child < node.child_count - 1 && v >= cuts[node.first_cut + child]) ++child;
  node_of[i] = node.first_child + child;
}

template <class FP>
__global__ void gatherPositions(const FP* __restrict__ particles, const std::uint64_t* __restrict__ picks,
                                std::size_t n, Vec3d* __restrict__ positions) {
  const std::size_t k = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (k < n) positions[k] = positionOf(particles[picks[k]]);
}
}  // namespace kernel

/// DomainInfo::collectSampleParticle for device particles (collective over dinfo.comm()): the
/// same stratified sample indices as for host particles, the positions gathered on the device and
/// only they copied to the host. clear: forget earlier samples first; weight: this rank's work
/// (e.g. its last force time), as the host form takes it.
template <class FP>
void collectSampleParticle(DomainInfo& dinfo, const DeviceParticleSystem<FP>& psys, bool clear = true,
                           std::optional<double> weight = std::nullopt) {
  cudaStream_t stream = psys.stream();
  dinfo.collectSamplePositions(
      psys.size(),
      [&](const std::vector<std::size_t>& picks) {
        std::vector<std::uint64_t> indices(picks.begin(), picks.end());
        DeviceVector<std::uint64_t> d_picks;
        d_picks.assign(indices.data(), indices.size(), stream);
        DeviceVector<Vec3d> d_positions(indices.size());
        if (!indices.empty()) {
          kernel::gatherPositions<<<blocksFor(indices.size(), 256), 256, 0, stream>>>(
              psys.data(), d_picks.data(), indices.size(), d_positions.data());
          check(cudaGetLastError(), "gatherPositions kernel launch");
        }
        return d_positions.toHost(stream);
      },
      clear, weight);
}

/// The domains from samples of the device particles (collective): collectSampleParticle, then
/// DomainInfo::decomposeDomain. The domains equal those of dinfo.decomposeDomainAll on the same
/// particles on the host. Follow with exchangeParticles.
template <class FP>
void decomposeDomainAll(DomainInfo& dinfo, const DeviceParticleSystem<FP>& psys,
                        std::optional<double> weight = std::nullopt) {
  collectSampleParticle(dinfo, psys, true, weight);
  dinfo.decomposeDomain();
}

/// Options of the counting decomposition (decomposeDomainByCounting).
struct CountingOptions {
  int bins = 256;  ///< histogram bins per search and round (at least 2)
  int rounds = 5;  ///< at most; windows shrink by `bins` per round: 256^5 = 2^40 of the first window
};

/// Device arrays a counting decomposition keeps between calls (a call that allocates and frees
/// them each time waits for the device at every free). The caller only keeps it.
struct CountingScratch {
  DeviceVector<int> node_of;             ///< each particle's cut-tree node on the level searched
  DeviceVector<int> first;               ///< per node, its first search
  DeviceVector<int> count;               ///< per node, its number of searches
  DeviceVector<CutSearch> searches;      ///< this round's cut searches
  DeviceVector<unsigned long long> hist; ///< the searches' histograms (bins + 1 counts each)
  DeviceVector<CutNode> nodes;           ///< the cut tree's nodes, for the particles' descent
  DeviceVector<double> cuts;             ///< the cut tree's cut positions
  CubScratch cub;                        ///< CUB's temporary storage
};

/// The domains from counting every particle (collective; see the top of this file), with
/// dinfo's method (ORB or multisection, its grid when one was set or chosen before), as
/// DomainInfo::adoptCuts. Every particle counts one; with `weight` (this rank's work, e.g. its
/// last force time, as the sampled form takes it: FDPS's balancing) each of this rank's particles
/// counts weight / (its particle count), so the domains hold equal work instead of equal numbers.
/// Throws grove::Error for options with bins < 2 or rounds < 1. Follow with exchangeParticles.
template <class FP>
void decomposeDomainByCounting(DomainInfo& dinfo, const DeviceParticleSystem<FP>& psys, CountingScratch& scratch,
                               CountingOptions options = {}, std::optional<double> weight = std::nullopt) {
  require(options.bins >= 2 && options.rounds >= 1, "decomposeDomainByCounting",
          "CountingOptions needs bins >= 2 and rounds >= 1 (got {} and {})", options.bins, options.rounds);
  const Comm& comm = dinfo.comm();
  const int ranks = comm.size();
  cudaStream_t stream = psys.stream();
  const Gpu policy{stream};
  const std::size_t n = psys.size();
  std::optional<std::string> bad_weight;
  if (weight && !(std::isfinite(*weight) && *weight > 0.0))
    bad_weight = fmt::format("the weight must be positive and finite (got {})", *weight);
  comm.throwIfAnyFailed(bad_weight, "decomposeDomainByCounting");
  const bool weighted = comm.allreduceMax(weight ? 1 : 0) == 1;
  // What each of this rank's particles counts; unweighted counts stay integers, so that a cut
  // settles exactly where a window edge holds the target count.
  const double particle_weight = weight ? *weight / static_cast<double>(std::max<std::size_t>(n, 1)) : 1.0;

  // The particles' extent over all ranks: it replaces open faces of the root.
  const Boxd bounds = comm.allreduceUnion(boundingBox(policy, psys.data(), n, scratch.cub));
  require(!bounds.isEmpty(), "decomposeDomainByCounting", "no rank holds a particle");
  const Boxd root = dinfo.getPosRootDomain();
  // A cell's window along axis a: its faces, open ones replaced by the particles' extent (the
  // upper one just above the last particle, so that the window holds every particle of the cell).
  auto clipped = [&](const Boxd& cell, std::size_t a) {
    const double low = isFiniteValue(cell.low[a]) ? cell.low[a] : bounds.low[a];
    const double high = isFiniteValue(cell.high[a]) ? cell.high[a]
                                                    : std::nextafter(bounds.high[a], HUGE_VAL);
    return std::array<double, 2>{low, std::max(low, high)};
  };
  auto extentOf = [&](const Boxd& cell) {
    Vec3d e;
    for (std::size_t a = 0; a < 3; ++a) {
      const auto w = clipped(cell, a);
      e[a] = w[1] - w[0];
    }
    return e;
  };

  const bool orb = dinfo.getDecompositionMethod() == DecompositionMethod::ORB;
  std::array<int, 3> grid = dinfo.getNumberOfDomainMultiDimension();
  if (!orb && grid[0] == 0) grid = chooseMultisectionGrid(ranks, extentOf(root));

  // A cell waiting to be split: its tree node, box, ranks and depth.
  struct Pending {
    int node;
    Boxd cell;
    int rank_begin, ranks, level;
  };
  CutTree tree;
  tree.nodes.resize(1);
  DeviceVector<int>& node_of = scratch.node_of;
  node_of.resize(n);
  if (n > 0) check(cudaMemsetAsync(node_of.data(), 0, n * sizeof(int), stream), "cudaMemsetAsync (node of)");
  std::vector<Pending> frontier{{0, root, 0, ranks, 0}};
  DeviceVector<int>& d_first = scratch.first;
  DeviceVector<int>& d_count = scratch.count;
  DeviceVector<CutSearch>& d_searches = scratch.searches;
  DeviceVector<unsigned long long>& d_hist = scratch.hist;
  DeviceVector<CutNode>& d_nodes = scratch.nodes;
  DeviceVector<double>& d_cuts = scratch.cuts;
  const int bins = options.bins;
  while (!frontier.empty()) {
    // This level's splits: axis, children and the fraction of the cell's particles below each cut.
    struct Split {
      Pending p;
      int axis, children;
      std::vector<double> fractions;
    };
    std::vector<Split> splits;
    std::vector<Pending> next;
    for (const Pending& p : frontier) {
      const bool leaf = orb ? p.ranks == 1 : p.level == 3;
      if (leaf) {
        tree.nodes[static_cast<std::size_t>(p.node)] = {-1, -1, 0, -1, p.rank_begin};
        continue;
      }
      Split split{p, 0, 2, {}};
      if (orb) {
        const Vec3d extent = extentOf(p.cell);
        if (extent.y > extent[static_cast<std::size_t>(split.axis)]) split.axis = 1;
        if (extent.z > extent[static_cast<std::size_t>(split.axis)]) split.axis = 2;
        split.fractions = {static_cast<double>(p.ranks / 2) / p.ranks};
      } else {
        split.axis = p.level;
        split.children = grid[static_cast<std::size_t>(p.level)];
        for (int c = 1; c < split.children; ++c) split.fractions.push_back(static_cast<double>(c) / split.children);
      }
      splits.push_back(std::move(split));
    }
    if (splits.empty()) break;

    // Each split cell's particle count (over all ranks), then its searches.
    const auto n_nodes = static_cast<int>(tree.nodes.size());
    std::vector<int> first(static_cast<std::size_t>(n_nodes), 0), count(static_cast<std::size_t>(n_nodes), 0);
    std::vector<CutSearch> searches;
    for (const Split& sp : splits) {
      const auto w = clipped(sp.p.cell, static_cast<std::size_t>(sp.axis));
      first[static_cast<std::size_t>(sp.p.node)] = static_cast<int>(searches.size());
      count[static_cast<std::size_t>(sp.p.node)] = static_cast<int>(sp.fractions.size());
      for (std::size_t k = 0; k < sp.fractions.size(); ++k) searches.push_back({sp.p.node, sp.axis, w[0], w[1]});
    }
    const auto n_searches = static_cast<int>(searches.size());
    d_first.assign(first.data(), first.size(), stream);
    d_count.assign(count.data(), count.size(), stream);
    const int n_hist = n_searches * (bins + 1);
    const std::size_t shared_bytes = static_cast<std::size_t>(n_hist) * sizeof(unsigned int);
    const bool shared = shared_bytes <= 48 * 1024;
    std::vector<double> below_target(searches.size());  // particles (or work) that must lie below each cut
    std::vector<double> cut_of(searches.size());
    std::vector<char> settled(searches.size(), 0);
    // A round narrows every unsettled window by `bins`; once every cut's count is exact (a window
    // edge holds it), the rounds left would change nothing. Every rank sees the same sums, so all
    // stop together.
    for (int round = 0; round < options.rounds && n_searches > 0 &&
                        std::find(settled.begin(), settled.end(), char{0}) != settled.end();
         ++round) {
      d_searches.assign(searches.data(), searches.size(), stream);
      d_hist.resize(static_cast<std::size_t>(n_hist));
      check(cudaMemsetAsync(d_hist.data(), 0, static_cast<std::size_t>(n_hist) * sizeof(unsigned long long), stream),
            "cudaMemsetAsync (histograms)");
      if (n > 0) {
        const unsigned blocks = std::min<unsigned>(blocksFor(n, 256), 1024);
        kernel::countInWindows<<<blocks, 256, shared ? shared_bytes : 0, stream>>>(
            psys.data(), n, node_of.data(), d_first.data(), d_count.data(), d_searches.data(), n_searches, bins,
            shared, d_hist.data());
        check(cudaGetLastError(), "countInWindows kernel launch");
      }
      const std::vector<unsigned long long> counts = d_hist.toHost(stream);
      std::vector<double> hist(counts.size());
      for (std::size_t k = 0; k < counts.size(); ++k) hist[k] = static_cast<double>(counts[k]) * particle_weight;
      comm.allreduceSum(hist);
      std::size_t s = 0;
      for (const Split& sp : splits) {
        for (std::size_t k = 0; k < sp.fractions.size(); ++k, ++s) {
          const double* h = hist.data() + s * static_cast<std::size_t>(bins + 1);
          double in_window = 0;
          for (int b = 0; b < bins; ++b) in_window += h[b];
          if (round == 0) {  // the whole cell is the window: the cell's count is known now
            const double total = h[bins] + in_window;
            below_target[s] = weighted ? sp.fractions[k] * total
                                       : static_cast<double>(std::llround(sp.fractions[k] * total));
          }
          CutSearch& c = searches[s];
          if (settled[s]) continue;
          // Below the window: h[bins]. The bin where the count crosses the target is the next window.
          double below = h[bins];
          if (below_target[s] <= below || !(c.high > c.low)) {
            cut_of[s] = c.low, settled[s] = 1;
            continue;
          }
          if (below_target[s] >= below + in_window) {
            cut_of[s] = c.high, settled[s] = 1;
            continue;
          }
          const double width = (c.high - c.low) / bins;
          int b = 0;
          while (below + h[b] < below_target[s]) below += h[b++];
          // Below low + b * width: `below`; below low + (b + 1) * width: below + h[b] >= target.
          const double low = c.low + b * width, high = b + 1 == bins ? c.high : c.low + (b + 1) * width;
          // Settled when a window edge gives the count exactly; else the nearer edge at the end.
          if (below == below_target[s]) cut_of[s] = low, settled[s] = 1;
          else if (below + h[b] == below_target[s]) cut_of[s] = high, settled[s] = 1;
          else cut_of[s] = (below_target[s] - below <= below + h[b] - below_target[s]) ? low : high;
          c.low = low, c.high = high;
        }
      }
    }

    // The tree's nodes for this level, their children waiting for the next.
    std::size_t s = 0;
    for (const Split& sp : splits) {
      const auto a = static_cast<std::size_t>(sp.axis);
      const int first_cut = static_cast<int>(tree.cuts.size());
      double previous = sp.p.cell.low[a];
      for (std::size_t k = 0; k < sp.fractions.size(); ++k, ++s) {
        previous = std::max(previous, cut_of[s]);  // monotone (the targets are)
        tree.cuts.push_back(previous);
      }
      const int first_child = static_cast<int>(tree.nodes.size());
      tree.nodes[static_cast<std::size_t>(sp.p.node)] = {sp.axis, first_child, sp.children, first_cut, -1};
      tree.nodes.resize(tree.nodes.size() + static_cast<std::size_t>(sp.children));
      int stride = 1;
      if (!orb)
        for (int l = sp.p.level + 1; l < 3; ++l) stride *= grid[static_cast<std::size_t>(l)];
      for (int c = 0; c < sp.children; ++c) {
        Boxd child = sp.p.cell;
        if (c > 0) child.low[a] = tree.cuts[static_cast<std::size_t>(first_cut + c - 1)];
        if (c < sp.children - 1) child.high[a] = tree.cuts[static_cast<std::size_t>(first_cut + c)];
        if (orb) {
          const int lower = sp.p.ranks / 2;
          next.push_back({first_child + c, child, c == 0 ? sp.p.rank_begin : sp.p.rank_begin + lower,
                          c == 0 ? lower : sp.p.ranks - lower, sp.p.level + 1});
        } else {
          next.push_back({first_child + c, child, sp.p.rank_begin + c * stride, 1, sp.p.level + 1});
        }
      }
    }
    // The particles to their children.
    if (n > 0) {
      d_nodes.assign(tree.nodes.data(), tree.nodes.size(), stream);
      d_cuts.assign(tree.cuts.data(), tree.cuts.size(), stream);
      kernel::descendCuts<<<blocksFor(n, 256), 256, 0, stream>>>(psys.data(), n, node_of.data(), d_nodes.data(),
                                                                   d_cuts.data());
      check(cudaGetLastError(), "descendCuts kernel launch");
    }
    frontier = std::move(next);
  }
  dinfo.adoptCuts(std::move(tree), orb ? std::array<int, 3>{0, 0, 0} : grid);
}

/// decomposeDomainByCounting with scratch of its own (allocated and freed in the call).
template <class FP>
void decomposeDomainByCounting(DomainInfo& dinfo, const DeviceParticleSystem<FP>& psys, CountingOptions options = {},
                               std::optional<double> weight = std::nullopt) {
  CountingScratch scratch;
  decomposeDomainByCounting(dinfo, psys, scratch, options, weight);
}

}  // namespace grove::gpu
