#pragma once
/// @file
/// Particles loaded into a tree by FDPS's split-stage calls (setParticleLocalTree), possibly from
/// several particle systems in turn (dark matter, then gas): each kept as its EPI and EPJ, the
/// form the tree reads. A StagedParticles is a particle container the tree stages (keys, sort,
/// EPI/EPJ arrays) accept in place of a ParticleSystem.
#include <cstddef>
#include <span>
#include <type_traits>
#include <vector>

#include "grove/core/vec3.hpp"
#include "grove/core/particle_traits.hpp"

namespace grove {

/// One loaded particle: its EPI and EPJ, already copied from the user's particle.
template <class EPI, class EPJ>
struct StagedParticle {
  EPI epi;  ///< the particle as the tree's i-particle (copyFromFP)
  EPJ epj;  ///< the particle as the tree's j-particle (copyFromFP)
  /// The EPI's position.
  Vec3d getPos() const { return positionOf(epi); }
};

/// Whether P is a StagedParticle (true only for StagedParticle<EPI, EPJ>).
template <class P>
inline constexpr bool kIsStagedParticle = false;
/// A StagedParticle: true.
template <class EPI, class EPJ>
inline constexpr bool kIsStagedParticle<StagedParticle<EPI, EPJ>> = true;

/// The particles loaded into a tree so far, in load order; read like a particle system
/// (size(), operator[], value_type).
template <class EPI, class EPJ>
class StagedParticles {
 public:
  using value_type = StagedParticle<EPI, EPJ>;  ///< the element type

  /// Appends psys's particles (in its order), each copied with EPI::copyFromFP and
  /// EPJ::copyFromFP. PSys: size() and operator[] returning a full particle.
  template <class PSys>
  void append(const PSys& psys) {
    const std::size_t first = items_.size();
    items_.resize(first + psys.size());
    for (std::size_t i = 0; i < psys.size(); ++i) {
      items_[first + i].epi.copyFromFP(psys[i]);
      items_[first + i].epj.copyFromFP(psys[i]);
    }
  }
  /// Removes every loaded particle.
  void clear() { items_.clear(); }
  /// Particles loaded.
  std::size_t size() const { return items_.size(); }
  /// Particle i (i < size(), unchecked).
  const value_type& operator[](std::size_t i) const { return items_[i]; }
  /// All loaded particles (valid until the next append or clear).
  std::span<const value_type> particles() const { return items_; }

 private:
  std::vector<value_type> items_;
};

/// FDPS's setParticleLocalTree, shared by the trees: loads psys's particles as EPI and EPJ
/// (several systems in turn with clear = false); the tree's split-stage calls read staged_.
template <class EPI, class EPJ>
class StagedInput {
 public:
  /// Loads psys's particles as EPI and EPJ: replaces those loaded before (clear = true) or adds
  /// to them (clear = false). Needs EPI and EPJ with `copyFromFP(const FP&)` (checked at compile
  /// time).
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
  StagedParticles<EPI, EPJ> staged_;  ///< the particles loaded so far
};

/// FP -> EPI / EPJ as the trees load them: copyFromFP, or, for a StagedParticle, the staged copy
/// itself (its epi when EP is the EPI type, else its epj).
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
