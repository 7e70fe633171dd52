#pragma once
// samples/nbody --gpu resident: the whole leapfrog loop on the GPU (grove/gpu/resident.cuh) — kick,
// drift, decomposition samples, exchange, tree build, LET, walk, force and energy on the device,
// one GPU per rank (rank % devices); the host only orchestrates and carries the MPI messages,
// and sees the bodies when a snapshot is due. Declarations only (no CUDA header); defined in
// resident_gpu.cu, compiled by nvcc.
#include <cstdint>
#include <functional>
#include <vector>

#include "gravity_particles.hpp"

namespace nbody {

struct ResidentOptions {
  double theta = 0.5, eps = 1.0 / 32.0, dt = 1.0 / 128.0;
  std::int64_t steps = 0;
  int n_leaf = 16, n_group = 512, n_reuse = 1, snapshot_every = 0;
  int decompose_every = 4;  // several ranks: steps between decompositions (on list builds)
  bool orb = false;         // several ranks: ORB instead of multisection
  bool counted_cuts = false;  // several ranks: cuts from counting every particle, not from samples
  bool quadrupole = false;
  // The most bodies a GPU holds: the particles reorder in place (DeviceParticleSystem's
  // ReorderMemory::kInPlace), and steps that build lists only for themselves (n_reuse 1) walk
  // with the fused kernel instead (ResidentTreeOptions::fused_walk), whose forces differ from the
  // list kernel's by rounding (it sums in another order).
  bool lean_memory = false;
};

struct ResidentStep {
  std::int64_t step = 0;
  double time = 0, kinetic = 0, potential = 0;
  double step_seconds = 0;   // host wall clock of the whole step (energy included)
  double tree_seconds = 0;   // device: the force calculation (build or refresh, walk, force, write-back)
  double build_seconds = 0;  // device: root, keys, sort, reorder, link, moments, groups
  double force_seconds = 0;  // device: walk and force
  double let_seconds = 0;    // device (several ranks): LET decision, payload exchange, global tree
  double exchange_seconds = 0;  // host wall clock: decomposition and particle exchange (several ranks)
  std::int64_t interactions = 0;  // this rank's
};

// Runs opt.steps steps from `bodies` (this rank's; collective over every rank; returns this
// rank's final bodies in `bodies`). on_step sees each step's energies (of all ranks) and this
// rank's times, step 0 first (the initial forces); on_snapshot sees this rank's bodies
// (downloaded) every snapshot_every steps and at the last step.
void runResident(std::vector<user::Body>& bodies, const ResidentOptions& opt,
                 const std::function<void(const ResidentStep&)>& on_step,
                 const std::function<void(std::int64_t step, double time, const std::vector<user::Body>&)>& on_snapshot);

}  // namespace nbody
