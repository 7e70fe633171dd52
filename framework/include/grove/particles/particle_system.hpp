#pragma once
/// @file
/// grove::ParticleSystem<FP>: owns this rank's full particles (the user's FP type) contiguously.
/// grove's own names (size, add, remove, ...) and FDPS 7.1's (getNumberOfParticleLocal,
/// addOneParticle, removeParticle, readParticleAscii, ...) both work; where FDPS's behaviour
/// differs from grove's (removeParticle reorders), the FDPS name has FDPS's behaviour.
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

/// This rank's particles of the user's type FP, held contiguously, with the communicator its
/// collective calls use. Local operations touch this rank only; the calls marked collective must
/// be made by every rank of comm(). Errors throw grove::Error.
///
/// Needs: FP trivially copyable (sent between ranks as bytes) with `getPos() const` returning a
/// 3-vector (checked at compile time).
template <class FP>
class ParticleSystem {
  static_assert(HasGetPos<FP>, "grove::ParticleSystem<FP>: FP needs `getPos() const` returning a 3-vector");
  static_assert(std::is_trivially_copyable_v<FP>,
                "grove::ParticleSystem<FP>: FP must be trivially copyable (it is sent between ranks as bytes)");

 public:
  using value_type = FP;  ///< the particle type

  /// No particles; collective calls go over comm (every rank by default). Not collective.
  explicit ParticleSystem(Comm comm = Comm::world()) : comm_(std::move(comm)) {}

  // ---- size -------------------------------------------------------------------------------------
  /// Particles on this rank.
  std::size_t size() const { return particles_.size(); }
  /// Whether this rank holds no particle.
  bool empty() const { return particles_.empty(); }
  /// Collective: the number of particles on all ranks.
  GlobalCount globalCount() const { return comm_.allreduceSum(static_cast<GlobalCount>(particles_.size())); }
  /// Keeps the first n particles, or appends value-initialised ones up to n.
  void resize(std::size_t n) {
    particles_.resize(n);
    ++layout_version_;
  }
  /// Room for n particles without reallocation; the particles are unchanged.
  void reserve(std::size_t n) { particles_.reserve(n); }

  // ---- access -----------------------------------------------------------------------------------
  /// Particle i, unchecked (needs i < size()).
  FP& operator[](std::size_t i) { return particles_[i]; }
  /// Particle i, unchecked (needs i < size()); read only.
  const FP& operator[](std::size_t i) const { return particles_[i]; }
  /// Particle i; throws grove::Error when i >= size().
  FP& at(std::size_t i) { return checkedAt(i); }
  /// Particle i, read only; throws grove::Error when i >= size().
  const FP& at(std::size_t i) const { return const_cast<ParticleSystem*>(this)->checkedAt(i); }
  /// Pointer to the first of size() contiguous particles; invalid once particles are added,
  /// removed, reserved for, reordered or exchanged.
  FP* data() { return particles_.data(); }
  /// Pointer to the first of size() contiguous particles (read only).
  const FP* data() const { return particles_.data(); }
  /// The size() particles of this rank; invalid once particles are added, removed, reserved for,
  /// reordered or exchanged.
  std::span<FP> particles() { return particles_; }
  /// The size() particles of this rank (read only).
  std::span<const FP> particles() const { return particles_; }
  /// Iterator to the first particle.
  auto begin() { return particles_.begin(); }
  /// Iterator past the last particle.
  auto end() { return particles_.end(); }
  /// Iterator to the first particle (read only).
  auto begin() const { return particles_.begin(); }
  /// Iterator past the last particle (read only).
  auto end() const { return particles_.end(); }

  // ---- add and remove ---------------------------------------------------------------------------
  /// Appends p.
  void add(const FP& p) {
    particles_.push_back(p);
    ++layout_version_;
  }
  /// Appends the particles of ps, in their order.
  void add(std::span<const FP> ps) {
    particles_.insert(particles_.end(), ps.begin(), ps.end());
    ++layout_version_;
  }
  /// Removes the particles at these indices (any order, repeats allowed); the others keep their
  /// order. An index out of range throws grove::Error and removes nothing. O(size()).
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
  /// Collective: sends every particle to the rank whose domain holds it (exchangeParticles in
  /// grove/particles/exchange.hpp: particles that stay keep their order, arrivals follow in rank
  /// order). Throws grove::Error on every rank, with nothing moved, when a particle has no owner
  /// (non-finite position, outside a fixed root domain). Its time adds to getTimeProfile().
  void exchangeParticle(const DomainInfo& dinfo) {
    const double start = wallSeconds();
    exchangeParticles(particles_, dinfo);
    ++layout_version_;
    time_profile_.exchange_particle += wallSeconds() - start;
  }

  /// Moves every particle by whole periods into the root domain along its periodic axes; nothing
  /// when no axis is periodic. Not collective. Needs FP::setPos, and a root domain set
  /// (DomainInfo::setPosRootDomain) when an axis is periodic, else grove::Error. A non-finite
  /// position throws grove::Error (that particle is left as it was; those before it are moved).
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
  /// FDPS requires initialize() before use; grove's ParticleSystem is ready when constructed, so
  /// initialize only reserves room for `capacity` particles (and may be called more than once).
  /// A negative capacity throws grove::Error.
  void initialize(std::int32_t capacity = 10000) {
    require(capacity >= 0, "ParticleSystem::initialize", "capacity must not be negative, got {}", capacity);
    particles_.reserve(static_cast<std::size_t>(capacity));
  }
  /// Empties the system and reserves room for n_limit particles (FDPS's; the second argument is
  /// ignored). A negative n_limit throws grove::Error.
  void createParticle(std::int32_t n_limit, bool /*clear*/ = true) {
    require(n_limit >= 0, "ParticleSystem::createParticle", "n_limit must not be negative, got {}", n_limit);
    particles_.clear();
    ++layout_version_;
    particles_.reserve(static_cast<std::size_t>(n_limit));
  }
  /// Keeps the first n particles, or appends value-initialised ones up to n. A negative n throws
  /// grove::Error.
  void setNumberOfParticleLocal(std::int32_t n) {
    require(n >= 0, "ParticleSystem::setNumberOfParticleLocal", "the particle count must not be negative, got {}", n);
    particles_.resize(static_cast<std::size_t>(n));
    ++layout_version_;
  }
  /// Particles on this rank, as FDPS's 32-bit count; throws grove::Error when they do not fit
  /// (use size()).
  std::int32_t getNumberOfParticleLocal() const {
    require(particles_.size() <= static_cast<std::size_t>(INT32_MAX), "ParticleSystem::getNumberOfParticleLocal",
            "{} particles do not fit FDPS's 32-bit local count; use size()", particles_.size());
    return static_cast<std::int32_t>(particles_.size());
  }
  /// Collective: the number of particles on all ranks (globalCount()).
  std::int64_t getNumberOfParticleGlobal() const { return globalCount(); }
  /// Particle i, unchecked (needs 0 <= i < size()).
  FP& getParticle(std::int32_t i = 0) { return particles_[static_cast<std::size_t>(i)]; }
  /// Particle i, unchecked (needs 0 <= i < size()); read only.
  const FP& getParticle(std::int32_t i = 0) const { return particles_[static_cast<std::size_t>(i)]; }

  /// Appends p (FDPS's add()).
  void addOneParticle(const FP& p) {
    particles_.push_back(p);
    ++layout_version_;
  }

  /// FDPS's removal: the particles at idx[0..n_remove) go (repeats allowed, any order) and their
  /// slots are refilled from the end of the array, so the survivors do NOT keep their order
  /// (grove's remove() keeps it). Processing the indices from the largest down, each removed slot
  /// swaps with the last live one; the result is FDPS's order exactly. An index out of range, a
  /// negative n_remove or a null idx with n_remove > 0 throws grove::Error and removes nothing.
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

  /// FDPS draws this many samples per rank from this particle system in
  /// DomainInfo::collectSampleParticle; grove does the same (overriding the DomainInfo's
  /// setSampleCountPerRank for this system's samples). Needs n_per_process > 0, else grove::Error.
  void setAverageTargetNumberOfSampleParticlePerProcess(const std::int32_t& n_per_process) {
    require(n_per_process > 0, "ParticleSystem::setAverageTargetNumberOfSampleParticlePerProcess",
            "needs at least one sample per process, got {}", n_per_process);
    sample_count_per_rank_ = n_per_process;
  }
  /// The samples per rank set by setAverageTargetNumberOfSampleParticlePerProcess, if any (else
  /// the DomainInfo's count applies).
  std::optional<int> sampleCountPerRank() const { return sample_count_per_rank_; }

  /// FDPS's form of exchangeParticle(dinfo), collective likewise. FDPS's flag asks for serialised
  /// particles, which FDPS itself does not support: true throws grove::Error.
  void exchangeParticle(const DomainInfo& dinfo, bool flag_serialize) {
    require(!flag_serialize, "ParticleSystem::exchangeParticle", "serialized exchange is not supported (nor in FDPS)");
    exchangeParticle(dinfo);
  }

  /// Sorts this rank's particles by comp (a strict weak order on FP; std::sort, not stable). Not
  /// collective.
  template <class Compare>
  void sortParticle(Compare comp) {
    std::sort(particles_.begin(), particles_.end(), comp);
    ++layout_version_;
  }
  /// Sorts this rank's particles by comp (a strict weak order on FP), equal ones keeping their
  /// order (std::stable_sort). Not collective.
  template <class Compare>
  void sortParticleStable(Compare comp) {
    std::stable_sort(particles_.begin(), particles_.end(), comp);
    ++layout_version_;
  }

  // ---- particle files (grove/particles/particle_files.hpp) ------------------------------------------------
  /// Collective: replaces this rank's particles with those of an ascii particle file, FDPS's
  /// format and layouts (grove/particles/particle_files.hpp). args, each optional, in this order: a
  /// file-name format for one file per rank ("%s_%03d_%03d.dat", filled with filename, rank count,
  /// rank), a header object (read into), and a member function of FP to use instead of readAscii.
  /// Without a format, one file: rank 0's records are shared out in file order. Throws grove::Error
  /// on every rank when a read fails, this rank's particles unchanged.
  template <class... Args>
  void readParticleAscii(const std::string& filename, Args&&... args) {
    const std::vector<FP> read =
        io::readParticlesFdps<FileEncoding::Ascii, FP>(comm_, filename, "readParticleAscii", args...);
    particles_.assign(read.begin(), read.end());
    ++layout_version_;
  }
  /// Collective: as readParticleAscii, for a binary particle file (FP::readBinary, or the member
  /// given).
  template <class... Args>
  void readParticleBinary(const std::string& filename, Args&&... args) {
    const std::vector<FP> read =
        io::readParticlesFdps<FileEncoding::Binary, FP>(comm_, filename, "readParticleBinary", args...);
    particles_.assign(read.begin(), read.end());
    ++layout_version_;
  }
  /// Collective: writes the particles of all ranks to an ascii particle file, FDPS's format and
  /// layouts (grove/particles/particle_files.hpp). args as for readParticleAscii (the member
  /// function, if given, replaces writeAscii). Without a format, rank 0 gathers every particle in
  /// rank order and writes one file. Throws grove::Error on every rank when a write fails (the file
  /// may be left partial).
  template <class... Args>
  void writeParticleAscii(const std::string& filename, Args&&... args) const {
    io::writeParticlesFdps<FileEncoding::Ascii, FP>(comm_, particles(), filename, "writeParticleAscii", args...);
  }
  /// Collective: as writeParticleAscii, for a binary particle file (FP::writeBinary, or the
  /// member given).
  template <class... Args>
  void writeParticleBinary(const std::string& filename, Args&&... args) const {
    io::writeParticlesFdps<FileEncoding::Binary, FP>(comm_, particles(), filename, "writeParticleBinary", args...);
  }

  /// The communicator of the collective calls.
  const Comm& comm() const { return comm_; }
  /// Another communicator for the collective calls (the particles stay where they are).
  void setComm(Comm comm) {
    comm_ = std::move(comm);
    ++layout_version_;
  }
  /// FDPS's setCommInfo(PS::CommInfo): setComm(info.groveComm()).
  template <class Info>
    requires requires(const Info& info) { { info.groveComm() } -> std::convertible_to<Comm>; }
  void setCommInfo(const Info& info) {
    setComm(info.groveComm());
  }

  // ---- FDPS's statistics ----------------------------------------------------------------------
  /// Bytes held by the particle arrays (their capacity, the reorder buffer included).
  std::size_t getMemSizeUsed() const { return (particles_.capacity() + reorder_buffer_.capacity()) * sizeof(FP); }
  /// Same as getMemSizeUsed().
  std::size_t getUsedMemorySize() const { return getMemSizeUsed(); }
  /// Seconds in exchangeParticle since the last clear (TimeProfile::exchange_particle; the other
  /// fields are 0).
  TimeProfile getTimeProfile() const { return time_profile_; }
  /// Zeroes getTimeProfile().
  void clearTimeProfile() { time_profile_.clear(); }
  /// Same as clearTimeProfile().
  void clearCounterAll() { clearTimeProfile(); }

  /// For trees that move the particles into their key order (ParticleOrder::TREE_ORDER): a second
  /// array of size() particles to write the new order into, then adoptReordered() swaps it in
  /// (and the old array becomes the next call's second array, so neither is allocated anew).
  std::span<FP> reorderBuffer() {
    reorder_buffer_.resize(particles_.size());
    return reorder_buffer_;
  }
  /// Makes the particles written into reorderBuffer() this system's particles. Throws grove::Error
  /// when the buffer's size is no longer size().
  void adoptReordered() {
    require(reorder_buffer_.size() == particles_.size(), "ParticleSystem::adoptReordered",
            "the reorder buffer holds {} particles, the system {}", reorder_buffer_.size(), particles_.size());
    particles_.swap(reorder_buffer_);
    ++layout_version_;
  }

  /// Changes whenever particles are added, removed, reordered or exchanged (not when their values
  /// change): trees that keep interaction lists for reuse check it.
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
