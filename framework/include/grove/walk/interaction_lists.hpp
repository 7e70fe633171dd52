#pragma once
/// @file
/// Per-group lists of two kinds of items: InteractionLists (int32 indices into the tree's EPJ and
/// superparticle arrays, as FDPS's index-form dispatch takes them), kept when they are to be
/// reused or handed to an accelerator; and the plain-form multiwalk's packed copies of each
/// walk's EPJs and SPJs themselves.
///
/// Lists are built a range of groups at a time (the multiwalk driver builds batch k + 1's while
/// the accelerator computes batch k), each thread appending the groups it takes to a chunk of its
/// own. Each group's indices stay in that chunk's memory: nothing is joined into one array
/// afterwards (at 4 M particles that copy alone moved over 100 MB), and the chunks are kept between
/// steps so that their memory is reused instead of faulted in anew.
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

namespace grove {

/// Per-group lists of EpItem and SpItem, built in parallel into per-thread chunks whose memory is
/// kept from step to step.
template <class EpItem, class SpItem>
class GroupLists {
 public:
  /// Forgets every list; groups [0, n_groups) are to be built (by one or several build calls).
  /// A group not built has empty lists.
  void reset(std::size_t n_groups) {
    slices_.assign(n_groups, GroupSlice{});
    chunks_used_ = 0;
  }

  /// Builds the lists of groups [g0, g1) in parallel; collect(g, ep, sp) appends group g's EPJ and
  /// SPJ items to the two vectors it is given (and must only append). Needs g1 <= groups(); call
  /// outside any parallel region. Threads take groups dynamically, two at a time (lists differ in
  /// length, and a batch of a thousand groups split into larger shares left threads idle at its
  /// end), each appending to its own chunk.
  template <class Collect>
  void build(std::size_t g0, std::size_t g1, Collect&& collect) {
    const auto threads = static_cast<std::size_t>(omp_get_max_threads());
    const std::size_t first_chunk = chunks_used_;
    chunks_used_ += threads;
    if (chunks_.size() < chunks_used_) chunks_.resize(chunks_used_);
#pragma omp parallel num_threads(static_cast<int>(threads))
    {
      const std::size_t chunk_index = first_chunk + static_cast<std::size_t>(omp_get_thread_num());
      Chunk& chunk = chunks_[chunk_index];
      chunk.ep.clear(), chunk.sp.clear();
#pragma omp for schedule(dynamic, 2)
      for (std::int64_t gi = static_cast<std::int64_t>(g0); gi < static_cast<std::int64_t>(g1); ++gi) {
        const auto g = static_cast<std::size_t>(gi);
        const std::size_t e0 = chunk.ep.size(), s0 = chunk.sp.size();
        collect(g, chunk.ep, chunk.sp);
        slices_[g] = {static_cast<std::uint32_t>(chunk_index), e0, static_cast<std::uint32_t>(chunk.ep.size() - e0),
                      s0, static_cast<std::uint32_t>(chunk.sp.size() - s0)};
      }
    }
  }

  /// Number of groups (the n_groups of the last reset).
  std::size_t groups() const { return slices_.size(); }
  /// Group g's EpItem list (g < groups(), unchecked). Valid until the next reset or build.
  std::span<const EpItem> ep(std::size_t g) const {
    const GroupSlice& s = slices_[g];
    if (s.ep_count == 0) return {};
    return {chunks_[s.chunk].ep.data() + s.ep_first, s.ep_count};
  }
  /// Group g's SpItem list (g < groups(), unchecked). Valid until the next reset or build.
  std::span<const SpItem> sp(std::size_t g) const {
    const GroupSlice& s = slices_[g];
    if (s.sp_count == 0) return {};
    return {chunks_[s.chunk].sp.data() + s.sp_first, s.sp_count};
  }

  /// Bytes held (capacities of the group table and of every chunk).
  std::size_t memoryBytes() const {
    std::size_t bytes = slices_.capacity() * sizeof(GroupSlice);
    for (const Chunk& c : chunks_) bytes += c.ep.capacity() * sizeof(EpItem) + c.sp.capacity() * sizeof(SpItem);
    return bytes;
  }

 private:
  struct Chunk {
    std::vector<EpItem> ep;
    std::vector<SpItem> sp;
  };
  struct GroupSlice {
    std::uint32_t chunk = 0;
    std::size_t ep_first = 0;
    std::uint32_t ep_count = 0;
    std::size_t sp_first = 0;
    std::uint32_t sp_count = 0;
  };
  std::vector<Chunk> chunks_;
  std::size_t chunks_used_ = 0;
  std::vector<GroupSlice> slices_;
};

/// Index lists: per group, int32 indices into the tree's EPJ and SPJ arrays.
using InteractionLists = GroupLists<std::int32_t, std::int32_t>;

}  // namespace grove
