#pragma once
#include <cstdint>

namespace grove {

// Particle counts summed over ranks exceed 2^31 in production runs; local counts never do.
using GlobalCount = std::int64_t;
using LocalIndex = std::int32_t;

}  // namespace grove
