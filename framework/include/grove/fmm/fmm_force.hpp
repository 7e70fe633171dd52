#pragma once
/// @file
/// grove::FmmForce<Force, EPI, EPJ>: the fast multipole method for 1/r forces (gravity, Coulomb),
/// the sibling of TreeForForceLong with the same calling form. The user supplies the near-field
/// kernel, in FDPS's form, exactly as for a tree; the far field is grove's: Cartesian multipole and
/// local expansions of order p (1 ... 8) about each cell's centre of charge, Dehnen's dual tree
/// traversal and acceptance criterion, across ranks through a local essential tree that carries
/// multipoles.
///
///     grove::FmmForce<Force, EPI, EPJ> fmm(n_hint, /*theta*/ 0.5, /*n_leaf*/ 32, /*order*/ 6);
///     fmm.calcForceAllAndWriteBack(kernel_ep_ep, psys, dinfo);               // gravity, G = 1
///     fmm.calcForceAllAndWriteBack(kernel_ep_ep, psys, dinfo, GravityFarField{G});
///     fmm.calcForceAllAndWriteBack(kernel_ep_ep, psys, dinfo,                // anything else
///         [](Force& f, const EPI& i, double phi, const grove::Vec3d& grad_phi) { ... });
///     fmm.calcForceAllAndWriteBackMultiWalkIndex(dispatch, retrieve, tag_max, psys, dinfo, n_walk);
///                                                    // the near field on an accelerator (FDPS's hooks)
///     fmm.calcForceAllAndWriteBackOnDevice(*near, psys, dinfo); // far and near field both on a GPU, the
///                                                    // near field from the traversal's lists on the device
///                                                    // (grove/fmm/device_near_field.cuh)
///     fmm.calcForceAllAndWriteBack(kernel_ep_ep, psys, dinfo, true, PS::MAKE_LIST);  // FDPS's trailing
///                                                    // arguments (clear, list_mode) are taken too
///
/// - Near field: kernel(const EPI* epi, int n_i, const EPJ* epj, int n_j, Force* force), called
///   once per leaf from OpenMP threads with the particles of the leaf itself and of the leaves near
///   it (the leaf's own particles among the EPJ, as FDPS's ep-ep kernels get them: the kernel must
///   give no force from a particle on itself, by softening or by skipping r = 0). It must add to
///   force[0 .. n_i). Plummer (or any) softening belongs there. A pairwise interaction
///   interaction(const EPI&, const EPJ&, Force&), the GPU engine's form (a GROVE_HOST_DEVICE
///   functor serves both), is accepted too and called for every pair of the same lists.
/// - Far field: for each particle, phi = sum_j q_j / |x - x_j| and grad_phi = its gradient over the
///   far particles j (q = EPJ::getCharge()), handed to the far-field functor, which adds them to the
///   particle's Force. GravityFarField (the default) needs Force members `acc` and `pot` and adds
///   acc += G grad_phi, pot -= G phi. A Coulomb user passes a functor that applies q_i and the sign.
/// - Accuracy: theta and the order p. A pair of cells interacts by expansion when r_A + r_B <
///   theta |z_A - z_B|; the error falls as theta^(p+1). doc/fmm.md has the measured errors and
///   costs against the Barnes-Hut tree.
/// - Momentum: within a rank both directions of every pair come from the same (mutual) visit with
///   exactly opposite Taylor coefficients, and the kernel sees both directions of a leaf pair, so
///   the forces are equal and opposite to rounding (for a kernel that is antisymmetric itself).
/// - Periodic boxes (PERIODIC_XYZ on a cubic root domain, side L): the forces of every image,
///   as the Ewald sum gives them (tin-foil boundary, uniform neutralising background, potential of
///   zero mean; grove/fmm/periodic_lattice.hpp). The 125 images n L with |n_i| <= 2 are the
///   tree's own, moved (through the local essential tree, EPJ::setPos), so the traversal treats
///   them as it treats other ranks' cells; the lattice beyond them is a local expansion per
///   4^3-th of the box, evaluated at each particle. Order 4 or more. Particles must lie in the
///   closed root domain (ParticleSystem::adjustPositionIntoRootDomain). Partly periodic and
///   non-cubic boxes are refused. Momentum is then conserved only to the traversal's accuracy: an image pair is
///   visited in one direction.
#include <algorithm>
#include <concepts>
#include <memory>
#include <optional>
#include <cstdint>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "grove/comm/comm.hpp"
#include "grove/core/error.hpp"
#include "grove/core/finite.hpp"
#include "grove/core/list_mode.hpp"
#include "grove/core/time_profile.hpp"
#include "grove/domain/boundary.hpp"
#include "grove/domain/domain_info.hpp"
#include "grove/fmm/cartesian_expansion.hpp"
#include "grove/fmm/device_near_field.hpp"
#include "grove/fmm/dual_traversal.hpp"
#include "grove/fmm/far_field.hpp"
#include "grove/fmm/far_field_engine.hpp"
#include "grove/fmm/fmm_let.hpp"
#include "grove/fmm/fmm_tree.hpp"
#include "grove/fmm/periodic_lattice.hpp"
#include "grove/tree/contracts.hpp"
#include "grove/tree/moments.hpp"
#include "grove/tree/profile.hpp"
#include "grove/walk/interaction_lists.hpp"
#include "grove/walk/multiwalk_driver.hpp"

namespace grove {

/// The far field of gravity, G grad(sum m / r) into acc and -G sum m / r into pot.
struct GravityFarField {
  double G = 1.0;  ///< the gravitational constant
  /// Adds G grad_phi to f.acc and -G phi to f.pot. Needs Force members `acc` (a 3-vector with
  /// x, y, z) and `pot` (a compile-time error otherwise).
  template <class Force, class EPI>
  void operator()(Force& f, const EPI&, double phi, const Vec3d& grad_phi) const {
    static_assert(requires { f.acc.x; f.pot; },
                  "grove: GravityFarField needs Force members `acc` (a 3-vector) and `pot`; pass a far-field functor "
                  "(Force&, const EPI&, double phi, const Vec3d& grad_phi) for other Force types");
    using A = std::remove_cvref_t<decltype(f.acc.x)>;
    f.acc.x += static_cast<A>(G * grad_phi.x);
    f.acc.y += static_cast<A>(G * grad_phi.y);
    f.acc.z += static_cast<A>(G * grad_phi.z);
    f.pot -= static_cast<std::remove_cvref_t<decltype(f.pot)>>(G * phi);
  }
};

/// A far-field functor: far(force, epi, phi, grad_phi) adds the far field to a particle's Force.
template <class F, class Force, class EPI>
concept FarFieldOf = std::invocable<F&, Force&, const EPI&, double, const Vec3d&>;

namespace fmm {

/// What one force calculation did on this rank, and how long each part took (seconds, this rank).
struct FmmStatistics {
  /// @var particles
  /// This rank's particles.
  /// @var cells
  /// Cells of this rank's tree.
  /// @var leaves
  /// Leaf cells of this rank's tree.
  std::int64_t particles = 0, cells = 0, leaves = 0;
  std::int64_t m2l = 0;               ///< directed multipole-to-local expansions
  std::int64_t m2p = 0;               ///< received contents-less cells evaluated at a leaf's particles
  std::int64_t p2p_leaf_pairs = 0;    ///< directed (target leaf, source leaf) pairs, a leaf with itself too
  std::int64_t p2p_interactions = 0;  ///< particle pairs given to the kernel (i, j ordered; i = j included)
  LetCounts let;  ///< the local essential tree's cells and particles sent and received
  // Where the traversal and the far field ran ("host" or "device"), and whether the far field ran
  // beside the near field. m2l and downward are the far field's own time; overlapped, the step
  // waited only far_field_wait for it after the near field.
  const char* far_field_engine = "host";  ///< where the traversal and the far field ran: "host" or "device"
  /// Whether the far field ran beside the near field (then the step waited only
  /// far_field_wait_seconds for it after the near field).
  bool overlapped = false;
  /// Periodic boxes: whether the far-field engine added the lattice's field at the particles
  /// (FarFieldEngine::offerLattice; its time is then in downward_seconds), or the host did.
  bool lattice_on_engine = false;
  /// Whether the far-field engine began on this rank's own cells before the LET
  /// (FarFieldEngine::startLocal: a device engine's traversal and M2L of them ran beside the LET).
  bool local_before_let = false;
  /// Whether the near field of this rank's own leaf pairs started before the LET
  /// (NearFieldOnDevice::startLocal, with several ranks: a device near field's kernel ran beside
  /// the LET); its set-up time is then in p2p_seconds.
  bool near_field_before_let = false;
  /// @var copy_seconds
  /// Copying the particles into EPI and EPJ, with the input checks.
  /// @var tree_seconds
  /// Building the tree with its multipoles.
  /// @var let_seconds
  /// The local essential tree exchange (its parts: let.wait_seconds, let.exchange_seconds).
  /// @var traversal_seconds
  /// The dual traversal, as the caller waited for it.
  /// @var m2l_seconds
  /// The far field's M2L work (its own time, overlapped or not).
  /// @var downward_seconds
  /// The far field's L2L, L2P and M2P work (its own time, overlapped or not).
  /// @var p2p_seconds
  /// The near field (the user's kernel, the multiwalk hooks or the device near field, its
  /// transfers included).
  /// @var p2p_kernel_seconds
  /// The device near field's kernels alone (calcForceAll...OnDevice; 0 otherwise): device time,
  /// which overlaps p2p_seconds and, where the near field started before the LET
  /// (near_field_before_let), the LET's and the traversal's.
  /// @var far_field_wait_seconds
  /// Waiting for the far field after the near field.
  /// @var lattice_seconds
  /// Periodic boxes: the box's multipole (an allreduce), the lattice's local expansion and,
  /// unless the engine took it (lattice_on_engine), its evaluation at every particle (0 for open
  /// boxes).
  /// @var write_back_seconds
  /// Applying the far-field functor, restoring psys's order and, for the WriteBack calls,
  /// copying the forces into psys.
  double copy_seconds = 0, tree_seconds = 0, let_seconds = 0, traversal_seconds = 0, m2l_seconds = 0,
         downward_seconds = 0, p2p_seconds = 0, p2p_kernel_seconds = 0, far_field_wait_seconds = 0, lattice_seconds = 0,
         write_back_seconds = 0;
  /// The step's wall time: the parts summed, with far_field_wait_seconds in place of the far
  /// field's own time when overlapped.
  double total() const {
    return copy_seconds + tree_seconds + let_seconds + traversal_seconds +
           (overlapped ? far_field_wait_seconds : m2l_seconds + downward_seconds) + p2p_seconds + lattice_seconds +
           write_back_seconds;
  }
  /// The statistics as one JSON object: far_field_engine, overlapped, lattice_on_engine,
  /// local_before_let, near_field_before_let, "seconds" (each part and total; let_wait and
  /// let_exchange are parts of let) and "counts".
  std::string json() const;
};

}  // namespace fmm

/// The fast multipole method for 1/r forces, with TreeForForceLong's calling form (see the file's
/// description). Open boundaries, and periodic ones on a cube. The force calls are collective
/// over the particle system's communicator; input errors are found on every rank together and
/// throw grove::Error on all.
/// Not thread-safe: one calculation at a time per object (and per far-field engine).
template <class Force, class EPI, class EPJ>
class FmmForce {
  static_assert(checkLongRangeTypeContracts<Force, EPI, EPJ>());

 public:
  /// theta 0.5, leaves of at most 32 particles, order 4, the far field on the host.
  FmmForce() : expansion_(4), engine_(std::make_shared<fmm::HostFarField>()) {}
  /// Same as initialize(n_hint, theta, n_leaf_limit, order), the far field on the host.
  FmmForce(std::size_t n_hint, double theta, int n_leaf_limit, int order)
      : expansion_(order), engine_(std::make_shared<fmm::HostFarField>()) {
    initialize(n_hint, theta, n_leaf_limit, order);
  }

  /// Sets the acceptance parameter theta, the leaf size n_leaf_limit and the expansion order,
  /// and reserves room for n_hint particles. theta in (0, 1); n_leaf_limit >= 1; order 1 ... 8:
  /// otherwise throws grove::Error. Not collective.
  void initialize(std::size_t n_hint, double theta = 0.5, int n_leaf_limit = 32, int order = 4) {
    require(theta > 0.0 && theta < 1.0, "FmmForce::initialize",
            "theta {} is outside (0, 1): the expansions converge only for r_A + r_B < theta |z_A - z_B| with theta < 1",
            theta);
    require(n_leaf_limit >= 1, "FmmForce::initialize", "n_leaf_limit must be at least 1, got {}", n_leaf_limit);
    require(order >= 1 && order <= fmm::kMaxOrder, "FmmForce::initialize", "expansion order {} is outside 1 ... {}",
            order, fmm::kMaxOrder);
    theta_ = theta;
    n_leaf_ = n_leaf_limit;
    if (order != expansion_.order()) expansion_ = fmm::MultiIndexSet(order);
    epi_.reserve(n_hint);
    epj_.reserve(n_hint);
  }

  /// Where the traversal and the far field run: the host's threads (fmm::HostFarField, the default)
  /// or a GPU (fmm::DeviceFarField, grove/fmm/device_far_field_gpu.h, in grove::gpu). The near field
  /// runs beside the far field when either the far field or the near field is on a device. An
  /// engine serves one calculation at a time (FmmForce objects may share one in turns). Throws
  /// grove::Error when engine is null.
  void setFarFieldEngine(std::shared_ptr<fmm::FarFieldEngine> engine) {
    require(engine != nullptr, "FmmForce::setFarFieldEngine", "no engine given");
    engine_ = std::move(engine);
  }

  /// The acceptance parameter theta.
  double theta() const { return theta_; }
  /// The expansion order p.
  int order() const { return expansion_.order(); }
  /// The most particles a leaf holds.
  int leafLimit() const { return n_leaf_; }

  // Each call comes in FDPS's form, (..., bool clear = true, InteractionListMode list_mode =
  // MAKE_LIST), with gravity's far field, and in grove's, (..., FarField far, bool clear = true).
  // clear = false adds to the forces of the previous call (same particles, same order). The FMM
  // builds its tree and lists at every call: list_mode is taken so that FDPS programs port
  // unchanged, and every mode computes with lists made for the particles as they are.

  /// Collective. Forces on the particles of psys (held in psys's order: getForce(i)), the far
  /// field as gravity with G = 1 (GravityFarField). clear = false adds to the forces of the
  /// previous call (same particles, same order). The list mode is accepted for FDPS's form and
  /// ignored: the tree and lists are made at every call. Throws grove::Error, on every rank,
  /// for a particle of non-finite position or charge, 2^31 particles or more on a rank, clear =
  /// false after a call with another particle count, and, for periodic boundaries, boundaries
  /// periodic along one or two axes only, a root domain that is not a cube, a particle outside
  /// the closed root domain, an EPJ type without setPos, or an order below 4.
  template <class NearKernel, class PSys>
  void calcForceAll(NearKernel&& near, const PSys& psys, const DomainInfo& dinfo, bool clear = true,
                    InteractionListMode = MAKE_LIST) {
    nearFieldOnHost(near, psys, dinfo, GravityFarField{}, clear);
  }
  /// As calcForceAll() above, with the far field handed to the functor `far`.
  template <class NearKernel, class PSys, FarFieldOf<Force, EPI> FarField>
  void calcForceAll(NearKernel&& near, const PSys& psys, const DomainInfo& dinfo, FarField far, bool clear = true) {
    nearFieldOnHost(near, psys, dinfo, far, clear);
  }
  /// calcForceAll() with gravity's far field, then each force written to psys with
  /// FP::copyFromForce. Collective.
  template <class NearKernel, class PSys>
  void calcForceAllAndWriteBack(NearKernel&& near, PSys& psys, const DomainInfo& dinfo, bool clear = true,
                                InteractionListMode = MAKE_LIST) {
    nearFieldOnHost(near, std::as_const(psys), dinfo, GravityFarField{}, clear);
    writeBack(psys);
  }
  /// calcForceAll() with the far-field functor `far`, then each force written to psys with
  /// FP::copyFromForce. Collective.
  template <class NearKernel, class PSys, FarFieldOf<Force, EPI> FarField>
  void calcForceAllAndWriteBack(NearKernel&& near, PSys& psys, const DomainInfo& dinfo, FarField far,
                                bool clear = true) {
    nearFieldOnHost(near, std::as_const(psys), dinfo, far, clear);
    writeBack(psys);
  }

  /// The near field on an accelerator, through FDPS 7.1's index-form multiwalk (pfalcON's split):
  /// every leaf is one walk; its index list holds the particles of its P2P sources in the step's
  /// whole EPJ array (this rank's, then the received), handed over by the send-only call first.
  /// The far field is the host's. dispatch has the long-range index form, whose superparticle
  /// arguments (type SPJ, e.g. the dispatch's grove::SPJMonopole) get none (n_spj = 0), or the
  /// short-range one; retrieve adds each walk's forces. Collective. The far field (gravity's,
  /// G = 1) runs beside the near field. tag_max and n_walk_limit as for the trees' multiwalk
  /// calls; otherwise as calcForceAll(), whose errors it shares.
  template <class SPJ = SPJMonopole, class Dispatch, class Retrieve, class PSys>
  void calcForceAllMultiWalkIndex(Dispatch&& dispatch, Retrieve&& retrieve, int tag_max, const PSys& psys,
                                  const DomainInfo& dinfo, int n_walk_limit, bool clear = true,
                                  InteractionListMode = MAKE_LIST) {
    nearFieldByMultiWalk<SPJ>(dispatch, retrieve, tag_max, psys, dinfo, n_walk_limit, GravityFarField{}, clear);
  }
  /// As calcForceAllMultiWalkIndex() above, with the far field handed to the functor `far`.
  template <class SPJ = SPJMonopole, class Dispatch, class Retrieve, class PSys, FarFieldOf<Force, EPI> FarField>
  void calcForceAllMultiWalkIndex(Dispatch&& dispatch, Retrieve&& retrieve, int tag_max, const PSys& psys,
                                  const DomainInfo& dinfo, int n_walk_limit, FarField far, bool clear = true) {
    nearFieldByMultiWalk<SPJ>(dispatch, retrieve, tag_max, psys, dinfo, n_walk_limit, far, clear);
  }
  /// calcForceAllMultiWalkIndex() with gravity's far field, then each force written to psys
  /// with FP::copyFromForce. Collective.
  template <class SPJ = SPJMonopole, class Dispatch, class Retrieve, class PSys>
  void calcForceAllAndWriteBackMultiWalkIndex(Dispatch&& dispatch, Retrieve&& retrieve, int tag_max, PSys& psys,
                                              const DomainInfo& dinfo, int n_walk_limit, bool clear = true,
                                              InteractionListMode = MAKE_LIST) {
    nearFieldByMultiWalk<SPJ>(dispatch, retrieve, tag_max, std::as_const(psys), dinfo, n_walk_limit,
                              GravityFarField{}, clear);
    writeBack(psys);
  }
  /// calcForceAllMultiWalkIndex() with the far-field functor `far`, then each force written to
  /// psys with FP::copyFromForce. Collective.
  template <class SPJ = SPJMonopole, class Dispatch, class Retrieve, class PSys, FarFieldOf<Force, EPI> FarField>
  void calcForceAllAndWriteBackMultiWalkIndex(Dispatch&& dispatch, Retrieve&& retrieve, int tag_max, PSys& psys,
                                              const DomainInfo& dinfo, int n_walk_limit, FarField far,
                                              bool clear = true) {
    nearFieldByMultiWalk<SPJ>(dispatch, retrieve, tag_max, std::as_const(psys), dinfo, n_walk_limit, far, clear);
    writeBack(psys);
  }

  /// The near field on the far-field engine's device (fmm::DeviceFarField, set with
  /// setFarFieldEngine), straight from the P2P lists its traversal leaves there: `near` (made by
  /// fmm::makeDeviceNearField, grove/fmm/device_near_field.cuh) runs the user's pairwise
  /// interaction for every particle pair of every target leaf and its source leaves, received
  /// and periodic images' included, beside the far field; no index list is packed on the host.
  /// The far field is gravity's (G = 1). Collective. Throws grove::Error, on every rank, when
  /// `near` reads another engine than this object's on any rank; otherwise as calcForceAll(),
  /// whose errors it shares.
  template <class PSys>
  void calcForceAllOnDevice(fmm::NearFieldOnDevice<Force, EPI, EPJ>& near, const PSys& psys, const DomainInfo& dinfo,
                            bool clear = true) {
    nearFieldOnDevice(near, psys, dinfo, GravityFarField{}, clear);
  }
  /// As calcForceAllOnDevice() above, with the far field handed to the functor `far`.
  template <class PSys, FarFieldOf<Force, EPI> FarField>
  void calcForceAllOnDevice(fmm::NearFieldOnDevice<Force, EPI, EPJ>& near, const PSys& psys, const DomainInfo& dinfo,
                            FarField far, bool clear = true) {
    nearFieldOnDevice(near, psys, dinfo, far, clear);
  }
  /// calcForceAllOnDevice() with gravity's far field, then each force written to psys with
  /// FP::copyFromForce. Collective.
  template <class PSys>
  void calcForceAllAndWriteBackOnDevice(fmm::NearFieldOnDevice<Force, EPI, EPJ>& near, PSys& psys,
                                        const DomainInfo& dinfo, bool clear = true) {
    nearFieldOnDevice(near, std::as_const(psys), dinfo, GravityFarField{}, clear);
    writeBack(psys);
  }
  /// calcForceAllOnDevice() with the far-field functor `far`, then each force written to psys
  /// with FP::copyFromForce. Collective.
  template <class PSys, FarFieldOf<Force, EPI> FarField>
  void calcForceAllAndWriteBackOnDevice(fmm::NearFieldOnDevice<Force, EPI, EPJ>& near, PSys& psys,
                                        const DomainInfo& dinfo, FarField far, bool clear = true) {
    nearFieldOnDevice(near, std::as_const(psys), dinfo, far, clear);
    writeBack(psys);
  }

  /// The force on psys[i] from the last calcForceAll; needs i below that call's particle
  /// count (unchecked).
  const Force& getForce(std::size_t i) const { return forces_[i]; }
  /// What the last calculation did on this rank (fmm::FmmStatistics).
  const fmm::FmmStatistics& statistics() const { return stats_; }

 private:
  template <class NearKernel, class PSys, class FarField>
  void nearFieldOnHost(NearKernel& near, const PSys& psys, const DomainInfo& dinfo, FarField far, bool clear) {
    constexpr bool kListKernel = std::invocable<NearKernel&, const EPI*, int, const EPJ*, int, Force*>;
    static_assert(kListKernel || std::invocable<NearKernel&, const EPI&, const EPJ&, Force&>,
                  "grove: the FMM's near-field kernel must be callable as kernel(const EPI*, int, const EPJ*, int, "
                  "Force*) or, pair by pair, as interaction(const EPI&, const EPJ&, Force&)");
    // A far field on the device runs beside the host's near field; the host's own waits for it.
    calculate(psys, dinfo, far, clear, /*overlap=*/false, /*p2p_on_device=*/false, kNoNearFieldBeforeLet,
              [&](const fmm::CsrList& p2p) {
      const int target_count = static_cast<int>(tree_.cells().size());
      std::int64_t interactions = 0;
#pragma omp parallel reduction(+ : interactions)
      {
        std::vector<EPJ> near_epj;
#pragma omp for schedule(dynamic, 8)
        for (int t = 0; t < target_count; ++t) {
          const fmm::FmmCell& leaf = tree_.cells()[static_cast<std::size_t>(t)];
          if (!leaf.leaf() || leaf.end == leaf.begin) continue;
          near_epj.clear();
          for (int s : p2p.of(t)) {
            const fmm::FmmCell& source = sources_.cells[static_cast<std::size_t>(s)];
            near_epj.insert(near_epj.end(), epj_.begin() + source.begin, epj_.begin() + source.end);
          }
          const int n_i = leaf.end - leaf.begin;
          if constexpr (kListKernel) {
            near(epi_.data() + leaf.begin, n_i, near_epj.data(), static_cast<int>(near_epj.size()),
                 sorted_forces_.data() + leaf.begin);
          } else {
            for (int k = leaf.begin; k < leaf.end; ++k)
              for (const EPJ& j : near_epj)
                near(epi_[static_cast<std::size_t>(k)], j, sorted_forces_[static_cast<std::size_t>(k)]);
          }
          interactions += static_cast<std::int64_t>(n_i) * static_cast<std::int64_t>(near_epj.size());
        }
      }
      return interactions;
    });
  }

  template <class SPJ, class Dispatch, class Retrieve, class PSys, class FarField>
  void nearFieldByMultiWalk(Dispatch& dispatch, Retrieve& retrieve, int tag_max, const PSys& psys,
                            const DomainInfo& dinfo, int n_walk_limit, FarField far, bool clear) {
    checkMultiWalkArguments(tag_max, n_walk_limit);
    constexpr bool kShortForm = std::is_invocable_v<Dispatch&, int, int, const EPI**, const int*, const std::int32_t**,
                                                    const int*, const EPJ*, int, bool>;
    using Spj = std::conditional_t<kShortForm, NoSuperParticle, SPJ>;
    // The far field (host threads or a device) runs beside the accelerator's near field.
    calculate(psys, dinfo, far, clear, /*overlap=*/true, /*p2p_on_device=*/false, kNoNearFieldBeforeLet,
              [&](const fmm::CsrList& p2p) {
      std::vector<int> leaves;
      for (int c = 0; c < static_cast<int>(tree_.cells().size()); ++c) {
        const fmm::FmmCell& cell = tree_.cells()[static_cast<std::size_t>(c)];
        if (cell.leaf() && cell.end > cell.begin) leaves.push_back(c);
      }
      InteractionLists walks;
      walks.reset(leaves.size());
      walks.build(0, leaves.size(), [&](std::size_t g, auto& ep, auto&) {
        for (int s : p2p.of(leaves[g])) {
          const fmm::FmmCell& source = sources_.cells[static_cast<std::size_t>(s)];
          for (int k = source.begin; k < source.end; ++k) ep.push_back(static_cast<std::int32_t>(k));
        }
      });
      auto group_range = [&](std::size_t g) {
        const fmm::FmmCell& leaf = tree_.cells()[static_cast<std::size_t>(leaves[g])];
        return std::pair<std::size_t, std::size_t>(static_cast<std::size_t>(leaf.begin),
                                                   static_cast<std::size_t>(leaf.end - leaf.begin));
      };
      auto nothing = [](auto&&...) {};
      MultiwalkBuffers<EPI, EPJ, Spj, Force> buffers;
      TreeProfile profile;
      // The forces start cleared or from the previous call (prepareNearField): retrieve adds to them.
      runMultiWalkBatches<true, EPI, EPJ, Spj, Force>(
          leaves.size(), group_range, walks, nothing, nothing, nothing, epi_.data(), sorted_forces_.data(),
          std::span<const EPJ>(epj_), std::span<const Spj>(), dispatch, retrieve, tag_max, n_walk_limit,
          /*lists_unchanged=*/false, /*clear_forces=*/false, buffers, profile);
      return profile.n_ep_ep;
    });
  }

  template <class PSys, class FarField>
  void nearFieldOnDevice(fmm::NearFieldOnDevice<Force, EPI, EPJ>& near, const PSys& psys, const DomainInfo& dinfo,
                         FarField far, bool clear) {
    // Checked on every rank before any message: a rank that threw alone would leave the others
    // waiting in the LET exchange.
    psys.comm().throwIfAnyFailed(
        &near.engine() == engine_.get()
            ? std::nullopt
            : std::optional<std::string>("the device near field reads the lists of another far-field engine than this "
                                         "object's: make it with the engine given to setFarFieldEngine"),
        "FmmForce::calcForceAllOnDevice");
    // With a LET the near field of the local leaf pairs may start before it (startLocal, on the
    // local EPJ: epj_'s first n); evaluate() then adds the received pairs. Should the calculation
    // fail in between, what startLocal queued is waited for before anything else runs.
    bool local_started = false;
    auto start_local = [&] {
      local_started = near.startLocal(epi_, std::span<const EPJ>(epj_.data(), epi_.size()), sorted_forces_, clear);
      return local_started;
    };
    try {
      calculate(psys, dinfo, far, clear, /*overlap=*/true, /*p2p_on_device=*/true, start_local,
                [&](const fmm::CsrList&) {
                  const std::int64_t interactions = near.evaluate(epi_, epj_, sorted_forces_, clear);
                  stats_.p2p_kernel_seconds = near.kernelSeconds();
                  return interactions;
                });
    } catch (...) {
      if (local_started) near.abandon();
      throw;
    }
  }

  // calculate()'s near field before the LET where there is none (a host or multiwalk near field).
  static constexpr auto kNoNearFieldBeforeLet = [] { return false; };

  template <class PSys>
  void writeBack(PSys& psys) {
    const double start = wallSeconds();
#pragma omp parallel for
    for (std::size_t i = 0; i < psys.size(); ++i) psys[i].copyFromForce(forces_[i]);
    stats_.write_back_seconds += wallSeconds() - start;
  }

  // Everything the far field needs: the particles' positions and charges (checked), the tree and
  // its multipoles, the LET (with the near field's inputs in key order: it sends EPJ) and the
  // traversal; then the far field started on the engine (into phi_, grad_phi_, key order), running
  // on beside the caller's near field where it can (a device engine, or the host's with `overlap`).
  // Without a LET the near field's inputs follow (prepareNearField). Where the engine began on
  // the local cells before the LET and there are several ranks, near_field_before_let() may start
  // the near field of the local leaf pairs there (it returns whether it did). Returns the P2P
  // lists, the near field's (empty with `p2p_on_device`: the engine keeps them on its device).
  // Collective.
  template <class PSys, class NearFieldBeforeLet>
  fmm::CsrList startFarField(const PSys& psys, const DomainInfo& dinfo, bool clear, bool overlap, bool p2p_on_device,
                             NearFieldBeforeLet& near_field_before_let) {
    using FP = typename PSys::value_type;
    static_assert(checkLongRangeContracts<FP, Force, EPI, EPJ>());
    const Comm& comm = psys.comm();
    const bool periodic = isAnyPeriodic(dinfo.getBoundaryCondition());
    comm.throwIfAnyFailed(periodic ? periodicBoxProblem(dinfo) : std::nullopt, "FmmForce::calcForceAll");
    stats_ = {};
    const std::size_t n = psys.size();
    stats_.particles = static_cast<std::int64_t>(n);

    double start = wallSeconds();
    // Kept from call to call (the tree is built from them; filling fresh pages costs more than the copy).
    std::vector<Vec3d>& positions = input_positions_;
    std::vector<double>& charges = input_charges_;
    positions.resize(n);
    charges.resize(n);
    // The input checks in the same pass: the first particle of non-finite values, and for periodic
    // boxes the first outside the closed root domain.
    const Boxd root = dinfo.getPosRootDomain();
    std::size_t first_bad = n, first_outside = n;
#pragma omp parallel for reduction(min : first_bad, first_outside)
    for (std::size_t i = 0; i < n; ++i) {
      EPJ j;
      j.copyFromFP(psys[i]);
      positions[i] = Vec3d(j.getPos());
      charges[i] = static_cast<double>(j.getCharge());
      if (!isFinite(positions[i]) || !isFiniteValue(charges[i])) first_bad = std::min(first_bad, i);
      if (periodic && !root.containsClosed(positions[i])) first_outside = std::min(first_outside, i);
    }
    stats_.copy_seconds = wallSeconds() - start;
    // Checked on every rank before any message, so bad input on one rank stops them all.
    std::optional<std::string> bad_input;
    if (n >= (std::size_t{1} << 31))
      bad_input = fmt::format("{} particles on rank {}: at most 2^31 - 1 per rank", n, comm.rank());
    if (first_bad < n)
      bad_input = fmt::format("particle {} on rank {} has position {} and charge {}: the FMM needs finite values",
                              first_bad, comm.rank(), positions[first_bad], charges[first_bad]);
    else if (first_outside < n)
      bad_input = fmt::format("particle {} on rank {} at {} is outside the periodic root domain {}: put it in with "
                              "ParticleSystem::adjustPositionIntoRootDomain",
                              first_outside, comm.rank(), positions[first_outside], root);
    if (!clear && forces_.size() != n)
      bad_input = fmt::format("clear = false adds to the previous call's forces, but rank {} has {} particles and the "
                              "previous call {}",
                              comm.rank(), n, forces_.size());
    comm.throwIfAnyFailed(bad_input, "FmmForce::calcForceAll");

    start = wallSeconds();
    // Abandons a calculation the engine began before the LET, should anything up to start() throw.
    std::optional<fmm::FarFieldInFlight> begun_before_let;
    // Parts of the stretch timed as the tree's that are not the tree's.
    double not_tree_seconds = 0.0;
    // The tree's build and, with a LET to come, the engine's start on the tree's own cells: an
    // engine that can (a device's) traverses them and starts their M2L now, so that they run
    // while the LET is selected and exchanged (start()'s summary counts that time as the
    // traversal's). Then the near field's inputs, which the LET sends from (the EPJ in key
    // order), and a near field that can (a device's) starts on the local leaf pairs, beside the
    // LET too. Any of it may fail on one rank alone (a device out of memory): said on every rank
    // before the LET's messages, so that no rank waits for one that threw.
    const bool exchanges_let = exchangesLet(comm, dinfo);
    std::optional<std::string> failed;
    try {
      engine_->buildTree(positions, charges, n_leaf_, expansion_, tree_);
      if (exchanges_let) {
        double part_start = wallSeconds();
        if (engine_->startLocal(tree_, theta_, expansion_)) begun_before_let.emplace(*engine_);
        const double local_start_seconds = wallSeconds() - part_start;
        part_start = wallSeconds();
        makeNearFieldInputs(psys, clear, /*before_let=*/true);
        const double copy_seconds = wallSeconds() - part_start;
        stats_.copy_seconds += copy_seconds;
        part_start = wallSeconds();
        // On one rank the LET is only the periodic images, made in a few milliseconds: too short to
        // hide the near field's second launch (one GPU at 2^20 in a periodic cube was 2.5 % slower
        // with it, doc/fmm.md "Session 32").
        if (begun_before_let && comm.size() > 1) stats_.near_field_before_let = near_field_before_let();
        const double near_seconds = wallSeconds() - part_start;
        stats_.p2p_seconds += near_seconds;
        not_tree_seconds = local_start_seconds + copy_seconds + near_seconds;
      }
    } catch (const std::exception& e) {
      failed = fmt::format("rank {}: {}", comm.rank(), e.what());
    }
    comm.throwIfAnyFailed(failed, "FmmForce::calcForceAll (the tree's build, or the far field's or near field's start "
                                  "on its cells)");
    sources_.cells.assign(tree_.cells().begin(), tree_.cells().end());
    sources_.local_multipoles = tree_.multipoles();
    sources_.stride = tree_.stride();
    sources_.remote_multipoles.clear();
    sources_.remote_multipole_rows.clear();
    sources_.remote_roots.clear();
    stats_.tree_seconds = wallSeconds() - start - not_tree_seconds;
    stats_.cells = static_cast<std::int64_t>(tree_.cells().size());
    stats_.leaves = tree_.leafCount();

    start = wallSeconds();
    // Periodic: the near block's images of every rank's tree (this one's too) come as LET trees.
    const std::vector<Vec3d> shifts = periodic ? nearImageShifts(dinfo) : std::vector<Vec3d>();
    // The received EPJ are written after epj_'s own, over what it held from the last call.
    if (exchanges_let) stats_.let = fmm::exchangeLet(comm, tree_, epj_, n, theta_, sources_, shifts, &let_buffers_);
    stats_.let_seconds = wallSeconds() - start;
    if (periodic) {
      start = wallSeconds();
      startLattice(comm, dinfo);
      stats_.lattice_seconds = wallSeconds() - start;
    }
    // An engine that takes the lattice adds its field in its last kernel; else calculate() does.
    stats_.lattice_on_engine = engine_->offerLattice(periodic ? lattice_.get() : nullptr) && periodic;

    phi_.resize(n);
    grad_phi_.resize(n);
    const bool runs_beside = overlap || engine_->asynchronous();
    fmm::TraversalSummary traversal =
        engine_->start(tree_, sources_, theta_, expansion_, phi_, grad_phi_, runs_beside, !p2p_on_device);
    if (begun_before_let) begun_before_let->release();  // the caller's guard takes over
    stats_.local_before_let = begun_before_let.has_value();
    stats_.far_field_engine = engine_->name();
    stats_.overlapped = runs_beside;
    stats_.traversal_seconds = traversal.seconds;
    stats_.m2l = traversal.m2l;
    stats_.m2p = traversal.m2p;
    stats_.p2p_leaf_pairs = traversal.p2p_pairs;
    return std::move(traversal.p2p);
  }

  // Whether a calculation exchanges a LET (several ranks, or a periodic box's images of this
  // rank's own tree). The LET sends EPJ, so the near field's inputs are made before it, not beside
  // the far field (makeNearFieldInputs).
  static bool exchangesLet(const Comm& comm, const DomainInfo& dinfo) {
    return comm.size() > 1 || isAnyPeriodic(dinfo.getBoundaryCondition());
  }

  // The near field's inputs in the tree's key order, in one pass over the particles: the EPI,
  // epj_[0, n) (the received EPJ follow them) and the forces' start (cleared, or the previous
  // call's when !clear). Before a LET, epj_ is not shrunk to n: the LET writes its EPJ over the
  // elements past n (see exchangeLet), and shrinking would have them value-initialised again.
  template <class PSys>
  void makeNearFieldInputs(const PSys& psys, bool clear, bool before_let) {
    const std::span<const int> order = tree_.order();
    const std::size_t n = order.size();
    if (!before_let || epj_.size() < n) epj_.resize(n);
    epi_.resize(n);
    sorted_forces_.resize(n);
#pragma omp parallel for
    for (std::size_t k = 0; k < n; ++k) {
      const auto i = static_cast<std::size_t>(order[k]);
      epi_[k].copyFromFP(psys[i]);
      epj_[k].copyFromFP(psys[i]);
      if (clear) sorted_forces_[k].clear();
      else sorted_forces_[k] = forces_[i];
    }
  }

  // The near field's inputs where no LET made them (makeNearFieldInputs), after the far field
  // started, so that a device engine's traversal and M2L run meanwhile.
  template <class PSys>
  void prepareNearField(const PSys& psys, const DomainInfo& dinfo, bool clear) {
    if (!exchangesLet(psys.comm(), dinfo)) makeNearFieldInputs(psys, clear, /*before_let=*/false);
  }

  // One force calculation around a near field: near_field(p2p) adds the near field to
  // sorted_forces_ (key order) and returns its particle pairs, while the far field started before it
  // may run on beside it; the far field is then added and the forces put in particle order. A near
  // field that throws leaves no far field running. near_field_before_let: see startFarField.
  template <class PSys, class FarField, class NearFieldBeforeLet, class NearField>
  void calculate(const PSys& psys, const DomainInfo& dinfo, FarField& far, bool clear, bool overlap, bool p2p_on_device,
                 NearFieldBeforeLet near_field_before_let, NearField&& near_field) {
    const fmm::CsrList p2p = startFarField(psys, dinfo, clear, overlap, p2p_on_device, near_field_before_let);
    fmm::FarFieldInFlight in_flight(*engine_);
    double start = wallSeconds();
    prepareNearField(psys, dinfo, clear);
    stats_.copy_seconds += wallSeconds() - start;
    start = wallSeconds();
    stats_.p2p_interactions = near_field(p2p);
    stats_.p2p_seconds += wallSeconds() - start;  // after a start before the LET's

    start = wallSeconds();
    const fmm::FarFieldSeconds seconds = engine_->finish();
    in_flight.release();
    stats_.far_field_wait_seconds = wallSeconds() - start;
    stats_.m2l_seconds = seconds.m2l;
    stats_.downward_seconds = seconds.downward;

    // startFarField set the lattice up, and offered it to the engine.
    if (isAnyPeriodic(dinfo.getBoundaryCondition()) && !stats_.lattice_on_engine) {
      start = wallSeconds();
      const std::span<const Vec3d> x = tree_.positions();
#pragma omp parallel for
      for (std::size_t k = 0; k < phi_.size(); ++k) lattice_->evaluate(x[k], &phi_[k], &grad_phi_[k]);
      stats_.lattice_seconds += wallSeconds() - start;
    }
    // The far field's functor and the move to particle order in one pass.
    start = wallSeconds();
    const std::span<const int> order = tree_.order();
    forces_.resize(sorted_forces_.size());
#pragma omp parallel for
    for (std::size_t k = 0; k < sorted_forces_.size(); ++k) {
      far(sorted_forces_[k], epi_[k], phi_[k], grad_phi_[k]);
      forces_[static_cast<std::size_t>(order[k])] = sorted_forces_[k];
    }
    stats_.write_back_seconds = wallSeconds() - start;
  }

  // Why a periodic domain cannot be computed (checked on every rank alike), or nothing.
  std::optional<std::string> periodicBoxProblem(const DomainInfo& dinfo) const {
    if (expansion_.order() < 4)
      return fmt::format("order {}: periodic boxes need order 4 or more (the lattice sum keeps the degrees from 4 up)",
                         expansion_.order());
    const BoundaryCondition bc = dinfo.getBoundaryCondition();
    if (bc != BoundaryCondition::PERIODIC_XYZ) {
      std::string axes;
      for (int a = 0; a < 3; ++a)
        if (isPeriodic(bc, a)) axes += "xyz"[a];
      return fmt::format("the boundary is periodic along {} only: the fast multipole method takes open boundaries or "
                         "PERIODIC_XYZ (periodic along every axis)",
                         axes);
    }
    const Vec3d side = dinfo.getPosRootDomain().size();
    if (!isFinite(side) || !(side.x > 0.0))
      return fmt::format("periodic boundaries need a root domain (setPosRootDomain); its size is {}", side);
    if (std::abs(side.y - side.x) > 1e-12 * side.x || std::abs(side.z - side.x) > 1e-12 * side.x)
      return fmt::format("the periodic root domain is {} by {} by {}: the fast multipole method's lattice sum needs a "
                         "cube",
                         side.x, side.y, side.z);
    if constexpr (!fmm::MovableEpj<EPJ>)
      return std::string("periodic boundaries move copies of the particles: the EPJ type needs "
                         "setPos(const grove::Vec3d&)");
    return std::nullopt;
  }

  // The images the traversal meets as trees: n L with |n_i| <= kNearBlock, the zero shift first.
  // A block of 5^3 (not 3^3) is what brings the lattice's error at order 8 to 1e-7 (doc/fmm.md).
  static std::vector<Vec3d> nearImageShifts(const DomainInfo& dinfo) {
    const double side = dinfo.getPosRootDomain().size().x;
    std::vector<Vec3d> shifts{Vec3d(0.0, 0.0, 0.0)};
    for (int i = -kNearBlock; i <= kNearBlock; ++i)
      for (int j = -kNearBlock; j <= kNearBlock; ++j)
        for (int k = -kNearBlock; k <= kNearBlock; ++k)
          if (i != 0 || j != 0 || k != 0) shifts.push_back(Vec3d(i, j, k) * side);
    return shifts;
  }

  // The lattice beyond the near block, for this step's charges: the whole box's multipole about
  // the root domain's centre (each rank's root expansion moved there, summed over the ranks), its
  // lattice sum (made once per order and side), ready for evaluation at every particle. Collective.
  void startLattice(const Comm& comm, const DomainInfo& dinfo) {
    const Boxd root = dinfo.getPosRootDomain();
    const Vec3d centre = (root.low + root.high) * 0.5;
    std::vector<double> box_multipole(static_cast<std::size_t>(expansion_.size()), 0.0);
    if (!tree_.cells().empty())
      expansion_.shiftMultipole(tree_.multipoles().subspan(0, tree_.stride()), centre - tree_.cells()[0].center,
                                box_multipole);
    comm.allreduceSum(box_multipole);
    if (!lattice_ || lattice_->order() != expansion_.order() || lattice_->side() != root.size().x)
      lattice_ = std::make_unique<fmm::PeriodicLattice>(expansion_, root.size().x, kLatticeLevels, kNearBlock);
    lattice_->setBox(box_multipole, centre);
  }

  // The near block's half-width, and the lattice's supercell levels (each 5 times the last: 5^12
  // L away, the rest is below double precision's rounding).
  static constexpr int kNearBlock = 2, kLatticeLevels = 12;

  double theta_ = 0.5;
  int n_leaf_ = 32;
  fmm::MultiIndexSet expansion_;
  fmm::FmmTree tree_;
  fmm::SourceCells sources_;
  std::shared_ptr<fmm::FarFieldEngine> engine_;
  std::vector<EPI> epi_;
  std::vector<EPJ> epj_;  // key order, then the received
  fmm::LetBuffers<EPJ> let_buffers_;  // the LET's messages, kept from call to call
  std::vector<Vec3d> input_positions_;  // the copy step's positions and charges, input order
  std::vector<double> input_charges_;
  std::vector<Force> sorted_forces_, forces_;
  std::vector<double> phi_;       // far-field potential sum q / r, key order
  std::vector<Vec3d> grad_phi_;   // and its gradient
  fmm::FmmStatistics stats_;
  std::unique_ptr<fmm::PeriodicLattice> lattice_;  // periodic boxes: the far images
};

}  // namespace grove
