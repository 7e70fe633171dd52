// The particle-mesh module against Ewald summation, on every rank count.
//   - PM alone: the long-range force and potential of one point mass, which is known exactly: the
//     Ewald (periodic, all images) field minus the short-range S2 part of the nearest image (the
//     only image closer than r_cut). So images are included, not neglected.
//   - PM + direct short-range sum (cutoffForceFactor, nearest image) = total periodic force.
//   - The same forces, particle by particle (by id), as one rank solving the whole system alone.
//   - Momentum: the PM forces sum to zero.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numbers>
#include <random>
#include <vector>

#include "grove/grove.hpp"
#include "grove/pm/particle_mesh.hpp"
#include "pm/ewald.hpp"
#include "support/statistics.hpp"

using namespace grove;
using namespace grove::testing_support;

namespace {

constexpr int kMesh = 32;  // r_cut = 3 / 32 of the box

struct PmParticle {
  std::int64_t id = -1;
  Vec3d pos;
  double mass = 0.0;
  Vec3d acc_pm;

  Vec3d getPos() const { return pos; }
  void setPos(const Vec3d& p) { pos = p; }
  double getChargeParticleMesh() const { return mass; }
  void copyFromForceParticleMesh(const Vec3f& f) { acc_pm = Vec3d(f); }
};

double norm3(const Vec3d& a) { return std::sqrt(a.x * a.x + a.y * a.y + a.z * a.z); }

void makePeriodicUnitBox(DomainInfo& dinfo) {
  dinfo.setBoundaryCondition(BoundaryCondition::PERIODIC_XYZ);
  dinfo.setPosRootDomain(Vec3d(0.0, 0.0, 0.0), Vec3d(1.0, 1.0, 1.0));
}

// The same n particles on every rank (ids 0 .. n-1), random positions, masses in [0.5, 1.5] / n.
std::vector<PmParticle> randomParticles(int n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<PmParticle> all(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    auto& p = all[static_cast<std::size_t>(i)];
    p.id = i;
    p.pos = Vec3d(u(rng), u(rng), u(rng));
    p.mass = (0.5 + u(rng)) / n;
  }
  return all;
}

// This rank's share (id % ranks == rank), then decomposed and exchanged as a simulation would.
void distribute(const std::vector<PmParticle>& all, ParticleSystem<PmParticle>& psys, DomainInfo& dinfo) {
  const Comm& comm = dinfo.comm();
  for (const auto& p : all)
    if (p.id % comm.size() == comm.rank()) psys.add(p);
  dinfo.decomposeDomainAll(psys);
  psys.exchangeParticle(dinfo);
}

// The short-range part the PP kernel supplies: pairs closer than r_cut, nearest image.
Vec3d shortRange(const Vec3d& x, std::int64_t self, const std::vector<PmParticle>& all, double r_cut,
                 const Ewald& ewald) {
  Vec3d acc{0.0, 0.0, 0.0};
  for (const auto& q : all) {
    if (q.id == self) continue;
    const Vec3d d = ewald.nearestImage(x - q.pos);
    const double r = norm3(d);
    if (r >= r_cut) continue;
    acc -= d * (q.mass * pm::cutoffForceFactor(r, r_cut) / (r * r * r));
  }
  return acc;
}

}  // namespace

TEST(ParticleMeshSplit, ForceFactorIsMinusRSquaredDerivativeOfPotentialFactorOverR) {
  const double r_cut = 0.3;
  EXPECT_DOUBLE_EQ(pm::cutoffForceFactor(0.0, r_cut), 1.0);
  EXPECT_DOUBLE_EQ(pm::cutoffPotentialFactor(0.0, r_cut), 1.0);
  EXPECT_EQ(pm::cutoffForceFactor(r_cut, r_cut), 0.0);
  EXPECT_EQ(pm::cutoffPotentialFactor(r_cut * 1.01, r_cut), 0.0);
  EXPECT_NEAR(pm::cutoffForceFactor(r_cut * 0.999999, r_cut), 0.0, 1e-12);
  EXPECT_NEAR(pm::cutoffPotentialFactor(r_cut * 0.999999, r_cut), 0.0, 1e-12);
  for (double r = 0.01; r < r_cut; r += 0.0137) {
    // The long-range potential (1 - g_p) / r has force (1 - g_f) / r^2.
    const double h = 1e-6;
    auto long_phi = [&](double s) { return (1.0 - pm::cutoffPotentialFactor(s, r_cut)) / s; };
    const double long_force = -(long_phi(r + h) - long_phi(r - h)) / (2 * h);
    EXPECT_NEAR(long_force * r * r, 1.0 - pm::cutoffForceFactor(r, r_cut), 1e-7) << "r " << r;
  }
  // Continuous where the polynomials change (r = r_cut / 2).
  EXPECT_NEAR(pm::cutoffForceFactor(0.5 * r_cut - 1e-12, r_cut), pm::cutoffForceFactor(0.5 * r_cut + 1e-12, r_cut), 1e-9);
  EXPECT_NEAR(pm::cutoffPotentialFactor(0.5 * r_cut - 1e-12, r_cut),
              pm::cutoffPotentialFactor(0.5 * r_cut + 1e-12, r_cut), 1e-9);
  // The self term: (1 - g_p(r)) / r -> 208 / (70 r_cut).
  EXPECT_NEAR((1.0 - pm::cutoffPotentialFactor(1e-7, r_cut)) / 1e-7, pm::longRangeSelfPotential(r_cut), 1e-5);
}

// Measured bounds for one cutoff (in mesh cells): PM errors come from the mesh's aliasing of the
// S2 spectrum, so they fall steeply as the cutoff spans more cells.
struct Bounds {
  double cutoff_cells;
  double pull_median, pull_max;        // |a_pm - a_exact| r^2 / m: the error against the pull at r
  double far_max;                      // the same, only at r >= 1.5 r_cut
  double potential_median, potential_max;  // |phi_pm - phi_exact| r_cut / m
  double total_median, total_max;      // PM + PP against Ewald, relative to the total force
};
constexpr Bounds kBounds[] = {
    // measured at 1 rank: 3.5e-3, 7.9e-2, -, 4.6e-4, 6.1e-2, 9.4e-3, 8.4e-2
    {3.0, 1.0e-2, 1.2e-1, 2.0e-2, 1.5e-3, 1.2e-1, 1.5e-2, 1.2e-1},  // FDPS's cutoff
    // measured at 1 rank: 2.5e-4, 4.4e-3, -, 2.7e-5, 4.6e-3, 1.1e-3, 1.7e-2
    {6.0, 1.0e-3, 1.0e-2, 2.0e-3, 1.0e-4, 1.0e-2, 2.5e-3, 3.5e-2},
};

class ParticleMeshAccuracy : public ::testing::TestWithParam<Bounds> {};

// One unit mass; the PM field at many points against the exact long-range field. The points sit
// at distances from 0.3 r_cut to 0.47 box, in 26 directions, around a source on a mesh point, one
// at a cell centre and one at a random offset; every rank evaluates its own set of points.
TEST_P(ParticleMeshAccuracy, PointMassFieldMatchesExactLongRangeFieldWithImages) {
  const Bounds bounds = GetParam();
  const Comm world;
  DomainInfo dinfo;
  makePeriodicUnitBox(dinfo);
  pm::ParticleMesh mesh(kMesh, bounds.cutoff_cells);
  const double r_cut = mesh.getCutoffRadius();
  const double h = 1.0 / kMesh;
  std::vector<double> pull_errors, far_errors, potential_errors;
  for (const Vec3d source : {Vec3d(10 * h, 10 * h, 10 * h), Vec3d(20.5 * h, 3.5 * h, 30.5 * h),
                             Vec3d(0.3141, 0.9265, 0.0358)}) {
    std::vector<PmParticle> one;
    if (world.rank() == 0) one.push_back(PmParticle{0, source, 1.0, {}});
    mesh.setDomainInfoParticleMesh(dinfo);
    mesh.setParticleParticleMesh(one);
    mesh.calcMeshForceOnly();
    const EwaldSource src{source, 1.0};
    const Ewald ewald(std::span<const EwaldSource>(&src, 1), 1.0);
    // The constant that makes the long-range reference potential's mean zero, as the mesh's:
    // the mean over the box of the short-range potential g_p(r) / r (midpoint rule).
    double short_mean = 0.0;
    for (int i = 0; i < 4000; ++i) {
      const double r = (i + 0.5) * r_cut / 4000;
      short_mean += pm::cutoffPotentialFactor(r, r_cut) * 4.0 * std::numbers::pi * r * (r_cut / 4000);
    }
    std::mt19937_64 rng(17 + static_cast<std::uint64_t>(world.rank()));
    std::uniform_real_distribution<double> jitter(-0.05, 0.05);
    for (double r : {0.3 * r_cut, 0.7 * r_cut, 1.0 * r_cut, 1.5 * r_cut, 2.5 * r_cut, 0.47}) {
      for (int dx = -1; dx <= 1; ++dx)
        for (int dy = -1; dy <= 1; ++dy)
          for (int dz = -1; dz <= 1; ++dz) {
            if (dx == 0 && dy == 0 && dz == 0) continue;
            Vec3d dir(dx + jitter(rng), dy + jitter(rng), dz + jitter(rng));
            dir *= 1.0 / norm3(dir);
            const Vec3d x = source + dir * r;  // may leave the box: the mesh wraps it
            const Vec3d d = ewald.nearestImage(x - source);
            const double rn = norm3(d);
            const Vec3d exact_force = ewald.acceleration(x) + d * (pm::cutoffForceFactor(rn, r_cut) / (rn * rn * rn));
            const double exact_potential = ewald.potential(x) + pm::cutoffPotentialFactor(rn, r_cut) / rn - short_mean;
            const double error = norm3(mesh.forceAt(x) - exact_force);
            pull_errors.push_back(error * rn * rn);
            if (rn >= 1.5 * r_cut) far_errors.push_back(error * rn * rn);
            potential_errors.push_back(std::abs(mesh.potentialAt(x) - exact_potential) * r_cut);
          }
    }
  }
  const Quantiles pull = quantilesOverRanks(world, pull_errors);
  const Quantiles far = quantilesOverRanks(world, far_errors);
  const Quantiles pot = quantilesOverRanks(world, potential_errors);
  grove::log("PM point mass, mesh {}, r_cut {} cells: error/pull median {:.2e} max {:.2e}; beyond 1.5 r_cut "
             "max {:.2e}; potential (1/r_cut) median {:.2e} max {:.2e}",
             kMesh, bounds.cutoff_cells, pull.median, pull.max, far.max, pot.median, pot.max);
  EXPECT_LT(pull.median, bounds.pull_median);
  EXPECT_LT(pull.max, bounds.pull_max);
  EXPECT_LT(far.max, bounds.far_max);
  EXPECT_LT(pot.median, bounds.potential_median);
  EXPECT_LT(pot.max, bounds.potential_max);
}

// PM + PP against Ewald for 256 random masses; and per particle, the distributed PM force equals
// the one a single rank computes for the whole system alone.
TEST_P(ParticleMeshAccuracy, LongPlusShortRangeMatchesEwaldAndDoesNotDependOnRankCount) {
  const Bounds bounds = GetParam();
  const Comm world;
  const auto all = randomParticles(256, 2024);
  DomainInfo dinfo;
  makePeriodicUnitBox(dinfo);
  ParticleSystem<PmParticle> psys;
  distribute(all, psys, dinfo);

  pm::ParticleMesh mesh(kMesh, bounds.cutoff_cells);
  mesh.calcForceAllAndWriteBack(psys, dinfo);
  const double r_cut = mesh.getCutoffRadius();
  EXPECT_DOUBLE_EQ(r_cut, bounds.cutoff_cells / kMesh);

  // Every rank solves the whole system on its own (a one-rank communicator): the reference for
  // rank-count independence.
  DomainInfo alone(world.split(world.rank(), 0));
  makePeriodicUnitBox(alone);
  pm::ParticleMesh mesh_alone(kMesh, bounds.cutoff_cells);
  mesh_alone.setDomainInfoParticleMesh(alone);
  mesh_alone.setParticleParticleMesh(all);
  mesh_alone.calcMeshForceOnly();

  std::vector<EwaldSource> sources;
  for (const auto& p : all) sources.push_back({p.pos, p.mass});
  const Ewald ewald(sources, 1.0);
  std::vector<double> errors, rank_differences;
  for (const auto& p : psys) {
    const Vec3d total = p.acc_pm + shortRange(p.pos, p.id, all, r_cut, ewald);
    const Vec3d exact = ewald.acceleration(p.pos);
    errors.push_back(norm3(total - exact) / norm3(exact));
    const Vec3d single = mesh_alone.forceAt(p.pos);
    rank_differences.push_back(norm3(p.acc_pm - single) / norm3(single));
  }
  EXPECT_EQ(world.allreduceSum(static_cast<std::int64_t>(psys.size())), 256);
  const Quantiles e = quantilesOverRanks(world, errors);
  const Quantiles d = quantilesOverRanks(world, rank_differences);
  grove::log("PM+PP vs Ewald, N 256, mesh {}, r_cut {} cells, {} ranks: relative force error median {:.2e} "
             "max {:.2e}; distributed vs one rank max {:.2e}",
             kMesh, bounds.cutoff_cells, world.size(), e.median, e.max, d.max);
  EXPECT_LT(e.median, bounds.total_median);
  EXPECT_LT(e.max, bounds.total_max);
  EXPECT_LT(d.max, 1e-5);  // float storage of the mesh fields: a few ulp
}

INSTANTIATE_TEST_SUITE_P(Cutoffs, ParticleMeshAccuracy, ::testing::ValuesIn(kBounds),
                         [](const auto& info) { return info.param.cutoff_cells == 3.0 ? "FdpsThreeCells" : "SixCells"; });

// Same assignment and interpolation and an odd differentiation operator: the PM forces of a
// system sum to zero (float rounding apart), whatever the rank count.
TEST(ParticleMesh, ForcesSumToZero) {
  const Comm world;
  const auto all = randomParticles(500, 99);
  DomainInfo dinfo;
  makePeriodicUnitBox(dinfo);
  ParticleSystem<PmParticle> psys;
  distribute(all, psys, dinfo);
  pm::ParticleMesh mesh(kMesh);
  mesh.calcForceAllAndWriteBack(psys, dinfo);
  Vec3d momentum{0.0, 0.0, 0.0};
  double scale = 0.0;
  for (const auto& p : psys) {
    momentum += p.acc_pm * p.mass;
    scale += p.mass * norm3(p.acc_pm);
  }
  momentum = world.allreduceSum(momentum);
  scale = world.allreduceSum(scale);
  grove::log("PM momentum: |sum m a| / sum m |a| = {:.2e}", norm3(momentum) / scale);
  EXPECT_LT(norm3(momentum) / scale, 1e-5);
}

TEST(ParticleMesh, RefusesNonCubicBoxAndReadsBeforeSolve) {
  DomainInfo dinfo;
  dinfo.setBoundaryCondition(BoundaryCondition::PERIODIC_XYZ);
  dinfo.setPosRootDomain(Vec3d(0.0, 0.0, 0.0), Vec3d(1.0, 2.0, 1.0));
  pm::ParticleMesh mesh(16);
  EXPECT_THROW(mesh.setDomainInfoParticleMesh(dinfo), Error);
  EXPECT_THROW((void)mesh.getForce(Vec3f(0.5f, 0.5f, 0.5f)), Error);
  EXPECT_THROW(pm::ParticleMesh(4), Error);
}
