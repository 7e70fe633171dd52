#pragma once
/// @file
/// Per-stage device times of one GPU-resident force calculation (grove/force/resident_tree_long.cuh),
/// measured with CUDA events on the tree's stream. Host code may read it (no CUDA header).
#include <cstdint>

namespace grove::gpu {

/// What one ResidentTreeLong step cost (ResidentTreeLong::profile()): seconds of device time per
/// stage, in step order, and the step's counts. A REUSE_LIST step leaves the build stages at 0.
struct ResidentProfile {
  double root = 0;     ///< the root cell: bounding box reduce (and its allreduce on several ranks)
  double keys = 0;     ///< Morton keys
  double sort = 0;     ///< the radix sort by key
  double reorder = 0;  ///< FP gathered into key order, EPI/EPJ made
  double link = 0;     ///< cells linked level by level
  double moments = 0;  ///< moments, bottom-up
  double groups = 0;   ///< the groups
  double let_select = 0;  ///< several ranks: the LET decision and packing
  /// several ranks: the wait for the payloads (with the merged global tree all of their travel,
  /// with the default overlap only what the local walk did not hide)
  double let_exchange = 0;
  /// several ranks: the global or LET tree (keys, sort, link, moments; on REUSE_LIST the
  /// refreshed particles and moments)
  double global_tree = 0;
  double lists = 0;       ///< list-building walks (of the local or global tree, and of the LET tree)
  double force = 0;       ///< fused walk + force (MAKE_LIST), or the list kernels
  double write_back = 0;  ///< FP::copyFromForce
  double total = 0;       ///< first event to last, host waits included
  std::int64_t n_particles = 0;     ///< this rank's particles
  std::int64_t n_cells = 0;         ///< cells of the local tree
  std::int64_t n_groups = 0;        ///< groups walked
  std::int64_t n_global_cells = 0;  ///< several ranks: cells of the global tree
  std::int64_t let_ep_sent = 0;      ///< LET particles sent
  std::int64_t let_sp_sent = 0;      ///< LET superparticles sent
  std::int64_t let_ep_received = 0;  ///< LET particles received
  std::int64_t let_sp_received = 0;  ///< LET superparticles received
  std::int64_t let_peers = 0;  ///< ranks this one sends a LET to plus those that send it one
  std::int64_t interactions_ep = 0;  ///< particle-particle pairs evaluated
  std::int64_t interactions_sp = 0;  ///< particle-superparticle pairs evaluated
  std::int64_t list_entries = 0;     ///< kept j + s indices (list forms)
  std::int64_t device_bytes = 0;     ///< the tree's device memory after the step

  /// The local tree's build stages (one rank: the whole build).
  double build() const { return root + keys + sort + reorder + link + moments + groups; }
  /// The LET's stages: decision, exchange wait, global tree.
  double let() const { return let_select + let_exchange + global_tree; }
  /// All pairs evaluated.
  std::int64_t interactions() const { return interactions_ep + interactions_sp; }
};

/// The same for one step of the short-range tree (ResidentTreeShort::profile(),
/// grove/force/resident_tree_short.cuh). A REUSE_LIST step leaves the build and search
/// stages at 0.
struct ResidentShortProfile {
  double root = 0;     ///< the root cell
  double keys = 0;     ///< Morton keys
  double sort = 0;     ///< the radix sort by key
  double reorder = 0;  ///< FP gathered into key order, EPI/EPJ made
  double link = 0;     ///< cells linked
  double boxes = 0;    ///< cells' search boxes (and the periodic radius check)
  /// several ranks: the LET (reach boxes, selections, payload exchange with host MPI time)
  double let = 0;
  /// several ranks: the global j-tree (keys, sort, gather, link, search boxes; on REUSE_LIST the
  /// refreshed particles)
  double global_tree = 0;
  double search = 0;      ///< the walks (neighbour counts and lists), reductions, scan
  double force = 0;       ///< the user's kernel over the lists
  double write_back = 0;  ///< FP::copyFromForce
  double total = 0;       ///< first event to last, host waits included
  std::int64_t n_particles = 0;  ///< this rank's particles
  std::int64_t n_cells = 0;      ///< cells of the local tree
  std::int64_t neighbours = 0;   ///< list entries (i-j pairs, i itself included)
  std::int64_t let_sent = 0;        ///< several ranks: EPJs sent
  std::int64_t let_received = 0;    ///< several ranks: EPJs received
  std::int64_t let_own_images = 0;  ///< EPJs this rank selected for itself (its own periodic images)
  int search_walks = 0;      ///< tree walks of the search: 1 (fixed slots), 2 (count, write) or 3
  int slot_capacity = 0;     ///< entries per particle's slot (0: packed lists from a count)
  int search_lanes = 0;      ///< threads per particle in the search
  int kernel_lanes = 0;      ///< threads per particle in the kernel (cooperative sets: the search's)
  int rebuilt_for_skin = 0;  ///< 1: a REUSE_LIST step found its lists outgrown and searched again
  double skin_drift = 0;     ///< REUSE_LIST with a skin: 2 x largest displacement + largest radius growth
  /// 1: the build kept the cells of the last sort (setSortEvery), boxes refitted to the present
  /// positions: no keys, sort or reorder
  int refit = 0;
  /// 1: the step evaluated another tree's lists (calcForceAllAndWriteBackOnListsOf): no search
  int lists_borrowed = 0;
  std::int64_t device_bytes = 0;  ///< the tree's device memory after the step

  /// The build stages: root, keys, sort, reorder, link, boxes.
  double build() const { return root + keys + sort + reorder + link + boxes; }
};

}  // namespace grove::gpu
