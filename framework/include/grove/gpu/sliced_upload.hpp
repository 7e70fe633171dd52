#pragma once
/// @file
/// SlicedUpload<Image, Item>: a whole host array (an index-form step's EPJ or SPJ array) sent to
/// @verbatim
/// the device in kSlices slices, each converted to its device image and copied the first time a
/// batch of walks needs it during the step, on one upload stream; a batch's stream then waits for
/// its own slices only. Arrays in key order are read in neighbourhoods: the first batch reads a
/// fraction of the slices, so its kernel starts once those have crossed the bus and the rest cross
/// while it runs. (Sent whole, the ~90 MB of a 4 M-particle step kept an H100 idle for about
/// 4 ms before every first kernel.) Needs the CUDA runtime headers, not nvcc; calls must be made
/// with the upload's device current.
/// @endverbatim
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <type_traits>

#include "grove/gpu/cuda_resources.hpp"

namespace grove::gpu {

/// A host array sent to the device slice by slice as batches need it (see the top of this file).
template <class Image, class Item>
class SlicedUpload {
 public:
  static constexpr int kSlices = 64;  ///< the bits of a std::uint64_t mask
  using Mask = std::uint64_t;         ///< one bit per slice
  static constexpr Mask kAll = ~Mask{0};  ///< every slice

  /// A new step: the host array [from, from + n), nothing of it sent yet; each slice is converted
  /// into a page-locked staging buffer and copied from there. The device array and the staging
  /// buffer grow as needed: call it when no work in flight reads them.
  void start(const Item* from, std::size_t n) {
    restart(from, n, false);
    staging_.reserve(n);
  }
  /// The same, for an array in page-locked memory (isPageLocked) whose items are byte for byte
  /// their images (the caller vouches for the layout): slices go by DMA straight from it, with no
  /// conversion and no staging (most of the 3 ms of slice conversion in a 4 M-particle reuse step
  /// on the GPU machine).
  /// The array must stay unchanged until the streams that waited for it are done.
  void startDirect(const Item* from, std::size_t n)
    requires(sizeof(Item) == sizeof(Image) && std::is_trivially_copyable_v<Item>)
  {
    restart(from, n, true);
  }
  /// Whether this step's array goes by DMA straight from page-locked memory (startDirect).
  bool direct() const { return direct_; }

  /// The slices that the indices [ids, ids + n) read, for a later step of the same array size
  /// (sliceSize() tells whether it is still the same).
  Mask slicesOf(const int* ids, std::size_t n) const {
    Mask mask = 0;
    const auto count = static_cast<std::int64_t>(n);
    const auto slice = static_cast<int>(slice_);
#pragma omp parallel for schedule(static) reduction(| : mask)
    for (std::int64_t k = 0; k < count; ++k) mask |= Mask{1} << (ids[k] / slice);
    return mask;
  }
  /// Items per slice (the last may hold fewer).
  std::size_t sliceSize() const { return slice_; }

  /// Sends the slices of `mask` that have not gone yet this step (convert(item) gives an item's
  /// image) on `upload`, and makes `stream` wait for every slice of `mask`. Every call of a step
  /// must pass the same `upload` stream: slices then complete in the order they were sent, and
  /// waiting for the last-sent slice of `mask` covers all of them (one wait per call, not one per
  /// slice).
  template <class Convert>
  void sendAndWait(Mask mask, Convert&& convert, cudaStream_t upload, cudaStream_t stream) {
    int missing[kSlices], n_missing = 0;
    int last_sent = -1;  // the slice of `mask` sent last, whose completion implies the others'
    for (int k = 0; k < kSlices; ++k) {
      if (!(mask >> k & 1)) continue;
      if (static_cast<std::size_t>(k) * slice_ >= n_) break;
      if (!(sent_ >> k & 1)) missing[n_missing++] = k;
      else if (last_sent < 0 || order_[k] > order_[last_sent]) last_sent = k;
    }
    // The missing slices, kGroup at a time: each group converted in one parallel loop, then copied
    // slice by slice while the next group converts. (One parallel loop per slice of 1 MB spent
    // more time forking and joining threads than converting: a G3 reuse step's conversions took
    // 5.8 ms that way on the GPU machine, 3.0 ms in groups.)
    constexpr int kGroup = 8;
    for (int g = 0; g < n_missing; g += kGroup) {
      const int group_end = std::min(n_missing, g + kGroup);
      if (!direct_) convertSlices(missing + g, group_end - g, convert);
      const void* source = direct_ ? static_cast<const void*>(from_) : static_cast<const void*>(staging_.data());
      for (int m = g; m < group_end; ++m) {
        const int k = missing[m];
        const std::size_t first = static_cast<std::size_t>(k) * slice_, count = std::min(slice_, n_ - first);
        check(cudaMemcpyAsync(device_.data() + first, static_cast<const Image*>(source) + first,
                              count * sizeof(Image), cudaMemcpyHostToDevice, upload),
              "cudaMemcpyAsync");
        sent_event_[k]->record(upload);
        sent_ |= Mask{1} << k;
        order_[k] = next_order_++;
        last_sent = k;
      }
    }
    if (last_sent >= 0) check(cudaStreamWaitEvent(stream, sent_event_[last_sent]->get(), 0), "cudaStreamWaitEvent");
  }

  /// The device array of images (valid where the slices have been sent).
  const Image* device() const { return device_.data(); }
  /// The images' bytes this step.
  std::size_t bytes() const { return n_ * sizeof(Image); }

 private:
  void restart(const Item* from, std::size_t n, bool direct) {
    if (!sent_event_[0])
      for (auto& e : sent_event_) e = std::make_unique<Event>();
    device_.reserve(n);
    from_ = from, n_ = n, direct_ = direct;
    slice_ = std::max<std::size_t>(1, (n + kSlices - 1) / kSlices);
    sent_ = 0, next_order_ = 0;
  }

  /// Converts slices[0..count) into the staging buffer in one parallel loop over chunks of items.
  template <class Convert>
  void convertSlices(const int* slices, int count, Convert& convert) {
    constexpr std::size_t kChunk = 4096;
    const std::size_t chunks_per_slice = (slice_ + kChunk - 1) / kChunk;
    const auto tasks = static_cast<std::int64_t>(chunks_per_slice * static_cast<std::size_t>(count));
#pragma omp parallel for schedule(static)
    for (std::int64_t t = 0; t < tasks; ++t) {
      const auto task = static_cast<std::size_t>(t);
      const std::size_t slice_first = static_cast<std::size_t>(slices[task / chunks_per_slice]) * slice_;
      const std::size_t slice_end = std::min(n_, slice_first + slice_);
      const std::size_t first = slice_first + task % chunks_per_slice * kChunk;
      const std::size_t end = std::min(slice_end, first + kChunk);
      for (std::size_t i = first; i < end; ++i) staging_[i] = convert(from_[i]);
    }
  }

  DeviceArray<Image> device_;
  PinnedArray<Image> staging_;
  std::unique_ptr<Event> sent_event_[kSlices];
  const Item* from_ = nullptr;
  std::size_t n_ = 0, slice_ = 1;
  bool direct_ = false;  // slices copied from from_ itself (startDirect)
  Mask sent_ = 0;
  int order_[kSlices] = {};  // order_[k]: when slice k was sent this step (0 first)
  int next_order_ = 0;
};

}  // namespace grove::gpu
