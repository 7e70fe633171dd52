#pragma once
/// @file
/// A partition of the root domain into one box per rank, stored as a tree of axis-aligned cuts.
/// Multisection is a three-level tree (x slabs, y columns, z cells); ORB is a binary tree. One
/// lookup serves both: descend, at each node choosing the child whose [cut[i-1], cut[i]) holds
/// the coordinate. Boxes are half-open, so a point on a cut belongs to the upper side.
#include <span>
#include <vector>

#include "grove/core/box.hpp"

namespace grove {

/// One node of a CutTree: an inner node cuts its cell along `axis` into child_count children;
/// a leaf is one rank's box.
struct CutNode {
  int axis = -1;          ///< 0, 1, 2 (x, y, z); -1 marks a leaf
  int first_child = -1;   ///< index in CutTree::nodes of the first child; children are stored contiguously
  int child_count = 0;    ///< number of children (0 for a leaf)
  int first_cut = -1;     ///< child_count - 1 increasing cut positions start here in CutTree::cuts
  int rank = -1;          ///< the owner, for a leaf
};

/// A partition of the root domain into one box per rank, as a tree of cuts (see the file).
struct CutTree {
  std::vector<CutNode> nodes;  ///< nodes[0] is the root
  std::vector<double> cuts;    ///< the cut positions of every inner node (CutNode::first_cut)

  /// Whether the tree has no nodes (no decomposition yet).
  bool empty() const { return nodes.empty(); }
  /// The rank whose box holds pos, in O(depth * log cuts per node). Needs: not empty(); pos
  /// inside the root box given to boxes().
  int ownerOf(const Vec3d& pos) const;
  /// Each rank's box, given the root box (faces may be infinite). Indexed by rank, rank_count
  /// entries; a rank with no leaf gets Box::empty().
  std::vector<Boxd> boxes(const Boxd& root, int rank_count) const;
  /// Whether both trees have the same node structure (nodes equal, as many cuts): then cuts of
  /// one can be blended into the other.
  bool sameShapeAs(const CutTree& other) const;
  /// cuts = coef * cuts + (1 - coef) * previous.cuts (FDPS's exponential moving average). Needs:
  /// sameShapeAs(previous); coef in [0, 1] keeps every node's cuts sorted.
  void blendWith(const CutTree& previous, double coef);
};

}  // namespace grove
