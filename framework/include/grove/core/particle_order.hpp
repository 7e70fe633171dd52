#pragma once
/// @file
/// grove::ParticleOrder: what a tree's write-back calls do with the order of the particles.
///
/// Why TREE_ORDER: a tree copies each particle into its key-ordered arrays and writes each force
/// back. With the particles already in key order both passes stream through memory instead of gathering and
/// scattering through a permutation (measured in doc/performance.md: the refresh of a REUSE_LIST
/// step at 4 M particles takes about 40 % less). The cost: the particle system keeps a second
/// array of its particles to reorder into, and indices into it do not survive a list-building call
/// (as after exchangeParticle). Use it on one tree per particle system: trees with different roots
/// would each reorder the particles, and a REUSE_LIST call would then find its particles
/// reordered since its MAKE_LIST_FOR_REUSE (an error).
#include <string_view>

namespace grove {

/// What a tree's write-back calls (calcForceAllAndWriteBack...) do with the order of the particle
/// system's particles.
enum class ParticleOrder : int {
  KEEP_ORDER = 0,  ///< untouched, as in FDPS (the default)
  /// moved into the tree's key (Morton) order on every list-building call (MAKE_LIST,
  /// MAKE_LIST_FOR_REUSE); REUSE_LIST calls keep the order they find
  TREE_ORDER = 1,
};

/// "TREE_ORDER" or "KEEP_ORDER" (any other value too).
constexpr std::string_view toString(ParticleOrder order) {
  return order == ParticleOrder::TREE_ORDER ? "TREE_ORDER" : "KEEP_ORDER";
}

/// The option as the trees carry it (both derive from it). KEEP_ORDER until set.
class ParticleOrderOption {
 public:
  /// Sets the order that later write-back calls leave the particles in.
  void setParticleOrder(ParticleOrder order) { order_ = order; }
  /// The order set (KEEP_ORDER by default).
  ParticleOrder getParticleOrder() const { return order_; }

 protected:
  /// The particle system a call may reorder: the one it writes back to, under TREE_ORDER; else null.
  template <class PSys>
  PSys* reorderTarget(PSys* write_back_to) const {
    return order_ == ParticleOrder::TREE_ORDER ? write_back_to : nullptr;
  }

 private:
  ParticleOrder order_ = ParticleOrder::KEEP_ORDER;
};

}  // namespace grove
