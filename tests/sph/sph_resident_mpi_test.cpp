// The SPH sample's GPU-resident step (user_templates/cuda/sph_resident.h) on 1-4 ranks sharing one GPU:
// decomposition and particle exchange from device data, the short-range trees' device LET and
// global j-trees, against the sample's CPU passes on the same ranks. Ten shock-tube steps;
// every particle and the binned profiles compared. Skips where no CUDA device is present.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <span>
#include <vector>

#include "grove/comm/comm.hpp"
#include "grove/gpu/device_gpu.h"
#include "cuda/sph_resident.h"
#include "shock_tube.hpp"
#include "sph_comparison.hpp"
#include "sph_scenarios.hpp"
#include "sph/sph_trees.hpp"

namespace {

using namespace sph;
using namespace sph::testing;

class SphResidentRanks : public ::testing::Test {
 protected:
  void SetUp() override {
    if (grove::gpu::deviceCount() == 0) GTEST_SKIP() << "no CUDA device";
  }
};

// Every rank's particles, sorted by id (collective).
std::vector<GasParticle> everyParticleById(const std::vector<GasParticle>& mine, const grove::Comm& comm) {
  std::vector<GasParticle> all = comm.allgatherv(std::span<const GasParticle>(mine));
  std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  return all;
}

grove::DomainInfo tubeDomain(const ShockTube& tube) {
  grove::DomainInfo dinfo;
  dinfo.setBoundaryCondition(grove::BoundaryCondition::PERIODIC_XYZ);
  dinfo.setPosRootDomain({0.0, 0.0, 0.0}, tube.box);
  return dinfo;
}

// Bounds as in the one-rank test (tests/gpu/sph_multiwalk_test.cpp, ResidentShockTubeFollowsTheCpuRun):
// the passes agree to summation order, here with the global trees' order on each rank too.
TEST_F(SphResidentRanks, ShockTubeStepsFollowTheCpuRunOnTheSameRanks) {
  const grove::Comm comm = grove::Comm::world();
  const ShockTube tube(64);
  constexpr int kSteps = 10, kDecomposeEvery = 4;
  Gas cpu;
  const std::int64_t n = tube.count(), begin = n * comm.rank() / comm.size(), end = n * (comm.rank() + 1) / comm.size();
  for (std::int64_t id = begin; id < end; ++id) cpu.add(tube.particle(id, 200));
  grove::DomainInfo cpu_dinfo = tubeDomain(tube), gpu_dinfo = tubeDomain(tube);
  const SolverParameters p = parametersFor(200, cpu_dinfo);
  ResidentSph resident(p, gpu_dinfo, 32);
  resident.upload(std::vector<GasParticle>(cpu.begin(), cpu.end()));  // before the host's exchange
  resident.distribute(true);
  distribute(cpu, cpu_dinfo);
  DensityTree density_tree(cpu.size(), 0.0, 8, 64);
  HydroTree hydro_tree(cpu.size(), 0.0, 8, 64);
  computeDensity(density_tree, cpu, cpu_dinfo, p);
  computeHydroForces(hydro_tree, cpu, cpu_dinfo, p);
  resident.density();
  resident.hydro();
  double dt_cpu = globalTimeStep(cpu, p), dt_gpu = resident.timeStep();
  double time = 0.0;
  for (int step = 1; step <= kSteps; ++step) {
    EXPECT_NEAR(dt_gpu, dt_cpu, 1e-10 * dt_cpu) << "step " << step;
    const double dt = dt_cpu;
    kickDriftPredict(cpu, dt);
    cpu.adjustPositionIntoRootDomain(cpu_dinfo);
    if (step % kDecomposeEvery == 0) cpu_dinfo.decomposeDomainAll(cpu);
    cpu.exchangeParticle(cpu_dinfo);
    computeDensity(density_tree, cpu, cpu_dinfo, p);
    computeHydroForces(hydro_tree, cpu, cpu_dinfo, p);
    finalKick(cpu, dt);
    resident.kickDriftPredict(dt);
    resident.distribute(step % kDecomposeEvery == 0);
    resident.density();
    resident.hydro();
    resident.finalKick(dt);
    time += dt;
    dt_cpu = globalTimeStep(cpu, p), dt_gpu = resident.timeStep();
  }
  const auto ref = everyParticleById(std::vector<GasParticle>(cpu.begin(), cpu.end()), comm);
  const auto got = everyParticleById(resident.download(), comm);
  ASSERT_EQ(got.size(), static_cast<std::size_t>(n));
  ASSERT_EQ(ref.size(), got.size());
  double v_scale = 0.0;
  for (const auto& r : ref) v_scale = std::max(v_scale, grove::norm(r.vel));
  std::vector<double> pos, vel, dens;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    ASSERT_EQ(got[i].id, ref[i].id);
    grove::Vec3d d = got[i].pos - ref[i].pos;
    for (double* c : {&d.x, &d.y, &d.z}) *c -= std::round(*c / tube.box.x) * tube.box.x;
    pos.push_back(grove::norm(d) / tube.box.x);
    vel.push_back(grove::norm(got[i].vel - ref[i].vel) / v_scale);
    dens.push_back(std::abs(got[i].dens - ref[i].dens) / ref[i].dens);
  }
  const Spread sp = spreadOf(pos), sv = spreadOf(vel), sd = spreadOf(dens);
  if (comm.rank() == 0)
    std::printf("  [%d ranks, shock tube, %d steps to t = %.5f] particles, median / max: pos %.2e / %.2e  "
                "vel %.2e / %.2e  rho %.2e / %.2e\n",
                comm.size(), kSteps, time, sp.median, sp.max, sv.median, sv.max, sd.median, sd.max);
  for (const Spread* x : {&sp, &sv, &sd}) EXPECT_LE(x->median, 1e-12);
  // Binned profiles, of all particles (the host's binProfiles sums over ranks).
  Gas ref_gas, got_gas;
  if (comm.rank() == 0) ref_gas.add(std::span<const GasParticle>(ref)), got_gas.add(std::span<const GasParticle>(got));
  const double worst = largestProfileDifference(got_gas, ref_gas, tube, 50, time);
  if (comm.rank() == 0) std::printf("  [%d ranks, shock tube] binned profiles: largest relative difference %.2e\n", comm.size(), worst);
  EXPECT_LE(worst, 1e-10);
}

}  // namespace
