// samples/evrard: the Evrard (1988) collapse of a cold self-gravitating gas sphere: G = M = R = 1,
// rho = 1 / (2 pi r), u = 0.05, at rest, gamma = 5/3, run to t = 3.
// Self-gravity on grove's long-range tree (monopole or quadrupole cells, Plummer or spline
// softening; gravity_kernel.hpp) and SPH on the short-range trees with samples/sph's passes
// (gather density with h iterated to a neighbour number, symmetric grad-h hydro with Monaghan
// viscosity and the Balsara switch), in one kick-drift-kick loop with a global time step
// (integrator.hpp). Open boundary; domain decomposition every --decompose-every steps and a
// particle exchange every step. One line of energies per step to --energy-file (CSV), snapshots
// (HDF5 through grove::io where grove has it, ASCII otherwise), a summary at the end.
// The program checks the start against the analytic sphere (start_check.hpp) and the total-energy
// drift against --energy-tolerance, and exits 1 when a check fails. Options may come from a
// parameter file (--config run.toml), the command line overriding it. See doc/evrard.md;
// tools/plot_evrard.py plots the energies against tools/evrard_reference.py's 1-D solution.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <numbers>
#include <sstream>

#include "energies.hpp"
#include "evrard_particles.hpp"
#include "gravity_kernel.hpp"
#include "grove/grove.hpp"
#include "grove/force/tree_for_force_long.hpp"
#include "initial_conditions.hpp"
#include "integrator.hpp"
#include "sph/sph_solver.hpp"  // user_templates/sph
#include "sph/sph_trees.hpp"   // user_templates/sph
#include "sample_options.hpp"
#include "stopwatch.hpp"
#include "start_check.hpp"
#if GROVE_HAS_HDF5
#include "grove/io/snapshot.hpp"
#include "grove/io/xdmf.hpp"
#endif

namespace {

struct Options {
  samples::RestartOptions restart;
  std::int64_t n = 20000;
  double t_end = 3.0;
  double theta = 0.5;
  std::string moment = "monopole";
  double softening = 0.01;  // Plummer-equivalent eps: phi(0) = -m / eps for both laws
  std::string softening_law = "spline";
  double n_neighbours = 100;  // Wendland C2: stable against pairing at any number (Dehnen & Aly 2012)
  double alpha = 1.0;
  double cfl = 0.3;
  double eta_acc = 0.025;
  double dt_max = 0.01;
  int n_leaf = 8;
  int n_group = 64;
  int n_group_gravity = 256;  // larger groups: shorter walks for gravity's long lists
  int decompose_every = 4;
  int max_steps = 0;  // 0: run to t_end
  std::uint64_t seed = 1;
  std::string output_dir = "evrard_out";
  std::string energy_file;  // default: <output-dir>/energy.csv
  double snapshot_every = 0;  // simulation time between snapshots; 0: the last only
  std::string snapshot_format = "hdf5";
  double energy_tolerance = 0.01;  // |E - E0| / |E0| at every step; doc/evrard.md says why
  std::int64_t direct_check_max_n = 20000;
  std::string parameters;  // the parameter file's text and the options in effect (snapshots)
};

using Gas = grove::ParticleSystem<evrard::EvrardParticle>;
using GravityTrees = grove::TreeForForceLong<evrard::GravityResult, evrard::GravityEPI, evrard::GravityEPJ>;

// Seconds of one step by stage (max over ranks).
struct StageSeconds {
  enum : std::size_t { kIntegration, kDomain, kDensity, kHydro, kGravity, kCount };
  std::array<double, kCount> s{};
  double total() const { return s[0] + s[1] + s[2] + s[3] + s[4]; }
  void add(const StageSeconds& o) {
    for (std::size_t k = 0; k < kCount; ++k) s[k] += o.s[k];
  }
};

void generate(Gas& gas, const Options& opt) {
  const int rank = gas.comm().rank(), ranks = gas.comm().size();
  const std::int64_t begin = opt.n * rank / ranks, end = opt.n * (rank + 1) / ranks;
  const auto lattice = evrard::stretchedLattice(opt.n, opt.seed);
  const double mass = 1.0 / static_cast<double>(opt.n);
  gas.reserve(static_cast<std::size_t>(end - begin));
  for (std::int64_t k = begin; k < end; ++k) {
    const evrard::LatticePoint& point = lattice[static_cast<std::size_t>(k)];
    evrard::EvrardParticle p;
    p.id = point.id;
    p.mass = mass;
    p.pos = point.pos;
    p.u = evrard::EvrardSphere::kInternalEnergy;
    // The support radius holding the neighbour target at the analytic density: the density
    // pass's first guess (it iterates from here).
    const double rho = evrard::EvrardSphere::density(std::max(grove::norm(p.pos), 1e-3));
    p.h = std::cbrt(3.0 * opt.n_neighbours * mass / (4.0 * std::numbers::pi * rho));
    gas.add(p);
  }
}

// The three force passes of one state: SPH density (+ equation of state), SPH hydro, gravity.
template <class GravityTree, class SpKernel>
class ForcePasses {
 public:
  ForcePasses(const Options& opt, const sph::SolverParameters& sph, evrard::Softening softening, std::size_t n_hint)
      : sph_(sph),
        softening_(softening),
        density_tree_(n_hint, 0.0, opt.n_leaf, opt.n_group),
        hydro_tree_(n_hint, 0.0, opt.n_leaf, opt.n_group),
        gravity_tree_(n_hint, opt.theta, opt.n_leaf, opt.n_group_gravity),
        ep_kernel_(softening),
        sp_kernel_(softening) {}

  // Returns the density pass's gather passes.
  int compute(Gas& gas, const grove::DomainInfo& dinfo, StageSeconds& st) {
    Stopwatch watch;
    const int passes = sph::computeDensity(density_tree_, gas, dinfo, sph_);
    st.s[StageSeconds::kDensity] += watch.lap();
    sph::computeHydroForces(hydro_tree_, gas, dinfo, sph_);
    st.s[StageSeconds::kHydro] += watch.lap();
    gravity_tree_.calcForceAllAndWriteBack(ep_kernel_, sp_kernel_, gas, dinfo);
    evrard::removeSelfPotential(gas, softening_);
    st.s[StageSeconds::kGravity] += watch.lap();
    return passes;
  }

  const grove::TreeProfile& gravityProfile() const { return gravity_tree_.profile(); }

 private:
  sph::SolverParameters sph_;
  evrard::Softening softening_;
  sph::DensityTree density_tree_;
  sph::HydroTree hydro_tree_;
  GravityTree gravity_tree_;
  evrard::GravityKernel ep_kernel_;
  SpKernel sp_kernel_;
};

// ---- output --------------------------------------------------------------------------------------

class EnergyLog {
 public:
  // Rank 0 writes; the others hold no file. On a restart from step resume_after the rows up to it
  // stay and the log goes on.
  EnergyLog(const std::filesystem::path& path, bool writer, std::int64_t resume_after = 0) {
    if (!writer) return;
    if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path());
    const std::string header = "step,time,dt,kinetic,thermal,potential,total,relative_change,step_seconds";
    const std::string rows = samples::logRowsUpTo(path, header, resume_after);
    path_ = path.string();
    file_ = std::fopen(path.c_str(), "w");
    if (!file_) throw grove::Error("evrard", fmt::format("cannot write the energy file {}", path.string()));
    std::fputs(rows.c_str(), file_);
  }
  ~EnergyLog() {
    if (file_) std::fclose(file_);
  }
  EnergyLog(const EnergyLog&) = delete;
  EnergyLog& operator=(const EnergyLog&) = delete;

  void write(std::int64_t step, double time, double dt, const evrard::Energies& e, double e0, double seconds) {
    if (!file_) return;
    fmt::print(file_, "{},{:.8g},{:.6g},{:.10g},{:.10g},{:.10g},{:.10g},{:.6e},{:.5f}\n", step, time, dt, e.kinetic,
               e.thermal, e.potential, e.total(), (e.total() - e0) / std::abs(e0), seconds);
    samples::requireWritten(file_, path_, "evrard", false);
  }

 private:
  std::FILE* file_ = nullptr;
  std::string path_;
};

void writeAsciiSnapshot(const std::vector<evrard::EvrardParticle>& all, const std::filesystem::path& path,
                        double time) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (!f) throw grove::Error("evrard", fmt::format("cannot write snapshot {}", path.string()));
  fmt::print(f, "# time {} n {}\n# id mass x y z vx vy vz u density h potential\n", time, all.size());
  for (const auto& p : all)
    fmt::print(f, "{} {:.9g} {:.9g} {:.9g} {:.9g} {:.9g} {:.9g} {:.9g} {:.9g} {:.9g} {:.9g} {:.9g}\n", p.id, p.mass,
               p.pos.x, p.pos.y, p.pos.z, p.vel.x, p.vel.y, p.vel.z, p.u, p.dens, p.h, p.pot);
  samples::requireWritten(f, path.string(), "evrard");
}

// Collective: one HDF5 file from all ranks, or an ASCII table gathered to rank 0.
void writeSnapshot(const Options& opt, const Gas& gas, const std::filesystem::path& out, std::int64_t index,
                   double time, std::int64_t step) {
#if GROVE_HAS_HDF5
  if (opt.snapshot_format == "hdf5") {
    grove::io::SnapshotHeader header;
    header.time = time;
    header.step = step;
    header.parameters = opt.parameters;
    header.part_type = 0;  // gas
    grove::io::writeSnapshot((out / fmt::format("snapshot_{:04d}.hdf5", index)).string(), gas, header);
    grove::io::writeXdmfSeriesBeside(gas.comm(), (out / "snapshots.xdmf").string(), "snapshot_");
    return;
  }
#endif
  const auto all = gas.comm().gatherv(gas.particles(), 0);
  if (gas.comm().rank() == 0) writeAsciiSnapshot(all, out / fmt::format("snapshot_{:04d}.txt", index), time);
}

// ---- checks --------------------------------------------------------------------------------------

class Checks {
 public:
  // Records one check; logs it whatever the outcome.
  void expect(bool ok, const std::string& what) {
    grove::log("check {}: {}", ok ? "passed" : "FAILED", what);
    failed_ += ok ? 0 : 1;
    ++count_;
  }
  int failed() const { return failed_; }
  int count() const { return count_; }

 private:
  int failed_ = 0, count_ = 0;
};

void checkStart(const Gas& gas, const evrard::Energies& e, const Options& opt, const evrard::Softening& softening,
                Checks& checks) {
  using evrard::EvrardSphere;
  // Every particle has u = 0.05 and the masses add to 1: only rounding separates the sum from 0.05
  // (N terms of relative rounding 1e-16 each: 1e-12 holds to N = 1e6 with a wide margin).
  checks.expect(std::abs(e.thermal - EvrardSphere::kThermalEnergy) <= 1e-12,
                fmt::format("thermal energy {:.15f} = 0.05 within 1e-12 (rounding only)", e.thermal));
  checks.expect(e.kinetic == 0.0, fmt::format("kinetic energy {} = 0 (at rest)", e.kinetic));
  const double discreteness = evrard::discretenessPotentialOffset(gas, softening);
  const double soft = evrard::softeningPotentialOffset(softening);
  const double model_bound = 2.0 * (discreteness + soft);
  const double tree_bound = evrard::treePotentialTolerance(opt.theta, opt.moment == "quadrupole") *
                            std::abs(EvrardSphere::kPotentialEnergy);
  grove::log("W expected above -2/3 by ~{:.3e} (lattice discreteness {:.3e} + softening {:.3e})", discreteness + soft,
             discreteness, soft);
  if (opt.n <= opt.direct_check_max_n) {
    const double w_direct = evrard::directPotentialEnergy(gas, softening);
    checks.expect(std::abs(e.potential - w_direct) <= tree_bound,
                  fmt::format("tree W {:.7f} against direct summation {:.7f}: |difference| {:.3e} <= {:.3e} "
                              "(theta {}, {})",
                              e.potential, w_direct, std::abs(e.potential - w_direct), tree_bound, opt.theta,
                              opt.moment));
    checks.expect(std::abs(w_direct - EvrardSphere::kPotentialEnergy) <= model_bound,
                  fmt::format("direct W {:.7f} against -2/3: |difference| {:.3e} <= {:.3e} (twice the estimate)",
                              w_direct, std::abs(w_direct - EvrardSphere::kPotentialEnergy), model_bound));
  } else {
    checks.expect(std::abs(e.potential - EvrardSphere::kPotentialEnergy) <= model_bound + tree_bound,
                  fmt::format("tree W {:.7f} against -2/3: |difference| {:.3e} <= {:.3e} (twice the estimate + tree)",
                              e.potential, std::abs(e.potential - EvrardSphere::kPotentialEnergy),
                              model_bound + tree_bound));
  }
}

// ---- the run -------------------------------------------------------------------------------------

// What the loop carries from step to step beside the gas and the domain (saved in checkpoints).
// No padding: Checkpoint::value compares a value's bytes across ranks, and padding bytes hold
// whatever was on each rank's stack (an `int snapshots` here once made that check fail at random).
struct LoopState {
  double time = 0.0;
  std::int64_t step = 0;
  std::int64_t snapshots = 0;
  double last_snapshot_time = -1.0;
  double next_snapshot = 0.0;
  evrard::TimeStep dt;  // the next step's
  double e0 = 0.0;
};
static_assert(sizeof(LoopState) == 4 * sizeof(double) + 2 * sizeof(std::int64_t) + sizeof(evrard::TimeStep),
              "LoopState must have no padding bytes (see above)");

struct Extremes {
  double thermal_max = 0, thermal_max_time = 0;
  double kinetic_max = 0, kinetic_max_time = 0;
  double potential_min = 0, potential_min_time = 0;
  double max_drift = 0, max_drift_time = 0;  // largest |E - E0| / |E0|
  void add(double t, const evrard::Energies& e, double e0) {
    if (e.thermal > thermal_max) thermal_max = e.thermal, thermal_max_time = t;
    if (e.kinetic > kinetic_max) kinetic_max = e.kinetic, kinetic_max_time = t;
    if (e.potential < potential_min) potential_min = e.potential, potential_min_time = t;
    const double drift = std::abs(e.total() - e0) / std::abs(e0);
    if (drift > max_drift) max_drift = drift, max_drift_time = t;
  }
};

// Whether the loop takes another step from `time` after `step` steps.
bool moreSteps(double time, std::int64_t step, const Options& opt) {
  return time < opt.t_end * (1.0 - 1e-12) && (opt.max_steps == 0 || step < opt.max_steps);
}

// What a restart may change (reported) and may not (refused): samples::RunOptions.
samples::RunOptions runOptionsOf(const Options& opt) {
  samples::RunOptions o;
  o.fixed("particles", opt.n).fixed("seed", opt.seed);
  o.changeable("t-end", opt.t_end).changeable("max-steps", opt.max_steps).changeable("theta", opt.theta);
  o.changeable("moment", opt.moment).changeable("softening", opt.softening);
  o.changeable("softening-law", opt.softening_law).changeable("n-ngb", opt.n_neighbours);
  o.changeable("alpha", opt.alpha).changeable("cfl", opt.cfl).changeable("eta-acc", opt.eta_acc);
  o.changeable("dt-max", opt.dt_max).changeable("n-leaf", opt.n_leaf).changeable("n-group", opt.n_group);
  o.changeable("n-group-gravity", opt.n_group_gravity).changeable("decompose-every", opt.decompose_every);
  o.changeable("snapshot-every", opt.snapshot_every);
  return o;
}

template <class GravityTree, class SpKernel>
int run(const grove::Runtime& runtime, const Options& opt) {
  const evrard::Softening softening{opt.softening_law == "plummer" ? evrard::SofteningLaw::kPlummer
                                                                    : evrard::SofteningLaw::kSpline,
                                    opt.softening};
  Gas gas;
  grove::DomainInfo dinfo;  // open boundary
  // The run's state, named once for its checkpoints (and restored from one on --restart).
  const std::filesystem::path out(opt.output_dir);
  LoopState loop;
  Extremes extremes;
  std::string options;  // the run's options, as its checkpoints record them
  grove::io::Checkpoint checkpoint((out / "restart").string(), gas.comm());
  checkpoint.particles("gas", gas).domain("domain", dinfo).value("loop", loop).value("extremes", extremes);
  checkpoint.value("options", options);
  const std::optional<grove::io::RestartInfo> restart =
      samples::restoreIfAsked(checkpoint, opt.restart, runOptionsOf(opt), options, "evrard");
  samples::requireStepsLeft("evrard", moreSteps(loop.time, loop.step, opt), loop.time, opt.t_end, loop.step,
                            opt.max_steps, restart ? "the checkpoint " + restart->path : "the start");
  if (!restart) generate(gas, opt);
  if (!restart || !restart->same_rank_count) {
    dinfo.decomposeDomainAll(gas);
    gas.exchangeParticle(dinfo);
  }

  sph::SolverParameters sph_params;
  sph_params.gamma = evrard::EvrardSphere::kGamma;
  sph_params.n_neighbours = opt.n_neighbours;
  sph_params.alpha = opt.alpha;
  sph_params.cfl = opt.cfl;
  evrard::TimeStepParameters step_params{opt.cfl, opt.eta_acc, 0.3, opt.dt_max};

  ForcePasses<GravityTree, SpKernel> passes(opt, sph_params, softening, gas.size());
  grove::log("grove evrard: N = {}, {} moment, theta = {}, {} softening eps = {}, {} neighbours, alpha = {}, "
             "t_end = {}, {} ranks x {} threads",
             opt.n, opt.moment, opt.theta, softening.name(), softening.eps, opt.n_neighbours, opt.alpha, opt.t_end,
             runtime.rankCount(), runtime.threadCount());
  if (runtime.rank() == 0) std::filesystem::create_directories(out);
  gas.comm().barrier();  // the directory is there for every rank
  EnergyLog energy_log(opt.energy_file.empty() ? out / "energy.csv" : std::filesystem::path(opt.energy_file),
                       runtime.rank() == 0, loop.step);
  Checks checks;
  if (!restart) {  // a restored gas carries its densities and forces, the loop its next dt
    StageSeconds start_seconds;
    const int initial_passes = passes.compute(gas, dinfo, start_seconds);
    const evrard::Energies e_start = energiesOf(gas);
    grove::log("t = 0: K = {:.6f}  U = {:.6f}  W = {:.6f}  E = {:.6f} ({} density passes, {:.3f} s)", e_start.kinetic,
               e_start.thermal, e_start.potential, e_start.total(), initial_passes, start_seconds.total());
    checkStart(gas, e_start, opt, softening, checks);
    loop.e0 = e_start.total();
    energy_log.write(0, 0.0, 0.0, e_start, loop.e0, 0.0);
    extremes.add(0.0, e_start, loop.e0);
    loop.next_snapshot = opt.snapshot_every > 0 ? opt.snapshot_every : opt.t_end;
    loop.dt = evrard::globalTimeStep(gas, step_params, softening.eps);
  }
  // The loop's names for the state it carries.
  double& time = loop.time;
  std::int64_t& step = loop.step;
  std::int64_t& snapshots = loop.snapshots;
  double& last_snapshot_time = loop.last_snapshot_time;
  double& next_snapshot = loop.next_snapshot;
  evrard::TimeStep& dt = loop.dt;
  const double e0 = loop.e0;
  StageSeconds sum;
  std::vector<double> step_seconds;
  while (moreSteps(time, step, opt)) {
    ++step;
    // Steps end exactly on snapshot times and t_end (the step is global, so this costs nothing).
    const double target = std::min(next_snapshot, opt.t_end);
    const double dt_step = std::min(dt.dt, target - time);
    const bool at_target = dt_step == target - time;
    StageSeconds st;
    Stopwatch watch;
    evrard::kickDriftPredict(gas, dt_step);
    st.s[StageSeconds::kIntegration] += watch.lap();
    if (step % opt.decompose_every == 0) dinfo.decomposeDomainAll(gas);
    gas.exchangeParticle(dinfo);
    st.s[StageSeconds::kDomain] += watch.lap();
    const int gather_passes = passes.compute(gas, dinfo, st);
    watch.lap();
    evrard::finalKick(gas, dt_step);
    time = at_target ? target : time + dt_step;
    const evrard::Energies e = energiesOf(gas);
    dt = evrard::globalTimeStep(gas, step_params, softening.eps);
    st.s[StageSeconds::kIntegration] += watch.lap();
    gas.comm().allreduceMax(std::span<double>(st.s));
    sum.add(st);
    step_seconds.push_back(st.total());
    extremes.add(time, e, e0);
    energy_log.write(step, time, dt_step, e, e0, st.total());
    grove::log("step {:5d}  t = {:.5f}  dt = {:.3e}  K = {:.5f}  U = {:.5f}  W = {:.5f}  dE/|E0| = {:+.3e}  "
               "{:.3f} s ({} density passes)",
               step, time, dt_step, e.kinetic, e.thermal, e.potential, (e.total() - e0) / std::abs(e0), st.total(),
               gather_passes);
    if (at_target && target == next_snapshot) {
      writeSnapshot(opt, gas, out, snapshots++, time, step);
      last_snapshot_time = time;
      next_snapshot = opt.snapshot_every > 0 ? next_snapshot + opt.snapshot_every : opt.t_end;
    }
    samples::checkpointIfDue(checkpoint, opt.restart, step);
  }
  if (last_snapshot_time != time) writeSnapshot(opt, gas, out, snapshots++, time, step);  // the final state

  const evrard::Energies e_end = energiesOf(gas);
  const auto n_end = gas.globalCount();
  checks.expect(static_cast<std::int64_t>(n_end) == opt.n,
                fmt::format("{} particles at the end, {} at the start", static_cast<std::int64_t>(n_end), opt.n));
  checks.expect(extremes.max_drift <= opt.energy_tolerance,
                fmt::format("largest total-energy change |E - E0| / |E0| = {:.3e} (at t = {:.4f}) <= {:.3e}",
                            extremes.max_drift, extremes.max_drift_time, opt.energy_tolerance));

  std::sort(step_seconds.begin(), step_seconds.end());
  const double steps = static_cast<double>(std::max<std::size_t>(step_seconds.size(), 1));  // this process's
  const double median = step_seconds.empty() ? 0.0 : step_seconds[step_seconds.size() / 2];
  grove::log("summary: t = {:.4f} after {} steps; E0 = {:.6f}, E = {:.6f} (change {:+.3e} of |E0|; largest {:.3e} at "
             "t = {:.3f})",
             time, step, e0, e_end.total(), (e_end.total() - e0) / std::abs(e0), extremes.max_drift,
             extremes.max_drift_time);
  grove::log("summary: final K = {:.5f}  U = {:.5f}  W = {:.5f}; thermal peak {:.5f} at t = {:.3f}, kinetic peak "
             "{:.5f} at t = {:.3f}, W minimum {:.5f} at t = {:.3f}",
             e_end.kinetic, e_end.thermal, e_end.potential, extremes.thermal_max, extremes.thermal_max_time,
             extremes.kinetic_max, extremes.kinetic_max_time, extremes.potential_min, extremes.potential_min_time);
  grove::log("summary: {:.4f} s per step (median {:.4f}): density {:.4f}  hydro {:.4f}  gravity {:.4f}  integration "
             "{:.4f}  domain {:.4f}; {:.1f} s in all; energies in {}, {} snapshot(s) in {}",
             sum.total() / steps, median, sum.s[StageSeconds::kDensity] / steps, sum.s[StageSeconds::kHydro] / steps,
             sum.s[StageSeconds::kGravity] / steps, sum.s[StageSeconds::kIntegration] / steps,
             sum.s[StageSeconds::kDomain] / steps, sum.total(),
             opt.energy_file.empty() ? (out / "energy.csv").string() : opt.energy_file, snapshots, out.string());
  grove::log("{{\"sample\":\"evrard\",\"n\":{},\"theta\":{},\"moment\":\"{}\",\"softening\":\"{}\",\"eps\":{},"
             "\"ranks\":{},\"threads\":{},\"steps\":{},\"t\":{:.6f},\"s_per_step\":{:.5f},\"e0\":{:.8f},\"e_end\":{:.8f},"
             "\"max_drift\":{:.4e},\"thermal_peak\":{:.6f},\"thermal_peak_t\":{:.4f}}}",
             opt.n, opt.theta, opt.moment, softening.name(), softening.eps, runtime.rankCount(), runtime.threadCount(),
             step, time, sum.total() / steps, e0, e_end.total(), extremes.max_drift, extremes.thermal_max,
             extremes.thermal_max_time);
  grove::log("gravity tree, last pass: {}", passes.gravityProfile().json());
  // Equal checksums: bitwise equal gas (how tests/samples/restart_test.py compares runs).
  grove::log("final gas: checksum {:016x}", grove::io::particleChecksum(gas));
  grove::log("{} of {} checks passed", checks.count() - checks.failed(), checks.count());
  return checks.failed() == 0 ? 0 : 1;
}



}  // namespace

int main(int argc, char** argv) {
  grove::Runtime runtime(argc, argv);
  Options opt;
  CLI::App app{"grove Evrard sample: adiabatic collapse of a self-gravitating gas sphere (SPH + tree gravity)"};
  samples::enableParameterFile(app);
  app.add_option("-N,--particles", opt.n, "number of gas particles")
      ->check(samples::integerIn(64, std::int64_t{1} << 40));
  app.add_option("--t-end", opt.t_end, "end time (units sqrt(R^3 / G M))")->check(samples::kPositive);
  app.add_option("--theta", opt.theta, "gravity tree opening angle")->check(samples::inRange(0.0, 1.5));
  app.add_option("--moment", opt.moment, "gravity tree cells' moment")->check(CLI::IsMember({"monopole", "quadrupole"}));
  app.add_option("--softening", opt.softening, "gravitational softening eps (Plummer-equivalent: phi(0) = -m/eps)")
      ->check(samples::kPositive);
  app.add_option("--softening-law", opt.softening_law, "plummer, or spline (GADGET-2's, support 2.8 eps)")
      ->check(CLI::IsMember({"plummer", "spline"}));
  app.add_option("--n-ngb", opt.n_neighbours, "SPH target neighbour number (4 pi/3) h^3 rho / m")
      ->check(samples::inRange(8.0, 1000.0));
  app.add_option("--alpha", opt.alpha, "artificial viscosity alpha")->check(samples::kNonNegative);
  app.add_option("--cfl", opt.cfl, "Courant factor: dt <= cfl h / v_signal")
      ->check(samples::finiteNumber("in (0, 1]", "(0, 1]", [](double x) { return x > 0 && x <= 1; }));
  app.add_option("--eta-acc", opt.eta_acc, "acceleration criterion: dt <= sqrt(2 eta eps / |a|)")
      ->check(samples::kPositive);
  app.add_option("--dt-max", opt.dt_max, "largest time step")->check(samples::kPositive);
  app.add_option("--n-leaf", opt.n_leaf, "most particles in a leaf")->check(samples::integerAtLeast(1));
  app.add_option("--n-group", opt.n_group, "most particles sharing one SPH interaction list")
      ->check(samples::integerAtLeast(1));
  app.add_option("--n-group-gravity", opt.n_group_gravity, "most particles sharing one gravity interaction list")
      ->check(samples::integerAtLeast(1));
  app.add_option("--decompose-every", opt.decompose_every, "steps between domain decompositions")
      ->check(samples::integerAtLeast(1));
  app.add_option("--max-steps", opt.max_steps, "stop after this many steps (0: run to t_end)")
      ->check(samples::integerAtLeast(0));
  app.add_option("--seed", opt.seed, "random shift of the initial lattice");
  app.add_option("-o,--output-dir", opt.output_dir, "directory for the energy file and snapshots");
  app.add_option("--energy-file", opt.energy_file, "energy CSV, one line per step (default <output-dir>/energy.csv)");
  app.add_option("--snapshot-every", opt.snapshot_every, "simulation time between snapshots (0: the last only)")
      ->check(samples::kNonNegative);
  app.add_option("--snapshot-format", opt.snapshot_format,
                 "hdf5: one file from all ranks (grove::io; the default where grove has HDF5), ascii: a table")
      ->check(CLI::IsMember({"hdf5", "ascii"}));
  app.add_option("--energy-tolerance", opt.energy_tolerance,
                 "fail unless |E - E0| / |E0| stays at or below this at every step")
      ->check(samples::kPositive);
  app.add_option("--direct-check-max-n", opt.direct_check_max_n,
                 "check the start's tree W against direct summation (O(N^2)) up to this N")
      ->check(samples::integerAtLeast(0));
  samples::addRestartOptions(app, opt.restart);
  if (const auto exit_code = samples::parse(app, argc, argv)) return *exit_code;
  // The gas, its SPH and gravity trees' copies and the exchange's buffers: about eight particles'
  // bytes each; and on every rank the whole initial lattice (its candidates and points).
  samples::requireMemoryFor("evrard", fmt::format("--particles {}", opt.n), static_cast<long double>(opt.n),
                            runtime.rankCount(), 8.0L * sizeof(evrard::EvrardParticle),
                            1.8L * 32 + sizeof(evrard::LatticePoint));
  samples::chooseSnapshotFormat(app, opt.snapshot_format, "evrard");
  opt.parameters = samples::parametersInEffect(app);
  if (opt.moment == "quadrupole")
    return run<GravityTrees::Quadrupole, evrard::GravityQuadrupoleKernel>(runtime, opt);
  return run<GravityTrees::Monopole, evrard::GravityKernel>(runtime, opt);
}
