#pragma once
/// @file
/// The dual tree traversal of grove's fast multipole method (Dehnen 2000, 2002): pairs of cells are
/// visited from the root down; a pair that passes the acceptance criterion
///
///     r_A + r_B < theta |z_A - z_B|        (r: expansion radius, z: expansion centre)
///
/// interacts through multipole-to-local expansions (M2L), a pair of leaves through their particles
/// (P2P), and any other pair is split by opening the larger cell. Within a rank the traversal is
/// mutual: every cell pair is visited once and yields both directions. Against cells received from
/// another rank (grove/fmm/fmm_let.hpp) it is directed (only the local cells gain): a received cell
/// that came without its contents is evaluated at the target leaf's particles (M2P) once the target
/// cannot be split further.
///
/// The traversal does not evaluate anything: it writes interaction lists, grouped by target cell,
/// which the evaluation then runs in parallel over targets (and which a device can take in batches).
/// Each target's sources are sorted, so results do not depend on the number of threads.
#include <cstdint>
#include <span>
#include <vector>

#include "grove/fmm/fmm_tree.hpp"

namespace grove::fmm {

/// Items grouped by target: items[offsets[t] .. offsets[t + 1]) belong to target t.
struct CsrList {
  std::vector<std::int64_t> offsets;  ///< one per target plus one; offsets[0] = 0
  std::vector<int> items;             ///< the items of every target, target by target
  /// The items of `target`; needs 0 <= target < offsets.size() - 1 (unchecked).
  std::span<const int> of(int target) const {
    const auto t = static_cast<std::size_t>(target);
    return {items.data() + offsets[t], static_cast<std::size_t>(offsets[t + 1] - offsets[t])};
  }
  /// Items over all targets.
  std::int64_t size() const { return static_cast<std::int64_t>(items.size()); }
};

/// The output of traverse(): per target cell, its sources (indices into SourceCells::cells),
/// each target's sorted.
struct InteractionLists {
  CsrList m2l;  ///< per target cell: source cells whose multipoles add to its local expansion
  CsrList p2p;  ///< per target leaf: source leaves whose particles act on its particles (itself too)
  CsrList m2p;  ///< per target leaf: received contents-less cells evaluated at its particles
};

/// The cells that act as sources: the local tree's cells first (indices as in the tree, which are
/// also the targets), then the cells received from other ranks, each rank's tree at its root index.
/// Particle ranges [begin, end) of received cells index the received particles, placed after the
/// local ones; child indices are absolute. The local cells' multipoles stay in the tree (viewed,
/// not copied: at order 8 they are the largest array of a step); the received ones follow here.
struct SourceCells {
  std::vector<FmmCell> cells;  ///< local cells, then received cells
  std::span<const double> local_multipoles;  ///< the local tree's, stride per cell
  std::vector<double> remote_multipoles;     ///< the received cells' (see remote_multipole_rows), same stride
  /// Per received cell (cells [local count, cells.size())), where its multipole is: a row r >= 0
  /// of remote_multipoles, or, for r < 0, local cell -1 - r's (a rank's own periodic images are
  /// the tree's cells moved, with the tree's multipoles: viewed, not copied). Empty: received
  /// cell c's is row c - local count.
  std::vector<int> remote_multipole_rows;
  std::size_t stride = 0;  ///< doubles per multipole (the expansion's size())
  std::vector<int> remote_roots;  ///< the index in cells of each received tree's root

  /// The sources of a tree alone (no cells received yet): its cells copied, its multipoles viewed.
  static SourceCells ofTree(const FmmTree& tree) {
    SourceCells sources;
    sources.cells.assign(tree.cells().begin(), tree.cells().end());
    sources.local_multipoles = tree.multipoles();
    sources.stride = tree.stride();
    return sources;
  }

  /// The number of local cells (local_multipoles.size() / stride; needs stride > 0).
  std::size_t localCount() const { return local_multipoles.size() / stride; }
  /// The multipole of `cell` (stride doubles), local or received; the index is not checked.
  const double* multipole(int cell) const {
    const auto c = static_cast<std::size_t>(cell), local = localCount();
    if (c < local) return local_multipoles.data() + c * stride;
    const std::ptrdiff_t row = remote_multipole_rows.empty() ? static_cast<std::ptrdiff_t>(c - local)
                                                               : remote_multipole_rows[c - local];
    return row >= 0 ? remote_multipoles.data() + static_cast<std::size_t>(row) * stride
                    : local_multipoles.data() + static_cast<std::size_t>(-1 - row) * stride;
  }
};

/// Throws grove::Error (naming `where`) unless theta is in (0, 1) and 1 <= target_count <= the
/// source cells: what every traversal, on the host or a device, needs.
void checkTraversal(const SourceCells& sources, int target_count, double theta, const char* where);

/// Builds the lists for targets = cells [0, target_count) of `sources` (the local tree). theta in
/// (0, 1). Not collective: the received cells must already be in `sources`. Throws grove::Error
/// as checkTraversal() does.
InteractionLists traverse(const SourceCells& sources, int target_count, double theta);

}  // namespace grove::fmm
