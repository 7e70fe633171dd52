// LargeVector's page locking (grove/core/large_vector.hpp), with hooks that only count: which
// buffers are locked, that each lock is undone exactly once, and that contents survive the move
// into locked memory. (The GPU library's hooks register memory with CUDA; tests/gpu runs them.)
#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <utility>

#include "grove/core/large_vector.hpp"

namespace {

struct CountingHooks {
  static inline std::set<void*> locked;
  static inline int locks = 0, unlocks = 0, unlocks_of_unlocked = 0;
  static inline bool refuse = false;  // act as a lock that fails (too much locked memory)

  static bool lock(void* p, std::size_t bytes) {
    if (refuse || bytes == 0) return false;
    ++locks;
    locked.insert(p);
    return true;
  }
  static void unlock(void* p) {
    ++unlocks;
    if (!locked.erase(p)) ++unlocks_of_unlocked;
  }
};

class PageLockedLargeVector : public ::testing::Test {
 protected:
  void SetUp() override {
    CountingHooks::locked.clear();
    CountingHooks::locks = CountingHooks::unlocks = CountingHooks::unlocks_of_unlocked = 0;
    CountingHooks::refuse = false;
    grove::installPageLockHooks({&CountingHooks::lock, &CountingHooks::unlock});
  }
  void TearDown() override { grove::installPageLockHooks({}); }
};

TEST(LargeVectorWithoutHooks, PageLockLeavesTheVectorAsItIs) {
  grove::installPageLockHooks({});
  grove::LargeVector<int> v{1, 2, 3};
  const int* before = v.data();
  EXPECT_FALSE(grove::pageLockingAvailable());
  EXPECT_FALSE(grove::pageLock(v));
  EXPECT_EQ(v.data(), before);
  EXPECT_FALSE(v.get_allocator().page_locked);
}

TEST_F(PageLockedLargeVector, ContentsMoveIntoLockedMemoryAndGrowthStaysLocked) {
  grove::LargeVector<std::int64_t> v;
  for (std::int64_t i = 0; i < 1000; ++i) v.push_back(3 * i);
  EXPECT_FALSE(grove::isPageLockedByGrove(v.data()));
  ASSERT_TRUE(grove::pageLock(v));
  ASSERT_EQ(v.size(), 1000u);
  for (std::int64_t i = 0; i < 1000; ++i) ASSERT_EQ(v[static_cast<std::size_t>(i)], 3 * i);
  EXPECT_TRUE(grove::isPageLockedByGrove(v.data()));
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(v.data()) % 4096, 0u) << "locked buffers start on a page";
  EXPECT_EQ(CountingHooks::locks, 1);

  // Growing reallocates: the new buffer is locked, the old one unlocked.
  const void* old = v.data();
  v.resize(v.capacity() * 4, 7);
  EXPECT_NE(static_cast<const void*>(v.data()), old);
  EXPECT_TRUE(grove::isPageLockedByGrove(v.data()));
  EXPECT_FALSE(grove::isPageLockedByGrove(old));
  EXPECT_EQ(CountingHooks::locks, 2);
  EXPECT_EQ(CountingHooks::unlocks, 1);
  EXPECT_EQ(v[999], 3 * 999);
  EXPECT_TRUE(grove::pageLock(v)) << "a second call finds it locked";
  EXPECT_EQ(CountingHooks::locks, 2);

  // Moves carry the lock with the memory; copies are ordinary memory.
  grove::LargeVector<std::int64_t> moved = std::move(v);
  EXPECT_TRUE(grove::isPageLockedByGrove(moved.data()));
  grove::LargeVector<std::int64_t> copy = moved;
  EXPECT_FALSE(copy.get_allocator().page_locked);
  EXPECT_FALSE(grove::isPageLockedByGrove(copy.data()));
  grove::LargeVector<std::int64_t> swapped;
  swapped.swap(moved);
  EXPECT_TRUE(swapped.get_allocator().page_locked);
  EXPECT_TRUE(grove::isPageLockedByGrove(swapped.data()));
}

TEST_F(PageLockedLargeVector, EveryLockIsUndoneOnceWhenTheMemoryGoes) {
  {
    grove::LargeVector<float> empty_then_filled, big;
    ASSERT_TRUE(grove::pageLock(empty_then_filled));
    EXPECT_EQ(CountingHooks::locks, 0) << "an empty vector allocates nothing to lock";
    empty_then_filled.assign(10, 1.5f);  // a small buffer: locked too
    ASSERT_TRUE(grove::pageLock(big));
    big.resize(std::size_t{3} << 20);  // 12 MB: on huge-page boundaries
    EXPECT_TRUE(grove::isPageLockedByGrove(empty_then_filled.data()));
    EXPECT_TRUE(grove::isPageLockedByGrove(big.data()));
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(big.data()) % (std::size_t{2} << 20), 0u);
    EXPECT_EQ(CountingHooks::locks, 2);
  }
  EXPECT_EQ(CountingHooks::unlocks, 2);
  EXPECT_EQ(CountingHooks::unlocks_of_unlocked, 0);
  EXPECT_TRUE(CountingHooks::locked.empty());
}

TEST_F(PageLockedLargeVector, AFailedLockLeavesWorkingOrdinaryMemoryThatIsNeverUnlocked) {
  CountingHooks::refuse = true;
  {
    grove::LargeVector<double> v;
    ASSERT_TRUE(grove::pageLock(v));  // the allocator asks; the hook says no
    v.assign(5000, 2.0);
    EXPECT_FALSE(grove::isPageLockedByGrove(v.data()));
    EXPECT_EQ(v[4999], 2.0);
  }
  EXPECT_EQ(CountingHooks::unlocks, 0);
}

}  // namespace
