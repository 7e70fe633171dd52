#pragma once
/// @file
/// grove::gpu::DeviceVector<T>: a sized array of trivially copyable T in device memory, the
/// storage of the GPU-resident pipeline. Needs the CUDA runtime headers, not nvcc.
///
/// Growth is explicit: resize() discards the contents (a stage that refills its output), and
/// resizeKeep() copies them over on the given stream (a stage that appends). Capacity grows by
/// half again, so slowly growing runs do not reallocate every step.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <utility>
#include <vector>

#include "grove/gpu/cuda_resources.hpp"

namespace grove::gpu {

/// A sized array of T in device memory, owned (freed on destruction), movable, not copyable.
/// Needs: T trivially copyable (copied as bytes). Throws grove::Error when CUDA fails.
template <class T>
class DeviceVector {
 public:
  DeviceVector() = default;  ///< empty, nothing allocated
  /// n elements, uninitialised.
  explicit DeviceVector(std::size_t n) { resize(n); }

  /// Device pointer to the first element (null while nothing is allocated).
  T* data() { return array_.data(); }
  /// Device pointer to the first element (read only).
  const T* data() const { return array_.data(); }
  /// Elements in use.
  std::size_t size() const { return size_; }
  /// Whether size() is 0.
  bool empty() const { return size_ == 0; }
  /// Elements allocated.
  std::size_t capacity() const { return array_.capacity(); }
  /// Bytes allocated.
  std::size_t bytes() const { return array_.bytes(); }

  /// n elements; contents lost when the capacity grows. Growing frees the old buffer with
  /// cudaFree, which waits for the device, so kernels still queued on it finish first (a
  /// stream-ordered free would not wait: keep it synchronous).
  void resize(std::size_t n) {
    array_.reserve(n);
    size_ = n;
  }
  /// n elements, the first min(n, size()) kept (copied on `stream`, and waited for, when the
  /// capacity grows).
  void resizeKeep(std::size_t n, cudaStream_t stream) {
    if (n > array_.capacity()) {
      DeviceArray<T> grown;
      grown.allocate(std::max(n, array_.capacity() + array_.capacity() / 2));
      if (size_ > 0)
        check(cudaMemcpyAsync(grown.data(), array_.data(), size_ * sizeof(T), cudaMemcpyDeviceToDevice, stream),
              "cudaMemcpyAsync (DeviceVector grow)");
      check(cudaStreamSynchronize(stream), "cudaStreamSynchronize (DeviceVector grow)");
      array_ = std::move(grown);
    }
    size_ = n;
  }
  /// size() 0; the memory stays allocated.
  void clear() { size_ = 0; }
  /// size() 0 and the memory freed.
  void release() {
    array_.release();
    size_ = 0;
  }
  /// Exchanges contents with o (no copy).
  void swap(DeviceVector& o) noexcept {
    std::swap(array_, o.array_);
    std::swap(size_, o.size_);
  }

  /// Replaces the contents with n host elements, copied on `stream` and waited for.
  void assign(const T* host, std::size_t n, cudaStream_t stream) {
    assignAsync(host, n, stream);
    if (n > 0) check(cudaStreamSynchronize(stream), "cudaStreamSynchronize (upload)");
  }
  /// The same, not waited for: from pageable memory the call returns once the data are staged (the
  /// host array may change then); from page-locked memory at once (it must stay until the copy ran).
  void assignAsync(const T* host, std::size_t n, cudaStream_t stream) {
    resize(n);
    if (n == 0) return;
    check(cudaMemcpyAsync(data(), host, n * sizeof(T), cudaMemcpyHostToDevice, stream), "cudaMemcpyAsync (upload)");
  }
  /// Copies all size() elements into host (which must hold that many), on `stream`; waits.
  void copyTo(T* host, cudaStream_t stream) const { copyTo(host, 0, size_, stream); }
  /// Copies elements [first, first + n) into host, on `stream`; waits.
  void copyTo(T* host, std::size_t first, std::size_t n, cudaStream_t stream) const {
    if (n == 0) return;
    check(cudaMemcpyAsync(host, data() + first, n * sizeof(T), cudaMemcpyDeviceToHost, stream),
          "cudaMemcpyAsync (download)");
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize (download)");
  }
  /// The elements, copied to a new host vector on `stream`; waits.
  std::vector<T> toHost(cudaStream_t stream) const {
    std::vector<T> host(size_);
    copyTo(host.data(), stream);
    return host;
  }
  /// Element i, copied to the host on `stream`; waits.
  T elementToHost(std::size_t i, cudaStream_t stream) const {
    T value;
    copyTo(&value, i, 1, stream);
    return value;
  }

 private:
  DeviceArray<T> array_;
  std::size_t size_ = 0;
};

}  // namespace grove::gpu
