// grove::gpu::permuteInPlace (grove/gpu/permute_in_place.hpp): a permutation of device items, one
// column of bytes at a time.
#include "grove/gpu/permute_in_place.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "grove/core/error.hpp"
#include "grove/gpu/cuda_resources.hpp"

namespace grove::gpu {

namespace {

constexpr std::size_t kColumnBytes = 16;
constexpr unsigned kThreads = 256;

// scratch[k * width + w] = word first + w of the item at index[k], for w < width.
template <class Word>
__global__ void gatherColumn(const Word* __restrict__ items, std::size_t n, std::size_t words_per_item,
                             std::size_t first, int width, const std::uint32_t* __restrict__ index,
                             Word* __restrict__ scratch) {
  const std::size_t k = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (k >= n) return;
  const Word* from = items + static_cast<std::size_t>(index[k]) * words_per_item + first;
  Word* to = scratch + k * static_cast<std::size_t>(width);
  for (int w = 0; w < width; ++w) to[w] = from[w];
}

// Word first + w of item k = scratch[k * width + w], for w < width.
template <class Word>
__global__ void writeColumn(Word* __restrict__ items, std::size_t n, std::size_t words_per_item, std::size_t first,
                            int width, const Word* __restrict__ scratch) {
  const std::size_t k = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (k >= n) return;
  Word* to = items + k * words_per_item + first;
  const Word* from = scratch + k * static_cast<std::size_t>(width);
  for (int w = 0; w < width; ++w) to[w] = from[w];
}

// to[k] = item index[k], words_per_item words each.
template <class Word>
__global__ void gatherWhole(const Word* __restrict__ items, std::size_t n, std::size_t words_per_item,
                            const std::uint32_t* __restrict__ index, Word* __restrict__ to) {
  const std::size_t k = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (k >= n) return;
  const Word* from = items + static_cast<std::size_t>(index[k]) * words_per_item;
  Word* out = to + k * words_per_item;
  for (std::size_t w = 0; w < words_per_item; ++w) out[w] = from[w];
}

template <class Word>
void gatherWords(const void* items, std::size_t n, std::size_t item_bytes, const std::uint32_t* index, void* to,
                 cudaStream_t stream) {
  gatherWhole<Word><<<static_cast<unsigned>((n + kThreads - 1) / kThreads), kThreads, 0, stream>>>(
      static_cast<const Word*>(items), n, item_bytes / sizeof(Word), index, static_cast<Word*>(to));
  check(cudaGetLastError(), "gatherItems: gatherWhole launch");
}

template <class Word>
void permuteWords(void* items, std::size_t n, std::size_t item_bytes, const std::uint32_t* index, void* scratch,
                  cudaStream_t stream) {
  const std::size_t words_per_item = item_bytes / sizeof(Word);
  const std::size_t words_per_column = std::max<std::size_t>(1, kColumnBytes / sizeof(Word));
  const auto blocks = static_cast<unsigned>((n + kThreads - 1) / kThreads);
  for (std::size_t first = 0; first < words_per_item; first += words_per_column) {
    const int width = static_cast<int>(std::min(words_per_column, words_per_item - first));
    gatherColumn<Word><<<blocks, kThreads, 0, stream>>>(static_cast<const Word*>(items), n, words_per_item, first,
                                                        width, index, static_cast<Word*>(scratch));
    check(cudaGetLastError(), "permuteInPlace: gatherColumn launch");
    writeColumn<Word><<<blocks, kThreads, 0, stream>>>(static_cast<Word*>(items), n, words_per_item, first, width,
                                                       static_cast<const Word*>(scratch));
    check(cudaGetLastError(), "permuteInPlace: writeColumn launch");
  }
}

// The widest word that tiles an item: 16, 8, 4, 2 or 1 bytes.
std::size_t widestWord(std::size_t item_bytes) {
  for (std::size_t word = 16; word > 1; word /= 2)
    if (item_bytes % word == 0) return word;
  return 1;
}

// Calls f.template operator()<Word>() with the widest word that tiles an item. Items aligned to it
// (a device allocation's start is 256-byte aligned) have every word aligned too.
template <class F>
void withWidestWord(std::size_t item_bytes, F&& f) {
  switch (widestWord(item_bytes)) {
    case 16: f.template operator()<uint4>(); break;
    case 8: f.template operator()<std::uint64_t>(); break;
    case 4: f.template operator()<std::uint32_t>(); break;
    case 2: f.template operator()<std::uint16_t>(); break;
    default: f.template operator()<std::uint8_t>(); break;
  }
}

void requirePointers(const char* stage, std::size_t n, std::size_t item_bytes, const void* items,
                     const std::uint32_t* index, const void* other, const char* other_name) {
  require(items != nullptr && index != nullptr && other != nullptr, stage,
          "{} items of {} bytes with a null pointer (items {}, index {}, {} {})", n, item_bytes,
          items != nullptr ? "given" : "null", index != nullptr ? "given" : "null", other_name,
          other != nullptr ? "given" : "null");
  const std::size_t word = widestWord(item_bytes);
  require(reinterpret_cast<std::uintptr_t>(items) % word == 0 && reinterpret_cast<std::uintptr_t>(other) % word == 0,
          stage, "items of {} bytes move in {}-byte words, but the items ({}) or the {} ({}) are not aligned to them",
          item_bytes, word, items, other_name, other);
}

}  // namespace

std::size_t permuteScratchBytesPerItem(std::size_t item_bytes) { return std::min(item_bytes, kColumnBytes); }

void permuteInPlace(void* items, std::size_t n, std::size_t item_bytes, const std::uint32_t* index, void* scratch,
                    cudaStream_t stream) {
  if (n == 0 || item_bytes == 0) return;
  requirePointers("gpu::permuteInPlace", n, item_bytes, items, index, scratch, "scratch");
  withWidestWord(item_bytes,
                 [&]<class Word>() { permuteWords<Word>(items, n, item_bytes, index, scratch, stream); });
}

void gatherItems(const void* items, std::size_t n, std::size_t item_bytes, const std::uint32_t* index, void* to,
                 cudaStream_t stream) {
  if (n == 0 || item_bytes == 0) return;
  requirePointers("gpu::gatherItems", n, item_bytes, items, index, to, "destination");
  withWidestWord(item_bytes, [&]<class Word>() { gatherWords<Word>(items, n, item_bytes, index, to, stream); });
}

}  // namespace grove::gpu
