#pragma once
/// @file
/// The two decomposition algorithms. Both take weighted samples of particle positions (each
/// sample stands for `weight` units of work) and return a CutTree whose leaves hold equal work.
#include <array>
#include <span>
#include <vector>

#include "grove/core/box.hpp"
#include "grove/domain/cut_tree.hpp"

namespace grove {

/// A sample of a particle position standing for `weight` units of work.
struct WeightedSample {
  Vec3d pos;            ///< the sampled position
  double weight = 1.0;  ///< the work it stands for
};

/// Which decomposition algorithm: MULTISECTION (decomposeMultisection(), FDPS's) or ORB
/// (decomposeOrb()).
enum class DecompositionMethod { MULTISECTION, ORB };

/// The nx * ny * nz = rank_count grid whose cells are closest to cubes, for a root of this
/// extent (infinite extents are treated as equal).
std::array<int, 3> chooseMultisectionGrid(int rank_count, const Vec3d& extent);

/// Multisection (FDPS): nx slabs along x with equal work, each cut into ny columns along y,
/// each of those into nz cells along z. Rank of cell (i, j, k) is (i * ny + j) * nz + k.
/// Reorders samples.
CutTree decomposeMultisection(std::span<WeightedSample> samples, const std::array<int, 3>& grid, const Boxd& root);

/// Orthogonal recursive bisection (PKDGRAV): a cell holding n ranks is cut across its longest
/// side at the weighted quantile that gives its halves floor(n/2) and ceil(n/2) ranks' work.
/// Any rank count works. Reorders samples.
CutTree decomposeOrb(std::span<WeightedSample> samples, int rank_count, const Boxd& root);

namespace detail {
// Sorts samples along axis and returns the cut positions that divide their weight into parts
// with the given cumulative fractions (increasing, each in (0, 1)), within [cell_low, cell_high].
std::vector<double> weightedCuts(std::span<WeightedSample> samples, int axis, std::span<const double> fractions,
                                 double cell_low, double cell_high);
}  // namespace detail

}  // namespace grove
