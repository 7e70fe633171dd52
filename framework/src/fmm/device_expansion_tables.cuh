#pragma once
// The operator tables of grove::fmm::MultiIndexSet on a CUDA device, shared by the FMM's device
// tree build (device_tree_build.cu) and its far field (device_far_field.cu). Internal to grove's
// library (nvcc only): not installed.
#include <cuda_runtime.h>

#include <algorithm>
#include <span>
#include <vector>

#include "grove/core/error.hpp"
#include "grove/core/vec3.hpp"
#include "grove/fmm/cartesian_expansion.hpp"
#include "grove/gpu/cuda_resources.hpp"
#include "grove/gpu/device_vector.hpp"

namespace grove::fmm::detail {

using gpu::check;
using gpu::DeviceVector;

constexpr int kM2lLanes = 16;       // sources per chunk of a target's M2L list
// 256 threads a block: shared memory (44 KB a block) caps the blocks a multiprocessor holds, so
// more threads a block are more warps at work; 128 took 27 % longer at 2^22 (run 187).
constexpr int kM2lThreads = 256;

struct Tables {
  int order, rows;                 // rows: coefficients of degree <= order
  const int* degree_begin;         // first index of each degree 0 ... order + 2
  const int* lower;                // 6 per index (degree <= order + 1)
  const int* upper;                // 3 per index (degree <= order): k + e_axis
  const int* power_axis;           // per index: the axis of x^k = x^(k - e_axis) x_axis
  const unsigned char* index;      // 3 per index
  const double* factorial;         // per index of degree <= order
  const double* inverse_factorial;
  const ushort2* contraction;      // (k, n + k)
  // The M2L's work items: a group of kM2lLanes threads (one per source lane) takes each.
  const int* item_begin;           // per local coefficient n: its work items [begin, end)
  const int2* item_terms;          // per work item: its contraction terms [x, y)
  const int* group_items;          // per group: its work items [begin, end)
  int item_count;
  const int* l2l_begin;            // per child coefficient: its terms, sorted
  const ushort2* l2l_factors;      // (parent coefficient, power)
  const double* l2l_weight;
  const int* m2m_begin;            // per parent coefficient: its terms, in the host's order
  const ushort2* m2m_factors;      // (child coefficient, power)
  const double* m2m_weight;
};

constexpr int kM2lGroups = kM2lThreads / kM2lLanes;
constexpr int kMaxItems = kM2lGroups + kMaxCoefficients;

// x^k for every index of degree <= degree, as MultiIndexSet::powers.
inline __device__ void powers(const Tables& tb, const Vec3d& x, int degree, double* out) {
  out[0] = 1.0;
  const double axis_value[3] = {x.x, x.y, x.z};
  for (int i = 1; i < tb.degree_begin[degree + 1]; ++i) {
    const int axis = tb.power_axis[i];
    out[i] = out[tb.lower[6 * i + axis]] * axis_value[axis];
  }
}

// The device copy of one order's tables.
struct DeviceTables {
  int order = 0;
  DeviceVector<int> degree_begin, lower, upper, power_axis, l2l_begin, m2m_begin;
  DeviceVector<int> item_begin, group_items;
  DeviceVector<int2> item_terms;
  int item_count = 0;
  DeviceVector<unsigned char> index;
  DeviceVector<double> factorial, inverse_factorial, l2l_weight, m2m_weight;
  DeviceVector<ushort2> contraction, l2l_factors, m2m_factors;
  int rows = 0;

  void build(const MultiIndexSet& e, cudaStream_t stream) {
    order = e.order();
    rows = e.size();
    const int gradient_rows = e.sizeBelow(order + 2);
    std::vector<int> degree_begin_h;
    for (int d = 0; d <= order + 2; ++d) degree_begin_h.push_back(e.sizeBelow(d));
    std::vector<int> lower_h, upper_h, axis_h;
    std::vector<unsigned char> index_h;
    for (int i = 0; i < gradient_rows; ++i) {
      for (int j : e.lowerNeighbours()[static_cast<std::size_t>(i)]) lower_h.push_back(j);
      const auto& k = e.index(i);
      for (int axis = 0; axis < 3; ++axis) index_h.push_back(k[static_cast<std::size_t>(axis)]);
      axis_h.push_back(k[0] > 0 ? 0 : (k[1] > 0 ? 1 : 2));
      for (int axis = 0; axis < 3; ++axis)
        upper_h.push_back(i < rows ? e.find(k[0] + (axis == 0), k[1] + (axis == 1), k[2] + (axis == 2)) : -1);
    }
    const std::span<const int> cb = e.contractionBegin();
    const int terms = cb[static_cast<std::size_t>(rows)];
    // The M2L's work items: the contraction's terms in order, each group a share of the cost (a
    // term costs 1, a work item's reduction across lanes kItemCost), cut at each n.
    constexpr int kItemCost = 8;
    std::vector<int> item_begin_h(static_cast<std::size_t>(rows) + 1, 0), group_items_h;
    std::vector<int2> item_terms_h;
    {
      const long long cost = terms + static_cast<long long>(kItemCost) * (rows + kM2lGroups);
      const double budget = static_cast<double>(cost) / kM2lGroups;
      int group = 0;
      double spent = 0.0;
      group_items_h.push_back(0);
      for (std::size_t k = 0; k < static_cast<std::size_t>(rows); ++k) {
        item_begin_h[k] = static_cast<int>(item_terms_h.size());
        for (int t = cb[k]; t < cb[k + 1];) {
          if (group < kM2lGroups - 1 && spent + kItemCost >= budget * (group + 1)) {  // this group is full
            ++group;
            group_items_h.push_back(static_cast<int>(item_terms_h.size()));
          }
          // The terms this group can still take after paying for a new item (at least one).
          const int room = group == kM2lGroups - 1
                               ? cb[k + 1] - t
                               : std::max(1, static_cast<int>(budget * (group + 1) - spent - kItemCost));
          const int last = std::min(cb[k + 1], t + room);
          item_terms_h.push_back(make_int2(t, last));
          spent += kItemCost + (last - t);
          t = last;
        }
      }
      while (static_cast<int>(group_items_h.size()) <= kM2lGroups)
        group_items_h.push_back(static_cast<int>(item_terms_h.size()));
      item_count = static_cast<int>(item_terms_h.size());
      item_begin_h[static_cast<std::size_t>(rows)] = item_count;
    }
    require(item_count <= kMaxItems, "fmm::DeviceFarField",
            "{} M2L work items at order {} (at most {})", item_count, order, kMaxItems);
    std::vector<ushort2> contraction_h;
    for (const auto& pair : e.contraction()) contraction_h.push_back(make_ushort2(pair[0], pair[1]));
    // L2L terms grouped by child coefficient, in the host's order within each.
    std::vector<MultiIndexSet::Term> shifts(e.localShiftTerms().begin(), e.localShiftTerms().end());
    std::stable_sort(shifts.begin(), shifts.end(), [](const auto& x, const auto& y) { return x.target < y.target; });
    std::vector<int> l2l_begin_h(static_cast<std::size_t>(rows) + 1, 0);
    std::vector<ushort2> factors_h;
    std::vector<double> weight_h;
    for (const auto& term : shifts) {
      ++l2l_begin_h[term.target + 1u];
      factors_h.push_back(make_ushort2(term.first, term.second));
      weight_h.push_back(term.weight);
    }
    for (int n = 0; n < rows; ++n) l2l_begin_h[static_cast<std::size_t>(n) + 1] += l2l_begin_h[static_cast<std::size_t>(n)];
    // M2M terms: the host's list is grouped by parent coefficient already; kept in its order.
    std::vector<int> m2m_begin_h(static_cast<std::size_t>(rows) + 1, 0);
    std::vector<ushort2> m2m_factors_h;
    std::vector<double> m2m_weight_h;
    int last_target = 0;
    for (const auto& term : e.multipoleShiftTerms()) {
      require(term.target >= last_target, "fmm::DeviceTables", "M2M terms not grouped by parent coefficient");
      last_target = term.target;
      ++m2m_begin_h[term.target + 1u];
      m2m_factors_h.push_back(make_ushort2(term.first, term.second));
      m2m_weight_h.push_back(term.weight);
    }
    for (int n = 0; n < rows; ++n) m2m_begin_h[static_cast<std::size_t>(n) + 1] += m2m_begin_h[static_cast<std::size_t>(n)];

    degree_begin.assignAsync(degree_begin_h.data(), degree_begin_h.size(), stream);
    lower.assignAsync(lower_h.data(), lower_h.size(), stream);
    upper.assignAsync(upper_h.data(), upper_h.size(), stream);
    power_axis.assignAsync(axis_h.data(), axis_h.size(), stream);
    index.assignAsync(index_h.data(), index_h.size(), stream);
    factorial.assignAsync(e.factorials().data(), e.factorials().size(), stream);
    inverse_factorial.assignAsync(e.inverseFactorials().data(), e.inverseFactorials().size(), stream);
    contraction.assignAsync(contraction_h.data(), contraction_h.size(), stream);
    item_begin.assignAsync(item_begin_h.data(), item_begin_h.size(), stream);
    item_terms.assignAsync(item_terms_h.data(), item_terms_h.size(), stream);
    group_items.assignAsync(group_items_h.data(), group_items_h.size(), stream);
    l2l_begin.assignAsync(l2l_begin_h.data(), l2l_begin_h.size(), stream);
    l2l_factors.assignAsync(factors_h.data(), factors_h.size(), stream);
    l2l_weight.assignAsync(weight_h.data(), weight_h.size(), stream);
    m2m_begin.assignAsync(m2m_begin_h.data(), m2m_begin_h.size(), stream);
    m2m_factors.assignAsync(m2m_factors_h.data(), m2m_factors_h.size(), stream);
    m2m_weight.assignAsync(m2m_weight_h.data(), m2m_weight_h.size(), stream);
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize (FMM tables)");
  }

  // The tables as the kernels take them.
  Tables view() const {
    return Tables{order,
                  rows,
                  degree_begin.data(),
                  lower.data(),
                  upper.data(),
                  power_axis.data(),
                  index.data(),
                  factorial.data(),
                  inverse_factorial.data(),
                  contraction.data(),
                  item_begin.data(),
                  item_terms.data(),
                  group_items.data(),
                  item_count,
                  l2l_begin.data(),
                  l2l_factors.data(),
                  l2l_weight.data(),
                  m2m_begin.data(),
                  m2m_factors.data(),
                  m2m_weight.data()};
  }
};

}  // namespace grove::fmm::detail
