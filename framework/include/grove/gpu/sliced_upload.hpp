#pragma once
// SlicedUpload<Image, Item>: a whole host array (an index-form step's EPJ or SPJ array) sent to
// the device in kSlices slices, each converted to its device image and copied the first time a
// batch of walks needs it during the step, on one upload stream; a batch's stream then waits for
// its own slices only. Arrays in key order are read in neighbourhoods: the first batch reads a
// fraction of the slices, so its kernel starts once those have crossed the bus and the rest cross
// while it runs. (Sent whole, the ~90 MB of a 4 M-particle step kept an H100 idle for about
// 4 ms before every first kernel.) Needs the CUDA runtime headers, not nvcc; calls must be made
// with the upload's device current.
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <memory>

#include "grove/gpu/cuda_resources.hpp"

namespace grove::gpu {

template <class Image, class Item>
class SlicedUpload {
 public:
  static constexpr int kSlices = 64;  // the bits of a std::uint64_t mask
  using Mask = std::uint64_t;
  static constexpr Mask kAll = ~Mask{0};

  // A new step: the host array [from, from + n), nothing of it sent yet. The device array and the
  // staging buffer grow as needed: call it when no work in flight reads them.
  void start(const Item* from, std::size_t n) {
    if (!sent_event_[0])
      for (auto& e : sent_event_) e = std::make_unique<Event>();
    device_.reserve(n), staging_.reserve(n);
    from_ = from, n_ = n;
    slice_ = std::max<std::size_t>(1, (n + kSlices - 1) / kSlices);
    sent_ = 0;
  }

  // The slices that the indices [ids, ids + n) read, for a later step of the same array size
  // (sliceSize() tells whether it is still the same).
  Mask slicesOf(const int* ids, std::size_t n) const {
    Mask mask = 0;
    const auto count = static_cast<std::int64_t>(n);
    const auto slice = static_cast<int>(slice_);
#pragma omp parallel for schedule(static) reduction(| : mask)
    for (std::int64_t k = 0; k < count; ++k) mask |= Mask{1} << (ids[k] / slice);
    return mask;
  }
  std::size_t sliceSize() const { return slice_; }

  // Sends the slices of `mask` that have not gone yet this step (convert(item) gives an item's
  // image) on `upload`, and makes `stream` wait for every slice of `mask`.
  template <class Convert>
  void sendAndWait(Mask mask, Convert&& convert, cudaStream_t upload, cudaStream_t stream) {
    for (int k = 0; k < kSlices; ++k) {
      if (!(mask >> k & 1)) continue;
      const std::size_t first = static_cast<std::size_t>(k) * slice_;
      if (first >= n_) break;
      if (!(sent_ >> k & 1)) {
        const std::size_t count = std::min(slice_, n_ - first);
        convertAndCopyInSlices(device_.data() + first, staging_.data() + first, from_ + first, count, convert, upload);
        sent_event_[k]->record(upload);
        sent_ |= Mask{1} << k;
      }
      check(cudaStreamWaitEvent(stream, sent_event_[k]->get(), 0), "cudaStreamWaitEvent");
    }
  }

  const Image* device() const { return device_.data(); }
  std::size_t bytes() const { return n_ * sizeof(Image); }

 private:
  DeviceArray<Image> device_;
  PinnedArray<Image> staging_;
  std::unique_ptr<Event> sent_event_[kSlices];
  const Item* from_ = nullptr;
  std::size_t n_ = 0, slice_ = 1;
  Mask sent_ = 0;
};

}  // namespace grove::gpu
