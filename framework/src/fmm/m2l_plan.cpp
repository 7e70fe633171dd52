// The plan of the FMM's M2L kernel on a GPU (grove/fmm/m2l_plan.hpp).
#include "grove/fmm/m2l_plan.hpp"

#include <algorithm>
#include <span>

#include "grove/core/error.hpp"

namespace grove::fmm::detail {

M2lPlan buildM2lPlan(const MultiIndexSet& e) {
  M2lPlan plan;
  const int order = e.order();
  const std::span<const std::uint16_t> harmonic = e.harmonicIndices();
  const auto harmonic_count = static_cast<int>(harmonic.size());
  require(harmonic_count <= kMaxHarmonic, "fmm::buildM2lPlan", "{} harmonic indices (at most {})", harmonic_count,
          kMaxHarmonic);
  plan.harmonic_position.assign(harmonic.begin(), harmonic.end());

  // The fold, grouped by harmonic index.
  plan.fold_begin.assign(harmonic.size() + 1, 0);
  int last_target = 0;
  for (const auto& term : e.foldTerms()) {
    require(term.target >= last_target, "fmm::buildM2lPlan", "fold terms not grouped by harmonic index");
    last_target = term.target;
    ++plan.fold_begin[term.target + 1u];
    plan.fold_source.push_back(term.first);
    plan.fold_weight.push_back(term.weight);
  }
  for (std::size_t j = 0; j < harmonic.size(); ++j) plan.fold_begin[j + 1] += plan.fold_begin[j];

  // The rows of D numbered densely (harmonicTaylorRows() is ascending, so by degree).
  const std::span<const std::uint16_t> rows = e.harmonicTaylorRows();
  const auto row_count = static_cast<int>(rows.size());
  require(row_count <= kMaxTaylorRows, "fmm::buildM2lPlan", "{} rows of D (at most {})", row_count, kMaxTaylorRows);
  std::vector<int> dense_row(static_cast<std::size_t>(e.sizeBelow(order + 2)), -1);
  for (std::size_t r = 0; r < rows.size(); ++r) dense_row[rows[r]] = static_cast<int>(r);
  plan.taylor_row_begin.assign(static_cast<std::size_t>(order) + 2, row_count);
  for (std::size_t r = rows.size(); r-- > 0;)
    plan.taylor_row_begin[static_cast<std::size_t>(e.degree(rows[r]))] = static_cast<int>(r);
  for (const std::uint16_t row : rows) {
    for (const int j : e.lowerNeighbours()[row]) {
      require(j < 0 || dense_row[static_cast<std::size_t>(j)] >= 0, "fmm::buildM2lPlan",
              "row {} of D reads row {}, which is not computed", row, j);
      plan.taylor_lower.push_back(j < 0 ? row_count : dense_row[static_cast<std::size_t>(j)]);
    }
    plan.taylor_factorial.push_back(e.factorials()[row]);
  }

  // The unfolding, a kz level at a time.
  for (int z = 2; z <= order + 1; ++z) {
    plan.unfold_begin.push_back(static_cast<int>(plan.unfold.size()));
    for (const auto& [target, a, b] : e.unfoldSteps())
      if (e.index(target)[2] == z) plan.unfold.push_back({target, a, b, 0});
  }
  require(plan.unfold.size() == e.unfoldSteps().size(), "fmm::buildM2lPlan", "unfold steps of kz above the order");

  // The bundles: the harmonic coefficients n kM2lBundle at a time in order (so by degree), each
  // with the rows n + k_j of D for the harmonic j of degree <= order - |n| of its first (lowest)
  // degree (d^2 harmonic indices are of degree below d); a slot whose n has fewer j reads the zero
  // row past them. Bundles of one degree each took 495 steps an order-8 M2L (the lone n of degree
  // 0 read 81 j with three slots empty); across degrees, 375.
  static_assert(kM2lBundle == 4, "bundle_rows holds four rows");
  struct Bundle {
    int first_n, count, j_count, rows_first;
  };
  std::vector<Bundle> bundles;
  auto jCount = [&](int n) {
    const int below = order - e.degree(harmonic[static_cast<std::size_t>(n)]) + 1;
    return below * below;
  };
  for (int n0 = 0; n0 < harmonic_count; n0 += kM2lBundle) {
    const Bundle b{n0, std::min(kM2lBundle, harmonic_count - n0), jCount(n0),
                   static_cast<int>(plan.bundle_rows.size())};
    for (int j = 0; j < b.j_count; ++j) {
      std::array<std::uint16_t, 4> slots{};
      for (int r = 0; r < kM2lBundle; ++r) {
        int dense = row_count;  // the zero row
        if (r < b.count && j < jCount(n0 + r)) {
          const auto &a = e.index(harmonic[static_cast<std::size_t>(n0 + r)]);
          const auto &c = e.index(harmonic[static_cast<std::size_t>(j)]);
          dense = dense_row[static_cast<std::size_t>(e.find(a[0] + c[0], a[1] + c[1], a[2] + c[2]))];
          require(dense >= 0, "fmm::buildM2lPlan", "the M2L reads a row of D that is not computed");
        }
        slots[static_cast<std::size_t>(r)] = static_cast<std::uint16_t>(dense);
      }
      plan.bundle_rows.push_back(slots);
    }
    bundles.push_back(b);
  }

  // The work items: the bundles' j in order, each group a share of the cost (a j costs 1, a work
  // item's reductions across lanes kItemCost), cut where a share ends.
  constexpr int kItemCost = 8;
  std::vector<std::vector<int>> parts_of(harmonic.size());
  long long steps = 0;
  for (const Bundle& b : bundles) steps += b.j_count;
  const long long cost = steps + kItemCost * (static_cast<long long>(bundles.size()) + kM2lGroups);
  const double budget = static_cast<double>(cost) / kM2lGroups;
  int group = 0;
  double spent = 0.0;
  plan.group_items.push_back(0);
  for (const Bundle& b : bundles) {
    for (int j = 0; j < b.j_count;) {
      if (group < kM2lGroups - 1 && spent + kItemCost >= budget * (group + 1)) {  // this group is full
        ++group;
        plan.group_items.push_back(static_cast<int>(plan.items.size()));
      }
      // The j this group can still take after paying for a new item (at least one).
      const int room = group == kM2lGroups - 1
                           ? b.j_count - j
                           : std::max(1, static_cast<int>(budget * (group + 1) - spent - kItemCost));
      const int last = std::min(b.j_count, j + room);
      const int item = static_cast<int>(plan.items.size());
      for (int r = 0; r < b.count; ++r)
        parts_of[static_cast<std::size_t>(b.first_n + r)].push_back(item * kM2lBundle + r);
      plan.items.push_back({b.rows_first + j, last - j, j, 0});
      spent += kItemCost + (last - j);
      j = last;
    }
  }
  while (static_cast<int>(plan.group_items.size()) <= kM2lGroups)
    plan.group_items.push_back(static_cast<int>(plan.items.size()));
  require(static_cast<int>(plan.items.size()) <= kMaxItems, "fmm::buildM2lPlan",
          "{} M2L work items at order {} (at most {})", plan.items.size(), order, kMaxItems);
  plan.part_begin.push_back(0);
  for (const std::vector<int>& p : parts_of) {
    plan.parts.insert(plan.parts.end(), p.begin(), p.end());
    plan.part_begin.push_back(static_cast<int>(plan.parts.size()));
  }
  return plan;
}

}  // namespace grove::fmm::detail
