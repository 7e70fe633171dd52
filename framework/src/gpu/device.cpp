#include <cuda_runtime_api.h>

#include <fmt/format.h>

#include "grove/core/error.hpp"
#include "grove/core/large_vector.hpp"
#include "grove/gpu/cuda_resources.hpp"
#include "grove/gpu/device_gpu.h"

namespace grove::gpu {

int deviceCount() noexcept {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();  // no driver or no device: report none and leave no error behind
    return 0;
  }
  return count;
}

DeviceInfo deviceInfo(int device) {
  const int count = deviceCount();
  require(device >= 0 && device < count, "gpu", "device {} asked for, but this process sees {} CUDA device(s)",
          device, count);
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");
  DeviceInfo info;
  info.index = device;
  info.name = prop.name;
  info.multiprocessors = prop.multiProcessorCount;
  info.compute_major = prop.major;
  info.compute_minor = prop.minor;
  info.global_memory_bytes = prop.totalGlobalMem;
  info.l2_cache_bytes = static_cast<std::size_t>(prop.l2CacheSize);
  return info;
}

int currentDevice() {
  require(deviceCount() > 0, "gpu", "no CUDA device is available to this process");
  int device = -1;
  check(cudaGetDevice(&device), "cudaGetDevice");
  return device;
}

int selectDeviceForRank(int rank) {
  const int count = deviceCount();
  require(count > 0, "gpu", "rank {} asked for a GPU, but no CUDA device is available to this process", rank);
  require(rank >= 0, "gpu", "selectDeviceForRank: rank {} is negative", rank);
  const int device = rank % count;
  check(cudaSetDevice(device), "cudaSetDevice");
  return device;
}

DeviceMemory currentDeviceMemory() {
  DeviceMemory m;
  check(cudaMemGetInfo(&m.free_bytes, &m.total_bytes), "cudaMemGetInfo");
  return m;
}

void enablePageLockedTransfers() {
  PageLockHooks hooks;
  hooks.lock = [](void* p, std::size_t bytes) {
    if (cudaHostRegister(p, bytes, cudaHostRegisterPortable) == cudaSuccess) return true;
    cudaGetLastError();  // not sticky: the memory stays ordinary and dispatch stages it
    return false;
  };
  hooks.unlock = [](void* p) {
    if (cudaHostUnregister(p) != cudaSuccess) cudaGetLastError();  // at exit the runtime may be gone
  };
  installPageLockHooks(hooks);
}

}  // namespace grove::gpu
