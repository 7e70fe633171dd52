#include "grove/domain/decomposition.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "grove/core/error.hpp"

namespace grove {

namespace {

// Where to cut a cell that has no samples to guide it: its middle when both faces are finite,
// otherwise its finite face (leaving an empty box), otherwise the origin.
double cutWithoutSamples(double low, double high, double fraction) {
  const bool finite_low = isFiniteValue(low), finite_high = isFiniteValue(high);
  if (finite_low && finite_high) return low + fraction * (high - low);
  if (finite_low) return low;
  if (finite_high) return high;
  return 0.0;
}

// Index of the first sample at or above the cut: samples below it belong to the lower part.
std::size_t partitionPoint(std::span<const WeightedSample> sorted, int axis, double cut) {
  const auto a = static_cast<std::size_t>(axis);
  return static_cast<std::size_t>(
      std::partition_point(sorted.begin(), sorted.end(), [&](const WeightedSample& s) { return s.pos[a] < cut; }) -
      sorted.begin());
}

struct TreeBuilder {
  CutTree tree;

  int reserveChildren(int parent, int count) {
    const int first = static_cast<int>(tree.nodes.size());
    tree.nodes.resize(tree.nodes.size() + static_cast<std::size_t>(count));
    tree.nodes[static_cast<std::size_t>(parent)].first_child = first;
    return first;
  }
};

// The extent of a cell, with infinite faces replaced by the samples' bounding box, so that
// "longest side" means something for the open outer cells.
Vec3d effectiveExtent(std::span<const WeightedSample> samples, const Boxd& cell) {
  Boxd bounds = Boxd::empty();
  for (const auto& s : samples) bounds.merge(s.pos);
  Vec3d extent;
  for (std::size_t a = 0; a < 3; ++a) {
    const double low = isFiniteValue(cell.low[a]) ? cell.low[a] : bounds.low[a];
    const double high = isFiniteValue(cell.high[a]) ? cell.high[a] : bounds.high[a];
    extent[a] = (isFiniteValue(low) && isFiniteValue(high)) ? high - low : 0.0;
  }
  return extent;
}

}  // namespace

namespace detail {

std::vector<double> weightedCuts(std::span<WeightedSample> samples, int axis, std::span<const double> fractions,
                                 double cell_low, double cell_high) {
  const auto a = static_cast<std::size_t>(axis);
  std::sort(samples.begin(), samples.end(),
            [a](const WeightedSample& l, const WeightedSample& r) { return l.pos[a] < r.pos[a]; });
  const double total = std::accumulate(samples.begin(), samples.end(), 0.0,
                                       [](double sum, const WeightedSample& s) { return sum + s.weight; });
  std::vector<double> cuts;
  cuts.reserve(fractions.size());
  if (samples.empty() || !(total > 0.0)) {
    for (double f : fractions) cuts.push_back(cutWithoutSamples(cell_low, cell_high, f));
    return cuts;
  }
  // Walk the sorted samples once; a sample goes below the cut when its centre of weight
  // lies below the target, so the split lands as close to the target as the samples allow.
  std::size_t below = 0;
  double weight_below = 0.0;
  for (double f : fractions) {
    const double target = f * total;
    while (below < samples.size() && weight_below + 0.5 * samples[below].weight < target) {
      weight_below += samples[below].weight;
      ++below;
    }
    double cut;
    if (below == 0) {
      cut = isFiniteValue(cell_low) ? cell_low : samples.front().pos[a];
    } else if (below == samples.size()) {
      cut = isFiniteValue(cell_high) ? cell_high
                                     : std::nextafter(samples.back().pos[a], std::numeric_limits<double>::infinity());
    } else {
      cut = 0.5 * (samples[below - 1].pos[a] + samples[below].pos[a]);
    }
    cuts.push_back(std::clamp(cut, cell_low, cell_high));
  }
  return cuts;
}

}  // namespace detail

std::array<int, 3> chooseMultisectionGrid(int rank_count, const Vec3d& extent) {
  require(rank_count > 0, "DomainInfo", "rank count must be positive, got {}", rank_count);
  Vec3d e = extent;
  for (std::size_t a = 0; a < 3; ++a)
    if (!isFiniteValue(e[a]) || !(e[a] > 0.0)) e[a] = 1.0;
  // Ties go to more cuts along x, then y (FDPS's order), which keeps the choice deterministic.
  std::array<int, 3> best{rank_count, 1, 1};
  double best_aspect = std::numeric_limits<double>::infinity();
  for (int nx = rank_count; nx >= 1; --nx) {
    if (rank_count % nx) continue;
    for (int ny = rank_count / nx; ny >= 1; --ny) {
      if ((rank_count / nx) % ny) continue;
      const int nz = rank_count / nx / ny;
      const double cx = e.x / nx, cy = e.y / ny, cz = e.z / nz;
      const double aspect = std::max({cx, cy, cz}) / std::min({cx, cy, cz});
      if (aspect < best_aspect * (1.0 - 1e-12)) {
        best_aspect = aspect;
        best = {nx, ny, nz};
      }
    }
  }
  return best;
}

CutTree decomposeMultisection(std::span<WeightedSample> samples, const std::array<int, 3>& grid, const Boxd& root) {
  TreeBuilder b;
  // One level: split `part` of samples along axis into n cells of equal work; recurse.
  auto equalFractions = [](int n) {
    std::vector<double> f(static_cast<std::size_t>(n - 1));
    for (int i = 1; i < n; ++i) f[static_cast<std::size_t>(i - 1)] = static_cast<double>(i) / n;
    return f;
  };
  auto build = [&](auto&& self, std::span<WeightedSample> part, int level, Boxd cell, int rank_base,
                   int node) -> void {
    if (level == 3) {
      b.tree.nodes[static_cast<std::size_t>(node)] = {-1, -1, 0, -1, rank_base};
      return;
    }
    const int n = grid[static_cast<std::size_t>(level)];
    const auto a = static_cast<std::size_t>(level);
    const std::vector<double> cuts =
        detail::weightedCuts(part, level, equalFractions(n), cell.low[a], cell.high[a]);
    const int first_cut = static_cast<int>(b.tree.cuts.size());
    b.tree.cuts.insert(b.tree.cuts.end(), cuts.begin(), cuts.end());
    b.tree.nodes[static_cast<std::size_t>(node)] = {level, -1, n, first_cut, -1};
    const int first_child = b.reserveChildren(node, n);
    int stride = 1;
    for (int l = level + 1; l < 3; ++l) stride *= grid[static_cast<std::size_t>(l)];
    // Split points first: recursing re-sorts each child's samples along the next axis.
    std::vector<std::size_t> bounds(static_cast<std::size_t>(n + 1), part.size());
    bounds[0] = 0;
    for (int c = 0; c < n - 1; ++c)
      bounds[static_cast<std::size_t>(c + 1)] = partitionPoint(part, level, cuts[static_cast<std::size_t>(c)]);
    for (int c = 0; c < n; ++c) {
      Boxd child = cell;
      if (c > 0) child.low[a] = cuts[static_cast<std::size_t>(c - 1)];
      if (c < n - 1) child.high[a] = cuts[static_cast<std::size_t>(c)];
      const std::size_t begin = bounds[static_cast<std::size_t>(c)], end = bounds[static_cast<std::size_t>(c + 1)];
      self(self, part.subspan(begin, end - begin), level + 1, child, rank_base + c * stride, first_child + c);
    }
  };
  b.tree.nodes.resize(1);
  build(build, samples, 0, root, 0, 0);
  return b.tree;
}

CutTree decomposeOrb(std::span<WeightedSample> samples, int rank_count, const Boxd& root) {
  require(rank_count > 0, "DomainInfo", "rank count must be positive, got {}", rank_count);
  TreeBuilder b;
  auto build = [&](auto&& self, std::span<WeightedSample> part, Boxd cell, int rank_begin, int ranks,
                   int node) -> void {
    if (ranks == 1) {
      b.tree.nodes[static_cast<std::size_t>(node)] = {-1, -1, 0, -1, rank_begin};
      return;
    }
    const int lower_ranks = ranks / 2;
    const Vec3d extent = effectiveExtent(part, cell);
    int axis = 0;
    if (extent.y > extent[static_cast<std::size_t>(axis)]) axis = 1;
    if (extent.z > extent[static_cast<std::size_t>(axis)]) axis = 2;
    const auto a = static_cast<std::size_t>(axis);
    const double fraction[] = {static_cast<double>(lower_ranks) / ranks};
    const double cut = detail::weightedCuts(part, axis, fraction, cell.low[a], cell.high[a])[0];
    b.tree.cuts.push_back(cut);
    b.tree.nodes[static_cast<std::size_t>(node)] = {axis, -1, 2, static_cast<int>(b.tree.cuts.size()) - 1, -1};
    const int first_child = b.reserveChildren(node, 2);
    const std::size_t split = partitionPoint(part, axis, cut);
    Boxd lower = cell, upper = cell;
    lower.high[a] = cut;
    upper.low[a] = cut;
    self(self, part.first(split), lower, rank_begin, lower_ranks, first_child);
    self(self, part.subspan(split), upper, rank_begin + lower_ranks, ranks - lower_ranks, first_child + 1);
  };
  b.tree.nodes.resize(1);
  build(build, samples, root, 0, rank_count, 0);
  return b.tree;
}

}  // namespace grove
