#pragma once
// Moments and superparticles of long-range trees with a neighbour search (FDPS 7.1's
// MomentMonopoleScatter, MomentQuadrupoleScatter, MomentMonopoleSymmetry,
// MomentQuadrupoleSymmetry and their SPJ*): the centre-of-mass monopole / quadrupole of
// tree/moments.hpp, and in the moment also the cell's bounding boxes, vertex_in_ of its
// particles' positions and vertex_out_ of their search spheres (EPJ::getRSearch), under FDPS's
// names. The walks read the tree's own search boxes (walk/long_search.hpp), so a user's moment
// for WithScatterSearch / WithSymmetrySearch needs only the ordinary moment contract; these
// boxes are for programs that read them. Superparticles carry no boxes (as in FDPS): a cell sent
// whole never holds a particle within search reach of its receiver.
#include "grove/core/box.hpp"
#include "grove/core/particle_traits.hpp"
#include "grove/tree/moments.hpp"

namespace grove {

template <class Base>
struct MomentWithSearchBoxes : Base {
  Boxd vertex_out_ = Boxd::empty();  // search spheres
  Boxd vertex_in_ = Boxd::empty();   // positions

  void init() { *this = {}; }
  Boxd getVertexOut() const { return vertex_out_; }
  Boxd getVertexIn() const { return vertex_in_; }
  template <ChargedParticle EPJ>
  void accumulateAtLeaf(const EPJ& p) {
    Base::accumulateAtLeaf(p);
    vertex_in_.merge(positionOf(p));
    if constexpr (HasRSearch<EPJ>) vertex_out_.merge(searchBoxOf(p));
  }
  void accumulate(const MomentWithSearchBoxes& c) {
    Base::accumulate(c);
    vertex_in_.merge(c.vertex_in_);
    vertex_out_.merge(c.vertex_out_);
  }
  void accumulate2(const MomentWithSearchBoxes& c) { Base::accumulate2(c); }
};

struct MomentMonopoleScatter : MomentWithSearchBoxes<MomentMonopole> {};
struct MomentQuadrupoleScatter : MomentWithSearchBoxes<MomentQuadrupole> {};
// FDPS gives the symmetry moments their own names; they hold the same.
using MomentMonopoleSymmetry = MomentMonopoleScatter;
using MomentQuadrupoleSymmetry = MomentQuadrupoleScatter;

using SPJMonopoleScatter = SPJMonopoleOf<MomentMonopoleScatter>;
using SPJQuadrupoleScatter = SPJQuadrupoleOf<MomentQuadrupoleScatter>;

using SPJMonopoleSymmetry = SPJMonopoleScatter;
using SPJQuadrupoleSymmetry = SPJQuadrupoleScatter;

}  // namespace grove
