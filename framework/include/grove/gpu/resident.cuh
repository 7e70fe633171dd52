#pragma once
/// @file
/// The GPU-resident API in one header (nvcc only), as grove/grove.hpp is for the host: a .cu file
/// that keeps its particles on the device includes this and links grove::gpu.
/// @verbatim
///   grove::gpu::deviceCount, selectDeviceForRank          device discovery (device_gpu.h)
///   grove::gpu::DeviceParticleSystem<FP>                  the particles, in device memory
///   grove::gpu::forEach, transformReduce                  the user's integrator and diagnostics
///   grove::gpu::decomposeDomainAll, decomposeDomainByCounting   domains from device particles
///   grove::gpu::exchangeParticles (+ ExchangeScratch)     particles to their domains' ranks
///   grove::gpu::ResidentTreeLong, ResidentTreeShort       the trees, walks and forces on the device
///   grove::gpu::DeviceMonopole, DeviceQuadrupole          what a cell interaction receives
///   grove::Runtime, grove::Comm, grove::DomainInfo        the host side every program needs
/// @endverbatim
/// It is a .cuh, not a .hpp: the trees' kernels are templates over the user's types, so they are
/// compiled in the user's translation unit, by nvcc. The contracts, the self-pair rule and the
/// device types are in doc/gpu_resident.md.
#include "grove/config.hpp"  // GROVE_VERSION and the build's options
#include "grove/comm/comm.hpp"
#include "grove/core/execution.hpp"
#include "grove/domain/domain_info.hpp"
#include "grove/gpu/cuda_resources.hpp"
#include "grove/tree/device_form.hpp"
#include "grove/gpu/device_gpu.h"
#include "grove/domain/decomposition_gpu.cuh"
#include "grove/gpu/device_particle_system.hpp"
#include "grove/particles/exchange_gpu.cuh"
#include "grove/gpu/for_each.cuh"
#include "grove/force/resident_profile.hpp"
#include "grove/force/resident_tree_long.cuh"
#include "grove/force/resident_tree_short.cuh"
#include "grove/runtime/runtime.hpp"
