// FMM against the Barnes-Hut tree on one GPU: fmm_benchmark's Plummer sphere, kernels and checks
// (fmm_comparison.hpp), with every method's force work on the device. The FMM runs its traversal
// and far field on the device (grove::fmm::DeviceFarField) beside its near field, which either the
// multiwalk engine computes (FDPS's index-form hooks, lists packed on the host: method "fmm_gpu")
// or grove's device near field straight from the traversal's lists on the device (method
// "fmm_gpu_device", grove/fmm/device_near_field.cuh); the quadrupole tree walks on the host and
// hands its interaction lists to the multiwalk engine. Every kernel is double precision (the
// tree's superparticles reach the device as float images). The FMM's tree is built on the device
// (DeviceFarField's default) or, with --tree-builds host, on the host and uploaded (methods named
// "..._host_tree"). One JSON line per run, then per error
// target the fastest run of each method and their ratio. --periodic: a uniform unit cube instead
// of the sphere, each FMM run open and then periodic (PERIODIC_XYZ) on the same bodies, as
// fmm_benchmark --periodic ("..._periodic" lines with the periodic step's time over the open one's).
//
//   fmm_gpu_benchmark -n 1048576 --orders 6 8 --thetas 0.5 0.6 --tree-thetas 0.15 0.3
//   fmm_gpu_benchmark -n 1048576 --orders 8 --thetas 0.5 --near-fields multiwalk device --no-tree
//   fmm_gpu_benchmark -n 4194304 --orders 8 --thetas 0.5 --fmm-leaf 128 --near-fields device --tree-builds host device
//   fmm_gpu_benchmark -n 1048576 --orders 8 --thetas 0.5 --fmm-leaf 256 --near-fields device --no-tree --periodic
#include <CLI/CLI.hpp>

#include <memory>
#include <string>
#include <vector>

#include "../fmm_comparison.hpp"
#include "fmm_gpu_engine.h"
#include "grove/fmm/fmm_force.hpp"
#include "grove/gpu/device_gpu.h"
#include "grove/grove.hpp"
#include "grove/force/tree_for_force_long.hpp"

using namespace fmm_comparison;

int main(int argc, char** argv) {
  grove::Runtime runtime(argc, argv);
  CLI::App app{"FMM against the Barnes-Hut quadrupole tree on one GPU, Plummer sphere"};
  Options o;
  o.addTo(app);
  int tag_max = 4, n_walk = 256;
  std::vector<std::string> near_fields{"multiwalk"};
  app.add_option("--near-fields", near_fields,
                 "the FMM's near fields: multiwalk (FDPS's hooks), device (from the lists)")
      ->check(CLI::IsMember({"multiwalk", "device"}));
  std::vector<std::string> tree_builds{"device"};
  app.add_option("--tree-builds", tree_builds,
                 "where the FMM's tree is built: device (DeviceFarField's default), host (uploaded)")
      ->check(CLI::IsMember({"device", "host"}));
  long long task_particles = grove::fmm::kDefaultNearFieldWindow;
  app.add_option("--task-particles", task_particles,
                 "device near field: the window of source particles of a warp's task")
      ->check(CLI::PositiveNumber);
  app.add_option("--tag-max", tag_max, "multiwalk batches in flight")->check(CLI::PositiveNumber);
  app.add_option("--walk-limit", n_walk, "walks per multiwalk batch")->check(CLI::PositiveNumber);
  bool periodic = false;
  app.add_flag("--periodic", periodic, "a uniform cube, each FMM run open and periodic (PERIODIC_XYZ)");
  if (const std::optional<int> code = parseCommandLine(app, argc, argv, runtime)) return *code;
  if (grove::gpu::deviceCount() == 0) {
    grove::log(R"({{"benchmark":"fmm_gpu","skipped":"no CUDA device"}})");
    return 0;
  }
  const int device = grove::gpu::selectDeviceForRank(runtime.rank());

  grove::ParticleSystem<Star> psys;
  grove::DomainInfo dinfo, periodic_dinfo;
  if (periodic) makeUniformBox(psys, periodic_dinfo, o.n);
  else makePlummerSphere(psys, dinfo, o.n);
  const grove::Comm& comm = psys.comm();
  const Reference reference(psys, o.n_check);
  Report report(runtime, reference, psys, o.n,
                fmt::format(R"("gpu":"{}","task_particles":{},)", grove::gpu::deviceInfo(device).name, task_particles));

  const std::unique_ptr<NewtonMultiwalk> engine = makeNewtonEngine();
  const auto far_field = std::make_shared<grove::fmm::DeviceFarField>();
  const std::unique_ptr<NewtonNearField> near_field = makeNewtonNearField(far_field, task_particles);
  // The method's name in the report: the near field, and "_host_tree" for a tree built on the host.
  auto method = [](const std::string& near, const std::string& tree) {
    return std::string(near == "device" ? "fmm_gpu_device" : "fmm_gpu") + (tree == "host" ? "_host_tree" : "");
  };
  for (const std::string& tree_build : tree_builds)
    for (const std::string& near : near_fields)
      for (int order : o.orders)
        for (double theta : o.thetas) {
          grove::FmmForce<Force, EP, EP> fmm(psys.size(), theta, o.n_leaf, order);
          far_field->setTreeOnDevice(tree_build == "device");
          fmm.setFarFieldEngine(far_field);
          auto step = [&](const grove::DomainInfo& domains) {
            if (near == "device")
              fmm.calcForceAllAndWriteBackOnDevice(*near_field, psys, domains);
            else
              fmm.calcForceAllAndWriteBackMultiWalkIndex<grove::SPJQuadrupole>(engine->dispatch(), engine->retrieve(),
                                                                               tag_max, psys, domains, n_walk);
          };
          const double s = bestSeconds(comm, o.warmup, o.repeat, [&] { step(dinfo); });
          report({method(near, tree_build), theta, order, s, {}}, fmm.statistics().json());
          if (periodic) {
            const double p = bestSeconds(comm, o.warmup, o.repeat, [&] { step(periodic_dinfo); });
            report.periodic(method(near, tree_build), theta, order, p, s, fmm.statistics().json());
          }
        }
  if (o.no_tree) o.tree_thetas.clear();
  for (double theta : o.tree_thetas) {
    grove::TreeForForceLong<Force, EP, EP>::Quadrupole tree(psys.size(), theta, o.tree_leaf, o.tree_group);
    const double s = bestSeconds(comm, o.warmup, o.repeat, [&] {
      tree.calcForceAllAndWriteBackMultiWalkIndex(engine->dispatch(), engine->retrieve(), tag_max, psys, dinfo, n_walk);
    });
    report({"tree_gpu", theta, 2, s, {}}, tree.profile().json());
  }
  for (const std::string& tree_build : tree_builds)
    for (const std::string& near : near_fields)
      logSummaries(report.runs(), o.targets, method(near, tree_build), "tree_gpu", o.n, runtime.threadCount());
  // Held: the largest run's.
  grove::log(R"({{"device_far_field_bytes":{},"device_near_field_bytes":{}}})", far_field->deviceBytes(),
             near_field->deviceBytes());
  return 0;
}
