#pragma once
/// @file
/// DomainInfo: the root domain, its boundary conditions, and one box per rank. Boxes come from
/// weighted samples of particle positions, cut by multisection (FDPS) or ORB (PKDGRAV).
///
///     grove::DomainInfo dinfo;                      // open boundary, multisection, 1000 samples/rank
///     dinfo.decomposeDomainAll(psys);               // collective: sample, cut, share the cuts
///     psys.exchangeParticle(dinfo);                 // each particle to the rank whose box holds it
#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "grove/comm/comm.hpp"
#include "grove/core/box.hpp"
#include "grove/core/time_profile.hpp"
#include "grove/domain/boundary.hpp"
#include "grove/domain/cut_tree.hpp"
#include "grove/domain/decomposition.hpp"
#include "grove/core/particle_traits.hpp"

namespace grove {

/// How many samples one rank draws, and how much work each stands for.
struct SamplePlan {
  std::size_t count = 0;           ///< samples this rank draws (0 when it has no particles or no weight)
  double weight_per_sample = 0.0;  ///< the rank's weight divided by count
};

/// What a decomposition carries from one call to the next, beyond the settings the program makes:
/// the draw counter that seeds the sampling, the cuts the next ones blend with (coef_ema), the
/// multisection grid chosen at the first decomposition, and this rank's samples. grove::Checkpoint
/// saves it so that a restarted run decomposes exactly as the uninterrupted one would.
struct DomainState {
  int rank_count = 0;                    ///< of the run that saved it
  std::uint64_t sample_draws = 0;        ///< sample draws so far (seeds the next draw)
  std::int64_t decomposition_count = 0;  ///< decompositions so far
  std::array<int, 3> grid{0, 0, 0};      ///< the multisection grid; {0, 0, 0}: not chosen yet
  bool grid_from_user = false;           ///< whether the grid was set by the program
  CutTree cuts;                          ///< the current cuts
  std::vector<WeightedSample> samples;   ///< this rank's
};

/// The root domain, its boundary conditions, and one box per rank (FDPS's DomainInfo). Setters
/// are local calls that every rank makes alike; throws grove::Error for invalid settings.
class DomainInfo {
 public:
  /// Default: 1000 samples per rank. With S samples a domain's share of work is off by about
  /// 1/sqrt(S / ranks); 1000 per rank keeps the worst of 4 domains within a few per cent, and
  /// the total is capped (kMaxTotalSamples) so that rank 0's sort stays under a second at scale.
  static constexpr int kDefaultSamplesPerRank = 1000;
  /// The cap on samples summed over ranks (2^21).
  static constexpr std::size_t kMaxTotalSamples = std::size_t{1} << 21;

  /// Over comm's ranks: open boundary, no root domain fixed, multisection, coef_ema 1, rank 0
  /// owning everything until the first decomposition.
  explicit DomainInfo(Comm comm = Comm::world());

  /// FDPS's initialize: coef_ema in (0, 1] weights the new cuts against the previous ones;
  /// 1 (the default) keeps no memory. Throws grove::Error outside (0, 1].
  void initialize(double coef_ema = 1.0);
  /// Another communicator (collective over it): the domains start again from one owner, the
  /// samples are dropped, a user grid that no longer fits the rank count is forgotten.
  void setComm(Comm comm);
  /// FDPS's setCommInfo(PS::CommInfo): the same, for a type that carries a grove::Comm.
  template <class Info>
    requires requires(const Info& info) { { info.groveComm() } -> std::convertible_to<Comm>; }
  void setCommInfo(const Info& info) {
    setComm(info.groveComm());
  }
  /// Sets coef_ema, as initialize() does. Throws grove::Error outside (0, 1].
  void setCoefEma(double coef_ema);
  /// The weight of new cuts against the previous ones (1: no memory).
  double getCoefEma() const { return coef_ema_; }

  /// Sets the boundary condition (OPEN by default). Periodic axes need setPosRootDomain before
  /// the next decomposition. Throws grove::Error for a value that is no BoundaryCondition.
  void setBoundaryCondition(BoundaryCondition bc);
  /// The boundary condition set (OPEN by default).
  BoundaryCondition getBoundaryCondition() const { return boundary_; }
  /// Fixes the root domain [low, high). Required on periodic axes; on open axes it promises
  /// that every particle stays inside (a particle outside is an error). Needs finite low < high on
  /// every axis (else grove::Error). The domains start again from one owner (rank 0).
  void setPosRootDomain(const Vec3d& low, const Vec3d& high);
  /// FDPS's one-axis form, along x: [low, high) along that axis; an axis never set spans
  /// (-LARGE_FLOAT, LARGE_FLOAT), FDPS's default root (max float / 16). Fixes the root domain as
  /// setPosRootDomain does; needs finite low < high.
  void setPosRootDomainX(double low, double high) { setPosRootDomainAxis(0, low, high); }
  /// The same along y.
  void setPosRootDomainY(double low, double high) { setPosRootDomainAxis(1, low, high); }
  /// The same along z.
  void setPosRootDomainZ(double low, double high) { setPosRootDomainAxis(2, low, high); }
  /// The root domain: fixed faces as set, open faces infinite.
  const Boxd& getPosRootDomain() const { return root_; }
  /// Whether a root domain was set (setPosRootDomain or a one-axis form).
  bool isRootDomainFixed() const { return root_fixed_; }

  /// Sets the algorithm of later decompositions (MULTISECTION by default).
  void setDecompositionMethod(DecompositionMethod method);
  /// The algorithm set.
  DecompositionMethod getDecompositionMethod() const { return method_; }
  /// Multisection grid; nx * ny * nz must equal the rank count (else grove::Error). Unset: chosen
  /// at the first decomposition so that domains are as cubic as possible, then kept.
  void setNumberOfDomainMultiDimension(int nx, int ny, int nz = 1);
  /// FDPS's older name of setNumberOfDomainMultiDimension().
  void setDomain(int nx, int ny, int nz = 1) { setNumberOfDomainMultiDimension(nx, ny, nz); }
  /// The multisection grid {nx, ny, nz}: {0, 0, 0} until set or chosen.
  std::array<int, 3> getNumberOfDomainMultiDimension() const { return grid_; }

  /// Sets the average samples per rank (kDefaultSamplesPerRank by default). Throws grove::Error
  /// unless it is positive.
  void setSampleCountPerRank(int samples_per_rank);
  /// The average samples per rank.
  int getSampleCountPerRank() const { return samples_per_rank_; }

  /// Collective. Draws this rank's samples from psys. weight is this rank's work (default: its
  /// particle count; e.g. the last step's force time): ranks with more work per particle send
  /// more samples, so their region is cut finer. clear = false adds to the samples held.
  /// Throws grove::Error on every rank when a weight is negative or not finite, or a sampled
  /// position cannot be owned (positionProblem).
  template <class PSys>
  void collectSampleParticle(const PSys& psys, bool clear = true, std::optional<double> weight = std::nullopt);
  /// Collective. The same for particles the caller reads itself (e.g. on a GPU,
  /// grove/domain/decomposition_gpu.cuh): n local particles; positions_of(indices) returns the
  /// positions of the particles at those indices, in that order, as Vec3d (a std::vector of
  /// them). samples_per_rank, when given, replaces getSampleCountPerRank() for this draw.
  template <class PositionsOf>
  void collectSamplePositions(std::size_t n, PositionsOf&& positions_of, bool clear = true,
                              std::optional<double> weight = std::nullopt,
                              std::optional<int> samples_per_rank = std::nullopt);
  /// Collective. Cuts the root domain from the samples held (on rank 0) and shares the result,
  /// blended with the previous cuts by coef_ema. Throws grove::Error on every rank when an axis
  /// is periodic but no root domain was set.
  void decomposeDomain();
  /// Cuts found elsewhere become the decomposition, blended with the previous cuts as
  /// decomposeDomain blends them (coef_ema). Every rank must pass the same cuts (e.g. from
  /// counting particles on the GPU: grove::gpu::decomposeDomainByCounting); they are checked
  /// for shape (one leaf per rank, else grove::Error), not compared across ranks.
  /// multisection_grid: the grid the cuts follow (kept, as decomposeDomain keeps its first choice).
  void adoptCuts(CutTree cuts, std::array<int, 3> multisection_grid = {0, 0, 0});
  /// Collective. collectSampleParticle then decomposeDomain.
  template <class PSys>
  void decomposeDomainAll(const PSys& psys, std::optional<double> weight = std::nullopt) {
    collectSampleParticle(psys, true, weight);
    decomposeDomain();
  }

  // Queries, valid on every rank after a decomposition (before one, rank 0 owns everything).
  /// The box of `rank` (half-open, faces on open root sides infinite). Throws std::out_of_range
  /// for a rank outside [0, rankCount()).
  const Boxd& getPosDomain(int rank) const { return domain_boxes_.at(static_cast<std::size_t>(rank)); }
  /// Every rank's box, indexed by rank.
  std::span<const Boxd> domainBoxes() const { return domain_boxes_; }
  /// The owner of a position inside the root domain (check with positionProblem first).
  int whichRank(const Vec3d& pos) const { return cuts_.ownerOf(pos); }
  /// The communicator.
  const Comm& comm() const { return comm_; }
  /// The communicator's rank count.
  int rankCount() const { return rank_count_; }
  /// The number of samples this rank holds.
  std::size_t getSampleCountLocal() const { return samples_.size(); }
  /// The samples this rank holds (positions wrapped into the root).
  std::span<const WeightedSample> samplesLocal() const { return samples_; }
  /// Decompositions so far (decomposeDomain and adoptCuts calls).
  std::int64_t decompositionCount() const { return decomposition_count_; }
  /// Bytes held (capacity) by the samples, cuts and boxes (FDPS's getMemSizeUsed).
  std::size_t getMemSizeUsed() const;
  /// The same as getMemSizeUsed().
  std::size_t getUsedMemorySize() const { return getMemSizeUsed(); }
  /// Seconds in collectSampleParticle and decomposeDomain since the last clearTimeProfile.
  TimeProfile getTimeProfile() const { return time_profile_; }
  /// Sets the time profile to 0.
  void clearTimeProfile() { time_profile_.clear(); }

  /// The decomposition's state (grove::Checkpoint). restoreState needs the rank count that saved
  /// it; the settings (root, boundary, method, coef_ema, sample count) stay as the program set them.
  DomainState state() const;
  /// Restores a state() saved by a run with the same rank count; throws grove::Error when the rank
  /// count differs or the cuts are malformed (one leaf per rank expected).
  void restoreState(const DomainState& state);

  /// Why a position cannot be owned by any rank (non-finite, outside a fixed root face), or
  /// nothing when it can. `particle` is the index used in the message.
  std::optional<std::string> positionProblem(const Vec3d& pos, std::size_t particle) const;
  /// The same test without the message, inline for per-particle loops: whether some rank can own
  /// pos (positionProblem says why not).
  bool canOwn(const Vec3d& pos) const { return isFinite(pos) && (!root_fixed_ || root_.contains(pos)); }
  /// pos moved by whole periods into [low, high) on every periodic axis (unchanged while no root
  /// domain is fixed).
  Vec3d wrapIntoRoot(Vec3d pos) const;

  /// Collective: how many samples this rank draws for a given weight (exposed for tests).
  /// samples_per_rank, when given, replaces getSampleCountPerRank() for this draw. Throws
  /// grove::Error on every rank when a weight is negative or not finite.
  SamplePlan planSamples(std::size_t local_particles, std::optional<double> weight,
                         std::optional<int> samples_per_rank = std::nullopt) const;

 private:
  void resetToSingleOwner();
  void setPosRootDomainAxis(int axis, double low, double high);
  CutTree computeCuts(std::vector<WeightedSample>& all_samples);

  Comm comm_;
  int rank_count_ = 1;
  BoundaryCondition boundary_ = BoundaryCondition::OPEN;
  Boxd root_ = Boxd::everything();
  bool root_fixed_ = false;
  DecompositionMethod method_ = DecompositionMethod::MULTISECTION;
  std::array<int, 3> grid_{0, 0, 0};  // {0,0,0}: not chosen yet
  bool grid_from_user_ = false;
  int samples_per_rank_ = kDefaultSamplesPerRank;
  double coef_ema_ = 1.0;
  std::vector<WeightedSample> samples_;
  std::uint64_t sample_draws_ = 0;
  CutTree cuts_;
  std::vector<Boxd> domain_boxes_;
  std::int64_t decomposition_count_ = 0;
  TimeProfile time_profile_;
};

namespace detail {
// count distinct indices in [0, n), one drawn uniformly from each of count equal strata, so
// the samples follow the particles wherever they are stored; reproducible from the seed.
std::vector<std::size_t> stratifiedSampleIndices(std::size_t n, std::size_t count, std::uint64_t seed);
}  // namespace detail

template <class PSys>
void DomainInfo::collectSampleParticle(const PSys& psys, bool clear, std::optional<double> weight) {
  static_assert(HasGetPos<typename PSys::value_type>,
                "grove::DomainInfo: the particle type needs `getPos() const` returning a 3-vector");
  // A particle system may carry its own sample count (FDPS's
  // ParticleSystem::setAverageTargetNumberOfSampleParticlePerProcess).
  std::optional<int> samples_per_rank;
  if constexpr (requires { { psys.sampleCountPerRank() } -> std::convertible_to<std::optional<int>>; })
    samples_per_rank = psys.sampleCountPerRank();
  collectSamplePositions(
      psys.size(),
      [&](const std::vector<std::size_t>& picks) {
        std::vector<Vec3d> positions;
        positions.reserve(picks.size());
        for (std::size_t i : picks) positions.push_back(positionOf(psys[i]));
        return positions;
      },
      clear, weight, samples_per_rank);
}

template <class PositionsOf>
void DomainInfo::collectSamplePositions(std::size_t n, PositionsOf&& positions_of, bool clear,
                                        std::optional<double> weight, std::optional<int> samples_per_rank) {
  const double start = wallSeconds();
  if (clear) samples_.clear();
  const SamplePlan plan = planSamples(n, weight, samples_per_rank);
  const std::vector<std::size_t> picks = detail::stratifiedSampleIndices(
      n, plan.count, (static_cast<std::uint64_t>(comm_.rank()) << 32) ^ (sample_draws_++ * 0x9E3779B97F4A7C15ull));
  const std::vector<Vec3d> positions = positions_of(picks);
  require(positions.size() == picks.size(), "DomainInfo::collectSamplePositions",
          "{} positions returned for {} sampled particles", positions.size(), picks.size());
  std::optional<std::string> problem;
  const std::size_t first_new = samples_.size();
  for (std::size_t k = 0; k < picks.size(); ++k) {
    problem = positionProblem(positions[k], picks[k]);
    if (problem) break;
    samples_.push_back({wrapIntoRoot(positions[k]), plan.weight_per_sample});
  }
  if (problem) samples_.resize(first_new);
  comm_.throwIfAnyFailed(problem, "DomainInfo::collectSampleParticle");
  time_profile_.collect_sample_particle += wallSeconds() - start;
}

}  // namespace grove
