// Gravity benchmark: the Accelerated FDPS paper's cold uniform sphere, leapfrog steps with the
// user-template fp32 SIMD kernels, energy every step and decomposition every 4 steps, as in the
// FDPS runs we compare with. Prints one JSON line per step and a summary line.
#include <CLI/CLI.hpp>
#include <sys/resource.h>

#include <chrono>

#include "cold_sphere.hpp"
#include "gravity_kernels.hpp"
#include "grove/grove.hpp"
#include "grove/force/tree_for_force_long.hpp"

namespace {

double seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

double maxResidentBytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) * 1024.0;
}

template <class Tree>
int run(const grove::Runtime& runtime, std::int64_t n, double theta, int n_leaf, int n_group, int steps, double eps,
        double dt) {
  grove::ParticleSystem<user::Body> psys;
  grove::DomainInfo dinfo;
  bench::makeColdSphere(n, psys, dinfo);
  Tree tree(psys.size(), theta, n_leaf, n_group);
  const float eps2 = static_cast<float>(eps * eps);
  const user::GravityMonopoleKernel ep_kernel{eps2};
  auto sp_kernel = [&](const user::GravityEPI* epi, int ni, const typename Tree::SpjType* sp, int nj,
                       user::GravityForce* f) {
    if constexpr (std::is_same_v<typename Tree::SpjType, grove::SPJQuadrupole>)
      user::GravityQuadrupoleKernel{eps2}(epi, ni, sp, nj, f);
    else
      ep_kernel(epi, ni, sp, nj, f);
  };
  tree.calcForceAllAndWriteBack(ep_kernel, sp_kernel, psys, dinfo);
  const grove::Comm& comm = psys.comm();
  double total = 0.0;
  for (int step = 1; step <= steps; ++step) {
    const auto t0 = std::chrono::steady_clock::now();
    for (auto& b : psys) {
      b.vel += (0.5 * dt) * b.acc;
      b.pos += dt * b.vel;
    }
    const auto td = std::chrono::steady_clock::now();
    if (step % 4 == 0) dinfo.decomposeDomainAll(psys);
    psys.exchangeParticle(dinfo);
    const double decompose_exchange = seconds(td);
    tree.calcForceAllAndWriteBack(ep_kernel, sp_kernel, psys, dinfo);
    double kinetic = 0.0, potential = 0.0;
    for (auto& b : psys) {
      b.vel += (0.5 * dt) * b.acc;
      kinetic += 0.5 * b.mass * norm2(b.vel);
      potential += 0.5 * b.mass * (b.pot + b.mass / eps);  // remove the self term
    }
    const double energy = comm.allreduceSum(kinetic + potential);
    const double step_s = comm.allreduceMax(seconds(t0));
    total += step_s;
    grove::log(R"({{"step":{},"step_s":{:.4f},"decompose_exchange_s":{:.4f},"energy":{:.8f},"tree":{}}})", step,
               step_s, decompose_exchange, energy, tree.profile().json());
  }
  const double rss = comm.allreduceMax(maxResidentBytes());
  const double interactions = static_cast<double>(
      comm.allreduceSum(tree.profile().n_ep_ep + tree.profile().n_ep_sp));
  grove::log(R"({{"summary":{{"n":{},"theta":{},"n_leaf":{},"n_group":{},"ranks":{},"threads":{},"steps":{},)"
             R"("mean_step_s":{:.4f},"interactions_per_step":{:.4g},"max_rss_bytes_per_particle":{:.1f},)"
             R"("tree_bytes_per_particle":{:.1f}}}}})",
             n, theta, n_leaf, n_group, runtime.rankCount(), runtime.threadCount(), steps, total / steps, interactions,
             rss * runtime.rankCount() / static_cast<double>(n),
             static_cast<double>(tree.memoryBytes()) / static_cast<double>(std::max<std::size_t>(psys.size(), 1)));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  grove::Runtime runtime(argc, argv);
  CLI::App app{"grove gravity benchmark (cold uniform sphere)"};
  std::int64_t n = 1 << 18;
  double theta = 0.5, eps = 1.0 / 32.0, dt = 1.0 / 128.0;
  int n_leaf = 8, n_group = 256, steps = 8;
  std::string moment = "monopole";
  app.add_option("-n", n, "particles");
  app.add_option("--theta", theta, "opening angle");
  app.add_option("--n-leaf", n_leaf, "leaf limit");
  app.add_option("--n-group", n_group, "group limit");
  app.add_option("--steps", steps, "steps");
  app.add_option("--eps", eps, "softening");
  app.add_option("--dt", dt, "time step");
  app.add_option("--moment", moment, "monopole or quadrupole")->check(CLI::IsMember({"monopole", "quadrupole"}));
  CLI11_PARSE(app, argc, argv);
  using Types = grove::TreeForForceLong<user::GravityForce, user::GravityEPI, user::GravityEPJ>;
  if (moment == "quadrupole") return run<Types::Quadrupole>(runtime, n, theta, n_leaf, n_group, steps, eps, dt);
  return run<Types::Monopole>(runtime, n, theta, n_leaf, n_group, steps, eps, dt);
}
