#pragma once
/// @file
/// The first stages every tree shares: Morton keys of the user's particles, a radix sort, and the
/// EPI / EPJ / Force arrays in key order; and, at the end, the write-back in the user's order.
#include <omp.h>

#include <cstdint>
#include <span>
#include <vector>

#include "grove/core/error.hpp"
#include "grove/core/execution.hpp"
#include "grove/core/host_loop.hpp"
#include "grove/core/large_vector.hpp"
#include "grove/tree/key_order.hpp"
#include "grove/tree/morton.hpp"
#include "grove/tree/profile.hpp"
#include "grove/tree/radix_sort.hpp"
#include "grove/tree/staged_particles.hpp"

namespace grove {

/// What a build or refresh does with the key-ordered forces.
enum class ForceStart {
  kClear,         ///< clear them (clear = true, forces accumulated in place: CPU kernels)
  kKeep,          ///< keep the previous call's, following their particles (clear = false)
  kClearedLater,  ///< leave them: the multiwalk driver clears each batch's just before its retrieve,
                  ///< while they are in cache and the accelerator is busy
};
/// kClear for clear = true, else kKeep (FDPS's `clear` argument).
constexpr ForceStart forceStartFor(bool clear) { return clear ? ForceStart::kClear : ForceStart::kKeep; }

/// A tree's local particles in Morton-key order: EPI and Force arrays (the EPJ array belongs to
/// the tree), and the maps between key order and the particle system's order.
template <class EPI, class EPJ, class Force>
class SortedParticles {
 public:
  LargeVector<EPI> epi;                            ///< i-particles, key order
  LargeVector<Force> force;                        ///< forces, key order
  LargeVector<std::uint32_t> order;                ///< key position -> psys index
  LargeVector<std::uint32_t> sorted_of_original;   ///< psys index -> key position

  /// Keys relative to `root`, sort, then FP -> EPI and FP -> EPJ (into epj / ep_keys, which the
  /// caller's tree owns). With ForceStart::kKeep the previous forces follow their particles.
  /// reorder: psys itself (ParticleOrder::TREE_ORDER), whose particles are then moved into key
  /// order in the same pass, so that order becomes the identity; or null. Not collective; sets
  /// profile.keys, sort and reorder. Throws grove::Error for 2^32 particles or more, for kKeep
  /// when the particle count changed since the last build, for a reorder other than &psys, and
  /// for a reorder that must move particles but is not a grove::ParticleSystem.
  template <class PSys>
  void build(const PSys& psys, const RootCell& root, ForceStart start, LargeVector<EPJ>& epj,
             std::vector<MortonKey>& ep_keys, TreeProfile& profile, PSys* reorder = nullptr) {
    const std::size_t n = psys.size();
    require(n < (std::size_t{1} << 32), "tree", "{} local particles exceed the 2^32 a tree indexes", n);
    const auto ni = static_cast<std::int64_t>(n);
    double t = omp_get_wtime();
    mortonKeys(Cpu{}, root, psys, keys_);
    profile.keys = omp_get_wtime() - t;
    t = omp_get_wtime();
    sortByKey(Cpu{}, keys_, scratch_);
    profile.sort = omp_get_wtime() - t;

    t = omp_get_wtime();
    LargeVector<Force> previous_force;
    LargeVector<std::uint32_t> previous_sorted_of_original;
    if (start == ForceStart::kKeep) {
      require(force.size() == n, "calcForceAll",
              "clear = false needs the same particles as the previous call ({} then, {} now)", force.size(), n);
      previous_force.swap(force);
      previous_sorted_of_original.swap(sorted_of_original);
    }
    epi.resize(n);
    force.resize(n);
    order.resize(n);
    sorted_of_original.resize(n);
    epj.resize(n);
    ep_keys.resize(n);
    using FP = typename PSys::value_type;
    // TREE_ORDER: the particles are copied into key order in the same pass, unless they are in it
    // already (then nothing moves and the layout is unchanged, so other trees' kept lists stay
    // valid).
    bool move = false;
    if (reorder) {
      require(reorder == &psys, "tree", "TREE_ORDER reorders the particle system the tree reads");
      if (hostLoopsShareThreads()) {
#pragma omp parallel for schedule(static) reduction(|| : move)
        for (std::int64_t k = 0; k < ni; ++k) move = move || keys_[static_cast<std::size_t>(k)].index != k;
      } else {
        for (std::int64_t k = 0; k < ni && !move; ++k) move = keys_[static_cast<std::size_t>(k)].index != k;
      }
    }
    std::span<FP> reordered;
    if (move) {
      if constexpr (requires { reorder->reorderBuffer(); }) reordered = reorder->reorderBuffer();
      else throw Error("tree", "ParticleOrder::TREE_ORDER needs a grove::ParticleSystem to reorder");
    }
    forEachIndex(0, ni, [&](std::int64_t k) {
      const auto s = static_cast<std::size_t>(k);
      const std::uint32_t original = keys_[s].index;
      const FP& fp = psys[original];
      loadEssential(epi[s], fp);
      loadEssential(epj[s], fp);
      ep_keys[s] = keys_[s].key;
      if (start == ForceStart::kClear) force[s].clear();
      else if (start == ForceStart::kKeep) force[s] = previous_force[previous_sorted_of_original[original]];
      if (move) reordered[s] = fp;
      // After a move the particles are in key order: both maps are the identity.
      const std::uint32_t at = move ? static_cast<std::uint32_t>(k) : original;
      order[s] = at;
      sorted_of_original[at] = static_cast<std::uint32_t>(k);
    });
    if constexpr (requires { reorder->adoptReordered(); })
      if (move) reorder->adoptReordered();
    profile.reorder = omp_get_wtime() - t;
  }

  /// The same particles, same order, new values (list reuse): FP -> EPI/EPJ again, forces cleared
  /// for ForceStart::kClear. Needs psys unchanged in size and order since the last build; sets
  /// profile.reorder.
  template <class PSys>
  void refresh(const PSys& psys, ForceStart start, LargeVector<EPJ>& epj, TreeProfile& profile) {
    const double t = omp_get_wtime();
    const auto n = static_cast<std::int64_t>(order.size());
    forEachIndex(0, n, [&](std::int64_t k) {
      const auto s = static_cast<std::size_t>(k);
      const auto& fp = psys[order[s]];
      loadEssential(epi[s], fp);
      loadEssential(epj[s], fp);
      if (start == ForceStart::kClear) force[s].clear();
    });
    profile.reorder = omp_get_wtime() - t;
  }

  /// Each particle of psys gets its force (FP::copyFromForce), in parallel; sets
  /// profile.write_back. Needs psys in the order of the last build.
  template <class PSys>
  void writeBack(PSys& psys, TreeProfile& profile) const {
    const double start = omp_get_wtime();
    const auto n = static_cast<std::int64_t>(psys.size());
    forEachIndex(0, n, [&](std::int64_t i) {
      psys[static_cast<std::size_t>(i)].copyFromForce(force[sorted_of_original[static_cast<std::size_t>(i)]]);
    });
    profile.write_back = omp_get_wtime() - start;
  }

  /// The write-back of groups [g0, g1) (group_range(g) -> {first, count} in key order), in
  /// parallel over groups: the multiwalk driver's, batch by batch as each batch's forces return.
  template <class PSys, class GroupRange>
  void writeBackGroups(PSys& psys, std::size_t g0, std::size_t g1, GroupRange&& group_range) const {
#pragma omp parallel for schedule(dynamic, 16)
    for (std::int64_t g = static_cast<std::int64_t>(g0); g < static_cast<std::int64_t>(g1); ++g) {
      const auto [first, count] = group_range(static_cast<std::size_t>(g));
      for (std::size_t s = first; s < std::size_t{first} + count; ++s) psys[order[s]].copyFromForce(force[s]);
    }
  }

  /// The force of psys particle `original` (index in the particle system's order; bounds checked:
  /// std::out_of_range).
  const Force& forceOf(std::size_t original) const { return force[sorted_of_original.at(original)]; }

  /// Bytes held by the arrays (capacities): keys, scratch, maps, EPI and forces.
  std::size_t memoryBytes() const {
    return keys_.capacity() * sizeof(KeyIndex) + scratch_.capacity() * sizeof(KeyIndex) +
           order.capacity() * 4 + sorted_of_original.capacity() * 4 + epi.capacity() * sizeof(EPI) +
           force.capacity() * sizeof(Force);
  }

 private:
  LargeVector<KeyIndex> keys_, scratch_;
};

}  // namespace grove
