#pragma once
// Particles loaded into a tree by FDPS's split-stage calls (setParticleLocalTree), possibly from
// several particle systems in turn (dark matter, then gas): each kept as its EPI and EPJ, the
// form the tree reads. A StagedParticles is a particle container the tree stages (keys, sort,
// EPI/EPJ arrays) accept in place of a ParticleSystem.
#include <cstddef>
#include <span>
#include <type_traits>
#include <vector>

#include "grove/core/vec3.hpp"
#include "grove/core/particle_traits.hpp"

namespace grove {

// One loaded particle: its EPI and EPJ, already copied from the user's particle.
template <class EPI, class EPJ>
struct StagedParticle {
  EPI epi;
  EPJ epj;
  Vec3d getPos() const { return positionOf(epi); }
};

template <class P>
inline constexpr bool kIsStagedParticle = false;
template <class EPI, class EPJ>
inline constexpr bool kIsStagedParticle<StagedParticle<EPI, EPJ>> = true;

template <class EPI, class EPJ>
class StagedParticles {
 public:
  using value_type = StagedParticle<EPI, EPJ>;

  template <class PSys>
  void append(const PSys& psys) {
    const std::size_t first = items_.size();
    items_.resize(first + psys.size());
    for (std::size_t i = 0; i < psys.size(); ++i) {
      items_[first + i].epi.copyFromFP(psys[i]);
      items_[first + i].epj.copyFromFP(psys[i]);
    }
  }
  void clear() { items_.clear(); }
  std::size_t size() const { return items_.size(); }
  const value_type& operator[](std::size_t i) const { return items_[i]; }
  std::span<const value_type> particles() const { return items_; }

 private:
  std::vector<value_type> items_;
};

// FDPS's setParticleLocalTree, shared by the trees: loads psys's particles as EPI and EPJ
// (several systems in turn with clear = false); the tree's split-stage calls read staged_.
template <class EPI, class EPJ>
class StagedInput {
 public:
  template <class PSys>
  void setParticleLocalTree(const PSys& psys, bool clear = true) {
    using FP = typename PSys::value_type;
    static_assert(requires(EPI& e, const FP& fp) { e.copyFromFP(fp); },
                  "grove: the EPI type needs `copyFromFP(const FP&)`");
    static_assert(requires(EPJ& e, const FP& fp) { e.copyFromFP(fp); },
                  "grove: the EPJ type needs `copyFromFP(const FP&)`");
    if (clear) staged_.clear();
    staged_.append(psys);
  }

 protected:
  StagedParticles<EPI, EPJ> staged_;
};

// FP -> EPI / EPJ as the trees load them: copyFromFP, or the staged copies themselves.
template <class EP, class FP>
void loadEssential(EP& ep, const FP& fp) {
  if constexpr (kIsStagedParticle<FP>) {
    if constexpr (std::is_same_v<std::decay_t<decltype(fp.epi)>, EP>) ep = fp.epi;
    else ep = fp.epj;
  } else {
    ep.copyFromFP(fp);
  }
}

}  // namespace grove
