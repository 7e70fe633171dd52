#include "grove/domain/domain_info.hpp"
#include "grove/domain/periodic_wrap.hpp"

#include <cmath>
#include <limits>

namespace grove {

DomainInfo::DomainInfo(Comm comm) : comm_(std::move(comm)), rank_count_(comm_.size()) { resetToSingleOwner(); }

void DomainInfo::resetToSingleOwner() {
  cuts_ = CutTree{};
  cuts_.nodes.push_back({-1, -1, 0, -1, 0});
  domain_boxes_ = cuts_.boxes(root_, rank_count_);
}

void DomainInfo::initialize(double coef_ema) { setCoefEma(coef_ema); }

void DomainInfo::setComm(Comm comm) {
  comm_ = std::move(comm);
  rank_count_ = comm_.size();
  if (grid_from_user_ && grid_[0] * grid_[1] * grid_[2] != rank_count_) grid_from_user_ = false;
  if (!grid_from_user_) grid_ = {0, 0, 0};
  samples_.clear();
  resetToSingleOwner();
}

DomainState DomainInfo::state() const {
  return {rank_count_, sample_draws_, decomposition_count_, grid_, grid_from_user_, cuts_, samples_};
}

void DomainInfo::restoreState(const DomainState& state) {
  require(state.rank_count == rank_count_, "DomainInfo::restoreState",
          "the state was saved by {} ranks, this decomposition has {} (decompose again instead)", state.rank_count,
          rank_count_);
  CutTree cuts = state.cuts;
  int leaves = 0;
  for (const CutNode& node : cuts.nodes) {
    const bool leaf = node.axis < 0;
    leaves += leaf;
    require(leaf ? node.rank >= 0 && node.rank < rank_count_
                 : node.axis < 3 && node.first_child > 0 && node.child_count > 0 &&
                       node.first_child + node.child_count <= static_cast<int>(cuts.nodes.size()) &&
                       node.first_cut >= 0 &&
                       node.first_cut + node.child_count - 1 <= static_cast<int>(cuts.cuts.size()),
            "DomainInfo::restoreState", "cut node {} is malformed", &node - cuts.nodes.data());
  }
  require(!cuts.nodes.empty() && (leaves == rank_count_ || cuts.nodes.size() == 1), "DomainInfo::restoreState",
          "the cuts have {} leaves for {} ranks", leaves, rank_count_);
  sample_draws_ = state.sample_draws;
  decomposition_count_ = state.decomposition_count;
  grid_ = state.grid;
  grid_from_user_ = state.grid_from_user;
  samples_ = state.samples;
  cuts_ = std::move(cuts);
  domain_boxes_ = cuts_.boxes(root_, rank_count_);
}

void DomainInfo::setCoefEma(double coef_ema) {
  require(coef_ema > 0.0 && coef_ema <= 1.0, "DomainInfo::initialize", "coef_ema must lie in (0, 1], got {}",
          coef_ema);
  coef_ema_ = coef_ema;
}

void DomainInfo::setBoundaryCondition(BoundaryCondition bc) {
  const int v = static_cast<int>(bc);
  require(v >= 0 && v < 8, "DomainInfo::setBoundaryCondition", "unknown boundary condition {}", v);
  boundary_ = bc;
}

void DomainInfo::setPosRootDomain(const Vec3d& low, const Vec3d& high) {
  for (std::size_t a = 0; a < 3; ++a)
    require(isFiniteValue(low[a]) && isFiniteValue(high[a]) && low[a] < high[a], "DomainInfo::setPosRootDomain",
            "root domain needs finite low < high on every axis, got low {} high {}", low, high);
  root_ = {low, high};
  root_fixed_ = true;
  resetToSingleOwner();
}

void DomainInfo::setPosRootDomainAxis(int axis, double low, double high) {
  // FDPS's default root on an axis never set: LARGE_FLOAT = max float / 16.
  constexpr double kLargeFloat = static_cast<double>(std::numeric_limits<float>::max()) * 0.0625;
  Vec3d lo = root_.low, hi = root_.high;
  for (std::size_t a = 0; a < 3; ++a) {
    if (!isFiniteValue(lo[a])) lo[a] = -kLargeFloat;
    if (!isFiniteValue(hi[a])) hi[a] = kLargeFloat;
  }
  const auto a = static_cast<std::size_t>(axis);
  static constexpr const char* kWhere[3] = {"DomainInfo::setPosRootDomainX", "DomainInfo::setPosRootDomainY",
                                            "DomainInfo::setPosRootDomainZ"};
  require(isFiniteValue(low) && isFiniteValue(high) && low < high, kWhere[a], "need finite low < high, got low {} high {}",
          low, high);
  lo[a] = low;
  hi[a] = high;
  setPosRootDomain(lo, hi);
}

std::size_t DomainInfo::getMemSizeUsed() const {
  return samples_.capacity() * sizeof(WeightedSample) + cuts_.nodes.capacity() * sizeof(cuts_.nodes[0]) +
         cuts_.cuts.capacity() * sizeof(cuts_.cuts[0]) + domain_boxes_.capacity() * sizeof(Boxd);
}

void DomainInfo::setDecompositionMethod(DecompositionMethod method) {
  method_ = method;
}

void DomainInfo::setNumberOfDomainMultiDimension(int nx, int ny, int nz) {
  require(nx > 0 && ny > 0 && nz > 0 && nx * ny * nz == rank_count_, "DomainInfo::setNumberOfDomainMultiDimension",
          "nx * ny * nz must equal the rank count {}, got {} x {} x {}", rank_count_, nx, ny, nz);
  grid_ = {nx, ny, nz};
  grid_from_user_ = true;
}

void DomainInfo::setSampleCountPerRank(int samples_per_rank) {
  require(samples_per_rank > 0, "DomainInfo::setSampleCountPerRank", "need at least one sample per rank, got {}",
          samples_per_rank);
  samples_per_rank_ = samples_per_rank;
}

std::optional<std::string> DomainInfo::positionProblem(const Vec3d& pos, std::size_t particle) const {
  if (!isFinite(pos)) return formatMessage("particle {} has a non-finite position {}", particle, pos);
  if (!root_fixed_) return std::nullopt;
  if (!root_.contains(pos)) {
    for (std::size_t a = 0; a < 3; ++a) {
      if (root_.low[a] <= pos[a] && pos[a] < root_.high[a]) continue;
      if (isPeriodic(boundary_, static_cast<int>(a)))
        return formatMessage("particle {} at {} lies outside the periodic root domain {} along axis {}: call "
                           "adjustPositionIntoRootDomain first",
                           particle, pos, root_, "xyz"[a]);
      return formatMessage("particle {} at {} lies outside the fixed root domain {} (open boundary along {})", particle,
                         pos, root_, "xyz"[a]);
    }
  }
  return std::nullopt;
}

Vec3d DomainInfo::wrapIntoRoot(Vec3d pos) const {
  if (!root_fixed_) return pos;
  return WrapIntoRootDomain{root_, boundary_}(pos);
}

void DomainInfo::decomposeDomain() {
  const double start = wallSeconds();
  std::optional<std::string> problem;
  for (int a = 0; a < 3; ++a)
    if (isPeriodic(boundary_, a) && !root_fixed_)
      problem = fmt::format("boundary {} is periodic along {} but no root domain was set (setPosRootDomain)",
                            toString(boundary_), "xyz"[a]);
  comm_.throwIfAnyFailed(problem, "DomainInfo::decomposeDomain");

  std::vector<WeightedSample> all = comm_.gatherv(std::span<const WeightedSample>(samples_), 0);
  CutTree cuts;
  if (comm_.isRoot()) cuts = computeCuts(all);
  comm_.broadcast(cuts.nodes, 0);
  comm_.broadcast(cuts.cuts, 0);
  comm_.broadcast(grid_, 0);
  cuts_ = std::move(cuts);
  domain_boxes_ = cuts_.boxes(root_, rank_count_);
  ++decomposition_count_;
  time_profile_.decompose_domain += wallSeconds() - start;
}

void DomainInfo::adoptCuts(CutTree cuts, std::array<int, 3> multisection_grid) {
  std::vector<int> leaves_of_rank(static_cast<std::size_t>(rank_count_), 0);
  for (const CutNode& node : cuts.nodes) {
    if (node.axis >= 0) continue;
    require(node.rank >= 0 && node.rank < rank_count_, "DomainInfo::adoptCuts", "a leaf names rank {} of {}",
            node.rank, rank_count_);
    ++leaves_of_rank[static_cast<std::size_t>(node.rank)];
  }
  for (int r = 0; r < rank_count_; ++r)
    require(leaves_of_rank[static_cast<std::size_t>(r)] == 1, "DomainInfo::adoptCuts",
            "rank {} owns {} leaves of the cuts (one expected)", r, leaves_of_rank[static_cast<std::size_t>(r)]);
  if (method_ == DecompositionMethod::MULTISECTION && multisection_grid[0] > 0 && grid_[0] == 0)
    grid_ = multisection_grid;
  if (coef_ema_ < 1.0 && decomposition_count_ > 0 && cuts.sameShapeAs(cuts_)) cuts.blendWith(cuts_, coef_ema_);
  cuts_ = std::move(cuts);
  domain_boxes_ = cuts_.boxes(root_, rank_count_);
  ++decomposition_count_;
}

// Runs on rank 0 with every rank's samples.
CutTree DomainInfo::computeCuts(std::vector<WeightedSample>& all_samples) {
  CutTree cuts;
  if (method_ == DecompositionMethod::MULTISECTION) {
    if (!grid_from_user_ && grid_[0] == 0) {
      Boxd extent_box = Boxd::empty();
      for (const auto& s : all_samples) extent_box.merge(s.pos);
      for (std::size_t a = 0; a < 3; ++a)
        if (isFiniteValue(root_.low[a])) extent_box.low[a] = root_.low[a], extent_box.high[a] = root_.high[a];
      grid_ = chooseMultisectionGrid(rank_count_, extent_box.size());
    }
    cuts = decomposeMultisection(all_samples, grid_, root_);
  } else {
    cuts = decomposeOrb(all_samples, rank_count_, root_);
  }
  if (coef_ema_ < 1.0 && decomposition_count_ > 0 && cuts.sameShapeAs(cuts_)) cuts.blendWith(cuts_, coef_ema_);
  return cuts;
}

}  // namespace grove
