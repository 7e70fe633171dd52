#pragma once
// The benchmarks' initial state: this rank's share of the Accelerated FDPS paper's cold uniform
// sphere of n bodies (ids [n r / p, n (r + 1) / p), seed 1) as the user templates' Body,
// decomposed and exchanged.
#include <cstdint>

#include "nbody_initial_conditions.hpp"
#include "gravity_particles.hpp"
#include "grove/grove.hpp"

namespace bench {

inline void makeColdSphere(std::int64_t n, grove::ParticleSystem<user::Body>& psys, grove::DomainInfo& dinfo) {
  const int rank = psys.comm().rank(), ranks = psys.comm().size();
  const std::int64_t begin = n * rank / ranks, end = n * (rank + 1) / ranks;
  psys.resize(static_cast<std::size_t>(end - begin));
#pragma omp parallel for schedule(static)
  for (std::int64_t id = begin; id < end; ++id) {
    const nbody::Body b = nbody::coldUniformSphere(id, n, 1);
    user::Body& u = psys[static_cast<std::size_t>(id - begin)];
    u.id = b.id, u.mass = b.mass, u.pos = b.pos, u.vel = b.vel;
  }
  dinfo.decomposeDomainAll(psys);
  psys.exchangeParticle(dinfo);
}

}  // namespace bench
