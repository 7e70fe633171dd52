// samples/scaling --path resident (resident_steps.h): the GPU-resident step, timed stage by stage.
// Device stages come from the tree's CUDA-event profile; decomposition, exchange and the whole
// step from the host clock after the device is done.
#include "resident_steps.h"

#include <chrono>

#include "cuda/gravity_interactions.cuh"
#include "gravity_leapfrog.hpp"
#include "grove/gpu/device_gpu.h"
#include "grove/domain/decomposition_gpu.cuh"
#include "grove/particles/exchange_gpu.cuh"
#include "grove/gpu/for_each.cuh"
#include "grove/force/resident_tree_long.cuh"

namespace scaling {

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

grove::gpu::TransportChoice transportNamed(const std::string& name) {
  if (name == "staged") return grove::gpu::TransportChoice::kStaged;
  if (name == "ipc") return grove::gpu::TransportChoice::kIpc;
  if (name == "mpi") return grove::gpu::TransportChoice::kMpi;
  return grove::gpu::TransportChoice::kAuto;
}

}  // namespace

std::vector<StageSeconds> runResidentSteps(const std::vector<user::Body>& bodies, const ResidentRunOptions& opt,
                                           double* let_peers) {
  const grove::Comm comm = grove::Comm::world();
  grove::gpu::selectDeviceForRank(comm.rank());
  const float eps2 = static_cast<float>(opt.eps * opt.eps);
  const user::cuda::GravityEpInteraction ep{eps2};
  const user::cuda::GravityMonopoleSpInteraction sp{eps2};
  grove::gpu::Stream stream;
  const grove::Gpu gpu{stream.get()};
  grove::gpu::DeviceParticleSystem<user::Body> psys(gpu);
  psys.upload(bodies);
  grove::gpu::ResidentTreeOptions options;
  using LetOverlap = grove::gpu::ResidentTreeOptions::LetOverlap;
  options.let_overlap = opt.let == "merged"     ? LetOverlap::kNone
                        : opt.let == "let-tree" ? LetOverlap::kLetTree
                                                : LetOverlap::kReuseSteps;
  options.transport = transportNamed(opt.transport);
  options.group_target = opt.group_target;
  grove::gpu::ResidentTreeLong<user::GravityForce, user::GravityEPI, user::GravityEPJ> tree(
      opt.theta, opt.n_leaf, opt.n_group, gpu, options);
  *let_peers = 0.0;
  grove::DomainInfo dinfo;
  dinfo.setSampleCountPerRank(opt.samples_per_rank);
  grove::gpu::ExchangeScratch scratch;
  grove::gpu::CountingScratch counting;
  const auto build_mode = opt.n_reuse > 1 ? grove::MAKE_LIST_FOR_REUSE : grove::MAKE_LIST;
  std::vector<StageSeconds> timed;
  double work = 0.0;  // the last step's device force time: the weight of this rank's samples
  for (int step = 0; step < opt.warmup + opt.steps; ++step) {
    StageSeconds s;
    const auto start = Clock::now();
    auto t = Clock::now();
    grove::gpu::forEach(gpu, psys, user::Kick{0.5 * opt.dt});
    grove::gpu::forEach(gpu, psys, user::Drift{opt.dt});
    grove::gpu::check(cudaStreamSynchronize(gpu.stream), "cudaStreamSynchronize (kick, drift)");
    s.integrate = since(t);
    const bool rebuild = step % opt.n_reuse == 0;
    if (rebuild) {
      t = Clock::now();
      if (step % opt.decompose_every == 0) {
        if (opt.counted_cuts)
          grove::gpu::decomposeDomainByCounting(dinfo, psys, counting, {},
                                                opt.weighted && work > 0.0 ? std::optional<double>(work) : std::nullopt);
        else if (opt.weighted && work > 0.0) grove::gpu::decomposeDomainAll(dinfo, psys, work);
        else grove::gpu::decomposeDomainAll(dinfo, psys);
      }
      s.decompose = since(t);
      t = Clock::now();
      grove::gpu::exchangeParticles(psys, dinfo, scratch);
      s.exchange = since(t);
    }
    tree.calcForceAllAndWriteBack(psys, ep, sp, dinfo, rebuild ? build_mode : grove::REUSE_LIST);
    t = Clock::now();
    grove::gpu::forEach(gpu, psys, user::Kick{0.5 * opt.dt});
    grove::gpu::check(cudaStreamSynchronize(gpu.stream), "cudaStreamSynchronize (kick)");
    s.integrate += since(t);
    s.step = since(start);
    const grove::gpu::ResidentProfile& p = tree.profile();
    s.local_tree = p.build();
    s.let = p.let_select + p.let_exchange;
    s.global_tree = p.global_tree;
    s.walk_force = p.lists + p.force + p.write_back;
    work = s.walk_force;
    s.interactions = p.interactions();
    s.let_received = p.let_ep_received + p.let_sp_received;
    s.n_local = static_cast<std::int64_t>(psys.size());
    if (step >= opt.warmup) {
      timed.push_back(s);
      *let_peers += static_cast<double>(p.let_peers) / opt.steps;
    }
  }
  return timed;
}

}  // namespace scaling
