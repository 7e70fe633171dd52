// The far field (grove/fmm/far_field.hpp).
#include "grove/fmm/far_field.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <vector>

#include "grove/core/error.hpp"

namespace grove::fmm {

namespace {

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

void checkFarField(const FmmTree& tree, const SourceCells& sources, const MultiIndexSet& expansion,
                   std::span<const double> phi, std::span<const Vec3d> gradient, const char* where) {
  const std::size_t stride = static_cast<std::size_t>(expansion.size());
  require(phi.size() == tree.positions().size() && gradient.size() == phi.size(), where,
          "{} potentials and {} gradients for {} particles", phi.size(), gradient.size(), tree.positions().size());
  const std::vector<int>& rows = sources.remote_multipole_rows;
  if (rows.empty()) {
    require(sources.stride == stride &&
                sources.local_multipoles.size() + sources.remote_multipoles.size() == sources.cells.size() * stride,
            where, "{} + {} multipole coefficients of stride {} for {} source cells of {} each",
            sources.local_multipoles.size(), sources.remote_multipoles.size(), sources.stride, sources.cells.size(),
            stride);
    return;
  }
  require(sources.stride == stride && sources.local_multipoles.size() % stride == 0 &&
              sources.remote_multipoles.size() % stride == 0,
          where, "{} local and {} received multipole coefficients for a stride of {} (the expansion's: {})",
          sources.local_multipoles.size(), sources.remote_multipoles.size(), sources.stride, stride);
  const std::size_t local = sources.local_multipoles.size() / stride;
  require(local <= sources.cells.size() && rows.size() == sources.cells.size() - local, where,
          "{} multipole rows for {} received cells ({} cells, {} of them local)", rows.size(),
          sources.cells.size() - std::min(local, sources.cells.size()), sources.cells.size(), local);
  const auto received_rows = static_cast<std::int64_t>(sources.remote_multipoles.size() / stride);
  const auto local_rows = static_cast<std::int64_t>(local);
  for (std::size_t r = 0; r < rows.size(); ++r)
    require(rows[r] < received_rows && -1 - static_cast<std::int64_t>(rows[r]) < local_rows, where,
            "received cell {} has multipole row {}: there are {} received and {} local multipoles", local + r,
            rows[r], received_rows, local_rows);
}

FarFieldSeconds evaluateFarField(const FmmTree& tree, const SourceCells& sources, const InteractionLists& lists,
                                 const MultiIndexSet& expansion, std::span<double> phi, std::span<Vec3d> gradient) {
  checkFarField(tree, sources, expansion, phi, gradient, "fmm::evaluateFarField");
  const std::span<const FmmCell> cells = tree.cells();
  const int target_count = static_cast<int>(cells.size());
  const std::size_t stride = static_cast<std::size_t>(expansion.size());
  FarFieldSeconds seconds;
  auto multipole = [&](int s) {
    return std::span<const double>(sources.multipole(s), stride);
  };
  std::vector<double> locals(static_cast<std::size_t>(target_count) * stride, 0.0);
  auto local = [&](int c) { return std::span<double>(locals.data() + static_cast<std::size_t>(c) * stride, stride); };

  auto start = std::chrono::steady_clock::now();
  // Each source's multipole folded once for every target it serves (harmonicMultipolesToLocal).
  const std::size_t width = expansion.harmonicIndices().size();
  std::vector<double> folded(sources.cells.size() * width);
#pragma omp parallel for schedule(static)
  for (std::size_t s = 0; s < sources.cells.size(); ++s)
    expansion.foldMultipole(multipole(static_cast<int>(s)), std::span<double>(folded.data() + s * width, width));
#pragma omp parallel
  {
    std::vector<const double*> source_multipoles;
    std::vector<Vec3d> separations;
#pragma omp for schedule(dynamic, 16)
    for (int t = 0; t < target_count; ++t) {
      const Vec3d z = cells[static_cast<std::size_t>(t)].center;
      source_multipoles.clear();
      separations.clear();
      for (int s : lists.m2l.of(t)) {
        source_multipoles.push_back(folded.data() + static_cast<std::size_t>(s) * width);
        separations.push_back(z - sources.cells[static_cast<std::size_t>(s)].center);
      }
      expansion.harmonicMultipolesToLocal(source_multipoles, separations, local(t));
    }
  }
  seconds.m2l = secondsSince(start);

  start = std::chrono::steady_clock::now();
  for (int g = 1; g < tree.generationCount(); ++g) {
#pragma omp parallel for schedule(dynamic, 64)
    for (int c = tree.generation(g); c < tree.generation(g + 1); ++c) {
      const FmmCell& cell = cells[static_cast<std::size_t>(c)];
      const FmmCell& parent = cells[static_cast<std::size_t>(cell.parent)];
      expansion.shiftLocal(local(cell.parent), cell.center - parent.center, local(c));
    }
  }
  const std::span<const Vec3d> pos = tree.positions();
#pragma omp parallel for schedule(dynamic, 16)
  for (int c = 0; c < target_count; ++c) {
    const FmmCell& cell = cells[static_cast<std::size_t>(c)];
    if (!cell.leaf()) continue;
    for (int k = cell.begin; k < cell.end; ++k) {
      const auto uk = static_cast<std::size_t>(k);
      double p = 0.0;
      Vec3d g{};
      expansion.evaluateLocal(local(c), pos[uk] - cell.center, &p, &g);
      for (int s : lists.m2p.of(c))
        expansion.evaluateMultipole(multipole(s), pos[uk] - sources.cells[static_cast<std::size_t>(s)].center, &p, &g);
      phi[uk] = p;
      gradient[uk] = g;
    }
  }
  seconds.downward = secondsSince(start);
  return seconds;
}

}  // namespace grove::fmm
