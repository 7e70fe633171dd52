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
//   fmm_benchmark ... --periodic             (a uniform unit cube instead of the sphere: each FMM
//                                             run open and then periodic, PERIODIC_XYZ, on the same
//                                             bodies; the periodic line gives its time against the
//                                             open one's. Its errors against the Ewald sum are
//                                             tests/fmm's: Ewald at this N is out of reach here)
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
#include "grove/force/tree_for_force_long.hpp"
#include "fmm_comparison.hpp"

using namespace fmm_comparison;

int main(int argc, char** argv) {
  grove::Runtime runtime(argc, argv);
  CLI::App app{"FMM against the Barnes-Hut quadrupole tree on a Plummer sphere"};
  Options o;
  o.addTo(app);
  std::string far_field = "host";
  app.add_option("--far-field", far_field, "where the FMM's traversal and far field run")
      ->check(CLI::IsMember({"host", "device"}));
  bool periodic = false;
  app.add_flag("--periodic", periodic, "a uniform cube, each FMM run open and periodic (PERIODIC_XYZ)");
  if (const std::optional<int> code = parseCommandLine(app, argc, argv, runtime)) return *code;

  grove::ParticleSystem<Star> psys;
  grove::DomainInfo dinfo, periodic_dinfo;
  if (periodic) makeUniformBox(psys, periodic_dinfo, o.n);
  else makePlummerSphere(psys, dinfo, o.n);
  const grove::Comm& comm = psys.comm();
  const Reference reference(psys, o.n_check);
  Report report(runtime, reference, psys, o.n);

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
  for (int order : o.orders)
    for (double theta : o.thetas) {
      grove::FmmForce<Force, EP, EP> fmm(psys.size(), theta, o.n_leaf, order);
      fmm.setFarFieldEngine(engine);
      const double s =
          bestSeconds(comm, o.warmup, o.repeat, [&] { fmm.calcForceAllAndWriteBack(NewtonKernel{}, psys, dinfo); });
      report({far_field == "device" ? "fmm_device" : "fmm", theta, order, s, {}}, fmm.statistics().json());
      if (periodic) {
        const double p = bestSeconds(comm, o.warmup, o.repeat, [&] {
          fmm.calcForceAllAndWriteBack(NewtonKernel{}, psys, periodic_dinfo);
        });
        report.periodic(far_field == "device" ? "fmm_device" : "fmm", theta, order, p, s, fmm.statistics().json());
      }
    }
  if (o.no_tree) o.tree_thetas.clear();
  for (double theta : o.tree_thetas) {
    grove::TreeForForceLong<Force, EP, EP>::Quadrupole tree(psys.size(), theta, o.tree_leaf, o.tree_group);
    const double s = bestSeconds(comm, o.warmup, o.repeat, [&] {
      tree.calcForceAllAndWriteBack(NewtonKernel{}, QuadrupoleKernel{}, psys, dinfo);
    });
    report({"tree", theta, 2, s, {}}, tree.profile().json());
  }

  logSummaries(report.runs(), o.targets, far_field == "device" ? "fmm_device" : "fmm", "tree", o.n,
               runtime.threadCount());
  return 0;
}
