#pragma once
// samples/scaling --path resident: timed steps of the GPU-resident pipeline (resident_steps.cu,
// compiled by nvcc). Declarations only.
#include <cstdint>
#include <string>
#include <vector>

#include "gravity_particles.hpp"
#include "stages.hpp"

namespace scaling {

struct ResidentRunOptions {
  double theta = 0.5, eps = 1.0 / 32.0, dt = 1.0 / 128.0;
  int n_leaf = 16, n_group = 512, n_reuse = 1, decompose_every = 4;
  int steps = 8, warmup = 1;
  bool counted_cuts = false;
  bool weighted = true;  // sampled cuts weighted by the rank's last device force time
  int samples_per_rank = 1000;
  std::string let = "reuse-overlap";  // grove::gpu::ResidentTreeOptions::let_overlap: or merged, let-tree
  std::string transport = "auto";    // auto, staged, ipc or mpi
  int group_target = 128;
};

// Collective. Runs warmup + steps kick-drift-kick steps of this rank's bodies on its GPU (device
// decomposition and exchange on list-building steps) and returns this rank's stage seconds of
// each timed step; *let_peers gets the mean LET peers of this rank per step.
std::vector<StageSeconds> runResidentSteps(const std::vector<user::Body>& bodies, const ResidentRunOptions& opt,
                                           double* let_peers);

}  // namespace scaling
