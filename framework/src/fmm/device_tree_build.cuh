#pragma once
// The FMM's tree built on a CUDA device (DeviceFarField::buildTree): the host's FmmTree::build,
// stage for stage and bit for bit. Internal to grove's library (nvcc only): not installed.
#include <cuda_runtime.h>

#include <cstdint>
#include <span>

#include "device_expansion_tables.cuh"
#include "grove/fmm/fmm_tree.hpp"
#include "grove/gpu/cuda_resources.hpp"
#include "grove/gpu/device_primitives.cuh"
#include "grove/tree/key_order_gpu.cuh"

namespace grove::fmm::detail {

// What a cell's centre is made of, summed from its particles (a leaf) or its children's sums.
struct CellSums {
  double charge, weight;  // sum of q, of |q|
  Vec3d weighted;         // sum of |q| x
  Vec3d position;         // sum of x (the centre where every charge is zero)
};

// The build's device arrays, kept between calls so that their memory is reused.
struct DeviceTreeBuild {
  DeviceVector<Vec3d> positions;  // input order
  DeviceVector<double> charges_in, charges;  // input order; key order
  gpu::KeyOrder order;
  gpu::CubScratch cub;
  DeviceVector<FmmCell> cells;
  DeviceVector<int> child_counts;  // per cell of a generation, then its exclusive sum
  DeviceVector<int> bounds;        // per cell of a generation: its children's particle bounds
  DeviceVector<CellSums> sums;
  DeviceVector<unsigned long long> wide_r2;  // a wide generation's radii, squared (as bits)
  // Page-locked staging of the uploads and of the multipoles' download (the bus at full speed).
  gpu::PinnedArray<Vec3d> positions_staging;
  gpu::PinnedArray<double> charges_staging, multipoles_staging;

  std::size_t bytes() const {
    return positions.bytes() + charges_in.bytes() + charges.bytes() + order.bytes() + cub.bytes() + cells.bytes() +
           child_counts.bytes() + bounds.bytes() + sums.bytes() + wide_r2.bytes();
  }
};

// Builds `tree` over the particles as FmmTree::build does (the same cells, generations, order,
// centres, radii and multipoles, bit for bit), on `stream`, and adopts it (FmmTree::adopt) through
// `built`, whose host arrays are reused from call to call. The key-ordered positions and the
// multipoles stay on the device in `key_positions` and `multipoles`. `tables` must be expansion's
// order. Waits for the device. Throws grove::Error as FmmTree::build does, and when CUDA fails.
void buildTreeOnDevice(DeviceTreeBuild& build, const DeviceTables& tables, cudaStream_t stream,
                       std::span<const Vec3d> positions, std::span<const double> charges, int n_leaf,
                       const MultiIndexSet& expansion, FmmTree& tree, FmmTree::Built& built,
                       DeviceVector<Vec3d>& key_positions, DeviceVector<double>& multipoles);

}  // namespace grove::fmm::detail
