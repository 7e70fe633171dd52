#pragma once
// Wall-clock laps for the samples' per-stage timings (each sample keeps its own list of stages).
#include <chrono>

class Stopwatch {
 public:
  // Seconds since the last lap (or construction).
  double lap() {
    const auto now = std::chrono::steady_clock::now();
    const double s = std::chrono::duration<double>(now - last_).count();
    last_ = now;
    return s;
  }

 private:
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};
