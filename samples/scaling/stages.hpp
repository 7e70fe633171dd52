#pragma once
// samples/scaling: the stages of one step whose seconds a scaling run reports (host wall clock,
// per step; a rank's own values, reduced over ranks by the caller). Shared by the host paths
// (main.cpp) and the GPU-resident path (resident_steps.cu); no CUDA or MPI header.
#include <cstdint>

namespace scaling {

struct StageSeconds {
  double decompose = 0;    // domain decomposition (on decomposition steps)
  double exchange = 0;     // particle exchange (on list-building steps)
  double local_tree = 0;   // root, keys, sort, reorder, link, local moments
  double let = 0;          // LET decision and payload exchange
  double global_tree = 0;  // global tree and its moments
  double walk_force = 0;   // groups, walk, lists, kernel, write-back
  double integrate = 0;    // kick and drift
  double step = 0;         // the whole step
  std::int64_t interactions = 0;  // i-j pairs on this rank
  std::int64_t let_received = 0;  // LET particles + superparticles received by this rank
  std::int64_t n_local = 0;       // this rank's particles in the step (0: not reported)

  StageSeconds& operator+=(const StageSeconds& o) {
    decompose += o.decompose, exchange += o.exchange, local_tree += o.local_tree, let += o.let;
    global_tree += o.global_tree, walk_force += o.walk_force, integrate += o.integrate, step += o.step;
    interactions += o.interactions, let_received += o.let_received, n_local += o.n_local;
    return *this;
  }
};

}  // namespace scaling
