#pragma once
/// @file
/// Moments and superparticles of long-range trees with a neighbour search (FDPS 7.1's
/// MomentMonopoleScatter, MomentQuadrupoleScatter, MomentMonopoleSymmetry,
/// MomentQuadrupoleSymmetry and their SPJ*): the centre-of-mass monopole / quadrupole of
/// tree/moments.hpp, and in the moment also the cell's bounding boxes, vertex_in_ of its
/// particles' positions and vertex_out_ of their search spheres (EPJ::getRSearch), under FDPS's
/// names. The walks read the tree's own search boxes (walk/long_search.hpp), so a user's moment
/// for WithScatterSearch / WithSymmetrySearch needs only the ordinary moment contract; these
/// boxes are for programs that read them. Superparticles carry no boxes (as in FDPS): a cell sent
/// whole never holds a particle within search reach of its receiver.
#include "grove/core/box.hpp"
#include "grove/core/particle_traits.hpp"
#include "grove/tree/moments.hpp"

namespace grove {

/// A moment Base (MomentMonopole or MomentQuadrupole) that also keeps the bounding boxes of its
/// particles' positions and search spheres, accumulated in pass 1.
template <class Base>
struct MomentWithSearchBoxes : Base {
  Boxd vertex_out_ = Boxd::empty();  ///< bounding box of the particles' search spheres (EPJ with getRSearch only)
  Boxd vertex_in_ = Boxd::empty();   ///< bounding box of the particles' positions

  /// Empty moment, empty boxes.
  void init() { *this = {}; }
  /// The search-sphere box.
  Boxd getVertexOut() const { return vertex_out_; }
  /// The position box.
  Boxd getVertexIn() const { return vertex_in_; }
  /// Pass 1: adds p to Base's moment and to the boxes.
  template <ChargedParticle EPJ>
  void accumulateAtLeaf(const EPJ& p) {
    Base::accumulateAtLeaf(p);
    vertex_in_.merge(positionOf(p));
    if constexpr (HasRSearch<EPJ>) vertex_out_.merge(searchBoxOf(p));
  }
  /// Pass 1: adds a child's moment and boxes.
  void accumulate(const MomentWithSearchBoxes& c) {
    Base::accumulate(c);
    vertex_in_.merge(c.vertex_in_);
    vertex_out_.merge(c.vertex_out_);
  }
  /// Pass 2: Base's pass 2 only (the boxes are complete after pass 1).
  void accumulate2(const MomentWithSearchBoxes& c) { Base::accumulate2(c); }
};

/// FDPS's MomentMonopoleScatter: centre-of-mass monopole with search boxes.
struct MomentMonopoleScatter : MomentWithSearchBoxes<MomentMonopole> {};
/// FDPS's MomentQuadrupoleScatter: centre-of-mass quadrupole with search boxes.
struct MomentQuadrupoleScatter : MomentWithSearchBoxes<MomentQuadrupole> {};
/// FDPS gives the symmetry moments their own names; they hold the same.
using MomentMonopoleSymmetry = MomentMonopoleScatter;
/// The same as MomentQuadrupoleScatter (FDPS's name for symmetry search).
using MomentQuadrupoleSymmetry = MomentQuadrupoleScatter;

/// Superparticle of MomentMonopoleScatter (no boxes).
using SPJMonopoleScatter = SPJMonopoleOf<MomentMonopoleScatter>;
/// Superparticle of MomentQuadrupoleScatter (no boxes).
using SPJQuadrupoleScatter = SPJQuadrupoleOf<MomentQuadrupoleScatter>;

/// The same as SPJMonopoleScatter (FDPS's name for symmetry search).
using SPJMonopoleSymmetry = SPJMonopoleScatter;
/// The same as SPJQuadrupoleScatter (FDPS's name for symmetry search).
using SPJQuadrupoleSymmetry = SPJQuadrupoleScatter;

}  // namespace grove
