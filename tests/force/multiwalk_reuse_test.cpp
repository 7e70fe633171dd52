// Interaction-list reuse and the multiwalk hooks, with a host "device": dispatch/retrieve
// functors that compute with the same double kernels as the CPU path. On every rank count.
#include <gtest/gtest.h>

#include <map>

#include "support/gravity.hpp"

using namespace grove;
using namespace grove::testing_support;

namespace {

using Psys = ParticleSystem<Charged>;
using Quadrupole = TreeForForceLong<AccPot, ChargedEP, ChargedEP>::Quadrupole;

void prepare(Psys& psys, DomainInfo& dinfo, std::int64_t n) {
  makeSystem(psys, n, true);
  dinfo.decomposeDomainAll(psys);
  psys.exchangeParticle(dinfo);
}

std::vector<Vec3d> accelerations(const Psys& psys) {
  std::vector<Vec3d> out;
  for (const auto& c : psys) out.push_back(c.result.acc);
  return out;
}

// A stand-in accelerator: dispatch computes the batch at once into per-tag result buffers,
// retrieve copies them out. It records what grove told it.
struct HostDevice {
  std::map<int, std::vector<std::vector<AccPot>>> results;  // tag -> walk -> forces
  std::vector<bool> send_flags, unchanged_flags;
  std::vector<const void*> first_epi, whole_epj;  // per dispatch: epi[0]; the index form's epj
  const ChargedEP* sent_epj = nullptr;             // the index form's arrays, as its send call gave them
  const SPJQuadrupole* sent_spj = nullptr;
  int n_sent_epj = 0, n_sent_spj = 0;
  int dispatches = 0, retrieves = 0;

  void compute(int tag, int n_walk, const ChargedEP** epi, const int* n_epi,
               const std::function<void(int w, AccPot* out)>& kernels) {
    auto& r = results[tag];
    r.assign(static_cast<std::size_t>(n_walk), {});
    for (int w = 0; w < n_walk; ++w) {
      r[static_cast<std::size_t>(w)].assign(static_cast<std::size_t>(n_epi[w]), AccPot{});
      kernels(w, r[static_cast<std::size_t>(w)].data());
    }
    if (n_walk > 0) first_epi.push_back(epi[0]);
    ++dispatches;
  }
  int retrieve(int tag, int n_walk, const int* n_epi, AccPot** force) {
    auto& r = results.at(tag);
    EXPECT_EQ(static_cast<int>(r.size()), n_walk);
    for (int w = 0; w < n_walk; ++w)
      for (int i = 0; i < n_epi[w]; ++i) {
        force[w][i].acc += r[static_cast<std::size_t>(w)][static_cast<std::size_t>(i)].acc;
        force[w][i].pot += r[static_cast<std::size_t>(w)][static_cast<std::size_t>(i)].pot;
      }
    results.erase(tag);
    ++retrieves;
    return 0;
  }
};

struct PlainDispatch {
  HostDevice* device;
  int operator()(int tag, int n_walk, const ChargedEP** epi, const int* n_epi, const ChargedEP** epj,
                 const int* n_epj, const SPJQuadrupole** spj, const int* n_spj) const {
    device->compute(tag, n_walk, epi, n_epi, [&](int w, AccPot* out) {
      DirectKernel{}(epi[w], n_epi[w], epj[w], n_epj[w], out);
      MultipoleKernel{}(epi[w], n_epi[w], spj[w], n_spj[w], out);
    });
    return 0;
  }
};

// Written as FDPS's samples write it: the send call (n_walk 0) hands over the whole arrays and
// returns; each later call computes its walks from the arrays taken then.
struct IndexDispatch {
  HostDevice* device;
  int operator()(int tag, int n_walk, const ChargedEP** epi, const int* n_epi, const std::int32_t** id_epj,
                 const int* n_epj, const std::int32_t** id_spj, const int* n_spj, const ChargedEP* epj,
                 int n_epj_total, const SPJQuadrupole* spj, int n_spj_total, bool send_flag,
                 bool lists_unchanged) const {
    device->send_flags.push_back(send_flag);
    device->unchanged_flags.push_back(lists_unchanged);
    device->whole_epj.push_back(epj);
    if (send_flag) {
      EXPECT_EQ(n_walk, 0) << "grove's send call carries no walks (FDPS's sequence)";
      device->sent_epj = epj, device->sent_spj = spj;
      device->n_sent_epj = n_epj_total, device->n_sent_spj = n_spj_total;
      return 0;
    }
    EXPECT_EQ(epj, device->sent_epj) << "the whole arrays change only with send_flag";
    device->compute(tag, n_walk, epi, n_epi, [&](int w, AccPot* out) {
      std::vector<ChargedEP> ep;
      std::vector<SPJQuadrupole> sp;
      for (int k = 0; k < n_epj[w]; ++k) {
        EXPECT_LT(id_epj[w][k], device->n_sent_epj);
        ep.push_back(device->sent_epj[id_epj[w][k]]);
      }
      for (int k = 0; k < n_spj[w]; ++k) {
        EXPECT_LT(id_spj[w][k], device->n_sent_spj);
        sp.push_back(device->sent_spj[id_spj[w][k]]);
      }
      DirectKernel{}(epi[w], n_epi[w], ep.data(), n_epj[w], out);
      MultipoleKernel{}(epi[w], n_epi[w], sp.data(), n_spj[w], out);
    });
    return 0;
  }
};

struct Retrieve {
  HostDevice* device;
  int operator()(int tag, int n_walk, const int* n_epi, AccPot** force) const {
    return device->retrieve(tag, n_walk, n_epi, force);
  }
};

}  // namespace

TEST(ListReuse, MakeListForReuseGivesBitwiseTheSameForcesAsMakeList) {
  Psys psys;
  DomainInfo dinfo;
  prepare(psys, dinfo, 1 << 12);
  Quadrupole tree(psys.size(), 0.5, 8, 64);
  tree.calcForceAllAndWriteBack(DirectKernel{}, MultipoleKernel{}, psys, dinfo, true, MAKE_LIST);
  const auto made = accelerations(psys);
  tree.calcForceAllAndWriteBack(DirectKernel{}, MultipoleKernel{}, psys, dinfo, true, MAKE_LIST_FOR_REUSE);
  const auto kept = accelerations(psys);
  tree.calcForceAllAndWriteBack(DirectKernel{}, MultipoleKernel{}, psys, dinfo, true, REUSE_LIST);
  const auto reused = accelerations(psys);
  for (std::size_t i = 0; i < made.size(); ++i) {
    ASSERT_EQ(made[i], kept[i]) << "particle " << i;
    ASSERT_EQ(made[i], reused[i]) << "particle " << i << " (nothing moved: reuse must be exact)";
  }
}

// 16 steps of drift with lists kept from step 0: the reused lists' errors against direct
// summation stay within 1.5x of freshly built lists' errors.
TEST(ListReuse, ReusedListsStayCloseToRebuiltListsOverSixteenSteps) {
  Psys psys;
  DomainInfo dinfo;
  prepare(psys, dinfo, 1 << 12);
  std::vector<Vec3d> velocity;
  for (const auto& c : psys) velocity.push_back(0.3 * Vec3d{std::sin(double(c.id)), std::cos(double(c.id)), 0.5});
  Quadrupole reuse_tree(psys.size(), 0.5, 8, 64), fresh_tree(psys.size(), 0.5, 8, 64);
  reuse_tree.calcForceAllAndWriteBack(DirectKernel{}, MultipoleKernel{}, psys, dinfo, true, MAKE_LIST_FOR_REUSE);
  const double dt = 1.0 / 128;
  for (int step = 1; step <= 16; ++step) {
    for (std::size_t i = 0; i < psys.size(); ++i) psys[i].pos += dt * velocity[i];
    reuse_tree.calcForceAllAndWriteBack(DirectKernel{}, MultipoleKernel{}, psys, dinfo, true, REUSE_LIST);
    const auto reused = accelerations(psys);
    fresh_tree.calcForceAllAndWriteBack(DirectKernel{}, MultipoleKernel{}, psys, dinfo, true, MAKE_LIST);
    const auto fresh = accelerations(psys);
    if (step % 8 != 0) continue;
    const auto direct = directSummation(psys);
    const auto e_reused = relativeErrors(psys.comm(), reused, direct);
    const auto e_fresh = relativeErrors(psys.comm(), fresh, direct);
    grove::log("step {}: reused median {:.3e} p99 {:.3e}; rebuilt median {:.3e} p99 {:.3e}", step, e_reused.median,
               e_reused.p99, e_fresh.median, e_fresh.p99);
    EXPECT_LE(e_reused.median, 1.5 * e_fresh.median) << "step " << step;
    EXPECT_LE(e_reused.p99, 1.5 * e_fresh.p99) << "step " << step;
  }
}

TEST(ListReuse, MisuseIsAClearErrorOnEveryRank) {
  Psys psys;
  DomainInfo dinfo;
  prepare(psys, dinfo, 2000);
  Quadrupole tree(psys.size(), 0.5, 8, 64);
  auto expectError = [&](const char* needle) {
    try {
      tree.calcForceAllAndWriteBack(DirectKernel{}, MultipoleKernel{}, psys, dinfo, true, REUSE_LIST);
      ADD_FAILURE() << "no error; expected one mentioning " << needle;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  expectError("needs a preceding MAKE_LIST_FOR_REUSE");
  tree.calcForceAllAndWriteBack(DirectKernel{}, MultipoleKernel{}, psys, dinfo, true, MAKE_LIST_FOR_REUSE);
  psys.exchangeParticle(dinfo);
  expectError("exchanged");
  tree.calcForceAllAndWriteBack(DirectKernel{}, MultipoleKernel{}, psys, dinfo, true, MAKE_LIST_FOR_REUSE);
  if (psys.comm().rank() == 0) {
    Charged extra;
    extra.id = 1 << 20, extra.charge = 1e-4, extra.pos = {0.1, 0.2, 0.3};
    psys.add(extra);
  }
  // Rank 0 finds it; the others are stopped with it and name rank 0.
  expectError(psys.comm().rank() == 0 ? "exchanged" : "rank 0 found bad input");
}

class MultiWalk : public ::testing::TestWithParam<int> {};  // tag_max

TEST_P(MultiWalk, PlainAndIndexFormsGiveBitwiseTheCpuPathsForces) {
  const int tag_max = GetParam();
  Psys psys;
  DomainInfo dinfo;
  prepare(psys, dinfo, 1 << 12);
  Quadrupole tree(psys.size(), 0.5, 8, 64);
  tree.calcForceAllAndWriteBack(DirectKernel{}, MultipoleKernel{}, psys, dinfo);
  const auto cpu = accelerations(psys);
  HostDevice plain_device, index_device;
  tree.calcForceAllAndWriteBackMultiWalk(PlainDispatch{&plain_device}, Retrieve{&plain_device}, tag_max, psys, dinfo,
                                         7);
  const auto plain = accelerations(psys);
  tree.calcForceAllAndWriteBackMultiWalkIndex(IndexDispatch{&index_device}, Retrieve{&index_device}, tag_max, psys,
                                              dinfo, 7);
  const auto index = accelerations(psys);
  for (std::size_t i = 0; i < cpu.size(); ++i) {
    ASSERT_EQ(plain[i], cpu[i]) << "particle " << i;
    ASSERT_EQ(index[i], cpu[i]) << "particle " << i;
  }
  EXPECT_EQ(plain_device.dispatches, plain_device.retrieves);
  EXPECT_EQ(index_device.dispatches, index_device.retrieves);  // the send call computes nothing
  EXPECT_TRUE(plain_device.results.empty());
  ASSERT_FALSE(index_device.send_flags.empty());
  EXPECT_TRUE(index_device.send_flags.front());
  EXPECT_EQ(std::count(index_device.send_flags.begin(), index_device.send_flags.end(), true), 1);
}

INSTANTIATE_TEST_SUITE_P(OneAndSeveralTags, MultiWalk, ::testing::Values(1, 3));

// Page-lock hooks that only count (the GPU library's register the memory with CUDA).
struct CountingLocks {
  static inline int locks = 0, unlocks = 0;
  static bool lock(void*, std::size_t) { return ++locks, true; }
  static void unlock(void*) { ++unlocks; }
};

// Once a GPU library has installed page-lock hooks, the arrays dispatch reads come from locked
// memory (the first walk's EPI is the start of the tree's EPI array; the index form's EPJ array
// is the tree's), and nothing else changes: bitwise the forces of a tree without hooks.
TEST(MultiWalk, WithPageLockHooksDispatchReadsTheTreesLockedArraysAndForcesAreUnchanged) {
  Psys psys;
  DomainInfo dinfo;
  prepare(psys, dinfo, 1 << 12);
  auto run = [&](bool expect_locked) {
    Quadrupole tree(psys.size(), 0.5, 8, 64);
    HostDevice plain_device, index_device;
    tree.calcForceAllAndWriteBackMultiWalk(PlainDispatch{&plain_device}, Retrieve{&plain_device}, 2, psys, dinfo, 7);
    const auto plain = accelerations(psys);
    tree.calcForceAllAndWriteBackMultiWalkIndex(IndexDispatch{&index_device}, Retrieve{&index_device}, 2, psys,
                                                dinfo, 7, true, MAKE_LIST_FOR_REUSE);
    tree.calcForceAllAndWriteBackMultiWalkIndex(IndexDispatch{&index_device}, Retrieve{&index_device}, 2, psys,
                                                dinfo, 7, true, REUSE_LIST);
    const auto index = accelerations(psys);
    if (!plain_device.first_epi.empty()) {
      EXPECT_EQ(isPageLockedByGrove(plain_device.first_epi.front()), expect_locked);
      EXPECT_EQ(isPageLockedByGrove(index_device.first_epi.front()), expect_locked);
    }
    for (const void* epj : index_device.whole_epj) EXPECT_EQ(isPageLockedByGrove(epj), expect_locked);
    return std::pair{plain, index};
  };
  const auto ordinary = run(false);
  installPageLockHooks({&CountingLocks::lock, &CountingLocks::unlock});
  const auto locked = run(true);
  installPageLockHooks({});
  if (!psys.empty()) EXPECT_GT(CountingLocks::locks, 0);
  EXPECT_EQ(CountingLocks::unlocks, CountingLocks::locks) << "the tree's locks end with the tree";
  ASSERT_EQ(locked.first.size(), ordinary.first.size());
  for (std::size_t i = 0; i < ordinary.first.size(); ++i) {
    ASSERT_EQ(locked.first[i], ordinary.first[i]) << "plain form, particle " << i;
    ASSERT_EQ(locked.second[i], ordinary.second[i]) << "index form, particle " << i;
  }
}

TEST(MultiWalkReuse, DispatchLearnsWhenListsAreUnchangedAndForcesMatch) {
  Psys psys;
  DomainInfo dinfo;
  prepare(psys, dinfo, 1 << 12);
  Quadrupole tree(psys.size(), 0.5, 8, 64);
  HostDevice device;
  tree.calcForceAllAndWriteBackMultiWalkIndex(IndexDispatch{&device}, Retrieve{&device}, 2, psys, dinfo, 5, true,
                                              MAKE_LIST_FOR_REUSE);
  const std::size_t first_step_calls = device.unchanged_flags.size();
  for (bool flag : device.unchanged_flags) EXPECT_FALSE(flag);
  for (auto& c : psys) c.pos += Vec3d{1e-4, -2e-4, 5e-5};
  tree.calcForceAllAndWriteBackMultiWalkIndex(IndexDispatch{&device}, Retrieve{&device}, 2, psys, dinfo, 5, true,
                                              REUSE_LIST);
  const auto reused_gpu = accelerations(psys);
  ASSERT_EQ(device.unchanged_flags.size(), 2 * first_step_calls);
  for (std::size_t k = first_step_calls; k < device.unchanged_flags.size(); ++k) EXPECT_TRUE(device.unchanged_flags[k]);
  ASSERT_GT(first_step_calls, 0u);
  EXPECT_TRUE(device.send_flags[first_step_calls]);  // fresh EPJ/SPJ each step, in a send call of their own
  // The CPU path reusing the same lists gives the same forces.
  Quadrupole cpu_tree(psys.size(), 0.5, 8, 64);
  for (auto& c : psys) c.pos -= Vec3d{1e-4, -2e-4, 5e-5};
  cpu_tree.calcForceAllAndWriteBack(DirectKernel{}, MultipoleKernel{}, psys, dinfo, true, MAKE_LIST_FOR_REUSE);
  for (auto& c : psys) c.pos += Vec3d{1e-4, -2e-4, 5e-5};
  cpu_tree.calcForceAllAndWriteBack(DirectKernel{}, MultipoleKernel{}, psys, dinfo, true, REUSE_LIST);
  const auto reused_cpu = accelerations(psys);
  for (std::size_t i = 0; i < reused_cpu.size(); ++i) ASSERT_EQ(reused_gpu[i], reused_cpu[i]) << "particle " << i;
}

// Lists rebuilt by a CPU MAKE_LIST_FOR_REUSE step are new to the device: a following REUSE_LIST
// multiwalk must not be told they are unchanged.
TEST(MultiWalkReuse, ListsRebuiltOnTheHostAreNotReportedUnchanged) {
  Psys psys;
  DomainInfo dinfo;
  prepare(psys, dinfo, 2000);
  Quadrupole tree(psys.size(), 0.5, 8, 64);
  HostDevice device;
  tree.calcForceAllAndWriteBackMultiWalkIndex(IndexDispatch{&device}, Retrieve{&device}, 2, psys, dinfo, 5, true,
                                              MAKE_LIST_FOR_REUSE);
  tree.calcForceAllAndWriteBack(DirectKernel{}, MultipoleKernel{}, psys, dinfo, true, MAKE_LIST_FOR_REUSE);
  device.unchanged_flags.clear();
  tree.calcForceAllAndWriteBackMultiWalkIndex(IndexDispatch{&device}, Retrieve{&device}, 2, psys, dinfo, 5, true,
                                              REUSE_LIST);
  for (bool flag : device.unchanged_flags) EXPECT_FALSE(flag);
}

// ---- ParticleOrder::TREE_ORDER ---------------------------------------------------------------------

namespace {

std::map<std::int64_t, AccPot> forcesById(const Psys& psys) {
  std::map<std::int64_t, AccPot> out;
  for (const auto& c : psys) out[c.id] = c.result;
  return out;
}

std::vector<std::int64_t> idsInOrder(const Psys& psys) {
  std::vector<std::int64_t> ids;
  for (const auto& c : psys) ids.push_back(c.id);
  return ids;
}

void expectSameForcesById(const Psys& a, const Psys& b) {
  const auto fa = forcesById(a), fb = forcesById(b);
  ASSERT_EQ(fa.size(), fb.size());
  for (const auto& [id, f] : fa) {
    ASSERT_EQ(f.acc, fb.at(id).acc) << "particle id " << id;
    ASSERT_EQ(f.pot, fb.at(id).pot) << "particle id " << id;
  }
}

}  // namespace

TEST(ParticleOrder, TreeOrderMovesTheParticlesIntoKeyOrderAndKeepsEveryForce) {
  Psys kept;
  DomainInfo dinfo;
  prepare(kept, dinfo, 1 << 12);
  Psys moved = kept;
  Quadrupole keep_tree(kept.size(), 0.5, 8, 64), order_tree(moved.size(), 0.5, 8, 64);
  order_tree.setParticleOrder(ParticleOrder::TREE_ORDER);
  keep_tree.calcForceAllAndWriteBack(DirectKernel{}, MultipoleKernel{}, kept, dinfo);
  const std::uint64_t version = moved.layoutVersion();
  order_tree.calcForceAllAndWriteBack(DirectKernel{}, MultipoleKernel{}, moved, dinfo);
  expectSameForcesById(moved, kept);  // same lists, same kernels: bitwise
  EXPECT_NE(idsInOrder(moved), idsInOrder(kept)) << "random particles were not moved into key order";
  EXPECT_NE(moved.layoutVersion(), version);
  for (std::size_t i = 0; i < moved.size(); ++i) ASSERT_EQ(order_tree.getForce(i).acc, moved[i].result.acc) << i;

  // In key order already: a second build leaves them (and the layout) as they are.
  const auto ids = idsInOrder(moved);
  const std::uint64_t sorted_version = moved.layoutVersion();
  order_tree.calcForceAllAndWriteBack(DirectKernel{}, MultipoleKernel{}, moved, dinfo);
  EXPECT_EQ(idsInOrder(moved), ids);
  EXPECT_EQ(moved.layoutVersion(), sorted_version);

  // Calls without write-back never reorder.
  Psys untouched = kept;
  order_tree.calcForceAll(DirectKernel{}, MultipoleKernel{}, untouched, dinfo);
  EXPECT_EQ(idsInOrder(untouched), idsInOrder(kept));
}

TEST(ParticleOrder, ReuseAndMultiwalkWithTreeOrderGiveTheForcesOfKeepOrder) {
  Psys kept;
  DomainInfo dinfo;
  prepare(kept, dinfo, 1 << 12);
  Psys moved = kept;
  Quadrupole keep_tree(kept.size(), 0.5, 8, 64), order_tree(moved.size(), 0.5, 8, 64);
  order_tree.setParticleOrder(ParticleOrder::TREE_ORDER);
  HostDevice device;
  keep_tree.calcForceAllAndWriteBack(DirectKernel{}, MultipoleKernel{}, kept, dinfo, true, MAKE_LIST_FOR_REUSE);
  order_tree.calcForceAllAndWriteBackMultiWalkIndex(IndexDispatch{&device}, Retrieve{&device}, 2, moved, dinfo, 5,
                                                    true, MAKE_LIST_FOR_REUSE);
  expectSameForcesById(moved, kept);
  const auto ids = idsInOrder(moved);
  EXPECT_NE(ids, idsInOrder(kept));
  auto drift = [](Psys& psys) {
    for (auto& c : psys) c.pos += 1e-3 * Vec3d{std::sin(double(c.id)), std::cos(double(c.id)), 0.3};
  };
  for (int step = 0; step < 3; ++step) {
    drift(kept), drift(moved);
    keep_tree.calcForceAllAndWriteBack(DirectKernel{}, MultipoleKernel{}, kept, dinfo, true, REUSE_LIST);
    order_tree.calcForceAllAndWriteBackMultiWalkIndex(IndexDispatch{&device}, Retrieve{&device}, 2, moved, dinfo, 5,
                                                      true, REUSE_LIST);
    expectSameForcesById(moved, kept);
    EXPECT_EQ(idsInOrder(moved), ids) << "REUSE_LIST must not reorder";
  }
  // The plain form reorders as well, and a rebuild after the drift moves the particles again.
  order_tree.calcForceAllAndWriteBackMultiWalk(PlainDispatch{&device}, Retrieve{&device}, 3, moved, dinfo, 7);
  keep_tree.calcForceAllAndWriteBack(DirectKernel{}, MultipoleKernel{}, kept, dinfo);
  expectSameForcesById(moved, kept);
}

// Only one tree should reorder a particle system: another tree's reorder (here after the
// particles moved) invalidates the first tree's kept lists, and REUSE_LIST says so. A rebuild
// that finds the particles in key order already changes nothing.
TEST(ParticleOrder, AnotherTreesReorderIsCaughtByReuse) {
  Psys psys;
  DomainInfo dinfo;
  prepare(psys, dinfo, 2000);
  Quadrupole first(psys.size(), 0.5, 8, 64), second(psys.size(), 0.6, 8, 64);
  first.setParticleOrder(ParticleOrder::TREE_ORDER);
  second.setParticleOrder(ParticleOrder::TREE_ORDER);
  first.calcForceAllAndWriteBack(DirectKernel{}, MultipoleKernel{}, psys, dinfo, true, MAKE_LIST_FOR_REUSE);
  second.calcForceAllAndWriteBack(DirectKernel{}, MultipoleKernel{}, psys, dinfo);  // same keys: no move
  EXPECT_NO_THROW(first.calcForceAllAndWriteBack(DirectKernel{}, MultipoleKernel{}, psys, dinfo, true, REUSE_LIST));
  for (auto& c : psys) c.pos = Vec3d{c.pos.y, c.pos.z, c.pos.x};  // a new key order
  second.calcForceAllAndWriteBack(DirectKernel{}, MultipoleKernel{}, psys, dinfo);
  try {
    first.calcForceAllAndWriteBack(DirectKernel{}, MultipoleKernel{}, psys, dinfo, true, REUSE_LIST);
    ADD_FAILURE() << "REUSE_LIST after another tree reordered the particles did not throw";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("TREE_ORDER"), std::string::npos) << e.what();
  }
}

// The driver keeps up to tag_max batches in flight, one per tag: each tag is retrieved before it
// is dispatched again, batches come back oldest first, and with tag_max tags the device holds
// tag_max batches at once (when there are that many).
TEST(MultiWalk, UpToTagMaxBatchesAreInFlightAndTagsAreNeverReusedEarly) {
  Psys psys;
  DomainInfo dinfo;
  prepare(psys, dinfo, 1 << 12);
  Quadrupole tree(psys.size(), 0.5, 8, 64);
  tree.calcForceAllAndWriteBack(DirectKernel{}, MultipoleKernel{}, psys, dinfo);
  const auto cpu = accelerations(psys);
  for (int tag_max : {1, 2, 4}) {
    HostDevice device;
    std::vector<int> in_flight_tags;
    std::size_t most_in_flight = 0;
    int batches = 0;
    auto dispatch = [&](int tag, int n_walk, const ChargedEP** epi, const int* n_epi, const std::int32_t** id_epj,
                        const int* n_epj, const std::int32_t** id_spj, const int* n_spj, const ChargedEP* epj,
                        int n_epj_total, const SPJQuadrupole* spj, int n_spj_total, bool send_flag) {
      if (send_flag) {  // the step's arrays, in a call with no walks: not a batch
        EXPECT_EQ(n_walk, 0);
        EXPECT_EQ(batches, 0) << "the send call comes first";
        return IndexDispatch{&device}(tag, n_walk, epi, n_epi, id_epj, n_epj, id_spj, n_spj, epj, n_epj_total, spj,
                                      n_spj_total, send_flag, false);
      }
      EXPECT_EQ(std::count(in_flight_tags.begin(), in_flight_tags.end(), tag), 0) << "tag " << tag << " reused";
      EXPECT_EQ(tag, batches % tag_max);
      in_flight_tags.push_back(tag);
      most_in_flight = std::max(most_in_flight, in_flight_tags.size());
      ++batches;
      return IndexDispatch{&device}(tag, n_walk, epi, n_epi, id_epj, n_epj, id_spj, n_spj, epj, n_epj_total, spj,
                                    n_spj_total, send_flag, false);
    };
    auto retrieve = [&](int tag, int n_walk, const int* n_epi, AccPot** force) {
      EXPECT_FALSE(in_flight_tags.empty());
      if (!in_flight_tags.empty()) {
        EXPECT_EQ(tag, in_flight_tags.front()) << "batches must come back oldest first";
        in_flight_tags.erase(in_flight_tags.begin());
      }
      return device.retrieve(tag, n_walk, n_epi, force);
    };
    tree.calcForceAllAndWriteBackMultiWalkIndex(dispatch, retrieve, tag_max, psys, dinfo, 3);
    EXPECT_TRUE(in_flight_tags.empty()) << "every batch is retrieved";
    if (batches >= tag_max) EXPECT_EQ(most_in_flight, static_cast<std::size_t>(tag_max)) << "tag_max " << tag_max;
    const auto got = accelerations(psys);
    for (std::size_t i = 0; i < cpu.size(); ++i) ASSERT_EQ(got[i], cpu[i]) << "particle " << i << ", tag_max " << tag_max;
  }
}

// Batches cover the groups in order, none above n_walk_limit, as equal as they can be (FDPS's
// split); with several tags and enough groups the first and last three halve towards the ends.
TEST(MultiWalk, BatchesAreFdpsEvenSplitAndTaperAtBothEndsWhenSeveralAreInFlight) {
  auto sizes = [](std::size_t n, std::size_t limit, int tag_max) {
    const auto starts = multiwalkBatchStarts(n, limit, tag_max);
    EXPECT_EQ(starts.front(), 0u);
    EXPECT_EQ(starts.back(), n);
    std::vector<std::size_t> out;
    for (std::size_t k = 0; k + 1 < starts.size(); ++k) {
      EXPECT_GT(starts[k + 1], starts[k]);
      EXPECT_LE(starts[k + 1] - starts[k], limit);
      out.push_back(starts[k + 1] - starts[k]);
    }
    return out;
  };
  // 18624 - 2 (125 + 250 + 500) = 16874 in 17 batches: 10 of 993, 7 of 992.
  std::vector<std::size_t> tapered{125, 250, 500};
  tapered.insert(tapered.end(), 10, 993);
  tapered.insert(tapered.end(), 7, 992);
  tapered.insert(tapered.end(), {500, 250, 125});
  EXPECT_EQ(sizes(18624, 1000, 4), tapered);
  // One tag: 19 batches of 18624 / 19 = 980 (the first 4 one more), as FDPS makes them.
  std::vector<std::size_t> untapered(4, 981);
  untapered.insert(untapered.end(), 15, 980);
  EXPECT_EQ(sizes(18624, 1000, 1), untapered);
  EXPECT_EQ(sizes(3000, 1000, 4), (std::vector<std::size_t>{1000, 1000, 1000}));
  EXPECT_EQ(sizes(10, 3, 2), (std::vector<std::size_t>{3, 3, 2, 2}));
  EXPECT_EQ(sizes(298, 200, 1), (std::vector<std::size_t>{149, 149}));
  EXPECT_TRUE(sizes(0, 1000, 4).empty());
}
