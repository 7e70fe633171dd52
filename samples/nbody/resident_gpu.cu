// samples/nbody --gpu resident (resident_gpu.h): the kick-drift-kick loop with every stage on the
// device. The integrator and the energies are functors run by grove::gpu::forEach and
// transformReduce; the forces come from grove::gpu::ResidentTreeLong with the same device
// interactions as the multiwalk engine (user_templates/cuda/gravity_interactions.cuh). On
// several ranks the domains come from samples taken on the device (decomposeDomainAll) and the
// particles move between ranks from the device (exchangeParticles), on list-building steps.
#include "resident_gpu.h"

#include <chrono>

#include "cuda/gravity_interactions.cuh"
#include "gravity_leapfrog.hpp"
#include "grove/gpu/device_gpu.h"
#include "grove/domain/decomposition_gpu.cuh"
#include "grove/particles/exchange_gpu.cuh"
#include "grove/gpu/for_each.cuh"
#include "grove/force/resident_tree_long.cuh"

namespace nbody {

namespace {

struct Energies {
  double kinetic = 0, potential = 0;
};
struct Add {
  GROVE_HOST_DEVICE Energies operator()(const Energies& a, const Energies& b) const {
    return {a.kinetic + b.kinetic, a.potential + b.potential};
  }
};
// The kernel's softened self term is -m/eps (the body is in its own list): taken out here.
struct EnergyOf {
  double eps;
  GROVE_HOST_DEVICE Energies operator()(const user::Body& b) const {
    return {0.5 * b.mass * (b.vel.x * b.vel.x + b.vel.y * b.vel.y + b.vel.z * b.vel.z),
            0.5 * b.mass * (b.pot + b.mass / eps)};
  }
};

template <class Tree, class Sp>
void loop(std::vector<user::Body>& bodies, const ResidentOptions& opt, Sp sp,
          const std::function<void(const ResidentStep&)>& on_step,
          const std::function<void(std::int64_t, double, const std::vector<user::Body>&)>& on_snapshot) {
  const float eps2 = static_cast<float>(opt.eps * opt.eps);
  const user::cuda::GravityEpInteraction ep{eps2};
  const grove::Comm comm = grove::Comm::world();
  grove::gpu::Stream stream;
  const grove::Gpu gpu{stream.get()};
  grove::gpu::DeviceParticleSystem<user::Body> psys(gpu);
  grove::gpu::ResidentTreeOptions tree_options;
  if (opt.lean_memory) {
    psys.setReorderMemory(grove::gpu::ReorderMemory::kInPlace);
    tree_options.fused_walk = true;  // MAKE_LIST steps only: MAKE_LIST_FOR_REUSE keeps its lists
  }
  psys.upload(bodies);
  Tree tree(opt.theta, opt.n_leaf, opt.n_group, gpu, tree_options);
  const auto build_mode = opt.n_reuse > 1 ? grove::MAKE_LIST_FOR_REUSE : grove::MAKE_LIST;
  grove::DomainInfo dinfo;
  if (opt.orb) dinfo.setDecompositionMethod(grove::DecompositionMethod::ORB);
  grove::gpu::ExchangeScratch exchange_scratch;
  grove::gpu::CountingScratch counting_scratch;
  using Clock = std::chrono::steady_clock;
  const auto since = [](Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); };
  // Several ranks: domains and particle moves, on list-building steps (the kept lists hold
  // particle positions in the array, which an exchange would change).
  auto distribute = [&](std::int64_t step) {
    if (comm.size() == 1) return 0.0;
    const auto t = Clock::now();
    if (step % opt.decompose_every == 0) {
      if (opt.counted_cuts) grove::gpu::decomposeDomainByCounting(dinfo, psys, counting_scratch);
      else grove::gpu::decomposeDomainAll(dinfo, psys);
    }
    grove::gpu::exchangeParticles(psys, dinfo, exchange_scratch);
    return since(t);
  };

  auto report = [&](std::int64_t step, double time, double seconds, double exchange_seconds) {
    Energies e = grove::gpu::transformReduce(gpu, psys, Energies{}, Add{}, EnergyOf{opt.eps});
    e.kinetic = comm.allreduceSum(e.kinetic), e.potential = comm.allreduceSum(e.potential);
    const grove::gpu::ResidentProfile& p = tree.profile();
    on_step({step, time, e.kinetic, e.potential, comm.allreduceMax(seconds), p.total, p.build(), p.lists + p.force,
             p.let(), exchange_seconds, p.interactions()});
  };
  auto start = Clock::now();
  double exchange_seconds = distribute(0);
  tree.calcForceAllAndWriteBack(psys, ep, sp, dinfo, build_mode);
  report(0, 0.0, since(start), exchange_seconds);
  double time = 0.0;
  for (std::int64_t step = 1; step <= opt.steps; ++step) {
    start = Clock::now();
    grove::gpu::forEach(gpu, psys, user::Kick{0.5 * opt.dt});
    grove::gpu::forEach(gpu, psys, user::Drift{opt.dt});
    time += opt.dt;
    const bool rebuild = step % opt.n_reuse == 0;
    exchange_seconds = rebuild ? distribute(step) : 0.0;
    tree.calcForceAllAndWriteBack(psys, ep, sp, dinfo, rebuild ? build_mode : grove::REUSE_LIST);
    grove::gpu::forEach(gpu, psys, user::Kick{0.5 * opt.dt});
    report(step, time, since(start), exchange_seconds);
    if ((opt.snapshot_every > 0 && step % opt.snapshot_every == 0) || step == opt.steps)
      on_snapshot(step, time, psys.download());
  }
  bodies = psys.download();
}

}  // namespace

void runResident(std::vector<user::Body>& bodies, const ResidentOptions& opt,
                 const std::function<void(const ResidentStep&)>& on_step,
                 const std::function<void(std::int64_t, double, const std::vector<user::Body>&)>& on_snapshot) {
  const float eps2 = static_cast<float>(opt.eps * opt.eps);
  using Monopole = grove::gpu::ResidentTreeLong<user::GravityForce, user::GravityEPI, user::GravityEPJ>;
  using Quadrupole = grove::gpu::ResidentTreeLong<user::GravityForce, user::GravityEPI, user::GravityEPJ,
                                                  grove::MomentQuadrupole, grove::SPJQuadrupole>;
  if (opt.quadrupole) loop<Quadrupole>(bodies, opt, user::cuda::GravityQuadrupoleSpInteraction{eps2}, on_step, on_snapshot);
  else loop<Monopole>(bodies, opt, user::cuda::GravityMonopoleSpInteraction{eps2}, on_step, on_snapshot);
}

}  // namespace nbody
