#pragma once
/// @file
/// The plan of the FMM's M2L kernel on a GPU (grove::fmm::DeviceFarField): the tables it reads,
/// built on the host from a MultiIndexSet without CUDA, so that a host test can run the plan
/// step by step against MultiIndexSet::multipoleToLocal. Internal to grove (namespace detail).
///
/// The kernel evaluates the harmonic form (MultiIndexSet::harmonicIndices()) for one target cell
/// and kM2lLanes sources at a time:
/// 1. the folded multipoles of the sources (fold tables; MultiIndexSet::foldMultipole);
/// 2. the rows of D = m! T with kz <= 2, numbered densely, by the Taylor recurrence over the
///    dense lower neighbours, scaled by k!;
/// 3. the contraction n! L_n = sum_j D_{n+k_j} folded_j for the harmonic n, as work items over
///    bundles of kM2lBundle coefficients (each group of kM2lLanes threads takes its share);
/// 4. after the last source, the partial sums added per harmonic n in the order of `parts`, and
///    the other n! L_n from the trace identity, a kz level at a time (`unfold`).
#include <array>
#include <cstdint>
#include <vector>

#include "grove/fmm/cartesian_expansion.hpp"

namespace grove::fmm::detail {

/// Sources per chunk of a target's M2L list (a thread's lane is its source's).
inline constexpr int kM2lLanes = 16;
/// Threads a block: shared memory caps the blocks a multiprocessor holds, so more threads a
/// block are more warps at work (128 took 27 % longer at 2^22, run 187).
inline constexpr int kM2lThreads = 256;
/// Groups of kM2lLanes threads a block; each takes a share of the work items.
inline constexpr int kM2lGroups = kM2lThreads / kM2lLanes;
static_assert(kM2lThreads % kM2lLanes == 0, "the M2L's groups fill its blocks");
/// Local coefficients a bundle holds: per j, 4 loads of D, one of M and one of the rows serve 4
/// multiply-adds, against 3 loads a multiply-add when each n took its own terms (the M2L at
/// 2^22, order 8: 0.216 -> 0.181 s on an H200, run 191).
inline constexpr int kM2lBundle = 4;
/// Harmonic indices at the highest order: the folded multipoles' stride.
inline constexpr int kMaxHarmonic = (kMaxOrder + 1) * (kMaxOrder + 1);
/// Rows of D with kz <= 2 at the highest order (MultiIndexSet::harmonicTaylorRows()).
inline constexpr int kMaxTaylorRows =
    (kMaxOrder + 1) * (kMaxOrder + 2) / 2 + kMaxOrder * (kMaxOrder + 1) / 2 + (kMaxOrder - 1) * kMaxOrder / 2;
/// Bundles at the highest order: the harmonic indices kM2lBundle at a time.
inline constexpr int kMaxBundles = (kMaxHarmonic + kM2lBundle - 1) / kM2lBundle;
/// Work items: each bundle once, and at most one more where a group's share ends inside one.
inline constexpr int kMaxItems = kMaxBundles + kM2lGroups;

/// One order's plan (buildM2lPlan).
struct M2lPlan {
  /// Harmonic indices: (order + 1)^2.
  int harmonic() const { return static_cast<int>(harmonic_position.size()); }
  /// Rows of D computed: those with kz <= 2, numbered densely by degree; row taylorCount() is the
  /// zero row.
  int taylorCount() const { return static_cast<int>(taylor_factorial.size()); }
  /// Per harmonic index: its position among the coefficients of degree <= order.
  std::vector<std::uint16_t> harmonic_position;
  /// Per harmonic index j: its fold terms [fold_begin[j], fold_begin[j + 1]); harmonic + 1 offsets.
  std::vector<int> fold_begin;
  /// Per fold term: the position k of M_k (folded_j += fold_weight * M_k).
  std::vector<std::uint16_t> fold_source;
  /// Per fold term: its weight (1 / k! and the trace identity's signs and counts).
  std::vector<double> fold_weight;
  /// Per degree 0 ... order + 1: its first dense row.
  std::vector<int> taylor_row_begin;
  /// 6 per dense row: its lower neighbours k - e_x, k - e_y, k - e_z, k - 2e_x, k - 2e_y, k - 2e_z
  /// as dense rows (taylorCount() where absent).
  std::vector<int> taylor_lower;
  /// Per dense row: k! of its index (D_k = k! T_k).
  std::vector<double> taylor_factorial;
  /// Per kz = 2 ... order + 1: its first unfold step (order offsets; the last ends them).
  std::vector<int> unfold_begin;
  /// Unfold steps (n, a, b, 0): s_n = -s_a - s_b, positions, grouped by the kz of n.
  std::vector<std::array<std::uint16_t, 4>> unfold;
  /// Per (bundle, j): the dense rows n + k_j of D for the bundle's kM2lBundle slots (the zero row
  /// in empty slots and past a slot's own j).
  std::vector<std::array<std::uint16_t, 4>> bundle_rows;
  /// Per work item: its first bundle_rows entry, their count, its first j, and 0.
  std::vector<std::array<int, 4>> items;
  /// Per group: its work items [group_items[g], group_items[g + 1]); kM2lGroups + 1 offsets.
  std::vector<int> group_items;
  /// Per harmonic index n: its partial sums [part_begin[n], part_begin[n + 1]) in `parts`.
  std::vector<int> part_begin;
  /// Partial sums, item * kM2lBundle + slot, in the order they are added.
  std::vector<int> parts;
};

/// The plan of the M2L kernel for expansion e's order (throws grove::Error if a table would pass
/// its bound: kMaxHarmonic, kMaxTaylorRows, kMaxItems).
M2lPlan buildM2lPlan(const MultiIndexSet& e);

}  // namespace grove::fmm::detail
