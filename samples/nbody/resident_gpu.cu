// samples/nbody --gpu resident (resident_gpu.h): the kick-drift-kick loop with every stage on the
// device. The integrator and the energies are functors run by grove::gpu::forEach and
// transformReduce; the forces come from grove::gpu::ResidentTreeLong with the same device
// interactions as the multiwalk engine (user_templates/cuda/gravity_interactions.cuh).
#include "resident_gpu.h"

#include <chrono>

#include "cuda/gravity_interactions.cuh"
#include "grove/gpu/resident/for_each.cuh"
#include "grove/gpu/resident/resident_tree.cuh"

namespace nbody {

namespace {

struct HalfKick {
  double half_dt;
  GROVE_HOST_DEVICE void operator()(user::Body& b) const { b.vel += half_dt * b.acc; }
};
struct Drift {
  double dt;
  GROVE_HOST_DEVICE void operator()(user::Body& b) const { b.pos += dt * b.vel; }
};
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
  grove::gpu::Stream stream;
  const grove::Gpu gpu{stream.get()};
  grove::gpu::DeviceParticleSystem<user::Body> psys(gpu);
  psys.upload(bodies);
  Tree tree(opt.theta, opt.n_leaf, opt.n_group, gpu);
  const auto build_mode = opt.n_reuse > 1 ? grove::MAKE_LIST_FOR_REUSE : grove::MAKE_LIST;

  auto report = [&](std::int64_t step, double time, double seconds) {
    const Energies e = grove::gpu::transformReduce(gpu, psys, Energies{}, Add{}, EnergyOf{opt.eps});
    const grove::gpu::ResidentProfile& p = tree.profile();
    on_step({step, time, e.kinetic, e.potential, seconds, p.total, p.build(), p.lists + p.force, p.interactions()});
  };
  auto start = std::chrono::steady_clock::now();
  tree.calcForceAllAndWriteBack(psys, ep, sp, build_mode);
  report(0, 0.0, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  double time = 0.0;
  for (std::int64_t step = 1; step <= opt.steps; ++step) {
    start = std::chrono::steady_clock::now();
    grove::gpu::forEach(gpu, psys, HalfKick{0.5 * opt.dt});
    grove::gpu::forEach(gpu, psys, Drift{opt.dt});
    time += opt.dt;
    tree.calcForceAllAndWriteBack(psys, ep, sp, step % opt.n_reuse == 0 ? build_mode : grove::REUSE_LIST);
    grove::gpu::forEach(gpu, psys, HalfKick{0.5 * opt.dt});
    report(step, time, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
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
