#pragma once
/// @file
/// The far field of grove's fast multipole method: the interaction lists' M2L work into the local
/// cells' expansions (threads over target cells), L2L down the tree (a generation at a time), then
/// at each particle L2P plus the M2P terms of received contents-less cells. The result is, for each
/// particle of the tree in key order, phi = sum over far sources of q / r and its gradient (the
/// near sources, the P2P lists, are the user kernel's).
#include <span>

#include "grove/core/vec3.hpp"
#include "grove/fmm/cartesian_expansion.hpp"
#include "grove/fmm/dual_traversal.hpp"
#include "grove/fmm/fmm_tree.hpp"

namespace grove::fmm {

/// Wall-clock seconds of evaluateFarField()'s two phases.
struct FarFieldSeconds {
  /// @var m2l
  /// Seconds of the M2L work.
  /// @var downward
  /// Seconds of L2L, L2P and M2P.
  double m2l = 0.0, downward = 0.0;  // downward: L2L, L2P and M2P
};

/// Throws grove::Error (naming `where`) unless phi and gradient have one entry per particle of the
/// tree and sources hold a multipole of `expansion`'s size for every cell: what every far field, on
/// the host or a device, needs.
void checkFarField(const FmmTree& tree, const SourceCells& sources, const MultiIndexSet& expansion,
                   std::span<const double> phi, std::span<const Vec3d> gradient, const char* where);

/// The far field of `lists` (from traverse() over `sources`) at the tree's particles. phi and
/// gradient have one entry per particle of the tree (key order); they are overwritten. Returns
/// the seconds of its phases. Runs on this rank's OpenMP threads; not collective. Throws
/// grove::Error as checkFarField() does.
FarFieldSeconds evaluateFarField(const FmmTree& tree, const SourceCells& sources, const InteractionLists& lists,
                                 const MultiIndexSet& expansion, std::span<double> phi, std::span<Vec3d> gradient);

}  // namespace grove::fmm
