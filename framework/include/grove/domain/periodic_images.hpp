#pragma once
/// @file
/// The periodic image shifts a tree materialises: whole periods n·L along each periodic axis, as
/// many shells as can come within reach of a particle. One function for the cutoff trees
/// (force/long_range_walks.hpp, let/cutoff_let.hpp) and the short-range trees
/// (force/tree_for_force_short.hpp, let/short_range_let.hpp).
///
/// Each shift within reach gives every particle one more image, an ordinary entry of the global
/// tree, as FDPS builds its LET over every image that reaches: when the radius exceeds half the
/// period, a pair within the radius through several images is met once per image (and with a
/// radius beyond L, a particle meets images of itself).
#include <cmath>
#include <cstddef>
#include <vector>

#include "grove/core/box.hpp"
#include "grove/core/error.hpp"
#include "grove/domain/boundary.hpp"

namespace grove {

/// The most image shifts a tree takes (a guard against a period far below the radius, not a
/// limit of the method): (2K + 1)^3 <= 2^20 allows K = 50 shells on three periodic axes.
inline constexpr double kMaxPeriodicImageShifts = 1 << 20;

/// How many shells of images along a periodic axis of length `length` can come within `reach`
/// of a particle, for particles inside the root domain there. An image x_j + n·L lies within
/// reach of x_i only if
///     |n|·L = |(x_j + n·L - x_i) - (x_j - x_i)| <= reach + |x_j - x_i|.
/// Within the half-open root domain [low, low + L) (where ParticleSystem::
/// adjustPositionIntoRootDomain puts them), |x_j - x_i| < L, so |n| < reach/L + 1, i.e.
/// |n| <= ceil(reach/L); the bound is attained (x_i at low, x_j just below low + L need the shift
/// of ceil(reach/L) periods when reach is not a multiple of L). Trees test reach with closed
/// boxes and particles may sit on the upper face, so the closed domain's bound is used:
/// |x_j - x_i| <= L gives |n| <= floor(reach/L) + 1. It equals ceil(reach/L) except where reach
/// is a whole number of periods (one shell more), and is never below 1, so radii below L keep
/// the shifts -L, 0, +L of each axis. reach >= 0, length > 0, both finite.
inline double periodicImageShells(double reach, double length) { return std::floor(reach / length) + 1.0; }

/// The image shifts a periodic tree must consider: the zero shift first, then every n·L with
/// integer |n| <= periodicImageShells(reach, L) along each periodic axis (L: root_domain's length
/// there), in every combination over the periodic axes: (2K + 1)^d shifts, 27 for three axes
/// with reach < L. Only the zero shift for an open boundary. reach: the largest search or cutoff
/// radius. Throws grove::Error (tagged `who`) when the root domain's length on a periodic axis
/// is not finite and positive (no root domain set), when reach is negative or not finite, or when
/// more than kMaxPeriodicImageShifts shifts would be needed.
inline std::vector<Vec3d> periodicImageShifts(BoundaryCondition bc, const Boxd& root_domain, double reach,
                                              const char* who) {
  std::vector<Vec3d> shifts{Vec3d{}};
  if (!isAnyPeriodic(bc)) return shifts;
  require(std::isfinite(reach) && reach >= 0.0, who, "the search radius {} is not finite and non-negative", reach);
  const Vec3d period = root_domain.size();
  double count = 1.0;
  int shells[3] = {0, 0, 0};
  for (int a = 0; a < 3; ++a) {
    if (!isPeriodic(bc, a)) continue;
    const double length = period[static_cast<std::size_t>(a)];
    require(std::isfinite(length) && length > 0.0, who,
            "the boundary is periodic along {} but the root domain there is {}; set it with setPosRootDomain",
            "xyz"[a], length);
    const double k = periodicImageShells(reach, length);
    count *= 2.0 * k + 1.0;
    require(count <= kMaxPeriodicImageShifts, who,
            "the search radius {} spans {} periods of length {} along {}: more than {} periodic image shifts would "
            "be needed; use a larger box or a smaller radius",
            reach, reach / length, length, "xyz"[a], kMaxPeriodicImageShifts);
    shells[a] = static_cast<int>(k);
  }
  shifts.reserve(static_cast<std::size_t>(count));
  // Axis by axis, each shift so far combined with -L, +L, -2L, +2L, ...: the zero shift stays
  // first, and with one shell per axis the order is that of the 27 shifts of -L, 0, +L.
  for (int a = 0; a < 3; ++a) {
    if (!isPeriodic(bc, a)) continue;
    const double length = period[static_cast<std::size_t>(a)];
    const std::size_t before = shifts.size();
    for (std::size_t s = 0; s < before; ++s)
      for (int n = 1; n <= shells[a]; ++n)
        for (int sign : {-1, 1}) {
          Vec3d shift = shifts[s];
          shift[static_cast<std::size_t>(a)] += sign * n * length;
          shifts.push_back(shift);
        }
  }
  return shifts;
}

}  // namespace grove
