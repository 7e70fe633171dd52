#pragma once
/// @file
/// Owners of CUDA resources (device arrays, pinned host arrays, streams, events) and the error
/// check that turns a failed CUDA call into grove::Error. Needs the CUDA runtime headers, not
/// nvcc: a host translation unit that links grove::gpu may use it.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>

namespace grove::gpu {

/// Throws grove::Error naming the call, the CUDA error and its description.
[[noreturn]] void throwCudaError(cudaError_t code, const std::string& what);

/// Does nothing for cudaSuccess; otherwise throwCudaError(code, what). what names the call.
inline void check(cudaError_t code, const char* what) {
  if (code != cudaSuccess) throwCudaError(code, what);
}

namespace detail {
void* allocateDevice(std::size_t bytes);
void* allocatePinned(std::size_t bytes);
void freeDevice(void* p) noexcept;
void freePinned(void* p) noexcept;
}  // namespace detail

/// An array of n trivially copyable T in device (Device = true) or page-locked host memory.
/// allocate() discards the contents: callers size buffers before filling them.
template <class T, bool Device>
class CudaArray {
  static_assert(std::is_trivially_copyable_v<T>, "CUDA arrays hold trivially copyable types");

 public:
  CudaArray() = default;
  CudaArray(const CudaArray&) = delete;
  CudaArray& operator=(const CudaArray&) = delete;
  /// Takes o's memory; o is left empty.
  CudaArray(CudaArray&& o) noexcept
      : data_(std::exchange(o.data_, nullptr)), capacity_(std::exchange(o.capacity_, 0)) {}
  /// Frees this array's memory and takes o's; o is left empty.
  CudaArray& operator=(CudaArray&& o) noexcept {
    if (this != &o) {
      release();
      data_ = std::exchange(o.data_, nullptr);
      capacity_ = std::exchange(o.capacity_, 0);
    }
    return *this;
  }
  ~CudaArray() { release(); }

  /// Exactly n elements (contents lost).
  void allocate(std::size_t n) {
    release();
    if (n == 0) return;
    void* p = Device ? detail::allocateDevice(n * sizeof(T)) : detail::allocatePinned(n * sizeof(T));
    data_ = static_cast<T*>(p);
    capacity_ = n;
  }
  /// At least n elements: grows by half again when it must, so that slowly growing batches do
  /// not reallocate every call (contents lost when it grows). Returns whether it reallocated.
  bool reserve(std::size_t n) {
    if (n <= capacity_) return false;
    allocate(std::max(n, capacity_ + capacity_ / 2));
    return true;
  }
  /// Frees the memory (capacity 0).
  void release() noexcept {
    if (data_) Device ? detail::freeDevice(data_) : detail::freePinned(data_);
    data_ = nullptr;
    capacity_ = 0;
  }

  /// The memory (a device pointer for DeviceArray); null when nothing is allocated.
  T* data() const { return data_; }
  /// Elements allocated.
  std::size_t capacity() const { return capacity_; }
  /// Bytes allocated.
  std::size_t bytes() const { return capacity_ * sizeof(T); }
  /// Element i of a pinned (host) array.
  T& operator[](std::size_t i) const requires(!Device) { return data_[i]; }

 private:
  T* data_ = nullptr;
  std::size_t capacity_ = 0;
};

/// n elements in device memory.
template <class T>
using DeviceArray = CudaArray<T, true>;
/// n elements in page-locked host memory (asynchronous copies from and to it overlap).
template <class T>
using PinnedArray = CudaArray<T, false>;

/// A non-blocking stream (no implicit ordering with the legacy default stream).
class Stream {
 public:
  Stream() { check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreateWithFlags"); }
  /// A priority `below_highest` levels under the current device's highest, and never as low as
  /// its lowest, the default streams' own, where the device has another (so a Priority stream's
  /// blocks always go before the default streams').
  struct Priority {
    int below_highest = 0;  ///< levels under the device's highest priority (0: the highest)
  };
  /// A stream whose blocks the device starts before those of lower-priority streams whenever both
  /// wait for room: for work that would otherwise queue behind a long kernel of another stream.
  explicit Stream(Priority priority) {
    int least = 0, greatest = 0;  // numerically, greatest <= least
    check(cudaDeviceGetStreamPriorityRange(&least, &greatest), "cudaDeviceGetStreamPriorityRange");
    const int lowest_above_default = std::max(greatest, least - 1);
    check(cudaStreamCreateWithPriority(&stream_, cudaStreamNonBlocking,
                                       std::min(greatest + std::max(priority.below_highest, 0), lowest_above_default)),
          "cudaStreamCreateWithPriority");
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  /// Takes o's stream; o is left without one.
  Stream(Stream&& o) noexcept : stream_(std::exchange(o.stream_, nullptr)) {}
  ~Stream() {
    if (stream_) cudaStreamDestroy(stream_);
  }
  /// The CUDA stream (for grove::Gpu{stream.get()}).
  cudaStream_t get() const { return stream_; }
  /// Waits until all work queued on the stream is done.
  void synchronize() const { check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize"); }
  /// Later work on this stream waits until the event's work is done (no host wait).
  void waitFor(cudaEvent_t event) const { check(cudaStreamWaitEvent(stream_, event, 0), "cudaStreamWaitEvent"); }

 private:
  cudaStream_t stream_ = nullptr;
};

/// A CUDA event, owned: orders work between streams, and times it when made with timing.
class Event {
 public:
  /// timing = false makes a lighter event that only orders work.
  explicit Event(bool timing = false) {
    check(cudaEventCreateWithFlags(&event_, timing ? cudaEventDefault : cudaEventDisableTiming),
          "cudaEventCreateWithFlags");
  }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  /// Takes o's event; o is left without one.
  Event(Event&& o) noexcept : event_(std::exchange(o.event_, nullptr)) {}
  ~Event() {
    if (event_) cudaEventDestroy(event_);
  }
  /// The CUDA event.
  cudaEvent_t get() const { return event_; }
  /// Records the event on stream (it completes when the work queued before it does).
  void record(cudaStream_t stream) const { check(cudaEventRecord(event_, stream), "cudaEventRecord"); }
  /// Waits until the recorded work is done.
  void synchronize() const { check(cudaEventSynchronize(event_), "cudaEventSynchronize"); }
  /// Seconds from start to this event (both recorded, both timing events).
  double secondsSince(const Event& start) const {
    float ms = 0.0f;
    check(cudaEventElapsedTime(&ms, start.event_, event_), "cudaEventElapsedTime");
    return 1e-3 * static_cast<double>(ms);
  }

 private:
  cudaEvent_t event_ = nullptr;
};

/// Whether p lies in page-locked host memory that the device can copy by DMA (cudaMallocHost, or
/// registered: grove's page-locked LargeVectors). Such memory must stay unchanged until the copies
/// that read it are done.
inline bool isPageLocked(const void* p) {
  cudaPointerAttributes attributes{};
  if (cudaPointerGetAttributes(&attributes, p) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return attributes.type == cudaMemoryTypeHost;
}

/// Asynchronous host-to-device copy of n elements on `stream` (nothing when n is 0); from pinned
/// memory it returns at once.
template <class T>
void copyToDeviceAsync(T* to, const T* from, std::size_t n, const Stream& stream) {
  if (n == 0) return;
  check(cudaMemcpyAsync(to, from, n * sizeof(T), cudaMemcpyHostToDevice, stream.get()), "cudaMemcpyAsync");
}

/// Converts n host items into device images in a pinned staging buffer and copies them to the
/// device, slice by slice: the bus carries slice k while the host threads convert slice k + 1.
/// (For the whole EPJ/SPJ arrays of an index-form step, millions of particles, both take a few
/// milliseconds; one after the other they would add up.) convert(item) returns the image.
template <class Image, class Item, class Convert>
void convertAndCopyInSlices(Image* to, Image* staging, const Item* from, std::size_t n, Convert&& convert,
                            cudaStream_t stream, std::size_t slice = std::size_t{1} << 19) {
  for (std::size_t first = 0; first < n; first += slice) {
    const auto begin = static_cast<std::int64_t>(first);
    const auto end = static_cast<std::int64_t>(std::min(n, first + slice));
#pragma omp parallel for schedule(static)
    for (std::int64_t k = begin; k < end; ++k) staging[k] = convert(from[k]);
    check(cudaMemcpyAsync(to + begin, staging + begin, static_cast<std::size_t>(end - begin) * sizeof(Image),
                          cudaMemcpyHostToDevice, stream),
          "cudaMemcpyAsync");
  }
}

/// host[k] = staging[k] for k < n, on the host's threads (a download's second half: the bus filled
/// the page-locked staging at its full speed).
template <class T>
void copyFromStaging(T* host, const T* staging, std::size_t n) {
  const auto count = static_cast<std::int64_t>(n);
#pragma omp parallel for schedule(static)
  for (std::int64_t k = 0; k < count; ++k) host[k] = staging[k];
}

/// Copies n elements from the device to host through page-locked staging (grown as needed), on
/// `stream`, and waits: a pageable destination would have the driver stage it on one thread at
/// about half the bus's speed.
template <class T>
void downloadThroughStaging(T* host, const T* device, std::size_t n, PinnedArray<T>& staging, cudaStream_t stream) {
  if (n == 0) return;
  staging.reserve(n);
  check(cudaMemcpyAsync(staging.data(), device, n * sizeof(T), cudaMemcpyDeviceToHost, stream), "cudaMemcpyAsync");
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  copyFromStaging(host, staging.data(), n);
}

/// Grows a device array that work on `stream` uses in stream order: earlier work on the stream
/// may still read the old buffer, so it is waited for first (only when the array must grow).
template <class T>
void growOnStream(DeviceArray<T>& array, std::size_t n, const Stream& stream) {
  if (array.capacity() >= n) return;
  stream.synchronize();
  array.reserve(n);
}

/// The device time force kernels kept the GPU busy: the union of their [start, stop] event
/// intervals, not the sum. Batches on different streams run concurrently, and summing their
/// intervals counts the shared time twice (it made a step whose batches were all queued at once,
/// as on REUSE_LIST steps, look 20 % slower than it was). Intervals are added in launch order,
/// measured from an anchor event recorded whenever the engine had nothing in flight.
class KernelBusyClock {
 public:
  /// Before a batch's kernels are enqueued on `stream`; idle: no other batch is in flight.
  void beforeLaunch(bool idle, cudaStream_t stream) {
    if (idle || !anchored_) {
      anchor_.record(stream);
      anchored_ = true;
      covered_until_ = 0.0;
    }
  }
  /// The seconds a kernel's completed [start, stop] adds to the busy time.
  double add(const Event& start, const Event& stop) {
    anchor_.synchronize();  // done long before: recorded on an idle stream ahead of start
    const double s = start.secondsSince(anchor_), e = stop.secondsSince(anchor_);
    const double added = std::max(0.0, e - std::max(s, covered_until_));
    covered_until_ = std::max(covered_until_, e);
    return added;
  }

 private:
  Event anchor_{true};
  bool anchored_ = false;
  double covered_until_ = 0.0;
};

/// Makes a device current for a scope and restores the previous one after.
class ScopedDevice {
 public:
  /// Makes device current (if it is not already) for the calling thread.
  explicit ScopedDevice(int device) {
    check(cudaGetDevice(&previous_), "cudaGetDevice");
    if (device != previous_) check(cudaSetDevice(device), "cudaSetDevice");
  }
  ScopedDevice(const ScopedDevice&) = delete;
  ScopedDevice& operator=(const ScopedDevice&) = delete;
  ~ScopedDevice() {
    int now = previous_;
    if (cudaGetDevice(&now) == cudaSuccess && now != previous_) cudaSetDevice(previous_);
  }

 private:
  int previous_ = 0;
};

}  // namespace grove::gpu
