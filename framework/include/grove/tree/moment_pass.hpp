#pragma once
/// @file
/// Bottom-up moments of every cell: pass 1 (charges and expansion centres) over all levels,
/// deepest first, then pass 2 (terms about those centres). Each level is a parallel loop. Moment
/// types without a second pass (momentHasSecondPass) take one sweep. on_final(c, moment) sees each
/// cell once its moment is complete, in the last sweep, while the moment is still in cache.
#include <span>
#include <utility>
#include <vector>

#include "grove/core/execution.hpp"
#include "grove/tree/moments.hpp"
#include "grove/tree/tree_cells.hpp"

namespace grove {

/// One cell's moment in pass 1 or 2, from its particles (a leaf: its EPJ and SPJ) or its
/// children's moments: the body of the bottom-up sweep, on the host (below) and on the device
/// (grove/tree/tree_build_gpu.cuh). Pass 1 starts from init() and ends with set(); pass 2 starts from
/// `previous` (the cell's pass-1 moment). Needs the children's moments of this pass in
/// moments[child_first, child_first + child_count). Accumulated in a local copy and returned:
/// through a reference the compiler would store every partial sum back to memory.
template <class Moment, class EPJ, class SPJ>
GROVE_HD_TEMPLATE Moment momentOfCell(int pass, const TreeCell& cell, const EPJ* epj, const SPJ* spj,
                                      const Moment* moments, const Moment& previous) {
  Moment m;
  if (pass == 1) m.init();
  else m = previous;
  if (cell.isLeaf()) {
    for (std::uint32_t i = cell.ep_first; i < cell.ep_first + cell.ep_count; ++i) {
      if constexpr (requires { m.accumulateAtLeaf(epj[i]); m.accumulateAtLeaf2(epj[i]); }) {
        if (pass == 1) m.accumulateAtLeaf(epj[i]);
        else m.accumulateAtLeaf2(epj[i]);
      } else {
        // An FDPS-style moment taking `EPJ&`: it gets a copy, so the tree's particle stays as it is.
        EPJ particle = epj[i];
        if (pass == 1) m.accumulateAtLeaf(particle);
        else m.accumulateAtLeaf2(particle);
      }
    }
    for (std::uint32_t i = cell.sp_first; i < cell.sp_first + cell.sp_count; ++i) {
      if (pass == 1) m.accumulate(spj[i].convertToMoment());
      else m.accumulate2(spj[i].convertToMoment());
    }
  } else {
    for (int k = 0; k < cell.child_count; ++k) {
      const Moment& child = moments[cell.child_first + k];
      if (pass == 1) m.accumulate(child);
      else m.accumulate2(child);
    }
  }
  if (pass == 1) m.set();
  return m;
}

/// The moments of every cell of shape into moments (resized to the cell count, indexed like
/// shape.cells), from the key-sorted epj and spj the cells index; on_final(c, moment) is called
/// for each cell in the last sweep, concurrently for the cells of one level.
template <class Moment, class EPJ, class SPJ, class OnFinal>
void computeMoments(Cpu, const TreeShape& shape, std::span<const EPJ> epj, std::span<const SPJ> spj,
                    std::vector<Moment>& moments, OnFinal&& on_final) {
  moments.resize(shape.cells.size());
  constexpr int kPasses = momentHasSecondPass<Moment>() ? 2 : 1;
  for (int pass = 1; pass <= kPasses; ++pass) {
    forEachCellBottomUp(shape, [&](std::size_t c, const TreeCell& cell) {
      const Moment m = momentOfCell<Moment>(pass, cell, epj.data(), spj.data(), moments.data(), moments[c]);
      moments[c] = m;
      if (pass == kPasses) on_final(c, std::as_const(m));
    });
  }
}

/// computeMoments without an on_final callback.
template <class Moment, class EPJ, class SPJ>
void computeMoments(Cpu policy, const TreeShape& shape, std::span<const EPJ> epj, std::span<const SPJ> spj,
                    std::vector<Moment>& moments) {
  computeMoments(policy, shape, epj, spj, moments, [](std::size_t, const Moment&) {});
}

}  // namespace grove
