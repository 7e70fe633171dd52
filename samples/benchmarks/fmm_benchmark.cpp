// FMM against the Barnes-Hut tree: a Plummer sphere, forces by grove::FmmForce at several orders
// and theta, and by TreeForForceLong::Quadrupole at several theta, each timed (the whole force
// calculation: tree, LET, traversal, kernels, write back; the best of --repeat calls after one
// untimed call) and checked against double-precision direct summation at --check particles.
// One JSON line per run, then for each error target the fastest run of each method that reaches
// it (median relative acceleration error), and their ratio.
//
//   fmm_benchmark -n 1048576 --orders 4 6 8 --thetas 0.4 0.5 0.6 --tree-thetas 0.2 0.3 0.5
//   fmm_benchmark ... --far-field device     (built with CUDA: traversal and far field on the GPU,
//                                             beside the host threads' near field)
#include <CLI/CLI.hpp>

#include <memory>
#include <string>
#include <vector>

#include "grove/fmm/fmm_force.hpp"
#if GROVE_FMM_BENCHMARK_DEVICE
#include "grove/fmm/device_far_field_gpu.h"
#include "grove/gpu/device_gpu.h"
#endif
#include "grove/grove.hpp"
#include "grove/tree/tree_for_force_long.hpp"
#include "fmm_comparison.hpp"
#include "initial_conditions.hpp"

using namespace fmm_comparison;

int main(int argc, char** argv) {
  grove::Runtime runtime(argc, argv);
  CLI::App app{"FMM against the Barnes-Hut quadrupole tree on a Plummer sphere"};
  std::int64_t n = 1 << 18, n_check = 2000;
  std::vector<int> orders{4, 6, 8};
  std::vector<double> thetas{0.4, 0.5, 0.6}, tree_thetas{0.2, 0.3, 0.4, 0.5};
  std::vector<double> targets{1e-4, 1e-6};
  int n_leaf = 32, tree_leaf = 16, tree_group = 256, repeat = 3, warmup = 1;
  app.add_option("-n,--particles", n, "particles in all")->check(CLI::PositiveNumber);
  app.add_option("--orders", orders, "FMM expansion orders")->check(CLI::Range(1, grove::fmm::kMaxOrder));
  app.add_option("--thetas", thetas, "FMM opening angles")->check(CLI::Range(0.01, 0.99));
  app.add_option("--fmm-leaf", n_leaf, "FMM particles per leaf")->check(CLI::PositiveNumber);
  bool no_tree = false;
  app.add_option("--tree-thetas", tree_thetas, "tree opening angles")->check(CLI::Range(0.0, 1.5));
  app.add_flag("--no-tree", no_tree, "FMM runs only");
  app.add_option("--tree-leaf", tree_leaf, "tree n_leaf_limit")->check(CLI::PositiveNumber);
  app.add_option("--tree-group", tree_group, "tree n_group_limit")->check(CLI::PositiveNumber);
  app.add_option("--check", n_check, "particles checked against direct summation")->check(CLI::PositiveNumber);
  app.add_option("--warmup", warmup, "untimed calls before the timed ones")->check(CLI::NonNegativeNumber);
  app.add_option("--repeat", repeat, "timed calls per run (the best is reported)")->check(CLI::PositiveNumber);
  app.add_option("--targets", targets, "median error targets of the summary");
  std::string far_field = "host";
  app.add_option("--far-field", far_field, "where the FMM's traversal and far field run")
      ->check(CLI::IsMember({"host", "device"}));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return runtime.rank() == 0 ? app.exit(e) : (e.get_exit_code() == 0 ? 0 : 1);
  }

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

  std::vector<Run> runs;
  auto report = [&](Run run, const std::string& details) {
    run.errors = reference.errors(psys);
    grove::log(R"({{"method":"{}","n":{},"ranks":{},"threads":{},"theta":{},"order":{},"seconds":{:.5g},)"
               R"("median_error":{:.3e},"p99_error":{:.3e},"max_error":{:.3e},"details":{}}})",
               run.method, n, runtime.rankCount(), runtime.threadCount(), run.theta, run.order, run.seconds,
               run.errors.median, run.errors.p99, run.errors.max, details);
    runs.push_back(run);
  };

  std::shared_ptr<grove::fmm::FarFieldEngine> engine = std::make_shared<grove::fmm::HostFarField>();
  if (far_field == "device") {
#if GROVE_FMM_BENCHMARK_DEVICE
    grove::gpu::selectDeviceForRank(comm.rank());
    engine = std::make_shared<grove::fmm::DeviceFarField>();
#else
    grove::log("fmm_benchmark: --far-field device needs a build with CUDA");
    return 1;
#endif
  }
  for (int order : orders)
    for (double theta : thetas) {
      grove::FmmForce<Force, EP, EP> fmm(psys.size(), theta, n_leaf, order);
      fmm.setFarFieldEngine(engine);
      const double s =
          bestSeconds(comm, warmup, repeat, [&] { fmm.calcForceAllAndWriteBack(NewtonKernel{}, psys, dinfo); });
      report({far_field == "device" ? "fmm_device" : "fmm", theta, order, s, {}}, fmm.statistics().json());
    }
  if (no_tree) tree_thetas.clear();
  for (double theta : tree_thetas) {
    grove::TreeForForceLong<Force, EP, EP>::Quadrupole tree(psys.size(), theta, tree_leaf, tree_group);
    const double s = bestSeconds(comm, warmup, repeat, [&] {
      tree.calcForceAllAndWriteBack(NewtonKernel{}, QuadrupoleKernel{}, psys, dinfo);
    });
    report({"tree", theta, 2, s, {}}, tree.profile().json());
  }

  logSummaries(runs, targets, far_field == "device" ? "fmm_device" : "fmm", "tree", n, runtime.threadCount());
  return 0;
}
