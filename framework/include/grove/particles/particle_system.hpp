#pragma once
// ParticleSystem<FP>: owns this rank's full particles (the user's FP type) contiguously.
#include <algorithm>
#include <span>
#include <vector>

#include "grove/comm/comm.hpp"
#include "grove/core/error.hpp"
#include "grove/core/types.hpp"
#include "grove/domain/domain_info.hpp"
#include "grove/particles/exchange.hpp"
#include "grove/particles/particle_traits.hpp"

namespace grove {

template <class FP>
class ParticleSystem {
  static_assert(HasGetPos<FP>, "grove::ParticleSystem<FP>: FP needs `getPos() const` returning a 3-vector");
  static_assert(std::is_trivially_copyable_v<FP>,
                "grove::ParticleSystem<FP>: FP must be trivially copyable (it is sent between ranks as bytes)");

 public:
  using value_type = FP;

  explicit ParticleSystem(Comm comm = Comm::world()) : comm_(std::move(comm)) {}

  // ---- size -------------------------------------------------------------------------------------
  std::size_t size() const { return particles_.size(); }
  bool empty() const { return particles_.empty(); }
  // Collective: the number of particles on all ranks.
  GlobalCount globalCount() const { return comm_.allreduceSum(static_cast<GlobalCount>(particles_.size())); }
  void resize(std::size_t n) { particles_.resize(n); }
  void reserve(std::size_t n) { particles_.reserve(n); }

  // ---- access -----------------------------------------------------------------------------------
  FP& operator[](std::size_t i) { return particles_[i]; }
  const FP& operator[](std::size_t i) const { return particles_[i]; }
  FP& at(std::size_t i) { return checkedAt(i); }
  const FP& at(std::size_t i) const { return const_cast<ParticleSystem*>(this)->checkedAt(i); }
  FP* data() { return particles_.data(); }
  const FP* data() const { return particles_.data(); }
  std::span<FP> particles() { return particles_; }
  std::span<const FP> particles() const { return particles_; }
  auto begin() { return particles_.begin(); }
  auto end() { return particles_.end(); }
  auto begin() const { return particles_.begin(); }
  auto end() const { return particles_.end(); }

  // ---- add and remove ---------------------------------------------------------------------------
  void add(const FP& p) { particles_.push_back(p); }
  void add(std::span<const FP> ps) { particles_.insert(particles_.end(), ps.begin(), ps.end()); }
  // Removes the particles at these indices (any order, repeats allowed); the others keep their
  // order. An index out of range is an error and removes nothing.
  void remove(std::span<const LocalIndex> indices) {
    std::vector<char> doomed(particles_.size(), 0);
    for (LocalIndex i : indices) {
      require(i >= 0 && static_cast<std::size_t>(i) < particles_.size(), "ParticleSystem::remove",
              "index {} is outside [0, {})", i, particles_.size());
      doomed[static_cast<std::size_t>(i)] = 1;
    }
    std::size_t kept = 0;
    for (std::size_t i = 0; i < particles_.size(); ++i)
      if (!doomed[i]) particles_[kept++] = particles_[i];
    particles_.resize(kept);
  }

  // ---- parallel operations ----------------------------------------------------------------------
  // Collective: sends every particle to the rank whose domain holds it (see exchange.hpp).
  void exchangeParticle(const DomainInfo& dinfo) { exchangeParticles(particles_, dinfo); }

  // Moves every particle by whole periods into the root domain along its periodic axes.
  // Needs FP::setPos. A non-finite position is an error (the particle is left as it was).
  void adjustPositionIntoRootDomain(const DomainInfo& dinfo) {
    static_assert(HasSetPos<FP>, "grove::adjustPositionIntoRootDomain: FP needs `setPos(const Vec3d&)`");
    if (!isAnyPeriodic(dinfo.getBoundaryCondition())) return;
    require(dinfo.isRootDomainFixed(), "adjustPositionIntoRootDomain",
            "the boundary is periodic but no root domain was set (setPosRootDomain)");
    for (std::size_t i = 0; i < particles_.size(); ++i) {
      const Vec3d pos = positionOf(particles_[i]);
      require(isFinite(pos), "adjustPositionIntoRootDomain", "particle {} has a non-finite position {}", i, pos);
      const Vec3d wrapped = dinfo.wrapIntoRoot(pos);
      if (wrapped != pos) particles_[i].setPos(wrapped);
    }
  }

  const Comm& comm() const { return comm_; }

 private:
  FP& checkedAt(std::size_t i) {
    require(i < particles_.size(), "ParticleSystem::at", "index {} is outside [0, {})", i, particles_.size());
    return particles_[i];
  }

  Comm comm_;
  std::vector<FP> particles_;
};

}  // namespace grove
