#pragma once
/// @file
/// Per-stage seconds and interaction counts of one force calculation, printable as one JSON line.
#include <cstdint>
#include <string>

namespace grove {

/// Per-stage seconds and interaction counts of one force calculation (grove's own stages;
/// TreeStatistics::timeProfileOf maps them onto FDPS's). Seconds are wall clock (max over ranks
/// where reduced); counts are this rank's.
struct TreeProfile {
  // seconds (wall clock; max over ranks where reduced); each field is documented below the struct
  double root_cell = 0, keys = 0, sort = 0, reorder = 0, link = 0, local_moments = 0, let_build = 0,
         let_exchange = 0, global_tree = 0, global_moments = 0, groups = 0, walk = 0, kernel = 0, write_back = 0;
  // counts on this rank
  std::int64_t n_local = 0, n_groups = 0, n_cells = 0, n_ep_ep = 0, n_ep_sp = 0;
  std::int64_t let_ep_sent = 0, let_sp_sent = 0, let_ep_received = 0, let_sp_received = 0;

  /// The sum of the stage seconds.
  double total() const {
    return root_cell + keys + sort + reorder + link + local_moments + let_build + let_exchange + global_tree +
           global_moments + groups + walk + kernel + write_back;
  }
  /// EP-EP interactions per local particle (0 without local particles).
  double meanEpListLength() const { return n_local ? static_cast<double>(n_ep_ep) / static_cast<double>(n_local) : 0.0; }
  /// EP-SP interactions per local particle (0 without local particles).
  double meanSpListLength() const { return n_local ? static_cast<double>(n_ep_sp) / static_cast<double>(n_local) : 0.0; }
  /// One JSON line: {"seconds": {each stage, "total"}, "counts": {each count, the mean list
  /// lengths}}.
  std::string json() const;

  /// Walk and kernel interleave on every thread (group by group): the wall time of the loop is
  /// split in proportion to the thread time each took; the walk adds to any list building before
  /// (walk += its share), the kernel is set to its share.
  void splitWalkAndKernel(double wall, double walk_thread_seconds, double kernel_thread_seconds) {
    const double busy = walk_thread_seconds + kernel_thread_seconds;
    walk += busy > 0 ? wall * walk_thread_seconds / busy : 0.0;
    kernel = busy > 0 ? wall * kernel_thread_seconds / busy : 0.0;
  }
};

/// @var TreeProfile::root_cell
/// Seconds finding the root cell (the bounding cube of the particles).

/// @var TreeProfile::keys
/// Seconds computing the particles' Morton keys.

/// @var TreeProfile::sort
/// Seconds sorting by key.

/// @var TreeProfile::reorder
/// Seconds copying the particles into key order (EPI, EPJ, forces).

/// @var TreeProfile::link
/// Seconds linking the local tree's cells.

/// @var TreeProfile::local_moments
/// Seconds computing the local tree's moments.

/// @var TreeProfile::let_build
/// Seconds building the local essential trees (LETs) to send.

/// @var TreeProfile::let_exchange
/// Seconds exchanging LETs.

/// @var TreeProfile::global_tree
/// Seconds building the global tree (local particles and received LETs).

/// @var TreeProfile::global_moments
/// Seconds computing the global tree's moments.

/// @var TreeProfile::groups
/// Seconds making the interaction groups.

/// @var TreeProfile::walk
/// Seconds walking the tree (interaction lists).

/// @var TreeProfile::kernel
/// Seconds in the user's interaction kernels.

/// @var TreeProfile::write_back
/// Seconds writing forces back to the particles.

/// @var TreeProfile::n_local
/// Local particles.

/// @var TreeProfile::n_groups
/// Interaction groups walked.

/// @var TreeProfile::n_cells
/// Cells of the tree.

/// @var TreeProfile::n_ep_ep
/// EP-EP interactions (i-particle, j-particle pairs).

/// @var TreeProfile::n_ep_sp
/// EP-SP interactions (i-particle, superparticle pairs).

/// @var TreeProfile::let_ep_sent
/// EPJ sent in LETs.

/// @var TreeProfile::let_sp_sent
/// SPJ sent in LETs.

/// @var TreeProfile::let_ep_received
/// EPJ received in LETs.

/// @var TreeProfile::let_sp_received
/// SPJ received in LETs.

}  // namespace grove
