#include "grove/gpu/multiwalk/multiwalk_plan.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "grove/core/error.hpp"

namespace grove::gpu {

WalkBlockPlan planWalkBlocks(const std::size_t* walk_bytes, int n_walk, std::size_t block_overhead,
                             std::size_t capacity) {
  WalkBlockPlan plan;
  WalkBlock block;
  std::size_t bytes = block_overhead;
  for (int w = 0; w < n_walk; ++w) {
    if (block_overhead + walk_bytes[w] > capacity) {
      plan.blocks.clear();
      plan.walk_too_large = w;
      plan.largest_block_bytes = 0;
      return plan;
    }
    if (bytes + walk_bytes[w] > capacity) {
      block.end = w;
      plan.blocks.push_back(block);
      plan.largest_block_bytes = std::max(plan.largest_block_bytes, bytes);
      block.begin = w;
      bytes = block_overhead;
    }
    bytes += walk_bytes[w];
  }
  if (n_walk > 0) {
    block.end = n_walk;
    plan.blocks.push_back(block);
    plan.largest_block_bytes = std::max(plan.largest_block_bytes, bytes);
  }
  return plan;
}

std::size_t streamCapacity(std::size_t budget, std::size_t resident_bytes, std::size_t kept_bytes, int streams) {
  const std::size_t used = resident_bytes + kept_bytes;
  if (used >= budget || streams <= 0) return 0;
  return (budget - used) / static_cast<std::size_t>(streams);
}

bool residentArraysFit(std::size_t bytes, std::size_t budget, double resident_fraction) {
  return static_cast<double>(bytes) <= resident_fraction * static_cast<double>(budget);
}

std::string describeWalkDoesNotFit(const WalkFitReport& r) {
  return fmt::format(
      "walk {} of a batch with tag {} ({} i-particles, {} EPJ, {} SPJ) needs {} bytes of device memory, but a "
      "stream may use {} bytes (budget {} bytes, resident EPJ/SPJ arrays {} bytes, {} streams); raise "
      "MultiwalkOptions::device_memory_budget, use fewer streams, or lower n_group_limit",
      r.walk, r.tag, r.n_i, r.n_j, r.n_sp, r.walk_bytes, r.stream_capacity, r.budget, r.resident_bytes, r.streams);
}

void throwGpuError(const std::string& stage, const std::string& message) { throw Error(stage, message); }

}  // namespace grove::gpu
