#pragma once
// Per-stage seconds and interaction counts of one force calculation, printable as one JSON line.
#include <cstdint>
#include <string>

namespace grove {

struct TreeProfile {
  // seconds (wall clock; max over ranks where reduced)
  double root_cell = 0, keys = 0, sort = 0, reorder = 0, link = 0, local_moments = 0, let_build = 0,
         let_exchange = 0, global_tree = 0, global_moments = 0, groups = 0, walk = 0, kernel = 0, write_back = 0;
  // counts on this rank
  std::int64_t n_local = 0, n_groups = 0, n_cells = 0, n_ep_ep = 0, n_ep_sp = 0;
  std::int64_t let_ep_sent = 0, let_sp_sent = 0, let_ep_received = 0, let_sp_received = 0;

  double total() const {
    return root_cell + keys + sort + reorder + link + local_moments + let_build + let_exchange + global_tree +
           global_moments + groups + walk + kernel + write_back;
  }
  double meanEpListLength() const { return n_local ? static_cast<double>(n_ep_ep) / static_cast<double>(n_local) : 0.0; }
  double meanSpListLength() const { return n_local ? static_cast<double>(n_ep_sp) / static_cast<double>(n_local) : 0.0; }
  std::string json() const;

  // Walk and kernel interleave on every thread (group by group): the wall time of the loop is
  // split in proportion to the thread time each took; the walk adds to any list building before.
  void splitWalkAndKernel(double wall, double walk_thread_seconds, double kernel_thread_seconds) {
    const double busy = walk_thread_seconds + kernel_thread_seconds;
    walk += busy > 0 ? wall * walk_thread_seconds / busy : 0.0;
    kernel = busy > 0 ? wall * kernel_thread_seconds / busy : 0.0;
  }
};

}  // namespace grove
