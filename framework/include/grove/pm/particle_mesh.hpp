#pragma once
/// @file
/// The particle-mesh (PM) stage: FDPS 7.1's PS::PM::ParticleMesh. It gives the long-range part of
/// periodic 1/r^2 gravity in a cubic box, split from the short-range part by Hockney & Eastwood's
/// S2 shape with cutoff radius r_cut = CUTOFF_RADIUS mesh cells (3 cells, as FDPS):
///
///     total force = PM force (this class)  +  PP force, summed over pairs closer than r_cut:
///                   -m_j cutoffForceFactor(r, r_cut) (x_i - x_j) / r^3   (nearest periodic image)
///     total potential = PM potential  +  PP: -m_j cutoffPotentialFactor(r, r_cut) / r,
///                   plus longRangeSelfPotential(r_cut) m_i, removing the particle's own long-range
///                   potential that the mesh includes
///
/// Signs are gravity's (G = 1): getForce(x) = -sum_j m_j f_long(r) (x - x_j) / r^3, attractive, and
/// getPotential(x) = -sum_j m_j p_long(r) / r, each with a uniform neutralising background (the
/// mean density does not pull), as FDPS. Charges of either sign work (FDPS's P3M sample subtracts
/// both to get Coulomb's sign).
///
///     PS::PM::ParticleMesh pm;                            // SIZE_OF_MESH^3 mesh
///     pm.calcForceAllAndWriteBack(psys, dinfo);           // FP::copyFromForceParticleMesh(F32vec)
///
/// Method (doc/pm.md): triangular-shaped-cloud (TSC) assignment and interpolation, as FDPS; FFT
/// Poisson solve with Hockney & Eastwood's optimal influence function for the S2 reference force
/// and spectral (ik) differentiation; the FFT is distributed over ranks by FFTW-MPI's slabs. The
/// mesh work is compiled (grove_pm), so this header pulls in neither fftw3.h nor mpi.h.
#include <cmath>
#include <concepts>
#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <type_traits>
#include <vector>

#include "grove/comm/comm.hpp"
#include "grove/core/error.hpp"
#include "grove/core/finite.hpp"
#include "grove/core/vec3.hpp"
#include "grove/core/particle_traits.hpp"

/// @def SIZE_OF_MESH
/// FDPS's compile-time mesh size (per axis). As in FDPS it comes from param_fdps.h in the PM folder
/// on the include path (grove's is grove/pm/fdps_root, for FDPS Makefiles' PM_ROOT), read here
/// whatever order the program includes things in, so the mesh and the program agree on it; else
/// -DSIZE_OF_MESH=..., else 128. A ParticleMesh may also be given its size at construction.
#if __has_include(<param_fdps.h>)
#include <param_fdps.h>
#endif
#ifndef SIZE_OF_MESH
#define SIZE_OF_MESH 128
#endif

/// The particle-mesh stage (FDPS's PS::PM): grove::pm::ParticleMesh and the S2 force split.
namespace grove::pm {

/// The cutoff radius in mesh cells (FDPS: PS::ParticleMesh::CUTOFF_RADIUS, "three times the mesh
/// size"): r_cut = CUTOFF_RADIUS * box side / mesh size. PP pairs farther than r_cut need nothing.
inline constexpr double CUTOFF_RADIUS = 3.0;

// ---- the S2 force split (Hockney & Eastwood 1988, sec. 8-3), for the PP kernel ----------------
// With xi = 2 r / r_cut: the long-range (mesh) part of a point mass's force is the force between
// two S2 spheres of radius r_cut / 2, exactly Newtonian for r >= r_cut. These give what remains.

/// The fraction of the Newtonian force m / r^2 that the short-range (PP) part must supply at
/// separation r: 1 at r = 0, falling to 0 at r = r_cut and beyond. Needs r >= 0, r_cut > 0.
inline double cutoffForceFactor(double r, double r_cut) {
  const double xi = 2.0 * r / r_cut;
  if (xi >= 2.0) return 0.0;
  const double x2 = xi * xi;
  if (xi <= 1.0) return 1.0 - x2 * xi * (224.0 + x2 * (-224.0 + xi * (70.0 + xi * (48.0 - 21.0 * xi)))) / 140.0;
  return 1.0 - (12.0 + x2 * (-224.0 + xi * (896.0 + xi * (-840.0 + xi * (224.0 + xi * (70.0 + xi * (-48.0 + 7.0 * xi)))))))
                   / 140.0;
}

/// The fraction of the Newtonian potential m / r that the PP part must supply at separation r
/// (1 at r = 0, 0 from r_cut on). cutoffForceFactor is -r^2 d/dr (cutoffPotentialFactor / r).
inline double cutoffPotentialFactor(double r, double r_cut) {
  const double xi = 2.0 * r / r_cut;
  if (xi >= 2.0) return 0.0;
  const double x2 = xi * xi;
  if (xi <= 1.0) return 1.0 - xi * (208.0 + x2 * (-112.0 + x2 * (56.0 + xi * (-14.0 + xi * (-8.0 + 3.0 * xi))))) / 140.0;
  return 1.0 - (12.0 + xi * (128.0 + xi * (224.0 + xi * (-448.0 + xi * (280.0 + xi * (-56.0 + xi * (-14.0 + xi * (8.0 - xi))))))))
                   / 140.0;
}

/// The long-range potential of a unit mass at its own position, lim_{r->0} (1 - cutoffPotentialFactor) / r
/// = 208 / (70 r_cut): the mesh potential at a particle includes -m_i times this, which a PP
/// kernel adds back (+m_i * this) to get the potential of the others only.
inline double longRangeSelfPotential(double r_cut) { return 208.0 / (70.0 * r_cut); }

// ---- what the particle types must provide ------------------------------------------------------
/// A particle the mesh reads: getPos() and getChargeParticleMesh() (a number).
template <class FP>
concept ParticleMeshSource = HasGetPos<FP> && requires(const FP& p) {
  { p.getChargeParticleMesh() } -> std::convertible_to<double>;
};
/// A particle the mesh writes to: copyFromForceParticleMesh(const Vec3f&) (FDPS's F32vec).
template <class FP>
concept ParticleMeshTarget = requires(FP& p, const Vec3f& force) { p.copyFromForceParticleMesh(force); };

// ---- the compiled mesh solver (grove_pm) -------------------------------------------------------
/// Holds the mesh for one periodic cube; solve is collective over the communicator it was made
/// with; force/potential read this rank's full copy of the mesh fields (thread-safe). Not copyable.
class MeshSolver {
 public:
  /// A mesh of mesh_size points per axis. native_comm: pointer to an MPI_Comm
  /// (grove::detail::nativeComm), copied; null: the world (or nothing, without MPI).
  MeshSolver(int mesh_size, const void* native_comm);
  ~MeshSolver();  ///< frees the mesh
  MeshSolver(const MeshSolver&) = delete;             ///< not copyable
  MeshSolver& operator=(const MeshSolver&) = delete;  ///< not copyable

  /// Collective. The long-range (S2 split at r_cut) mesh force and potential of these charges
  /// (this rank's; every rank passes its own) in the periodic cube [low, low + side)^3. Positions
  /// outside are wrapped. pos and charge have equal lengths.
  void solve(const Vec3d& low, double side, double r_cut, std::span<const Vec3d> pos,
             std::span<const double> charge);
  /// The mesh force per unit charge at pos (TSC-interpolated), from the last solve(). Needs a
  /// solve() first.
  Vec3d force(const Vec3d& pos) const;
  /// The mesh potential per unit charge at pos (TSC-interpolated), from the last solve(). Needs a
  /// solve() first.
  double potential(const Vec3d& pos) const;
  /// Points per axis.
  int meshSize() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// ---- FDPS's class ------------------------------------------------------------------------------
/// FDPS 7.1's PS::PM::ParticleMesh: the long-range part of periodic gravity on a mesh (see the
/// file). Not copyable.
class ParticleMesh {
 public:
  ParticleMesh() : ParticleMesh(SIZE_OF_MESH) {}  ///< SIZE_OF_MESH points per axis, CUTOFF_RADIUS cells
  /// mesh_size points per axis (any size >= 8; FFTs are fastest for products of small primes).
  /// cutoff_cells: the split radius in mesh cells (FDPS fixes it at CUTOFF_RADIUS = 3; larger is
  /// more accurate and leaves more pairs to the PP part). Throws grove::Error for mesh_size < 8 or
  /// cutoff_cells outside [1, mesh_size / 2).
  explicit ParticleMesh(int mesh_size, double cutoff_cells = CUTOFF_RADIUS)
      : mesh_size_(mesh_size), cutoff_cells_(cutoff_cells) {
    require(mesh_size >= 8, "ParticleMesh", "the mesh needs at least 8 points per axis, got {}", mesh_size);
    require(cutoff_cells >= 1.0 && cutoff_cells < 0.5 * mesh_size, "ParticleMesh",
            "the cutoff radius must be between 1 cell and half the box, got {} cells of a {}-cell box",
            cutoff_cells, mesh_size);
  }

  /// The periodic cube is DomainInfo's root domain when it is fixed (it must be cubic, else
  /// grove::Error), else FDPS's [0, 1)^3. The mesh is solved over the DomainInfo's communicator.
  template <class DInfo>
  void setDomainInfoParticleMesh(const DInfo& dinfo);

  /// Copies positions and charges (getPos, getChargeParticleMesh) of psys's local particles;
  /// clear = false adds them to those already held. Throws grove::Error (this rank alone) for a
  /// position or charge that is not finite. The mesh must be solved again before it is read.
  template <class PSys>
  void setParticleParticleMesh(const PSys& psys, bool clear = true);

  /// Collective (over the DomainInfo's communicator; the world when none was set): the mesh force
  /// and potential of every rank's particles.
  void calcMeshForceOnly();

  /// The PM force (acceleration per unit charge) at any position, from this rank's copy of the
  /// mesh. Thread-safe; throws grove::Error unless calcMeshForceOnly ran after the particles were
  /// set.
  Vec3f getForce(const Vec3f& pos) const { return Vec3f(solverAfterSolve().force(Vec3d(pos))); }
  /// The PM potential per unit charge at any position; as getForce().
  float getPotential(const Vec3f& pos) const { return static_cast<float>(solverAfterSolve().potential(Vec3d(pos))); }
  /// getForce() with double-precision position and result (grove's own spelling).
  Vec3d forceAt(const Vec3d& pos) const { return solverAfterSolve().force(pos); }
  /// getPotential() with double-precision position and result.
  double potentialAt(const Vec3d& pos) const { return solverAfterSolve().potential(pos); }

  /// Collective: setDomainInfoParticleMesh, setParticleParticleMesh, calcMeshForceOnly, then
  /// psys[i].copyFromForceParticleMesh(getForce(psys[i].getPos())) for every local particle.
  template <class PSys, class DInfo>
  void calcForceAllAndWriteBack(PSys& psys, const DInfo& dinfo);

  /// Points per axis.
  int getMeshSize() const { return mesh_size_; }
  /// The box side (the periodic cube's edge).
  double getBoxSize() const { return side_; }
  /// The cutoff radius r_cut that the PP part must use with cutoffForceFactor: cutoff cells times
  /// the box side over the mesh size.
  double getCutoffRadius() const { return cutoff_cells_ * side_ / mesh_size_; }
  /// The periodic cube's lower corner.
  const Vec3d& getBoxLow() const { return low_; }

 private:
  const MeshSolver& solverAfterSolve() const {
    require(solved_, "ParticleMesh", "getForce/getPotential before calcMeshForceOnly");
    return *solver_;
  }

  int mesh_size_;
  double cutoff_cells_;
  Vec3d low_{0.0, 0.0, 0.0};
  double side_ = 1.0;
  std::optional<Comm> comm_;  // unset: the world, taken when first solved (not at construction,
                              // so a ParticleMesh may be declared before the runtime starts)
  const detail::CommHandle* solver_comm_ = nullptr;
  std::vector<Vec3d> pos_;
  std::vector<double> charge_;
  std::unique_ptr<MeshSolver> solver_;
  bool solved_ = false;
};

template <class DInfo>
void ParticleMesh::setDomainInfoParticleMesh(const DInfo& dinfo) {
  comm_ = dinfo.comm();
  if (!dinfo.isRootDomainFixed()) {
    low_ = Vec3d(0.0, 0.0, 0.0);
    side_ = 1.0;
    return;
  }
  const auto& root = dinfo.getPosRootDomain();
  const Vec3d size = Vec3d(root.high) - Vec3d(root.low);
  const double tolerance = 1e-12 * size.x;
  require(std::abs(size.y - size.x) <= tolerance && std::abs(size.z - size.x) <= tolerance && size.x > 0.0,
          "ParticleMesh", "the root domain must be a cube, got sides {} x {} x {}", size.x, size.y, size.z);
  low_ = Vec3d(root.low);
  side_ = size.x;
}

template <class PSys>
void ParticleMesh::setParticleParticleMesh(const PSys& psys, bool clear) {
  using FP = std::remove_cvref_t<decltype(psys[0])>;
  static_assert(ParticleMeshSource<FP>,
                "grove::pm::ParticleMesh: the particle type needs `getPos() const` and "
                "`getChargeParticleMesh() const` returning a number");
  if (clear) {
    pos_.clear();
    charge_.clear();
  }
  const std::size_t n = psys.size();
  pos_.reserve(pos_.size() + n);
  charge_.reserve(charge_.size() + n);
  for (std::size_t i = 0; i < n; ++i) {
    const Vec3d pos = positionOf(psys[i]);
    const double charge = static_cast<double>(psys[i].getChargeParticleMesh());
    require(isFinite(pos) && isFiniteValue(charge), "ParticleMesh",
            "particle {} has position ({}, {}, {}) and charge {}; both must be finite", i, pos.x, pos.y, pos.z,
            charge);
    pos_.push_back(pos);
    charge_.push_back(charge);
  }
  solved_ = false;
}

inline void ParticleMesh::calcMeshForceOnly() {
  if (!comm_) comm_ = Comm::world();
  if (!solver_ || solver_comm_ != &comm_->handle()) {
    solver_comm_ = &comm_->handle();
    solver_ = std::make_unique<MeshSolver>(mesh_size_, detail::nativeComm(comm_->handle()));
  }
  solver_->solve(low_, side_, getCutoffRadius(), pos_, charge_);
  solved_ = true;
}

template <class PSys, class DInfo>
void ParticleMesh::calcForceAllAndWriteBack(PSys& psys, const DInfo& dinfo) {
  using FP = std::remove_cvref_t<decltype(psys[0])>;
  static_assert(ParticleMeshTarget<FP>,
                "grove::pm::ParticleMesh: the particle type needs `copyFromForceParticleMesh(const F32vec&)` "
                "to receive the PM force");
  setDomainInfoParticleMesh(dinfo);
  setParticleParticleMesh(psys);
  calcMeshForceOnly();
  const auto n = static_cast<std::ptrdiff_t>(psys.size());
#pragma omp parallel for schedule(static)
  for (std::ptrdiff_t i = 0; i < n; ++i) psys[i].copyFromForceParticleMesh(Vec3f(solver_->force(pos_[i])));
}

}  // namespace grove::pm
