// GPU multiwalk gravity: the hand-written CUDA template (user_templates/cuda/gravity_multiwalk.cuh)
// and grove's engine (grove/gpu/multiwalk/multiwalk_engine.cuh with user_templates/cuda/gravity_interactions.cuh),
// driven the way grove's trees drive them, against the CPU kernels of user_templates/gravity_kernels.hpp
// on the same lists, and against each other. Every test skips where no CUDA device is present.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "gravity_walks.hpp"
#include "grove/core/error.hpp"
#include "grove/gpu/device_gpu.h"
#include "grove/tree/device_form.hpp"

namespace {

using namespace grove::gpu_testing;
using grove::gpu::MultiwalkOptions;
using user::cuda::makeGravityEngine;
using user::cuda::makeGravityMultiwalk;

constexpr float kEps2 = 1e-4f;

class GpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (grove::gpu::deviceCount() == 0) GTEST_SKIP() << "no CUDA device";
  }
};

template <class SPJ>
class GravityMultiwalkTest : public GpuTest {};
using SuperparticleTypes = ::testing::Types<grove::SPJMonopole, grove::SPJQuadrupole>;
TYPED_TEST_SUITE(GravityMultiwalkTest, SuperparticleTypes);

// Per-particle relative differences from the CPU kernels: at most 1e-5, median at most 1e-6.
template <class SPJ>
void expectMatchesCpuKernels(const std::vector<GravityForce>& got, const GravityWalks<SPJ>& g, const char* what) {
  const Differences d = compare(got, cpuForces(g, kEps2));
  EXPECT_EQ(d.zero_mismatches, 0) << what;
  EXPECT_LE(d.max_acc, 1e-5) << what;
  EXPECT_LE(d.median_acc, 1e-6) << what;
  EXPECT_LE(d.max_pot, 1e-5) << what;
  EXPECT_LE(d.median_pot, 1e-6) << what;
  std::printf("  [%s] vs CPU kernels over %zu particles: acc max %.2e median %.2e, pot max %.2e median %.2e\n", what,
              got.size(), d.max_acc, d.median_acc, d.max_pot, d.median_pot);
}

// Device bytes of the whole EPJ and SPJ arrays of the index form (the engine's resident arrays).
template <class SPJ>
std::size_t residentBytes(const GravityWalks<SPJ>& g) {
  return g.epj_all.size() * sizeof(grove::gpu::DeviceFormOf<GravityEPJ>) +
         g.spj_all.size() * sizeof(grove::gpu::DeviceFormOf<SPJ>);
}

// ---- the hand-written template --------------------------------------------------------------------

TYPED_TEST(GravityMultiwalkTest, TemplatePlainAndIndexFormsMatchCpuKernels) {
  const auto g = makeGravityWalks<TypeParam>(11);
  auto mw = makeGravityMultiwalk<TypeParam>(kEps2);
  expectMatchesCpuKernels(runMultiwalk(*mw, g, {.index_form = false}), g, "template plain");
  expectMatchesCpuKernels(runMultiwalk(*mw, g, {.index_form = true}), g, "template index");
}

TYPED_TEST(GravityMultiwalkTest, TemplateIndexFormEqualsPlainFormBitwise) {
  const auto g = makeGravityWalks<TypeParam>(12);
  auto mw = makeGravityMultiwalk<TypeParam>(kEps2);
  const auto plain = runMultiwalk(*mw, g, {.index_form = false});
  const auto index = runMultiwalk(*mw, g, {.index_form = true});
  EXPECT_TRUE(bitwiseEqual(plain, index));
}

TYPED_TEST(GravityMultiwalkTest, TemplateReusedListsEqualResentListsBitwise) {
  auto g = makeGravityWalks<TypeParam>(13);
  auto reusing = makeGravityMultiwalk<TypeParam>(kEps2);
  runMultiwalk(*reusing, g, {.lists_unchanged = false});  // MAKE_LIST_FOR_REUSE: the lists stay on the device
  drift(g, 99);                                            // the next step: particles moved, same lists
  const auto reused = runMultiwalk(*reusing, g, {.lists_unchanged = true});
  auto resending = makeGravityMultiwalk<TypeParam>(kEps2);
  const auto resent = runMultiwalk(*resending, g, {.lists_unchanged = false});
  EXPECT_TRUE(bitwiseEqual(reused, resent));
  EXPECT_EQ(reusing->stats().lists_reused, (g.size() + 15) / 16);
  expectMatchesCpuKernels(reused, g, "template reused lists");
}

TYPED_TEST(GravityMultiwalkTest, TemplateBatchesInFlightEqualOneBatchBitwise) {
  const auto g = makeGravityWalks<TypeParam>(14);
  auto mw = makeGravityMultiwalk<TypeParam>(kEps2);
  const auto one = runMultiwalk(*mw, g, {.walks_per_batch = g.size(), .tag_max = 1});
  // Batches of 5 walks; with one tag two batches of the same tag are in flight at once.
  for (int tag_max : {1, 2, 3}) {
    EXPECT_TRUE(bitwiseEqual(one, runMultiwalk(*mw, g, {.walks_per_batch = 5, .tag_max = tag_max})))
        << "index form, tag_max " << tag_max;
    const RunOrder plain{.walks_per_batch = 5, .tag_max = tag_max, .index_form = false};
    EXPECT_TRUE(bitwiseEqual(one, runMultiwalk(*mw, g, plain)))
        << "plain form, tag_max " << tag_max;
  }
}

TYPED_TEST(GravityMultiwalkTest, RetrieveAddsToTheCallersForces) {
  const auto g = makeGravityWalks<TypeParam>(15);
  std::vector<GravityForce> initial(g.particles());
  for (std::size_t i = 0; i < initial.size(); ++i)
    initial[i].acc = {1.0f + float(i), -2.0f, 0.5f * float(i % 7)}, initial[i].pot = -3.0f - float(i % 5);
  for (bool engine : {false, true}) {
    auto mw = engine ? makeGravityEngine<TypeParam>(kEps2) : makeGravityMultiwalk<TypeParam>(kEps2);
    const auto from_zero = runMultiwalk(*mw, g, {});
    const auto added = runMultiwalk(*mw, g, {}, initial);
    std::vector<GravityForce> expected = initial;
    for (std::size_t i = 0; i < expected.size(); ++i) expected[i] += from_zero[i];
    EXPECT_TRUE(bitwiseEqual(added, expected)) << (engine ? "engine" : "template");
  }
}

// ---- grove's engine ----------------------------------------------------------------------------------

TYPED_TEST(GravityMultiwalkTest, EnginePlainAndIndexFormsMatchCpuKernels) {
  const auto g = makeGravityWalks<TypeParam>(21);
  auto engine = makeGravityEngine<TypeParam>(kEps2);
  expectMatchesCpuKernels(runMultiwalk(*engine, g, {.index_form = false}), g, "engine plain");
  expectMatchesCpuKernels(runMultiwalk(*engine, g, {.index_form = true}), g, "engine index");
}

TYPED_TEST(GravityMultiwalkTest, EngineAgreesWithTemplate) {
  const auto g = makeGravityWalks<TypeParam>(22);
  auto engine = makeGravityEngine<TypeParam>(kEps2);
  auto raw = makeGravityMultiwalk<TypeParam>(kEps2);
  const auto a = runMultiwalk(*engine, g, {}), b = runMultiwalk(*raw, g, {});
  const Differences d = compare(a, b);
  // The same physics functions in the same order: equal to rounding (in practice bitwise).
  EXPECT_EQ(d.zero_mismatches, 0);
  EXPECT_LE(d.max_acc, 1e-6);
  EXPECT_LE(d.max_pot, 1e-6);
  std::printf("  engine vs template: %s (acc max %.2e, pot max %.2e)\n",
              bitwiseEqual(a, b) ? "bitwise equal" : "not bitwise equal", d.max_acc, d.max_pot);
}

TYPED_TEST(GravityMultiwalkTest, EngineIndexFormEqualsPlainFormBitwise) {
  const auto g = makeGravityWalks<TypeParam>(23);
  auto engine = makeGravityEngine<TypeParam>(kEps2);
  EXPECT_TRUE(bitwiseEqual(runMultiwalk(*engine, g, {.index_form = false}), runMultiwalk(*engine, g, {})));
  EXPECT_EQ(engine->stats().gathered_batches, 0);
}

TYPED_TEST(GravityMultiwalkTest, EngineReusedListsEqualResentListsBitwise) {
  auto g = makeGravityWalks<TypeParam>(24);
  auto reusing = makeGravityEngine<TypeParam>(kEps2);
  runMultiwalk(*reusing, g, {.lists_unchanged = false});
  const auto kept = reusing->stats().lists_kept;
  EXPECT_EQ(kept, (g.size() + 15) / 16);  // every batch's lists stayed on the device
  drift(g, 7);
  const auto sent_before = reusing->stats().bytes_to_device;
  const auto reused = runMultiwalk(*reusing, g, {.lists_unchanged = true});
  EXPECT_EQ(reusing->stats().lists_reused, kept);
  auto resending = makeGravityEngine<TypeParam>(kEps2);
  const auto resent = runMultiwalk(*resending, g, {.lists_unchanged = false});
  EXPECT_TRUE(bitwiseEqual(reused, resent));
  // The reuse step sent what the resending step sent, less the lists.
  std::int64_t list_bytes = 0;
  for (int w = 0; w < g.size(); ++w)
    list_bytes += static_cast<std::int64_t>((g.id_epj[w].size() + g.id_spj[w].size()) * sizeof(int));
  EXPECT_EQ(resending->stats().bytes_to_device - (reusing->stats().bytes_to_device - sent_before), list_bytes);
}

TYPED_TEST(GravityMultiwalkTest, EngineInBlocksEqualsUnblockedBitwise) {
  const auto g = makeGravityWalks<TypeParam>(25);
  auto unblocked = makeGravityEngine<TypeParam>(kEps2);
  const auto reference = runMultiwalk(*unblocked, g, {});
  EXPECT_EQ(unblocked->stats().blocks, unblocked->stats().batches);
  // A budget with room for the resident arrays and 80 KB per stream: a batch of 16 walks (about
  // 9 KB each in index form, 25 KB gathered) runs in several blocks.
  MultiwalkOptions tight;
  tight.resident_fraction = 0.9;
  tight.device_memory_budget = residentBytes(g) + 2 * 80 * 1024;
  auto blocked = makeGravityEngine<TypeParam>(kEps2, tight);
  EXPECT_TRUE(bitwiseEqual(reference, runMultiwalk(*blocked, g, {})));
  EXPECT_TRUE(bitwiseEqual(reference, runMultiwalk(*blocked, g, {.index_form = false})));
  EXPECT_GT(blocked->stats().blocks, blocked->stats().batches);
  EXPECT_EQ(blocked->stats().gathered_batches, 0);
}

TYPED_TEST(GravityMultiwalkTest, EngineInBlocksOnKeptListsEqualsUnblockedBitwise) {
  auto g = makeGravityWalks<TypeParam>(27);
  // Lists kept on the device for the whole batch, walks run in small blocks that index into them.
  MultiwalkOptions small_blocks;
  small_blocks.max_block_bytes = 24 * 1024;
  auto blocked = makeGravityEngine<TypeParam>(kEps2, small_blocks);
  auto unblocked = makeGravityEngine<TypeParam>(kEps2);
  EXPECT_TRUE(bitwiseEqual(runMultiwalk(*unblocked, g, {}), runMultiwalk(*blocked, g, {})));
  drift(g, 5);
  const auto reused = runMultiwalk(*blocked, g, {.lists_unchanged = true});
  EXPECT_TRUE(bitwiseEqual(runMultiwalk(*unblocked, g, {}), reused));
  EXPECT_GT(blocked->stats().blocks, blocked->stats().batches);
  EXPECT_EQ(blocked->stats().lists_kept, (g.size() + 15) / 16);
  EXPECT_EQ(blocked->stats().lists_reused, (g.size() + 15) / 16);
}

TYPED_TEST(GravityMultiwalkTest, EngineGathersOnTheHostWhenTheArraysDoNotFitBitwise) {
  const auto g = makeGravityWalks<TypeParam>(26);
  auto resident = makeGravityEngine<TypeParam>(kEps2);
  const auto reference = runMultiwalk(*resident, g, {});
  MultiwalkOptions small;
  small.device_memory_budget = residentBytes(g);  // more than resident_fraction (0.5) of it
  auto gathering = makeGravityEngine<TypeParam>(kEps2, small);
  EXPECT_TRUE(bitwiseEqual(reference, runMultiwalk(*gathering, g, {})));
  EXPECT_EQ(gathering->stats().gathered_batches, gathering->stats().batches);
}

TEST_F(GpuTest, EngineThrowsNamingTheSizesWhenOneWalkCannotFit) {
  const auto g = makeGravityWalks<grove::SPJMonopole>(31);
  MultiwalkOptions tiny;
  tiny.resident_fraction = 0.99;
  tiny.device_memory_budget = residentBytes(g) + 2 * 4 * 1024;  // 4 KB per stream: a walk needs more
  auto engine = makeGravityEngine<grove::SPJMonopole>(kEps2, tiny);
  try {
    runMultiwalk(*engine, g, {});
    FAIL() << "expected grove::Error";
  } catch (const grove::Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("needs"), std::string::npos) << message;
    EXPECT_NE(message.find(std::to_string(tiny.device_memory_budget)), std::string::npos) << message;
    std::printf("  %s\n", message.c_str());
  }
}

TEST_F(GpuTest, MisuseIsReportedAsGroveError) {
  const auto g = makeGravityWalks<grove::SPJMonopole>(32, {.n_walk = 8});
  for (bool engine : {false, true}) {
    auto mw = engine ? makeGravityEngine<grove::SPJMonopole>(kEps2) : makeGravityMultiwalk<grove::SPJMonopole>(kEps2);
    int n_epi = 1;
    GravityForce f;
    GravityForce* fp = &f;
    EXPECT_THROW(mw->retrieve()(0, 1, &n_epi, &fp), grove::Error) << "retrieve without a dispatch";
    const GravityEPI* epi = g.epi[0].data();
    const int* ids = g.id_epj[0].data();
    const int n_j = static_cast<int>(g.id_epj[0].size()), n_s = 0;
    EXPECT_THROW(mw->dispatch()(0, 1, &epi, &n_epi, &ids, &n_j, &ids, &n_s, g.epj_all.data(), 0, g.spj_all.data(), 0,
                                false, false),
                 grove::Error)
        << "index dispatch before the arrays were sent";
  }
  // The engine checks that "unchanged" lists are the kept ones.
  auto engine = makeGravityEngine<grove::SPJMonopole>(kEps2);
  runMultiwalk(*engine, g, {.walks_per_batch = 8});
  auto other = makeGravityWalks<grove::SPJMonopole>(33, {.n_walk = 8});
  EXPECT_THROW(runMultiwalk(*engine, other, {.walks_per_batch = 8, .lists_unchanged = true}), grove::Error);
}

}  // namespace
