// TreePM: the particle mesh's long-range force plus the short-range remainder from a cutoff tree
// (TreeForForceLong<...>::MonopoleWithCutoff, FDPS's SEARCH_MODE_LONG_CUTOFF) whose kernel applies
// the S2 split's cutoffForceFactor, against Ewald summation, on every rank count.
//   - the cutoff tree at theta = 0 gives the direct short-range sum (nearest image within r_cut)
//     to rounding, uniform and clustered, so the tree brings every pair within r_cut once;
//   - PM + tree (theta 0 and 0.5) against Ewald: median and max relative force errors within
//     bounds measured at 1-4 ranks; theta 0.5 adds little to the mesh's error.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "grove/grove.hpp"
#include "grove/pm/particle_mesh.hpp"
#include "grove/force/tree_for_force_long.hpp"
#include "pm/ewald.hpp"
#include "support/statistics.hpp"

using namespace grove;
using namespace grove::testing_support;

namespace {

constexpr int kMesh = 32;  // r_cut = 3 / 32 of the box (FDPS's 3 cells)

struct PpForce {
  Vec3d acc;
  void clear() { acc = {}; }
};

struct Body {
  std::int64_t id = -1;
  double mass = 0.0;
  Vec3d pos;
  Vec3d acc_pp;
  Vec3d acc_pm;

  Vec3d getPos() const { return pos; }
  void setPos(const Vec3d& p) { pos = p; }
  void copyFromForce(const PpForce& f) { acc_pp = f.acc; }
  double getChargeParticleMesh() const { return mass; }
  void copyFromForceParticleMesh(const Vec3f& f) { acc_pm = Vec3d(f); }
};

// One particle type for EPI and EPJ; r_cut is the tree's reach (getRSearch) and the kernel's split.
struct BodyEP {
  std::int64_t id = -1;
  double mass = 0.0;
  Vec3d pos;
  double r_cut = 0.0;
  Vec3d getPos() const { return pos; }
  void setPos(const Vec3d& p) { pos = p; }
  double getCharge() const { return mass; }
  double getRSearch() const { return r_cut; }
  void copyFromFP(const Body& b) { id = b.id, mass = b.mass, pos = b.pos, r_cut = g_r_cut; }
  static inline double g_r_cut = 0.0;  // set from the mesh before each tree calculation
};

// The short-range part of one pair: -m g_f(r) d / r^3 with d = x_i - x_j (plain difference: the
// tree brings periodic images already moved), zero from r_cut on.
inline void addShortRange(const Vec3d& xi, const Vec3d& xj, double mj, double r_cut, Vec3d& acc) {
  const Vec3d d = xi - xj;
  const double r = norm(d);
  if (r == 0.0 || r >= r_cut) return;
  acc -= d * (mj * pm::cutoffForceFactor(r, r_cut) / (r * r * r));
}

struct EpKernel {
  void operator()(const BodyEP* epi, int n_i, const BodyEP* epj, int n_j, PpForce* f) const {
    for (int i = 0; i < n_i; ++i)
      for (int j = 0; j < n_j; ++j) {
        if (epj[j].id == epi[i].id) continue;  // itself; its images lie beyond r_cut < L/2
        addShortRange(epi[i].pos, epj[j].pos, epj[j].mass, epj[j].r_cut, f[i].acc);
      }
  }
};

struct SpKernel {
  template <class SPJ>
  void operator()(const BodyEP* epi, int n_i, const SPJ* spj, int n_j, PpForce* f) const {
    for (int i = 0; i < n_i; ++i)
      for (int j = 0; j < n_j; ++j)
        addShortRange(epi[i].pos, Vec3d(spj[j].getPos()), spj[j].getCharge(), BodyEP::g_r_cut, f[i].acc);
  }
};

using CutoffTree = TreeForForceLong<PpForce, BodyEP, BodyEP>::MonopoleWithCutoff;

Vec3d nearestImage(Vec3d d) {
  for (std::size_t a = 0; a < 3; ++a) d[a] -= std::round(d[a]);
  return d;
}

// n bodies in the unit cube, the same on every rank (ids 0 .. n-1), masses in [0.5, 1.5] / n:
// uniform, or 80% in four Gaussian clumps (sigma 0.03) wrapped into the cube.
std::vector<Body> makeBodies(int n, bool clustered, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::normal_distribution<double> g(0.0, 0.03);
  std::vector<Vec3d> centres;
  for (int k = 0; k < 4; ++k) centres.emplace_back(u(rng), u(rng), u(rng));
  std::vector<Body> all(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    Body& b = all[static_cast<std::size_t>(i)];
    b.id = i;
    b.mass = (0.5 + u(rng)) / n;
    b.pos = Vec3d(u(rng), u(rng), u(rng));
    if (clustered && i % 5 != 0) {
      const Vec3d c = centres[static_cast<std::size_t>(i % 4)];
      b.pos = Vec3d(c.x + g(rng), c.y + g(rng), c.z + g(rng));
      for (std::size_t a = 0; a < 3; ++a) b.pos[a] -= std::floor(b.pos[a]);
    }
  }
  return all;
}

// This rank's share (id % ranks == rank), decomposed and exchanged in the periodic unit box.
void distribute(const std::vector<Body>& all, ParticleSystem<Body>& psys, DomainInfo& dinfo) {
  dinfo.setBoundaryCondition(BoundaryCondition::PERIODIC_XYZ);
  dinfo.setPosRootDomain(Vec3d(0.0, 0.0, 0.0), Vec3d(1.0, 1.0, 1.0));
  const Comm& comm = dinfo.comm();
  for (const auto& b : all)
    if (b.id % comm.size() == comm.rank()) psys.add(b);
  dinfo.decomposeDomainAll(psys);
  psys.exchangeParticle(dinfo);
}

// Direct short-range sum: every other body at its nearest image, closer than r_cut.
Vec3d directShortRange(const Body& bi, const std::vector<Body>& all, double r_cut) {
  Vec3d acc{0.0, 0.0, 0.0};
  for (const auto& bj : all)
    if (bj.id != bi.id) addShortRange(Vec3d(0.0, 0.0, 0.0), nearestImage(bj.pos - bi.pos), bj.mass, r_cut, acc);
  return acc;
}

// The Ewald acceleration of every body (index = id), the same on every rank: each rank sums a
// share and the shares are gathered, so the rank count changes nothing.
std::vector<Vec3d> ewaldAccelerations(const std::vector<Body>& all, const Comm& comm) {
  std::vector<EwaldSource> sources;
  for (const auto& b : all) sources.push_back({b.pos, b.mass});
  const Ewald ewald(sources, 1.0);
  const auto n = static_cast<std::int64_t>(all.size());
  const std::int64_t begin = n * comm.rank() / comm.size(), end = n * (comm.rank() + 1) / comm.size();
  std::vector<Vec3d> mine(static_cast<std::size_t>(end - begin));
#pragma omp parallel for schedule(dynamic, 8)
  for (std::int64_t i = begin; i < end; ++i)
    mine[static_cast<std::size_t>(i - begin)] = ewald.acceleration(all[static_cast<std::size_t>(i)].pos);
  return comm.allgatherv(std::span<const Vec3d>(mine));
}

}  // namespace

// theta = 0 opens every cell within reach: the tree's short-range force is the direct sum over
// nearest images within r_cut to rounding, for uniform and clustered bodies, at every rank count.
TEST(TreePmShortRange, CutoffTreeAtThetaZeroEqualsDirectNearestImageSum) {
  for (const bool clustered : {false, true}) {
    const auto all = makeBodies(2000, clustered, 31);
    DomainInfo dinfo;
    ParticleSystem<Body> psys;
    distribute(all, psys, dinfo);
    BodyEP::g_r_cut = pm::CUTOFF_RADIUS / kMesh;
    CutoffTree tree(psys.size(), 0.0, 8, 64);
    tree.calcForceAllAndWriteBack(EpKernel{}, SpKernel{}, psys, dinfo);
    double worst = 0.0, scale = 0.0;
    for (const auto& b : psys) {
      const Vec3d direct = directShortRange(b, all, BodyEP::g_r_cut);
      worst = std::max(worst, norm(b.acc_pp - direct));
      scale = std::max(scale, norm(direct));
    }
    worst = dinfo.comm().allreduceMax(worst);
    scale = dinfo.comm().allreduceMax(scale);
    grove::log("TreePM short range, theta 0, {}: max |tree - direct| / max |direct| = {:.2e}",
               clustered ? "clustered" : "uniform", worst / scale);
    EXPECT_EQ(dinfo.comm().allreduceSum(static_cast<std::int64_t>(psys.size())), 2000);
    EXPECT_EQ(tree.getNumberOfInteractionEPSPGlobal(), 0);
    EXPECT_GT(scale, 0.0);
    EXPECT_LT(worst, 1e-12 * scale) << (clustered ? "clustered" : "uniform");
  }
}

// PM (mesh 32) + cutoff tree against Ewald for 1000 random masses, uniform and clustered, at
// FDPS's cutoff (3 cells) and at 6 cells (the mesh error falls steeply with the cutoff: the
// scheme converges to Ewald, it does not merely stay within a bound), theta 0 and 0.5. Bounds are
// the largest values measured at 1-4 ranks (doc/treepm.md) times about 1.3.
//   median, max: |a_pm + a_pp - a_ewald| / |a_ewald| (the max is set by bodies whose net force
//                nearly cancels); max_over_rms: max |a_pm + a_pp - a_ewald| / rms |a_ewald|;
//   tree_max:    max |a_pp(tree at theta) - a_pp(direct)| / rms |a_ewald|, the tree's own share.
struct TreePmBounds {
  bool clustered;
  double cutoff_cells;
  double theta;
  double median, max, max_over_rms, tree_max;
};
constexpr TreePmBounds kTreePmBounds[] = {
    // uniform: at 3 cells no cell within r_cut is small enough for theta 0.5 to accept, so the
    // tree is exact there too. Measured (identical at 1-4 ranks, tree_max at 6 cells / 0.5 the
    // worst of them):
    //   3 cells: median 1.95e-2, max 3.95e-1, max/rms 4.05e-2, tree 1e-14 (both thetas)
    //   6 cells: 1.23e-3, 2.59e-2, 1.77e-3 (theta 0.5: 2.02e-3), tree 1e-14 (theta 0.5: 1.75e-3)
    {false, 3.0, 0.0, 2.5e-2, 0.5, 5.3e-2, 1e-12},
    {false, 3.0, 0.5, 2.5e-2, 0.5, 5.3e-2, 1e-12},
    {false, 6.0, 0.0, 1.6e-3, 3.4e-2, 2.3e-3, 1e-12},
    {false, 6.0, 0.5, 1.6e-3, 3.4e-2, 2.6e-3, 2.3e-3},
    // clustered (80% in four clumps, sigma 0.03). Measured, worst over 1-4 ranks:
    //   3 cells: theta 0: 4.68e-3, 3.02e-2, 1.25e-2, 1e-14; theta 0.5: 4.77e-3, 3.02e-2, 1.25e-2, 6.34e-3
    //   6 cells: theta 0: 6.01e-4, 3.24e-3, 9.92e-4, 1e-14; theta 0.5: 6.82e-4, 1.28e-2, 6.06e-3, 6.35e-3
    {true, 3.0, 0.0, 6.1e-3, 3.9e-2, 1.6e-2, 1e-12},
    {true, 3.0, 0.5, 6.2e-3, 3.9e-2, 1.6e-2, 8.2e-3},
    {true, 6.0, 0.0, 7.8e-4, 4.2e-3, 1.3e-3, 1e-12},
    {true, 6.0, 0.5, 8.9e-4, 1.7e-2, 7.9e-3, 8.3e-3},
};

class TreePm : public ::testing::TestWithParam<bool> {};

TEST_P(TreePm, MeshPlusCutoffTreeMatchesEwald) {
  const bool clustered = GetParam();
  const int n = 1000;
  const auto all = makeBodies(n, clustered, 2025);
  DomainInfo dinfo;
  ParticleSystem<Body> psys;
  distribute(all, psys, dinfo);
  const Comm& comm = dinfo.comm();
  EXPECT_EQ(comm.allreduceSum(static_cast<std::int64_t>(psys.size())), n);
  const std::vector<Vec3d> ewald = ewaldAccelerations(all, comm);
  ASSERT_EQ(ewald.size(), all.size());
  double sum_sq = 0.0;
  for (const Vec3d& a : ewald) sum_sq += norm2(a);
  const double rms = std::sqrt(sum_sq / n);

  for (const TreePmBounds& bounds : kTreePmBounds) {
    if (bounds.clustered != clustered) continue;
    pm::ParticleMesh mesh(kMesh, bounds.cutoff_cells);
    mesh.calcForceAllAndWriteBack(psys, dinfo);
    const double r_cut = mesh.getCutoffRadius();
    EXPECT_DOUBLE_EQ(r_cut, bounds.cutoff_cells / kMesh);
    BodyEP::g_r_cut = r_cut;
    CutoffTree tree(psys.size(), bounds.theta, 8, 64);
    tree.calcForceAllAndWriteBack(EpKernel{}, SpKernel{}, psys, dinfo);
    std::vector<double> errors;
    double worst = 0.0, tree_worst = 0.0;
    for (const auto& b : psys) {
      const Vec3d exact = ewald[static_cast<std::size_t>(b.id)];
      const double error = norm(b.acc_pm + b.acc_pp - exact);
      errors.push_back(error / norm(exact));
      worst = std::max(worst, error);
      tree_worst = std::max(tree_worst, norm(b.acc_pp - directShortRange(b, all, r_cut)));
    }
    const Quantiles e = quantilesOverRanks(comm, errors);
    const double max_over_rms = comm.allreduceMax(worst) / rms;
    const double tree_max = comm.allreduceMax(tree_worst) / rms;
    const std::int64_t n_sp = tree.getNumberOfInteractionEPSPGlobal();
    const std::string what = fmt::format("{}, r_cut {} cells, theta {}", clustered ? "clustered" : "uniform",
                                         bounds.cutoff_cells, bounds.theta);
    grove::log("TreePM vs Ewald, N {}, mesh {}, {}, {} ranks: relative error median {:.2e} max {:.2e}, max/rms "
               "{:.2e}; tree vs direct PP max/rms {:.2e}; ep-ep {} ep-sp {}",
               n, kMesh, what, comm.size(), e.median, e.max, max_over_rms, tree_max,
               tree.getNumberOfInteractionEPEPGlobal(), n_sp);
    if (bounds.theta > 0.0 && clustered) {
      EXPECT_GT(n_sp, 0) << "superparticles must be used: " << what;
    }
    EXPECT_LT(e.median, bounds.median) << what;
    EXPECT_LT(e.max, bounds.max) << what;
    EXPECT_LT(max_over_rms, bounds.max_over_rms) << what;
    EXPECT_LT(tree_max, bounds.tree_max) << what;
  }
}

INSTANTIATE_TEST_SUITE_P(Distributions, TreePm, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "Clustered" : "Uniform"; });
