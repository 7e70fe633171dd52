// samples/nbody: self-gravity of a cold uniform sphere (the Accelerated FDPS paper's collapse
// test) or a Plummer sphere, with the user-template particle classes and fp32 SIMD kernels.
// Kick-drift-kick leapfrog; domain decomposition every --decompose-every steps; one progress
// line per step; an energy log, snapshots (HDF5 by default where grove has it: grove/io/snapshot.hpp;
// ASCII with --snapshot-format ascii), and optionally an accuracy check against direct
// summation. --checkpoint-every K writes a restart file every K steps (grove/io/checkpoint.hpp) and
// --restart latest goes on from the newest: bitwise the run that never stopped, at the same rank
// count. Options may come from a parameter file (--config run.toml), the command line
// overriding it; the file and the options in effect are echoed into each HDF5 snapshot's
// /Parameters. Plot the energy log with tools/plot_energy.py, a snapshot with tools/plot_snapshot.py.
#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>

#include "gravity_kernels.hpp"
#include "grove/grove.hpp"
#if GROVE_NBODY_GPU
#include "cuda/gravity_multiwalk_gpu.h"
#include "grove/gpu/device_gpu.h"
#include "resident_gpu.h"
#endif
#include "grove/force/tree_for_force_long.hpp"
#include "nbody_initial_conditions.hpp"
#if GROVE_HAS_HDF5
#include "grove/io/snapshot.hpp"
#include "grove/io/xdmf.hpp"
#endif
#include "grove/io/checkpoint.hpp"
#include "sample_options.hpp"

namespace {

struct Options {
  std::int64_t n = 1 << 14;
  std::string ic = "cold";
  std::string moment = "monopole";
  std::string method = "multisection";
  std::string cuts = "sampled";  // --gpu resident: cuts from samples or from counting every particle
  std::string gpu_memory = "fast";  // --gpu resident: fast, or lean (in-place reorders, walks without lists)
  double theta = 0.5;
  int n_leaf = 8;
  int n_group = 256;
  double eps = 1.0 / 32.0;
  double dt = 1.0 / 128.0;
  double t_end = 1.0;
  int decompose_every = 4;
  int snapshot_every = 0;  // steps; 0: only the last
  std::string snapshot_format = "hdf5";  // ascii where grove has no HDF5 (main)
  std::string parameters;  // the parameter file's text and the options in effect (for the snapshots)
  std::uint64_t seed = 1;
  std::string output_dir = "nbody_out";
  samples::RestartOptions restart;
  int check_accuracy = 0;  // particles per rank compared with direct summation at the start
  std::string gpu = "none";   // none, template (user_templates/cuda), engine (grove/gpu), resident
  std::string gpu_form = "index";
  int n_reuse = 1;            // steps per interaction-list build (1: build every step)
  int n_walk = 1000;
  int tag_max = 4;
};

using Kernels = grove::TreeForForceLong<user::GravityForce, user::GravityEPI, user::GravityEPJ>;

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void generate(grove::ParticleSystem<user::Body>& bodies, const Options& opt) {
  const int rank = bodies.comm().rank(), ranks = bodies.comm().size();
  const std::int64_t begin = opt.n * rank / ranks, end = opt.n * (rank + 1) / ranks;
  const bool plummer = opt.ic == "plummer";
  for (const user::Body& u : nbody::makeInParallel<user::Body>(begin, end, [&](std::int64_t id) {
         const nbody::Body b = plummer ? nbody::plummerSphere(id, opt.n, opt.seed)
                                       : nbody::coldUniformSphere(id, opt.n, opt.seed);
         user::Body made{};
         made.id = b.id, made.mass = b.mass, made.pos = b.pos, made.vel = b.vel;
         return made;
       }))
    bodies.add(u);
}

struct Energy {
  double kinetic = 0, potential = 0;
  double total() const { return kinetic + potential; }
};

Energy energyOf(const grove::ParticleSystem<user::Body>& bodies, double eps) {
  double kinetic = 0, potential = 0;
  for (const auto& b : bodies) {
    kinetic += 0.5 * b.mass * grove::norm2(b.vel);
    potential += 0.5 * b.mass * (b.pot + b.mass / eps);  // the kernel's self term is -m/eps
  }
  return {bodies.comm().allreduceSum(kinetic), bodies.comm().allreduceSum(potential)};
}

void writeSnapshotRows(const std::vector<user::Body>& all, const std::filesystem::path& path, double time) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (!f) throw grove::Error("nbody", fmt::format("cannot write snapshot {}", path.string()));
  fmt::print(f, "# time {} n {}\n# id mass x y z vx vy vz\n", time, all.size());
  for (const auto& b : all)
    fmt::print(f, "{} {:.9g} {:.9g} {:.9g} {:.9g} {:.9g} {:.9g} {:.9g}\n", b.id, b.mass, b.pos.x, b.pos.y, b.pos.z,
               b.vel.x, b.vel.y, b.vel.z);
  samples::requireWritten(f, path.string(), "nbody");
}

// Every rank's bodies at `step` (collective): one HDF5 file written by all ranks, or an ASCII
// table gathered to rank 0.
void writeSnapshot(const Options& opt, std::span<const user::Body> mine, const grove::Comm& comm,
                   const std::filesystem::path& out, std::int64_t step, double time) {
#if GROVE_HAS_HDF5
  if (opt.snapshot_format == "hdf5") {
    grove::io::SnapshotHeader header;
    header.time = time;
    header.step = step;
    header.parameters = opt.parameters;
    header.part_type = 1;  // GADGET's collisionless particles (PartType0 is gas, read with smoothing lengths)
    grove::io::writeSnapshot((out / fmt::format("snapshot_{:05d}.hdf5", step)).string(), mine, header, comm);
    // Every snapshot of the run so far as one time series for ParaView (each has its own XDMF too).
    grove::io::writeXdmfSeriesBeside(comm, (out / "snapshots.xdmf").string(), "snapshot_");
    return;
  }
#endif
  const auto all = comm.gatherv(mine, 0);
  if (comm.rank() == 0) writeSnapshotRows(all, out / fmt::format("snapshot_{:05d}.txt", step), time);
}

// The energy log, new; or, on a restart from step resume_after, the old one up to that step.
std::FILE* openEnergyLog(const std::filesystem::path& out, std::int64_t resume_after = 0) {
  std::filesystem::create_directories(out);
  const std::filesystem::path path = out / "energy.csv";
  const std::string rows =
      samples::logRowsUpTo(path, "step,time,kinetic,potential,total,relative_error,step_seconds", resume_after);
  std::FILE* log = std::fopen(path.c_str(), "w");
  if (!log) throw grove::Error("nbody", fmt::format("cannot write {}", path.string()));
  std::fputs(rows.c_str(), log);
  return log;
}

// Relative acceleration error of the first `count` bodies of each rank against direct summation.
void checkAccuracy(const grove::ParticleSystem<user::Body>& bodies, const Options& opt) {
  const auto all = bodies.comm().allgatherv(bodies.particles());
  std::vector<double> errors;
  const std::size_t count = std::min<std::size_t>(static_cast<std::size_t>(opt.check_accuracy), bodies.size());
  for (std::size_t i = 0; i < count; ++i) {
    grove::Vec3d acc;
    for (const auto& other : all) {
      if (other.id == bodies[i].id) continue;
      const grove::Vec3d d = other.pos - bodies[i].pos;
      const double r2 = grove::norm2(d) + opt.eps * opt.eps;
      acc += (other.mass / (r2 * std::sqrt(r2))) * d;
    }
    errors.push_back(grove::norm(bodies[i].acc - acc) / grove::norm(acc));
  }
  auto gathered = bodies.comm().allgatherv(errors);
  std::sort(gathered.begin(), gathered.end());
  if (gathered.empty()) return;
  auto at = [&](double q) { return gathered[static_cast<std::size_t>(q * static_cast<double>(gathered.size() - 1))]; };
  grove::log("accuracy vs direct summation ({} bodies): median {:.3e}  p99 {:.3e}  max {:.3e}", gathered.size(),
             at(0.5), at(0.99), gathered.back());
}

// What a restart may change (reported) and may not (refused): samples::RunOptions.
samples::RunOptions runOptionsOf(const Options& opt) {
  samples::RunOptions o;
  o.fixed("particles", opt.n).fixed("ic", opt.ic).fixed("seed", opt.seed);
  o.changeable("dt", opt.dt).changeable("t-end", opt.t_end).changeable("eps", opt.eps).changeable("theta", opt.theta);
  o.changeable("moment", opt.moment).changeable("n-leaf", opt.n_leaf).changeable("n-group", opt.n_group);
  o.changeable("method", opt.method).changeable("decompose-every", opt.decompose_every);
  o.changeable("n-reuse", opt.n_reuse).changeable("snapshot-every", opt.snapshot_every);
  return o;
}

template <class Tree, class SpKernel>
int run(const grove::Runtime& runtime, const Options& opt, SpKernel sp_kernel_of_eps2) {
  grove::ParticleSystem<user::Body> bodies;
  grove::DomainInfo dinfo;
  dinfo.setDecompositionMethod(opt.method == "orb" ? grove::DecompositionMethod::ORB
                                                   : grove::DecompositionMethod::MULTISECTION);
  // The run's whole state, named once for its checkpoints (and restored from one on --restart).
  const std::filesystem::path out(opt.output_dir);
  double time = 0.0;
  std::int64_t step = 0;
  Energy e0;
  std::string options;  // the run's options, as its checkpoints record them
  grove::io::Checkpoint checkpoint((out / "restart").string(), bodies.comm());
  checkpoint.particles("bodies", bodies).domain("domain", dinfo).value("time", time).value("step", step);
  checkpoint.value("initial_energy", e0).value("options", options);
  const std::optional<grove::io::RestartInfo> restart =
      samples::restoreIfAsked(checkpoint, opt.restart, runOptionsOf(opt), options, "nbody");
  // The steps to t_end from here (a restart may change dt and t_end): none, or an overflowing
  // count, stops the run before it starts.
  const std::int64_t last_step =
      step + samples::fixedSteps("nbody", time, opt.t_end, opt.dt, restart ? "the checkpoint " + restart->path : "the start");
  if (!restart) generate(bodies, opt);
  if (!restart || !restart->same_rank_count) {
    dinfo.decomposeDomainAll(bodies);
    bodies.exchangeParticle(dinfo);
  }

  const float eps2 = static_cast<float>(opt.eps * opt.eps);
  const user::GravityMonopoleKernel ep_kernel{eps2};
  const auto sp_kernel = sp_kernel_of_eps2(eps2);
  Tree tree(bodies.size(), opt.theta, opt.n_leaf, opt.n_group);
  // The force calculation: CPU kernels, or a GPU multiwalk (hand-written template or engine).
#if GROVE_NBODY_GPU
  using SPJ = typename Tree::SpjType;
  std::unique_ptr<user::cuda::GravityMultiwalkInterface<SPJ>> gpu;
  if (opt.gpu != "none") {
    grove::gpu::selectDeviceForRank(runtime.rank());
    gpu = opt.gpu == "engine" ? user::cuda::makeGravityEngine<SPJ>(eps2) : user::cuda::makeGravityMultiwalk<SPJ>(eps2);
  }
#else
  if (opt.gpu != "none") throw grove::Error("nbody", "--gpu needs a build with CUDA (GROVE_CUDA=ON)");
#endif
  auto computeForces = [&](grove::InteractionListMode list_mode) {
#if GROVE_NBODY_GPU
    if (gpu && opt.gpu_form == "plain")
      return tree.calcForceAllAndWriteBackMultiWalk(gpu->dispatchPlain(), gpu->retrieve(), opt.tag_max, bodies, dinfo,
                                                    opt.n_walk, true, list_mode);
    if (gpu)
      return tree.calcForceAllAndWriteBackMultiWalkIndex(gpu->dispatch(), gpu->retrieve(), opt.tag_max, bodies, dinfo,
                                                         opt.n_walk, true, list_mode);
#endif
    tree.calcForceAllAndWriteBack(ep_kernel, sp_kernel, bodies, dinfo, true, list_mode);
  };
  const auto build_mode = opt.n_reuse > 1 ? grove::MAKE_LIST_FOR_REUSE : grove::MAKE_LIST;
  // Restored particles carry the forces of their step; lists to reuse are built again (from the
  // same particles and domains: the same lists, the same forces).
  if (!restart || !restart->same_rank_count || opt.n_reuse > 1) computeForces(build_mode);
  if (opt.check_accuracy > 0 && !restart) checkAccuracy(bodies, opt);

  std::FILE* energy_log = nullptr;
  if (runtime.rank() == 0) energy_log = openEnergyLog(out, step);
  if (!restart) {
    e0 = energyOf(bodies, opt.eps);
    grove::log("t = 0  E = {:.8f} (K = {:.6f}, W = {:.6f})", e0.total(), e0.kinetic, e0.potential);
  }

  const std::int64_t first_step = step + 1;
  double total_seconds = 0.0;
  for (step = first_step; step <= last_step; ++step) {
    const auto start = std::chrono::steady_clock::now();
    for (auto& b : bodies) {
      b.vel += (0.5 * opt.dt) * b.acc;
      b.pos += opt.dt * b.vel;
    }
    time += opt.dt;
    // Lists are rebuilt every n_reuse steps; particles move between ranks only then.
    const bool rebuild = step % opt.n_reuse == 0;
    if (rebuild) {
      if (step % opt.decompose_every == 0) dinfo.decomposeDomainAll(bodies);
      bodies.exchangeParticle(dinfo);
    }
    computeForces(rebuild ? build_mode : grove::REUSE_LIST);
    for (auto& b : bodies) b.vel += (0.5 * opt.dt) * b.acc;
    const Energy e = energyOf(bodies, opt.eps);
    const double step_seconds = bodies.comm().allreduceMax(secondsSince(start));
    total_seconds += step_seconds;
    const double relative_error = (e.total() - e0.total()) / std::abs(e0.total());
    grove::log("step {:5d}  t = {:.4f}  dE/E = {:+.3e}  step {:.3f} s  {:.3e} particles/s", step, time, relative_error,
               step_seconds, static_cast<double>(opt.n) / step_seconds);
    if (energy_log)
      fmt::print(energy_log, "{},{},{},{},{},{},{}\n", step, time, e.kinetic, e.potential, e.total(), relative_error,
                 step_seconds);
    if ((opt.snapshot_every > 0 && step % opt.snapshot_every == 0) || step == last_step)
      writeSnapshot(opt, bodies.particles(), bodies.comm(), out, step, time);
    if (energy_log)  // the log holds every step a checkpoint does
      samples::requireWritten(energy_log, (out / "energy.csv").string(), "nbody", false);
    samples::checkpointIfDue(checkpoint, opt.restart, step);
  }
  if (energy_log) samples::requireWritten(energy_log, (out / "energy.csv").string(), "nbody");
  const std::int64_t steps_run = last_step - first_step + 1;
  grove::log("done: {} steps, {:.3f} s per step; energy log and snapshots in {}", steps_run,
             steps_run ? total_seconds / static_cast<double>(steps_run) : 0.0, out.string());
  // Equal checksums: bitwise equal bodies (how tests/samples/restart_test.py compares runs).
  grove::log("final bodies: checksum {:016x}", grove::io::particleChecksum(bodies));
  grove::log("last step profile: {}", tree.profile().json());
  return 0;
}

#if GROVE_NBODY_GPU
// --gpu resident: the whole loop on the GPU, one per rank (resident_gpu.cu); the host writes the
// logs and gathers snapshots to rank 0.
int runResidentSample(const grove::Runtime& runtime, const Options& opt) {
  grove::gpu::selectDeviceForRank(runtime.rank());
  grove::ParticleSystem<user::Body> generated;
  generate(generated, opt);
  std::vector<user::Body> bodies(generated.begin(), generated.end());
  nbody::ResidentOptions ro;
  ro.theta = opt.theta, ro.eps = opt.eps, ro.dt = opt.dt, ro.n_leaf = opt.n_leaf, ro.n_group = opt.n_group;
  ro.n_reuse = opt.n_reuse, ro.snapshot_every = opt.snapshot_every, ro.quadrupole = opt.moment == "quadrupole";
  ro.decompose_every = opt.decompose_every, ro.orb = opt.method == "orb", ro.counted_cuts = opt.cuts == "counted";
  ro.lean_memory = opt.gpu_memory == "lean";
  ro.steps = samples::fixedSteps("nbody", 0.0, opt.t_end, opt.dt, "the start");
  const std::filesystem::path out(opt.output_dir);
  std::FILE* energy_log = runtime.rank() == 0 ? openEnergyLog(out) : nullptr;
  double e0 = 0.0, total_seconds = 0.0;
  auto on_step = [&](const nbody::ResidentStep& s) {
    const double e = s.kinetic + s.potential;
    if (s.step == 0) {
      e0 = e;
      grove::log("t = 0  E = {:.8f} (K = {:.6f}, W = {:.6f})", e, s.kinetic, s.potential);
      return;
    }
    total_seconds += s.step_seconds;
    const double relative_error = (e - e0) / std::abs(e0);
    grove::log("step {:5d}  t = {:.4f}  dE/E = {:+.3e}  step {:.4f} s (rank 0's device: tree {:.2f} ms, build {:.2f}, "
               "LET {:.2f}, force {:.2f}; exchange {:.2f} ms)  {:.3e} particles/s",
               s.step, s.time, relative_error, s.step_seconds, 1e3 * s.tree_seconds, 1e3 * s.build_seconds,
               1e3 * s.let_seconds, 1e3 * s.force_seconds, 1e3 * s.exchange_seconds,
               static_cast<double>(opt.n) / s.step_seconds);
    if (energy_log)
      fmt::print(energy_log, "{},{},{},{},{},{},{}\n", s.step, s.time, s.kinetic, s.potential, e, relative_error,
                 s.step_seconds);
  };
  auto on_snapshot = [&](std::int64_t step, double time, const std::vector<user::Body>& mine) {
    writeSnapshot(opt, std::span<const user::Body>(mine), grove::Comm::world(), out, step, time);
  };
  nbody::runResident(bodies, ro, on_step, on_snapshot);
  if (energy_log) std::fclose(energy_log);
  grove::log("done: {} steps on the GPU, {:.4f} s per step; energy log and snapshots in {}", ro.steps,
             ro.steps ? total_seconds / static_cast<double>(ro.steps) : 0.0, out.string());
  return 0;
}
#endif


}  // namespace

int main(int argc, char** argv) {
  grove::Runtime runtime(argc, argv);
  Options opt;
  CLI::App app{"grove N-body sample: self-gravity with a Barnes-Hut tree"};
  samples::enableParameterFile(app);
  app.add_option("-n,--particles", opt.n, "number of bodies (at least 2: one body has no gravity)")
      ->check(samples::integerAtLeast(2));
  app.add_option("--ic", opt.ic, "initial condition")->check(CLI::IsMember({"cold", "plummer"}));
  app.add_option("--moment", opt.moment, "tree moment")->check(CLI::IsMember({"monopole", "quadrupole"}));
  app.add_option("--method", opt.method, "domain decomposition")->check(CLI::IsMember({"multisection", "orb"}));
  app.add_option("--cuts", opt.cuts,
                 "--gpu resident: domain cuts from samples (weighted) or from counting every particle on the GPU")
      ->check(CLI::IsMember({"sampled", "counted"}));
  app.add_option("--gpu-memory", opt.gpu_memory,
                 "--gpu resident: fast (a second copy of the bodies for reorders, interaction lists) or lean (reorders "
                 "in place, and with --n-reuse 1 walks without lists: the most bodies a GPU holds)")
      ->check(CLI::IsMember({"fast", "lean"}));
  app.add_option("--theta", opt.theta, "opening angle")->check(samples::kNonNegative);
  app.add_option("--n-leaf", opt.n_leaf, "most particles in a leaf")->check(samples::integerAtLeast(1));
  app.add_option("--n-group", opt.n_group, "most particles sharing one interaction list")
      ->check(samples::integerAtLeast(1));
  app.add_option("--eps", opt.eps, "Plummer softening length")->check(samples::kPositive);
  app.add_option("--dt", opt.dt, "time step")->check(samples::kPositive);
  app.add_option("--t-end", opt.t_end, "end time (a run takes round(t-end / dt) steps, at least one)")
      ->check(samples::kPositive);
  app.add_option("--decompose-every", opt.decompose_every, "steps between decompositions")
      ->check(samples::integerAtLeast(1));
  app.add_option("--snapshot-every", opt.snapshot_every, "steps between snapshots (0: last only)")
      ->check(samples::integerAtLeast(0));
  app.add_option("--snapshot-format", opt.snapshot_format,
                 "hdf5: one file from all ranks (grove::io; the default where grove has HDF5), ascii: a table")
      ->check(CLI::IsMember({"hdf5", "ascii"}));
  app.add_option("--seed", opt.seed, "random seed");
  app.add_option("-o,--output-dir", opt.output_dir, "directory for the energy log and snapshots");
  samples::addRestartOptions(app, opt.restart);
  app.add_option("--check-accuracy", opt.check_accuracy,
                 "compare this many bodies per rank with direct summation at t = 0")
      ->check(samples::integerAtLeast(0));
  app.add_option("--gpu", opt.gpu,
                 "GPU: forces by the hand-written template or grove's engine, or the whole loop resident on it")
      ->check(CLI::IsMember({"none", "template", "engine", "resident"}));
  app.add_option("--gpu-form", opt.gpu_form, "multiwalk form")->check(CLI::IsMember({"plain", "index"}));
  app.add_option("--n-reuse", opt.n_reuse, "steps per interaction-list build (reuse in between)")
      ->check(samples::integerAtLeast(1));
  app.add_option("--n-walk", opt.n_walk, "walks per multiwalk batch")->check(samples::integerAtLeast(1));
  app.add_option("--tag-max", opt.tag_max, "multiwalk tags (batches in flight)")->check(samples::integerAtLeast(1));
  if (const auto exit_code = samples::parse(app, argc, argv)) return *exit_code;
  // Particles, the trees' copies of them and the exchange's buffers: about four bodies' bytes each.
  samples::requireMemoryFor("nbody", fmt::format("--particles {}", opt.n), static_cast<long double>(opt.n),
                            runtime.rankCount(), 4.0L * sizeof(user::Body));
  samples::chooseSnapshotFormat(app, opt.snapshot_format, "nbody");
  opt.parameters = samples::parametersInEffect(app);
  if (opt.restart.checkpoint_every % opt.n_reuse != 0)
    throw grove::Error("nbody", fmt::format("--checkpoint-every {} is not a multiple of --n-reuse {}: a restart must "
                                            "begin where lists are built", opt.restart.checkpoint_every, opt.n_reuse));
  if (opt.gpu == "resident" && (opt.restart.checkpoint_every > 0 || !opt.restart.restart.empty()))
    throw grove::Error("nbody", "--checkpoint-every and --restart serve the CPU and multiwalk paths; the resident "
                                "GPU loop keeps its particles on the device and has no restart yet");

  grove::log("grove nbody: N = {}, ic = {}, {} moment, theta = {}, leaf {}, group {}, eps = {}, dt = {}, t_end = {}, "
             "{} ranks x {} threads, forces on {}{}, lists rebuilt every {} steps",
             opt.n, opt.ic, opt.moment, opt.theta, opt.n_leaf, opt.n_group, opt.eps, opt.dt, opt.t_end,
             runtime.rankCount(), runtime.threadCount(), opt.gpu == "none" ? "the CPU" : "the GPU (" + opt.gpu,
             opt.gpu == "none" ? "" : ", " + opt.gpu_form + " form)", opt.n_reuse);
  if (opt.gpu == "resident") {
#if GROVE_NBODY_GPU
    return runResidentSample(runtime, opt);
#else
    throw grove::Error("nbody", "--gpu resident needs a build with CUDA (GROVE_CUDA=ON)");
#endif
  }
  if (opt.moment == "quadrupole")
    return run<Kernels::Quadrupole>(runtime, opt, [](float eps2) { return user::GravityQuadrupoleKernel{eps2}; });
  return run<Kernels::Monopole>(runtime, opt, [](float eps2) { return user::GravityMonopoleKernel{eps2}; });
}
