// Cutoff trees (FDPS's SEARCH_MODE_LONG_CUTOFF: TreeForForceLong<...>::MonopoleWithCutoff and
// ::WithCutoff) against brute force over every rank's particles and every periodic image within
// r_cut, with a kernel that goes smoothly to zero at r_cut. Open, fully and partly periodic
// boundaries; uniform and clustered particles; on every rank count.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>
#include <type_traits>

#include "grove/fdps.hpp"
#include "grove/force/tree_for_force_long.hpp"
#include "support/host_accelerator.hpp"
#include "support/particles.hpp"
#include "support/statistics.hpp"

using namespace grove;
using namespace grove::testing_support;

namespace {

// The cutoff every EPJ reports (EPJ::getRSearch); each test sets it before its calculations.
double g_r_cut = 0.2;
constexpr double kEps2 = 1e-6;

struct CutForce {
  Vec3d acc;
  double weight = 0.0;          // the sum of m W over the pairs within r_cut (a sum of positive terms)
  std::int64_t neighbours = 0;  // particles (not superparticles) met within r_cut
  void clear() { acc = {}, weight = 0.0, neighbours = 0; }
  void add(const CutForce& o) { acc += o.acc, weight += o.weight, neighbours += o.neighbours; }
};

struct Body {
  std::int64_t id = 0;
  double mass = 0.0;
  Vec3d pos;
  CutForce result;
  Vec3d getPos() const { return pos; }
  void setPos(const Vec3d& p) { pos = p; }
  void copyFromForce(const CutForce& f) { result = f; }
};

struct BodyEP {
  std::int64_t id = 0;
  double mass = 0.0;
  Vec3d pos;
  double r_cut = 0.0;
  Vec3d getPos() const { return pos; }
  void setPos(const Vec3d& p) { pos = p; }
  double getCharge() const { return mass; }
  double getRSearch() const { return r_cut; }
  void copyFromFP(const Body& b) { id = b.id, mass = b.mass, pos = b.pos, r_cut = g_r_cut; }
};

// Softened gravity times W = (1 - (r/r_cut)^2)^2 inside r_cut, zero beyond: W and W' vanish at
// r_cut, as a TreePM short-range split does. Returns whether the pair is within r_cut.
inline bool addCutPair(const Vec3d& d, double m, CutForce& f) {
  const double r2 = norm2(d), rc2 = g_r_cut * g_r_cut;
  if (r2 >= rc2) return false;
  const double x2 = r2 / rc2, w = (1.0 - x2) * (1.0 - x2);
  const double r_inv = 1.0 / std::sqrt(r2 + kEps2);
  f.acc += (m * r_inv * r_inv * r_inv * w) * d;
  f.weight += m * w;
  return true;
}

struct EpKernel {
  void operator()(const BodyEP* epi, int n_i, const BodyEP* epj, int n_j, CutForce* f) const {
    for (int i = 0; i < n_i; ++i)
      for (int j = 0; j < n_j; ++j) {
        if (epj[j].id == epi[i].id) continue;  // itself (its images lie beyond r_cut < L/2)
        if (addCutPair(epj[j].pos - epi[i].pos, epj[j].mass, f[i])) ++f[i].neighbours;
      }
  }
};

struct SpKernel {
  template <class SPJ>
  void operator()(const BodyEP* epi, int n_i, const SPJ* spj, int n_j, CutForce* f) const {
    for (int i = 0; i < n_i; ++i)
      for (int j = 0; j < n_j; ++j) addCutPair(Vec3d(spj[j].getPos()) - epi[i].pos, spj[j].getCharge(), f[i]);
  }
};

using Trees = TreeForForceLong<CutForce, BodyEP, BodyEP>;
using Monopole = Trees::MonopoleWithCutoff;
using Psys = ParticleSystem<Body>;

// The spellings FDPS programs use reach the same trees.
static_assert(std::is_same_v<fdps::TreeForForceLong<CutForce, BodyEP, BodyEP>::MonopoleWithCutoff, Monopole>);
static_assert(std::is_same_v<fdps::TreeForForceLong<CutForce, BodyEP, BodyEP, fdps::MomentMonopoleCutoff,
                                                     fdps::SPJMonopoleCutoff>::WithCutoff,
                             Monopole>);
static_assert(std::is_same_v<TreeForForceLong<CutForce, BodyEP, BodyEP, MomentQuadrupole, SPJQuadrupole>::WithCutoff,
                             Trees::WithMomentAndCutoff<MomentQuadrupole, SPJQuadrupole>>);

struct Case {
  BoundaryCondition bc;
  bool clustered;
};

// n bodies in the unit cube (this rank's share): uniform, or four Gaussian clumps (sigma 0.04)
// over a 20% uniform background, wrapped into the cube.
void fill(Psys& psys, std::int64_t n, bool clustered, std::uint64_t seed = 7) {
  const int r = psys.comm().rank(), p = psys.comm().size();
  std::mt19937_64 centre_rng(seed);
  std::vector<Vec3d> centres;
  for (int k = 0; k < 4; ++k) centres.push_back(uniformInCube(centre_rng));
  psys.resize(0);
  for (std::int64_t id = n * r / p; id < n * (r + 1) / p; ++id) {
    std::mt19937_64 rng(seed * 7919 + static_cast<std::uint64_t>(id));
    Body b;
    b.id = id;
    b.mass = (1.0 + 0.5 * static_cast<double>(id % 3)) / static_cast<double>(n);
    b.pos = uniformInCube(rng);
    if (clustered && id % 5 != 0) {
      std::normal_distribution<double> g(0.0, 0.04);
      const Vec3d c = centres[static_cast<std::size_t>(id % 4)];
      b.pos = {c.x + g(rng), c.y + g(rng), c.z + g(rng)};
      for (int a = 0; a < 3; ++a) b.pos[static_cast<std::size_t>(a)] -= std::floor(b.pos[static_cast<std::size_t>(a)]);
    }
    psys.add(b);
  }
}

void setUp(Psys& psys, DomainInfo& dinfo, const Case& c, std::int64_t n) {
  dinfo.setBoundaryCondition(c.bc);
  dinfo.setPosRootDomain({0, 0, 0}, {1, 1, 1});
  fill(psys, n, c.clustered);
  psys.adjustPositionIntoRootDomain(dinfo);
  dinfo.decomposeDomainAll(psys);
  psys.exchangeParticle(dinfo);
}

// Image shifts along the periodic axes of a unit box: every n with |n| <= shells on each
// periodic axis, zero shift first. Written out here, independently of the tree's own choice.
std::vector<Vec3d> unitImageShifts(BoundaryCondition bc, int shells = 1) {
  std::vector<Vec3d> shifts{Vec3d{}};
  for (int nx = -shells; nx <= shells; ++nx)
    for (int ny = -shells; ny <= shells; ++ny)
      for (int nz = -shells; nz <= shells; ++nz) {
        const int n[3] = {nx, ny, nz};
        bool allowed = nx != 0 || ny != 0 || nz != 0;
        for (int a = 0; a < 3; ++a) allowed = allowed && (n[a] == 0 || isPeriodic(bc, a));
        if (allowed) shifts.push_back(Vec3d(nx, ny, nz));
      }
  return shifts;
}

// Brute force: every other body of every rank, at its nearest image, within r_cut.
std::vector<CutForce> bruteForce(const Psys& psys, BoundaryCondition bc) {
  const std::vector<Body> all = psys.comm().allgatherv(psys.particles());
  std::vector<CutForce> out(psys.size());
  const auto n = static_cast<std::int64_t>(psys.size());
#pragma omp parallel for schedule(dynamic, 16)
  for (std::int64_t i = 0; i < n; ++i) {
    const Body& bi = psys[static_cast<std::size_t>(i)];
    CutForce& f = out[static_cast<std::size_t>(i)];
    for (const Body& bj : all) {
      if (bj.id == bi.id) continue;
      Vec3d d = bj.pos - bi.pos;
      for (int a = 0; a < 3; ++a)
        if (isPeriodic(bc, a)) d[static_cast<std::size_t>(a)] -= std::round(d[static_cast<std::size_t>(a)]);
      if (addCutPair(d, bj.mass, f)) ++f.neighbours;
    }
  }
  return out;
}

// Relative errors |a - a_ref| / |a_ref|, and the worst error relative to the rms force (where
// cancellation makes |a_ref| small, the relative error says little about the tree).
struct Errors {
  double median = 0, p99 = 0, max = 0, max_over_rms = 0;
  std::int64_t neighbour_mismatches = 0;
};

Errors compare(const Psys& psys, const std::vector<CutForce>& ref) {
  std::vector<double> local(psys.size());
  std::int64_t mismatches = 0;
  double sum_sq = 0.0, worst_abs = 0.0;
  for (std::size_t i = 0; i < psys.size(); ++i) {
    const double err = norm(psys[i].result.acc - ref[i].acc);
    local[i] = err / norm(ref[i].acc);
    mismatches += psys[i].result.neighbours != ref[i].neighbours;
    sum_sq += norm2(ref[i].acc);
    worst_abs = std::max(worst_abs, err);
  }
  const std::vector<double> all = sortedOverRanks(psys.comm(), local);
  Errors e;
  e.neighbour_mismatches = psys.comm().allreduceSum(mismatches);
  const auto n = psys.comm().allreduceSum(static_cast<std::int64_t>(psys.size()));
  const double rms = std::sqrt(psys.comm().allreduceSum(sum_sq) / static_cast<double>(std::max<std::int64_t>(n, 1)));
  e.max_over_rms = psys.comm().allreduceMax(worst_abs) / rms;
  if (!all.empty())
    e.median = all[(all.size() - 1) / 2], e.p99 = all[(all.size() - 1) * 99 / 100], e.max = all.back();
  return e;
}

// Images (other ranks' bodies, and my own shifted by a period) within r_cut of my particles'
// bounding box: exactly what a θ = 0 LET must bring.
std::int64_t imagesWithinCutoffOfMyBox(const Psys& psys, BoundaryCondition bc, int shells = 1) {
  const std::vector<Body> all = psys.comm().allgatherv(psys.particles());
  std::set<std::int64_t> mine;
  Boxd box = Boxd::empty();
  for (const Body& b : psys) mine.insert(b.id), box.merge(b.pos);
  if (box.isEmpty()) return 0;
  std::int64_t count = 0;
  const std::vector<Vec3d> shifts = unitImageShifts(bc, shells);
  for (const Body& b : all)
    for (std::size_t s = 0; s < shifts.size(); ++s) {
      if (s == 0 && mine.count(b.id)) continue;
      count += distanceMinSq(box, b.pos + shifts[s]) <= g_r_cut * g_r_cut;
    }
  return count;
}

std::vector<CutForce> forcesOf(const Psys& psys) {
  std::vector<CutForce> out;
  for (const Body& b : psys) out.push_back(b.result);
  return out;
}

std::string nameOf(const Case& c) { return std::string(toString(c.bc)) + (c.clustered ? "_clustered" : "_uniform"); }

class CutoffTree : public ::testing::TestWithParam<Case> {};

}  // namespace

// θ = 0 opens every cell within reach: the forces are the brute force to rounding, every pair
// within r_cut is met exactly once (its one image within r_cut), no superparticle is used, and
// the LET holds exactly the images within r_cut of each rank's box.
TEST_P(CutoffTree, ThetaZeroMatchesBruteForceAndMeetsEveryPairOnce) {
  const Case c = GetParam();
  g_r_cut = 0.2;
  Psys psys;
  DomainInfo dinfo;
  setUp(psys, dinfo, c, 3000);
  const auto ref = bruteForce(psys, c.bc);
  for (int n_leaf : {1, 8}) {
    Monopole tree(psys.size(), 0.0, n_leaf, 32);
    tree.calcForceAllAndWriteBack(EpKernel{}, SpKernel{}, psys, dinfo);
    const Errors e = compare(psys, ref);
    grove::log("{} theta 0 leaf {}: max {:.2e}, LET ep received {}", nameOf(c), n_leaf, e.max,
               tree.profile().let_ep_received);
    EXPECT_LT(e.max, 1e-12) << nameOf(c) << " leaf " << n_leaf;
    EXPECT_EQ(e.neighbour_mismatches, 0) << nameOf(c) << " leaf " << n_leaf;
    EXPECT_EQ(tree.getNumberOfInteractionEPSPGlobal(), 0);
    EXPECT_EQ(tree.profile().let_sp_received, 0);
    EXPECT_EQ(tree.profile().let_ep_received, imagesWithinCutoffOfMyBox(psys, c.bc)) << nameOf(c);
  }
}

// θ = 0.5 (leaf 8, group 64), N = 3000, r_cut = 0.2: errors against brute force, bounded from
// the worst measured at 1-4 ranks over these cases (median 2.02e-3, p99 8.7e-2, worst error /
// rms force 1.53e-2). Inside r_cut the net force is a small residual of large opposing
// contributions, so a few particles with a near-zero force have relative errors up to 1.4; the
// worst error is therefore bounded relative to the rms force, not to the particle's own force.
TEST_P(CutoffTree, ThetaHalfErrorsStayWithinMeasuredBounds) {
  const Case c = GetParam();
  g_r_cut = 0.2;
  Psys psys;
  DomainInfo dinfo;
  setUp(psys, dinfo, c, 3000);
  const auto ref = bruteForce(psys, c.bc);
  Monopole tree(psys.size(), 0.5, 8, 64);
  tree.calcForceAllAndWriteBack(EpKernel{}, SpKernel{}, psys, dinfo);
  const Errors e = compare(psys, ref);
  const std::int64_t n_sp = tree.getNumberOfInteractionEPSPGlobal();
  grove::log("{} theta 0.5: median {:.2e} p99 {:.2e} max {:.2e} max/rms {:.2e}, ep-sp {} ep-ep {}", nameOf(c),
             e.median, e.p99, e.max, e.max_over_rms, n_sp,
             tree.getNumberOfInteractionEPEPGlobal());
  EXPECT_GT(n_sp, 0) << "superparticles must be used at theta 0.5";
  EXPECT_LT(e.median, 2.5e-3) << nameOf(c);
  EXPECT_LT(e.p99, 1e-1) << nameOf(c);
  EXPECT_LT(e.max_over_rms, 2e-2) << nameOf(c);
}

// A cutoff beyond the system's diameter (open boundary) bites nowhere: the cutoff tree then
// makes the same walks and LET as the ordinary monopole tree (all-to-all LET) and gives the same
// forces, superparticles and all.
TEST(CutoffTreeOpen, CutoffBeyondTheSystemGivesTheOrdinaryTreeForces) {
  g_r_cut = 10.0;
  Psys psys;
  DomainInfo dinfo;
  setUp(psys, dinfo, {BoundaryCondition::OPEN, true}, 3000);
  using Plain = Trees::Monopole;
  Plain plain(psys.size(), 0.5, 8, 64);
  plain.setLetExchangeMode(LetExchangeMode::ALL_TO_ALL);
  plain.calcForceAllAndWriteBack(EpKernel{}, SpKernel{}, psys, dinfo);
  const auto reference = forcesOf(psys);
  Monopole tree(psys.size(), 0.5, 8, 64);
  tree.calcForceAllAndWriteBack(EpKernel{}, SpKernel{}, psys, dinfo);
  const Errors e = compare(psys, reference);
  EXPECT_LT(e.max, 1e-14);
  EXPECT_EQ(e.neighbour_mismatches, 0);
  EXPECT_EQ(psys.comm().allreduceSum(tree.profile().n_ep_sp), psys.comm().allreduceSum(plain.profile().n_ep_sp));
  EXPECT_GT(psys.comm().allreduceSum(tree.profile().n_ep_sp), 0);
}

INSTANTIATE_TEST_SUITE_P(BoundariesAndDistributions, CutoffTree,
                         ::testing::Values(Case{BoundaryCondition::OPEN, false}, Case{BoundaryCondition::OPEN, true},
                                           Case{BoundaryCondition::PERIODIC_XYZ, false},
                                           Case{BoundaryCondition::PERIODIC_XYZ, true},
                                           Case{BoundaryCondition::PERIODIC_XY, true}),
                         [](const auto& info) { return nameOf(info.param); });

// REUSE_LIST resends fresh LET payloads (images included) along the kept plan: after every
// body moves by the same small vector, the kept lists give the forces of before to rounding.
// Stale payloads would be off by the move, 1e-3 of the box.
TEST(CutoffTreeLists, ReuseAfterARigidMoveReproducesTheForces) {
  g_r_cut = 0.2;
  Psys psys;
  DomainInfo dinfo;
  setUp(psys, dinfo, {BoundaryCondition::PERIODIC_XYZ, true}, 3000);
  Monopole tree(psys.size(), 0.5, 8, 64);
  tree.calcForceAllAndWriteBack(EpKernel{}, SpKernel{}, psys, dinfo, true, MAKE_LIST_FOR_REUSE);
  std::vector<CutForce> before;
  for (const Body& b : psys) before.push_back(b.result);
  const std::int64_t sp_before = tree.profile().n_ep_sp;
  for (Body& b : psys) b.pos += Vec3d(1e-3, -2e-3, 1.5e-3);
  tree.calcForceAllAndWriteBack(EpKernel{}, SpKernel{}, psys, dinfo, true, REUSE_LIST);
  const Errors e = compare(psys, before);
  EXPECT_LT(e.max, 1e-10);
  EXPECT_EQ(e.neighbour_mismatches, 0);
  EXPECT_EQ(tree.profile().n_ep_sp, sp_before);

  // MAKE_LIST (walk as you go) and calcForceAll (forces kept in the tree) agree with the lists.
  Monopole fresh(psys.size(), 0.5, 8, 64);
  for (Body& b : psys) b.pos -= Vec3d(1e-3, -2e-3, 1.5e-3);
  fresh.calcForceAll(EpKernel{}, SpKernel{}, psys, dinfo);
  double worst = 0;
  for (std::size_t i = 0; i < psys.size(); ++i)
    worst = std::max(worst, norm(fresh.getForce(i).acc - before[i].acc) / norm(before[i].acc));
  EXPECT_LT(psys.comm().allreduceMax(worst), 1e-10);
}

// FDPS's split stages (setParticleLocalTree, makeLocalTree, makeGlobalTree, calcForce) set up
// the cutoff and the images as the one-call form does.
TEST(CutoffTreeLists, SplitStageCallsGiveTheOneCallForces) {
  g_r_cut = 0.2;
  Psys psys;
  DomainInfo dinfo;
  setUp(psys, dinfo, {BoundaryCondition::PERIODIC_XYZ, true}, 2000);
  Monopole tree(psys.size(), 0.5, 8, 64);
  tree.calcForceAllAndWriteBack(EpKernel{}, SpKernel{}, psys, dinfo);
  Monopole split(psys.size(), 0.5, 8, 64);
  split.setParticleLocalTree(psys);
  split.makeLocalTree(dinfo);
  split.makeGlobalTree(dinfo);
  split.calcMomentGlobalTree();
  split.calcForce(EpKernel{}, SpKernel{});
  double worst = 0;
  std::int64_t mismatches = 0;
  for (std::size_t i = 0; i < psys.size(); ++i) {
    worst = std::max(worst, norm(split.getForce(i).acc - psys[i].result.acc) / norm(psys[i].result.acc));
    mismatches += split.getForce(i).neighbours != psys[i].result.neighbours;
  }
  EXPECT_LT(psys.comm().allreduceMax(worst), 1e-13);
  EXPECT_EQ(psys.comm().allreduceSum(mismatches), 0);
}

namespace {
// A host stand-in for an accelerator: dispatch computes each walk with the CPU kernels,
// retrieve hands the results back.
using HostDevice = HostAccelerator<BodyEP, BodyEP, SPJMonopoleCutoff, CutForce, EpKernel, SpKernel>;
using IndexDispatch = HostDevice::IndexDispatch;
using Retrieve = HostDevice::Retrieve;
using PlainDispatch = HostDevice::PlainDispatch;

std::map<std::int64_t, CutForce> forcesById(const Psys& psys) {
  std::map<std::int64_t, CutForce> out;
  for (const Body& b : psys) out[b.id] = b.result;
  return out;
}

void expectSameForces(const Psys& psys, const std::map<std::int64_t, CutForce>& ref, const char* what) {
  double worst = 0;
  std::int64_t mismatches = 0;
  for (const Body& b : psys) {
    const CutForce& r = ref.at(b.id);
    worst = std::max(worst, norm(b.result.acc - r.acc) / norm(r.acc));
    mismatches += b.result.neighbours != r.neighbours;
  }
  EXPECT_LT(psys.comm().allreduceMax(worst), 1e-13) << what;
  EXPECT_EQ(psys.comm().allreduceSum(mismatches), 0) << what;
}
}  // namespace

// The multiwalk hooks (plain and index forms, fresh and reused lists) see the same sources as
// the CPU path, images included.
TEST(CutoffTreeLists, MultiwalkFormsMatchTheCpuPath) {
  g_r_cut = 0.2;
  Psys psys;
  DomainInfo dinfo;
  setUp(psys, dinfo, {BoundaryCondition::PERIODIC_XY, false}, 2000);
  Monopole tree(psys.size(), 0.5, 8, 64);
  tree.calcForceAllAndWriteBack(EpKernel{}, SpKernel{}, psys, dinfo);
  const auto cpu = forcesById(psys);
  HostDevice device;
  tree.calcForceAllAndWriteBackMultiWalk(PlainDispatch{&device}, Retrieve{&device}, 3, psys, dinfo, 5);
  expectSameForces(psys, cpu, "plain multiwalk");
  tree.calcForceAllAndWriteBackMultiWalkIndex(IndexDispatch{&device}, Retrieve{&device}, 3, psys, dinfo, 5, true,
                                              MAKE_LIST_FOR_REUSE);
  expectSameForces(psys, cpu, "index multiwalk, make list for reuse");
  tree.calcForceAllAndWriteBackMultiWalkIndex(IndexDispatch{&device}, Retrieve{&device}, 3, psys, dinfo, 5, true,
                                              REUSE_LIST);
  expectSameForces(psys, cpu, "index multiwalk, reuse list");
}

// Each rank's particles form one clump, farther than r_cut from every other clump: no rank
// sends another anything, not even a root superparticle (the open-boundary LET would).
TEST(CutoffTreeLet, DomainsBeyondTheCutoffSendNothing) {
  g_r_cut = 0.05;
  Psys psys;
  DomainInfo dinfo;
  const int ranks = psys.comm().size(), me = psys.comm().rank();
  dinfo.setNumberOfDomainMultiDimension(ranks, 1, 1);
  psys.resize(0);
  for (std::int64_t id = 0; id < 500; ++id) {
    std::mt19937_64 rng(31 * static_cast<std::uint64_t>(id) + static_cast<std::uint64_t>(me));
    Body b;
    b.id = me * 500 + id;
    b.mass = 1e-3;
    b.pos = uniformInCube(rng, -0.05, 0.05) + Vec3d((me + 0.5) * 0.25, 0.5, 0.5);
    psys.add(b);
  }
  dinfo.decomposeDomainAll(psys);
  psys.exchangeParticle(dinfo);
  Monopole tree(psys.size(), 0.5, 8, 64);
  tree.calcForceAllAndWriteBack(EpKernel{}, SpKernel{}, psys, dinfo);
  EXPECT_EQ(psys.comm().allreduceSum(tree.profile().let_ep_received + tree.profile().let_sp_received), 0);
  const Errors e = compare(psys, bruteForce(psys, BoundaryCondition::OPEN));
  EXPECT_LT(e.median, 3e-3);
}

namespace {
// The ep-ep kernel with cutoffs beyond half the period: every entry within r_cut counts, images
// of the particle itself included; only the particle itself at zero distance is skipped.
struct ImageEpKernel {
  void operator()(const BodyEP* epi, int n_i, const BodyEP* epj, int n_j, CutForce* f) const {
    for (int i = 0; i < n_i; ++i)
      for (int j = 0; j < n_j; ++j) {
        const Vec3d d = epj[j].pos - epi[i].pos;
        if (epj[j].id == epi[i].id && norm2(d) == 0.0) continue;
        if (addCutPair(d, epj[j].mass, f[i])) ++f[i].neighbours;
      }
  }
};

// Brute force over every image: each body of every rank under each shift of `shells` periods
// or fewer along the periodic axes (more than can reach: r_cut < shells - 1), every image
// within r_cut counted, the body itself excepted at zero shift. The separation is formed as the
// tree forms it (the image's position, then the difference), so each pair's terms are the
// tree's bit for bit and only the order of the sums differs.
std::vector<CutForce> bruteForceOverImages(const Psys& psys, BoundaryCondition bc, int shells) {
  const std::vector<Body> all = psys.comm().allgatherv(psys.particles());
  const std::vector<Vec3d> shifts = unitImageShifts(bc, shells);
  std::vector<CutForce> out(psys.size());
  const auto n = static_cast<std::int64_t>(psys.size());
#pragma omp parallel for schedule(dynamic, 4)
  for (std::int64_t i = 0; i < n; ++i) {
    const Body& bi = psys[static_cast<std::size_t>(i)];
    CutForce& f = out[static_cast<std::size_t>(i)];
    for (const Body& bj : all)
      for (std::size_t s = 0; s < shifts.size(); ++s) {
        if (s == 0 && bj.id == bi.id) continue;
        if (addCutPair((bj.pos + shifts[s]) - bi.pos, bj.mass, f)) ++f.neighbours;
      }
  }
  return out;
}

struct WideCase {
  BoundaryCondition bc;
  double r_cut;  // in periods (the box is the unit cube)
};

std::string nameOf(const WideCase& c) {
  return fmt::format("{}_rcut_{}", toString(c.bc), static_cast<int>(std::lround(100 * c.r_cut)));
}

class CutoffTreeWide : public ::testing::TestWithParam<WideCase> {};
}  // namespace

// Cutoffs beyond half the period (0.7 L: up to two images of another body within r_cut; 1.3 L:
// images from two shells, and of the body itself). As FDPS does, each image within r_cut is
// met: at θ = 0 the neighbour counts (images counted) equal brute force over every image
// exactly, the sums of m W and the forces to round-off, and the LET holds exactly the images
// within r_cut of each rank's box.
TEST_P(CutoffTreeWide, CutoffBeyondHalfThePeriodMeetsEveryImage) {
  const WideCase c = GetParam();
  g_r_cut = c.r_cut;
  Psys psys;
  DomainInfo dinfo;
  setUp(psys, dinfo, {c.bc, false}, 300);
  const int shells = static_cast<int>(std::ceil(c.r_cut)) + 1;
  const auto ref = bruteForceOverImages(psys, c.bc, shells);
  Monopole tree(psys.size(), 0.0, 8, 32);
  tree.calcForceAllAndWriteBack(ImageEpKernel{}, SpKernel{}, psys, dinfo);
  std::int64_t count_mismatches = 0, neighbours = 0, nearest_image_neighbours = 0;
  const auto nearest = bruteForce(psys, c.bc);  // one image per pair: too few here
  double worst_weight = 0.0, worst_acc = 0.0, acc_sq = 0.0;
  for (std::size_t i = 0; i < psys.size(); ++i) {
    const CutForce& got = psys[i].result;
    count_mismatches += got.neighbours != ref[i].neighbours;
    neighbours += ref[i].neighbours;
    nearest_image_neighbours += nearest[i].neighbours;
    worst_weight = std::max(worst_weight, std::abs(got.weight - ref[i].weight) / ref[i].weight);
    worst_acc = std::max(worst_acc, norm(got.acc - ref[i].acc));
    acc_sq += norm2(ref[i].acc);
  }
  const Comm& comm = psys.comm();
  const std::int64_t n_total = comm.allreduceSum(static_cast<std::int64_t>(psys.size()));
  const double rms = std::sqrt(comm.allreduceSum(acc_sq) / static_cast<double>(n_total));
  grove::log("{}: {} neighbours in all, worst relative weight error {:.2e}, worst force error / rms {:.2e}, LET {}",
             nameOf(c), comm.allreduceSum(neighbours), comm.allreduceMax(worst_weight),
             comm.allreduceMax(worst_acc) / rms, tree.profile().let_ep_received);
  EXPECT_EQ(comm.allreduceSum(count_mismatches), 0) << nameOf(c);
  EXPECT_LT(comm.allreduceMax(worst_weight), 1e-12) << nameOf(c);
  EXPECT_LT(comm.allreduceMax(worst_acc) / rms, 1e-12) << nameOf(c);
  // The case is what it claims: pairs meet through more than one image.
  EXPECT_GT(comm.allreduceSum(neighbours), comm.allreduceSum(nearest_image_neighbours)) << nameOf(c);
  EXPECT_EQ(tree.getNumberOfInteractionEPSPGlobal(), 0);
  EXPECT_EQ(tree.profile().let_ep_received, imagesWithinCutoffOfMyBox(psys, c.bc, shells)) << nameOf(c);
}

INSTANTIATE_TEST_SUITE_P(CutoffsBeyondHalfThePeriod, CutoffTreeWide,
                         ::testing::Values(WideCase{BoundaryCondition::PERIODIC_XYZ, 0.7},
                                           WideCase{BoundaryCondition::PERIODIC_XYZ, 1.3},
                                           WideCase{BoundaryCondition::PERIODIC_X, 0.7},
                                           WideCase{BoundaryCondition::PERIODIC_X, 1.3}),
                         [](const auto& info) { return nameOf(info.param); });

// A periodic axis needs its period: without a root domain the cutoff tree stops with an error
// naming setPosRootDomain, on every rank.
TEST(CutoffTreeErrors, PeriodicBoundaryWithoutARootDomainIsAClearErrorOnEveryRank) {
  g_r_cut = 0.2;
  Psys psys;
  DomainInfo dinfo;
  dinfo.setBoundaryCondition(BoundaryCondition::PERIODIC_XY);
  fill(psys, 200, false);
  Monopole tree(psys.size(), 0.5, 8, 64);
  try {
    tree.calcForceAllAndWriteBack(EpKernel{}, SpKernel{}, psys, dinfo);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("setPosRootDomain"), std::string::npos) << e.what();
  }
}
