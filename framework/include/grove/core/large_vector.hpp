#pragma once
// LargeVector<T>: a std::vector whose large buffers (4 MiB and up) sit on 2 MiB boundaries and are
// marked for transparent huge pages (madvise MADV_HUGEPAGE). For the arrays that hold every
// particle (the user's particle system, the tree's key-ordered copies, the sort's buffers):
// the tree gathers particles through a permutation, and with 4 KiB pages nearly every such
// access misses the TLB. Linux's default THP mode ("madvise") gives huge pages only to regions
// that ask. Measured on the GPU machine's 16-core Xeon (doc/performance.md): gathering 4 M
// particles of 96 bytes through a random permutation took 14.6 ms on 4 KiB pages, 9.1 ms on
// huge pages. Elsewhere (no THP, other systems) the advice is ignored and nothing changes.
#include <cstddef>
#include <cstdlib>
#include <memory>
#include <new>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace grove {

template <class T>
struct HugePageAllocator {
  using value_type = T;
  static constexpr std::size_t kHugePage = std::size_t{2} << 20;
  static constexpr std::size_t kThreshold = std::size_t{4} << 20;

  HugePageAllocator() noexcept = default;
  template <class U>
  HugePageAllocator(const HugePageAllocator<U>&) noexcept {}

  T* allocate(std::size_t n) {
    const std::size_t bytes = n * sizeof(T);
    if (bytes < kThreshold || alignof(T) > kHugePage) return std::allocator<T>().allocate(n);
    const std::size_t rounded = (bytes + kHugePage - 1) / kHugePage * kHugePage;
    void* p = std::aligned_alloc(kHugePage, rounded);
    if (!p) throw std::bad_alloc();
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    madvise(p, rounded, MADV_HUGEPAGE);  // advice only: a failure leaves ordinary pages
#endif
    return static_cast<T*>(p);
  }
  void deallocate(T* p, std::size_t n) noexcept {
    if (n * sizeof(T) < kThreshold || alignof(T) > kHugePage)
      std::allocator<T>().deallocate(p, n);
    else
      std::free(p);
  }
  template <class U>
  bool operator==(const HugePageAllocator<U>&) const noexcept {
    return true;
  }
};

template <class T>
using LargeVector = std::vector<T, HugePageAllocator<T>>;

}  // namespace grove
