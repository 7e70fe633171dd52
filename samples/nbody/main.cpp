// samples/nbody: generates a cold uniform sphere or a Plummer sphere, then steps it: drift,
// domain decomposition (every --decompose-every steps) and particle exchange, printing one
// progress line per step. Forces are not computed yet: bodies move ballistically until the
// long-range tree lands; the decomposition and exchange are the real ones.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>

#include "grove/grove.hpp"
#include "initial_conditions.hpp"

namespace {

struct Options {
  std::int64_t n = 1 << 16;
  std::string ic = "cold";
  std::string method = "multisection";
  double dt = 1.0 / 128.0;
  double t_end = 0.25;
  int decompose_every = 4;
  double coef_ema = 1.0;
  int samples_per_rank = grove::DomainInfo::kDefaultSamplesPerRank;
  std::uint64_t seed = 1;
  std::string output_dir = "nbody_out";
};

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void generate(grove::ParticleSystem<nbody::Body>& bodies, const Options& opt) {
  const int rank = bodies.comm().rank(), ranks = bodies.comm().size();
  const std::int64_t begin = opt.n * rank / ranks, end = opt.n * (rank + 1) / ranks;
  bodies.resize(static_cast<std::size_t>(end - begin));
  for (std::int64_t id = begin; id < end; ++id)
    bodies[static_cast<std::size_t>(id - begin)] =
        opt.ic == "plummer" ? nbody::plummerSphere(id, opt.n, opt.seed) : nbody::coldUniformSphere(id, opt.n, opt.seed);
}

}  // namespace

int main(int argc, char** argv) {
  grove::Runtime runtime(argc, argv);
  Options opt;
  CLI::App app{"grove N-body sample"};
  app.add_option("-n,--particles", opt.n, "number of bodies")->check(CLI::PositiveNumber);
  app.add_option("--ic", opt.ic, "initial condition")->check(CLI::IsMember({"cold", "plummer"}));
  app.add_option("--method", opt.method, "domain decomposition")->check(CLI::IsMember({"multisection", "orb"}));
  app.add_option("--dt", opt.dt, "time step")->check(CLI::PositiveNumber);
  app.add_option("--t-end", opt.t_end, "end time")->check(CLI::NonNegativeNumber);
  app.add_option("--decompose-every", opt.decompose_every, "steps between decompositions")->check(CLI::PositiveNumber);
  app.add_option("--coef-ema", opt.coef_ema, "smoothing of domain boundaries, (0, 1]")->check(CLI::Range(1e-6, 1.0));
  app.add_option("--samples-per-rank", opt.samples_per_rank, "decomposition samples per rank")
      ->check(CLI::PositiveNumber);
  app.add_option("--seed", opt.seed, "random seed");
  app.add_option("-o,--output-dir", opt.output_dir, "directory for the progress log");
  CLI11_PARSE(app, argc, argv);

  grove::log("grove nbody: N = {}, ic = {}, {} ranks x {} threads, method = {}, dt = {}, t_end = {}", opt.n, opt.ic,
             runtime.rankCount(), runtime.threadCount(), opt.method, opt.dt, opt.t_end);
  grove::log("forces: none yet (ballistic drift); decomposition and exchange are real");

  grove::ParticleSystem<nbody::Body> bodies;
  grove::DomainInfo dinfo;
  dinfo.initialize(opt.coef_ema);
  dinfo.setSampleCountPerRank(opt.samples_per_rank);
  dinfo.setDecompositionMethod(opt.method == "orb" ? grove::DecompositionMethod::ORB
                                                   : grove::DecompositionMethod::MULTISECTION);
  generate(bodies, opt);
  dinfo.decomposeDomainAll(bodies);
  bodies.exchangeParticle(dinfo);

  std::FILE* log_file = nullptr;
  if (runtime.rank() == 0) {
    std::filesystem::create_directories(opt.output_dir);
    log_file = std::fopen((std::filesystem::path(opt.output_dir) / "progress.csv").c_str(), "w");
    if (!log_file) throw grove::Error("nbody", fmt::format("cannot write {}/progress.csv", opt.output_dir));
    fmt::print(log_file, "step,time,n_global,n_max_rank,imbalance,decompose_s,exchange_s,step_s\n");
  }

  const grove::Comm& comm = bodies.comm();
  const auto n_steps = static_cast<std::int64_t>(std::llround(opt.t_end / opt.dt));
  double time = 0.0;
  for (std::int64_t step = 1; step <= n_steps; ++step) {
    const auto step_start = std::chrono::steady_clock::now();
    for (auto& b : bodies) b.pos += opt.dt * b.vel;
    time += opt.dt;

    auto t = std::chrono::steady_clock::now();
    if (step % opt.decompose_every == 0) dinfo.decomposeDomainAll(bodies);
    const double decompose_s = comm.allreduceMax(secondsSince(t));
    t = std::chrono::steady_clock::now();
    bodies.exchangeParticle(dinfo);
    const double exchange_s = comm.allreduceMax(secondsSince(t));
    const double step_s = comm.allreduceMax(secondsSince(step_start));

    const auto n_global = bodies.globalCount();
    if (n_global != opt.n)
      throw grove::Error("nbody", fmt::format("step {}: {} bodies, expected {}", step, n_global, opt.n));
    const auto n_max = comm.allreduceMax(static_cast<grove::GlobalCount>(bodies.size()));
    const double imbalance = static_cast<double>(n_max) * comm.size() / static_cast<double>(n_global);
    grove::log("step {:4d}  t = {:.4f}  N = {}  max/mean per rank = {:.3f}  decompose {:.2e} s  exchange {:.2e} s  "
               "step {:.2e} s  {:.3e} particles/s",
               step, time, n_global, imbalance, decompose_s, exchange_s, step_s,
               static_cast<double>(n_global) / step_s);
    if (log_file)
      fmt::print(log_file, "{},{},{},{},{},{},{},{}\n", step, time, n_global, n_max, imbalance, decompose_s, exchange_s,
                 step_s);
  }
  if (log_file) std::fclose(log_file);
  grove::log("done: {} steps, progress log in {}/progress.csv", n_steps, opt.output_dir);
  return 0;
}
