#include "grove/gpu/cuda_resources.hpp"

#include <fmt/format.h>

#include "grove/core/error.hpp"

namespace grove::gpu {

void throwCudaError(cudaError_t code, const std::string& what) {
  throw Error("gpu", fmt::format("{} failed: {} ({})", what, cudaGetErrorName(code), cudaGetErrorString(code)));
}

namespace detail {

void* allocateDevice(std::size_t bytes) {
  void* p = nullptr;
  const cudaError_t code = cudaMalloc(&p, bytes);
  if (code != cudaSuccess) {
    cudaGetLastError();  // an allocation failure is not sticky; clear it for the next call
    throwCudaError(code, fmt::format("cudaMalloc of {} bytes", bytes));
  }
  return p;
}

void* allocatePinned(std::size_t bytes) {
  void* p = nullptr;
  const cudaError_t code = cudaMallocHost(&p, bytes);
  if (code != cudaSuccess) {
    cudaGetLastError();
    throwCudaError(code, fmt::format("cudaMallocHost of {} bytes", bytes));
  }
  return p;
}

void freeDevice(void* p) noexcept { cudaFree(p); }
void freePinned(void* p) noexcept { cudaFreeHost(p); }

}  // namespace detail
}  // namespace grove::gpu
