#pragma once
/// @file
/// Boundary conditions of the root domain. Each periodic axis is one bit, so a combination such
/// as PERIODIC_XZ is the union of its axes.
#include <string_view>

namespace grove {

/// The boundary condition of the root domain: bit `axis` set for each periodic axis.
enum class BoundaryCondition : int {
  OPEN = 0,          ///< no periodic axis
  PERIODIC_X = 1,    ///< periodic along x
  PERIODIC_Y = 2,    ///< periodic along y
  PERIODIC_Z = 4,    ///< periodic along z
  PERIODIC_XY = 3,   ///< periodic along x and y
  PERIODIC_XZ = 5,   ///< periodic along x and z
  PERIODIC_YZ = 6,   ///< periodic along y and z
  PERIODIC_XYZ = 7,  ///< periodic along every axis
};

/// Whether bc is periodic along axis (0: x, 1: y, 2: z).
constexpr bool isPeriodic(BoundaryCondition bc, int axis) {
  return (static_cast<int>(bc) >> axis) & 1;
}
/// Whether bc is periodic along some axis (not OPEN).
constexpr bool isAnyPeriodic(BoundaryCondition bc) { return bc != BoundaryCondition::OPEN; }

/// The enumerator's name, e.g. "PERIODIC_XZ"; "invalid" for any other value.
constexpr std::string_view toString(BoundaryCondition bc) {
  constexpr std::string_view names[] = {"OPEN",        "PERIODIC_X",  "PERIODIC_Y",  "PERIODIC_XY",
                                        "PERIODIC_Z",  "PERIODIC_XZ", "PERIODIC_YZ", "PERIODIC_XYZ"};
  const int v = static_cast<int>(bc);
  return v >= 0 && v < 8 ? names[v] : std::string_view("invalid");
}

}  // namespace grove
