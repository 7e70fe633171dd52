// The Accelerated FDPS paper's Table 2 for grove: per-stage seconds of one step for
//   C1  CPU kernels                       (calcForceAllAndWriteBack)
//   G1  GPU multiwalk, plain form         (calcForceAllAndWriteBackMultiWalk)
//   G2  GPU multiwalk, index form         (calcForceAllAndWriteBackMultiWalkIndex, MAKE_LIST)
//   G3  index form + list reuse           (MAKE_LIST_FOR_REUSE, then n_reuse - 1 REUSE_LIST steps)
// Cold uniform sphere, leapfrog; exchange and decomposition only on list-building steps (so a
// reuse cycle keeps its particles). Plain arguments (the GPU machine has no CLI11):
//   gravity_table2 [N=4194304] [theta=0.5] [n_leaf=16] [n_group=512] [n_walk=1000] [steps=4]
//                  [n_reuse=16] [modes=C1,G1,G2,G3] [order=tree|keep] [tag_max=4]
// order: the trees' ParticleOrder (TREE_ORDER: the particles move into key order on every
// list-building step, so that refresh and write-back stream; KEEP_ORDER: FDPS's behaviour).
// tag_max: the multiwalk's tags, that is batches in flight (one CUDA stream each in the template).
// Prints one JSON line per step and per mode, and a table at the end.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <numeric>
#include <string>
#include <vector>

#include "cold_sphere.hpp"
#include "cuda/gravity_multiwalk_gpu.h"
#include "gravity_kernels.hpp"
#include "grove/gpu/device_gpu.h"
#include "grove/grove.hpp"

namespace {

using Tree = grove::TreeForForceLong<user::GravityForce, user::GravityEPI, user::GravityEPJ>::Monopole;
using Psys = grove::ParticleSystem<user::Body>;

double now() { return omp_get_wtime(); }

struct ModeResult {
  std::string mode;
  double mean_step = 0, build_step = 0, reuse_step = 0;
  // G3's reuse steps: the median and the slowest besides the mean. On the GPU machine (a VM) a
  // step now and then runs 2-10x slower, every host stage at once; the median shows the typical
  // step, the slowest how far such a step pulled the mean.
  double reuse_step_median = 0, reuse_step_max = 0;
  grove::TreeProfile profile;  // of the last step (of a reuse step for G3)
  grove::TreeProfile build_profile;
  double kernel_seconds_per_step = 0, startup_seconds_per_step = 0, interactions_per_step = 0;
  double force_median_diff = 0, force_max_diff = 0;  // vs C1 at the same positions (first step)
  double error_vs_direct = 0;                          // median, first step
  // Sums over the measured steps: the sample's own kick/drift, decomposition + exchange, and the
  // tree call as a whole (its stages are in `profile`).
  double outside_force = 0, integrate = 0, domain = 0, force_call = 0;
  int steps = 1;
};

void drift(Psys& psys, double dt) {
#pragma omp parallel for schedule(static)
  for (std::size_t i = 0; i < psys.size(); ++i) {
    psys[i].vel += (0.5 * dt) * psys[i].acc;
    psys[i].pos += dt * psys[i].vel;
  }
}
void kick(Psys& psys, double dt) {
#pragma omp parallel for schedule(static)
  for (std::size_t i = 0; i < psys.size(); ++i) psys[i].vel += (0.5 * dt) * psys[i].acc;
}

// The accelerations in the order of the bodies' ids (a tree with TREE_ORDER moves the bodies).
std::vector<grove::Vec3d> accelerations(const Psys& psys) {
  std::vector<std::pair<std::int64_t, grove::Vec3d>> by_id(psys.size());
  for (std::size_t i = 0; i < psys.size(); ++i) by_id[i] = {psys[i].id, psys[i].acc};
  std::sort(by_id.begin(), by_id.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<grove::Vec3d> a(psys.size());
  for (std::size_t i = 0; i < psys.size(); ++i) a[i] = by_id[i].second;
  return a;
}

std::pair<double, double> relativeDifference(const std::vector<grove::Vec3d>& a, const std::vector<grove::Vec3d>& ref) {
  std::vector<double> d(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) d[i] = grove::norm(a[i] - ref[i]) / grove::norm(ref[i]);
  std::sort(d.begin(), d.end());
  return d.empty() ? std::pair{0.0, 0.0} : std::pair{d[d.size() / 2], d.back()};
}

// Median relative error of the tree's accelerations against direct summation over every rank's
// bodies, for about `samples` bodies spread over the ranks.
double medianErrorVsDirect(const Psys& psys, double eps, std::size_t samples) {
  const grove::Comm& comm = psys.comm();
  const auto all = comm.allgatherv(psys.particles());
  const std::size_t n = psys.size(), share = std::max<std::size_t>(1, samples / static_cast<std::size_t>(comm.size()));
  const std::size_t stride = std::max<std::size_t>(1, n / share);
  std::vector<std::size_t> picks;
  for (std::size_t i = 0; i < n; i += stride) picks.push_back(i);
  std::vector<double> err(picks.size());
#pragma omp parallel for schedule(dynamic, 4)
  for (std::size_t k = 0; k < picks.size(); ++k) {
    const auto& b = psys[picks[k]];
    grove::Vec3d acc;
    for (const auto& other : all) {
      if (other.id == b.id) continue;
      const grove::Vec3d d = other.pos - b.pos;
      const double r2 = grove::norm2(d) + eps * eps;
      acc += (other.mass / (r2 * std::sqrt(r2))) * d;
    }
    err[k] = grove::norm(b.acc - acc) / grove::norm(acc);
  }
  std::vector<double> gathered = comm.allgatherv(err);
  std::sort(gathered.begin(), gathered.end());
  return gathered.empty() ? 0.0 : gathered[gathered.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  grove::Runtime runtime(argc, argv);
  auto arg = [&](int i, double fallback) { return argc > i ? std::atof(argv[i]) : fallback; };
  const auto n = static_cast<std::int64_t>(arg(1, 1 << 22));
  const double theta = arg(2, 0.5);
  const int n_leaf = static_cast<int>(arg(3, 16)), n_group = static_cast<int>(arg(4, 512));
  const int n_walk = static_cast<int>(arg(5, 1000)), steps = static_cast<int>(arg(6, 4));
  const int n_reuse = static_cast<int>(arg(7, 16));
  const std::string modes = argc > 8 ? argv[8] : "C1,G1,G2,G3";
  const std::string order = argc > 9 ? argv[9] : "tree";
  const auto particle_order = order == "keep" ? grove::ParticleOrder::KEEP_ORDER : grove::ParticleOrder::TREE_ORDER;
  const double eps = 1.0 / 64.0, dt = 1.0 / 256.0;
  const float eps2 = static_cast<float>(eps * eps);
  const int tag_max = argc > 10 ? std::atoi(argv[10]) : 4;

  const bool have_gpu = grove::gpu::deviceCount() > 0;
  if (have_gpu) grove::gpu::selectDeviceForRank(runtime.rank());  // several ranks may share one GPU
  grove::log("gravity_table2: N = {}, theta = {}, leaf {}, group {}, n_walk {}, tag_max {}, {}, {} threads, GPU: {}", n,
             theta, n_leaf, n_group, n_walk, tag_max, grove::toString(particle_order), runtime.threadCount(),
             have_gpu ? grove::gpu::deviceInfo(grove::gpu::currentDevice()).name : std::string("none (GPU modes skipped)"));

  // Initial conditions, kept so that every mode starts from the same state.
  Psys initial;
  grove::DomainInfo dinfo;
  bench::makeColdSphere(n, initial, dinfo);

  const user::GravityMonopoleKernel cpu_kernel{eps2};
  std::vector<grove::Vec3d> reference;  // C1's first-step accelerations
  std::vector<ModeResult> results;
  std::unique_ptr<user::cuda::GravityMultiwalkInterface<grove::SPJMonopole>> gpu;
  if (have_gpu) gpu = user::cuda::makeGravityMultiwalk<grove::SPJMonopole>(eps2);

  for (const std::string mode : {"C1", "G1", "G2", "G3"}) {
    if (modes.find(mode) == std::string::npos) continue;
    if (mode != "C1" && !have_gpu) continue;
    Psys psys = initial;
    Tree tree(psys.size(), theta, n_leaf, n_group);
    tree.setParticleOrder(particle_order);
    ModeResult result;
    result.mode = mode;
    auto force = [&](grove::InteractionListMode list_mode) {
      if (mode == "C1")
        tree.calcForceAllAndWriteBack(cpu_kernel, cpu_kernel, psys, dinfo);
      else if (mode == "G1")
        tree.calcForceAllAndWriteBackMultiWalk(gpu->dispatchPlain(), gpu->retrieve(), tag_max, psys, dinfo, n_walk);
      else
        tree.calcForceAllAndWriteBackMultiWalkIndex(gpu->dispatch(), gpu->retrieve(), tag_max, psys, dinfo, n_walk,
                                                    true, list_mode);
    };
    // First force at the initial positions (also warms up the device and the allocations).
    force(mode == "G3" ? grove::MAKE_LIST_FOR_REUSE : grove::MAKE_LIST);
    result.error_vs_direct = medianErrorVsDirect(psys, eps, 1000);
    grove::log("{} median relative error vs direct summation (1000 sampled bodies, {} ranks): {:.3e}", mode,
               runtime.rankCount(), result.error_vs_direct);
    if (mode == "C1") {
      reference = accelerations(psys);
    } else if (!reference.empty()) {
      std::tie(result.force_median_diff, result.force_max_diff) = relativeDifference(accelerations(psys), reference);
    }
    if (gpu) gpu->resetStats();
    const int measured = mode == "G3" ? n_reuse : steps;
    double total = 0;
    std::vector<double> reuse_steps;
    for (int s = 0; s < measured; ++s) {
      const bool rebuild = mode != "G3" || s % n_reuse == 0;
      const auto list_mode = mode != "G3" ? grove::MAKE_LIST : (rebuild ? grove::MAKE_LIST_FOR_REUSE : grove::REUSE_LIST);
      const double t0 = now();
      drift(psys, dt);
      const double t1 = now();
      if (rebuild) {
        if (s % 4 == 0) dinfo.decomposeDomainAll(psys);
        psys.exchangeParticle(dinfo);
      }
      const double t2 = now();
      force(list_mode);
      const double t3 = now();
      kick(psys, dt);
      const double t4 = now();
      const double step = psys.comm().allreduceMax(t4 - t0);
      result.outside_force += (t1 - t0) + (t4 - t3) + (t2 - t1);
      result.integrate += (t1 - t0) + (t4 - t3);
      result.domain += t2 - t1;
      result.force_call += t3 - t2;
      total += step;
      if (mode == "G3" && !rebuild) reuse_steps.push_back(step);
      if (mode == "G3" && rebuild) result.build_step = step, result.build_profile = tree.profile();
      grove::log(R"({{"mode":"{}","step":{},"list_mode":"{}","step_s":{:.4f},"tree":{}}})", mode, s,
                 grove::toString(list_mode), step, tree.profile().json());
    }
    result.mean_step = total / measured;
    result.steps = measured;
    if (!reuse_steps.empty()) {
      result.reuse_step = std::accumulate(reuse_steps.begin(), reuse_steps.end(), 0.0) / reuse_steps.size();
      std::sort(reuse_steps.begin(), reuse_steps.end());
      const std::size_t m = reuse_steps.size();
      result.reuse_step_median = m % 2 ? reuse_steps[m / 2] : 0.5 * (reuse_steps[m / 2 - 1] + reuse_steps[m / 2]);
      result.reuse_step_max = reuse_steps.back();
    }
    result.profile = tree.profile();
    result.interactions_per_step = static_cast<double>(tree.profile().n_ep_ep + tree.profile().n_ep_sp);
    if (gpu && mode != "C1") {
      result.kernel_seconds_per_step = gpu->stats().kernel_seconds / measured;
      result.startup_seconds_per_step = gpu->stats().startup_seconds / measured;
    }
    results.push_back(result);
  }

  // Table 2: per-stage seconds of a step (G3: the reuse step's profile, and the build step).
  grove::log("\nTable 2 (seconds per step; N = {}, theta = {}, leaf {}, group {}, n_walk {}):", n, theta, n_leaf,
             n_group, n_walk);
  grove::log("{:<24}{}", "stage", [&] {
    std::string h;
    for (const auto& r : results) h += fmt::format("{:>11}", r.mode);
    return h;
  }());
  auto row = [&](const char* name, auto get) {
    std::string line = fmt::format("{:<24}", name);
    for (const auto& r : results) line += fmt::format("{:>11.4f}", get(r));
    grove::log("{}", line);
  };
  row("root+keys+sort", [](const ModeResult& r) { return r.profile.root_cell + r.profile.keys + r.profile.sort; });
  row("reorder / refresh", [](const ModeResult& r) { return r.profile.reorder; });
  row("link", [](const ModeResult& r) { return r.profile.link; });
  row("moments", [](const ModeResult& r) { return r.profile.local_moments + r.profile.global_moments; });
  row("LET + global tree", [](const ModeResult& r) {
    return r.profile.let_build + r.profile.let_exchange + r.profile.global_tree;
  });
  row("groups + walk/pack", [](const ModeResult& r) { return r.profile.groups + r.profile.walk; });
  row("kernel / device", [](const ModeResult& r) { return r.profile.kernel; });
  row("write back", [](const ModeResult& r) { return r.profile.write_back; });
  row("step (mean)", [](const ModeResult& r) { return r.mean_step; });
  row("tree call (whole)", [](const ModeResult& r) { return r.force_call / r.steps; });
  row("kick + drift", [](const ModeResult& r) { return r.integrate / r.steps; });
  row("decompose + exchange", [](const ModeResult& r) { return r.domain / r.steps; });
  row("G3 build step", [](const ModeResult& r) { return r.build_step; });
  row("G3 reuse step", [](const ModeResult& r) { return r.reuse_step; });
  row("G3 reuse step median", [](const ModeResult& r) { return r.reuse_step_median; });
  row("G3 reuse step slowest", [](const ModeResult& r) { return r.reuse_step_max; });
  row("device kernel s/step", [](const ModeResult& r) { return r.kernel_seconds_per_step; });
  row("upload->1st kernel s/step", [](const ModeResult& r) { return r.startup_seconds_per_step; });
  for (const auto& r : results) {
    const double ipp = r.interactions_per_step / static_cast<double>(n);
    grove::log(R"({{"summary":"{}","n":{},"theta":{},"n_leaf":{},"n_group":{},"n_walk":{},"mean_step_s":{:.4f},)"
               R"("build_step_s":{:.4f},"reuse_step_s":{:.4f},"reuse_step_median_s":{:.4f},"reuse_step_max_s":{:.4f},)"
               R"("interactions_per_particle":{:.1f},)"
               R"("mean_ep_list":{:.1f},"mean_sp_list":{:.1f},"kernel_interactions_per_s":{:.4g},)"
               R"("force_vs_C1_median":{:.3g},"force_vs_C1_max":{:.3g},"error_vs_direct_median":{:.3g},"ranks":{},)"
               R"("particle_order":"{}","tag_max":{}}})",
               r.mode, n, theta, n_leaf, n_group, n_walk, r.mean_step, r.build_step, r.reuse_step, r.reuse_step_median,
               r.reuse_step_max, ipp,
               r.profile.meanEpListLength(), r.profile.meanSpListLength(),
               r.kernel_seconds_per_step > 0 ? r.interactions_per_step / r.kernel_seconds_per_step : 0.0,
               r.force_median_diff, r.force_max_diff, r.error_vs_direct, runtime.rankCount(),
               grove::toString(particle_order), tag_max);
  }
  return 0;
}
