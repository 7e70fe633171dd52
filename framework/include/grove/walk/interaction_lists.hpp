#pragma once
// Interaction lists of every group, kept when they are to be reused or handed to an accelerator:
// per group, indices into the tree's EPJ array and into its superparticle array. int32 indices,
// as FDPS's index-form dispatch takes them.
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

namespace grove {

struct InteractionLists {
  std::vector<std::size_t> ep_offset{0}, sp_offset{0};  // group g: [offset[g], offset[g + 1])
  std::vector<std::int32_t> ep_index, sp_index;

  std::size_t groups() const { return ep_offset.size() - 1; }
  std::span<const std::int32_t> ep(std::size_t g) const {
    return {ep_index.data() + ep_offset[g], ep_offset[g + 1] - ep_offset[g]};
  }
  std::span<const std::int32_t> sp(std::size_t g) const {
    return {sp_index.data() + sp_offset[g], sp_offset[g + 1] - sp_offset[g]};
  }
  std::size_t memoryBytes() const {
    return (ep_offset.capacity() + sp_offset.capacity()) * sizeof(std::size_t) +
           (ep_index.capacity() + sp_index.capacity()) * sizeof(std::int32_t);
  }
};

// Per-chunk output of a list build, kept between steps so that its memory is reused (fresh
// memory costs page faults: at 4 M particles the lists hold over 100 MB of indices).
struct ListChunk {
  std::vector<std::uint32_t> ep_count, sp_count;
  std::vector<std::int32_t> ep, sp;
  void clear() { ep_count.clear(), sp_count.clear(), ep.clear(), sp.clear(); }
};

// Builds the lists of n_groups groups in parallel into `lists` (its memory reused).
// collect(g, ep, sp) appends group g's indices. Chunks of consecutive groups go to threads
// dynamically (lists differ in length); the chunks are joined in group order.
template <class Collect>
void buildInteractionLists(std::size_t n_groups, Collect&& collect, InteractionLists& lists,
                           std::vector<ListChunk>& chunks) {
  constexpr std::size_t kChunk = 16;
  const std::size_t n_chunks = (n_groups + kChunk - 1) / kChunk;
  if (chunks.size() < n_chunks) chunks.resize(n_chunks);
#pragma omp parallel for schedule(dynamic, 1)
  for (std::int64_t c = 0; c < static_cast<std::int64_t>(n_chunks); ++c) {
    ListChunk& chunk = chunks[static_cast<std::size_t>(c)];
    chunk.clear();
    const std::size_t g0 = static_cast<std::size_t>(c) * kChunk, g1 = std::min(n_groups, g0 + kChunk);
    for (std::size_t g = g0; g < g1; ++g) {
      const std::size_t e0 = chunk.ep.size(), s0 = chunk.sp.size();
      collect(g, chunk.ep, chunk.sp);
      chunk.ep_count.push_back(static_cast<std::uint32_t>(chunk.ep.size() - e0));
      chunk.sp_count.push_back(static_cast<std::uint32_t>(chunk.sp.size() - s0));
    }
  }
  lists.ep_offset.assign(n_groups + 1, 0);
  lists.sp_offset.assign(n_groups + 1, 0);
  for (std::size_t c = 0, g = 0; c < n_chunks; ++c)
    for (std::size_t k = 0; k < chunks[c].ep_count.size(); ++k, ++g) {
      lists.ep_offset[g + 1] = lists.ep_offset[g] + chunks[c].ep_count[k];
      lists.sp_offset[g + 1] = lists.sp_offset[g] + chunks[c].sp_count[k];
    }
  lists.ep_index.resize(lists.ep_offset[n_groups]);
  lists.sp_index.resize(lists.sp_offset[n_groups]);
#pragma omp parallel for schedule(dynamic, 4)
  for (std::int64_t c = 0; c < static_cast<std::int64_t>(n_chunks); ++c) {
    const auto cc = static_cast<std::size_t>(c);
    const std::size_t g0 = cc * kChunk;
    std::copy(chunks[cc].ep.begin(), chunks[cc].ep.end(),
              lists.ep_index.begin() + static_cast<std::ptrdiff_t>(lists.ep_offset[g0]));
    std::copy(chunks[cc].sp.begin(), chunks[cc].sp.end(),
              lists.sp_index.begin() + static_cast<std::ptrdiff_t>(lists.sp_offset[g0]));
  }
}

}  // namespace grove
