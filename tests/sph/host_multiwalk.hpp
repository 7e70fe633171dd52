#pragma once
// A CPU stand-in for the SPH sample's GPU multiwalks (user_templates/cuda/sph_*): it implements
// grove::gpu::Multiwalk (host-only interface) with the device kernels' per-particle algorithms
// run on the host, neighbour after neighbour in list order with sph_physics.hpp's functions. So
// the sample's GPU plumbing (sph_solver.hpp's multiwalk passes, the engine path's REUSE_LIST
// passes, plain and index forms, how retrieve hands results over) runs without a GPU.
#include <algorithm>
#include <cstdint>
#include <deque>
#include <vector>

#include "grove/core/error.hpp"
#include "grove/gpu/multiwalk/multiwalk.hpp"
#include "sph/sph_physics.hpp"

namespace sph::testing {

// sphDensityKernel (sph_walk_kernels.cuh) for one i-particle: the h iteration, one pass over the
// list per step, then the sums at the final h.
struct DensityTemplateOnHost {
  using EPI = DensityEPI;
  using EPJ = DensityEPJ;
  using Force = DensityResult;
  using J = DensityJImage;
  DensityParameters p;
  static J imageOf(const EPJ& e) { return densityJImageOf(e); }
  Force compute(const EPI& e, const J* const* list, int n) const {
    const DensityIImage pi = densityIImageOf(e);
    SupportSearch search = SupportSearch::start(pi.h, pi.r_search);
    auto status = SupportSearch::kContinue;
    while (status == SupportSearch::kContinue) {
      const double inv_h2 = 1.0 / (search.h * search.h);
      double s0 = 0.0, s1 = 0.0;
      for (int q = 0; q < n; ++q) {
        const double dx = pi.x - list[q]->x, dy = pi.y - list[q]->y, dz = pi.z - list[q]->z;
        const ShapeTerms st = shapeTerms(dx * dx + dy * dy + dz * dz, inv_h2);
        s0 += list[q]->mass * st.w;
        s1 += list[q]->mass * st.q_dw;
      }
      status = search.advance(s0, s1, neighbourTarget(pi.mass, p), p);
    }
    const bool converged = status == SupportSearch::kConverged;
    const DensityIAtH at_h = densityIAtH(pi.x, pi.y, pi.z, pi.vx, pi.vy, pi.vz, search.h);
    DensitySums sums;
    for (int q = 0; converged && q < n; ++q) addDensityNeighbour(at_h, *list[q], sums);
    return densityResultOf(search.h, !converged, sums);
  }
  static void deliver(Force& into, const Force& r) { into = r; }  // as SphDensityPass
};

// The engine's density functor over the list.
struct DensitySumsOnHost {
  using EPI = DensityEPI;
  using EPJ = DensityEPJ;
  using Force = DensitySums;
  using J = DensityJImage;
  static J imageOf(const EPJ& e) { return densityJImageOf(e); }
  Force compute(const EPI& e, const J* const* list, int n) const {
    const DensityIAtH pi = densityIAtHOf(e);
    DensitySums s;
    for (int q = 0; q < n; ++q) addDensityNeighbour(pi, *list[q], s);
    return s;
  }
  static void deliver(Force& into, const Force& r) { addForce(into, r); }
};

// sphHydroKernel, and the engine's hydro functor.
struct HydroOnHost {
  using EPI = HydroEP;
  using EPJ = HydroEP;
  using Force = HydroResult;
  using J = HydroSide;
  HydroParameters p;
  static J imageOf(const EPJ& e) { return hydroSideOf(e); }
  Force compute(const EPI& e, const J* const* list, int n) const {
    const HydroSide pi = hydroSideOf(e);
    HydroResult f;
    for (int q = 0; q < n; ++q) addHydroNeighbour(pi, *list[q], 0.5 * p.alpha, f);
    return f;
  }
  static void deliver(Force& into, const Force& r) { addForce(into, r); }
};

template <class Pass>
class HostMultiwalk final
    : public grove::gpu::Multiwalk<typename Pass::EPI, typename Pass::EPJ, grove::gpu::NoSPJ, typename Pass::Force> {
  using EPI = typename Pass::EPI;
  using EPJ = typename Pass::EPJ;
  using Force = typename Pass::Force;
  using J = typename Pass::J;

 public:
  explicit HostMultiwalk(Pass pass = {}) : pass_(pass) {}

  // Calls told lists_unchanged, and of those, calls whose lists did equal the kept ones.
  int unchanged_calls = 0, unchanged_and_equal = 0;

  int dispatchPlainWalks(int tag, int n_walk, const EPI** epi, const int* n_epi, const EPJ** epj, const int* n_epj,
                         const grove::gpu::NoSPJ**, const int*) override {
    std::vector<std::vector<J>> images(static_cast<std::size_t>(n_walk));
    std::vector<std::vector<const J*>> lists(images.size());
    for (int w = 0; w < n_walk; ++w) {
      for (int k = 0; k < n_epj[w]; ++k) images[w].push_back(Pass::imageOf(epj[w][k]));
      for (const J& j : images[w]) lists[w].push_back(&j);
    }
    compute(tag, n_walk, epi, n_epi, lists);
    return 0;
  }

  int dispatchIndexWalks(int tag, int n_walk, const EPI** epi, const int* n_epi, const int** id_epj,
                         const int* n_epj, const int**, const int*, const EPJ* epj, int n_epj_total,
                         const grove::gpu::NoSPJ*, int, bool send_flag, bool lists_unchanged) override {
    if (send_flag) {
      all_.clear();
      for (int k = 0; k < n_epj_total; ++k) all_.push_back(Pass::imageOf(epj[k]));
      call_ = 0;
    }
    if (n_walk == 0) return 0;  // grove's (FDPS's) send-only call
    std::vector<std::vector<int>> ids(static_cast<std::size_t>(n_walk));
    for (int w = 0; w < n_walk; ++w) ids[w].assign(id_epj[w], id_epj[w] + n_epj[w]);
    if (static_cast<int>(kept_.size()) <= call_) kept_.resize(static_cast<std::size_t>(call_) + 1);
    if (lists_unchanged) {
      ++unchanged_calls;
      unchanged_and_equal += kept_[call_] == ids;
    }
    kept_[call_++] = ids;
    std::vector<std::vector<const J*>> lists(ids.size());
    for (int w = 0; w < n_walk; ++w)
      for (int id : ids[w]) lists[w].push_back(&all_.at(static_cast<std::size_t>(id)));
    compute(tag, n_walk, epi, n_epi, lists);
    return 0;
  }

  int retrieveWalks(int tag, int n_walk, const int* n_epi, Force** force) override {
    auto it = std::find_if(pending_.begin(), pending_.end(), [&](const Batch& b) { return b.tag == tag; });
    grove::require(it != pending_.end() && static_cast<int>(it->out.size()) == n_walk, "HostMultiwalk",
                   "retrieve(tag {}) does not match a pending dispatch", tag);
    for (int w = 0; w < n_walk; ++w) {
      grove::require(static_cast<int>(it->out[w].size()) == n_epi[w], "HostMultiwalk", "walk {}: n_epi differs", w);
      for (int i = 0; i < n_epi[w]; ++i) Pass::deliver(force[w][i], it->out[w][i]);
    }
    pending_.erase(it);
    return 0;
  }

 private:
  struct Batch {
    int tag = 0;
    std::vector<std::vector<Force>> out;
  };

  void compute(int tag, int n_walk, const EPI** epi, const int* n_epi, const std::vector<std::vector<const J*>>& lists) {
    Batch b{tag, std::vector<std::vector<Force>>(static_cast<std::size_t>(n_walk))};
    for (int w = 0; w < n_walk; ++w)
      for (int i = 0; i < n_epi[w]; ++i)
        b.out[w].push_back(pass_.compute(epi[w][i], lists[w].data(), static_cast<int>(lists[w].size())));
    ++this->stats_.batches;
    this->stats_.walks += n_walk;
    pending_.push_back(std::move(b));
  }

  Pass pass_;
  std::vector<J> all_;
  std::vector<std::vector<std::vector<int>>> kept_;
  int call_ = 0;
  std::deque<Batch> pending_;
};

}  // namespace sph::testing
