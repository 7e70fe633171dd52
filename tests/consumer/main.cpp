// Uses an installed grove through its public header only: decompose, exchange, and check that
// no particle was lost or duplicated and that each one now lies in its rank's domain.
// Exits non-zero when anything is wrong.
#include <cstdint>
#include <cstdio>

#include <grove/grove.hpp>

namespace {

struct Particle {
  std::int64_t id = 0;
  grove::Vec3d pos;
  grove::Vec3d getPos() const { return pos; }
};

constexpr int kPerRank = 1000;

}  // namespace

int main(int argc, char** argv) {
  grove::Runtime rt(argc, argv);
  const int rank = rt.rank(), ranks = rt.rankCount();

  // A deterministic cloud on each rank: rank r's particles spread over the unit cube, ids
  // r * kPerRank + i, so the global count and the id sum are known in advance.
  grove::ParticleSystem<Particle> psys;
  for (int i = 0; i < kPerRank; ++i) {
    Particle p;
    p.id = std::int64_t{rank} * kPerRank + i;
    const double t = (i + 0.5) / kPerRank;
    p.pos = grove::Vec3d(t, (t * 7.0) - static_cast<int>(t * 7.0), (t * 13.0 + 0.1 * rank) - static_cast<int>(t * 13.0 + 0.1 * rank));
    psys.add(p);
  }

  grove::DomainInfo dinfo;
  dinfo.decomposeDomainAll(psys);
  psys.exchangeParticle(dinfo);

  const grove::GlobalCount expected_count = grove::GlobalCount{ranks} * kPerRank;
  const grove::GlobalCount count = psys.globalCount();
  std::int64_t id_sum = 0, misplaced = 0;
  for (const Particle& p : psys) {
    id_sum += p.id;
    if (!dinfo.getPosDomain(rank).contains(p.pos) || dinfo.whichRank(p.pos) != rank) ++misplaced;
  }
  const std::int64_t total_id_sum = psys.comm().allreduceSum(id_sum);
  const std::int64_t total_misplaced = psys.comm().allreduceSum(misplaced);
  const std::int64_t expected_id_sum = expected_count * (expected_count - 1) / 2;

  grove::log("grove_consumer: grove {} (MPI {}), {} ranks, global count {} (expected {}), id sum {} (expected {}), "
             "{} particles outside their domain",
             GROVE_VERSION, rt.hasMpi() ? "on" : "off", ranks, count, expected_count, total_id_sum, expected_id_sum,
             total_misplaced);
  const bool ok = count == expected_count && total_id_sum == expected_id_sum && total_misplaced == 0;
  if (!ok) std::fprintf(stderr, "grove_consumer: FAILED on rank %d\n", rank);
  return ok ? 0 : 1;
}
