#pragma once
// ParticleSystem<FP>: owns this rank's full particles (the user's FP type) contiguously.
// grove's own names (size, add, remove, ...) and FDPS 7.1's (getNumberOfParticleLocal,
// addOneParticle, removeParticle, readParticleAscii, ...) both work; where FDPS's behaviour
// differs from grove's (removeParticle reorders), the FDPS name has FDPS's behaviour.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "grove/comm/comm.hpp"
#include "grove/core/error.hpp"
#include "grove/core/large_vector.hpp"
#include "grove/core/time_profile.hpp"
#include "grove/core/types.hpp"
#include "grove/domain/domain_info.hpp"
#include "grove/particles/particle_files.hpp"
#include "grove/particles/exchange.hpp"
#include "grove/core/particle_traits.hpp"

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
  void resize(std::size_t n) {
    particles_.resize(n);
    ++layout_version_;
  }
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
  void add(const FP& p) {
    particles_.push_back(p);
    ++layout_version_;
  }
  void add(std::span<const FP> ps) {
    particles_.insert(particles_.end(), ps.begin(), ps.end());
    ++layout_version_;
  }
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
    ++layout_version_;
  }

  // ---- parallel operations ----------------------------------------------------------------------
  // Collective: sends every particle to the rank whose domain holds it (see exchange.hpp).
  void exchangeParticle(const DomainInfo& dinfo) {
    const double start = wallSeconds();
    exchangeParticles(particles_, dinfo);
    ++layout_version_;
    time_profile_.exchange_particle += wallSeconds() - start;
  }

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

  // ---- FDPS 7.1 names ------------------------------------------------------------------------------
  // FDPS requires initialize() before use; grove's ParticleSystem is ready when constructed, so
  // initialize only reserves room for `capacity` particles (and may be called more than once).
  void initialize(std::int32_t capacity = 10000) {
    require(capacity >= 0, "ParticleSystem::initialize", "capacity must not be negative, got {}", capacity);
    particles_.reserve(static_cast<std::size_t>(capacity));
  }
  // Empties the system and reserves room for n_limit particles.
  void createParticle(std::int32_t n_limit, bool /*clear*/ = true) {
    require(n_limit >= 0, "ParticleSystem::createParticle", "n_limit must not be negative, got {}", n_limit);
    particles_.clear();
    ++layout_version_;
    particles_.reserve(static_cast<std::size_t>(n_limit));
  }
  // Keeps the first n particles, or appends value-initialised ones up to n.
  void setNumberOfParticleLocal(std::int32_t n) {
    require(n >= 0, "ParticleSystem::setNumberOfParticleLocal", "the particle count must not be negative, got {}", n);
    particles_.resize(static_cast<std::size_t>(n));
    ++layout_version_;
  }
  std::int32_t getNumberOfParticleLocal() const {
    require(particles_.size() <= static_cast<std::size_t>(INT32_MAX), "ParticleSystem::getNumberOfParticleLocal",
            "{} particles do not fit FDPS's 32-bit local count; use size()", particles_.size());
    return static_cast<std::int32_t>(particles_.size());
  }
  // Collective.
  std::int64_t getNumberOfParticleGlobal() const { return globalCount(); }
  FP& getParticle(std::int32_t i = 0) { return particles_[static_cast<std::size_t>(i)]; }
  const FP& getParticle(std::int32_t i = 0) const { return particles_[static_cast<std::size_t>(i)]; }

  void addOneParticle(const FP& p) {
    particles_.push_back(p);
    ++layout_version_;
  }

  // FDPS's removal: the particles at idx[0..n_remove) go (repeats allowed, any order) and their
  // slots are refilled from the end of the array, so the survivors do NOT keep their order
  // (grove's remove() keeps it). Processing the indices from the largest down, each removed slot
  // swaps with the last live one; the result is FDPS's order exactly. An index out of range is an
  // error and removes nothing.
  void removeParticle(const std::int32_t* idx, std::int32_t n_remove) {
    require(n_remove >= 0 && (n_remove == 0 || idx != nullptr), "ParticleSystem::removeParticle",
            "needs n_remove >= 0 indices, got n_remove = {}{}", n_remove, idx ? "" : " and a null index array");
    std::vector<std::int32_t> doomed(idx, idx + n_remove);
    for (std::int32_t i : doomed)
      require(i >= 0 && static_cast<std::size_t>(i) < particles_.size(), "ParticleSystem::removeParticle",
              "index {} is outside [0, {})", i, particles_.size());
    std::sort(doomed.begin(), doomed.end());
    doomed.erase(std::unique(doomed.begin(), doomed.end()), doomed.end());
    std::size_t last = particles_.size();
    for (auto it = doomed.rbegin(); it != doomed.rend(); ++it) {
      --last;
      std::swap(particles_[static_cast<std::size_t>(*it)], particles_[last]);
    }
    particles_.resize(last);
    ++layout_version_;
  }

  // FDPS draws this many samples per rank from this particle system in
  // DomainInfo::collectSampleParticle; grove does the same (overriding the DomainInfo's
  // setSampleCountPerRank for this system's samples).
  void setAverageTargetNumberOfSampleParticlePerProcess(const std::int32_t& n_per_process) {
    require(n_per_process > 0, "ParticleSystem::setAverageTargetNumberOfSampleParticlePerProcess",
            "needs at least one sample per process, got {}", n_per_process);
    sample_count_per_rank_ = n_per_process;
  }
  std::optional<int> sampleCountPerRank() const { return sample_count_per_rank_; }

  // FDPS's flag asks for serialised particles, which FDPS itself does not support.
  void exchangeParticle(const DomainInfo& dinfo, bool flag_serialize) {
    require(!flag_serialize, "ParticleSystem::exchangeParticle", "serialized exchange is not supported (nor in FDPS)");
    exchangeParticle(dinfo);
  }

  template <class Compare>
  void sortParticle(Compare comp) {
    std::sort(particles_.begin(), particles_.end(), comp);
    ++layout_version_;
  }
  template <class Compare>
  void sortParticleStable(Compare comp) {
    std::stable_sort(particles_.begin(), particles_.end(), comp);
    ++layout_version_;
  }

  // ---- particle files (grove/particles/particle_files.hpp) ------------------------------------------------
  // Collective. args, each optional, in this order: a file-name format for one file per rank
  // ("%s_%03d_%03d.dat", filled with filename, rank count, rank), a header object, and a member
  // function of FP to use instead of readAscii/writeAscii/readBinary/writeBinary. Reading replaces
  // this rank's particles (unchanged if it throws).
  template <class... Args>
  void readParticleAscii(const std::string& filename, Args&&... args) {
    const std::vector<FP> read =
        io::readParticlesFdps<FileEncoding::Ascii, FP>(comm_, filename, "readParticleAscii", args...);
    particles_.assign(read.begin(), read.end());
    ++layout_version_;
  }
  template <class... Args>
  void readParticleBinary(const std::string& filename, Args&&... args) {
    const std::vector<FP> read =
        io::readParticlesFdps<FileEncoding::Binary, FP>(comm_, filename, "readParticleBinary", args...);
    particles_.assign(read.begin(), read.end());
    ++layout_version_;
  }
  template <class... Args>
  void writeParticleAscii(const std::string& filename, Args&&... args) const {
    io::writeParticlesFdps<FileEncoding::Ascii, FP>(comm_, particles(), filename, "writeParticleAscii", args...);
  }
  template <class... Args>
  void writeParticleBinary(const std::string& filename, Args&&... args) const {
    io::writeParticlesFdps<FileEncoding::Binary, FP>(comm_, particles(), filename, "writeParticleBinary", args...);
  }

  const Comm& comm() const { return comm_; }
  // Another communicator for the collective calls (the particles stay where they are).
  void setComm(Comm comm) {
    comm_ = std::move(comm);
    ++layout_version_;
  }
  // FDPS's setCommInfo(PS::CommInfo).
  template <class Info>
    requires requires(const Info& info) { { info.groveComm() } -> std::convertible_to<Comm>; }
  void setCommInfo(const Info& info) {
    setComm(info.groveComm());
  }

  // ---- FDPS's statistics ----------------------------------------------------------------------
  // Bytes held by the particle arrays (capacity).
  std::size_t getMemSizeUsed() const { return (particles_.capacity() + reorder_buffer_.capacity()) * sizeof(FP); }
  std::size_t getUsedMemorySize() const { return getMemSizeUsed(); }
  // Seconds in exchangeParticle since the last clear.
  TimeProfile getTimeProfile() const { return time_profile_; }
  void clearTimeProfile() { time_profile_.clear(); }
  void clearCounterAll() { clearTimeProfile(); }

  // For trees that move the particles into their key order (ParticleOrder::TREE_ORDER): a second
  // array of size() particles to write the new order into, then adoptReordered() swaps it in
  // (and the old array becomes the next call's second array, so neither is allocated anew).
  std::span<FP> reorderBuffer() {
    reorder_buffer_.resize(particles_.size());
    return reorder_buffer_;
  }
  void adoptReordered() {
    require(reorder_buffer_.size() == particles_.size(), "ParticleSystem::adoptReordered",
            "the reorder buffer holds {} particles, the system {}", reorder_buffer_.size(), particles_.size());
    particles_.swap(reorder_buffer_);
    ++layout_version_;
  }

  // Changes whenever particles are added, removed, reordered or exchanged (not when their values
  // change): trees that keep interaction lists for reuse check it.
  std::uint64_t layoutVersion() const { return layout_version_; }

 private:
  FP& checkedAt(std::size_t i) {
    require(i < particles_.size(), "ParticleSystem::at", "index {} is outside [0, {})", i, particles_.size());
    return particles_[i];
  }

  Comm comm_;
  LargeVector<FP> particles_;  // huge pages: trees gather from it through a permutation
  LargeVector<FP> reorder_buffer_;  // empty unless a tree reorders the particles
  std::uint64_t layout_version_ = 0;
  std::optional<int> sample_count_per_rank_;
  TimeProfile time_profile_;
};

}  // namespace grove
