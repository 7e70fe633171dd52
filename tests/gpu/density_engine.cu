// The short-range test engine: grove's MultiwalkEngine with SPJ = NoSPJ and one device functor.
#include "density_engine_gpu.h"
#include "grove/gpu/multiwalk/multiwalk_engine.cuh"

namespace grove::gpu_testing {

namespace {
struct DensityInteraction {
  __device__ void operator()(const DensityEPI& i, const DensityEPJ& j, DensityForce& f) const {
    const float dx = j.pos.x - i.pos.x, dy = j.pos.y - i.pos.y, dz = j.pos.z - i.pos.z;
    const float r2 = dx * dx + dy * dy + dz * dz, h2 = i.h * i.h;
    if (r2 < h2) {
      f.density += j.mass * densityWeight(r2, h2);
      ++f.neighbours;
    }
  }
};
}  // namespace

std::unique_ptr<DensityMultiwalk> makeDensityEngine(const grove::gpu::MultiwalkOptions& options) {
  return std::make_unique<grove::gpu::MultiwalkEngine<DensityEPI, DensityEPJ, grove::gpu::NoSPJ, DensityForce,
                                                       DensityInteraction>>(DensityInteraction{}, options);
}

}  // namespace grove::gpu_testing
