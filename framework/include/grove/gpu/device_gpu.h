#pragma once
/// @file
/// GPU discovery and selection. Declarations only, with no CUDA header, so that any translation
/// unit (compiled by the host compiler) can ask whether a device is there and pick one.
/// Defined in framework/src/gpu/device.cpp, part of the grove::gpu library.
#include <cstddef>
#include <string>

namespace grove::gpu {

/// The number of CUDA devices this process can use: 0 when there is none, or when the driver or
/// the runtime is missing or fails. Never throws, so a caller can decide to skip GPU work.
int deviceCount() noexcept;

/// Properties of one device (deviceInfo()).
struct DeviceInfo {
  int index = -1;                       ///< the CUDA device index
  std::string name;                     ///< the device's name, e.g. "NVIDIA H100 80GB HBM3"
  int multiprocessors = 0;              ///< streaming multiprocessors
  int compute_major = 0;                ///< compute capability, major (9 for sm_90)
  int compute_minor = 0;                ///< compute capability, minor
  std::size_t global_memory_bytes = 0;  ///< device memory
  std::size_t l2_cache_bytes = 0;       ///< L2 cache
};

/// Properties of one device. Throws grove::Error when the index is not a usable device.
DeviceInfo deviceInfo(int device);

/// The device the calling thread uses now (cudaGetDevice). Throws grove::Error when none.
int currentDevice();

/// One device per rank, as grove runs (rank % devices): makes device rank % deviceCount()
/// current for the calling thread and returns its index. Throws grove::Error when there is none.
int selectDeviceForRank(int rank);

/// Free and total memory of the current device, in bytes (currentDeviceMemory()).
struct DeviceMemory {
  std::size_t free_bytes = 0;   ///< free now
  std::size_t total_bytes = 0;  ///< the device's whole memory
};
/// Free and total memory of the current device. Throws grove::Error on failure.
DeviceMemory currentDeviceMemory();

/// Lets grove page-lock the arrays its trees hand to multiwalk dispatch (their EPI arrays, the
/// index form's whole EPJ arrays; grove/core/large_vector.hpp): installs hooks that register host
/// memory with CUDA (cudaHostRegister, portable to every device). GPU multiwalks call it when
/// made; the trees lock their arrays at their next multiwalk call. Idempotent.
void enablePageLockedTransfers();

}  // namespace grove::gpu
