// samples/sph: the 3-D Sod shock tube with standard SPH on grove's short-range trees.
// Variable smoothing lengths iterated to a neighbour number (gather tree), Wendland C2 kernel,
// grad-h pressure force with Monaghan artificial viscosity and the Balsara switch (symmetry
// tree), kick-drift-kick leapfrog with a global CFL step. At the end the particles are binned in
// x, the profiles written with the exact Riemann solution, and the L1 errors in the window
// 0.25 <= x < 0.75 printed. Plot with tools/plot_sod.py. See doc/sph.md.
// --gpu template|engine runs the density and hydro passes on a GPU through the trees' multiwalk
// calls: the hand-written CUDA template or grove's engine (user_templates/cuda/sph_*); --gpu
// resident runs the whole step on the GPU (user_templates/cuda/sph_resident.h; one GPU per rank).
// Options may come from a parameter file (--config run.toml), the command line overriding it.
// --checkpoint-every K writes restart files (grove/io/checkpoint.hpp), --restart latest goes on
// from the newest: bitwise the run that never stopped, at the same rank count (host loop).
#include <CLI/CLI.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <limits>

#include "grove/grove.hpp"
#include "grove/io/checkpoint.hpp"
#if GROVE_HAS_HDF5
#include "grove/io/snapshot.hpp"
#endif
#include "sample_options.hpp"
#include "stopwatch.hpp"
#include "shock_tube.hpp"
#include "sph/sph_solver.hpp"
#include "sph/sph_trees.hpp"
#if GROVE_SPH_GPU
#include "cuda/sph_multiwalk_gpu.h"
#include "grove/gpu/device_gpu.h"
#include "cuda/sph_resident.h"
#endif

namespace {

struct Options {
  int nx = 72;
  double n_neighbours = 200;
  double t_end = 0.12;
  double cfl = 0.3;
  double alpha = 1.0;
  double search_factor = 1.1;
  int n_leaf = 8;
  int n_group = 64;
  // The same bins at every resolution, so L1 errors compare like for like; 0.02 wide, wider than
  // the right lattice spacing 1/nx for nx >= 64, so no bin of the window is empty.
  int bins = 50;
  int decompose_every = 4;
  int max_steps = 0;  // 0: run to t_end
  std::string method = "multisection";
  std::string output_dir = "sph_out";
  std::string gpu = "none";  // none (CPU kernels), template (user_templates/cuda), engine (grove/gpu), resident
  std::string gpu_form = "index";
  int n_walk = 256;
  int tag_max = 4;
  int search_lanes = 0;  // --gpu resident: threads per particle in the neighbour search (0: automatic)
  // --gpu resident, one rank: the neighbour lists (sph::ResidentSphLists). fresh: each pass searches
  // its exact sets; shared: one symmetric search serves both passes, kept across steps within a
  // skin of `skin` times the smallest initial h, cells re-sorted every `sort_every` searches.
  // Shared, sorting every 4th search, is the fastest measured on the H100 at 2.1e6 (44.8 ms against
  // 54.0 fresh; doc/performance.md, issue 31); a skin was slower there (lists grow as (r + s)^3).
  std::string lists = "shared";
  double skin = 0.0;
  int sort_every = 4;  // with --lists fresh: 1 (each pass builds its tree)
  samples::RestartOptions restart;
  std::string parameters;  // the parameter file's text and the options in effect (for the snapshot)
};

using Gas = grove::ParticleSystem<sph::GasParticle>;

// The density and hydro passes on the path --gpu chose: the CPU kernels, the hand-written CUDA
// template, or grove's GPU engine (whose density pass sums at the current h on the device and
// iterates h on the host, through a gather tree of DensitySums: sph_solver.hpp, sph_trees.hpp).
class ForcePasses {
 public:
  ForcePasses(const Options& opt, const sph::SolverParameters& p, std::size_t n_hint, int rank)
      : gpu_(opt.gpu),
        settings_{opt.tag_max, opt.n_walk, opt.gpu_form == "index"},
        density_tree_(n_hint, 0.0, opt.n_leaf, opt.n_group),
        hydro_tree_(n_hint, 0.0, opt.n_leaf, opt.n_group) {
    if (gpu_ == "none") return;
#if GROVE_SPH_GPU
    grove::gpu::selectDeviceForRank(rank);
    if (gpu_ == "template") {
      density_template_ = user::cuda::makeSphDensityMultiwalk(sph::densityParametersOf(p));
      hydro_gpu_ = user::cuda::makeSphHydroMultiwalk({p.alpha});
    } else {
      sums_tree_.initialize(n_hint, 0.0, opt.n_leaf, opt.n_group);
      density_engine_ = user::cuda::makeSphDensitySumsEngine();
      hydro_gpu_ = user::cuda::makeSphHydroEngine({p.alpha});
    }
#else
    static_cast<void>(p), static_cast<void>(rank);
    throw grove::Error("sph", fmt::format("--gpu {} needs a build with CUDA (GROVE_CUDA=ON and nvcc found)", gpu_));
#endif
  }

  std::string describe() const {
    if (gpu_ == "none") return "the CPU";
    return fmt::format("the GPU ({}, {} form, {} walks a batch, {} tags)", gpu_,
                       settings_.index_form ? "index" : "plain", settings_.n_walk, settings_.tag_max);
  }

  // Returns the gather passes (sum passes of the engine path are counted in sumPasses()).
  int density(Gas& gas, const grove::DomainInfo& dinfo, const sph::SolverParameters& p) {
#if GROVE_SPH_GPU
    if (density_template_)
      return sph::computeDensityMultiwalk(density_tree_, *density_template_, gas, dinfo, p, settings_);
    if (density_engine_)
      return sph::computeDensityBySums(
          [&](grove::InteractionListMode mode) {
            sph::multiwalkPass(sums_tree_, *density_engine_, gas, dinfo, settings_, mode);
          },
          gas, p, &sum_passes_);
#endif
    return sph::computeDensity(density_tree_, gas, dinfo, p);
  }

  void hydro(Gas& gas, const grove::DomainInfo& dinfo, const sph::SolverParameters& p) {
#if GROVE_SPH_GPU
    if (hydro_gpu_) return sph::computeHydroForcesMultiwalk(hydro_tree_, *hydro_gpu_, gas, dinfo, settings_);
#endif
    sph::computeHydroForces(hydro_tree_, gas, dinfo, p);
  }

  int sumPasses() const { return sum_passes_; }
  const grove::TreeProfile& densityProfile() const {
    return gpu_ == "engine" ? sums_tree_.profile() : density_tree_.profile();
  }
  const grove::TreeProfile& hydroProfile() const { return hydro_tree_.profile(); }

  // Device time of the GPU kernels so far (CUDA events), density and hydro; zeros on the CPU.
  std::array<double, 2> kernelSeconds() const {
#if GROVE_SPH_GPU
    const double density = density_template_  ? density_template_->stats().kernel_seconds
                           : density_engine_ ? density_engine_->stats().kernel_seconds
                                             : 0.0;
    return {density, hydro_gpu_ ? hydro_gpu_->stats().kernel_seconds : 0.0};
#else
    return {0.0, 0.0};
#endif
  }

 private:
  std::string gpu_;
  sph::MultiwalkSettings settings_;
  sph::DensityTree density_tree_;
  sph::DensitySumsTree sums_tree_;
  sph::HydroTree hydro_tree_;
  int sum_passes_ = 0;
#if GROVE_SPH_GPU
  std::unique_ptr<user::cuda::SphDensityMultiwalk> density_template_;
  std::unique_ptr<user::cuda::SphDensitySumsMultiwalk> density_engine_;
  std::unique_ptr<user::cuda::SphHydroMultiwalk> hydro_gpu_;
#endif
};

// Seconds per stage of one step: integration (kicks, drift, wrap, time step), domain
// (decomposition and exchange), density (all gather passes and the equation of state), hydro.
struct StageSeconds {
  std::array<double, 4> s{};
  double& integration() { return s[0]; }
  double& domain() { return s[1]; }
  double& density() { return s[2]; }
  double& hydro() { return s[3]; }
  double integration() const { return s[0]; }
  double domain() const { return s[1]; }
  double density() const { return s[2]; }
  double hydro() const { return s[3]; }
  double total() const { return s[0] + s[1] + s[2] + s[3]; }
  void add(const StageSeconds& o) {
    for (std::size_t k = 0; k < s.size(); ++k) s[k] += o.s[k];
  }
};

void generate(Gas& gas, const sph::ShockTube& tube, double n_neighbours) {
  const int rank = gas.comm().rank(), ranks = gas.comm().size();
  const std::int64_t n = tube.count(), begin = n * rank / ranks, end = n * (rank + 1) / ranks;
  gas.reserve(static_cast<std::size_t>(end - begin));
  for (std::int64_t id = begin; id < end; ++id) gas.add(tube.particle(id, n_neighbours));
}

struct Conserved {
  grove::Vec3d momentum;
  double energy = 0;
};

Conserved conservedOf(const Gas& gas) {
  Conserved c;
  for (const auto& g : gas) {
    c.momentum += g.mass * g.vel;
    c.energy += g.mass * (g.u + 0.5 * grove::norm2(g.vel));
  }
  return {gas.comm().allreduceSum(c.momentum), gas.comm().allreduceSum(c.energy)};
}

void writeProfiles(const std::vector<sph::ProfileBin>& bins, const std::filesystem::path& path, double time) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (!f) throw grove::Error("sph", fmt::format("cannot write {}", path.string()));
  fmt::print(f, "# time {}\nx,density,velocity_x,pressure,count,exact_density,exact_velocity_x,exact_pressure\n", time);
  for (const auto& b : bins)
    fmt::print(f, "{:.10g},{:.10g},{:.10g},{:.10g},{},{:.10g},{:.10g},{:.10g}\n", b.x, b.density, b.velocity, b.pressure,
               b.count, b.exact.density, b.exact.velocity, b.exact.pressure);
  samples::requireWritten(f, path.string(), "sph");
}

// What a run's loop leaves for the report: the end time, the steps, the next step's dt, stage
// times, conserved sums at the start, and (GPU) the device seconds of the density and hydro
// passes and the last passes' tree profiles (JSON). time, steps, dt and c0 are also what a
// checkpoint saves beside the gas and the domain.
struct LoopResult {
  double time = 0.0;
  int steps = 0;
  double dt = 0.0;
  int steps_run = 0;  // by this process (a restarted run began after some)
  StageSeconds sum;
  std::vector<double> step_seconds;
  Conserved c0;
  std::array<double, 2> device_seconds{};
  std::string density_profile, hydro_profile;
};

void logStep(int step, double time, double dt, const StageSeconds& st, int gather_passes, int sum_passes) {
  grove::log("step {:4d}  t = {:.5f}  dt = {:.3e}  step {:.4f} s  density {:.4f} s ({} pass{}{})  hydro {:.4f} s  "
             "integration {:.4f} s  domain {:.4f} s",
             step, time, dt, st.total(), st.density(), gather_passes, gather_passes == 1 ? "" : "es",
             sum_passes > 0 ? fmt::format(", {} sum passes", sum_passes) : "", st.hydro(), st.integration(),
             st.domain());
}

bool moreSteps(double time, int step, const Options& opt) {
  return time < opt.t_end * (1.0 - 1e-12) && (opt.max_steps == 0 || step < opt.max_steps);
}

void logStart(const grove::Runtime& runtime, const Options& opt, const sph::ShockTube& tube, const std::string& where) {
  grove::log("grove sph: Sod shock tube, N = {} ({} + {} on lattices of spacing {:.5f} and {:.5f}), {} neighbours, "
             "t_end = {}, {} ranks x {} threads, density and hydro on {}",
             tube.count(), tube.countLeft(), tube.countRight(), tube.spacingLeft(), 2 * tube.spacingLeft(),
             opt.n_neighbours, opt.t_end, runtime.rankCount(), runtime.threadCount(), where);
}

// The host loop: the particles in a ParticleSystem, the passes on the CPU or through a multiwalk.
// r: the state so far (restored from a checkpoint, or zero on a fresh start, when the first
// density and hydro passes run here).
void hostLoop(const grove::Runtime& runtime, const Options& opt, const sph::ShockTube& tube, Gas& gas,
              grove::DomainInfo& dinfo, const sph::SolverParameters& p, LoopResult& r, bool restarted,
              grove::io::Checkpoint& checkpoint) {
  ForcePasses passes(opt, p, gas.size(), runtime.rank());
  logStart(runtime, opt, tube, passes.describe());
  if (!restarted) {  // a restored gas carries its densities, forces and next dt
    const int initial_passes = passes.density(gas, dinfo, p);
    passes.hydro(gas, dinfo, p);
    r.dt = sph::globalTimeStep(gas, p);
    grove::log("initial density: {} gather pass{}; first dt = {:.3e}", initial_passes, initial_passes == 1 ? "" : "es",
               r.dt);
    r.c0 = conservedOf(gas);
  }
  while (moreSteps(r.time, r.steps, opt)) {
    ++r.steps;
    ++r.steps_run;
    const double dt_step = std::min(r.dt, opt.t_end - r.time);
    StageSeconds st;
    Stopwatch watch;
    sph::kickDriftPredict(gas, dt_step);
    gas.adjustPositionIntoRootDomain(dinfo);
    st.integration() += watch.lap();
    if (r.steps % opt.decompose_every == 0) dinfo.decomposeDomainAll(gas);
    gas.exchangeParticle(dinfo);
    st.domain() += watch.lap();
    const int sum_passes_before = passes.sumPasses();
    const int gather_passes = passes.density(gas, dinfo, p);
    const int sum_passes = passes.sumPasses() - sum_passes_before;
    st.density() += watch.lap();
    passes.hydro(gas, dinfo, p);
    st.hydro() += watch.lap();
    sph::finalKick(gas, dt_step);
    r.time += dt_step;
    r.dt = sph::globalTimeStep(gas, p);
    st.integration() += watch.lap();
    gas.comm().allreduceMax(std::span<double>(st.s));
    r.sum.add(st);
    r.step_seconds.push_back(st.total());
    logStep(r.steps, r.time, dt_step, st, gather_passes, sum_passes);
    samples::checkpointIfDue(checkpoint, opt.restart, r.steps);
  }
  r.device_seconds = passes.kernelSeconds();
  if (opt.gpu != "none")
    grove::log("GPU kernels (device time, rank 0): density {:.4f} s  hydro {:.4f} s per step; {} sum passes in all",
               r.device_seconds[0] / std::max(r.steps_run, 1), r.device_seconds[1] / std::max(r.steps_run, 1),
               passes.sumPasses());
  r.density_profile = passes.densityProfile().json();
  r.hydro_profile = passes.hydroProfile().json();
}

#if GROVE_SPH_GPU
std::string jsonOf(const grove::gpu::ResidentShortProfile& f) {
  return fmt::format("{{\"build\":{:.6f},\"root\":{:.6f},\"keys\":{:.6f},\"sort\":{:.6f},\"reorder\":{:.6f},"
                     "\"link\":{:.6f},\"boxes\":{:.6f},\"search\":{:.6f},\"force\":{:.6f},\"write_back\":{:.6f},"
                     "\"total\":{:.6f},\"n_particles\":{},\"n_cells\":{},\"neighbours\":{},\"search_lanes\":{},"
                     "\"kernel_lanes\":{},\"device_bytes\":{}}}",
                     f.build(), f.root, f.keys, f.sort, f.reorder, f.link, f.boxes, f.search, f.force, f.write_back,
                     f.total, f.n_particles, f.n_cells, f.neighbours, f.search_lanes, f.kernel_lanes, f.device_bytes);
}

// The resident loop: the same steps with the gas on the GPU, one per rank (cuda/sph_resident.h); the
// host ParticleSystem gets this rank's particles back at the end.
LoopResult residentLoop(const grove::Runtime& runtime, const Options& opt, const sph::ShockTube& tube, Gas& gas,
                        grove::DomainInfo& dinfo, const sph::SolverParameters& p) {
  grove::gpu::selectDeviceForRank(runtime.rank());
  double h_min = std::numeric_limits<double>::infinity();
  for (const auto& g : gas) h_min = std::min(h_min, g.h);
  h_min = gas.comm().allreduceMin(h_min);
  sph::ResidentSphLists lists;
  lists.shared = opt.lists == "shared";
  lists.skin = opt.skin * h_min;
  lists.sort_every = lists.shared ? opt.sort_every : 1;
  sph::ResidentSph device(p, dinfo, opt.n_leaf, opt.search_lanes, lists);
  logStart(runtime, opt, tube,
           fmt::format("the GPU (resident, leaf {}, {} lists{})", opt.n_leaf, opt.lists,
                       lists.shared ? fmt::format(", skin {} x h_min = {:.4e}, sort every {} searches{}", opt.skin,
                                                  lists.skin, lists.sort_every,
                                                  runtime.rankCount() > 1 ? " (several ranks: fresh)" : "")
                                    : std::string()));
  device.upload(std::vector<sph::GasParticle>(gas.begin(), gas.end()));
  LoopResult r;
  const int initial_passes = device.density();
  device.hydro();
  double dt = device.timeStep();
  grove::log("initial density: {} gather pass{}; first dt = {:.3e}", initial_passes, initial_passes == 1 ? "" : "es", dt);
  r.c0 = conservedOf(gas);  // the initial state is the uploaded one
  const double density_before = device.densityDeviceSeconds(), hydro_before = device.hydroDeviceSeconds();
  while (moreSteps(r.time, r.steps, opt)) {
    ++r.steps;
    ++r.steps_run;
    const double dt_step = std::min(dt, opt.t_end - r.time);
    StageSeconds st;
    Stopwatch watch;
    device.kickDriftPredict(dt_step);
    st.integration() += watch.lap();
    st.domain() += device.distribute(r.steps % opt.decompose_every == 0);
    watch.lap();
    const int gather_passes = device.density();
    st.density() += watch.lap();
    device.hydro();
    st.hydro() += watch.lap();
    device.finalKick(dt_step);
    r.time += dt_step;
    dt = device.timeStep();
    st.integration() += watch.lap();
    gas.comm().allreduceMax(std::span<double>(st.s));
    r.sum.add(st);
    r.step_seconds.push_back(st.total());
    logStep(r.steps, r.time, dt_step, st, gather_passes, 0);
  }
  r.device_seconds = {device.densityDeviceSeconds() - density_before, device.hydroDeviceSeconds() - hydro_before};
  grove::log("GPU trees (device time, rank 0): density {:.4f} s  hydro {:.4f} s per step",
             r.device_seconds[0] / std::max(r.steps_run, 1), r.device_seconds[1] / std::max(r.steps_run, 1));
  const sph::ResidentSph::ListCounts c = device.listCounts();
  grove::log("neighbour lists (rank 0, from the initial pass): {} density passes, {} searched ({} sorted); {} hydro "
             "passes, {} searched",
             c.density_passes, c.density_searches, c.density_sorts, c.hydro_passes, c.hydro_searches);
  r.density_profile = jsonOf(device.densityProfile());
  r.hydro_profile = jsonOf(device.hydroProfile());
  const std::vector<sph::GasParticle> final_gas = device.download();
  gas.setNumberOfParticleLocal(0);
  gas.add(std::span<const sph::GasParticle>(final_gas));
  return r;
}
#endif

// What a restart may change (reported) and may not (refused): samples::RunOptions.
samples::RunOptions runOptionsOf(const Options& opt) {
  samples::RunOptions o;
  o.fixed("nx", opt.nx);
  o.changeable("t-end", opt.t_end).changeable("max-steps", opt.max_steps).changeable("cfl", opt.cfl);
  o.changeable("n-ngb", opt.n_neighbours).changeable("alpha", opt.alpha).changeable("search-factor", opt.search_factor);
  o.changeable("n-leaf", opt.n_leaf).changeable("n-group", opt.n_group).changeable("method", opt.method);
  o.changeable("decompose-every", opt.decompose_every);
  return o;
}

int run(const grove::Runtime& runtime, const Options& opt) {
  const sph::ShockTube tube(opt.nx);
  Gas gas;
  grove::DomainInfo dinfo;
  dinfo.setBoundaryCondition(grove::BoundaryCondition::PERIODIC_XYZ);
  dinfo.setPosRootDomain({0.0, 0.0, 0.0}, tube.box);
  dinfo.setDecompositionMethod(opt.method == "orb" ? grove::DecompositionMethod::ORB
                                                   : grove::DecompositionMethod::MULTISECTION);
  // The run's state, named once for its checkpoints (and restored from one on --restart).
  const std::filesystem::path out(opt.output_dir);
  LoopResult loop;
  std::string options;  // the run's options, as its checkpoints record them
  grove::io::Checkpoint checkpoint((out / "restart").string(), gas.comm());
  checkpoint.particles("gas", gas).domain("domain", dinfo).value("time", loop.time).value("step", loop.steps);
  checkpoint.value("dt", loop.dt).value("initial_conserved", loop.c0).value("options", options);
  const std::optional<grove::io::RestartInfo> restart =
      samples::restoreIfAsked(checkpoint, opt.restart, runOptionsOf(opt), options, "sph");
  samples::requireStepsLeft("sph", moreSteps(loop.time, loop.steps, opt), loop.time, opt.t_end, loop.steps,
                            opt.max_steps, restart ? "the checkpoint " + restart->path : "the start");
  if (!restart) generate(gas, tube, opt.n_neighbours);
  if (!restart || !restart->same_rank_count) {
    dinfo.decomposeDomainAll(gas);
    gas.exchangeParticle(dinfo);
  }

  sph::SolverParameters p;
  p.gamma = tube.gamma, p.n_neighbours = opt.n_neighbours, p.search_factor = opt.search_factor;
  p.alpha = opt.alpha, p.cfl = opt.cfl, p.max_search_radius = sph::maxSearchRadius(dinfo);
  if (opt.gpu == "resident") {
#if GROVE_SPH_GPU
    loop = residentLoop(runtime, opt, tube, gas, dinfo, p);
#else
    throw grove::Error("sph", "--gpu resident needs a build with CUDA (GROVE_CUDA=ON and nvcc found)");
#endif
  } else {
    hostLoop(runtime, opt, tube, gas, dinfo, p, loop, restart.has_value(), checkpoint);
  }
  const double time = loop.time;
  const int step = loop.steps;
  const StageSeconds& sum = loop.sum;
  const Conserved& c0 = loop.c0;
  std::vector<double> step_seconds = loop.step_seconds;

  const Conserved c1 = conservedOf(gas);
  const int n_bins = opt.bins;
  const auto bins = sph::binProfiles(gas, tube, n_bins, time);
  const sph::L1Errors l1 = sph::l1Errors(bins, tube);
  const sph::L1Errors l1_particles = sph::particleL1Errors(gas, tube, time);
  if (runtime.rank() == 0) {
    std::filesystem::create_directories(out);
    writeProfiles(bins, out / "profiles.csv", time);
  }
  gas.comm().barrier();  // the directory is there for every rank
  std::string snapshot = "no snapshot: grove was built without HDF5";
#if GROVE_HAS_HDF5
  {
    snapshot = (out / "snapshot_final.hdf5").string();
    grove::io::SnapshotHeader header;
    header.time = time;
    header.step = step;
    header.box = tube.box;
    header.parameters = opt.parameters;
    grove::io::writeSnapshot(snapshot, gas, header);
  }
#endif
  const double steps = std::max(loop.steps_run, 1);  // the timings are this process's
  // The median resists steps slowed by other work on the machine.
  std::sort(step_seconds.begin(), step_seconds.end());
  const double median = step_seconds.empty() ? 0.0 : step_seconds[step_seconds.size() / 2];
  grove::log("t = {:.5f} after {} steps: momentum {:.3e} (initial {:.3e}), energy change {:+.3e} (relative)", time,
             step, grove::norm(c1.momentum), grove::norm(c0.momentum), (c1.energy - c0.energy) / c0.energy);
  grove::log("L1 errors in {} <= x < {} ({} bins of {:.5f}): density {:.5f}  velocity {:.5f}  pressure {:.5f}",
             tube.window_low, tube.window_high, l1.bins, tube.box.x / n_bins, l1.density, l1.velocity, l1.pressure);
  grove::log("L1 errors particle by particle (volume-weighted):    density {:.5f}  velocity {:.5f}  pressure {:.5f}",
             l1_particles.density, l1_particles.velocity, l1_particles.pressure);
  grove::log("{:.4f} s per step (median {:.4f}): density {:.4f}  hydro {:.4f}  integration {:.4f}  domain {:.4f}; "
             "profiles in {}, particles in {}",
             sum.total() / steps, median, sum.density() / steps, sum.hydro() / steps, sum.integration() / steps,
             sum.domain() / steps, (out / "profiles.csv").string(), snapshot);
  grove::log("{{\"sample\":\"sph\",\"gpu\":\"{}\",\"gpu_form\":\"{}\",\"n\":{},\"nx\":{},\"n_neighbours\":{},\"ranks\":{},\"threads\":{},\"steps\":{},"
             "\"s_per_step\":{:.5f},\"median_s_per_step\":{:.5f},\"density\":{:.5f},\"hydro\":{:.5f},\"integration\":{:.5f},\"domain\":{:.5f},"
             "\"l1_density\":{:.6f},\"l1_velocity\":{:.6f},\"l1_pressure\":{:.6f},\"l1_particle_density\":{:.6f},"
             "\"l1_particle_velocity\":{:.6f},\"l1_particle_pressure\":{:.6f},\"device_density\":{:.5f},\"device_hydro\":{:.5f},"
             "\"lists\":\"{}\",\"skin\":{},\"sort_every\":{}}}",
             opt.gpu, opt.gpu == "none" || opt.gpu == "resident" ? "-" : opt.gpu_form, tube.count(), opt.nx, opt.n_neighbours,
             runtime.rankCount(), runtime.threadCount(), step, sum.total() / steps, median, sum.density() / steps, sum.hydro() / steps, sum.integration() / steps,
             sum.domain() / steps, l1.density, l1.velocity, l1.pressure, l1_particles.density, l1_particles.velocity,
             l1_particles.pressure, loop.device_seconds[0] / steps, loop.device_seconds[1] / steps,
             opt.gpu == "resident" ? opt.lists : "-", opt.gpu == "resident" && opt.lists == "shared" ? opt.skin : 0.0,
             opt.gpu == "resident" && opt.lists == "shared" ? opt.sort_every : 1);
  grove::log("density tree, last pass: {}", loop.density_profile);
  grove::log("hydro tree, last pass: {}", loop.hydro_profile);
  // Equal checksums: bitwise equal gas (how tests/samples/restart_test.py compares runs).
  grove::log("final gas: checksum {:016x}", grove::io::particleChecksum(gas));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  grove::Runtime runtime(argc, argv);
  Options opt;
  CLI::App app{"grove SPH sample: 3-D Sod shock tube"};
  samples::enableParameterFile(app);
  app.add_option("--nx", opt.nx, "lattice planes across the left half (multiple of 8; N = nx^3 * 9/128)")
      ->check(samples::integerIn(8, INT32_MAX));
  app.add_option("--n-ngb", opt.n_neighbours, "target neighbour number (4 pi/3) h^3 rho / m")->check(samples::kPositive);
  app.add_option("--t-end", opt.t_end, "end time (profiles are valid up to 0.143)")->check(samples::kPositive);
  app.add_option("--cfl", opt.cfl, "Courant factor: dt = cfl * h / v_signal")->check(samples::kPositive);
  app.add_option("--alpha", opt.alpha, "artificial viscosity alpha")->check(samples::kNonNegative);
  app.add_option("--search-factor", opt.search_factor, "density search radius / last h")
      ->check(samples::inRange(1.0, 4.0));
  app.add_option("--n-leaf", opt.n_leaf, "most particles in a leaf")->check(samples::integerAtLeast(1));
  app.add_option("--n-group", opt.n_group, "most particles sharing one interaction list")
      ->check(samples::integerAtLeast(1));
  app.add_option("--bins", opt.bins, "profile bins across the box")->check(samples::integerAtLeast(1));
  app.add_option("--decompose-every", opt.decompose_every, "steps between decompositions")
      ->check(samples::integerAtLeast(1));
  app.add_option("--max-steps", opt.max_steps, "stop after this many steps (0: run to t_end)")
      ->check(samples::integerAtLeast(0));
  app.add_option("--method", opt.method, "domain decomposition")->check(CLI::IsMember({"multisection", "orb"}));
  app.add_option("-o,--output-dir", opt.output_dir, "directory for profiles.csv");
  app.add_option("--gpu", opt.gpu, "density and hydro passes on the GPU: the hand-written template or grove's engine; or the whole step "
                 "resident on it")
      ->check(CLI::IsMember({"none", "template", "engine", "resident"}));
  app.add_option("--gpu-form", opt.gpu_form, "multiwalk form")->check(CLI::IsMember({"plain", "index"}));
  app.add_option("--n-walk", opt.n_walk, "walks (groups) per multiwalk batch")->check(samples::integerAtLeast(1));
  app.add_option("--tag-max", opt.tag_max, "multiwalk tags (batches in flight)")->check(samples::integerAtLeast(1));
  app.add_option("--search-lanes", opt.search_lanes,
                 "--gpu resident: threads per particle in the neighbour search (0: chosen by the particle count)")
      ->check(CLI::IsMember({0, 1, 2, 4, 8}));
  app.add_option("--lists", opt.lists,
                 "--gpu resident, one rank: fresh (each pass searches its exact sets) or shared (one symmetric search "
                 "serves the density and hydro passes)")
      ->check(CLI::IsMember({"fresh", "shared"}));
  app.add_option("--skin", opt.skin,
                 "--lists shared: keep the lists across steps while particles moved less than this skin (times the "
                 "smallest initial h; the tree checks; r_search + skin must stay below half the periodic width); 0: search "
                 "every step")
      ->check(samples::kNonNegative);
  app.add_option("--sort-every", opt.sort_every,
                 "--lists shared: searches between sorts (the others refit the last sort's cells)")
      ->check(samples::integerAtLeast(1));
  samples::addRestartOptions(app, opt.restart);
  if (const auto exit_code = samples::parse(app, argc, argv)) return *exit_code;
  // N = nx^3 * 9/128, counted before the tube is made; the gas, its density and hydro trees'
  // copies and the exchange's buffers: about eight particles' bytes each.
  const long double nx = opt.nx;
  samples::requireMemoryFor("sph", fmt::format("--nx {}", opt.nx), nx * nx * nx * 9 / 128, runtime.rankCount(),
                            8.0L * sizeof(sph::GasParticle));
  opt.parameters = samples::parametersInEffect(app);
  if (opt.gpu == "resident" && (opt.restart.checkpoint_every > 0 || !opt.restart.restart.empty()))
    throw grove::Error("sph", "--checkpoint-every and --restart serve the host loop (CPU and multiwalk passes); the "
                              "resident GPU loop keeps its gas on the device and has no restart yet");
  // The resident search runs fastest with larger leaves than the CPU trees (32 against 8: H100,
  // doc/sph.md); an explicit --n-leaf is kept.
  if (opt.gpu == "resident" && app.count("--n-leaf") == 0) opt.n_leaf = 32;
  if (opt.lists != "shared" && (opt.skin > 0.0 || (app.count("--sort-every") > 0 && opt.sort_every > 1)))
    throw grove::Error("sph", "--skin and --sort-every need --lists shared");
  return run(runtime, opt);
}
