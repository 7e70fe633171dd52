#pragma once
// Interaction lists of every group, kept when they are to be reused or handed to an accelerator:
// per group, indices into the tree's EPJ array and into its superparticle array. int32 indices,
// as FDPS's index-form dispatch takes them.
#include <omp.h>

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

// Builds the lists of n_groups groups in parallel. collect(g, ep, sp) appends group g's indices.
// Each thread fills a contiguous run of groups; the runs are joined in group order.
template <class Collect>
InteractionLists buildInteractionLists(std::size_t n_groups, Collect&& collect) {
  InteractionLists lists;
  const int threads = omp_get_max_threads();
  struct Run {
    std::vector<std::size_t> ep_count, sp_count;
    std::vector<std::int32_t> ep, sp;
  };
  std::vector<Run> runs(static_cast<std::size_t>(threads));
  std::vector<std::size_t> run_begin(static_cast<std::size_t>(threads) + 1);
  for (int t = 0; t <= threads; ++t)
    run_begin[static_cast<std::size_t>(t)] = n_groups * static_cast<std::size_t>(t) / static_cast<std::size_t>(threads);
#pragma omp parallel num_threads(threads)
  {
    const auto t = static_cast<std::size_t>(omp_get_thread_num());
    Run& run = runs[t];
    for (std::size_t g = run_begin[t]; g < run_begin[t + 1]; ++g) {
      const std::size_t e0 = run.ep.size(), s0 = run.sp.size();
      collect(g, run.ep, run.sp);
      run.ep_count.push_back(run.ep.size() - e0);
      run.sp_count.push_back(run.sp.size() - s0);
    }
  }
  lists.ep_offset.assign(n_groups + 1, 0);
  lists.sp_offset.assign(n_groups + 1, 0);
  std::vector<std::size_t> ep_start(runs.size()), sp_start(runs.size());
  std::size_t g = 0;
  for (std::size_t t = 0; t < runs.size(); ++t) {
    ep_start[t] = lists.ep_offset[g];
    sp_start[t] = lists.sp_offset[g];
    for (std::size_t k = 0; k < runs[t].ep_count.size(); ++k, ++g) {
      lists.ep_offset[g + 1] = lists.ep_offset[g] + runs[t].ep_count[k];
      lists.sp_offset[g + 1] = lists.sp_offset[g] + runs[t].sp_count[k];
    }
  }
  lists.ep_index.resize(lists.ep_offset[n_groups]);
  lists.sp_index.resize(lists.sp_offset[n_groups]);
#pragma omp parallel for schedule(static, 1) num_threads(threads)
  for (int t = 0; t < threads; ++t) {
    const auto& run = runs[static_cast<std::size_t>(t)];
    std::copy(run.ep.begin(), run.ep.end(), lists.ep_index.begin() + static_cast<std::ptrdiff_t>(ep_start[static_cast<std::size_t>(t)]));
    std::copy(run.sp.begin(), run.sp.end(), lists.sp_index.begin() + static_cast<std::ptrdiff_t>(sp_start[static_cast<std::size_t>(t)]));
  }
  return lists;
}

}  // namespace grove
