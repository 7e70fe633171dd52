#pragma once
// samples/scaling --path sph: the SPH sample's CPU step (samples/sph: density pass with h
// iteration on a gather tree, hydro pass on a symmetry tree, kick-drift-kick with the global CFL
// step) on Sod shock tubes in a periodic box.
//   strong: one tube of about n particles (nx, a multiple of 8, from n = 9 nx^3 / 128);
//   weak:   one tube of about n particles per rank, the ranks' tubes side by side along x (box
//           P x 0.125 x 0.125), so every rank's share of the work is the same at every P.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <vector>

#include "grove/grove.hpp"
#include "shock_tube.hpp"
#include "sph/sph_solver.hpp"
#include "sph/sph_trees.hpp"
#include "stages.hpp"
#if GROVE_SCALING_GPU
#include "grove/gpu/device_gpu.h"
#include "cuda/sph_resident.h"
#endif

namespace scaling {

struct SphRunOptions {
  std::int64_t n_per_tube = 1 << 17;
  int tubes = 1;  // side by side along x
  double n_neighbours = 50;
  int n_leaf = 16, n_group = 64, decompose_every = 4, steps = 4, warmup = 1;
};

// The lattice resolution whose tube holds about n particles.
inline int sodResolutionFor(std::int64_t n) {
  const double nx = std::cbrt(128.0 * static_cast<double>(n) / 9.0);
  return std::max(8, static_cast<int>(std::lround(nx / 8.0)) * 8);
}

// This rank's share of the tubes (ids [n r / p, n (r + 1) / p)), the root domain and the
// periodic axes set, decomposed and exchanged; *n_total_out gets the particle count.
inline void placeTubes(const SphRunOptions& o, const sph::ShockTube& tube, grove::ParticleSystem<sph::GasParticle>& gas,
                       grove::DomainInfo& dinfo, std::int64_t* n_total_out) {
  dinfo.setBoundaryCondition(grove::BoundaryCondition::PERIODIC_XYZ);
  dinfo.setPosRootDomain({0.0, 0.0, 0.0}, {tube.box.x * o.tubes, tube.box.y, tube.box.z});
  const std::int64_t per_tube = tube.count(), n_total = per_tube * o.tubes;
  const grove::Comm& comm = gas.comm();
  const std::int64_t begin = n_total * comm.rank() / comm.size(), end = n_total * (comm.rank() + 1) / comm.size();
  for (std::int64_t id = begin; id < end; ++id) {
    sph::GasParticle g = tube.particle(id % per_tube, o.n_neighbours);
    g.id = id;
    g.pos.x += tube.box.x * static_cast<double>(id / per_tube);
    gas.add(g);
  }
  *n_total_out = n_total;
  dinfo.decomposeDomainAll(gas);
  gas.exchangeParticle(dinfo);
}

inline std::vector<StageSeconds> runSphSteps(const SphRunOptions& o, std::int64_t* n_total_out) {
  using Clock = std::chrono::steady_clock;
  auto since = [](Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); };
  const sph::ShockTube tube(sodResolutionFor(o.n_per_tube));
  grove::ParticleSystem<sph::GasParticle> gas;
  grove::DomainInfo dinfo;
  placeTubes(o, tube, gas, dinfo, n_total_out);

  sph::SolverParameters p;
  p.gamma = tube.gamma, p.n_neighbours = o.n_neighbours, p.max_search_radius = sph::maxSearchRadius(dinfo);
  sph::DensityTree density_tree;
  sph::HydroTree hydro_tree;
  density_tree.initialize(std::max<std::size_t>(gas.size(), 1), 0.0, o.n_leaf, o.n_group);
  hydro_tree.initialize(std::max<std::size_t>(gas.size(), 1), 0.0, o.n_leaf, o.n_group);
  sph::computeDensity(density_tree, gas, dinfo, p);
  sph::computeHydroForces(hydro_tree, gas, dinfo, p);
  double dt = sph::globalTimeStep(gas, p);

  std::vector<StageSeconds> timed;
  for (int step = 0; step < o.warmup + o.steps; ++step) {
    StageSeconds s;
    const auto start_step = Clock::now();
    auto t = Clock::now();
    sph::kickDriftPredict(gas, dt);
    gas.adjustPositionIntoRootDomain(dinfo);
    s.integrate = since(t);
    t = Clock::now();
    if (step % o.decompose_every == 0) dinfo.decomposeDomainAll(gas);
    s.decompose = since(t);
    t = Clock::now();
    gas.exchangeParticle(dinfo);
    s.exchange = since(t);
    sph::computeDensity(density_tree, gas, dinfo, p);
    sph::computeHydroForces(hydro_tree, gas, dinfo, p);
    t = Clock::now();
    sph::finalKick(gas, dt);
    dt = sph::globalTimeStep(gas, p);
    s.integrate += since(t);
    s.step = since(start_step);
    // The trees' last calls (a density pass repeated for short searches counts once).
    for (const grove::TreeProfile* q : {&density_tree.profile(), &hydro_tree.profile()}) {
      s.local_tree += q->root_cell + q->keys + q->sort + q->reorder + q->link + q->local_moments;
      s.let += q->let_build + q->let_exchange;
      s.global_tree += q->global_tree + q->global_moments;
      s.walk_force += q->groups + q->walk + q->kernel + q->write_back;
      s.interactions += q->n_ep_ep;
      s.let_received += q->let_ep_received;
    }
    if (step >= o.warmup) timed.push_back(s);
  }
  return timed;
}

#if GROVE_SCALING_GPU
// samples/scaling --path sph-resident: the SPH sample's step on the GPU (user_templates/cuda/sph_resident.h:
// density with the h iteration, hydro, kick-drift-kick, the decomposition and exchange of device
// particles, the short-range trees' LET between ranks), one GPU per rank, on the same tubes.
inline std::vector<StageSeconds> runResidentSphSteps(const SphRunOptions& o, std::int64_t* n_total_out, int rank) {
  using Clock = std::chrono::steady_clock;
  auto since = [](Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); };
  grove::gpu::selectDeviceForRank(rank);
  const sph::ShockTube tube(sodResolutionFor(o.n_per_tube));
  grove::ParticleSystem<sph::GasParticle> gas;
  grove::DomainInfo dinfo;
  placeTubes(o, tube, gas, dinfo, n_total_out);
  sph::SolverParameters p;
  p.gamma = tube.gamma, p.n_neighbours = o.n_neighbours, p.max_search_radius = sph::maxSearchRadius(dinfo);
  sph::ResidentSph device(p, dinfo, o.n_leaf);
  device.upload(std::vector<sph::GasParticle>(gas.begin(), gas.end()));
  device.density();
  device.hydro();
  double dt = device.timeStep();
  std::vector<StageSeconds> timed;
  for (int step = 0; step < o.warmup + o.steps; ++step) {
    StageSeconds s;
    const auto start_step = Clock::now();
    auto t = Clock::now();
    device.kickDriftPredict(dt);
    s.integrate = since(t);
    s.exchange = device.distribute(step % o.decompose_every == 0);  // decomposition included
    device.density();
    device.hydro();
    t = Clock::now();
    device.finalKick(dt);
    dt = device.timeStep();
    s.integrate += since(t);
    s.step = since(start_step);
    for (const grove::gpu::ResidentShortProfile* q : {&device.densityProfile(), &device.hydroProfile()}) {
      s.local_tree += q->build();
      s.let += q->let;
      s.global_tree += q->global_tree;
      s.walk_force += q->search + q->force + q->write_back;
      s.interactions += q->neighbours;
      s.let_received += q->let_received;
    }
    if (step >= o.warmup) timed.push_back(s);
  }
  return timed;
}
#endif

}  // namespace scaling
