#include "grove/domain/cut_tree.hpp"

#include <algorithm>

#include "grove/core/error.hpp"

namespace grove {

int CutTree::ownerOf(const Vec3d& pos) const {
  int node = 0;
  while (nodes[static_cast<std::size_t>(node)].axis >= 0) {
    const CutNode& n = nodes[static_cast<std::size_t>(node)];
    const auto first = cuts.begin() + n.first_cut;
    const auto last = first + (n.child_count - 1);
    const auto child = std::upper_bound(first, last, pos[static_cast<std::size_t>(n.axis)]) - first;
    node = n.first_child + static_cast<int>(child);
  }
  return nodes[static_cast<std::size_t>(node)].rank;
}

std::vector<Boxd> CutTree::boxes(const Boxd& root, int rank_count) const {
  std::vector<Boxd> out(static_cast<std::size_t>(rank_count), Boxd::empty());
  struct Pending {
    int node;
    Boxd box;
  };
  std::vector<Pending> stack{{0, root}};
  while (!stack.empty()) {
    const Pending p = stack.back();
    stack.pop_back();
    const CutNode& n = nodes[static_cast<std::size_t>(p.node)];
    if (n.axis < 0) {
      require(n.rank >= 0 && n.rank < rank_count, "CutTree", "leaf names rank {} of {}", n.rank, rank_count);
      out[static_cast<std::size_t>(n.rank)] = p.box;
      continue;
    }
    const auto axis = static_cast<std::size_t>(n.axis);
    for (int c = 0; c < n.child_count; ++c) {
      Boxd child = p.box;
      if (c > 0) child.low[axis] = cuts[static_cast<std::size_t>(n.first_cut + c - 1)];
      if (c < n.child_count - 1) child.high[axis] = cuts[static_cast<std::size_t>(n.first_cut + c)];
      stack.push_back({n.first_child + c, child});
    }
  }
  return out;
}

bool CutTree::sameShapeAs(const CutTree& other) const {
  if (nodes.size() != other.nodes.size() || cuts.size() != other.cuts.size()) return false;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const CutNode &a = nodes[i], &b = other.nodes[i];
    if (a.axis != b.axis || a.first_child != b.first_child || a.child_count != b.child_count ||
        a.first_cut != b.first_cut || a.rank != b.rank)
      return false;
  }
  return true;
}

void CutTree::blendWith(const CutTree& previous, double coef) {
  // A convex combination of two sorted cut lists is sorted, so every node stays valid.
  for (std::size_t i = 0; i < cuts.size(); ++i) cuts[i] = coef * cuts[i] + (1.0 - coef) * previous.cuts[i];
}

}  // namespace grove
