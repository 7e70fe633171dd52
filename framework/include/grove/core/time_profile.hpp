#pragma once
// FDPS's TimeProfile: seconds spent in each stage, accumulated over calls until cleared. The
// domain, the particle system and the trees each keep one (getTimeProfile / clearTimeProfile);
// a tree's detailed per-call profile is grove::TreeProfile (tree/profile.hpp).
#include <chrono>

namespace grove {

// Seconds on a monotonic clock (differences are elapsed time).
inline double wallSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

struct TimeProfile {
  double collect_sample_particle = 0;
  double decompose_domain = 0;
  double exchange_particle = 0;
  double make_local_tree = 0;
  double make_global_tree = 0;
  double calc_force = 0;
  double calc_moment_local_tree = 0;
  double calc_moment_global_tree = 0;
  double make_LET_1st = 0;
  double make_LET_2nd = 0;
  double exchange_LET_1st = 0;
  double exchange_LET_2nd = 0;
  double write_back = 0;

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
  TimeProfile operator+(const TimeProfile& o) const {
    TimeProfile sum = *this;
    return sum += o;
  }
  double getTotalTime() const {
    return collect_sample_particle + decompose_domain + exchange_particle + make_local_tree + make_global_tree +
           calc_force + calc_moment_local_tree + calc_moment_global_tree + make_LET_1st + make_LET_2nd +
           exchange_LET_1st + exchange_LET_2nd + write_back;
  }
  void clear() { *this = TimeProfile{}; }
};

}  // namespace grove
