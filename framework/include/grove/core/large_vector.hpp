#pragma once
/// @file
/// LargeVector<T>: a std::vector whose large buffers (4 MiB and up) sit on 2 MiB boundaries and are
/// marked for transparent huge pages (madvise MADV_HUGEPAGE). For the arrays that hold every
/// particle (the user's particle system, the tree's key-ordered copies, the sort's buffers):
/// the tree gathers particles through a permutation, and with 4 KiB pages nearly every such
/// access misses the TLB. Linux's default THP mode ("madvise") gives huge pages only to regions
/// that ask. Measured on the GPU machine's 16-core Xeon (doc/performance.md): gathering 4 M
/// particles of 96 bytes through a random permutation took 14.6 ms on 4 KiB pages, 9.1 ms on
/// huge pages. Elsewhere (no THP, other systems) the advice is ignored and nothing changes.
///
/// Page-locked LargeVectors, for the arrays a tree hands to a multiwalk dispatch (its EPI array,
/// and the whole EPJ array of the index form): a device copies page-locked (pinned) host memory
/// by DMA, straight from the tree's array, where ordinary memory must first be copied into a
/// pinned staging buffer by the host threads. grove's core knows no device runtime: the GPU
/// library installs the hooks that lock and unlock memory (installPageLockHooks; grove::gpu does
/// it when a GPU multiwalk is made), and pageLock(v) then moves a vector into memory that is
/// locked for as long as it is allocated. Locking happens in the allocator, so a vector that
/// grows keeps its memory locked and no registration outlives its memory.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <memory>
#include <mutex>
#include <new>
#include <type_traits>
#include <unordered_set>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace grove {

/// The device runtime's functions that page-lock host memory (installed by grove::gpu).
struct PageLockHooks {
  /// Page-locks [p, p + bytes) and says whether it did (null: no locking).
  bool (*lock)(void* p, std::size_t bytes) = nullptr;
  /// Undoes a lock that `lock` made at p.
  void (*unlock)(void* p) = nullptr;
};

namespace detail {

struct PageLockState {
  std::mutex mutex;
  PageLockHooks hooks;
  std::unordered_set<const void*> locked;  // blocks the hooks locked (to unlock exactly those)
};
// Never destroyed: vectors in static storage may free their memory after it would be.
inline PageLockState& pageLockState() {
  static PageLockState* state = new PageLockState;
  return *state;
}

inline void lockBlock(void* p, std::size_t bytes) {
  PageLockState& s = pageLockState();
  std::lock_guard guard(s.mutex);
  // A failed lock (too much locked memory, say) leaves ordinary memory: dispatch then copies
  // through its staging buffers, as it does for any unlocked array.
  if (s.hooks.lock && s.hooks.lock(p, bytes)) s.locked.insert(p);
}

inline void unlockBlock(void* p) noexcept {
  PageLockState& s = pageLockState();
  std::lock_guard guard(s.mutex);
  if (s.locked.erase(p) && s.hooks.unlock) s.hooks.unlock(p);
}

}  // namespace detail

/// Installs the device runtime's hooks (once is enough; later calls replace them). Thread-safe.
inline void installPageLockHooks(PageLockHooks hooks) {
  detail::PageLockState& s = detail::pageLockState();
  std::lock_guard guard(s.mutex);
  s.hooks = hooks;
}

/// Whether hooks with a lock function are installed (pageLock() can lock). Thread-safe.
inline bool pageLockingAvailable() {
  detail::PageLockState& s = detail::pageLockState();
  std::lock_guard guard(s.mutex);
  return s.hooks.lock != nullptr;
}

/// Whether p is the start of a block that grove's hooks locked (and that is still allocated).
inline bool isPageLockedByGrove(const void* p) {
  detail::PageLockState& s = detail::pageLockState();
  std::lock_guard guard(s.mutex);
  return s.locked.count(p) != 0;
}

/// LargeVector's allocator: buffers of kThreshold bytes and up on kHugePage boundaries with
/// MADV_HUGEPAGE advice (Linux), smaller ones from std::allocator; with page_locked, every buffer
/// is placed by it (small ones on kPage boundaries) and page-locked through the installed hooks.
template <class T>
struct HugePageAllocator {
  using value_type = T;  ///< the element type
  /// Allocators with different page_locked differ, so these make a vector's memory go with its
  /// allocator when vectors are moved or swapped.
  using propagate_on_container_move_assignment = std::true_type;
  using propagate_on_container_swap = std::true_type;  ///< see propagate_on_container_move_assignment
  using is_always_equal = std::false_type;              ///< allocators compare by page_locked
  static constexpr std::size_t kHugePage = std::size_t{2} << 20;   ///< huge-page alignment: 2 MiB
  static constexpr std::size_t kThreshold = std::size_t{4} << 20;  ///< bytes from which a buffer gets huge pages: 4 MiB
  static constexpr std::size_t kPage = std::size_t{4} << 10;       ///< page alignment of smaller locked buffers: 4 KiB

  /// Lock every buffer of this allocator (of any size: small ones on page boundaries).
  bool page_locked = false;

  HugePageAllocator() noexcept = default;  ///< not page-locked
  /// page_locked = locked.
  explicit HugePageAllocator(bool locked) noexcept : page_locked(locked) {}
  /// The same page_locked, for another element type (rebinding).
  template <class U>
  HugePageAllocator(const HugePageAllocator<U>& o) noexcept : page_locked(o.page_locked) {}

  /// Memory for n elements, placed as the class says. Throws std::bad_array_new_length when n is
  /// too large, std::bad_alloc when the allocation fails. A failed page lock leaves ordinary memory.
  T* allocate(std::size_t n) {
    // (so that the rounded size below cannot pass the largest object size)
    constexpr auto kMaxBytes = static_cast<std::size_t>(std::numeric_limits<std::ptrdiff_t>::max()) - kHugePage;
    if (n > kMaxBytes / sizeof(T)) throw std::bad_array_new_length();
    const std::size_t bytes = n * sizeof(T);
    if (!ownsAllocation(bytes)) return std::allocator<T>().allocate(n);
    const std::size_t align = bytes < kThreshold ? kPage : kHugePage;
    const std::size_t rounded = (std::max<std::size_t>(bytes, 1) + align - 1) / align * align;
    void* p = std::aligned_alloc(align, rounded);
    if (!p) throw std::bad_alloc();
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (align == kHugePage) madvise(p, rounded, MADV_HUGEPAGE);  // advice only: a failure leaves ordinary pages
#endif
    if (page_locked) detail::lockBlock(p, rounded);
    return static_cast<T*>(p);
  }
  /// Frees p, from allocate(n) of an equal allocator (unlocking it first if it was locked).
  void deallocate(T* p, std::size_t n) noexcept {
    if (!ownsAllocation(n * sizeof(T))) return std::allocator<T>().deallocate(p, n);
    if (page_locked) detail::unlockBlock(p);
    std::free(p);
  }
  /// A copy of a vector is ordinary memory unless it is locked in its turn (a default allocator).
  HugePageAllocator select_on_container_copy_construction() const noexcept { return {}; }
  /// Equal when page_locked is (memory from one may be freed by the other).
  template <class U>
  bool operator==(const HugePageAllocator<U>& o) const noexcept {
    return page_locked == o.page_locked;
  }

 private:
  // Buffers this allocator places itself (the others come from std::allocator).
  bool ownsAllocation(std::size_t bytes) const noexcept {
    return alignof(T) <= kHugePage && (page_locked || bytes >= kThreshold);
  }
};

/// A std::vector on HugePageAllocator: huge pages for its large buffers, page-locked after pageLock().
template <class T>
using LargeVector = std::vector<T, HugePageAllocator<T>>;

/// Moves v (contents and capacity) into page-locked memory, if the hooks are installed and it is
/// not there yet; later growth stays locked. Returns whether v's allocator now locks its memory.
/// Locking costs about 1.4 ms per 64 MB on the GPU machine: call it when v is empty or once.
template <class T>
bool pageLock(LargeVector<T>& v) {
  if (v.get_allocator().page_locked) return true;
  if (!pageLockingAvailable()) return false;
  LargeVector<T> locked{HugePageAllocator<T>(true)};
  locked.reserve(v.capacity());
  locked.assign(v.begin(), v.end());
  v = std::move(locked);
  return true;
}

}  // namespace grove
