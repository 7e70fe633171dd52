#pragma once
/// @file
/// Device-memory planning for multiwalk batches: pure host arithmetic, no CUDA, so that it is
/// tested everywhere. A batch whose working set does not fit in a stream's share of the budget
/// runs in consecutive blocks of walks, one kernel launch each (Accelerated FDPS §4.1: divide the
/// work rather than fail); a walk that does not fit alone is an error.
#include <cstddef>
#include <string>
#include <vector>

namespace grove::gpu {

/// Sections of a device buffer start at this alignment (cudaMalloc's own), so that every element
/// of a packed array of a 16-byte type can be read with one 16-byte load.
inline constexpr std::size_t kSectionAlignment = 256;

/// bytes rounded up to kSectionAlignment.
constexpr std::size_t alignSection(std::size_t bytes) {
  return (bytes + kSectionAlignment - 1) / kSectionAlignment * kSectionAlignment;
}

/// Walks [begin, end) of a batch, computed by one kernel launch.
struct WalkBlock {
  int begin = 0;  ///< the first walk
  int end = 0;    ///< one past the last
  /// Same walks.
  friend bool operator==(const WalkBlock&, const WalkBlock&) = default;
};

/// planWalkBlocks' answer.
struct WalkBlockPlan {
  std::vector<WalkBlock> blocks;  ///< consecutive, covering every walk
  int walk_too_large = -1;        ///< the first walk that does not fit alone (blocks is then empty); -1: none
  std::size_t largest_block_bytes = 0;  ///< the largest block's working set
};

/// Splits walks 0 .. n_walk-1 into consecutive blocks, each taking as many walks as fit:
/// block_overhead + (sum of the block's walk_bytes) <= capacity. No walks: no blocks.
WalkBlockPlan planWalkBlocks(const std::size_t* walk_bytes, int n_walk, std::size_t block_overhead,
                             std::size_t capacity);

/// Each stream's share of what the budget leaves after the resident arrays and the kept lists
/// (0 when nothing is left).
std::size_t streamCapacity(std::size_t budget, std::size_t resident_bytes, std::size_t kept_bytes, int streams);

/// Whether the whole EPJ/SPJ arrays may live on the device: bytes <= fraction * budget.
bool residentArraysFit(std::size_t bytes, std::size_t budget, double resident_fraction);

/// What the error says when one walk cannot fit.
struct WalkFitReport {
  int walk = -1;                    ///< the walk's index in its batch
  int tag = 0;                      ///< the batch's tag
  long long n_i = 0;                ///< its i-particles
  long long n_j = 0;                ///< its EPJs
  long long n_sp = 0;               ///< its SPJs
  std::size_t walk_bytes = 0;       ///< the device memory it needs
  std::size_t stream_capacity = 0;  ///< what a stream may use
  std::size_t budget = 0;           ///< the engine's budget
  std::size_t resident_bytes = 0;   ///< held by the resident EPJ/SPJ arrays
  int streams = 0;                  ///< the engine's streams
};
/// The message for a walk that cannot fit: its sizes, the capacity and what to change.
std::string describeWalkDoesNotFit(const WalkFitReport& report);

/// Throws grove::Error(stage, message). Declared here so that CUDA translation units need not
/// include fmt (grove/core/error.hpp): see doc/gpu.md, "what a .cu file may include".
[[noreturn]] void throwGpuError(const std::string& stage, const std::string& message);

}  // namespace grove::gpu
