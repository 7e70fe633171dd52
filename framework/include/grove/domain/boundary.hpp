#pragma once
// Boundary conditions of the root domain. Each periodic axis is one bit, so a combination such
// as PERIODIC_XZ is the union of its axes.
#include <string_view>

namespace grove {

enum class BoundaryCondition : int {
  OPEN = 0,
  PERIODIC_X = 1,
  PERIODIC_Y = 2,
  PERIODIC_Z = 4,
  PERIODIC_XY = 3,
  PERIODIC_XZ = 5,
  PERIODIC_YZ = 6,
  PERIODIC_XYZ = 7,
};

constexpr bool isPeriodic(BoundaryCondition bc, int axis) {
  return (static_cast<int>(bc) >> axis) & 1;
}
constexpr bool isAnyPeriodic(BoundaryCondition bc) { return bc != BoundaryCondition::OPEN; }

constexpr std::string_view toString(BoundaryCondition bc) {
  constexpr std::string_view names[] = {"OPEN",        "PERIODIC_X",  "PERIODIC_Y",  "PERIODIC_XY",
                                        "PERIODIC_Z",  "PERIODIC_XZ", "PERIODIC_YZ", "PERIODIC_XYZ"};
  const int v = static_cast<int>(bc);
  return v >= 0 && v < 8 ? names[v] : std::string_view("invalid");
}

}  // namespace grove
