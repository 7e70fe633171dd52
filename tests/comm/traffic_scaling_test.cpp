// What one step costs each rank in messages and bytes, at 16 and 32 ranks (ctest runs this suite
// oversubscribed at those counts; 64 and more by hand). The bodies fill a long bar, one unit of
// it per rank, cut into slabs (multisection P x 1 x 1), so that every rank has the same few
// neighbours whatever P is: a step whose traffic grows with P fails the bounds below at 32
// ranks (and most of them at 16), one whose traffic follows the neighbours passes at any P.
//
// A step: a drift, the particle exchange (sparse counts), the CPU tree with
// POINT_TO_POINT_FAST LETs (a rank is far when the criterion accepts its particles whole).
// With theta 0.5 and slabs one unit wide, a rank's LET peers are the ranks within two slabs:
// at most 4 targets and 4 sources. Per step and rank the point-to-point messages are then at
// most 4 + 4 count messages and 2 x (4 + 4) payload messages for the LET, and 2 + 2 count and
// 2 + 2 payload messages for the exchange (drifting bodies reach only the adjacent slabs): 32.
// An all-to-all of counts alone would be 2 (P - 1) messages, 30 at 16 ranks.
// Collectives (reductions, allgathers of per-rank summaries, the sparse exchanges' barriers)
// take O(log P) messages each inside MPI; their number per step must not grow with P, the
// bytes they return are O(P) small summaries (at most kSummaryBytes per rank), and none of them
// may be an all-to-all (O(P) messages per rank).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

#include "grove/grove.hpp"
#include "grove/force/tree_for_force_long.hpp"
#include "support/gravity.hpp"

namespace {

using grove::Comm;
using grove::CommTraffic;
using grove::Vec3d;
using grove::testing_support::AccPot;
using grove::testing_support::Charged;
using grove::testing_support::ChargedEP;
using grove::testing_support::DirectKernel;
using grove::testing_support::MultipoleKernel;

constexpr int kBodiesPerRank = 1500;
constexpr int kSteps = 4;
constexpr std::int64_t kMaxMessagesPerStep = 32;     // see the top of this file
constexpr std::int64_t kMaxCollectivesPerStep = 40;  // a constant: the step's own calls
constexpr std::int64_t kSummaryBytes = 160;          // per rank and step, allgathered summaries

struct StepTraffic {
  std::int64_t messages = 0, bytes = 0, collectives = 0, collective_bytes = 0, alltoalls = 0;
};

TEST(TrafficScaling, MessagesAndBytesPerRankFollowTheNeighboursNotTheRankCount) {
  const Comm comm;
  const int ranks = comm.size();
  grove::ParticleSystem<Charged> psys;
  grove::testing_support::makeBar(psys, kBodiesPerRank);  // one unit of the bar per rank
  grove::DomainInfo dinfo;
  dinfo.setNumberOfDomainMultiDimension(ranks, 1, 1);
  dinfo.decomposeDomainAll(psys);  // once: the step below is what is measured
  psys.exchangeParticle(dinfo);

  using Tree = grove::TreeForForceLong<AccPot, ChargedEP, ChargedEP>::Monopole;
  Tree tree(static_cast<std::size_t>(kBodiesPerRank) * 2, 0.5, 8, 64);
  tree.setLetExchangeMode(grove::LetExchangeMode::POINT_TO_POINT_FAST);
  StepTraffic worst;
  std::mt19937_64 rng(31 + static_cast<std::uint64_t>(comm.rank()));
  std::uniform_real_distribution<double> kick(-0.02, 0.02);
  for (int step = 0; step < kSteps; ++step) {
    comm.barrier();
    grove::resetCommTraffic();
    for (Charged& c : psys) c.pos.x = std::clamp(c.pos.x + kick(rng), 0.0, ranks - 1e-9);
    psys.exchangeParticle(dinfo);
    tree.calcForceAllAndWriteBack(DirectKernel{}, MultipoleKernel{}, psys, dinfo);
    const CommTraffic t = grove::commTraffic();
    worst.messages = std::max(worst.messages, t.messages_sent + t.messages_received);
    worst.bytes = std::max(worst.bytes, t.bytes_sent + t.bytes_received);
    worst.collectives = std::max(worst.collectives, t.collectives);
    worst.collective_bytes = std::max(worst.collective_bytes, t.collective_bytes);
    worst.alltoalls = std::max(worst.alltoalls, t.alltoalls);
  }
  // Every body still in its slab's rank, and forces came (the step did its work).
  const grove::Boxd mine = dinfo.getPosDomain(comm.rank());
  for (const Charged& c : psys) ASSERT_TRUE(mine.contains(c.pos)) << "body " << c.id;
  for (const Charged& c : psys) ASSERT_GT(grove::norm(c.result.acc), 0.0) << "body " << c.id;

  const std::int64_t max_messages = comm.allreduceMax(worst.messages);
  const std::int64_t max_bytes = comm.allreduceMax(worst.bytes);
  const std::int64_t max_collectives = comm.allreduceMax(worst.collectives);
  const std::int64_t max_collective_bytes = comm.allreduceMax(worst.collective_bytes);
  // A LET payload is at most a rank's particles twice over (EPJ and cells) to and from each of
  // its 8 peers; exchanged bodies are a few per cent of a rank's.
  const std::int64_t payload_bound =
      static_cast<std::int64_t>(16 * 2 * kBodiesPerRank * (sizeof(ChargedEP) + sizeof(grove::SPJMonopole)));
  if (comm.rank() == 0)
    std::printf("  %d ranks: per rank and step at most %lld messages, %lld bytes point to point; %lld collectives "
                "returning %lld bytes\n",
                ranks, static_cast<long long>(max_messages), static_cast<long long>(max_bytes),
                static_cast<long long>(max_collectives), static_cast<long long>(max_collective_bytes));
  EXPECT_LE(max_messages, kMaxMessagesPerStep);
  EXPECT_LE(max_bytes, payload_bound);
  EXPECT_LE(max_collectives, kMaxCollectivesPerStep);
  EXPECT_LE(max_collective_bytes, kSummaryBytes * ranks + 4096);
  EXPECT_EQ(comm.allreduceMax(worst.alltoalls), 0) << "an all-to-all costs every rank O(P) messages";
}

}  // namespace
