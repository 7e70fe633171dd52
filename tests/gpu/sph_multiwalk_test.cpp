// The SPH sample's density and hydro passes on the GPU (user_templates/cuda/sph_*: the
// hand-written template and grove's engine) through grove's short-range trees and the sample's
// own solver functions, against the CPU kernels through the same trees: template and engine equal
// the CPU to rounding, the template's index and plain forms (and the engine's) are bitwise equal,
// and passes on kept lists (REUSE_LIST) are bitwise equal to passes on new lists. The GPU-resident
// step (user_templates/cuda/sph_resident.h: exact neighbour sets on grove's resident short-range trees)
// against the same CPU kernels, pass by pass and over ten shock-tube steps. Single process;
// skips where no CUDA device is present.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>
#include <numbers>
#include <span>
#include <string>
#include <vector>

#include "cuda/sph_multiwalk_gpu.h"
#include "grove/gpu/device_gpu.h"
#include "cuda/sph_resident.h"
#include "shock_tube.hpp"
#include "sph_comparison.hpp"
#include "sph_scenarios.hpp"
#include "sph/sph_trees.hpp"

namespace {

using namespace sph;
using namespace sph::testing;

constexpr int kLeaf = 8, kGroup = 64;
// Two tags (batch k dispatched before batch k - 1 is retrieved) and small batches, so that every
// pass runs several batches in flight.
const MultiwalkSettings kIndex{2, 64, true};

struct Scene {
  std::string name;
  Gas gas;
  grove::DomainInfo dinfo;
  SolverParameters p;
};

// A 16^3 periodic lattice with random displacements, velocities (viscosity and the Balsara switch
// at work) and energies, 64 neighbours, h guessed guess_factor times the lattice value: 1.3 makes
// every particle take several Newton steps, 0.5 makes every search radius too small at first.
Scene disorderedLattice(double guess_factor) {
  LatticeSpec spec = disorderedSpec();
  spec.n_side = 16;
  spec.h = guess_factor * std::cbrt(3.0 * 64 / (4.0 * std::numbers::pi)) * spec.spacing();
  Scene s{"disordered lattice, h guess x" + std::to_string(guess_factor).substr(0, 3), latticeGas(spec),
          periodicCube(spec.side), {}};
  distribute(s.gas, s.dinfo);
  s.p = parametersFor(64, s.dinfo);
  return s;
}

// The sample's problem at nx = 64 (18,432 particles, 200 neighbours): the density jump of 8 and
// the two interfaces. (Fewer neighbours leave room in the narrow periodic y and z for a skin.)
Scene shockTube(int n_neighbours = 200) {
  const ShockTube tube(64);
  Scene s{"shock tube nx 64", Gas{}, grove::DomainInfo{}, {}};
  for (std::int64_t id = 0; id < tube.count(); ++id) s.gas.add(tube.particle(id, n_neighbours));
  s.dinfo.setBoundaryCondition(grove::BoundaryCondition::PERIODIC_XYZ);
  s.dinfo.setPosRootDomain({0.0, 0.0, 0.0}, tube.box);
  distribute(s.gas, s.dinfo);
  s.p = parametersFor(n_neighbours, s.dinfo);
  return s;
}

// Scene k of the three above.
Scene scene(int k) { return k == 0 ? disorderedLattice(1.3) : k == 1 ? disorderedLattice(0.5) : shockTube(); }

class SphGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (grove::gpu::deviceCount() == 0) GTEST_SKIP() << "no CUDA device";
  }
};

// Density through the template (h iterated in the kernel) and the engine (sums on the device, h
// iterated on the host between REUSE_LIST passes) against the CPU kernel.
//
// Bounds: both GPU paths take the CPU kernel's Newton-bisection steps (sph::SupportSearch) on
// sums that differ from the CPU's by summation order and fused multiply-adds only, ~1e-15
// relative; the median stays there (1e-13). Where a particle's last step lands within rounding
// of the 1e-9 stopping tolerance, one path may take one more Newton step: h then moves by at most
// ~tolerance/3 relative, which bounds the largest difference (1e-9). On the CPU the engine path's
// host iteration agrees with the kernel to 1.6e-15 (tests/sph, sph_engine_path_test.cpp).
TEST_F(SphGpu, DensityEqualsTheCpuKernel) {
  for (int k = 0; k < 3; ++k) {
    Scene s = scene(k);
    Gas cpu = copyOf(s.gas), on_template = copyOf(s.gas), on_engine = copyOf(s.gas);
    DensityTree cpu_tree(cpu.size(), 0.0, kLeaf, kGroup), template_tree(cpu.size(), 0.0, kLeaf, kGroup);
    DensitySumsTree sums_tree(cpu.size(), 0.0, kLeaf, kGroup);
    const int cpu_passes = computeDensity(cpu_tree, cpu, s.dinfo, s.p);

    auto gpu_template = user::cuda::makeSphDensityMultiwalk(densityParametersOf(s.p));
    EXPECT_EQ(computeDensityMultiwalk(template_tree, *gpu_template, on_template, s.dinfo, s.p, kIndex), cpu_passes);
    expectWithin("template vs CPU, " + s.name, densityDifferences(on_template, cpu), 1e-9, 1e-13);

    auto engine = user::cuda::makeSphDensitySumsEngine();
    int sum_passes = 0;
    const int engine_passes = computeDensityBySums(
        [&](grove::InteractionListMode mode) { multiwalkPass(sums_tree, *engine, on_engine, s.dinfo, kIndex, mode); },
        on_engine, s.p, &sum_passes);
    EXPECT_EQ(engine_passes, cpu_passes);
    expectWithin("engine vs CPU, " + s.name, densityDifferences(on_engine, cpu), 1e-9, 1e-13);
    std::printf("  [%s] %d gather pass(es); engine: %d sum passes, %lld batches, %lld on kept lists\n",
                s.name.c_str(), cpu_passes, sum_passes, static_cast<long long>(engine->stats().batches),
                static_cast<long long>(engine->stats().lists_reused));
    EXPECT_GT(sum_passes, engine_passes) << "h moves, so each gather pass takes several sum passes";
    EXPECT_GT(engine->stats().lists_reused, 0) << "the sum passes after the first run on the kept lists";
  }
}

// Hydro on the CPU kernels' density results. Bounds: each particle's result is a sum of up to a
// few hundred pair terms, each computed by the CPU's own function; the GPU adds them one after
// another where the CPU adds them in vector lanes, and fuses multiply-adds. Relative to the
// largest |a| (or |du/dt|) of the scene, where near-cancelling sums are measured, that is
// ~1e-15 per term: 1e-11 for the largest difference, 1e-13 for the median; v_signal is a maximum
// of pair terms, 1e-12.
TEST_F(SphGpu, HydroEqualsTheCpuKernel) {
  for (int k : {0, 2}) {
    Scene s = scene(k);
    DensityTree density_tree(s.gas.size(), 0.0, kLeaf, kGroup);
    computeDensity(density_tree, s.gas, s.dinfo, s.p);
    Gas cpu = copyOf(s.gas), on_template = copyOf(s.gas), on_engine = copyOf(s.gas);
    HydroTree cpu_tree(cpu.size(), 0.0, kLeaf, kGroup), template_tree(cpu.size(), 0.0, kLeaf, kGroup),
        engine_tree(cpu.size(), 0.0, kLeaf, kGroup);
    computeHydroForces(cpu_tree, cpu, s.dinfo, s.p);

    auto gpu_template = user::cuda::makeSphHydroMultiwalk({s.p.alpha});
    computeHydroForcesMultiwalk(template_tree, *gpu_template, on_template, s.dinfo, kIndex);
    const HydroDifferences t = hydroDifferences(on_template, cpu);
    expectWithin("template vs CPU, " + s.name, t, 1e-11, 1e-13);
    EXPECT_LE(t.v_signal.max, 1e-12);

    auto engine = user::cuda::makeSphHydroEngine({s.p.alpha});
    computeHydroForcesMultiwalk(engine_tree, *engine, on_engine, s.dinfo, kIndex);
    const HydroDifferences e = hydroDifferences(on_engine, cpu);
    expectWithin("engine vs CPU, " + s.name, e, 1e-11, 1e-13);
    EXPECT_LE(e.v_signal.max, 1e-12);
  }
}

// The index form reads the same j-images through index lists that the plain form packs per walk;
// the batching (tags, walks per batch) does not enter a particle's result.
TEST_F(SphGpu, IndexAndPlainFormsAreBitwiseEqual) {
  Scene s = disorderedLattice(1.3);
  const MultiwalkSettings plain{1, 50, false}, index{3, 64, true};
  {
    Gas a = copyOf(s.gas), b = copyOf(s.gas);
    DensityTree tree_a(a.size(), 0.0, kLeaf, kGroup), tree_b(b.size(), 0.0, kLeaf, kGroup);
    auto gpu = user::cuda::makeSphDensityMultiwalk(densityParametersOf(s.p));
    computeDensityMultiwalk(tree_a, *gpu, a, s.dinfo, s.p, index);
    computeDensityMultiwalk(tree_b, *gpu, b, s.dinfo, s.p, plain);
    EXPECT_EQ(densityBitDifferences(a, b), 0) << "template density";
  }
  {
    Gas a = copyOf(s.gas), b = copyOf(s.gas);
    DensitySumsTree tree_a(a.size(), 0.0, kLeaf, kGroup), tree_b(b.size(), 0.0, kLeaf, kGroup);
    auto engine_a = user::cuda::makeSphDensitySumsEngine(), engine_b = user::cuda::makeSphDensitySumsEngine();
    computeDensityBySums([&](grove::InteractionListMode m) { multiwalkPass(tree_a, *engine_a, a, s.dinfo, index, m); },
                         a, s.p);
    computeDensityBySums([&](grove::InteractionListMode m) { multiwalkPass(tree_b, *engine_b, b, s.dinfo, plain, m); },
                         b, s.p);
    EXPECT_EQ(densityBitDifferences(a, b), 0) << "engine density";
  }
  DensityTree density_tree(s.gas.size(), 0.0, kLeaf, kGroup);
  computeDensity(density_tree, s.gas, s.dinfo, s.p);
  for (const bool use_engine : {false, true}) {
    Gas a = copyOf(s.gas), b = copyOf(s.gas);
    HydroTree tree_a(a.size(), 0.0, kLeaf, kGroup), tree_b(b.size(), 0.0, kLeaf, kGroup);
    auto gpu = use_engine ? user::cuda::makeSphHydroEngine({s.p.alpha}) : user::cuda::makeSphHydroMultiwalk({s.p.alpha});
    computeHydroForcesMultiwalk(tree_a, *gpu, a, s.dinfo, index);
    computeHydroForcesMultiwalk(tree_b, *gpu, b, s.dinfo, plain);
    EXPECT_EQ(hydroBitDifferences(a, b), 0) << (use_engine ? "engine hydro" : "template hydro");
  }
}

// On unchanged positions, a REUSE_LIST pass (lists kept by the tree and on the device, only the
// i-particles resent) gives what a MAKE_LIST pass on fresh objects gives, bit for bit.
TEST_F(SphGpu, ReusedListsGiveTheResultsOfNewLists) {
  Scene s = disorderedLattice(1.3);
  DensityTree density_tree(s.gas.size(), 0.0, kLeaf, kGroup);
  computeDensity(density_tree, s.gas, s.dinfo, s.p);
  for (const bool use_engine : {false, true}) {
    const char* what = use_engine ? "engine hydro" : "template hydro";
    auto make = [&] {
      return use_engine ? user::cuda::makeSphHydroEngine({s.p.alpha}) : user::cuda::makeSphHydroMultiwalk({s.p.alpha});
    };
    Gas fresh = copyOf(s.gas), reused = copyOf(s.gas);
    HydroTree fresh_tree(fresh.size(), 0.0, kLeaf, kGroup), reuse_tree(reused.size(), 0.0, kLeaf, kGroup);
    auto gpu_fresh = make(), gpu_reuse = make();
    multiwalkPass(fresh_tree, *gpu_fresh, fresh, s.dinfo, kIndex, grove::MAKE_LIST);
    multiwalkPass(reuse_tree, *gpu_reuse, reused, s.dinfo, kIndex, grove::MAKE_LIST_FOR_REUSE);
    for (auto& g : reused) g.acc = {}, g.du_dt = 0.0, g.v_signal = 0.0;  // the reuse pass must write them again
    const auto batches = gpu_reuse->stats().batches;
    multiwalkPass(reuse_tree, *gpu_reuse, reused, s.dinfo, kIndex, grove::REUSE_LIST);
    EXPECT_EQ(gpu_reuse->stats().lists_reused, gpu_reuse->stats().batches - batches) << what;
    EXPECT_GT(gpu_reuse->stats().lists_reused, 0) << what;
    EXPECT_EQ(hydroBitDifferences(fresh, reused), 0) << what;
  }
  {
    Gas fresh = copyOf(s.gas), reused = copyOf(s.gas);
    DensityTree fresh_tree(fresh.size(), 0.0, kLeaf, kGroup), reuse_tree(reused.size(), 0.0, kLeaf, kGroup);
    for (auto* gas : {&fresh, &reused})
      for (auto& g : *gas) g.r_search = s.p.search_factor * g.h;
    auto gpu_fresh = user::cuda::makeSphDensityMultiwalk(densityParametersOf(s.p));
    auto gpu_reuse = user::cuda::makeSphDensityMultiwalk(densityParametersOf(s.p));
    multiwalkPass(fresh_tree, *gpu_fresh, fresh, s.dinfo, kIndex, grove::MAKE_LIST);
    multiwalkPass(reuse_tree, *gpu_reuse, reused, s.dinfo, kIndex, grove::MAKE_LIST_FOR_REUSE);
    for (auto& g : reused) g.dens = 0.0, g.n_neighbours = 0;
    for (std::size_t i = 0; i < reused.size(); ++i) reused[i].h = s.gas[i].h;  // the same guesses again
    multiwalkPass(reuse_tree, *gpu_reuse, reused, s.dinfo, kIndex, grove::REUSE_LIST);
    EXPECT_GT(gpu_reuse->stats().lists_reused, 0) << "template density";
    EXPECT_EQ(densityBitDifferences(fresh, reused), 0) << "template density";
  }
  {
    // The engine path's sum passes: kept lists (REUSE_LIST after the first) against new lists
    // for every pass. From the scene's h guesses (s.gas holds converged h by now, which would
    // take a single pass and reuse nothing).
    const Scene guess = disorderedLattice(1.3);
    Gas kept = copyOf(guess.gas), rebuilt = copyOf(guess.gas);
    DensitySumsTree kept_tree(kept.size(), 0.0, kLeaf, kGroup), rebuilt_tree(rebuilt.size(), 0.0, kLeaf, kGroup);
    auto engine_kept = user::cuda::makeSphDensitySumsEngine(), engine_rebuilt = user::cuda::makeSphDensitySumsEngine();
    computeDensityBySums(
        [&](grove::InteractionListMode m) { multiwalkPass(kept_tree, *engine_kept, kept, guess.dinfo, kIndex, m); }, kept,
        guess.p);
    computeDensityBySums(
        [&](grove::InteractionListMode) {
          multiwalkPass(rebuilt_tree, *engine_rebuilt, rebuilt, guess.dinfo, kIndex, grove::MAKE_LIST);
        },
        rebuilt, guess.p);
    EXPECT_GT(engine_kept->stats().lists_reused, 0);
    EXPECT_EQ(engine_rebuilt->stats().lists_reused, 0);
    EXPECT_EQ(densityBitDifferences(kept, rebuilt), 0) << "engine density";
  }
}

// ---- the GPU-resident step ---------------------------------------------------------------------

// The particles sorted by id (a resident tree build reorders them on the device).
Gas byId(const std::vector<GasParticle>& particles) {
  std::vector<GasParticle> sorted = particles;
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  Gas gas;
  gas.add(std::span<const GasParticle>(sorted));
  return gas;
}
Gas byId(const Gas& gas) { return byId(std::vector<GasParticle>(gas.begin(), gas.end())); }

// Density (exact gather sets, the h iteration in a neighbour-set kernel) and hydro (exact
// symmetric sets) against the CPU kernels, with the template's bounds and reasons (above): the
// same Newton-bisection steps on sums that differ by summation order only.
TEST_F(SphGpu, ResidentPassesEqualTheCpuKernels) {
  for (int k = 0; k < 3; ++k) {
    Scene s = scene(k);
    Gas cpu = copyOf(s.gas);
    DensityTree cpu_tree(cpu.size(), 0.0, kLeaf, kGroup);
    const int cpu_passes = computeDensity(cpu_tree, cpu, s.dinfo, s.p);
    ResidentSph resident(s.p, s.dinfo, kLeaf);
    resident.upload(std::vector<GasParticle>(s.gas.begin(), s.gas.end()));
    EXPECT_EQ(resident.density(), cpu_passes) << s.name;
    expectWithin("resident vs CPU, " + s.name, densityDifferences(byId(resident.download()), byId(cpu)), 1e-9, 1e-13);
    EXPECT_EQ(resident.densityProfile().neighbours, [&] {
      std::int64_t n = 0;  // the last gather pass's exact sets: every particle within its r_search
      for (const auto& i : cpu)
        for (const auto& j : cpu) {
          grove::Vec3d d = j.pos - i.pos;
          const grove::Boxd root = s.dinfo.getPosRootDomain();
          for (int a = 0; a < 3; ++a) {
            const double L = root.high[static_cast<std::size_t>(a)] - root.low[static_cast<std::size_t>(a)];
            double& c = a == 0 ? d.x : a == 1 ? d.y : d.z;
            if (c > 0.5 * L) c -= L;
            else if (c < -0.5 * L) c += L;
          }
          n += grove::norm2(d) < i.r_search * i.r_search;
        }
      return n;
    }()) << s.name;

    // Hydro on the CPU's density results, for both.
    HydroTree hydro_tree(cpu.size(), 0.0, kLeaf, kGroup);
    Gas cpu_hydro = copyOf(cpu);
    computeHydroForces(hydro_tree, cpu_hydro, s.dinfo, s.p);
    resident.upload(std::vector<GasParticle>(cpu.begin(), cpu.end()));
    resident.hydro();
    const HydroDifferences h = hydroDifferences(byId(resident.download()), byId(cpu_hydro));
    expectWithin("resident vs CPU, " + s.name, h, 1e-11, 1e-13);
    EXPECT_LE(h.v_signal.max, 1e-12);
  }
}

// Ten steps of the shock tube (nx 64), all on the device, against the CPU run of the same steps
// (the sample's loop on one rank). Bounds: each step's passes agree as above (median ~1e-15,
// rarely one more Newton step: 1e-9 in a particle's h); ten steps carry that into positions and
// velocities without growth beyond a few times (the flow is not chaotic over ten steps). The binned
// profiles (the sample's output) average 370 particles per bin: 1e-10 relative (velocity relative
// to the largest); particle by particle, median 1e-12.
//
// The same for each way of getting the lists (ResidentSphLists): fresh exact sets per pass; one
// symmetric search shared by both passes, cells sorted at every search or every third; and shared
// lists kept across steps within a skin (50 neighbours: the tube's periodic width leaves no room
// for a skin at 200). The bounds are the same: every way gives each particle the
// same nonzero terms, in another order.
void followCpuRun(const ResidentSphLists& lists, const std::string& name, double skin_in_h_min,
                  int n_neighbours = 200) {
  SCOPED_TRACE(name);
  Scene s = shockTube(n_neighbours);
  const ShockTube tube(64);
  constexpr int kSteps = 10;
  Gas cpu = copyOf(s.gas);
  DensityTree density_tree(cpu.size(), 0.0, kLeaf, kGroup);
  HydroTree hydro_tree(cpu.size(), 0.0, kLeaf, kGroup);
  ResidentSphLists l = lists;
  double h_min = std::numeric_limits<double>::infinity();
  for (const auto& g : s.gas) h_min = std::min(h_min, g.h);
  l.skin = skin_in_h_min * h_min;
  ResidentSph resident(s.p, s.dinfo, kLeaf, 0, l);
  resident.upload(std::vector<GasParticle>(cpu.begin(), cpu.end()));
  computeDensity(density_tree, cpu, s.dinfo, s.p);
  computeHydroForces(hydro_tree, cpu, s.dinfo, s.p);
  resident.density();
  resident.hydro();
  double dt_cpu = globalTimeStep(cpu, s.p), dt_gpu = resident.timeStep();
  double time = 0.0;
  for (int step = 0; step < kSteps; ++step) {
    EXPECT_NEAR(dt_gpu, dt_cpu, 1e-10 * dt_cpu) << "step " << step;
    const double dt = dt_cpu;  // the same steps for both, so that positions compare
    kickDriftPredict(cpu, dt);
    cpu.adjustPositionIntoRootDomain(s.dinfo);
    computeDensity(density_tree, cpu, s.dinfo, s.p);
    computeHydroForces(hydro_tree, cpu, s.dinfo, s.p);
    finalKick(cpu, dt);
    resident.kickDriftPredict(dt);
    resident.density();
    resident.hydro();
    resident.finalKick(dt);
    time += dt;
    dt_cpu = globalTimeStep(cpu, s.p), dt_gpu = resident.timeStep();
  }
  const Gas ref = byId(cpu), got = byId(resident.download());
  ASSERT_EQ(got.size(), ref.size());
  double v_scale = 0.0;
  for (const auto& r : ref) v_scale = std::max(v_scale, grove::norm(r.vel));
  std::vector<double> pos, vel, u, dens;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    ASSERT_EQ(got[i].id, ref[i].id);
    grove::Vec3d d = got[i].pos - ref[i].pos;
    for (double* c : {&d.x, &d.y, &d.z}) *c -= std::round(*c / tube.box.x) * tube.box.x;  // a wrap on one side only
    pos.push_back(grove::norm(d) / tube.box.x);
    vel.push_back(grove::norm(got[i].vel - ref[i].vel) / v_scale);
    u.push_back(std::abs(got[i].u - ref[i].u) / ref[i].u);
    dens.push_back(std::abs(got[i].dens - ref[i].dens) / ref[i].dens);
  }
  const Spread sp = spreadOf(pos), sv = spreadOf(vel), su = spreadOf(u), sd = spreadOf(dens);
  const ResidentSph::ListCounts c = resident.listCounts();
  std::printf("  [shock tube, %s] lists: %lld density passes, %lld searched (%lld sorted); %lld hydro passes, %lld "
              "searched\n",
              name.c_str(), c.density_passes, c.density_searches, c.density_sorts, c.hydro_passes, c.hydro_searches);
  if (lists.shared) {
    EXPECT_EQ(c.hydro_searches, 0) << "the hydro pass evaluates the density pass's lists";
  } else {
    EXPECT_EQ(c.density_searches, c.density_passes);
    EXPECT_EQ(c.hydro_searches, c.hydro_passes);
  }
  if (l.skin > 0.0) {
    EXPECT_LT(c.density_searches, c.density_passes) << "lists kept across steps";
    EXPECT_GE(c.density_searches, 2) << "particles moved past the skin: searched again";
  }
  if (lists.sort_every > 1) {
    EXPECT_LT(c.density_sorts, c.density_searches) << "refitted cells between sorts";
  }
  std::printf("  [shock tube, %s, %d steps to t = %.5f] particles, median / max: pos %.2e / %.2e  vel %.2e / %.2e  "
              "u %.2e / %.2e  rho %.2e / %.2e\n",
              name.c_str(), kSteps, time, sp.median, sp.max, sv.median, sv.max, su.median, su.max, sd.median, sd.max);
  for (const Spread* x : {&sp, &sv, &su, &sd}) EXPECT_LE(x->median, 1e-12);
  const double worst = largestProfileDifference(got, ref, tube, 50, time);
  std::printf("  [shock tube, %s] binned profiles (50 bins): largest relative difference %.2e\n", name.c_str(), worst);
  EXPECT_LE(worst, 1e-10);
}

TEST_F(SphGpu, ResidentShockTubeFollowsTheCpuRun) { followCpuRun({}, "fresh lists", 0.0); }

TEST_F(SphGpu, ResidentShockTubeOnSharedListsFollowsTheCpuRun) {
  followCpuRun({true, 0.0, 1}, "shared lists", 0.0);
  followCpuRun({true, 0.0, 3}, "shared lists, sorted every 3", 0.0);
  // 50 neighbours: r_search + skin stays below half the periodic width (0.125) of y and z.
  followCpuRun({true, 0.0, 3}, "shared lists, skin 0.5 h_min, sorted every 3, 50 neighbours", 0.5, 50);
}

}  // namespace
