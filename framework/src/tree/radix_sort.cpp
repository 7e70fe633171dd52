#include "grove/tree/radix_sort.hpp"

#include "grove/core/error.hpp"

#include <omp.h>

#include <algorithm>
#include <array>

namespace grove {

namespace {
// 11-bit digits: the 63 bits of a Morton key in 6 passes (8-bit digits would take 8); the
// per-thread histograms (2048 counters) still sit in L1/L2.
constexpr int kDigitBits = 11;
constexpr std::size_t kBuckets = std::size_t{1} << kDigitBits;
// Below this many items a comparison sort is cheaper: each radix pass clears and prefix-sums all
// 2048 buckets and opens a parallel region whatever n is (about 24k instructions a pass, up to six
// passes a sort), more than a comparison sort of 256 items (~2k comparisons) takes in all. The
// DEM sample builds a tree of a handful of particles every step, and these passes were half of
// its instructions.
constexpr std::size_t kComparisonSortBelow = 256;
}  // namespace

void radixSortByKey(LargeVector<KeyIndex>& items, LargeVector<KeyIndex>& scratch) {
  const std::size_t n = items.size();
  if (n < 2) return;
  require(n < (std::size_t{1} << 32), "radixSortByKey", "{} items exceed the 2^32 its counters hold", n);
  if (n < kComparisonSortBelow) {
    std::stable_sort(items.begin(), items.end(), [](const KeyIndex& a, const KeyIndex& b) { return a.key < b.key; });
    return;
  }
  MortonKey all_or = 0, all_and = ~MortonKey{0};
#pragma omp parallel for reduction(| : all_or) reduction(& : all_and) schedule(static)
  for (std::size_t i = 0; i < n; ++i) {
    all_or |= items[i].key;
    all_and &= items[i].key;
  }
  const MortonKey varying = all_or ^ all_and;  // bits that are not the same in every key
  scratch.resize(n);

  const int threads = omp_get_max_threads();
  std::vector<std::array<std::uint32_t, kBuckets>> offsets(static_cast<std::size_t>(threads));
  KeyIndex* src = items.data();
  KeyIndex* dst = scratch.data();
  for (int shift = 0; shift < 64; shift += kDigitBits) {
    if (((varying >> shift) & (kBuckets - 1)) == 0) continue;  // this digit is constant: skip it
#pragma omp parallel num_threads(threads)
    {
      const auto t = static_cast<std::size_t>(omp_get_thread_num());
      const std::size_t nt = static_cast<std::size_t>(omp_get_num_threads());
      const std::size_t begin = n * t / nt, end = n * (t + 1) / nt;
      auto& count = offsets[t];
      count.fill(0);
      for (std::size_t i = begin; i < end; ++i) ++count[(src[i].key >> shift) & (kBuckets - 1)];
#pragma omp barrier
#pragma omp single
      {
        // Bucket-major, thread-minor prefix sum keeps the sort stable.
        std::uint32_t running = 0;
        for (std::size_t b = 0; b < kBuckets; ++b)
          for (std::size_t th = 0; th < nt; ++th) {
            const std::uint32_t c = offsets[th][b];
            offsets[th][b] = running;
            running += c;
          }
      }
      auto& cursor = offsets[t];
      for (std::size_t i = begin; i < end; ++i) dst[cursor[(src[i].key >> shift) & (kBuckets - 1)]++] = src[i];
    }
    std::swap(src, dst);
  }
  if (src != items.data()) items.swap(scratch);  // an odd number of passes ended in scratch
}

}  // namespace grove
