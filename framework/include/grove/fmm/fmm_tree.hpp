#pragma once
/// @file
/// grove::fmm::FmmTree: the octree of the fast multipole method, with each cell's centre of mass,
/// expansion radius and multipole (grove/fmm/cartesian_expansion.hpp). Built from positions and
/// charges (masses): Morton keys, a radix sort, then cells split breadth first into their occupied
/// octants until a cell holds at most n_leaf particles. The same cell record describes the cells a
/// rank receives in a local essential tree (grove/fmm/fmm_let.hpp), where a cell may come without
/// its contents (far from the receiver: its multipole stands for them).
#include <cstdint>
#include <span>
#include <vector>

#include "grove/core/box.hpp"
#include "grove/core/vec3.hpp"
#include "grove/fmm/cartesian_expansion.hpp"
#include "grove/tree/morton.hpp"

namespace grove::fmm {

/// One cell of an FmmTree, or of the cells a rank receives (SourceCells).
struct FmmCell {
  Vec3d center;         ///< centre of |charge| (of mass, for masses): the expansions' centre
  double radius = 0.0;  ///< expansion radius: the largest distance from the centre to a particle
  double charge = 0.0;  ///< the summed charge (mass) of the cell's particles
  /// @var begin
  /// First particle of the cell, in the tree's (key) order.
  /// @var end
  /// One past the cell's last particle: particles [begin, end).
  int begin = 0, end = 0;  // particles [begin, end), in the tree's (key) order
  /// @var first_child
  /// Index of the first child cell (children are contiguous); -1 without children.
  /// @var child_count
  /// Number of children; 0 for a leaf.
  int first_child = -1, child_count = 0;
  int parent = -1;  ///< index of the parent cell; -1 for a root and for received cells
  /// A received cell whose particles and children were not sent: the sender found it far enough
  /// from every particle of the receiver for its multipole to stand for them (grove/fmm/fmm_let.hpp).
  /// Non-zero for such a cell.
  int multipole_only = 0;
  /// Whether the cell has no children.
  bool leaf() const { return child_count == 0; }
};

/// The octree of one rank's particles, built by build() (or on a device, then adopt()); not
/// collective.
class FmmTree {
 public:
  /// A tree built elsewhere, cell for cell as build() makes it (a device: DeviceFarField's
  /// buildTree(), grove/fmm/device_far_field_gpu.h), for adopt().
  struct Built {
    Boxd bounds = Boxd::empty();        ///< the particles' bounding box (keyRoot()'s input)
    std::vector<int> order;             ///< order[k]: the input index of the k-th particle in key order
    std::vector<FmmCell> cells;         ///< breadth first, as cells()
    std::vector<int> generation_begin;  ///< generationCount() + 1 entries: the first cell of each, then the count
    std::vector<double> multipoles;     ///< stride per cell, cell-major
    std::size_t stride = 0;             ///< the expansion's size()
    /// The positions and charges in key order, when the builder gathered them already
    /// (gatherInKeyOrder, e.g. while its device computed the multipoles) and set key_gathered;
    /// otherwise adopt() gathers them here. Either way adopt() gives the tree's previous ones back
    /// in them, for their memory, and clears key_gathered.
    std::vector<Vec3d> key_positions;
    std::vector<double> key_charges;  ///< see key_positions
    bool key_gathered = false;        ///< see key_positions
  };

  /// out_positions[k] = positions[order[k]] and out_charges[k] = charges[order[k]] (resized to the
  /// order's length), in parallel. Returns false, with the outputs' contents unspecified, when an
  /// entry of the order is outside [0, positions.size()). Throws grove::Error when positions and
  /// charges differ in length.
  static bool gatherInKeyOrder(std::span<const int> order, std::span<const Vec3d> positions,
                               std::span<const double> charges, std::vector<Vec3d>& out_positions,
                               std::vector<double>& out_charges);

  /// The cube the particles' Morton keys are taken in: the bounding box's lowest corner, with an
  /// edge slightly longer than its largest extent (so the largest coordinate stays inside). The
  /// same on the host and on a device.
  static RootCell keyRoot(const Boxd& bounds, std::size_t particles);

  /// Builds the cells over the particles and computes their centres, radii and multipoles with
  /// `expansion`'s order. Threads: OpenMP. The particles' key order is order()[k] -> input index.
  /// Throws grove::Error when positions and charges differ in length, n_leaf < 1, or there are
  /// 2^31 particles or more.
  void build(std::span<const Vec3d> positions, std::span<const double> charges, int n_leaf,
             const MultiIndexSet& expansion);
  /// Takes a tree built elsewhere over the same positions and charges (their key-ordered copies are
  /// built.key_positions and key_charges when built.key_gathered, else gathered here by
  /// built.order), and gives this tree's previous arrays back in `built`, so that
  /// the next build reuses their memory. Throws grove::Error, with the tree unchanged (built's
  /// key-ordered arrays may have been written), when the parts do not fit together (the order's
  /// length, the generations' bounds, the multipoles' size, a cell's particle range, an order entry
  /// out of range, gathered copies of another length).
  void adopt(std::span<const Vec3d> positions, std::span<const double> charges, Built& built);
  /// Different for every build() and adopt() in the process: an engine that keeps a copy of the
  /// positions and multipoles knows by it whether they are still this tree's.
  std::uint64_t buildId() const { return build_id_; }

  /// The cells, breadth first (see generation()).
  std::span<const FmmCell> cells() const { return cells_; }
  /// order()[k]: the input index of the k-th particle in key order.
  std::span<const int> order() const { return order_; }
  /// Positions in key order.
  std::span<const Vec3d> positions() const { return pos_; }
  /// Charges in key order.
  std::span<const double> charges() const { return charge_; }
  /// The cells' multipoles, stride expansion.size() each, cell-major.
  std::span<const double> multipoles() const { return multipoles_; }
  /// Doubles per cell in multipoles() (the expansion's size()).
  std::size_t stride() const { return stride_; }
  /// Breadth-first generations: cells [generation(g), generation(g + 1)) are g splits below the
  /// root. A cell's children lie in the next generation, contiguous. The number of generations.
  int generationCount() const { return static_cast<int>(generation_begin_.size()) - 1; }
  /// The first cell of generation g; needs 0 <= g <= generationCount() (unchecked).
  int generation(int g) const { return generation_begin_[static_cast<std::size_t>(g)]; }
  /// The number of leaf cells.
  std::int64_t leafCount() const { return leaves_; }
  /// The bounding box of the particles (empty without particles).
  const Boxd& bounds() const { return bounds_; }

 private:
  void orderParticles(std::span<const Vec3d> positions, std::span<const double> charges);
  void splitCells(int n_leaf);
  void computeMoments(const MultiIndexSet& expansion);

  std::vector<FmmCell> cells_;
  std::vector<int> generation_begin_;
  std::vector<int> order_;
  std::vector<std::uint64_t> keys_;  // in key order
  std::vector<Vec3d> pos_;
  std::vector<double> charge_;
  std::vector<double> multipoles_;
  std::size_t stride_ = 0;
  std::int64_t leaves_ = 0;
  Boxd bounds_ = Boxd::empty();
  std::uint64_t build_id_ = 0;
};

namespace detail {
/// FmmTree::build's checks of its arguments, for every builder of the same tree (FmmTree::build,
/// DeviceFarField::buildTree): throws grove::Error naming `where` when positions and charges
/// differ in length, n_leaf < 1, or there are 2^31 particles or more.
void requireTreeArguments(std::span<const Vec3d> positions, std::span<const double> charges, int n_leaf,
                          const char* where);
}  // namespace detail

}  // namespace grove::fmm
