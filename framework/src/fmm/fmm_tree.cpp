// grove::fmm::FmmTree (grove/fmm/fmm_tree.hpp): key sort, breadth-first split, upward pass.
#include "grove/fmm/fmm_tree.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>

#include "grove/core/error.hpp"
#include "grove/core/large_vector.hpp"
#include "grove/tree/morton.hpp"
#include "grove/tree/key_order.hpp"
#include "grove/tree/radix_sort.hpp"

namespace grove::fmm {

namespace {
std::uint64_t nextBuildId() {
  static std::atomic<std::uint64_t> last{0};
  return ++last;
}
}  // namespace

RootCell FmmTree::keyRoot(const Boxd& bounds, std::size_t particles) {
  const Vec3d size = particles > 0 ? bounds.high - bounds.low : Vec3d(1.0);
  // Slightly larger than the particles' extent, so the largest coordinate stays inside the cube.
  const double length = std::max({size.x, size.y, size.z, 1e-300}) * (1.0 + 1e-12);
  return RootCell{particles > 0 ? bounds.low : Vec3d(0.0), length};
}

void detail::requireTreeArguments(std::span<const Vec3d> positions, std::span<const double> charges, int n_leaf,
                                  const char* where) {
  require(positions.size() == charges.size(), where, "{} positions but {} charges", positions.size(), charges.size());
  require(n_leaf >= 1, where, "n_leaf must be at least 1, got {}", n_leaf);
  require(positions.size() < (std::size_t{1} << 31), where, "{} particles on one rank: at most 2^31 - 1 are supported",
          positions.size());
}

void FmmTree::build(std::span<const Vec3d> positions, std::span<const double> charges, int n_leaf,
                    const MultiIndexSet& expansion) {
  detail::requireTreeArguments(positions, charges, n_leaf, "fmm::FmmTree::build");
  build_id_ = 0;  // a build that throws below leaves a tree no engine's copy matches
  orderParticles(positions, charges);
  splitCells(n_leaf);
  computeMoments(expansion);
  build_id_ = nextBuildId();
}

void FmmTree::adopt(std::span<const Vec3d> positions, std::span<const double> charges, Built& built) {
  const std::size_t n = positions.size();
  require(charges.size() == n && built.order.size() == n, "fmm::FmmTree::adopt",
          "{} positions, {} charges and an order of {}", n, charges.size(), built.order.size());
  require(!built.cells.empty() && built.generation_begin.size() >= 2 && built.generation_begin.front() == 0 &&
              built.generation_begin.back() == static_cast<int>(built.cells.size()),
          "fmm::FmmTree::adopt", "{} cells do not fit generation bounds from {} to {}", built.cells.size(),
          built.generation_begin.empty() ? -1 : built.generation_begin.front(),
          built.generation_begin.empty() ? -1 : built.generation_begin.back());
  require(built.stride > 0 && built.multipoles.size() == built.cells.size() * built.stride, "fmm::FmmTree::adopt",
          "{} multipole coefficients for {} cells of {}", built.multipoles.size(), built.cells.size(), built.stride);
  std::int64_t leaves = 0;
  for (const FmmCell& cell : built.cells) {
    require(0 <= cell.begin && cell.begin <= cell.end && cell.end <= static_cast<int>(n), "fmm::FmmTree::adopt",
            "a cell holds particles [{}, {}) of {}", cell.begin, cell.end, n);
    leaves += cell.leaf() ? 1 : 0;
  }
  for (std::size_t g = 0; g + 1 < built.generation_begin.size(); ++g)
    require(built.generation_begin[g] <= built.generation_begin[g + 1], "fmm::FmmTree::adopt",
            "generation {} begins at cell {}, after generation {} at {}", g + 1, built.generation_begin[g + 1], g,
            built.generation_begin[g]);
  const auto cell_count = static_cast<int>(built.cells.size());
  for (std::size_t c = 0; c < built.cells.size(); ++c) {
    const FmmCell& cell = built.cells[c];
    require(cell.child_count == 0 || (0 < cell.first_child && cell.first_child + cell.child_count <= cell_count),
            "fmm::FmmTree::adopt", "cell {}'s children [{}, {}) are not cells of [1, {})", c, cell.first_child,
            cell.first_child + cell.child_count, cell_count);
    require(cell.parent < cell_count, "fmm::FmmTree::adopt", "cell {}'s parent {} is not one of {} cells", c,
            cell.parent, cell_count);
  }
  // The key-ordered copies, unless the builder made them (then the order is still checked).
  require(!built.key_gathered || (built.key_positions.size() == n && built.key_charges.size() == n),
          "fmm::FmmTree::adopt", "{} key-ordered positions and {} charges gathered for {} particles",
          built.key_positions.size(), built.key_charges.size(), n);
  const bool gathered = built.key_gathered;
  bool in_range = true;
  if (gathered) {
#pragma omp parallel for reduction(&& : in_range)
    for (std::size_t k = 0; k < n; ++k)
      in_range = in_range && 0 <= built.order[k] && static_cast<std::size_t>(built.order[k]) < n;
  } else {
    // Into the builder's arrays, so that a failure leaves the tree as it was.
    in_range = gatherInKeyOrder(built.order, positions, charges, built.key_positions, built.key_charges);
  }
  require(in_range, "fmm::FmmTree::adopt", "the order names a particle outside [0, {})", n);
  std::swap(bounds_, built.bounds);
  order_.swap(built.order);
  cells_.swap(built.cells);
  generation_begin_.swap(built.generation_begin);
  multipoles_.swap(built.multipoles);
  std::swap(stride_, built.stride);
  pos_.swap(built.key_positions);
  charge_.swap(built.key_charges);
  built.key_gathered = false;
  leaves_ = leaves;
  keys_.clear();
  build_id_ = nextBuildId();
}

bool FmmTree::gatherInKeyOrder(std::span<const int> order, std::span<const Vec3d> positions,
                               std::span<const double> charges, std::vector<Vec3d>& out_positions,
                               std::vector<double>& out_charges) {
  require(charges.size() == positions.size(), "fmm::FmmTree::gatherInKeyOrder", "{} positions but {} charges",
          positions.size(), charges.size());
  const std::size_t n = order.size();
  out_positions.resize(n);
  out_charges.resize(n);
  bool in_range = true;
#pragma omp parallel for reduction(&& : in_range)
  for (std::size_t k = 0; k < n; ++k) {
    const int i = order[k];
    if (i < 0 || static_cast<std::size_t>(i) >= positions.size()) {
      in_range = false;
      continue;
    }
    out_positions[k] = positions[static_cast<std::size_t>(i)];
    out_charges[k] = charges[static_cast<std::size_t>(i)];
  }
  return in_range;
}

void FmmTree::orderParticles(std::span<const Vec3d> positions, std::span<const double> charges) {
  // The key stages every tree shares (tree/key_order.hpp). The cells are then split the FMM's
  // own way (splitCells: chains of single-child octants collapsed, cells by generation with their
  // parents), not by linkCells, whose layout the dual traversal and its expansions do not use.
  const std::size_t n = positions.size();
  bounds_ = boundingBox(Cpu{}, positions);
  const RootCell root = keyRoot(bounds_, n);

  LargeVector<KeyIndex> items, scratch;
  mortonKeys(Cpu{}, root, positions, items);
  sortByKey(Cpu{}, items, scratch);

  order_.resize(n);
  keys_.resize(n);
  pos_.resize(n);
  charge_.resize(n);
#pragma omp parallel for
  for (std::size_t k = 0; k < n; ++k) {
    const std::uint32_t i = items[k].index;
    order_[k] = static_cast<int>(i);
    keys_[k] = items[k].key;
    pos_[k] = positions[i];
    charge_[k] = charges[i];
  }
}

// Breadth first, a generation at a time: each cell of a generation splits into the runs of equal
// octant digit at the first level where its keys differ (a cell with one occupied octant descends
// in place, so no cell has a single child); the runs become the next generation, in order.
void FmmTree::splitCells(int n_leaf) {
  const int n = static_cast<int>(pos_.size());
  cells_.assign(1, FmmCell{});
  cells_[0].end = n;
  generation_begin_.assign(1, 0);
  leaves_ = 0;
  int gen_begin = 0, gen_end = 1;
  std::vector<std::vector<int>> cuts;  // per cell of the generation: its children's boundaries
  while (gen_begin < gen_end) {
    cuts.assign(static_cast<std::size_t>(gen_end - gen_begin), {});
#pragma omp parallel for schedule(dynamic, 64)
    for (int c = gen_begin; c < gen_end; ++c) {
      const FmmCell& cell = cells_[static_cast<std::size_t>(c)];
      const int count = cell.end - cell.begin;
      if (count <= n_leaf) continue;
      const std::uint64_t first = keys_[static_cast<std::size_t>(cell.begin)];
      const std::uint64_t last = keys_[static_cast<std::size_t>(cell.end - 1)];
      if (first == last) continue;  // coincident particles (to key resolution): cannot split
      // The highest differing bit gives the level whose octant digit first differs.
      const int bit = 63 - std::countl_zero(first ^ last);
      const int shift = bit - bit % 3;
      std::vector<int>& out = cuts[static_cast<std::size_t>(c - gen_begin)];
      out.push_back(cell.begin);
      const auto begin = keys_.begin() + cell.begin, end = keys_.begin() + cell.end;
      const std::uint64_t prefix = first >> (shift + 3);
      for (std::uint64_t digit = ((first >> shift) & 7u) + 1; digit <= ((last >> shift) & 7u); ++digit) {
        const std::uint64_t bound = ((prefix << 3) | digit) << shift;
        const int at = static_cast<int>(std::lower_bound(begin, end, bound) - keys_.begin());
        if (at > out.back()) out.push_back(at);
      }
      out.push_back(cell.end);
    }
    for (int c = gen_begin; c < gen_end; ++c) {
      const std::vector<int>& out = cuts[static_cast<std::size_t>(c - gen_begin)];
      FmmCell& cell = cells_[static_cast<std::size_t>(c)];
      if (out.empty()) {
        ++leaves_;
        continue;
      }
      cell.first_child = static_cast<int>(cells_.size());
      cell.child_count = static_cast<int>(out.size()) - 1;
      for (std::size_t k = 0; k + 1 < out.size(); ++k) {
        FmmCell child;
        child.begin = out[k];
        child.end = out[k + 1];
        child.parent = c;
        cells_.push_back(child);
      }
    }
    generation_begin_.push_back(gen_end);
    gen_begin = gen_end;
    gen_end = static_cast<int>(cells_.size());
  }
}

// Children before parents, a generation at a time from the deepest: centre of |charge| (the centre
// of mass for masses; for signed charges it stays inside the cell), expansion radius over the
// particles, P2M at leaves, M2M above them. A leaf sums its particles in order; a parent sums its
// children's sums in child order (so each particle is summed once, not once per generation, and a
// device builds the same centres bit for bit: DeviceFarField::buildTree).
void FmmTree::computeMoments(const MultiIndexSet& expansion) {
  stride_ = static_cast<std::size_t>(expansion.size());
  multipoles_.assign(cells_.size() * stride_, 0.0);
  struct Sums {
    double charge = 0.0, weight = 0.0;
    Vec3d weighted{}, position{};
  };
  std::vector<Sums> sums(cells_.size());
  for (int g = generationCount() - 1; g >= 0; --g) {
#pragma omp parallel for schedule(dynamic, 16)
    for (int c = generation(g); c < generation(g + 1); ++c) {
      FmmCell& cell = cells_[static_cast<std::size_t>(c)];
      Sums& sum = sums[static_cast<std::size_t>(c)];
      if (cell.leaf()) {
        for (int k = cell.begin; k < cell.end; ++k) {
          const double qk = charge_[static_cast<std::size_t>(k)];
          sum.charge += qk;
          sum.weight += std::abs(qk);
          sum.weighted += std::abs(qk) * pos_[static_cast<std::size_t>(k)];
          sum.position += pos_[static_cast<std::size_t>(k)];
        }
      } else {
        for (int child = cell.first_child; child < cell.first_child + cell.child_count; ++child) {
          const Sums& part = sums[static_cast<std::size_t>(child)];
          sum.charge += part.charge;
          sum.weight += part.weight;
          sum.weighted += part.weighted;
          sum.position += part.position;
        }
      }
      cell.charge = sum.charge;
      cell.center = sum.weight > 0.0
                        ? (1.0 / sum.weight) * sum.weighted
                        : (1.0 / static_cast<double>(std::max(cell.end - cell.begin, 1))) * sum.position;
      double r2 = 0.0;
      for (int k = cell.begin; k < cell.end; ++k)
        r2 = std::max(r2, norm2(pos_[static_cast<std::size_t>(k)] - cell.center));
      cell.radius = std::sqrt(r2);
      // P2M and M2M are compiled without contraction too (multipole_sums.cpp).
      std::span<double> mp(multipoles_.data() + static_cast<std::size_t>(c) * stride_, stride_);
      if (cell.leaf()) {
        for (int k = cell.begin; k < cell.end; ++k)
          expansion.addPointMultipole(cell.center - pos_[static_cast<std::size_t>(k)],
                                      charge_[static_cast<std::size_t>(k)], mp);
      } else {
        for (int child = cell.first_child; child < cell.first_child + cell.child_count; ++child)
          expansion.shiftMultipole({multipoles_.data() + static_cast<std::size_t>(child) * stride_, stride_},
                                   cell.center - cells_[static_cast<std::size_t>(child)].center, mp);
      }
    }
  }
}

}  // namespace grove::fmm
