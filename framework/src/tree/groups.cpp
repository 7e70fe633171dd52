#include "grove/tree/groups.hpp"

namespace grove {

std::vector<InteractionGroup> makeGroups(Cpu, const TreeShape& shape, int n_group_limit) {
  std::vector<InteractionGroup> groups;
  if (shape.cells.empty() || shape.cells[0].ep_count == 0) return groups;
  std::vector<std::int32_t> stack{0};
  while (!stack.empty()) {
    const TreeCell& c = shape.cells[static_cast<std::size_t>(stack.back())];
    stack.pop_back();
    if (c.ep_count == 0) continue;
    if (c.isLeaf() || c.ep_count <= static_cast<std::uint32_t>(n_group_limit)) {
      groups.push_back({c.ep_first, c.ep_count, Boxd::empty()});
      continue;
    }
    for (int k = c.child_count - 1; k >= 0; --k) stack.push_back(c.child_first + k);  // Morton order out
  }
  return groups;
}

}  // namespace grove
