#pragma once
/// @file
/// PS::Timer: FDPS's split timer for a step's stages. Included by grove/fdps.hpp after PS::Comm,
/// which it uses.
#include <ostream>
#include <string>
#include <vector>

namespace grove::fdps {

/// FDPS's split timer for a step's stages. start() begins a split, stop(name) ends it,
/// restart(name) ends one and begins the next; reset() starts a new step (trial); dump(out)
/// is collective and prints each split of this step with the slowest rank's time, the running
/// sum, and the slowest rank's mean over the steps so far. Times are GetWtime() seconds.
/// Every rank should record the same splits in the same order, as dump() pairs them by position.
class Timer {
 public:
  /// No splits, no steps.
  Timer() = default;
  /// Prints "Timer initialize" to out and forgets everything (splits, totals, steps).
  void initialize(std::ostream& out) {
    out << "Timer initialize" << std::endl;
    *this = Timer();
  }
  /// A new step: this step's splits are forgotten (their totals, added by dump(), stay); counts
  /// the step for the means.
  void reset() {
    splits_.clear();
    ++steps_;
  }
  /// Begins a split now.
  void start() { begin_ = GetWtime(); }
  /// Ends the split begun by the last start(), unnamed (dump prints it as split_time_[i]).
  void stop() { stop(""); }
  /// Ends the split begun by the last start() and records it under name (null: unnamed).
  void stop(const char* name) {
    const double now = GetWtime();
    if (splits_.size() == totals_.size()) totals_.push_back(0.0);
    splits_.push_back({name ? name : "", now - begin_});
  }
  /// Ends the current split unnamed and begins the next.
  void restart() { restart(""); }
  /// stop(name), then start().
  void restart(const char* name) {
    stop(name);
    start();
  }

  /// Collective (every rank calls it, with the same number of splits): adds this step's splits to
  /// the totals and prints to out the total time so far, the slowest rank's step time, and for
  /// each split its time here, the running sum, its fraction of the step, the slowest rank's time
  /// and the slowest rank's mean per step (totals over the number of reset() calls, at least 1).
  /// Call it once per step: each call adds the step's splits to the totals again.
  void dump(std::ostream& out) {
    double step_time = 0.0;
    for (const Split& s : splits_) step_time += s.seconds;
    total_ += step_time;
    const auto steps = static_cast<double>(steps_ > 0 ? steps_ : 1);
    double slowest_step = 0.0;
    int slowest_rank = 0;
    Comm::getMaxValue(step_time, Comm::getRank(), slowest_step, slowest_rank);
    out << "total_time= " << total_ << "   max_step_time= " << slowest_step << " (@" << slowest_rank << ")"
        << std::endl;
    double cumulative = 0.0;
    for (std::size_t i = 0; i < splits_.size(); ++i) {
      const Split& s = splits_[i];
      cumulative += s.seconds;
      totals_[i] += s.seconds;
      double max_time = 0.0, max_mean = 0.0;
      int max_rank = 0, max_mean_rank = 0;
      Comm::getMaxValue(s.seconds, Comm::getRank(), max_time, max_rank);
      Comm::getMaxValue(totals_[i] / steps, Comm::getRank(), max_mean, max_mean_rank);
      const std::string label = s.name.empty() ? "split_time_[" + std::to_string(i) + "]" : s.name;
      out << label << ": " << s.seconds << "   cum_time= " << cumulative
          << "   fraction: " << (step_time > 0 ? s.seconds / step_time : 0.0) << "   max_time= " << max_time << " (@"
          << max_rank << ")   max_mean= " << max_mean << " (@" << max_mean_rank << ")" << std::endl;
    }
  }

 private:
  struct Split {
    std::string name;
    double seconds = 0.0;
  };
  double begin_ = 0.0;
  double total_ = 0.0;
  std::vector<Split> splits_;
  std::vector<double> totals_;  // per split position, over steps
  long steps_ = 0;
};

}  // namespace grove::fdps
