#pragma once
/// @file
/// grove's integer types for particle counts and indices.
#include <cstdint>

namespace grove {

/// A particle count summed over ranks (exceeds 2^31 in production runs).
using GlobalCount = std::int64_t;
/// A count or index of particles on one rank (never exceeds 2^31).
using LocalIndex = std::int32_t;

}  // namespace grove
