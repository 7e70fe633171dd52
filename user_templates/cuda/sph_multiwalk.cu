// User template: defines the CUDA multiwalks of the SPH sample that sph_multiwalk_gpu.h declares,
// so host code reaches them without nvcc. Build it with the program (see sph_cuda.cmake).
#include "sph_interactions.cuh"
#include "sph_multiwalk.cuh"
#include "sph_multiwalk_gpu.h"

namespace user::cuda {

std::unique_ptr<SphDensityMultiwalk> makeSphDensityMultiwalk(const sph::DensityParameters& p, int device) {
  return std::make_unique<SphDensityTemplate>(p, device);
}

std::unique_ptr<SphHydroMultiwalk> makeSphHydroMultiwalk(const sph::HydroParameters& p, int device) {
  return std::make_unique<SphHydroTemplate>(p, device);
}

std::unique_ptr<SphDensitySumsMultiwalk> makeSphDensitySumsEngine(const grove::gpu::MultiwalkOptions& options) {
  return std::make_unique<SphDensitySumsEngine>(SphDensitySumsInteraction{}, options);
}

std::unique_ptr<SphHydroMultiwalk> makeSphHydroEngine(const sph::HydroParameters& p,
                                                      const grove::gpu::MultiwalkOptions& options) {
  return std::make_unique<SphHydroEngine>(SphHydroInteraction{0.5 * p.alpha}, options);
}

}  // namespace user::cuda
