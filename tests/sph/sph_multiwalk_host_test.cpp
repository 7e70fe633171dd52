// The SPH sample's GPU plumbing without a GPU: sph_solver.hpp's multiwalk passes through the
// trees' calcForceAllAndWriteBackMultiWalk[Index], with a host stand-in for the CUDA multiwalks
// that runs the device kernels' per-particle algorithms (host_multiwalk.hpp), at every rank count
// of the MPI suite. What the GPU adds to this (CUDA streams, transfers, kernels) is tested by
// tests/gpu/sph_multiwalk_test.cpp on a GPU.
#include <gtest/gtest.h>

#include <numbers>

#include "host_multiwalk.hpp"
#include "sph_comparison.hpp"
#include "sph_scenarios.hpp"
#include "sph/sph_trees.hpp"

namespace {

using namespace sph;
using namespace sph::testing;

struct Lattice {
  Gas gas;
  grove::DomainInfo dinfo;
  SolverParameters p;
};

Lattice disordered(double guess_factor) {
  LatticeSpec spec = disorderedSpec();
  spec.h = guess_factor * std::cbrt(3.0 * 64 / (4.0 * std::numbers::pi)) * spec.spacing();
  Lattice s{latticeGas(spec), periodicCube(spec.side), {}};
  distribute(s.gas, s.dinfo);
  s.p = parametersFor(64, s.dinfo);
  return s;
}

// The template's algorithm (h iterated per particle over its walk's list) through both multiwalk
// forms equals the density and hydro kernels. Bounds as in tests/gpu (sph_multiwalk_test.cpp);
// measured here at 1-4 ranks: all differences 0 as this target is built (no vector lanes in the
// CPU kernels), at most ~1e-15 with them.
TEST(SphMultiwalkOnHost, TemplateAlgorithmEqualsTheCpuKernels) {
  for (const double guess : {1.3, 0.5}) {
    Lattice s = disordered(guess);
    Gas cpu = copyOf(s.gas);
    DensityTree cpu_tree(cpu.size(), 0.0, 8, 32);
    const int cpu_passes = computeDensity(cpu_tree, cpu, s.dinfo, s.p);
    for (const bool index_form : {true, false}) {
      const MultiwalkSettings settings{index_form ? 2 : 1, 16, index_form};
      const std::string form = index_form ? "index" : "plain";
      Gas gas = copyOf(s.gas);
      DensityTree tree(gas.size(), 0.0, 8, 32);
      HostMultiwalk<DensityTemplateOnHost> density(DensityTemplateOnHost{densityParametersOf(s.p)});
      EXPECT_EQ(computeDensityMultiwalk(tree, density, gas, s.dinfo, s.p, settings), cpu_passes);
      expectWithin("template on host, " + form + " form", densityDifferences(gas, cpu), 1e-9, 1e-13);
      EXPECT_GT(density.stats().batches, 1) << "several batches in flight";
    }
  }
  Lattice s = disordered(1.3);
  DensityTree density_tree(s.gas.size(), 0.0, 8, 32);
  computeDensity(density_tree, s.gas, s.dinfo, s.p);
  Gas cpu = copyOf(s.gas), gas = copyOf(s.gas);
  HydroTree cpu_tree(cpu.size(), 0.0, 8, 32), tree(gas.size(), 0.0, 8, 32);
  computeHydroForces(cpu_tree, cpu, s.dinfo, s.p);
  HostMultiwalk<HydroOnHost> hydro(HydroOnHost{{s.p.alpha}});
  computeHydroForcesMultiwalk(tree, hydro, gas, s.dinfo, MultiwalkSettings{2, 16, true});
  expectWithin("hydro on host", hydroDifferences(gas, cpu), 1e-11, 1e-13);
}

// The engine path through the multiwalk calls: every sum pass after a gather pass's first is a
// REUSE_LIST pass whose dispatches are told lists_unchanged, and the lists are indeed the same.
TEST(SphMultiwalkOnHost, EnginePathReusesTheListsOfItsFirstSumPass) {
  for (const double guess : {1.3, 0.5}) {
    Lattice s = disordered(guess);
    Gas cpu = copyOf(s.gas), gas = copyOf(s.gas);
    DensityTree cpu_tree(cpu.size(), 0.0, 8, 32);
    const int cpu_passes = computeDensity(cpu_tree, cpu, s.dinfo, s.p);
    DensitySumsTree tree(gas.size(), 0.0, 8, 32);
    HostMultiwalk<DensitySumsOnHost> engine;
    int sum_passes = 0;
    const MultiwalkSettings settings{2, 16, true};
    EXPECT_EQ(computeDensityBySums(
                  [&](grove::InteractionListMode mode) { multiwalkPass(tree, engine, gas, s.dinfo, settings, mode); },
                  gas, s.p, &sum_passes),
              cpu_passes);
    expectWithin("engine path on host", densityDifferences(gas, cpu), 1e-9, 1e-13);
    EXPECT_GT(sum_passes, cpu_passes);
    EXPECT_GT(engine.unchanged_calls, 0);
    EXPECT_EQ(engine.unchanged_and_equal, engine.unchanged_calls);
  }
}

}  // namespace
