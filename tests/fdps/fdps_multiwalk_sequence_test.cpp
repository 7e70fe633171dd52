// Multiwalk kernels written for FDPS 7.1 run unchanged: grove calls dispatch and retrieve in
// FDPS's sequence, and an index-form dispatch written as FDPS's samples and the Accelerated FDPS
// paper write it (on send_flag take the whole EPJ/SPJ arrays and return; compute each later
// call's walks from them) gets every walk. On every rank count.
#include <gtest/gtest.h>

#include <map>
#include <sstream>
#include <tuple>

#include "support/gravity.hpp"
#include "grove/force/tree_for_force_short.hpp"

using namespace grove;
using namespace grove::testing_support;

namespace {

using Psys = ParticleSystem<Charged>;
using Quadrupole = TreeForForceLong<AccPot, ChargedEP, ChargedEP>::Quadrupole;

// ---- FDPS-written kernels (host "device") --------------------------------------------------------

// Results per tag, handed back by retrieve; counts the interactions the kernel really computed.
struct FdpsStyleResults {
  std::map<int, std::vector<std::vector<AccPot>>> by_tag;
  std::int64_t ep_ep = 0, ep_sp = 0;

  std::vector<std::vector<AccPot>>& start(int tag, int n_walk, const int* n_epi) {
    auto& r = by_tag[tag];
    r.assign(static_cast<std::size_t>(n_walk), {});
    for (int w = 0; w < n_walk; ++w) r[static_cast<std::size_t>(w)].assign(static_cast<std::size_t>(n_epi[w]), {});
    return r;
  }
  int retrieve(int tag, int n_walk, const int* n_epi, AccPot** force) {
    const auto it = by_tag.find(tag);
    if (it == by_tag.end()) {
      ADD_FAILURE() << "retrieve(tag " << tag << ") of a batch the kernel never computed";
      return 1;
    }
    EXPECT_EQ(static_cast<int>(it->second.size()), n_walk);
    for (int w = 0; w < n_walk && w < static_cast<int>(it->second.size()); ++w)
      for (int i = 0; i < n_epi[w]; ++i) {
        force[w][i].acc += it->second[static_cast<std::size_t>(w)][static_cast<std::size_t>(i)].acc;
        force[w][i].pot += it->second[static_cast<std::size_t>(w)][static_cast<std::size_t>(i)].pot;
      }
    by_tag.erase(it);
    return 0;
  }
};

// The index form as FDPS users write it: the whole arrays arrive in the send call, which returns
// at once; the walks of every other call index the arrays taken then.
struct FdpsIndexKernel {
  FdpsStyleResults* results;
  struct Arrays {
    const ChargedEP* epj = nullptr;
    const SPJQuadrupole* spj = nullptr;
    int n_epj = 0, n_spj = 0;
  }* sent;

  int operator()(int tag, int n_walk, const ChargedEP** epi, const int* n_epi, const int** id_epj, const int* n_epj,
                 const int** id_spj, const int* n_spj, const ChargedEP* epj, int n_epj_total,
                 const SPJQuadrupole* spj, int n_spj_total, bool send_flag) const {
    if (send_flag) {
      *sent = {epj, spj, n_epj_total, n_spj_total};
      return 0;
    }
    auto& out = results->start(tag, n_walk, n_epi);
    for (int w = 0; w < n_walk; ++w) {
      std::vector<ChargedEP> ep;
      std::vector<SPJQuadrupole> sp;
      for (int k = 0; k < n_epj[w]; ++k) {
        EXPECT_LT(id_epj[w][k], sent->n_epj);
        ep.push_back(sent->epj[id_epj[w][k]]);
      }
      for (int k = 0; k < n_spj[w]; ++k) {
        EXPECT_LT(id_spj[w][k], sent->n_spj);
        sp.push_back(sent->spj[id_spj[w][k]]);
      }
      DirectKernel{}(epi[w], n_epi[w], ep.data(), n_epj[w], out[static_cast<std::size_t>(w)].data());
      MultipoleKernel{}(epi[w], n_epi[w], sp.data(), n_spj[w], out[static_cast<std::size_t>(w)].data());
      results->ep_ep += static_cast<std::int64_t>(n_epi[w]) * n_epj[w];
      results->ep_sp += static_cast<std::int64_t>(n_epi[w]) * n_spj[w];
    }
    return 0;
  }
};

struct FdpsPlainKernel {
  FdpsStyleResults* results;
  int operator()(int tag, int n_walk, const ChargedEP** epi, const int* n_epi, const ChargedEP** epj,
                 const int* n_epj, const SPJQuadrupole** spj, const int* n_spj) const {
    auto& out = results->start(tag, n_walk, n_epi);
    for (int w = 0; w < n_walk; ++w) {
      DirectKernel{}(epi[w], n_epi[w], epj[w], n_epj[w], out[static_cast<std::size_t>(w)].data());
      MultipoleKernel{}(epi[w], n_epi[w], spj[w], n_spj[w], out[static_cast<std::size_t>(w)].data());
      results->ep_ep += static_cast<std::int64_t>(n_epi[w]) * n_epj[w];
      results->ep_sp += static_cast<std::int64_t>(n_epi[w]) * n_spj[w];
    }
    return 0;
  }
};

struct FdpsRetrieve {
  FdpsStyleResults* results;
  int operator()(int tag, int n_walk, const int* n_epi, AccPot** force) const {
    return results->retrieve(tag, n_walk, n_epi, force);
  }
};

void prepare(Psys& psys, DomainInfo& dinfo, std::int64_t n) {
  makeSystem(psys, n, true);
  dinfo.decomposeDomainAll(psys);
  psys.exchangeParticle(dinfo);
}

// Forces left in the particles by an earlier call must not survive into the next one.
void spoilResults(Psys& psys) {
  for (auto& c : psys) c.result.acc = {1e30, -1e30, 1e30}, c.result.pot = 1e30;
}

std::vector<AccPot> results(const Psys& psys) {
  std::vector<AccPot> out;
  for (const auto& c : psys) out.push_back(c.result);
  return out;
}

void expectBitwiseEqual(const std::vector<AccPot>& got, const std::vector<AccPot>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (std::size_t i = 0; i < want.size(); ++i) {
    ASSERT_EQ(got[i].acc, want[i].acc) << what << ", particle " << i;
    ASSERT_EQ(got[i].pot, want[i].pot) << what << ", particle " << i;
  }
}

}  // namespace

// ---- an FDPS-written index kernel gets every walk -----------------------------------------------

class FdpsWrittenIndexKernel : public ::testing::TestWithParam<std::tuple<int, int, int>> {};  // n_group, n_walk, tag_max

TEST_P(FdpsWrittenIndexKernel, GetsThePlainFormsInteractionsAndForcesInEveryListMode) {
  const auto [n_group, n_walk_limit, tag_max] = GetParam();
  Psys psys;
  DomainInfo dinfo;
  prepare(psys, dinfo, 3000);
  Quadrupole tree(psys.size(), 0.5, 8, n_group);

  FdpsStyleResults plain_results;
  spoilResults(psys);
  tree.calcForceAllAndWriteBackMultiWalk(FdpsPlainKernel{&plain_results}, FdpsRetrieve{&plain_results}, tag_max, psys,
                                         dinfo, n_walk_limit);
  const auto plain = results(psys);
  EXPECT_EQ(plain_results.ep_ep, tree.getNumberOfInteractionEPEPLocal());
  EXPECT_EQ(plain_results.ep_sp, tree.getNumberOfInteractionEPSPLocal());
  // Every rank has particles (3000 over at most 4 ranks): something was computed.
  EXPECT_GT(plain_results.ep_ep, 0);
  EXPECT_TRUE(plain_results.by_tag.empty());

  FdpsIndexKernel::Arrays sent;
  for (InteractionListMode mode : {MAKE_LIST, MAKE_LIST_FOR_REUSE, REUSE_LIST}) {
    FdpsStyleResults index_results;
    spoilResults(psys);
    // The tree's counters add up over calls, as FDPS's do, until cleared.
    tree.clearNumberOfInteraction();
    tree.calcForceAllAndWriteBackMultiWalkIndex(FdpsIndexKernel{&index_results, &sent}, FdpsRetrieve{&index_results},
                                                tag_max, psys, dinfo, n_walk_limit, true, mode);
    const std::string what = fmt::format("list mode {}", static_cast<int>(mode));
    EXPECT_EQ(index_results.ep_ep, plain_results.ep_ep) << what;
    EXPECT_EQ(index_results.ep_sp, plain_results.ep_sp) << what;
    EXPECT_EQ(tree.getNumberOfInteractionEPEPLocal(), index_results.ep_ep) << what;
    EXPECT_TRUE(index_results.by_tag.empty()) << what << ": a computed batch was never retrieved";
    expectBitwiseEqual(results(psys), plain, what);
  }
  // The same through the global counts (of the last call, the counters having been cleared before it).
  EXPECT_EQ(psys.comm().allreduceSum(plain_results.ep_ep), tree.getNumberOfInteractionEPEPGlobal());
}

INSTANTIATE_TEST_SUITE_P(GroupAndWalkLimits, FdpsWrittenIndexKernel,
                         ::testing::Values(std::tuple{64, 200, 1}, std::tuple{64, 7, 1}, std::tuple{16, 1, 1},
                                           std::tuple{256, 3, 1}, std::tuple{16, 13, 3}, std::tuple{64, 2, 4}));

// ---- the call sequence is FDPS's ------------------------------------------------------------------

namespace {

// One call as a kernel sees it.
struct Call {
  char what;  // 'D' dispatch, 'R' retrieve
  int tag, n_walk;
  bool send_flag = false, walk_arrays_null = false;
  bool operator==(const Call&) const = default;
};

void PrintTo(const Call& c, std::ostream* os) {
  *os << c.what << "(tag " << c.tag << ", n_walk " << c.n_walk;
  if (c.what == 'D') *os << (c.send_flag ? ", send" : "") << (c.walk_arrays_null ? ", null walk arrays" : "");
  *os << ")";
}

std::string describe(const std::vector<Call>& calls) {
  std::ostringstream s;
  for (const Call& c : calls) {
    PrintTo(c, &s);
    s << " ";
  }
  return s.str();
}

// FDPS 7.1's sequence for n_ipg groups (tree_for_force_impl_force.hpp, calcForceMultiWalk{Index,Ptcl}
// and calcForceNoWalkForMultiWalk{Index,Ptcl}): the index form first sends the whole arrays with
// n_walk 0 and null walk arrays, also when there are no groups; then ceil(n_ipg / n_walk_limit)
// batches of n_ipg / n_loop (the first n_ipg % n_loop one more), each dispatched after the
// previous one's retrieve; then the last retrieve. Always tag 0.
std::vector<Call> fdpsSequence(std::int64_t n_ipg, int n_walk_limit, bool index_form) {
  std::vector<Call> calls;
  if (index_form) calls.push_back({'D', 0, 0, true, true});
  if (n_ipg <= 0) return calls;
  const std::int64_t n_loop = n_ipg / n_walk_limit + (n_ipg % n_walk_limit == 0 ? 0 : 1);
  int previous = 0;
  for (std::int64_t wg = 0; wg < n_loop; ++wg) {
    const int n_walk = static_cast<int>(n_ipg / n_loop + ((n_ipg % n_loop) > wg ? 1 : 0));
    if (wg > 0) calls.push_back({'R', 0, previous});
    calls.push_back({'D', 0, n_walk, false, false});
    previous = n_walk;
  }
  calls.push_back({'R', 0, previous});
  return calls;
}

struct Recorder {
  std::vector<Call> calls;
  void dispatch(int tag, int n_walk, const void* epi, const void* n_epi, bool send_flag) {
    calls.push_back({'D', tag, n_walk, send_flag, epi == nullptr && n_epi == nullptr});
  }
  void retrieve(int tag, int n_walk) { calls.push_back({'R', tag, n_walk}); }
};

// Short range: searchers that count their neighbours within r_search.
struct Neighbours {
  int count = 0;
  void clear() { count = 0; }
};
struct Searcher {
  Vec3d pos;
  double r_search = 0.05;
  Neighbours result;
  Vec3d getPos() const { return pos; }
  void setPos(const Vec3d& p) { pos = p; }
  double getRSearch() const { return r_search; }
  void copyFromFP(const Searcher& s) { pos = s.pos, r_search = s.r_search; }
  void copyFromForce(const Neighbours& n) { result = n; }
};

}  // namespace

class FdpsSequence : public ::testing::TestWithParam<int> {};  // n_walk_limit

TEST_P(FdpsSequence, LongRangeCallsAreFdpsCallsInEveryFormAndListMode) {
  const int n_walk_limit = GetParam();
  Psys psys;
  DomainInfo dinfo;
  prepare(psys, dinfo, 2000);
  Quadrupole tree(psys.size(), 0.5, 8, 32);
  Recorder rec;
  FdpsStyleResults res;
  FdpsIndexKernel::Arrays sent;
  auto index = [&](int tag, int n_walk, const ChargedEP** epi, const int* n_epi, const int** id_epj, const int* n_epj,
                   const int** id_spj, const int* n_spj, const ChargedEP* epj, int n_epj_total,
                   const SPJQuadrupole* spj, int n_spj_total, bool send_flag) {
    rec.dispatch(tag, n_walk, epi, n_epi, send_flag);
    return FdpsIndexKernel{&res, &sent}(tag, n_walk, epi, n_epi, id_epj, n_epj, id_spj, n_spj, epj, n_epj_total, spj,
                                        n_spj_total, send_flag);
  };
  auto plain = [&](int tag, int n_walk, const ChargedEP** epi, const int* n_epi, const ChargedEP** epj,
                   const int* n_epj, const SPJQuadrupole** spj, const int* n_spj) {
    rec.dispatch(tag, n_walk, epi, n_epi, false);
    return FdpsPlainKernel{&res}(tag, n_walk, epi, n_epi, epj, n_epj, spj, n_spj);
  };
  auto retrieve = [&](int tag, int n_walk, const int* n_epi, AccPot** force) {
    rec.retrieve(tag, n_walk);
    return res.retrieve(tag, n_walk, n_epi, force);
  };
  auto check = [&](bool index_form, const char* what) {
    const auto want = fdpsSequence(tree.profile().n_groups, n_walk_limit, index_form);
    EXPECT_EQ(rec.calls, want) << what << "\n grove: " << describe(rec.calls) << "\n FDPS:  " << describe(want);
    rec.calls.clear();
  };
  tree.calcForceAllAndWriteBackMultiWalk(plain, retrieve, 1, psys, dinfo, n_walk_limit);
  check(false, "calcForceAllAndWriteBackMultiWalk");
  tree.calcForceAllMultiWalk(plain, retrieve, 1, psys, dinfo, n_walk_limit, true, MAKE_LIST_FOR_REUSE);
  check(false, "calcForceAllMultiWalk, MAKE_LIST_FOR_REUSE");
  tree.calcForceAllMultiWalk(plain, retrieve, 1, psys, dinfo, n_walk_limit, true, REUSE_LIST);
  check(false, "calcForceAllMultiWalk, REUSE_LIST");
  for (InteractionListMode mode : {MAKE_LIST, MAKE_LIST_FOR_REUSE, REUSE_LIST}) {
    tree.calcForceAllAndWriteBackMultiWalkIndex(index, retrieve, 1, psys, dinfo, n_walk_limit, true, mode);
    check(true, "calcForceAllAndWriteBackMultiWalkIndex");
  }
  tree.calcForceAllMultiWalkIndex(index, retrieve, 1, psys, dinfo, n_walk_limit, true, MAKE_LIST_FOR_REUSE);
  check(true, "calcForceAllMultiWalkIndex, MAKE_LIST_FOR_REUSE");
  tree.calcForceAllMultiWalkIndex(index, retrieve, 1, psys, dinfo, n_walk_limit, true, REUSE_LIST);
  check(true, "calcForceAllMultiWalkIndex, REUSE_LIST");
}

TEST_P(FdpsSequence, ShortRangeCallsAreFdpsCallsInEveryFormAndListMode) {
  const int n_walk_limit = GetParam();
  ParticleSystem<Searcher> psys;
  DomainInfo dinfo;
  std::mt19937_64 rng(7 + static_cast<std::uint64_t>(psys.comm().rank()));
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (int i = 0; i < 600; ++i) {
    Searcher s;
    s.pos = {u(rng), u(rng), u(rng)};
    psys.add(s);
  }
  dinfo.decomposeDomainAll(psys);
  psys.exchangeParticle(dinfo);
  using Gather = TreeForForceShort<Neighbours, Searcher, Searcher>::Gather;
  Gather tree(psys.size(), 0.0, 8, 32);
  tree.calcForceAllAndWriteBack(
      [](const Searcher* epi, int n_i, const Searcher* epj, int n_j, Neighbours* out) {
        for (int i = 0; i < n_i; ++i)
          for (int j = 0; j < n_j; ++j)
            out[i].count += norm2(epj[j].pos - epi[i].pos) < epi[i].r_search * epi[i].r_search;
      },
      psys, dinfo);
  std::vector<int> cpu_counts;
  for (const auto& s : psys) cpu_counts.push_back(s.result.count);

  Recorder rec;
  std::map<int, std::vector<std::vector<Neighbours>>> by_tag;
  const Searcher* sent = nullptr;
  auto count = [&](int tag, int n_walk, const Searcher** epi, const int* n_epi, auto&& source) {
    auto& r = by_tag[tag];
    r.assign(static_cast<std::size_t>(n_walk), {});
    for (int w = 0; w < n_walk; ++w) {
      r[static_cast<std::size_t>(w)].assign(static_cast<std::size_t>(n_epi[w]), {});
      for (int i = 0; i < n_epi[w]; ++i)
        source(w, [&](const Searcher& j) {
          r[static_cast<std::size_t>(w)][static_cast<std::size_t>(i)].count +=
              norm2(j.pos - epi[w][i].pos) < epi[w][i].r_search * epi[w][i].r_search;
        });
    }
  };
  auto index = [&](int tag, int n_walk, const Searcher** epi, const int* n_epi, const int** id_epj, const int* n_epj,
                   const Searcher* epj, int, bool send_flag) {
    rec.dispatch(tag, n_walk, epi, n_epi, send_flag);
    if (send_flag) {  // FDPS-style: take the array, return
      sent = epj;
      return 0;
    }
    count(tag, n_walk, epi, n_epi, [&](int w, auto&& visit) {
      for (int k = 0; k < n_epj[w]; ++k) visit(sent[id_epj[w][k]]);
    });
    return 0;
  };
  auto plain = [&](int tag, int n_walk, const Searcher** epi, const int* n_epi, const Searcher** epj,
                   const int* n_epj) {
    rec.dispatch(tag, n_walk, epi, n_epi, false);
    count(tag, n_walk, epi, n_epi, [&](int w, auto&& visit) {
      for (int k = 0; k < n_epj[w]; ++k) visit(epj[w][k]);
    });
    return 0;
  };
  auto retrieve = [&](int tag, int n_walk, const int* n_epi, Neighbours** out) {
    rec.retrieve(tag, n_walk);
    auto& r = by_tag.at(tag);
    for (int w = 0; w < n_walk; ++w)
      for (int i = 0; i < n_epi[w]; ++i) out[w][i].count += r[static_cast<std::size_t>(w)][static_cast<std::size_t>(i)].count;
    by_tag.erase(tag);
    return 0;
  };
  auto check = [&](bool index_form, const char* what) {
    const auto want = fdpsSequence(tree.profile().n_groups, n_walk_limit, index_form);
    EXPECT_EQ(rec.calls, want) << what << "\n grove: " << describe(rec.calls) << "\n FDPS:  " << describe(want);
    rec.calls.clear();
    for (std::size_t i = 0; i < psys.size(); ++i) ASSERT_EQ(psys[i].result.count, cpu_counts[i]) << what << ", particle " << i;
    for (auto& s : psys) s.result.count = -1000;
  };
  tree.calcForceAllAndWriteBackMultiWalk(plain, retrieve, 1, psys, dinfo, n_walk_limit);
  check(false, "short range, calcForceAllAndWriteBackMultiWalk");
  for (InteractionListMode mode : {MAKE_LIST, MAKE_LIST_FOR_REUSE, REUSE_LIST}) {
    tree.calcForceAllAndWriteBackMultiWalkIndex(index, retrieve, 1, psys, dinfo, n_walk_limit, true, mode);
    check(true, "short range, calcForceAllAndWriteBackMultiWalkIndex");
  }
  tree.calcForceAllAndWriteBackMultiWalk(plain, retrieve, 1, psys, dinfo, n_walk_limit, true, MAKE_LIST_FOR_REUSE);
  check(false, "short range, plain, MAKE_LIST_FOR_REUSE");
  tree.calcForceAllAndWriteBackMultiWalk(plain, retrieve, 1, psys, dinfo, n_walk_limit, true, REUSE_LIST);
  check(false, "short range, plain, REUSE_LIST");
}

INSTANTIATE_TEST_SUITE_P(WalkLimits, FdpsSequence, ::testing::Values(1, 5, 200, 100000));

// A rank with no particles still gets the index form's send call, as FDPS makes it.
TEST(FdpsSequence, AnEmptyRankGetsOnlyTheSendCall) {
  Psys psys;
  DomainInfo dinfo;
  Quadrupole tree(500, 0.5, 8, 32);
  Recorder rec;
  auto index = [&](int tag, int n_walk, const ChargedEP** epi, const int* n_epi, const int**, const int*,
                   const int**, const int*, const ChargedEP*, int, const SPJQuadrupole*, int, bool send_flag) {
    rec.dispatch(tag, n_walk, epi, n_epi, send_flag);
    return 0;
  };
  auto retrieve = [&](int tag, int n_walk, const int*, AccPot**) {
    rec.retrieve(tag, n_walk);
    return 0;
  };
  // Particles on rank 0 only: the other ranks have none, and no groups.
  prepare(psys, dinfo, 500);
  if (psys.comm().rank() != 0) psys.resize(0);
  tree.calcForceAllAndWriteBackMultiWalkIndex(index, retrieve, 1, psys, dinfo, 10);
  if (psys.comm().rank() != 0) EXPECT_EQ(rec.calls, fdpsSequence(0, 10, true)) << describe(rec.calls);
  else EXPECT_EQ(rec.calls, fdpsSequence(tree.profile().n_groups, 10, true)) << describe(rec.calls);
}
