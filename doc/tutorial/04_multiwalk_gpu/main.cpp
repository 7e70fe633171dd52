// Tutorial 04: gravity on the GPU with your own CUDA kernel, through FDPS's multiwalk API. This
// file is the FDPS program (host compiler, PS:: names); kernel.cu holds the kernel and the
// dispatch/retrieve pair that grove's tree calls, and kernel.hpp is what both see. The program
// checks the GPU's forces against direct summation, that a REUSE_LIST step gives the forces of
// the MAKE_LIST_FOR_REUSE step before it (and sends no index list), how accurate reused lists
// still are once the bodies have moved, and the energy over 16 leapfrog steps. Without a CUDA
// device it says so and exits with 77 (ctest's "skipped").
#include <particle_simulator.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "grove/gpu/device_gpu.h"  // deviceCount, selectDeviceForRank: no CUDA header needed here
#include "kernel.hpp"

// The full particle. EPIGrav, EPJGrav and ForceGrav are in kernel.hpp, since kernel.cu reads them;
// their copyFromFP members are defined here, where FPGrav is known.
struct FPGrav {
  PS::S64 id = 0;
  PS::F64 mass = 0;
  PS::F64vec pos, vel, acc;
  PS::F64 pot = 0;
  PS::F64vec getPos() const { return pos; }
  void copyFromForce(const ForceGrav& f) { acc = f.acc, pot = f.pot; }
};
void EPIGrav::copyFromFP(const FPGrav& fp) { pos = fp.pos; }
void EPJGrav::copyFromFP(const FPGrav& fp) { pos = fp.pos, mass = static_cast<PS::F32>(fp.mass); }

constexpr PS::S64 kN = 1 << 15;      // bodies
constexpr PS::F64 kEps2 = 1e-4;      // Plummer softening squared, as in tutorials 02 and 05
constexpr PS::F64 kTheta = 0.5;      // opening angle
constexpr PS::S32 kLeaf = 8;         // bodies per leaf at most
constexpr PS::S32 kGroup = 256;      // bodies per walk at most: a GPU wants long walks
constexpr PS::S32 kWalkLimit = 32;   // walks per dispatch: small so that even this N makes several
constexpr PS::S32 kTagMax = 2;       // batches in flight: the device computes one while grove packs the next
constexpr PS::S32 kSampleEvery = 32; // bodies with id % 32 == 0 are checked against direct summation

// Accuracy bounds for theta 0.5 with monopoles and float arithmetic (README.md says why), and
// how far forces from lists 3 steps old may stray from new lists' (median).
constexpr double kMedianBound = 5e-3, kP99Bound = 1.5e-2, kReuseChangeBound = 5e-4;

using Tree = PS::TreeForForceLong<ForceGrav, EPIGrav, EPJGrav>::Monopole;

// Every rank's n values, in rank order, on every rank.
template <class T>
std::vector<T> allGathered(const T* mine, PS::S32 n) {
  const auto ranks = static_cast<std::size_t>(PS::Comm::getNumberOfProc());
  std::vector<PS::S32> counts(ranks);
  std::vector<PS::S32> starts(ranks, 0);
  PS::Comm::allGather(&n, 1, counts.data());
  for (std::size_t r = 1; r < counts.size(); ++r) starts[r] = starts[r - 1] + counts[r - 1];
  std::vector<T> all(static_cast<std::size_t>(starts.back() + counts.back()));
  PS::Comm::allGatherV(mine, n, all.data(), counts.data(), starts.data());
  return all;
}

// Relative acceleration errors of the sampled bodies against direct summation in double, all
// ranks' together, sorted (the same on every rank).
std::vector<double> sampledErrors(const PS::ParticleSystem<FPGrav>& psys) {
  const PS::S32 n = psys.getNumberOfParticleLocal();
  const std::vector<FPGrav> all = allGathered(n > 0 ? &psys[0] : nullptr, n);
  std::vector<double> mine;
  for (PS::S32 i = 0; i < n; ++i) {
    if (psys[i].id % kSampleEvery != 0) continue;
    PS::F64vec direct = 0.0;
    for (const FPGrav& b : all) {
      const PS::F64vec d = b.pos - psys[i].pos;
      const PS::F64 r2 = d * d + kEps2;
      direct += (b.mass / (r2 * std::sqrt(r2))) * d;
    }
    const PS::F64vec error = psys[i].acc - direct;
    mine.push_back(std::sqrt((error * error) / (direct * direct)));
  }
  std::vector<double> errors = allGathered(mine.data(), static_cast<PS::S32>(mine.size()));
  std::sort(errors.begin(), errors.end());
  return errors;
}
double median(const std::vector<double>& sorted) { return sorted[sorted.size() / 2]; }
double percentile99(const std::vector<double>& sorted) { return sorted[(sorted.size() * 99 + 99) / 100 - 1]; }

PS::F64 energy(const PS::ParticleSystem<FPGrav>& psys) {  // the kernel's self term -m/eps taken out
  PS::F64 e = 0;
  for (PS::S32 i = 0; i < psys.getNumberOfParticleLocal(); ++i) {
    const FPGrav& b = psys[i];
    e += 0.5 * b.mass * (b.vel * b.vel) + 0.5 * b.mass * (b.pot + b.mass / std::sqrt(kEps2));
  }
  return PS::Comm::getSum(e);
}

int main(int argc, char** argv) {
  PS::Initialize(argc, argv);
  const PS::S32 rank = PS::Comm::getRank(), ranks = PS::Comm::getNumberOfProc();
  const bool talk = rank == 0;
  if (grove::gpu::deviceCount() == 0) {
    if (talk) std::printf("tutorial 04: no CUDA device here: skipped\n");
    PS::Finalize();
    return 77;
  }
  grove::gpu::selectDeviceForRank(rank);  // one GPU per rank, round robin
  initializeGravityGpu(static_cast<float>(kEps2));

  // The uniform sphere of tutorials 02 and 05: rank r keeps bodies r, r + P, ...
  PS::ParticleSystem<FPGrav> psys;
  psys.initialize();
  std::vector<FPGrav> mine;
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (PS::S64 id = 0; id < kN; ++id) {
    PS::F64vec x;
    do x = PS::F64vec(u(rng), u(rng), u(rng));
    while (x * x > 1.0);
    if (id % ranks == rank) mine.push_back({id, 1.0 / kN, x, 0.0, 0.0, 0});
  }
  psys.setNumberOfParticleLocal(static_cast<PS::S32>(mine.size()));
  for (std::size_t i = 0; i < mine.size(); ++i) psys[static_cast<PS::S32>(i)] = mine[i];
  PS::DomainInfo dinfo;
  dinfo.initialize();
  dinfo.decomposeDomainAll(psys);
  psys.exchangeParticle(dinfo);

  Tree tree;
  tree.initialize(kN, kTheta, kLeaf, kGroup);
  auto gravity = [&](PS::INTERACTION_LIST_MODE mode) {
    tree.calcForceAllAndWriteBackMultiWalkIndex(dispatchGravity, retrieveGravity, kTagMax, psys, dinfo, kWalkLimit,
                                                true, mode);
  };
  // Collective: how many ranks report a failure.
  auto failures = [](bool failed) { return PS::Comm::getSum(failed ? 1 : 0); };
  int failed_checks = 0;
  auto verdict = [&](bool ok, const char* what) {
    if (!ok && talk) std::printf("FAILED: %s\n", what);
    failed_checks += ok ? 0 : 1;
  };

  // 1. Build the lists and keep them; every walk the tree made reached the kernel.
  tree.clearNumberOfInteraction();
  resetGravityGpuCounts();
  gravity(PS::MAKE_LIST_FOR_REUSE);
  const GravityGpuCounts made = gravityGpuCounts();
  const long long tree_interactions = tree.getNumberOfInteractionEPEPLocal() + tree.getNumberOfInteractionEPSPLocal();
  verdict(failures(made.walks != tree.getNumberOfWalkLocal() || made.interactions != tree_interactions ||
                   made.lists_sent != made.batches) == 0,
          "the GPU did not get every walk and interaction the tree made, each batch with its index lists");
  const std::vector<double> errors = sampledErrors(psys);
  if (talk)
    std::printf("GPU multiwalk vs direct summation, %zu bodies: median relative error %.2e, 99th percentile %.2e\n",
                errors.size(), median(errors), percentile99(errors));
  verdict(median(errors) < kMedianBound && percentile99(errors) < kP99Bound, "force accuracy");

  // 2. Reuse the lists with the bodies where they were: the same forces, bit for bit, and no
  //    index list crosses the bus.
  std::vector<PS::F64vec> acc_made(static_cast<std::size_t>(psys.getNumberOfParticleLocal()));
  std::vector<PS::F64> pot_made(acc_made.size());
  for (PS::S32 i = 0; i < psys.getNumberOfParticleLocal(); ++i) acc_made[i] = psys[i].acc, pot_made[i] = psys[i].pot;
  resetGravityGpuCounts();
  gravity(PS::REUSE_LIST);
  const GravityGpuCounts reused = gravityGpuCounts();
  long long differing = 0;
  for (PS::S32 i = 0; i < psys.getNumberOfParticleLocal(); ++i)
    differing += !(psys[i].acc == acc_made[i] && psys[i].pot == pot_made[i]);
  differing = PS::Comm::getSum(differing);
  const long long lists_sent = PS::Comm::getSum(reused.lists_sent), batches = PS::Comm::getSum(reused.batches);
  if (talk)
    std::printf("REUSE_LIST, bodies unmoved: %lld of %lld forces differ from MAKE_LIST_FOR_REUSE's; "
                "index lists sent in %lld of %lld batches\n",
                differing, static_cast<long long>(kN), lists_sent, batches);
  verdict(differing == 0 && lists_sent == 0 &&
              failures(reused.lists_reused != reused.batches || reused.interactions != made.interactions) == 0,
          "a REUSE_LIST step must reuse the kept lists and give the same forces");

  // 3. Kick-drift-kick. Lists rebuilt every 4 steps (after a new decomposition and exchange:
  //    bodies may change ranks only there), reused in between. At step 15, three steps after the
  //    last build, the reused lists are checked against direct summation and against new lists.
  const PS::F64 dt = 1.0 / 256, e0 = energy(psys);
  std::vector<PS::F64vec> pos_at_build(acc_made.size());
  for (PS::S32 i = 0; i < psys.getNumberOfParticleLocal(); ++i) pos_at_build[i] = psys[i].pos;
  for (int step = 1; step <= 16; ++step) {
    for (PS::S32 i = 0; i < psys.getNumberOfParticleLocal(); ++i) {
      psys[i].vel += (0.5 * dt) * psys[i].acc;
      psys[i].pos += dt * psys[i].vel;
    }
    const bool rebuild = step % 4 == 0;
    if (rebuild) {
      dinfo.decomposeDomainAll(psys);
      psys.exchangeParticle(dinfo);
    }
    gravity(rebuild ? PS::MAKE_LIST_FOR_REUSE : PS::REUSE_LIST);
    if (rebuild) {
      pos_at_build.resize(static_cast<std::size_t>(psys.getNumberOfParticleLocal()));
      for (PS::S32 i = 0; i < psys.getNumberOfParticleLocal(); ++i) pos_at_build[i] = psys[i].pos;
    }
    if (step == 15) {
      PS::F64 moved = 0;  // since the lists were built (same order: no exchange in between)
      for (PS::S32 i = 0; i < psys.getNumberOfParticleLocal(); ++i) {
        const PS::F64vec d = psys[i].pos - pos_at_build[i];
        moved = std::max(moved, std::sqrt(d * d));
      }
      moved = PS::Comm::getMaxValue(moved);
      const std::vector<double> old_lists = sampledErrors(psys);
      std::vector<PS::F64vec> acc_reused(pos_at_build.size());
      for (PS::S32 i = 0; i < psys.getNumberOfParticleLocal(); ++i) acc_reused[i] = psys[i].acc;
      gravity(PS::MAKE_LIST_FOR_REUSE);  // new lists, same positions: the kick below uses these forces
      std::vector<double> change;
      for (PS::S32 i = 0; i < psys.getNumberOfParticleLocal(); ++i) {
        const PS::F64vec d = acc_reused[i] - psys[i].acc;
        change.push_back(std::sqrt((d * d) / (psys[i].acc * psys[i].acc)));
      }
      change = allGathered(change.data(), static_cast<PS::S32>(change.size()));
      std::sort(change.begin(), change.end());
      if (talk)
        std::printf("step 15, lists 3 steps old (bodies moved up to %.1e): vs direct summation median %.2e, "
                    "99th percentile %.2e; vs new lists median %.2e, 99th percentile %.2e\n",
                    moved, median(old_lists), percentile99(old_lists), median(change), percentile99(change));
      verdict(median(old_lists) < kMedianBound && percentile99(old_lists) < kP99Bound &&
                  median(change) < kReuseChangeBound,
              "reused lists after the bodies moved");
    }
    for (PS::S32 i = 0; i < psys.getNumberOfParticleLocal(); ++i) psys[i].vel += (0.5 * dt) * psys[i].acc;
  }
  const double drift = std::abs((energy(psys) - e0) / e0);
  if (talk) std::printf("16 steps: relative energy change %.2e\n", drift);
  verdict(drift < 1e-4, "energy conservation");

  finalizeGravityGpu();
  PS::Finalize();
  return failed_checks == 0 ? 0 : 1;
}
