// User template: instantiates the CUDA gravity multiwalks that gravity_multiwalk_gpu.h declares,
// so host code reaches them without nvcc. Build it with the program (see gravity_cuda.cmake).
#include "gravity_interactions.cuh"
#include "gravity_multiwalk.cuh"
#include "gravity_multiwalk_gpu.h"

namespace user::cuda {

template <class SPJ>
std::unique_ptr<GravityMultiwalkInterface<SPJ>> makeGravityMultiwalk(float eps2, int device) {
  return std::make_unique<GravityMultiwalk<SPJ>>(eps2, device);
}

template <class SPJ>
std::unique_ptr<GravityMultiwalkInterface<SPJ>> makeGravityEngine(float eps2,
                                                                  const grove::gpu::MultiwalkOptions& options) {
  return std::make_unique<GravityEngine<SPJ>>(GravityEpInteraction{eps2}, GravitySpInteraction<SPJ>{eps2}, options);
}

template std::unique_ptr<GravityMultiwalkInterface<grove::SPJMonopole>> makeGravityMultiwalk(float, int);
template std::unique_ptr<GravityMultiwalkInterface<grove::SPJQuadrupole>> makeGravityMultiwalk(float, int);
template std::unique_ptr<GravityMultiwalkInterface<grove::SPJMonopole>> makeGravityEngine(
    float, const grove::gpu::MultiwalkOptions&);
template std::unique_ptr<GravityMultiwalkInterface<grove::SPJQuadrupole>> makeGravityEngine(
    float, const grove::gpu::MultiwalkOptions&);

}  // namespace user::cuda
