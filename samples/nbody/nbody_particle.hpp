#pragma once
// The sample's full particle (FDPS's FP): what one body carries between steps.
#include <cstdint>

#include "grove/grove.hpp"

namespace nbody {

struct Body {
  std::int64_t id = 0;
  double mass = 0.0;
  grove::Vec3d pos;
  grove::Vec3d vel;

  grove::Vec3d getPos() const { return pos; }
  void setPos(const grove::Vec3d& p) { pos = p; }
};

}  // namespace nbody
