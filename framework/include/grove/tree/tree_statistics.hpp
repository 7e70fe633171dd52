#pragma once
/// @file
/// FDPS's statistics of a tree: interaction and walk counts and stage times, accumulated over
/// force calculations until cleared (clearNumberOfInteraction, clearTimeProfile, clearCounterAll),
/// as FDPS's TreeForForce keeps them. The detailed per-call profile stays in profile().
#include <cstdint>

#include "grove/comm/comm.hpp"
#include "grove/core/time_profile.hpp"
#include "grove/tree/profile.hpp"

namespace grove {

/// FDPS's statistics of a tree (a base of the force trees): counts and stage times summed over
/// the force calculations since the last clear, the current one included.
class TreeStatistics {
 public:
  /// This rank's EP-EP interactions since the last clear. Not collective.
  std::int64_t getNumberOfInteractionEPEPLocal() const { return counted(totals_.n_ep_ep, profile_.n_ep_ep); }
  /// This rank's EP-SP interactions since the last clear. Not collective.
  std::int64_t getNumberOfInteractionEPSPLocal() const { return counted(totals_.n_ep_sp, profile_.n_ep_sp); }
  /// Walks: interaction groups (FDPS's i-particle groups) walked on this rank since the last
  /// clear. Not collective.
  std::int64_t getNumberOfWalkLocal() const { return counted(totals_.n_walk, profile_.n_groups); }
  /// getNumberOfInteractionEPEPLocal() summed over the ranks. Collective over the communicator
  /// of the last force calculation: every rank calls it.
  std::int64_t getNumberOfInteractionEPEPGlobal() const { return stats_comm_.allreduceSum(getNumberOfInteractionEPEPLocal()); }
  /// getNumberOfInteractionEPSPLocal() summed over the ranks. Collective, as above.
  std::int64_t getNumberOfInteractionEPSPGlobal() const { return stats_comm_.allreduceSum(getNumberOfInteractionEPSPLocal()); }
  /// getNumberOfWalkLocal() summed over the ranks. Collective, as above.
  std::int64_t getNumberOfWalkGlobal() const { return stats_comm_.allreduceSum(getNumberOfWalkLocal()); }

  /// This rank's seconds per FDPS stage since the last clearTimeProfile (see timeProfileOf).
  TimeProfile getTimeProfile() const {
    TimeProfile t = totals_.time;
    if (current_times_) t += timeProfileOf(profile_);
    return t;
  }

  /// Sets the interaction and walk counts to 0 (the current calculation's included).
  void clearNumberOfInteraction() {
    totals_.n_ep_ep = totals_.n_ep_sp = totals_.n_walk = 0;
    current_counts_ = false;
  }
  /// Sets the stage times to 0 (the current calculation's included).
  void clearTimeProfile() {
    totals_.time.clear();
    current_times_ = false;
  }
  /// clearNumberOfInteraction() and clearTimeProfile().
  void clearCounterAll() {
    clearNumberOfInteraction();
    clearTimeProfile();
  }

  /// The last calculation's per-stage seconds and counts (grove's own, printable as JSON).
  /// Not affected by the clear calls.
  const TreeProfile& profile() const { return profile_; }

  /// FDPS's stages from grove's: the local tree is root, keys, sort, reorder and linking; the force
  /// is grouping, walk and kernel; the LET, global tree, moment and write-back stages map one to one.
  static TimeProfile timeProfileOf(const TreeProfile& p) {
    TimeProfile t;
    t.make_local_tree = p.root_cell + p.keys + p.sort + p.reorder + p.link;
    t.calc_moment_local_tree = p.local_moments;
    t.make_LET_1st = p.let_build;
    t.exchange_LET_1st = p.let_exchange;
    t.make_global_tree = p.global_tree;
    t.calc_moment_global_tree = p.global_moments;
    t.calc_force = p.groups + p.walk + p.kernel;
    t.write_back = p.write_back;
    return t;
  }

 protected:
  /// At the start of every force calculation: the previous one joins the totals, profile_ starts
  /// afresh for this one, and comm becomes the communicator of the Global counts.
  void beginCalculation(const Comm& comm) {
    if (current_counts_) {
      totals_.n_ep_ep += profile_.n_ep_ep;
      totals_.n_ep_sp += profile_.n_ep_sp;
      totals_.n_walk += profile_.n_groups;
    }
    if (current_times_) totals_.time += timeProfileOf(profile_);
    profile_ = {};
    current_counts_ = current_times_ = true;
    stats_comm_ = comm;
  }

  mutable TreeProfile profile_;  ///< the current (last) calculation's profile, filled by the tree
  /// The communicator of the last calculation.
  const Comm& statisticsComm() const { return stats_comm_; }

 private:
  std::int64_t counted(std::int64_t total, std::int64_t current) const { return total + (current_counts_ ? current : 0); }

  struct Totals {
    std::int64_t n_ep_ep = 0, n_ep_sp = 0, n_walk = 0;
    TimeProfile time;
  } totals_;
  // Whether profile_'s counts and times still belong to the totals (a clear since excludes them).
  bool current_counts_ = false, current_times_ = false;
  Comm stats_comm_;
};

}  // namespace grove
