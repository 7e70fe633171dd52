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
#include "grove/fmm/m2l_plan.hpp"
#include "grove/gpu/cuda_resources.hpp"
#include "grove/gpu/device_vector.hpp"

namespace grove::fmm::detail {

using gpu::check;
using gpu::DeviceVector;

struct Tables {
  int order, rows;                 // rows: coefficients of degree <= order
  const int* degree_begin;         // first index of each degree 0 ... order + 2
  const int* lower;                // 6 per index (degree <= order + 1); 8-byte aligned (read as int2)
  const int* upper;                // 3 per index (degree <= order): k + e_axis
  const int* power_axis;           // per index: the axis of x^k = x^(k - e_axis) x_axis
  const unsigned char* index;      // 3 per index
  const double* inverse_factorial; // per index of degree <= order
  // The M2L in the harmonic form: M2lPlan's tables (grove/fmm/m2l_plan.hpp) on the device.
  int harmonic;                    // (order + 1)^2
  const unsigned short* harmonic_position;  // per harmonic index: its position
  const int* fold_begin;           // per harmonic index: its fold terms [begin, end)
  const unsigned short* fold_source;  // per fold term: the position k of M_k; out += fold_weight * M_k
  const double* fold_weight;
  // The rows of D the contraction reads (MultiIndexSet::harmonicTaylorRows()), numbered densely
  // by degree: row r of D is the r-th of them, and row taylor_count is all zeros.
  int taylor_count;
  const int* taylor_row_begin;     // per degree 0 ... order + 1: its first row
  const int* taylor_lower;         // 6 per row: its lower neighbours as in `lower` (8-byte aligned, int2 reads)
  const double* taylor_factorial;  // per row: k! of its index
  const int* unfold_begin;         // per kz = 2 ... order + 1: its steps [begin, end) in unfold
  const ushort4* unfold;           // (n, a, b, -): s_n = -s_a - s_b
  // The contraction n! L_n = sum_j D_{n+k_j} folded_j over harmonic n and j, in bundles of
  // kM2lBundle coefficients n, whose j run over the same harmonic indices 0 ... J - 1: one load of
  // folded_j serves the bundle's kM2lBundle multiply-adds.
  const ushort4* bundle_rows;      // per (bundle, j): the rows n + k_j of D (the zero row in empty slots)
  // The M2L's work items: a group of kM2lLanes threads (one per source lane) takes each.
  const int4* items;               // per work item: x its first bundle_rows entry, y their count, z its first k
  const int* group_items;          // per group: its work items [begin, end)
  int item_count;
  const int* part_begin;           // per harmonic coefficient n: its partial sums [begin, end) in `parts`
  const int* parts;                // partial sums, item * kM2lBundle + slot, in the order they are added
  const int* l2l_begin;            // per child coefficient: its terms, sorted
  const ushort2* l2l_factors;      // (parent coefficient, power)
  const double* l2l_weight;
  const int* m2m_begin;            // per parent coefficient: its terms, in the host's order
  const ushort2* m2m_factors;      // (child coefficient, power)
  const double* m2m_weight;
};

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
  DeviceVector<int> group_items, part_begin, parts, fold_begin, taylor_row_begin, taylor_lower, unfold_begin;
  DeviceVector<unsigned short> harmonic_position, fold_source;
  DeviceVector<double> fold_weight, taylor_factorial;
  int taylor_count = 0;
  DeviceVector<ushort4> unfold;
  int harmonic = 0;
  DeviceVector<int4> items;
  DeviceVector<ushort4> bundle_rows;
  int item_count = 0;
  DeviceVector<unsigned char> index;
  DeviceVector<double> inverse_factorial, l2l_weight, m2m_weight;
  DeviceVector<ushort2> l2l_factors, m2m_factors;
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
    // The M2L's plan (grove/fmm/m2l_plan.hpp), in the device's vector types.
    const M2lPlan plan = buildM2lPlan(e);
    harmonic = plan.harmonic();
    taylor_count = plan.taylorCount();
    item_count = static_cast<int>(plan.items.size());
    std::vector<ushort4> unfold_h, bundle_rows_h;
    std::vector<int4> items_h;
    for (const auto& u : plan.unfold) unfold_h.push_back(make_ushort4(u[0], u[1], u[2], u[3]));
    for (const auto& b : plan.bundle_rows) bundle_rows_h.push_back(make_ushort4(b[0], b[1], b[2], b[3]));
    for (const auto& i : plan.items) items_h.push_back(make_int4(i[0], i[1], i[2], i[3]));
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
    inverse_factorial.assignAsync(e.inverseFactorials().data(), e.inverseFactorials().size(), stream);
    bundle_rows.assignAsync(bundle_rows_h.data(), bundle_rows_h.size(), stream);
    harmonic_position.assignAsync(plan.harmonic_position.data(), plan.harmonic_position.size(), stream);
    fold_begin.assignAsync(plan.fold_begin.data(), plan.fold_begin.size(), stream);
    fold_source.assignAsync(plan.fold_source.data(), plan.fold_source.size(), stream);
    fold_weight.assignAsync(plan.fold_weight.data(), plan.fold_weight.size(), stream);
    taylor_row_begin.assignAsync(plan.taylor_row_begin.data(), plan.taylor_row_begin.size(), stream);
    taylor_lower.assignAsync(plan.taylor_lower.data(), plan.taylor_lower.size(), stream);
    taylor_factorial.assignAsync(plan.taylor_factorial.data(), plan.taylor_factorial.size(), stream);
    unfold_begin.assignAsync(plan.unfold_begin.data(), plan.unfold_begin.size(), stream);
    unfold.assignAsync(unfold_h.data(), unfold_h.size(), stream);
    items.assignAsync(items_h.data(), items_h.size(), stream);
    group_items.assignAsync(plan.group_items.data(), plan.group_items.size(), stream);
    part_begin.assignAsync(plan.part_begin.data(), plan.part_begin.size(), stream);
    parts.assignAsync(plan.parts.data(), plan.parts.size(), stream);
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
                  inverse_factorial.data(),
                  harmonic,
                  harmonic_position.data(),
                  fold_begin.data(),
                  fold_source.data(),
                  fold_weight.data(),
                  taylor_count,
                  taylor_row_begin.data(),
                  taylor_lower.data(),
                  taylor_factorial.data(),
                  unfold_begin.data(),
                  unfold.data(),
                  bundle_rows.data(),
                  items.data(),
                  group_items.data(),
                  item_count,
                  part_begin.data(),
                  parts.data(),
                  l2l_begin.data(),
                  l2l_factors.data(),
                  l2l_weight.data(),
                  m2m_begin.data(),
                  m2m_factors.data(),
                  m2m_weight.data()};
  }
};

}  // namespace grove::fmm::detail
