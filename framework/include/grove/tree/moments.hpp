#pragma once
/// @file
/// Multipole moments of tree cells and the superparticles (SPJ) that carry them into
/// interaction lists and LETs. Names follow FDPS 7.1.
///
/// Moment contract (a user may supply a pair of their own, see MomentType / SuperParticleType):
///
///     init()                     empty moment
///     accumulateAtLeaf(epj)      pass 1: add one particle
///     accumulate(child)          pass 1: add a child cell's (or a received superparticle's) moment
///     set()                      pass 1 done: normalise (e.g. divide the mass-weighted position)
///     accumulateAtLeaf2(epj)     pass 2: terms that need the expansion centre found in pass 1
///     accumulate2(child)         pass 2: the same for a child moment
///     getPos(), getCharge()      expansion centre (used by the opening criterion) and charge
///     kHasSecondPass (optional)  static constexpr bool; false when the pass-2 functions do nothing,
///                                so that the bottom-up pass sweeps the tree once (default: true)
///
/// SPJ contract: copyFromMoment(m), convertToMoment(), getPos(), getCharge(), clear().
///
/// Monopole/Quadrupole expand about the centre of mass (for positive charges: masses). The
/// GeometricCenter variants expand about the mean position of the particles, so they work for
/// charges of both signs. Quadrupoles are raw second moments, sum q (x - c)(x - c)^T; a kernel
/// takes their trace where it needs the traceless form.
#include <concepts>
#include <cstdint>

#include "grove/core/execution.hpp"
#include "grove/core/sym_mat3.hpp"
#include "grove/core/particle_traits.hpp"

namespace grove {

/// Moment::kHasSecondPass where the moment declares it, else true.
template <class Moment>
constexpr bool momentHasSecondPass() {
  if constexpr (requires { Moment::kHasSecondPass; }) return Moment::kHasSecondPass;
  else return true;
}

/// A particle with `getPos()` and `getCharge()` (convertible to double): what the built-in
/// moments accumulate.
template <class EPJ>
concept ChargedParticle = HasGetPos<EPJ> && requires(const EPJ& p) {
  { p.getCharge() } -> std::convertible_to<double>;
};

// ---- centre of mass -----------------------------------------------------------------------------

/// Monopole about the centre of mass: mass and centre (FDPS's MomentMonopole). One pass.
struct MomentMonopole {
  /// No second pass: one bottom-up sweep.
  static constexpr bool kHasSecondPass = false;
  double mass = 0.0;  ///< total mass (sum of the charges)
  Vec3d pos;  ///< centre of mass (sum m x during pass 1, before set())

  /// Empty moment (all zero).
  GROVE_HOST_DEVICE void init() { *this = {}; }
  /// The expansion centre (after set()).
  GROVE_HOST_DEVICE Vec3d getPos() const { return pos; }
  /// The mass (total charge).
  GROVE_HOST_DEVICE double getCharge() const { return mass; }
  /// Pass 1: adds one particle.
  template <ChargedParticle EPJ>
  GROVE_HD_TEMPLATE void accumulateAtLeaf(const EPJ& p) {
    const double m = static_cast<double>(p.getCharge());
    mass += m;
    pos += m * positionOf(p);
  }
  /// Pass 1: adds a child cell's (or a received superparticle's) moment.
  GROVE_HOST_DEVICE void accumulate(const MomentMonopole& c) {
    mass += c.mass;
    pos += c.mass * c.pos;
  }
  /// Pass 1 done: pos becomes the centre of mass (the origin when the mass is 0).
  GROVE_HOST_DEVICE void set() { pos = mass != 0.0 ? pos / mass : Vec3d{}; }
  /// Pass 2: nothing (no second pass).
  template <class EPJ>
  GROVE_HD_TEMPLATE void accumulateAtLeaf2(const EPJ&) {}
  /// Pass 2: nothing (no second pass).
  GROVE_HOST_DEVICE void accumulate2(const MomentMonopole&) {}
};

/// The monopole's pass 1 (centre of mass), then the second moment about that centre
/// (FDPS's MomentQuadrupole).
struct MomentQuadrupole : MomentMonopole {
  /// Two passes: pass 2 needs the centre found in pass 1.
  static constexpr bool kHasSecondPass = true;
  SymMat3d quad;  ///< sum m (x - pos)(x - pos)^T

  /// Empty moment (all zero).
  GROVE_HOST_DEVICE void init() { *this = {}; }
  /// Pass 1: adds a child cell's (or a received superparticle's) moment.
  GROVE_HOST_DEVICE void accumulate(const MomentQuadrupole& c) { MomentMonopole::accumulate(c); }
  /// Pass 2: adds the particle to quad, about pos.
  template <ChargedParticle EPJ>
  GROVE_HD_TEMPLATE void accumulateAtLeaf2(const EPJ& p) {
    const Vec3d d = positionOf(p) - pos;
    quad += symmetricOuter(d, d, static_cast<double>(p.getCharge()));
  }
  /// Pass 2, parallel-axis theorem: the child's quadrupole about its own centre, moved to ours.
  GROVE_HOST_DEVICE void accumulate2(const MomentQuadrupole& c) {
    const Vec3d d = c.pos - pos;
    quad += c.quad + symmetricOuter(d, d, c.mass);
  }
};

// ---- geometric centre (charges of both signs) ---------------------------------------------------

/// Monopole about the mean particle position: charge, centre and particle count (FDPS's
/// MomentMonopoleGeometricCenter). One pass; charges of both signs.
struct MomentMonopoleGeometricCenter {
  /// No second pass: one bottom-up sweep.
  static constexpr bool kHasSecondPass = false;
  double charge = 0.0;  ///< total charge
  Vec3d pos;  ///< mean particle position (sum x during pass 1)
  std::int64_t n_ptcl = 0;  ///< number of particles

  /// Empty moment (all zero).
  GROVE_HOST_DEVICE void init() { *this = {}; }
  /// The expansion centre (after set()).
  GROVE_HOST_DEVICE Vec3d getPos() const { return pos; }
  /// The total charge.
  GROVE_HOST_DEVICE double getCharge() const { return charge; }
  /// Pass 1: adds one particle.
  template <ChargedParticle EPJ>
  GROVE_HD_TEMPLATE void accumulateAtLeaf(const EPJ& p) {
    charge += static_cast<double>(p.getCharge());
    pos += positionOf(p);
    ++n_ptcl;
  }
  /// Pass 1: adds a child cell's (or a received superparticle's) moment.
  GROVE_HOST_DEVICE void accumulate(const MomentMonopoleGeometricCenter& c) {
    charge += c.charge;
    pos += static_cast<double>(c.n_ptcl) * c.pos;
    n_ptcl += c.n_ptcl;
  }
  /// Pass 1 done: pos becomes the mean position (the origin without particles).
  GROVE_HOST_DEVICE void set() { pos = n_ptcl > 0 ? pos / static_cast<double>(n_ptcl) : Vec3d{}; }
  /// Pass 2: nothing (no second pass).
  template <class EPJ>
  GROVE_HD_TEMPLATE void accumulateAtLeaf2(const EPJ&) {}
  /// Pass 2: nothing (no second pass).
  GROVE_HOST_DEVICE void accumulate2(const MomentMonopoleGeometricCenter&) {}
};

/// MomentMonopoleGeometricCenter plus the dipole about the mean position (FDPS's
/// MomentDipoleGeometricCenter). Two passes.
struct MomentDipoleGeometricCenter : MomentMonopoleGeometricCenter {
  /// Two passes: pass 2 needs the centre found in pass 1.
  static constexpr bool kHasSecondPass = true;
  Vec3d dipole;  ///< sum q (x - pos)

  /// Empty moment (all zero).
  GROVE_HOST_DEVICE void init() { *this = {}; }
  /// Pass 1: adds a child cell's (or a received superparticle's) moment.
  GROVE_HOST_DEVICE void accumulate(const MomentDipoleGeometricCenter& c) {
    MomentMonopoleGeometricCenter::accumulate(c);
  }
  /// Pass 2: adds the particle to dipole, about pos.
  template <ChargedParticle EPJ>
  GROVE_HD_TEMPLATE void accumulateAtLeaf2(const EPJ& p) {
    dipole += static_cast<double>(p.getCharge()) * (positionOf(p) - pos);
  }
  /// Pass 2: adds a child's dipole, moved to this centre.
  GROVE_HOST_DEVICE void accumulate2(const MomentDipoleGeometricCenter& c) {
    dipole += c.dipole + c.charge * (c.pos - pos);
  }
};

/// MomentMonopoleGeometricCenter plus the dipole and quadrupole about the mean position (FDPS's
/// MomentQuadrupoleGeometricCenter). Two passes.
struct MomentQuadrupoleGeometricCenter : MomentMonopoleGeometricCenter {
  /// Two passes: pass 2 needs the centre found in pass 1.
  static constexpr bool kHasSecondPass = true;
  Vec3d dipole;   ///< sum q (x - pos)
  SymMat3d quad;  ///< sum q (x - pos)(x - pos)^T

  /// Empty moment (all zero).
  GROVE_HOST_DEVICE void init() { *this = {}; }
  /// Pass 1: adds a child cell's (or a received superparticle's) moment.
  GROVE_HOST_DEVICE void accumulate(const MomentQuadrupoleGeometricCenter& c) {
    MomentMonopoleGeometricCenter::accumulate(c);
  }
  /// Pass 2: adds the particle to dipole and quad, about pos.
  template <ChargedParticle EPJ>
  GROVE_HD_TEMPLATE void accumulateAtLeaf2(const EPJ& p) {
    const double q = static_cast<double>(p.getCharge());
    const Vec3d d = positionOf(p) - pos;
    dipole += q * d;
    quad += symmetricOuter(d, d, q);
  }
  /// Pass 2: adds a child's dipole and quadrupole, moved to this centre. Shifting by
  /// s = c.pos - pos: sum q (d + s)(d + s)^T = Q + 2 sym(s p^T) + q s s^T.
  GROVE_HOST_DEVICE void accumulate2(const MomentQuadrupoleGeometricCenter& c) {
    const Vec3d s = c.pos - pos;
    dipole += c.dipole + c.charge * s;
    quad += c.quad + symmetricOuter(s, c.dipole, 2.0) + symmetricOuter(s, s, c.charge);
  }
};

// ---- superparticles -----------------------------------------------------------------------------

/// The superparticles of mass-and-centre moments: one template for every moment type that holds
/// mass and pos (and quad), so that the plain, cutoff and search flavours stay one definition.
/// This one carries mass and pos.
template <class Moment>
struct SPJMonopoleOf {
  double mass = 0.0;  ///< total mass (sum of the charges)
  Vec3d pos;  ///< the expansion centre

  /// Takes the moment's fields.
  GROVE_HOST_DEVICE void copyFromMoment(const Moment& m) { mass = m.mass, pos = m.pos; }
  /// The moment this superparticle carries (pass 1 and 2 complete).
  GROVE_HOST_DEVICE Moment convertToMoment() const {
    Moment m;
    m.mass = mass, m.pos = pos;
    return m;
  }
  /// The position: the expansion centre.
  GROVE_HOST_DEVICE Vec3d getPos() const { return pos; }
  /// Sets the position.
  GROVE_HOST_DEVICE void setPos(const Vec3d& p) { pos = p; }
  /// The mass (total charge).
  GROVE_HOST_DEVICE double getCharge() const { return mass; }
  /// All zero.
  GROVE_HOST_DEVICE void clear() { *this = {}; }
};

/// The superparticle of a quadrupole moment holding mass, pos and quad (see SPJMonopoleOf).
template <class Moment>
struct SPJQuadrupoleOf {
  double mass = 0.0;  ///< total mass (sum of the charges)
  Vec3d pos;  ///< the expansion centre
  SymMat3d quad;  ///< sum q (x - pos)(x - pos)^T

  /// Takes the moment's fields.
  GROVE_HOST_DEVICE void copyFromMoment(const Moment& m) { mass = m.mass, pos = m.pos, quad = m.quad; }
  /// The moment this superparticle carries (pass 1 and 2 complete).
  GROVE_HOST_DEVICE Moment convertToMoment() const {
    Moment m;
    m.mass = mass, m.pos = pos, m.quad = quad;
    return m;
  }
  /// The position: the expansion centre.
  GROVE_HOST_DEVICE Vec3d getPos() const { return pos; }
  /// Sets the position.
  GROVE_HOST_DEVICE void setPos(const Vec3d& p) { pos = p; }
  /// The mass (total charge).
  GROVE_HOST_DEVICE double getCharge() const { return mass; }
  /// All zero.
  GROVE_HOST_DEVICE void clear() { *this = {}; }
};

/// FDPS's SPJMonopole: the superparticle of MomentMonopole.
using SPJMonopole = SPJMonopoleOf<MomentMonopole>;
/// FDPS's SPJQuadrupole: the superparticle of MomentQuadrupole.
using SPJQuadrupole = SPJQuadrupoleOf<MomentQuadrupole>;

/// The superparticle of MomentMonopoleGeometricCenter (FDPS's SPJMonopoleGeometricCenter).
struct SPJMonopoleGeometricCenter {
  double charge = 0.0;  ///< total charge
  Vec3d pos;  ///< the expansion centre
  std::int64_t n_ptcl = 0;  ///< number of particles

  /// Takes the moment's fields.
  GROVE_HOST_DEVICE void copyFromMoment(const MomentMonopoleGeometricCenter& m) {
    charge = m.charge, pos = m.pos, n_ptcl = m.n_ptcl;
  }
  /// The moment this superparticle carries (pass 1 and 2 complete).
  GROVE_HOST_DEVICE MomentMonopoleGeometricCenter convertToMoment() const { return {charge, pos, n_ptcl}; }
  /// The position: the expansion centre.
  GROVE_HOST_DEVICE Vec3d getPos() const { return pos; }
  /// Sets the position.
  GROVE_HOST_DEVICE void setPos(const Vec3d& p) { pos = p; }
  /// The total charge.
  GROVE_HOST_DEVICE double getCharge() const { return charge; }
  /// All zero.
  GROVE_HOST_DEVICE void clear() { *this = {}; }
};

/// The superparticle of MomentDipoleGeometricCenter (FDPS's SPJDipoleGeometricCenter).
struct SPJDipoleGeometricCenter {
  double charge = 0.0;  ///< total charge
  Vec3d pos;  ///< the expansion centre
  std::int64_t n_ptcl = 0;  ///< number of particles
  Vec3d dipole;  ///< sum q (x - pos)

  /// Takes the moment's fields.
  GROVE_HOST_DEVICE void copyFromMoment(const MomentDipoleGeometricCenter& m) {
    charge = m.charge, pos = m.pos, n_ptcl = m.n_ptcl, dipole = m.dipole;
  }
  /// The moment this superparticle carries (pass 1 and 2 complete).
  GROVE_HOST_DEVICE MomentDipoleGeometricCenter convertToMoment() const {
    MomentDipoleGeometricCenter m;
    m.charge = charge, m.pos = pos, m.n_ptcl = n_ptcl, m.dipole = dipole;
    return m;
  }
  /// The position: the expansion centre.
  GROVE_HOST_DEVICE Vec3d getPos() const { return pos; }
  /// Sets the position.
  GROVE_HOST_DEVICE void setPos(const Vec3d& p) { pos = p; }
  /// The total charge.
  GROVE_HOST_DEVICE double getCharge() const { return charge; }
  /// All zero.
  GROVE_HOST_DEVICE void clear() { *this = {}; }
};

/// The superparticle of MomentQuadrupoleGeometricCenter (FDPS's SPJQuadrupoleGeometricCenter).
struct SPJQuadrupoleGeometricCenter {
  double charge = 0.0;  ///< total charge
  Vec3d pos;  ///< the expansion centre
  std::int64_t n_ptcl = 0;  ///< number of particles
  Vec3d dipole;  ///< sum q (x - pos)
  SymMat3d quad;  ///< sum q (x - pos)(x - pos)^T

  /// Takes the moment's fields.
  GROVE_HOST_DEVICE void copyFromMoment(const MomentQuadrupoleGeometricCenter& m) {
    charge = m.charge, pos = m.pos, n_ptcl = m.n_ptcl, dipole = m.dipole, quad = m.quad;
  }
  /// The moment this superparticle carries (pass 1 and 2 complete).
  GROVE_HOST_DEVICE MomentQuadrupoleGeometricCenter convertToMoment() const {
    MomentQuadrupoleGeometricCenter m;
    m.charge = charge, m.pos = pos, m.n_ptcl = n_ptcl, m.dipole = dipole, m.quad = quad;
    return m;
  }
  /// The position: the expansion centre.
  GROVE_HOST_DEVICE Vec3d getPos() const { return pos; }
  /// Sets the position.
  GROVE_HOST_DEVICE void setPos(const Vec3d& p) { pos = p; }
  /// The total charge.
  GROVE_HOST_DEVICE double getCharge() const { return charge; }
  /// All zero.
  GROVE_HOST_DEVICE void clear() { *this = {}; }
};

// ---- cutoff trees (TreeForForceLong<...>::MonopoleWithCutoff) ------------------------------------
/// FDPS's MomentMonopoleCutoff / SPJMonopoleCutoff: the monopole (mass and centre of mass) of a
/// cell. Distinct types, so that a cutoff tree's superparticles cannot be confused with an
/// open-boundary tree's; the cutoff itself is applied by the walk and by the user's kernel.
struct MomentMonopoleCutoff : MomentMonopole {
  /// Empty moment (all zero).
  GROVE_HOST_DEVICE void init() { *this = {}; }
  /// Pass 1: adds a child cell's (or a received superparticle's) moment.
  GROVE_HOST_DEVICE void accumulate(const MomentMonopoleCutoff& c) { MomentMonopole::accumulate(c); }
  /// Pass 2: nothing (no second pass).
  GROVE_HOST_DEVICE void accumulate2(const MomentMonopoleCutoff&) {}
};

/// FDPS's SPJMonopoleCutoff: the superparticle of MomentMonopoleCutoff.
using SPJMonopoleCutoff = SPJMonopoleOf<MomentMonopoleCutoff>;

// ---- contracts ------------------------------------------------------------------------------------

/// The moment contract: what FDPS 7.1 calls, in the argument forms it calls them with: FDPS hands
/// accumulateAtLeaf the tree's particle as a non-const lvalue, so a moment may take `EPJ&` as well
/// as `const EPJ&` (grove then hands it a copy: momentOfCell). Moments stay in the rank that makes
/// them (superparticles carry them across ranks), so a moment need not be trivially copyable: FDPS
/// accepts members with user-written copy constructors. It must copy and must own nothing a copy
/// would share (it must be trivially destructible).
template <class M, class EPJ>
concept MomentType = std::copyable<M> && std::is_trivially_destructible_v<M> &&
                     requires(M m, const M& c, EPJ& p) {
  m.init();
  m.accumulateAtLeaf(p);
  m.accumulate(c);
  m.set();
  m.accumulateAtLeaf2(p);
  m.accumulate2(c);
  { c.getPos() } -> VectorLike;
};

/// The superparticle contract for moment M: trivially copyable (it travels in LETs), with
/// copyFromMoment(m), convertToMoment() and getPos().
template <class S, class M>
concept SuperParticleType = std::is_trivially_copyable_v<S> && requires(S s, const S& cs, const M& m) {
  /// Takes the moment's fields.
  s.copyFromMoment(m);
  /// The moment this superparticle carries (pass 1 and 2 complete).
  { cs.convertToMoment() } -> std::convertible_to<M>;
  { cs.getPos() } -> VectorLike;
};

}  // namespace grove
