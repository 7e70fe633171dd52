#pragma once
// A partition of the root domain into one box per rank, stored as a tree of axis-aligned cuts.
// Multisection is a three-level tree (x slabs, y columns, z cells); ORB is a binary tree. One
// lookup serves both: descend, at each node choosing the child whose [cut[i-1], cut[i]) holds
// the coordinate. Boxes are half-open, so a point on a cut belongs to the upper side.
#include <span>
#include <vector>

#include "grove/core/box.hpp"

namespace grove {

struct CutNode {
  int axis = -1;          // 0, 1, 2; -1 marks a leaf
  int first_child = -1;   // children are stored contiguously
  int child_count = 0;
  int first_cut = -1;     // child_count - 1 cut positions start here in CutTree::cuts
  int rank = -1;          // the owner, for a leaf
};

struct CutTree {
  std::vector<CutNode> nodes;  // nodes[0] is the root
  std::vector<double> cuts;

  bool empty() const { return nodes.empty(); }
  // The rank whose box holds pos. pos must lie inside the root box given to boxes().
  int ownerOf(const Vec3d& pos) const;
  // Each rank's box, given the root box (faces may be infinite). Indexed by rank.
  std::vector<Boxd> boxes(const Boxd& root, int rank_count) const;
  // Same node structure: cuts of one can be blended into the other.
  bool sameShapeAs(const CutTree& other) const;
  // cuts = coef * cuts + (1 - coef) * previous.cuts (FDPS's exponential moving average).
  void blendWith(const CutTree& previous, double coef);
};

}  // namespace grove
