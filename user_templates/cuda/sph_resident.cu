// samples/sph --gpu resident (sph_resident.h): the sample's physics as device kernels over the
// resident short-range trees. Every formula is sph_physics.hpp's, in the CPU kernels' order of
// operations, so the resident run follows the CPU run to rounding.
#include "sph_resident.h"

#include <chrono>

#include "grove/core/error.hpp"
#include "grove/domain/periodic_wrap.hpp"
#include "grove/domain/decomposition_gpu.cuh"
#include "grove/particles/exchange_gpu.cuh"
#include "grove/gpu/for_each.cuh"
#include "grove/force/resident_tree_short.cuh"
#include "../sph/sph_physics.hpp"

namespace sph {
namespace {

using grove::gpu::NeighbourSet;

// Shares of a particle's sums, combined (several threads per particle: NeighbourSet::reduce).
struct Combine {
  template <class Sums>
  __device__ Sums operator()(Sums a, const Sums& b) const {
    addForce(a, b);
    return a;
  }
};
struct ShapeSums {
  double s0 = 0, s1 = 0;
};
struct AddShapeSums {
  __device__ ShapeSums operator()(const ShapeSums& a, const ShapeSums& b) const { return {a.s0 + b.s0, a.s1 + b.s1}; }
};

// The density kernel of the CPU path (density_kernel.hpp) for one particle over its exact gather
// set (|x_i - x_j| < r_search): the h iteration on S0, S1, then the velocity derivatives at h.
// Every sum goes through set.reduce, so the tree may give a particle several threads
// (withCooperativeNeighbourSets); all of them take the iteration's steps alike.
struct DensityOverNeighbours {
  DensityParameters p;
  __device__ void operator()(const DensityEPI& pi, const NeighbourSet<DensityEPJ>& set, DensityResult& out) const {
    SupportSearch search = SupportSearch::start(pi.h, pi.r_search);
    const double target = neighbourTarget(pi.mass, p);
    for (;;) {
      const double inv_h2 = 1.0 / (search.h * search.h);
      const ShapeSums s = set.reduce(
          ShapeSums{},
          [&](const DensityEPJ& pj) {
            const double dx = pj.pos.x - pi.pos.x, dy = pj.pos.y - pi.pos.y, dz = pj.pos.z - pi.pos.z;
            const ShapeTerms t = shapeTerms(dx * dx + dy * dy + dz * dz, inv_h2);
            return ShapeSums{pj.mass * t.w, pj.mass * t.q_dw};
          },
          AddShapeSums{});
      const auto status = search.advance(s.s0, s.s1, target, p);
      if (status == SupportSearch::kContinue) continue;
      if (status == SupportSearch::kSearchTooSmall) {
        out = densityResultOf(search.h, true, DensitySums{});
        return;
      }
      break;
    }
    const DensityIAtH i = densityIAtH(pi.pos.x, pi.pos.y, pi.pos.z, pi.vel.x, pi.vel.y, pi.vel.z, search.h);
    const DensitySums sums = set.reduce(
        DensitySums{},
        [&](const DensityEPJ& pj) {
          DensitySums one;
          addDensityNeighbour(i, densityJImageOf(pj), one);
          return one;
        },
        Combine{});
    out = densityResultOf(search.h, false, sums);
  }
};

// The hydro kernel over the symmetric set (|x_i - x_j| < max(h_i, h_j)), or over a superset (the
// density pass's lists, ResidentSphLists::shared): a pair beyond reach is skipped on its position
// and h, before the rest of j is read and its powers of h computed (addHydroNeighbour's own test,
// on the same values, would drop it too).
struct HydroOverNeighbours {
  double half_alpha;
  __device__ void operator()(const HydroEP& pi, const NeighbourSet<HydroEP>& set, HydroResult& f) const {
    const HydroSide i = hydroSideOf(pi);
    f = set.reduce(
        HydroResult{},
        [&](const HydroEP& pj) {
          HydroResult one;
          const double dx = i.x - pj.pos.x, dy = i.y - pj.pos.y, dz = i.z - pj.pos.z;
          const double r2 = dx * dx + dy * dy + dz * dz;
          if (!(r2 > 0.0 && r2 < ::fmax(i.h2, pj.h * pj.h))) return one;
          addHydroNeighbour(i, hydroSideOf(pj), half_alpha, one);
          return one;
        },
        Combine{});
  }
};

// ---- per-particle steps (sph_solver.hpp's loops, one particle each) ----------------------------------

struct SetSearchRadius {  // r_search from the last h, every particle
  double factor, limit;
  __device__ void operator()(GasParticle& g) const { g.r_search = ::fmin(factor * g.h, limit); }
};
struct EnlargeShortSearches {  // only the particles whose search was too small
  double factor, limit;
  __device__ void operator()(GasParticle& g) const {
    if (g.search_too_small) g.r_search = ::fmin(factor * g.h, limit);
  }
};
struct FlagCount {
  __device__ long long operator()(const GasParticle& g) const { return g.search_too_small ? 1 : 0; }
};
struct FlagAtLimit {  // the id of a flagged particle already at the largest radius, or -1
  double limit;
  __device__ long long operator()(const GasParticle& g) const {
    return g.search_too_small && g.r_search >= limit ? static_cast<long long>(g.id) : -1;
  }
};
struct Sum {
  __device__ long long operator()(long long a, long long b) const { return a + b; }
};
struct MaxOf {
  __device__ long long operator()(long long a, long long b) const { return a > b ? a : b; }
};
struct MinOf {
  __device__ double operator()(double a, double b) const { return a < b ? a : b; }
};

struct EquationOfState {
  double gamma;
  __device__ void operator()(GasParticle& g) const {
    g.pres = (gamma - 1.0) * g.dens * g.u;
    g.sound = std::sqrt(gamma * g.pres / g.dens);
    const double div = std::abs(g.div_v);
    g.balsara = div / (div + g.curl_v + 1e-4 * g.sound / g.h);
  }
};

struct TimeStepOf {
  double cfl;
  __device__ double operator()(const GasParticle& g) const { return cfl * g.h / g.v_signal; }
};

struct KickDriftPredict {
  double dt;
  grove::WrapIntoRootDomain wrap;
  __device__ void operator()(GasParticle& g) const {
    g.vel_half = g.vel + (0.5 * dt) * g.acc;
    g.u_half = g.u + 0.5 * dt * g.du_dt;
    g.pos += dt * g.vel_half;
    g.vel += dt * g.acc;
    g.u += dt * g.du_dt;
    wrap(g);
  }
};

struct FinalKick {
  double dt;
  __device__ void operator()(GasParticle& g) const {
    g.vel = g.vel_half + (0.5 * dt) * g.acc;
    g.u = g.u_half + 0.5 * dt * g.du_dt;
  }
};

}  // namespace

struct ResidentSph::Impl {
  using DensityTree = grove::gpu::ResidentTreeForForceShort<DensityResult, DensityEPI, DensityEPJ>::Gather;
  // Shared lists: symmetric at the density radii (DensityEPI/EPJ::getRSearch = r_search).
  using SharedDensityTree = grove::gpu::ResidentTreeForForceShort<DensityResult, DensityEPI, DensityEPJ>::Symmetry;
  using HydroTree = grove::gpu::ResidentTreeForForceShort<HydroResult, HydroEP, HydroEP>::Symmetry;

  Impl(const SolverParameters& p, grove::DomainInfo& d, int n_leaf, int search_lanes, const ResidentSphLists& l)
      : params(p),
        dinfo(d),
        lists(l),
        density_tree(n_leaf, gas.policy(), search_lanes),
        shared_tree(n_leaf, gas.policy(), search_lanes),
        hydro_tree(n_leaf, gas.policy(), search_lanes) {
    grove::require(l.skin >= 0.0 && l.sort_every >= 1, "sph::ResidentSph", "a skin >= 0 and sorts every k >= 1 builds");
    grove::require(l.shared || (l.skin == 0.0 && l.sort_every == 1), "sph::ResidentSph",
                   "a skin and sorts between builds need shared lists");
    shared_tree.setSkin(l.skin);
    shared_tree.setSortEvery(l.sort_every);
  }

  // Shared lists on this run: one rank only (see ResidentSphLists).
  bool shared() const { return lists.shared && comm().size() == 1; }
  const grove::gpu::ResidentShortProfile& densityProfile() const {
    return shared() ? shared_tree.profile() : density_tree.profile();
  }

  void sync() const { grove::gpu::check(cudaStreamSynchronize(gas.stream()), "cudaStreamSynchronize (sph)"); }

  const grove::Comm& comm() const { return dinfo.comm(); }

  SolverParameters params;
  grove::DomainInfo& dinfo;
  grove::gpu::DeviceParticleSystem<GasParticle> gas;
  ResidentSphLists lists;
  DensityTree density_tree;
  SharedDensityTree shared_tree;
  HydroTree hydro_tree;
  ListCounts counts;
  double density_seconds = 0, hydro_seconds = 0;
  bool density_tree_current = false;  // built from the present positions (no drift or upload since)
  grove::gpu::ExchangeScratch exchange_scratch;
};

ResidentSph::ResidentSph(const SolverParameters& p, grove::DomainInfo& dinfo, int n_leaf, int search_lanes,
                         const ResidentSphLists& lists)
    : impl_(std::make_unique<Impl>(p, dinfo, n_leaf, search_lanes, lists)) {}
ResidentSph::~ResidentSph() = default;

void ResidentSph::upload(const std::vector<GasParticle>& gas) {
  impl_->gas.upload(gas);
  impl_->density_tree_current = false;
}
std::vector<GasParticle> ResidentSph::download() const { return impl_->gas.download(); }

int ResidentSph::density() {
  Impl& m = *impl_;
  const SolverParameters& p = m.params;
  const auto policy = m.gas.policy();
  grove::gpu::forEach(policy, m.gas, SetSearchRadius{p.search_factor, p.max_search_radius});
  const DensityOverNeighbours kernel{densityParametersOf(p)};  // through withCooperativeNeighbourSets
  int pass = 0;
  for (;;) {
    ++pass;
    if (m.shared()) {
      // Kept lists of these particles in this order: the tree decides whether they still hold
      // (skin > 0), else it searches (on refitted cells or a new sort, setSortEvery).
      const bool kept = m.lists.skin > 0.0 && m.shared_tree.listsKept() &&
                        m.shared_tree.builtGeneration() == m.gas.orderGeneration() &&
                        m.shared_tree.epi().size() == m.gas.size();
      m.shared_tree.calcForceAllAndWriteBack(m.gas, grove::gpu::withCooperativeNeighbourSets(kernel), m.dinfo,
                                             kept ? grove::REUSE_LIST : grove::MAKE_LIST_FOR_REUSE);
    } else {
      m.density_tree.calcForceAllAndWriteBack(m.gas, grove::gpu::withCooperativeNeighbourSets(kernel), m.dinfo);
    }
    const grove::gpu::ResidentShortProfile& f = m.densityProfile();
    m.density_seconds += f.total;
    ++m.counts.density_passes;
    m.counts.density_searches += f.search_walks > 0;
    m.counts.density_sorts += f.sort > 0.0;
    const long long short_searches =
        m.comm().allreduceSum(grove::gpu::transformReduce(policy, m.gas, 0LL, Sum{}, FlagCount{}));
    if (short_searches == 0) break;
    const long long at_limit = m.comm().allreduceMax(
        grove::gpu::transformReduce(policy, m.gas, -1LL, MaxOf{}, FlagAtLimit{p.max_search_radius}));
    grove::require(at_limit < 0, "sph::ResidentSph::density",
                   "particle {} needs a smoothing length beyond the largest search radius {} (half the periodic "
                   "box); use more particles or fewer neighbours",
                   at_limit, p.max_search_radius);
    grove::require(pass < p.max_density_passes, "sph::ResidentSph::density",
                   "{} particles still lack neighbours after {} passes", short_searches, pass);
    grove::gpu::forEach(policy, m.gas, EnlargeShortSearches{p.search_factor, p.max_search_radius});
  }
  grove::gpu::forEach(policy, m.gas, EquationOfState{p.gamma});
  m.sync();
  m.density_tree_current = true;
  return pass;
}

void ResidentSph::hydro() {
  Impl& m = *impl_;
  const auto kernel = grove::gpu::withCooperativeNeighbourSets(HydroOverNeighbours{0.5 * m.params.alpha});
  // Right after a density pass the positions are its tree's: its lists (shared) or its cells and
  // order serve here too (one rank; on several each pass builds its own global tree).
  if (m.density_tree_current && m.shared())
    m.hydro_tree.calcForceAllAndWriteBackOnListsOf(m.shared_tree, m.gas, kernel, m.dinfo);
  else if (m.density_tree_current && m.comm().size() == 1)
    m.hydro_tree.calcForceAllAndWriteBackOnTreeOf(m.density_tree, m.gas, kernel, m.dinfo);
  else
    m.hydro_tree.calcForceAllAndWriteBack(m.gas, kernel, m.dinfo);
  ++m.counts.hydro_passes;
  m.counts.hydro_searches += m.hydro_tree.profile().search_walks > 0;
  m.hydro_seconds += m.hydro_tree.profile().total;
  m.sync();
}

double ResidentSph::timeStep() {
  return impl_->comm().allreduceMin(grove::gpu::transformReduce(
      impl_->gas.policy(), impl_->gas, std::numeric_limits<double>::infinity(), MinOf{}, TimeStepOf{impl_->params.cfl}));
}

double ResidentSph::distribute(bool decompose) {
  Impl& m = *impl_;
  if (m.comm().size() == 1) return 0.0;
  const auto start = std::chrono::steady_clock::now();
  if (decompose) grove::gpu::decomposeDomainAll(m.dinfo, m.gas);
  grove::gpu::exchangeParticles(m.gas, m.dinfo, m.exchange_scratch);
  m.density_tree_current = false;
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void ResidentSph::kickDriftPredict(double dt) {
  grove::gpu::forEach(impl_->gas.policy(), impl_->gas,
                      KickDriftPredict{dt, grove::WrapIntoRootDomain::of(impl_->dinfo)});
  impl_->density_tree_current = false;
  impl_->sync();
}

void ResidentSph::finalKick(double dt) {
  grove::gpu::forEach(impl_->gas.policy(), impl_->gas, FinalKick{dt});
  impl_->sync();
}

const grove::gpu::ResidentShortProfile& ResidentSph::densityProfile() const { return impl_->densityProfile(); }
ResidentSph::ListCounts ResidentSph::listCounts() const { return impl_->counts; }
const grove::gpu::ResidentShortProfile& ResidentSph::hydroProfile() const { return impl_->hydro_tree.profile(); }
double ResidentSph::densityDeviceSeconds() const { return impl_->density_seconds; }
double ResidentSph::hydroDeviceSeconds() const { return impl_->hydro_seconds; }

}  // namespace sph
