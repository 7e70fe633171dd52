#pragma once
// Host references for the GPU-resident pipeline's tests (resident_tree_test.cu), compiled by the
// host compiler (resident_reference.cpp): nvcc cannot include all of grove, so the test reaches
// the CPU tree, its stages and direct summation through these plain functions.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "gravity_particles.hpp"
#include "search_probe.hpp"
#include "grove/core/box.hpp"
#include "grove/tree/moments.hpp"
#include "grove/tree/morton.hpp"
#include "grove/tree/tree_cells.hpp"
#include "grove/walk/opening_criterion.hpp"

namespace resident_test {

// Bodies with ids 0 .. n-1, total mass 1, zero velocities.
std::vector<user::Body> coldSphere(std::size_t n, std::uint64_t seed);
std::vector<user::Body> plummerSphere(std::size_t n, std::uint64_t seed);

// The host's build stages on the bodies (grove's own functions, as TreeForForceLong runs them).
struct HostBuild {
  grove::RootCell root;
  std::vector<grove::MortonKey> keys;       // key order
  std::vector<std::uint32_t> order;         // key position -> input index
  std::vector<grove::TreeCell> cells;
  std::vector<std::uint32_t> level_begin;
  std::vector<std::uint64_t> groups;        // (first << 32 | count), Morton order
  std::vector<grove::Boxd> group_boxes;     // of the EPI positions
  std::vector<grove::MomentMonopole> monopoles;
  std::vector<grove::MomentQuadrupole> quadrupoles;
};
HostBuild hostBuild(const std::vector<user::Body>& bodies, int n_leaf_limit, int n_group_limit);

// The host's LET decision (walkTree with the root not forced open, as planLet) on the tree of
// hostBuild(bodies, n_leaf_limit, ...) with monopole centres, for each target box: the cells whose
// superparticles it gets and the particles (key positions) of the leaves it opens, each sorted.
struct LetSelection {
  std::vector<int> cells, particles;
};
std::vector<LetSelection> hostLetSelection(const std::vector<user::Body>& bodies, double theta, int n_leaf_limit,
                                           const std::vector<grove::Boxd>& targets);

// Forces of grove's CPU tree (TreeForForceLong<...>::Monopole or ::Quadrupole with the user
// template's CPU kernels, the opening rule `opening`), indexed by body id.
std::vector<user::GravityForce> hostTreeForces(const std::vector<user::Body>& bodies, double theta, int n_leaf_limit,
                                               int n_group_limit, float eps2, bool quadrupole = false,
                                               grove::OpeningRule opening = grove::OpeningRule::kFdps);

// Several ranks (collective over the world): grove's CPU tree on `mine`, this rank's bodies as
// they are (no exchange), with a MAKE_LIST step, or (reuse_drift > 0) a MAKE_LIST_FOR_REUSE step,
// every body drifted by reuse_drift * vel, then a REUSE_LIST step. Forces in the order of `mine`;
// the LET and interaction counts of the (last) step.
struct HostRankForces {
  std::vector<user::GravityForce> force;
  std::int64_t let_ep_sent = 0, let_sp_sent = 0, let_ep_received = 0, let_sp_received = 0;
  std::int64_t interactions_ep = 0, interactions_sp = 0;
};
HostRankForces hostTreeForcesOnRanks(const std::vector<user::Body>& mine, double theta, int n_leaf_limit,
                                     int n_group_limit, float eps2, bool quadrupole, double reuse_drift = 0.0);

// Long-range trees with a search (collective over the world): bodies with search radii
// (searchRadiusOf(id)) at the positions of plummerSphere(n, seed); grove's CPU search tree
// (TreeForForceLong<...>::MonopoleWithScatterSearch / WithSymmetrySearch, mode) on `mine` as they
// are, with the probe kernels. Probes in the order of `mine`; LET and interaction counts.
std::vector<search_test::Body> searchBodies(std::size_t n, std::uint64_t seed);
struct HostSearchResult {
  std::vector<search_test::Probe> probe;
  std::int64_t let_ep_sent = 0, let_sp_sent = 0, interactions_ep = 0, interactions_sp = 0;
};
HostSearchResult hostSearchTree(const std::vector<search_test::Body>& mine, grove::LongSearchMode mode, double theta,
                                int n_leaf_limit, int n_group_limit);
// Each body's neighbour count by brute force over all (i itself included).
std::vector<int> bruteForceNeighbours(const std::vector<search_test::Body>& mine,
                                      const std::vector<search_test::Body>& all, grove::LongSearchMode mode);

// Accelerations by direct summation in double for the bodies at `sample` (indices into bodies).
std::vector<grove::Vec3d> directAccelerations(const std::vector<user::Body>& bodies,
                                              const std::vector<std::size_t>& sample, double eps2);

}  // namespace resident_test
