// FMM against the Barnes-Hut tree on one GPU: fmm_benchmark's Plummer sphere, kernels and checks
// (fmm_comparison.hpp), with every method's force work on the device. The FMM runs its traversal
// and far field on the device (grove::fmm::DeviceFarField) beside its near field, which the
// multiwalk engine computes (FDPS's index-form hooks); the quadrupole tree walks on the host and
// hands its interaction lists to the same engine. Both kernels are double precision (the tree's
// superparticles reach the device as float images). One JSON line per run, then per error target
// the fastest run of each method and their ratio.
//
//   fmm_gpu_benchmark -n 1048576 --orders 6 8 --thetas 0.5 0.6 --tree-thetas 0.15 0.3
#include <CLI/CLI.hpp>

#include <memory>
#include <string>
#include <vector>

#include "fmm_comparison.hpp"
#include "fmm_gpu_engine.h"
#include "grove/fmm/device_far_field_gpu.h"
#include "grove/fmm/fmm_force.hpp"
#include "grove/gpu/device_gpu.h"
#include "grove/grove.hpp"
#include "grove/tree/tree_for_force_long.hpp"
#include "initial_conditions.hpp"

using namespace fmm_comparison;

int main(int argc, char** argv) {
  grove::Runtime runtime(argc, argv);
  CLI::App app{"FMM against the Barnes-Hut quadrupole tree on one GPU, Plummer sphere"};
  std::int64_t n = 1 << 18, n_check = 2000;
  std::vector<int> orders{4, 6, 8};
  std::vector<double> thetas{0.4, 0.5, 0.6}, tree_thetas{0.2, 0.3, 0.4, 0.5};
  std::vector<double> targets{1e-4, 1e-6};
  int n_leaf = 32, tree_leaf = 16, tree_group = 256, repeat = 3, warmup = 1, tag_max = 4, n_walk = 256;
  bool no_tree = false;
  app.add_option("-n,--particles", n, "particles in all")->check(CLI::PositiveNumber);
  app.add_option("--orders", orders, "FMM expansion orders")->check(CLI::Range(1, grove::fmm::kMaxOrder));
  app.add_option("--thetas", thetas, "FMM opening angles")->check(CLI::Range(0.01, 0.99));
  app.add_option("--fmm-leaf", n_leaf, "FMM particles per leaf")->check(CLI::PositiveNumber);
  app.add_option("--tree-thetas", tree_thetas, "tree opening angles")->check(CLI::Range(0.0, 1.5));
  app.add_flag("--no-tree", no_tree, "FMM runs only");
  app.add_option("--tree-leaf", tree_leaf, "tree n_leaf_limit")->check(CLI::PositiveNumber);
  app.add_option("--tree-group", tree_group, "tree n_group_limit")->check(CLI::PositiveNumber);
  app.add_option("--tag-max", tag_max, "multiwalk batches in flight")->check(CLI::PositiveNumber);
  app.add_option("--walk-limit", n_walk, "walks per multiwalk batch")->check(CLI::PositiveNumber);
  app.add_option("--check", n_check, "particles checked against direct summation")->check(CLI::PositiveNumber);
  app.add_option("--warmup", warmup, "untimed calls before the timed ones")->check(CLI::NonNegativeNumber);
  app.add_option("--repeat", repeat, "timed calls per run (the best is reported)")->check(CLI::PositiveNumber);
  app.add_option("--targets", targets, "median error targets of the summary");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return runtime.rank() == 0 ? app.exit(e) : (e.get_exit_code() == 0 ? 0 : 1);
  }
  if (grove::gpu::deviceCount() == 0) {
    grove::log(R"({{"benchmark":"fmm_gpu","skipped":"no CUDA device"}})");
    return 0;
  }
  const int device = grove::gpu::selectDeviceForRank(runtime.rank());

  grove::ParticleSystem<Star> psys;
  const grove::Comm& comm = psys.comm();
  for (std::int64_t id = n * comm.rank() / comm.size(); id < n * (comm.rank() + 1) / comm.size(); ++id) {
    const nbody::Body b = nbody::plummerSphere(id, n, 2026);
    psys.add(Star{b.id, b.mass, b.pos, {}});
  }
  grove::DomainInfo dinfo;
  dinfo.decomposeDomainAll(psys);
  psys.exchangeParticle(dinfo);
  const Reference reference(psys, n_check);
  const std::string gpu_name = grove::gpu::deviceInfo(device).name;

  std::vector<Run> runs;
  auto report = [&](Run run, const std::string& details) {
    run.errors = reference.errors(psys);
    grove::log(R"({{"method":"{}","n":{},"ranks":{},"threads":{},"gpu":"{}","theta":{},"order":{},"seconds":{:.5g},)"
               R"("median_error":{:.3e},"p99_error":{:.3e},"max_error":{:.3e},"details":{}}})",
               run.method, n, runtime.rankCount(), runtime.threadCount(), gpu_name, run.theta, run.order, run.seconds,
               run.errors.median, run.errors.p99, run.errors.max, details);
    runs.push_back(run);
  };

  const std::unique_ptr<NewtonMultiwalk> engine = makeNewtonEngine();
  const auto far_field = std::make_shared<grove::fmm::DeviceFarField>();
  for (int order : orders)
    for (double theta : thetas) {
      grove::FmmForce<Force, EP, EP> fmm(psys.size(), theta, n_leaf, order);
      fmm.setFarFieldEngine(far_field);
      const double s = bestSeconds(comm, warmup, repeat, [&] {
        fmm.calcForceAllAndWriteBackMultiWalkIndex<grove::SPJQuadrupole>(engine->dispatch(), engine->retrieve(), tag_max,
                                                                         psys, dinfo, n_walk);
      });
      report({"fmm_gpu", theta, order, s, {}}, fmm.statistics().json());
    }
  if (no_tree) tree_thetas.clear();
  for (double theta : tree_thetas) {
    grove::TreeForForceLong<Force, EP, EP>::Quadrupole tree(psys.size(), theta, tree_leaf, tree_group);
    const double s = bestSeconds(comm, warmup, repeat, [&] {
      tree.calcForceAllAndWriteBackMultiWalkIndex(engine->dispatch(), engine->retrieve(), tag_max, psys, dinfo, n_walk);
    });
    report({"tree_gpu", theta, 2, s, {}}, tree.profile().json());
  }
  logSummaries(runs, targets, "fmm_gpu", "tree_gpu", n, runtime.threadCount());
  return 0;
}
