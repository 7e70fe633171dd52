#pragma once
// samples/sph --gpu resident: the SPH step entirely on the GPU (grove/gpu/resident.cuh), one GPU per
// rank.
// The gas stays in device memory; the passes find their neighbours on resident short-range trees
// (exact sets per pass, or one symmetric search that serves both: ResidentSphLists) and run the
// sample's own physics (sph_physics.hpp) as device kernels: the density
// pass with the h iteration inside (a neighbour-set kernel: sums at h, a Newton step, sums
// again, as the CPU kernel), the equation of state, the hydro pass, the time step and the
// kick-drift-kick leapfrog with the periodic wrap; on several ranks also the decomposition and
// the particle exchange (from device data) and the trees' LET. The host only orchestrates: it
// reads back a flag count per density pass and the time step, and carries the MPI messages. Declarations only (no CUDA header); defined
// in sph_resident.cu, compiled by nvcc.
#include <memory>
#include <vector>

#include "../sph/gas_particles.hpp"
#include "grove/domain/domain_info.hpp"
#include "grove/force/resident_profile.hpp"
#include "../sph/sph_solver.hpp"

namespace sph {

// How the passes get their neighbour lists (one rank; several ranks always search afresh, each
// pass building its own global tree, since particles move between ranks every step).
//   shared = false   the density pass searches its exact gather sets (and again on each repeat),
//                    the hydro pass its exact symmetric sets on the density pass's cells
//   shared = true    one symmetric search at the density radii (|x_i - x_j| < max(r_i, r_j) + skin)
//                    serves both passes: the density kernel adds exact zeros beyond h, the hydro
//                    kernel skips pairs beyond max(h_i, h_j); the hydro tree checks the lists
//                    still hold its sets (h <= r_search) and searches itself if not
//   skin > 0         (shared) lists kept across passes and steps while 2 d + g <= skin (the tree
//                    measures the largest displacement d and radius growth g since the search)
//   sort_every = k   (shared) a search of particles not reordered since keeps the cells of the last
//                    sort, refitted, and sorts again every k-th search (no FP reorder in between)
// Every choice gives the same neighbour contributions; sums differ by order only.
struct ResidentSphLists {
  bool shared = false;
  double skin = 0.0;  // absolute (a length)
  int sort_every = 1;
};

class ResidentSph {
 public:
  // dinfo: the root domain, its periodic axes and the ranks (it must outlive this object; on
  // several ranks distribute() updates its domains).
  // n_leaf: the trees' leaf size; search_lanes: threads per particle in the neighbour search (0:
  // chosen by the particle count; grove::gpu::ResidentTreeShort); lists: see ResidentSphLists.
  ResidentSph(const SolverParameters& p, grove::DomainInfo& dinfo, int n_leaf, int search_lanes = 0,
              const ResidentSphLists& lists = {});
  ~ResidentSph();
  ResidentSph(const ResidentSph&) = delete;
  ResidentSph& operator=(const ResidentSph&) = delete;

  void upload(const std::vector<GasParticle>& gas);  // this rank's
  std::vector<GasParticle> download() const;

  // Each call below waits for its device work, so host clocks around it time it.
  // Density, h, grad-h, div v, |curl v| with the h iteration (passes repeated while a search
  // radius was short, as sph::computeDensityWith), then the equation of state. Returns the passes.
  int density();
  void hydro();
  double timeStep();                  // min over all ranks' particles of cfl h / v_signal
  void kickDriftPredict(double dt);   // and the periodic wrap into the root domain
  // Several ranks (collective; nothing on one): new domains from samples of the device particles
  // when `decompose`, then the particles that left this rank's domain move
  // (grove/domain/decomposition_gpu.cuh, grove/particles/exchange_gpu.cuh). Returns the host
  // seconds it took.
  double distribute(bool decompose);
  void finalKick(double dt);

  // The last pass's tree profiles (device times per stage, neighbours).
  const grove::gpu::ResidentShortProfile& densityProfile() const;
  const grove::gpu::ResidentShortProfile& hydroProfile() const;
  // Device seconds of the trees' passes so far (density: all of its passes).
  double densityDeviceSeconds() const;
  double hydroDeviceSeconds() const;
  // Density passes so far, those that searched (built or refitted cells), those that sorted, and
  // hydro passes that searched (did not use the density pass's lists).
  struct ListCounts {
    long long density_passes = 0, density_searches = 0, density_sorts = 0, hydro_passes = 0, hydro_searches = 0;
  };
  ListCounts listCounts() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace sph
