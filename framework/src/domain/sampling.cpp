#include <algorithm>
#include <cmath>
#include <random>

#include "grove/domain/domain_info.hpp"

namespace grove {

namespace detail {

std::vector<std::size_t> stratifiedSampleIndices(std::size_t n, std::size_t count, std::uint64_t seed) {
  count = std::min(count, n);
  std::vector<std::size_t> picks(count);
  std::mt19937_64 random(seed);
  for (std::size_t k = 0; k < count; ++k) {
    // Stratum k is [k n / count, (k+1) n / count): non-empty and disjoint, so picks are distinct.
    const std::size_t begin = k * n / count, end = (k + 1) * n / count;
    picks[k] = begin + std::uniform_int_distribution<std::size_t>(0, end - begin - 1)(random);
  }
  return picks;
}

}  // namespace detail

SamplePlan DomainInfo::planSamples(std::size_t local_particles, std::optional<double> weight,
                                   std::optional<int> samples_per_rank) const {
  const double my_weight = weight.value_or(static_cast<double>(local_particles));
  std::optional<std::string> problem;
  if (!isFiniteValue(my_weight) || my_weight < 0.0)
    problem = formatMessage("sampling weight must be finite and non-negative, got {}", my_weight);
  comm_.throwIfAnyFailed(problem, "DomainInfo::collectSampleParticle");

  // Ranks whose weights are all zero still need a decomposition: fall back to particle counts.
  double total_weight = comm_.allreduceSum(my_weight);
  double effective_weight = my_weight;
  if (!(total_weight > 0.0)) {
    effective_weight = static_cast<double>(local_particles);
    total_weight = comm_.allreduceSum(effective_weight);
  }
  SamplePlan plan;
  if (local_particles == 0 || !(effective_weight > 0.0)) return plan;
  const auto per_rank = static_cast<std::size_t>(samples_per_rank.value_or(samples_per_rank_));
  const double total_samples =
      static_cast<double>(std::min(kMaxTotalSamples, per_rank * static_cast<std::size_t>(rank_count_)));
  const double wanted = std::round(total_samples * effective_weight / total_weight);
  plan.count = std::clamp<std::size_t>(static_cast<std::size_t>(wanted), 1, local_particles);
  plan.weight_per_sample = effective_weight / static_cast<double>(plan.count);
  return plan;
}

}  // namespace grove
