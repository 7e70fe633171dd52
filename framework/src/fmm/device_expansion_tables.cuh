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
  const int* lower;                // 6 per index (degree <= order + 1); 8-byte aligned (read as int2)
  const int* upper;                // 3 per index (degree <= order): k + e_axis
  const int* power_axis;           // per index: the axis of x^k = x^(k - e_axis) x_axis
  const unsigned char* index;      // 3 per index
  const double* factorial;         // per index of degree <= order
  const double* inverse_factorial;
  // The M2L in the harmonic form (MultiIndexSet::harmonicIndices()): the multipoles folded onto
  // the harmonic indices (`harmonic` of them, foldMultipoles), the rows of D with kz <= 2, the
  // contraction for the harmonic n, and the other n! L_n from the trace identity.
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
  const ushort4* bundle_rows;      // per (bundle, j): the rows n + k_j of D (taylor_count, the zero row, in empty slots)
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

constexpr int kM2lGroups = kM2lThreads / kM2lLanes;
static_assert(kM2lThreads % kM2lLanes == 0, "the M2L's groups fill its blocks (a thread's lane is its source's)");
// Local coefficients a bundle holds (see Tables::bundle_rows): 4 loads of D, one of M and one of
// the rows for 4 multiply-adds, against 3 loads a multiply-add when each n took its own terms (the
// M2L at 2^22, order 8: 0.216 -> 0.181 s on an H200, run 191).
constexpr int kM2lBundle = 4;
// Harmonic indices at the highest order: the folded multipoles' stride.
constexpr int kMaxHarmonic = (kMaxOrder + 1) * (kMaxOrder + 1);
// Bundles at the highest order: the harmonic indices kM2lBundle at a time.
constexpr int maxBundles() { return (kMaxHarmonic + kM2lBundle - 1) / kM2lBundle; }
// Rows of D with kz <= 2 at the highest order (MultiIndexSet::harmonicTaylorRows()).
constexpr int kMaxTaylorRows = (kMaxOrder + 1) * (kMaxOrder + 2) / 2 + kMaxOrder * (kMaxOrder + 1) / 2 +
                               (kMaxOrder - 1) * kMaxOrder / 2;
// Work items: each bundle once, and at most one more where a group's share ends inside one.
constexpr int kMaxItems = maxBundles() + kM2lGroups;

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
  DeviceVector<double> factorial, inverse_factorial, l2l_weight, m2m_weight;
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
    // The harmonic form's tables (MultiIndexSet::harmonicIndices() and after).
    const std::span<const std::uint16_t> harmonic_h = e.harmonicIndices();
    harmonic = static_cast<int>(harmonic_h.size());
    require(harmonic <= kMaxHarmonic, "fmm::DeviceTables", "{} harmonic indices (at most {})", harmonic,
            kMaxHarmonic);
    // Harmonic indices of degree below d: d^2.
    auto harmonicBelow = [](int d) { return d * d; };
    std::vector<int> fold_begin_h(static_cast<std::size_t>(harmonic) + 1, 0);
    std::vector<unsigned short> fold_source_h;
    std::vector<double> fold_weight_h;
    for (const auto& term : e.foldTerms()) {  // grouped by harmonic index, ascending
      ++fold_begin_h[term.target + 1u];
      fold_source_h.push_back(term.first);
      fold_weight_h.push_back(term.weight);
    }
    for (int j = 0; j < harmonic; ++j) fold_begin_h[static_cast<std::size_t>(j) + 1] += fold_begin_h[static_cast<std::size_t>(j)];
    // The rows of D numbered densely (harmonicTaylorRows() is ascending, so by degree).
    const std::span<const std::uint16_t> taylor_rows_h = e.harmonicTaylorRows();
    taylor_count = static_cast<int>(taylor_rows_h.size());
    require(taylor_count <= kMaxTaylorRows, "fmm::DeviceTables", "{} rows of D (at most {})", taylor_count,
            kMaxTaylorRows);
    std::vector<int> dense_row(static_cast<std::size_t>(gradient_rows), -1);
    for (int r = 0; r < taylor_count; ++r) dense_row[taylor_rows_h[static_cast<std::size_t>(r)]] = r;
    std::vector<int> taylor_row_begin_h(static_cast<std::size_t>(order) + 2, taylor_count);
    std::vector<int> taylor_lower_h;
    std::vector<double> taylor_factorial_h;
    for (int r = taylor_count - 1; r >= 0; --r)
      taylor_row_begin_h[static_cast<std::size_t>(e.degree(taylor_rows_h[static_cast<std::size_t>(r)]))] = r;
    for (int r = 0; r < taylor_count; ++r) {
      const int row = taylor_rows_h[static_cast<std::size_t>(r)];
      for (const int j : e.lowerNeighbours()[static_cast<std::size_t>(row)]) {
        require(j < 0 || dense_row[static_cast<std::size_t>(j)] >= 0, "fmm::DeviceTables",
                "row {} of D reads row {}, which is not computed", row, j);
        taylor_lower_h.push_back(j < 0 ? taylor_count : dense_row[static_cast<std::size_t>(j)]);
      }
      taylor_factorial_h.push_back(e.factorials()[static_cast<std::size_t>(row)]);
    }
    std::vector<int> unfold_begin_h;
    std::vector<ushort4> unfold_h;
    for (int z = 2; z <= order + 1; ++z) {
      unfold_begin_h.push_back(static_cast<int>(unfold_h.size()));
      for (const auto& [target, a, b] : e.unfoldSteps())
        if (e.index(target)[2] == z) unfold_h.push_back(make_ushort4(target, a, b, 0));
    }
    require(unfold_h.size() == e.unfoldSteps().size(), "fmm::DeviceTables", "unfold steps of kz above the order");
    // The M2L's bundles: the harmonic coefficients n kM2lBundle at a time in order (so by degree),
    // each with the rows n + k_j of D for the harmonic j of degree <= order - |n| of its first
    // (lowest) degree; a slot whose n has fewer j reads the zero row past them. Bundles of one
    // degree each took 495 steps an order-8 M2L (the lone n of degree 0 read 81 j with three slots
    // empty); across degrees, 374.
    struct Bundle {
      int first_n, count, k_count, rows_first;
    };
    std::vector<Bundle> bundles;
    std::vector<ushort4> bundle_rows_h;
    auto jCount = [&](int n) { return harmonicBelow(order - e.degree(harmonic_h[static_cast<std::size_t>(n)]) + 1); };
    for (int n0 = 0; n0 < harmonic; n0 += kM2lBundle) {
      const Bundle b{n0, std::min(kM2lBundle, harmonic - n0), jCount(n0), static_cast<int>(bundle_rows_h.size())};
      for (int k = 0; k < b.k_count; ++k) {
        unsigned short row[kM2lBundle];
        for (int r = 0; r < kM2lBundle; ++r) {
          row[r] = static_cast<unsigned short>(taylor_count);
          if (r < b.count && k < jCount(n0 + r)) {
            const auto &a = e.index(harmonic_h[static_cast<std::size_t>(n0 + r)]),
                       &c = e.index(harmonic_h[static_cast<std::size_t>(k)]);
            const int dense = dense_row[static_cast<std::size_t>(e.find(a[0] + c[0], a[1] + c[1], a[2] + c[2]))];
            require(dense >= 0, "fmm::DeviceTables", "the M2L reads a row of D that is not computed");
            row[r] = static_cast<unsigned short>(dense);
          }
        }
        bundle_rows_h.push_back(make_ushort4(row[0], row[1], row[2], row[3]));
      }
      bundles.push_back(b);
    }
    static_assert(kM2lBundle == 4, "bundle_rows holds four rows (ushort4)");
    // The work items: the bundles' k in order, each group a share of the cost (a k costs 1, a work
    // item's reductions across lanes kItemCost), cut where a share ends.
    constexpr int kItemCost = 8;
    std::vector<int> group_items_h;
    std::vector<int4> items_h;
    std::vector<std::vector<int>> parts_of(static_cast<std::size_t>(harmonic));
    {
      long long steps = 0;
      for (const Bundle& b : bundles) steps += b.k_count;
      const long long cost = steps + static_cast<long long>(kItemCost) * (static_cast<long long>(bundles.size()) + kM2lGroups);
      const double budget = static_cast<double>(cost) / kM2lGroups;
      int group = 0;
      double spent = 0.0;
      group_items_h.push_back(0);
      for (const Bundle& b : bundles) {
        for (int k = 0; k < b.k_count;) {
          if (group < kM2lGroups - 1 && spent + kItemCost >= budget * (group + 1)) {  // this group is full
            ++group;
            group_items_h.push_back(static_cast<int>(items_h.size()));
          }
          // The k this group can still take after paying for a new item (at least one).
          const int room = group == kM2lGroups - 1
                               ? b.k_count - k
                               : std::max(1, static_cast<int>(budget * (group + 1) - spent - kItemCost));
          const int last = std::min(b.k_count, k + room);
          const int item = static_cast<int>(items_h.size());
          for (int r = 0; r < b.count; ++r)
            parts_of[static_cast<std::size_t>(b.first_n + r)].push_back(item * kM2lBundle + r);
          items_h.push_back(make_int4(b.rows_first + k, last - k, k, 0));
          spent += kItemCost + (last - k);
          k = last;
        }
      }
      while (static_cast<int>(group_items_h.size()) <= kM2lGroups)
        group_items_h.push_back(static_cast<int>(items_h.size()));
      item_count = static_cast<int>(items_h.size());
    }
    require(item_count <= kMaxItems, "fmm::DeviceFarField",
            "{} M2L work items at order {} (at most {})", item_count, order, kMaxItems);
    std::vector<int> part_begin_h(1, 0), parts_h;
    for (const std::vector<int>& p : parts_of) {
      parts_h.insert(parts_h.end(), p.begin(), p.end());
      part_begin_h.push_back(static_cast<int>(parts_h.size()));
    }
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
    bundle_rows.assignAsync(bundle_rows_h.data(), bundle_rows_h.size(), stream);
    harmonic_position.assignAsync(harmonic_h.data(), harmonic_h.size(), stream);
    fold_begin.assignAsync(fold_begin_h.data(), fold_begin_h.size(), stream);
    fold_source.assignAsync(fold_source_h.data(), fold_source_h.size(), stream);
    fold_weight.assignAsync(fold_weight_h.data(), fold_weight_h.size(), stream);
    taylor_row_begin.assignAsync(taylor_row_begin_h.data(), taylor_row_begin_h.size(), stream);
    taylor_lower.assignAsync(taylor_lower_h.data(), taylor_lower_h.size(), stream);
    taylor_factorial.assignAsync(taylor_factorial_h.data(), taylor_factorial_h.size(), stream);
    unfold_begin.assignAsync(unfold_begin_h.data(), unfold_begin_h.size(), stream);
    unfold.assignAsync(unfold_h.data(), unfold_h.size(), stream);
    items.assignAsync(items_h.data(), items_h.size(), stream);
    group_items.assignAsync(group_items_h.data(), group_items_h.size(), stream);
    part_begin.assignAsync(part_begin_h.data(), part_begin_h.size(), stream);
    parts.assignAsync(parts_h.data(), parts_h.size(), stream);
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
