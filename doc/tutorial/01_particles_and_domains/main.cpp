// Tutorial 01: particles and domains. Each rank makes its own particles, grove cuts space into
// one domain per rank from samples of them, and the exchange sends every particle to the rank
// whose domain holds it. The program checks what it claims and exits non-zero otherwise.
#include <cstdint>
#include <random>

#include <grove/grove.hpp>

// A particle is any trivially copyable struct with getPos(); grove moves it between ranks as bytes.
struct Particle {
  std::int64_t id = 0;
  grove::Vec3d pos;
  grove::Vec3d getPos() const { return pos; }
};

int main(int argc, char** argv) {
  grove::Runtime runtime(argc, argv);  // MPI and OpenMP set up; an uncaught grove::Error ends every rank
  const int rank = runtime.rank(), ranks = runtime.rankCount();

  // 1. Particles where a program happens to make them: here a clump per rank, placed at random.
  grove::ParticleSystem<Particle> particles;
  std::mt19937_64 rng(12345 + rank);
  std::normal_distribution<double> around(0.0, 0.15);
  const std::int64_t per_rank = 20000;
  for (std::int64_t i = 0; i < per_rank; ++i)
    particles.add({rank * per_rank + i, {0.5 + around(rng), 0.5 + around(rng), 0.5 + around(rng)}});

  // 2. Domains: one box per rank, cut (multisection by default) so that each holds about as many
  //    particles; grove samples the particles of all ranks to place the cuts.
  grove::DomainInfo domains;
  domains.decomposeDomainAll(particles);

  // 3. The exchange: each particle goes to the rank whose domain contains it.
  particles.exchangeParticle(domains);

  // What a user can rely on afterwards: every particle still there once, each in its rank's box.
  std::int64_t outside = 0;
  for (const Particle& p : particles) outside += domains.getPosDomain(rank).contains(p.pos) ? 0 : 1;
  const std::int64_t total = particles.comm().allreduceSum(static_cast<std::int64_t>(particles.size()));
  const std::int64_t largest = particles.comm().allreduceMax(static_cast<std::int64_t>(particles.size()));
  outside = particles.comm().allreduceSum(outside);
  const grove::Boxd mine = domains.getPosDomain(rank);
  grove::log("rank 0's domain: [{:.3f}, {:.3f}] x [{:.3f}, {:.3f}] x [{:.3f}, {:.3f}]", mine.low.x, mine.high.x,
             mine.low.y, mine.high.y, mine.low.z, mine.high.z);
  grove::log("{} particles on {} ranks (expected {}), the fullest rank holds {} (mean {}), {} outside their domain",
             total, ranks, per_rank * ranks, largest, per_rank, outside);
  const bool balanced = static_cast<double>(largest) <= 1.10 * static_cast<double>(per_rank);
  return total == per_rank * ranks && outside == 0 && balanced ? 0 : 1;
}
