#pragma once
/// @file
/// grove::gpu::permuteInPlace and gatherItems: put an array of device items into a given order without a second
/// array of them, a column of bytes at a time through a small scratch. The particle system's
/// ReorderMemory::kInPlace (grove/gpu/device_particle_system.hpp) reorders with it, so that a
/// card holds more particles. Compiled once (src/gpu/permute_in_place.cu): any item size, no
/// user type, and no nvcc needed to call it.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace grove::gpu {

/// The bytes per item a scratch for permuteInPlace needs: the column it moves per pass (16, or
/// item_bytes when an item is smaller).
std::size_t permuteScratchBytesPerItem(std::size_t item_bytes);

/// Puts the n items (item_bytes each, in device memory at `items`) in the order of `index` (a
/// device array of n entries, a permutation of 0 .. n - 1: place k receives the item that was at
/// index[k]), in place. Each pass gathers one column of every item (16 bytes, in words of the
/// largest size of 16, 8, 4, 2 and 1 that divides item_bytes) into `scratch` (device memory of n
/// * permuteScratchBytesPerItem(item_bytes) bytes, 16-byte aligned) and writes it back: a
/// column is only read before it is written, so no item is lost. ceil(item_bytes / 16) passes,
/// each reading and writing its columns once: more memory traffic than one gather into a second
/// array, for 16 instead of item_bytes bytes of scratch per item. On `stream`; not waited for.
/// `items` must be aligned to that word (the start of a device allocation is). Throws grove::Error
/// when CUDA fails, a pointer is null while n > 0, or `items` is not so aligned.
void permuteInPlace(void* items, std::size_t n, std::size_t item_bytes, const std::uint32_t* index, void* scratch,
                    cudaStream_t stream);

/// to[k] = items[index[k]] for the n items of item_bytes each (device memory; `to` does not
/// overlap `items`; both aligned to the widest of 16, 8, 4, 2 and 1 bytes that divides item_bytes):
/// the gather of a reorder with a second array. On `stream`; not waited for. Throws grove::Error as
/// permuteInPlace.
void gatherItems(const void* items, std::size_t n, std::size_t item_bytes, const std::uint32_t* index, void* to,
                 cudaStream_t stream);

}  // namespace grove::gpu
