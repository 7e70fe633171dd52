// Short-range trees against brute-force neighbour search: exact id sets for Gather, Scatter and
// Symmetry, uniform and clustered particles, radii spanning 30x, open and every periodic
// combination, at every rank count.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <functional>
#include <map>
#include <set>

#include "support/particles.hpp"

using namespace grove;
using namespace grove::testing_support;

namespace {

struct Neighbours {
  std::vector<std::int64_t> ids;
  double weight = 0.0;  // the sum of W = (1 - r^2/h^2)^2 over the neighbours (h: the mode's radius)
  void clear() { ids.clear(), weight = 0.0; }
};

struct Searcher {
  std::int64_t id = 0;
  Vec3d pos;
  double r_search = 0.0;

  Vec3d getPos() const { return pos; }
  void setPos(const Vec3d& p) { pos = p; }
  double getRSearch() const { return r_search; }
  void copyFromFP(const Searcher& s) { *this = s; }
  void copyFromForce(const Neighbours&) {}
};

using Psys = ParticleSystem<Searcher>;

double exactRadius(SearchMode mode, double r_i, double r_j) {
  switch (mode) {
    case SearchMode::GATHER: return r_i;
    case SearchMode::SCATTER: return r_j;
    case SearchMode::SYMMETRY: return std::max(r_i, r_j);
  }
  return 0;
}

// A smooth kernel of the pair at squared separation r2 within radius h: (1 - r2/h^2)^2.
double smoothWeight(double r2, double h) {
  const double x = 1.0 - r2 / (h * h);
  return x * x;
}

// Records, for each i, the ids of list entries strictly within the mode's radius, and sums their
// smoothWeight.
template <SearchMode M>
struct RecordingKernel {
  void operator()(const Searcher* epi, int n_i, const Searcher* epj, int n_j, Neighbours* out) const {
    for (int i = 0; i < n_i; ++i)
      for (int j = 0; j < n_j; ++j) {
        const double r = exactRadius(M, epi[i].r_search, epj[j].r_search);
        const double r2 = norm2(epj[j].pos - epi[i].pos);
        if (r2 < r * r) out[i].ids.push_back(epj[j].id), out[i].weight += smoothWeight(r2, r);
      }
  }
};

// Minimum-image difference along periodic axes.
Vec3d separation(const Vec3d& a, const Vec3d& b, BoundaryCondition bc, const Vec3d& period) {
  Vec3d d = a - b;
  for (int ax = 0; ax < 3; ++ax) {
    if (!isPeriodic(bc, ax)) continue;
    const auto k = static_cast<std::size_t>(ax);
    d[k] -= period[k] * std::round(d[k] / period[k]);
  }
  return d;
}

std::vector<std::int64_t> bruteForce(const Searcher& i, const std::vector<Searcher>& all, SearchMode mode,
                                     BoundaryCondition bc, const Vec3d& period) {
  std::vector<std::int64_t> ids;
  for (const Searcher& j : all) {
    const double r = exactRadius(mode, i.r_search, j.r_search);
    if (norm2(separation(j.pos, i.pos, bc, period)) < r * r) ids.push_back(j.id);
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

void fill(Psys& psys, std::int64_t n, bool clustered, double r_min, double r_max, std::uint64_t seed) {
  const int rank = psys.comm().rank(), ranks = psys.comm().size();
  psys.resize(0);
  for (std::int64_t id = n * rank / ranks; id < n * (rank + 1) / ranks; ++id) {
    std::mt19937_64 rng(seed * 7919 + static_cast<std::uint64_t>(id));
    std::uniform_real_distribution<double> u(0.0, 1.0);
    Searcher s;
    s.id = id;
    if (clustered && id % 3 != 0) {
      // Two tight clumps plus a uniform background.
      const Vec3d centre = id % 2 ? Vec3d{0.3, 0.3, 0.7} : Vec3d{0.8, 0.6, 0.2};
      s.pos = centre + 0.03 * Vec3d{u(rng) - 0.5, u(rng) - 0.5, u(rng) - 0.5};
    } else {
      s.pos = {u(rng), u(rng), u(rng)};
    }
    s.r_search = r_min * std::pow(r_max / r_min, u(rng));  // log-uniform over [r_min, r_max]
    psys.add(s);
  }
}

// The ids getNeighborListOneParticle gives for p, sorted.
template <class Tree>
std::vector<std::int64_t> oneParticleNeighbourIds(const Tree& tree, const Searcher& p) {
  Searcher* list = nullptr;
  const int n = tree.getNeighborListOneParticle(p, list);
  std::vector<std::int64_t> ids;
  for (int k = 0; k < n; ++k) ids.push_back(list[k].id);
  std::sort(ids.begin(), ids.end());
  return ids;
}

template <SearchMode M>
void expectExactNeighbourSets(Psys& psys, DomainInfo& dinfo, const char* what) {
  using Tree = TreeForForceShortWith<Neighbours, Searcher, Searcher, M>;
  Tree tree(psys.size(), 0.0, 8, 32);
  tree.calcForceAll(RecordingKernel<M>{}, psys, dinfo);
  const auto all = psys.comm().allgatherv(psys.particles());
  const Vec3d period = dinfo.getPosRootDomain().size();
  std::size_t mismatches = 0;
  for (std::size_t i = 0; i < psys.size(); ++i) {
    std::vector<std::int64_t> got = tree.getForce(i).ids;
    std::sort(got.begin(), got.end());
    const auto expected = bruteForce(psys[i], all, M, dinfo.getBoundaryCondition(), period);
    if (got != expected && mismatches++ < 3)
      ADD_FAILURE() << what << ": particle " << psys[i].id << " has " << got.size() << " neighbours, brute force "
                    << expected.size();
    // The one-particle query gives the same set.
    const std::vector<std::int64_t> single = oneParticleNeighbourIds(tree, psys[i]);
    if (single != expected && mismatches++ < 3)
      ADD_FAILURE() << what << ": getNeighborListOneParticle for " << psys[i].id << " gives " << single.size()
                    << ", brute force " << expected.size();
  }
  EXPECT_EQ(mismatches, 0u) << what;
}

struct Case {
  BoundaryCondition bc;
  bool clustered;
};

class ShortRangeNeighbours : public ::testing::TestWithParam<Case> {};

}  // namespace

TEST_P(ShortRangeNeighbours, AllModesMatchBruteForceExactly) {
  const Case c = GetParam();
  Psys psys;
  DomainInfo dinfo;
  if (c.bc != BoundaryCondition::OPEN) {
    dinfo.setBoundaryCondition(c.bc);
    dinfo.setPosRootDomain({0, 0, 0}, {1, 1, 1});
  }
  fill(psys, 1500, c.clustered, 0.01, 0.3, 17);  // radii span 30x
  psys.adjustPositionIntoRootDomain(dinfo);
  dinfo.decomposeDomainAll(psys);
  psys.exchangeParticle(dinfo);
  const std::string what = fmt::format("{} {}", toString(c.bc), c.clustered ? "clustered" : "uniform");
  expectExactNeighbourSets<SearchMode::GATHER>(psys, dinfo, (what + " gather").c_str());
  expectExactNeighbourSets<SearchMode::SCATTER>(psys, dinfo, (what + " scatter").c_str());
  expectExactNeighbourSets<SearchMode::SYMMETRY>(psys, dinfo, (what + " symmetry").c_str());
}

INSTANTIATE_TEST_SUITE_P(
    BoundariesAndDistributions, ShortRangeNeighbours,
    ::testing::Values(Case{BoundaryCondition::OPEN, false}, Case{BoundaryCondition::OPEN, true},
                      Case{BoundaryCondition::PERIODIC_X, false}, Case{BoundaryCondition::PERIODIC_Y, true},
                      Case{BoundaryCondition::PERIODIC_Z, false}, Case{BoundaryCondition::PERIODIC_XY, true},
                      Case{BoundaryCondition::PERIODIC_XZ, false}, Case{BoundaryCondition::PERIODIC_YZ, true},
                      Case{BoundaryCondition::PERIODIC_XYZ, false}, Case{BoundaryCondition::PERIODIC_XYZ, true}),
    [](const auto& info) {
      return std::string(toString(info.param.bc)) + (info.param.clustered ? "_clustered" : "_uniform");
    });

// Radii of 0.45 in a unit periodic box split over up to 4 ranks reach across several domains:
// the particles still come, straight from the ranks that hold them.
TEST(ShortRange, RadiusReachingAcrossSeveralDomainsIsHandled) {
  Psys psys;
  DomainInfo dinfo;
  dinfo.setBoundaryCondition(BoundaryCondition::PERIODIC_XYZ);
  dinfo.setPosRootDomain({0, 0, 0}, {1, 1, 1});
  dinfo.setNumberOfDomainMultiDimension(psys.comm().size(), 1, 1);  // thin slabs along x
  fill(psys, 600, false, 0.4, 0.45, 5);
  dinfo.decomposeDomainAll(psys);
  psys.exchangeParticle(dinfo);
  expectExactNeighbourSets<SearchMode::SYMMETRY>(psys, dinfo, "wide radii");
}

namespace {

// Image shifts of the unit box: every n with |n| <= shells on each periodic axis, zero first.
std::vector<Vec3d> unitImageShifts(BoundaryCondition bc, int shells) {
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

// Radii beyond half the period in the unit box, every image counted (as FDPS does): each
// particle's list, the one-particle query included, holds every image within the mode's radius
// once (the id repeated per image, the particle's own images too), as brute force over
// `shells` periods each way finds them; the smooth-kernel sums agree to round-off. The
// separation is formed as the tree forms it (the image's position, then the difference), so
// the id multisets must agree exactly.
template <SearchMode M>
void expectEveryImage(Psys& psys, DomainInfo& dinfo, int shells, const std::string& what) {
  using Tree = TreeForForceShortWith<Neighbours, Searcher, Searcher, M>;
  Tree tree(psys.size(), 0.0, 8, 32);
  tree.calcForceAll(RecordingKernel<M>{}, psys, dinfo);
  const auto all = psys.comm().allgatherv(psys.particles());
  const std::vector<Vec3d> shifts = unitImageShifts(dinfo.getBoundaryCondition(), shells);
  std::size_t mismatches = 0;
  std::int64_t images = 0, repeated = 0;
  double worst_weight = 0.0;
  for (std::size_t i = 0; i < psys.size(); ++i) {
    std::vector<std::int64_t> expected;
    double weight = 0.0;
    for (const Searcher& j : all)
      for (const Vec3d& s : shifts) {
        const double r = exactRadius(M, psys[i].r_search, j.r_search);
        const double r2 = norm2((j.pos + s) - psys[i].pos);
        if (r2 < r * r) expected.push_back(j.id), weight += smoothWeight(r2, r);
      }
    std::sort(expected.begin(), expected.end());
    images += static_cast<std::int64_t>(expected.size());
    repeated += std::adjacent_find(expected.begin(), expected.end()) != expected.end();
    std::vector<std::int64_t> got = tree.getForce(i).ids;
    std::sort(got.begin(), got.end());
    if (got != expected && mismatches++ < 3)
      ADD_FAILURE() << what << ": particle " << psys[i].id << " meets " << got.size() << " images, brute force "
                    << expected.size();
    worst_weight = std::max(worst_weight, std::abs(tree.getForce(i).weight - weight) / weight);
    const std::vector<std::int64_t> single = oneParticleNeighbourIds(tree, psys[i]);
    if (single != expected && mismatches++ < 3)
      ADD_FAILURE() << what << ": getNeighborListOneParticle for " << psys[i].id << " gives " << single.size()
                    << ", brute force " << expected.size();
  }
  const Comm& comm = psys.comm();
  grove::log("{}: {} images met, {} particles meet one particle twice or more; worst relative weight error {:.2e}",
             what, comm.allreduceSum(images), comm.allreduceSum(repeated), comm.allreduceMax(worst_weight));
  EXPECT_EQ(comm.allreduceSum(static_cast<std::int64_t>(mismatches)), 0) << what;
  EXPECT_LT(comm.allreduceMax(worst_weight), 1e-12) << what;
  EXPECT_GT(comm.allreduceSum(repeated), 0) << what << ": no pair meets through two images; the case tests nothing";
}

struct WideCase {
  BoundaryCondition bc;
  double radius;  // in periods (the box is the unit cube); radii are drawn within 5% of it
};

class ShortRangeWide : public ::testing::TestWithParam<WideCase> {};

std::string nameOf(const WideCase& c) {
  return fmt::format("{}_r_{}", toString(c.bc), static_cast<int>(std::lround(100 * c.radius)));
}

}  // namespace

// Search radii of about 0.7 and 1.3 periods (beyond half the period, and beyond the period):
// Gather, Scatter and Symmetry lists hold every image within reach, fully periodic and along
// x only.
TEST_P(ShortRangeWide, RadiiBeyondHalfThePeriodMeetEveryImage) {
  const WideCase c = GetParam();
  Psys psys;
  DomainInfo dinfo;
  dinfo.setBoundaryCondition(c.bc);
  dinfo.setPosRootDomain({0, 0, 0}, {1, 1, 1});
  fill(psys, 160, false, 0.95 * c.radius, 1.05 * c.radius, 41);
  dinfo.decomposeDomainAll(psys);
  psys.exchangeParticle(dinfo);
  const int shells = static_cast<int>(std::ceil(1.05 * c.radius)) + 1;  // one more than can reach
  expectEveryImage<SearchMode::GATHER>(psys, dinfo, shells, nameOf(c) + " gather");
  expectEveryImage<SearchMode::SCATTER>(psys, dinfo, shells, nameOf(c) + " scatter");
  expectEveryImage<SearchMode::SYMMETRY>(psys, dinfo, shells, nameOf(c) + " symmetry");
}

INSTANTIATE_TEST_SUITE_P(RadiiBeyondHalfThePeriod, ShortRangeWide,
                         ::testing::Values(WideCase{BoundaryCondition::PERIODIC_XYZ, 0.7},
                                           WideCase{BoundaryCondition::PERIODIC_XYZ, 1.3},
                                           WideCase{BoundaryCondition::PERIODIC_X, 0.7},
                                           WideCase{BoundaryCondition::PERIODIC_X, 1.3}),
                         [](const auto& info) { return nameOf(info.param); });

// A periodic axis needs its period: without a root domain the tree stops with an error naming
// setPosRootDomain, on every rank.
TEST(ShortRange, PeriodicBoundaryWithoutARootDomainIsAClearErrorOnEveryRank) {
  Psys psys;
  DomainInfo dinfo;
  dinfo.setBoundaryCondition(BoundaryCondition::PERIODIC_X);
  fill(psys, 200, false, 0.01, 0.02, 3);
  using Tree = TreeForForceShort<Neighbours, Searcher, Searcher>::Gather;
  Tree tree(psys.size(), 0.0, 8, 32);
  try {
    tree.calcForceAll(RecordingKernel<SearchMode::GATHER>{}, psys, dinfo);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("setPosRootDomain"), std::string::npos) << e.what();
  }
}

TEST(ShortRange, KNearestMatchesBruteForce) {
  Psys psys;
  DomainInfo dinfo;
  // Radii 0.15-0.2 exceed the distance to the 6th neighbour (about 0.09 here), so the tree of
  // every rank holds each particle's 6 nearest, wherever they live.
  fill(psys, 2000, true, 0.15, 0.2, 11);
  dinfo.decomposeDomainAll(psys);
  psys.exchangeParticle(dinfo);
  using Tree = TreeForForceShort<Neighbours, Searcher, Searcher>::Gather;
  Tree tree(psys.size(), 0.0, 8, 32);
  tree.calcForceAll(RecordingKernel<SearchMode::GATHER>{}, psys, dinfo);
  const auto all = psys.comm().allgatherv(psys.particles());
  for (std::size_t i = 0; i < std::min<std::size_t>(psys.size(), 50); ++i) {
    const int k = 6;
    Searcher* list = nullptr;
    const int n = tree.getNeighborListKNearest(psys[i].pos, k, list);
    ASSERT_EQ(n, k);
    std::vector<double> d_all;
    for (const auto& s : all) d_all.push_back(norm2(s.pos - psys[i].pos));
    std::sort(d_all.begin(), d_all.end());
    for (int m = 0; m < k; ++m) {
      ASSERT_DOUBLE_EQ(norm2(list[m].pos - psys[i].pos), d_all[static_cast<std::size_t>(m)]) << "rank in list " << m;
    }
  }
}

namespace {

// A stand-in accelerator for short-range multiwalk: computes each walk with the recording kernel.
struct ShortHostDevice {
  std::map<int, std::vector<std::vector<Neighbours>>> results;
  void run(int tag, int n_walk, const Searcher** epi, const int* n_epi,
           const std::function<void(int, Neighbours*)>& kernel) {
    auto& r = results[tag];
    r.assign(static_cast<std::size_t>(n_walk), {});
    for (int w = 0; w < n_walk; ++w) {
      r[static_cast<std::size_t>(w)].assign(static_cast<std::size_t>(n_epi[w]), Neighbours{});
      kernel(w, r[static_cast<std::size_t>(w)].data());
    }
    (void)epi;
  }
  int retrieve(int tag, int n_walk, const int* n_epi, Neighbours** out) {
    auto& r = results.at(tag);
    for (int w = 0; w < n_walk; ++w)
      for (int i = 0; i < n_epi[w]; ++i) out[w][i] = r[static_cast<std::size_t>(w)][static_cast<std::size_t>(i)];
    results.erase(tag);
    return 0;
  }
};

std::vector<std::vector<std::int64_t>> sortedSets(std::size_t n, const std::function<const Neighbours&(std::size_t)>& f) {
  std::vector<std::vector<std::int64_t>> out(n);
  for (std::size_t i = 0; i < n; ++i) {
    out[i] = f(i).ids;
    std::sort(out[i].begin(), out[i].end());
  }
  return out;
}

}  // namespace

TEST(ShortRange, ReuseAndMultiwalkGiveTheSameNeighbourSets) {
  Psys psys;
  DomainInfo dinfo;
  dinfo.setBoundaryCondition(BoundaryCondition::PERIODIC_XYZ);
  dinfo.setPosRootDomain({0, 0, 0}, {1, 1, 1});
  fill(psys, 1500, true, 0.02, 0.2, 23);
  dinfo.decomposeDomainAll(psys);
  psys.exchangeParticle(dinfo);
  constexpr SearchMode M = SearchMode::SYMMETRY;
  using Tree = TreeForForceShortWith<Neighbours, Searcher, Searcher, M>;
  Tree tree(psys.size(), 0.0, 8, 32);
  auto setsOf = [&](const Tree& t) { return sortedSets(psys.size(), [&](std::size_t i) -> const Neighbours& { return t.getForce(i); }); };
  tree.calcForceAll(RecordingKernel<M>{}, psys, dinfo, true, MAKE_LIST);
  const auto made = setsOf(tree);
  tree.calcForceAll(RecordingKernel<M>{}, psys, dinfo, true, MAKE_LIST_FOR_REUSE);
  EXPECT_EQ(setsOf(tree), made);
  tree.calcForceAll(RecordingKernel<M>{}, psys, dinfo, true, REUSE_LIST);
  EXPECT_EQ(setsOf(tree), made);

  ShortHostDevice device;
  auto plain = [&](int tag, int n_walk, const Searcher** epi, const int* n_epi, const Searcher** epj, const int* n_epj) {
    device.run(tag, n_walk, epi, n_epi, [&](int w, Neighbours* out) { RecordingKernel<M>{}(epi[w], n_epi[w], epj[w], n_epj[w], out); });
    return 0;
  };
  const Searcher* sent = nullptr;  // FDPS-style: the send call hands over the array and returns
  auto index = [&](int tag, int n_walk, const Searcher** epi, const int* n_epi, const std::int32_t** id, const int* n_epj,
                   const Searcher* epj, int, bool send_flag) {
    if (send_flag) {
      EXPECT_EQ(n_walk, 0);
      sent = epj;
      return 0;
    }
    device.run(tag, n_walk, epi, n_epi, [&](int w, Neighbours* out) {
      std::vector<Searcher> list;
      for (int k = 0; k < n_epj[w]; ++k) list.push_back(sent[id[w][k]]);
      RecordingKernel<M>{}(epi[w], n_epi[w], list.data(), n_epj[w], out);
    });
    return 0;
  };
  auto retrieve = [&](int tag, int n_walk, const int* n_epi, Neighbours** out) { return device.retrieve(tag, n_walk, n_epi, out); };
  tree.calcForceAllMultiWalk(plain, retrieve, 2, psys, dinfo, 5);
  EXPECT_EQ(setsOf(tree), made);
  tree.calcForceAllMultiWalkIndex(index, retrieve, 3, psys, dinfo, 4, true, MAKE_LIST_FOR_REUSE);
  EXPECT_EQ(setsOf(tree), made);
  tree.calcForceAllMultiWalkIndex(index, retrieve, 3, psys, dinfo, 4, true, REUSE_LIST);
  EXPECT_EQ(setsOf(tree), made);
  psys.exchangeParticle(dinfo);
  EXPECT_THROW(tree.calcForceAll(RecordingKernel<M>{}, psys, dinfo, true, REUSE_LIST), Error);
}

namespace {
// A searcher that keeps its neighbour count: the write-back target of the TREE_ORDER test.
struct CountedSearcher : Searcher {
  std::int64_t neighbours = -1;
  void copyFromForce(const Neighbours& f) { neighbours = static_cast<std::int64_t>(f.ids.size()); }
};
}  // namespace

// ParticleOrder::TREE_ORDER on a short-range tree: the particles move into key order, each keeps
// its brute-force neighbour count, and REUSE_LIST (here through the index multiwalk) leaves the
// order as it is.
TEST(ShortRange, TreeOrderMovesParticlesAndKeepsTheirNeighbourCounts) {
  Psys filled;
  DomainInfo dinfo;
  dinfo.setBoundaryCondition(BoundaryCondition::PERIODIC_XYZ);
  dinfo.setPosRootDomain({0, 0, 0}, {1, 1, 1});
  fill(filled, 1500, true, 0.02, 0.2, 29);
  dinfo.decomposeDomainAll(filled);
  filled.exchangeParticle(dinfo);
  ParticleSystem<CountedSearcher> psys;
  for (const Searcher& s : filled) psys.add(CountedSearcher{s, -1});
  const std::vector<Searcher> all = psys.comm().allgatherv(filled.particles());
  const Vec3d period = dinfo.getPosRootDomain().size();
  auto expectBruteForceCounts = [&](const char* what) {
    std::size_t mismatches = 0;
    for (const CountedSearcher& p : psys) {
      const auto expected = bruteForce(p, all, SearchMode::GATHER, dinfo.getBoundaryCondition(), period);
      if (p.neighbours != static_cast<std::int64_t>(expected.size()) && mismatches++ < 3)
        ADD_FAILURE() << what << ": particle " << p.id << " counted " << p.neighbours << ", brute force "
                      << expected.size();
    }
    EXPECT_EQ(mismatches, 0u) << what;
  };
  auto ids = [&] {
    std::vector<std::int64_t> out;
    for (const CountedSearcher& p : psys) out.push_back(p.id);
    return out;
  };
  const auto filled_order = ids();

  using Tree = TreeForForceShort<Neighbours, Searcher, Searcher>::Gather;
  Tree tree(psys.size(), 0.0, 8, 32);
  tree.setParticleOrder(ParticleOrder::TREE_ORDER);
  tree.calcForceAllAndWriteBack(RecordingKernel<SearchMode::GATHER>{}, psys, dinfo, true, MAKE_LIST_FOR_REUSE);
  expectBruteForceCounts("MAKE_LIST_FOR_REUSE");
  const auto key_order = ids();
  EXPECT_NE(key_order, filled_order) << "the particles were not moved into key order";

  ShortHostDevice device;
  auto index = [&](int tag, int n_walk, const Searcher** epi, const int* n_epi, const std::int32_t** id,
                   const int* n_epj, const Searcher* epj, int, bool) {
    device.run(tag, n_walk, epi, n_epi, [&](int w, Neighbours* out) {
      std::vector<Searcher> list;
      for (int k = 0; k < n_epj[w]; ++k) list.push_back(epj[id[w][k]]);
      RecordingKernel<SearchMode::GATHER>{}(epi[w], n_epi[w], list.data(), n_epj[w], out);
    });
    return 0;
  };
  auto retrieve = [&](int tag, int n_walk, const int* n_epi, Neighbours** out) {
    return device.retrieve(tag, n_walk, n_epi, out);
  };
  for (auto& p : psys) p.neighbours = -1;
  tree.calcForceAllAndWriteBackMultiWalkIndex(index, retrieve, 2, psys, dinfo, 6, true, REUSE_LIST);
  expectBruteForceCounts("REUSE_LIST multiwalk");
  EXPECT_EQ(ids(), key_order);
}
