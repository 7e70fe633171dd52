#pragma once
/// @file
/// forEach and transformReduce over device-resident particles (nvcc only): the user's integrator
/// and diagnostics on the GPU, written as a functor whose operator() is GROVE_HOST_DEVICE (or
/// __device__), e.g.
/// @code
///   struct Drift {
///     double dt;
///     GROVE_HOST_DEVICE void operator()(Body& b) const { b.pos += dt * b.vel; }
///   };
///   grove::gpu::forEach(bodies.policy(), bodies, Drift{dt});
///   const double kinetic = grove::gpu::transformReduce(bodies.policy(), bodies, 0.0, Sum{}, KineticOf{});
/// @endcode
/// The host forms with grove::Cpu (grove/particles/for_each.hpp) take the same functors, so one
/// integrator serves both paths.
#include <cuda_runtime.h>

#include <cstddef>
#include <cub/device/device_reduce.cuh>

#include "grove/core/execution.hpp"
#include "grove/gpu/cuda_resources.hpp"
#include "grove/gpu/device_particle_system.hpp"

namespace grove::gpu {

namespace kernel {
template <class FP, class F>
__global__ void forEachParticle(FP* __restrict__ particles, std::size_t n, F f) {
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) f(particles[i]);
}
}  // namespace kernel

/// Calls f(fp) for every particle of psys on the device, one thread per particle, on
/// policy.stream; returns without waiting.
///
/// Needs: F passed to the kernel by value (so: no host pointers it dereferences), with a device-callable
/// operator()(FP&); no order between particles. Promises: stream order, so a later tree call
/// or download on the same stream sees the changes. Throws grove::Error if the launch fails.
template <class FP, class F>
void forEach(Gpu policy, DeviceParticleSystem<FP>& psys, F f) {
  const std::size_t n = psys.size();
  if (n == 0) return;
  constexpr int kThreads = 256;
  const auto blocks = static_cast<unsigned>((n + kThreads - 1) / kThreads);
  kernel::forEachParticle<<<blocks, kThreads, 0, policy.stream>>>(psys.data(), n, f);
  check(cudaGetLastError(), "forEach kernel launch");
}

/// op-reduction of map(fp) over the particles of psys, starting from init (CUB's
/// TransformReduce); waits for the result and returns it (init when psys is empty).
///
/// Needs: Map and Op device-callable (Map: const FP& -> T, Op: (T, T) -> T, associative and
/// commutative: the order of the sum is CUB's), T trivially copyable. Sums over ranks are the
/// caller's (Comm::allreduceSum). Throws grove::Error on a CUDA failure.
template <class FP, class T, class Op, class Map>
T transformReduce(Gpu policy, const DeviceParticleSystem<FP>& psys, T init, Op op, Map map) {
  const std::size_t n = psys.size();
  if (n == 0) return init;
  cudaStream_t stream = policy.stream;
  T* result = nullptr;
  std::size_t temp_bytes = 0;
  check(cub::DeviceReduce::TransformReduce(nullptr, temp_bytes, psys.data(), result, n, op, map, init, stream),
        "cub::DeviceReduce::TransformReduce (size)");
  // One stream-ordered allocation: the temporary storage, then the result aligned for T.
  const std::size_t result_offset = (temp_bytes + alignof(T) - 1) / alignof(T) * alignof(T);
  struct StreamAllocation {  // freed in stream order on every path out, errors included
    void* p = nullptr;
    cudaStream_t stream;
    ~StreamAllocation() {
      if (p) cudaFreeAsync(p, stream);
    }
  } temp{nullptr, stream};
  check(cudaMallocAsync(&temp.p, result_offset + sizeof(T), stream), "cudaMallocAsync (transformReduce)");
  result = reinterpret_cast<T*>(static_cast<char*>(temp.p) + result_offset);
  check(cub::DeviceReduce::TransformReduce(temp.p, temp_bytes, psys.data(), result, n, op, map, init, stream),
        "cub::DeviceReduce::TransformReduce");
  T host{};
  check(cudaMemcpyAsync(&host, result, sizeof(T), cudaMemcpyDeviceToHost, stream), "cudaMemcpyAsync (reduce result)");
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize (transformReduce)");
  return host;
}

}  // namespace grove::gpu
