#pragma once
/// @file
/// grove::TimeProfile (FDPS's TimeProfile) and grove::wallSeconds().
#include <chrono>

namespace grove {

/// Seconds on a monotonic clock (std::chrono::steady_clock; differences are elapsed time).
inline double wallSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

/// FDPS's TimeProfile: seconds spent in each stage, accumulated over calls until cleared. The
/// domain, the particle system and the trees each keep one (getTimeProfile / clearTimeProfile);
/// a tree's detailed per-call profile is grove::TreeProfile (tree/profile.hpp). All fields 0 by
/// default.
struct TimeProfile {
  double collect_sample_particle = 0;  ///< seconds collecting sample particles (domain)
  double decompose_domain = 0;         ///< seconds decomposing the domain
  double exchange_particle = 0;        ///< seconds exchanging particles (particle system)
  double make_local_tree = 0;          ///< seconds building the local tree
  double make_global_tree = 0;         ///< seconds building the global tree
  double calc_force = 0;               ///< seconds computing forces
  double calc_moment_local_tree = 0;   ///< seconds computing the local tree's moments
  double calc_moment_global_tree = 0;  ///< seconds computing the global tree's moments
  double make_LET_1st = 0;             ///< seconds building the LET, first stage
  double make_LET_2nd = 0;             ///< seconds building the LET, second stage
  double exchange_LET_1st = 0;         ///< seconds exchanging the LET, first stage
  double exchange_LET_2nd = 0;         ///< seconds exchanging the LET, second stage
  double write_back = 0;               ///< seconds writing forces back to the particles

  /// Adds o field by field.
  TimeProfile& operator+=(const TimeProfile& o) {
    collect_sample_particle += o.collect_sample_particle;
    decompose_domain += o.decompose_domain;
    exchange_particle += o.exchange_particle;
    make_local_tree += o.make_local_tree;
    make_global_tree += o.make_global_tree;
    calc_force += o.calc_force;
    calc_moment_local_tree += o.calc_moment_local_tree;
    calc_moment_global_tree += o.calc_moment_global_tree;
    make_LET_1st += o.make_LET_1st;
    make_LET_2nd += o.make_LET_2nd;
    exchange_LET_1st += o.exchange_LET_1st;
    exchange_LET_2nd += o.exchange_LET_2nd;
    write_back += o.write_back;
    return *this;
  }
  /// The field-by-field sum.
  TimeProfile operator+(const TimeProfile& o) const {
    TimeProfile sum = *this;
    return sum += o;
  }
  /// The sum of all fields (seconds).
  double getTotalTime() const {
    return collect_sample_particle + decompose_domain + exchange_particle + make_local_tree + make_global_tree +
           calc_force + calc_moment_local_tree + calc_moment_global_tree + make_LET_1st + make_LET_2nd +
           exchange_LET_1st + exchange_LET_2nd + write_back;
  }
  /// Sets every field to 0.
  void clear() { *this = TimeProfile{}; }
};

}  // namespace grove
