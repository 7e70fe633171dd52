#pragma once
// Error statistics over all ranks for the accuracy tests: every rank's values gathered and
// sorted, then read at the quantiles a test asserts.
#include <algorithm>
#include <span>
#include <vector>

#include "grove/comm/comm.hpp"

namespace grove::testing_support {

// Every rank's values, on every rank, in ascending order (collective).
inline std::vector<double> sortedOverRanks(const Comm& comm, std::span<const double> local) {
  std::vector<double> all = comm.allgatherv(local);
  std::sort(all.begin(), all.end());
  return all;
}

struct Quantiles {
  double median = 0.0, max = 0.0;
};

// The upper median (element size / 2) and the largest of every rank's values (collective).
inline Quantiles quantilesOverRanks(const Comm& comm, const std::vector<double>& local) {
  const std::vector<double> all = sortedOverRanks(comm, local);
  if (all.empty()) return {};
  return {all[all.size() / 2], all.back()};
}

}  // namespace grove::testing_support
