// samples/scaling: one run of a weak or strong scaling series. Run it under mpirun at each rank
// count (tools/scaling_series.py does, and computes efficiencies and plots); it prints one JSON
// line: ranks, GPUs, N, seconds per step of each stage (the slowest rank's mean over the timed
// steps), particles/s, interactions and LET sizes.
//
//   mpirun -np 2 scaling --mode strong --n 262144 --path cpu --steps 8
//   mpirun -np 2 scaling --mode weak --n 4194304 --path multiwalk --n-reuse 16   # n per rank
//
// Paths: cpu (grove's CPU tree and the user template's SIMD kernels), fmm (grove::FmmForce with the
// same kernel as its near field, expansions of --order), sph (the SPH sample's CPU step on Sod
// shock tubes, sph_steps.hpp), multiwalk (an FDPS-API program's own CUDA kernels through the
// index multiwalk, user_templates/cuda), resident (every stage on the GPU, grove/gpu/resident.cuh),
// sph-resident (the SPH sample's step on the GPU, user_templates/cuda/sph_resident.h, on the same tubes).
// The bodies are the Accelerated FDPS paper's cold uniform sphere (--ic cold) or a Plummer
// sphere (--ic plummer); weak runs hold n bodies per rank, strong runs n in all. A user program
// that decomposes, exchanges and rebuilds every step is --n-reuse 1 --decompose-every 1:
//
//   mpirun -np 4 scaling --mode weak -n 4194304 --path resident --ic plummer --eps 0.015625 \
//       --n-reuse 1 --decompose-every 1
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "gravity_kernels.hpp"
#include "grove/fmm/fmm_force.hpp"
#include "grove/grove.hpp"
#include "grove/force/tree_for_force_long.hpp"
#include "nbody_initial_conditions.hpp"
#include "sph_steps.hpp"
#include "stages.hpp"
#if GROVE_SCALING_GPU
#include "cuda/gravity_multiwalk_gpu.h"
#include "grove/gpu/device_gpu.h"
#include "resident_steps.h"
#endif

namespace {

struct Options {
  std::string mode = "strong";
  std::int64_t n = 1 << 18;
  std::string path = "cpu";
  std::string ic = "cold";
  int steps = 8, warmup = 1;
  double theta = 0.5, eps = 1.0 / 32.0, dt = 1.0 / 128.0;
  int n_leaf = 16, n_group = 0, n_reuse = 1, decompose_every = 4, n_walk = 2000, tag_max = 4;
  int order = 4;  // fmm: expansion order
  double n_neighbours = 50;  // sph
  std::string cuts = "sampled";  // resident: or counted (no rank-0 gather; see doc/scaling.md); the others sample
  std::string let = "reuse-overlap", transport = "auto";  // resident
  int group_target = 128;                               // resident (doc/scaling.md: groups that follow N)
  bool weighted = true;  // samples weighted by each rank's last force time
  bool tree_order = false;  // cpu, multiwalk: particles kept in the tree's key order (TREE_ORDER)
  int samples_per_rank = grove::DomainInfo::kDefaultSamplesPerRank;
  std::string label;
};

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// This rank's share of the n_total bodies (ids [n r / p, n (r + 1) / p)).
std::vector<user::Body> myShare(std::int64_t n_total, const std::string& ic, const grove::Comm& comm) {
  const std::int64_t begin = n_total * comm.rank() / comm.size(), end = n_total * (comm.rank() + 1) / comm.size();
  const bool plummer = ic == "plummer";
  return nbody::makeInParallel<user::Body>(begin, end, [&](std::int64_t id) {
    const nbody::Body b = plummer ? nbody::plummerSphere(id, n_total, 1) : nbody::coldUniformSphere(id, n_total, 1);
    user::Body u{};
    u.id = b.id, u.mass = b.mass, u.pos = b.pos, u.vel = b.vel;
    return u;
  });
}

// Host paths: the CPU tree, or the GPU multiwalk with the user template's kernels.
std::vector<scaling::StageSeconds> runHostSteps(const std::vector<user::Body>& start, const Options& opt,
                                                const grove::Runtime& runtime) {
  using Tree = grove::TreeForForceLong<user::GravityForce, user::GravityEPI, user::GravityEPJ>::Monopole;
  grove::ParticleSystem<user::Body> bodies;
  for (const auto& b : start) bodies.add(b);
  grove::DomainInfo dinfo;
  dinfo.setSampleCountPerRank(opt.samples_per_rank);
  const float eps2 = static_cast<float>(opt.eps * opt.eps);
  const user::GravityMonopoleKernel kernel{eps2};
  Tree tree(std::max<std::size_t>(bodies.size(), 1), opt.theta, opt.n_leaf, opt.n_group);
  if (opt.tree_order) tree.setParticleOrder(grove::ParticleOrder::TREE_ORDER);
  std::unique_ptr<grove::FmmForce<user::GravityForce, user::GravityEPI, user::GravityEPJ>> fmm;
  if (opt.path == "fmm")
    fmm = std::make_unique<grove::FmmForce<user::GravityForce, user::GravityEPI, user::GravityEPJ>>(
        bodies.size(), opt.theta, opt.n_leaf, opt.order);
#if GROVE_SCALING_GPU
  std::unique_ptr<user::cuda::GravityMultiwalkInterface<grove::SPJMonopole>> gpu;
  if (opt.path == "multiwalk") {
    grove::gpu::selectDeviceForRank(runtime.rank());
    gpu = user::cuda::makeGravityMultiwalk<grove::SPJMonopole>(eps2);
  }
#else
  (void)runtime;
#endif
  const auto build_mode = opt.n_reuse > 1 ? grove::MAKE_LIST_FOR_REUSE : grove::MAKE_LIST;
  std::vector<scaling::StageSeconds> timed;
  double work = 0.0;  // this rank's last force time: the weight of its samples (FDPS's balancing)
  for (int step = 0; step < opt.warmup + opt.steps; ++step) {
    scaling::StageSeconds s;
    const auto start_step = Clock::now();
    auto t = Clock::now();
#pragma omp parallel for schedule(static)
    for (std::size_t i = 0; i < bodies.size(); ++i) {
      bodies[i].vel += (0.5 * opt.dt) * bodies[i].acc;
      bodies[i].pos += opt.dt * bodies[i].vel;
    }
    s.integrate = since(t);
    const bool rebuild = fmm || step % opt.n_reuse == 0;  // the FMM builds every step
    if (rebuild) {
      t = Clock::now();
      if (step % opt.decompose_every == 0) {
        if (opt.weighted && work > 0.0) dinfo.decomposeDomainAll(bodies, work);
        else dinfo.decomposeDomainAll(bodies);
      }
      s.decompose = since(t);
      t = Clock::now();
      bodies.exchangeParticle(dinfo);
      s.exchange = since(t);
    }
    const auto mode = rebuild ? build_mode : grove::REUSE_LIST;
    if (fmm) {
      fmm->calcForceAllAndWriteBack(kernel, bodies, dinfo);
    } else {
#if GROVE_SCALING_GPU
      if (gpu)
        tree.calcForceAllAndWriteBackMultiWalkIndex(gpu->dispatch(), gpu->retrieve(), opt.tag_max, bodies, dinfo,
                                                    opt.n_walk, true, mode);
      else
#endif
        tree.calcForceAllAndWriteBack(kernel, kernel, bodies, dinfo, true, mode);
    }
    t = Clock::now();
#pragma omp parallel for schedule(static)
    for (std::size_t i = 0; i < bodies.size(); ++i) bodies[i].vel += (0.5 * opt.dt) * bodies[i].acc;
    s.integrate += since(t);
    s.step = since(start_step);
    if (fmm) {
      const grove::fmm::FmmStatistics& f = fmm->statistics();
      s.local_tree = f.copy_seconds + f.tree_seconds;
      s.let = f.let_seconds;
      s.walk_force = f.total() - s.local_tree - s.let;  // traversal, far and near field, write back
      s.interactions = f.p2p_interactions + f.m2l + f.m2p;
      s.let_received = f.let.cells_received + f.let.particles_received;
    } else {
      const grove::TreeProfile& p = tree.profile();
      s.local_tree = p.root_cell + p.keys + p.sort + p.reorder + p.link + p.local_moments;
      s.let = p.let_build + p.let_exchange;
      s.global_tree = p.global_tree + p.global_moments;
      s.walk_force = p.groups + p.walk + p.kernel + p.write_back;
      s.interactions = p.n_ep_ep + p.n_ep_sp;
      s.let_received = p.let_ep_received + p.let_sp_received;
    }
    s.n_local = static_cast<std::int64_t>(bodies.size());
    work = s.walk_force;
    if (step >= opt.warmup) timed.push_back(s);
  }
  return timed;
}

}  // namespace

int main(int argc, char** argv) {
  grove::Runtime runtime(argc, argv);
  Options opt;
  CLI::App app{"grove scaling sample: one run of a weak or strong series (one JSON line)"};
  app.add_option("--mode", opt.mode, "weak: --n bodies per rank; strong: --n bodies in all")
      ->check(CLI::IsMember({"weak", "strong"}));
  app.add_option("-n,--particles", opt.n, "bodies per rank (weak) or in all (strong)")->check(CLI::PositiveNumber);
  app.add_option("--path", opt.path, "force path")
      ->check(CLI::IsMember({"cpu", "fmm", "sph", "multiwalk", "resident", "sph-resident"}));
  app.add_option("--ic", opt.ic, "bodies: the cold uniform sphere or a Plummer sphere")
      ->check(CLI::IsMember({"cold", "plummer"}));
  app.add_option("--eps", opt.eps, "gravitational softening length")->check(CLI::PositiveNumber);
  app.add_option("--n-ngb", opt.n_neighbours, "sph: neighbours per particle")->check(CLI::PositiveNumber);
  app.add_option("--order", opt.order, "fmm: expansion order")->check(CLI::Range(1, grove::fmm::kMaxOrder));
  app.add_option("--steps", opt.steps, "timed steps")->check(CLI::PositiveNumber);
  app.add_option("--warmup", opt.warmup, "untimed steps first")->check(CLI::NonNegativeNumber);
  app.add_option("--theta", opt.theta, "opening angle")->check(CLI::NonNegativeNumber);
  app.add_option("--n-leaf", opt.n_leaf, "most particles in a leaf")->check(CLI::PositiveNumber);
  app.add_option("--n-group", opt.n_group, "most particles sharing one interaction list (default: 512 for gravity, 64 for sph)")
      ->check(CLI::PositiveNumber);
  app.add_option("--n-reuse", opt.n_reuse, "steps per list build (reuse in between)")->check(CLI::PositiveNumber);
  app.add_option("--decompose-every", opt.decompose_every, "steps between decompositions")->check(CLI::PositiveNumber);
  app.add_option("--n-walk", opt.n_walk, "multiwalk: walks per batch")->check(CLI::PositiveNumber);
  app.add_option("--tag-max", opt.tag_max, "multiwalk: batches in flight")->check(CLI::PositiveNumber);
  app.add_option("--cuts", opt.cuts,
                 "resident: domain cuts from samples gathered on rank 0 (default) or from counting every particle "
                 "on the devices (no gather; both weighted by force time unless --unweighted)")
      ->check(CLI::IsMember({"sampled", "counted"}));
  app.add_option("--let", opt.let,
                 "resident: the merged global tree, reuse steps overlapping the LET with the local part of the "
                 "force (reuse-overlap, default); the merged tree, nothing overlapped (merged); or the local tree "
                 "walked while the LET travels, then a tree of what arrived (let-tree)")
      ->check(CLI::IsMember({"reuse-overlap", "merged", "let-tree"}));
  app.add_option("--transport", opt.transport,
                 "resident: how LET payloads and exchanged particles travel (auto: CUDA IPC within a node, "
                 "CUDA-aware MPI, else pinned staging)")
      ->check(CLI::IsMember({"auto", "staged", "ipc", "mpi"}));
  app.add_option("--group-target", opt.group_target,
                 "resident: groups larger than this are cut into equal runs (0: FDPS's cell groups; default 128, "
                 "which keeps the cost per body level from 2^22 to 2^24 bodies)")
      ->check(CLI::NonNegativeNumber);
  app.add_flag("!--unweighted", opt.weighted,
               "every rank's particles (or samples) count alike in the cuts (default: weighted by the rank's last "
               "force time, FDPS's balancing)");
  app.add_flag("--tree-order", opt.tree_order,
               "cpu, multiwalk: keep the particles in the tree's key order, so that each step's passes over them "
               "stream through memory (grove::ParticleOrder::TREE_ORDER)");
  app.add_option("--samples-per-rank", opt.samples_per_rank, "sampled cuts: samples per rank")
      ->check(CLI::PositiveNumber);
  app.add_option("--label", opt.label, "free text copied into the JSON line");
  CLI11_PARSE(app, argc, argv);
  const bool sph_path = opt.path == "sph" || opt.path == "sph-resident";
  if (opt.n_group == 0) opt.n_group = sph_path ? 64 : 512;

  const grove::Comm comm = grove::Comm::world();
  const int ranks = comm.size();
  std::int64_t n_total = opt.mode == "weak" ? opt.n * ranks : opt.n;
  const std::vector<user::Body> bodies = sph_path ? std::vector<user::Body>{} : myShare(n_total, opt.ic, comm);

  std::vector<scaling::StageSeconds> timed;
  int gpus = 0;
  double let_peers = 0;  // resident: this rank's LET peers (sent to + received from), mean over steps
  if (opt.path == "sph") {
    scaling::SphRunOptions so;
    so.n_per_tube = opt.n, so.tubes = opt.mode == "weak" ? ranks : 1, so.n_neighbours = opt.n_neighbours;
    so.n_leaf = opt.n_leaf, so.n_group = opt.n_group, so.decompose_every = opt.decompose_every, so.steps = opt.steps, so.warmup = opt.warmup;
    timed = scaling::runSphSteps(so, &n_total);
  } else if (opt.path == "cpu" || opt.path == "fmm") {
    timed = runHostSteps(bodies, opt, runtime);
  } else {
#if GROVE_SCALING_GPU
    gpus = std::min(ranks, grove::gpu::deviceCount());
    if (gpus == 0) throw grove::Error("scaling", fmt::format("--path {} needs a CUDA device; none is visible", opt.path));
    if (opt.path == "multiwalk") {
      timed = runHostSteps(bodies, opt, runtime);
    } else if (opt.path == "sph-resident") {
      scaling::SphRunOptions so;
      so.n_per_tube = opt.n, so.tubes = opt.mode == "weak" ? ranks : 1, so.n_neighbours = opt.n_neighbours;
      so.n_leaf = app.count("--n-leaf") ? opt.n_leaf : 32, so.n_group = opt.n_group;
      so.decompose_every = opt.decompose_every, so.steps = opt.steps, so.warmup = opt.warmup;
      timed = scaling::runResidentSphSteps(so, &n_total, runtime.rank());
    } else {
      scaling::ResidentRunOptions ro;
      ro.theta = opt.theta, ro.eps = opt.eps, ro.dt = opt.dt, ro.n_leaf = opt.n_leaf, ro.n_group = opt.n_group;
      ro.n_reuse = opt.n_reuse, ro.decompose_every = opt.decompose_every, ro.steps = opt.steps;
      ro.warmup = opt.warmup, ro.counted_cuts = opt.cuts == "counted", ro.weighted = opt.weighted;
      ro.samples_per_rank = opt.samples_per_rank;
      ro.let = opt.let, ro.transport = opt.transport, ro.group_target = opt.group_target;
      timed = scaling::runResidentSteps(bodies, ro, &let_peers);
    }
#else
    throw grove::Error("scaling", fmt::format("--path {} needs a build with CUDA (GROVE_CUDA=ON)", opt.path));
#endif
  }

  // This rank's mean per step; the slowest rank's per stage; counts summed over ranks.
  scaling::StageSeconds mean;
  for (const auto& s : timed) mean += s;
  const double per = 1.0 / static_cast<double>(timed.size());
  auto slowest = [&](double v) { return comm.allreduceMax(v * per); };
  const double step = slowest(mean.step);
  const double interactions = static_cast<double>(comm.allreduceSum(mean.interactions)) * per;
  const double let_received = static_cast<double>(comm.allreduceSum(mean.let_received)) * per / ranks;
  const auto n_local = sph_path ? n_total / ranks : static_cast<std::int64_t>(bodies.size());
  const double imbalance = static_cast<double>(comm.allreduceMax(n_local)) * ranks / static_cast<double>(n_total);
  // How evenly the steps shared the particles and the force work (means over the timed steps).
  const double step_particles = static_cast<double>(mean.n_local) * per;
  const double particles_min = comm.allreduceMin(step_particles), particles_max = comm.allreduceMax(step_particles);
  const double walk_min = comm.allreduceMin(mean.walk_force * per);
  const std::string line = fmt::format(
      "{{\"sample\":\"scaling\",\"label\":\"{}\",\"path\":\"{}\",\"mode\":\"{}\",\"ranks\":{},\"threads\":{},"
      "\"ic\":\"{}\",\"eps\":{},\"tree_order\":{},\"let\":\"{}\",\"transport\":\"{}\",\"group_target\":{},\"let_peers_max\":{:.1f},"
      "\"cuts\":\"{}\",\"samples_per_rank\":{},"
      "\"gpus\":{},\"n_total\":{},\"n_per_rank\":{:.0f},\"theta\":{},\"leaf\":{},\"group\":{},\"order\":{},\"n_reuse\":{},"
      "\"steps\":{},\"seconds_per_step\":{:.6f},\"stages\":{{\"decompose\":{:.6f},\"exchange\":{:.6f},"
      "\"local_tree\":{:.6f},\"let\":{:.6f},\"global_tree\":{:.6f},\"walk_force\":{:.6f},\"integrate\":{:.6f}}},"
      "\"particles_per_s\":{:.4e},\"interactions_per_particle\":{:.1f},\"let_received_per_rank\":{:.0f},"
      "\"start_imbalance\":{:.3f},\"step_particles_min\":{:.0f},\"step_particles_max\":{:.0f},"
      "\"walk_force_min\":{:.6f}}}",
      opt.label, opt.path, opt.mode, ranks, runtime.threadCount(), sph_path ? "sod" : opt.ic, opt.eps, opt.tree_order,
      opt.path == "resident" ? opt.let : "-", opt.path == "resident" ? opt.transport : "-",
      opt.path == "resident" ? opt.group_target : 0, comm.allreduceMax(let_peers),
      opt.path == "resident" && opt.cuts == "counted" ? (opt.weighted ? "counted, weighted" : "counted")
                                                      : (opt.weighted ? "sampled, weighted" : "sampled"),
      opt.samples_per_rank,
      gpus, n_total,
      static_cast<double>(n_total) / ranks, opt.theta, opt.n_leaf, opt.n_group, opt.path == "fmm" ? opt.order : 0, opt.n_reuse, timed.size(), step,
      slowest(mean.decompose), slowest(mean.exchange), slowest(mean.local_tree), slowest(mean.let),
      slowest(mean.global_tree), slowest(mean.walk_force), slowest(mean.integrate),
      static_cast<double>(n_total) / step, interactions / static_cast<double>(n_total), let_received, imbalance,
      particles_min, particles_max, walk_min);
  if (comm.rank() == 0) std::printf("%s\n", line.c_str());
  return 0;
}
