#pragma once
// Domain decomposition from device-resident particles (nvcc only): the samples are drawn as the
// host's DomainInfo draws them (the same stratified indices), gathered on the device, and only
// they cross PCIe (1000 positions per rank by default); the cut search then runs on the host as
// for host particles, so the domains equal those of dinfo.decomposeDomainAll(host particles).
//
//   grove::gpu::decomposeDomainAll(dinfo, bodies);    // collective
//   grove::gpu::exchangeParticles(bodies, dinfo);
#include <cuda_runtime.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "grove/domain/domain_info.hpp"
#include "grove/gpu/cuda_resources.hpp"
#include "grove/gpu/resident/device_particle_system.hpp"
#include "grove/gpu/resident/tree_build.cuh"

namespace grove::gpu {

namespace kernel {
template <class FP>
__global__ void gatherPositions(const FP* __restrict__ particles, const std::uint64_t* __restrict__ picks,
                                std::size_t n, Vec3d* __restrict__ positions) {
  const std::size_t k = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (k < n) positions[k] = positionOf(particles[picks[k]]);
}
}  // namespace kernel

// Collective: DomainInfo::collectSampleParticle for device particles.
template <class FP>
void collectSampleParticle(DomainInfo& dinfo, const DeviceParticleSystem<FP>& psys, bool clear = true,
                           std::optional<double> weight = std::nullopt) {
  cudaStream_t stream = psys.stream();
  dinfo.collectSamplePositions(
      psys.size(),
      [&](const std::vector<std::size_t>& picks) {
        std::vector<std::uint64_t> indices(picks.begin(), picks.end());
        DeviceVector<std::uint64_t> d_picks;
        d_picks.assign(indices.data(), indices.size(), stream);
        DeviceVector<Vec3d> d_positions(indices.size());
        if (!indices.empty()) {
          kernel::gatherPositions<<<blocksFor(indices.size(), 256), 256, 0, stream>>>(
              psys.data(), d_picks.data(), indices.size(), d_positions.data());
          check(cudaGetLastError(), "gatherPositions kernel launch");
        }
        return d_positions.toHost(stream);
      },
      clear, weight);
}

// Collective: samples from the device particles, then the cuts (DomainInfo::decomposeDomainAll).
template <class FP>
void decomposeDomainAll(DomainInfo& dinfo, const DeviceParticleSystem<FP>& psys,
                        std::optional<double> weight = std::nullopt) {
  collectSampleParticle(dinfo, psys, true, weight);
  dinfo.decomposeDomain();
}

}  // namespace grove::gpu
