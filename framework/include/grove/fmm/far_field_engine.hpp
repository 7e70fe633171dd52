#pragma once
/// @file
/// Where grove's fast multipole method runs its traversal and far field: on the host's threads
/// (HostFarField, the default) or on a GPU (grove::fmm::DeviceFarField, grove/fmm/device_far_field_gpu.h,
/// in grove::gpu). FmmForce has the engine build its tree (buildTree()), calls start() once the
/// tree, its multipoles and the LET are ready (an engine may begin on the tree's own cells before
/// the LET: startLocal()), runs the near field (the user's kernel, on the host,
/// through the multiwalk hooks or on the device) while the far field may still be running, then
/// finish() for phi and its gradient. That split is pfalcON's overlap of
/// the far field with the P2P work.
#include <chrono>
#include <future>
#include <span>

#include "grove/core/error.hpp"
#include "grove/core/time_profile.hpp"
#include "grove/core/vec3.hpp"
#include "grove/fmm/cartesian_expansion.hpp"
#include "grove/fmm/dual_traversal.hpp"
#include "grove/fmm/far_field.hpp"
#include "grove/fmm/fmm_tree.hpp"
#include "grove/fmm/periodic_lattice.hpp"

namespace grove::fmm {

/// What start() gives the near field: the P2P lists and what the traversal found.
struct TraversalSummary {
  /// Per target leaf: its source leaves (grove/fmm/dual_traversal.hpp). Empty when the engine
  /// kept them on its device (start() with p2p_to_host false).
  CsrList p2p;
  std::int64_t p2p_pairs = 0;  ///< the P2P lists' (target leaf, source leaf) pairs, on the host or not
  /// @var m2l
  /// The number of M2L interactions (cell pairs) the traversal listed.
  /// @var m2p
  /// The number of M2P interactions (leaf, received cell) the traversal listed.
  std::int64_t m2l = 0, m2p = 0;
  double seconds = 0.0;  ///< the traversal, as the caller waited for it
};

/// An engine serves one calculation at a time: FmmForce objects may share one when they take turns,
/// never at once.
class FarFieldEngine {
 public:
  virtual ~FarFieldEngine() = default;
  /// "host" or "device": reported in FmmForce's statistics.
  virtual const char* name() const = 0;
  /// Whether the far field always runs beside the caller's work (a device's), with or without
  /// `overlap`.
  virtual bool asynchronous() const = 0;
  /// Builds `tree` over the particles, as FmmTree::build (its arguments and errors). Here by
  /// default: FmmTree::build on the host's threads; a device engine builds the same tree on its
  /// device and keeps what start() needs there. Not collective.
  virtual void buildTree(std::span<const Vec3d> positions, std::span<const double> charges, int n_leaf,
                         const MultiIndexSet& expansion, FmmTree& tree) {
    tree.build(positions, charges, n_leaf, expansion);
  }
  /// Periodic boxes: offers the engine the lattice's field (grove/fmm/periodic_lattice.hpp) for
  /// the next start() ... finish() only; nullptr withdraws an earlier offer (open boxes). Returns
  /// whether the engine takes it: then finish()'s phi and gradient include the lattice's field at
  /// every target particle, and the lattice must stay unchanged until finish(). By default an
  /// engine declines (false) and the caller adds the field itself.
  virtual bool offerLattice(const PeriodicLattice* lattice) {
    (void)lattice;
    return false;
  }
  /// Begins a calculation on the pairs among the tree's own cells, before the LET has come: an
  /// engine that can (a device's) traverses them and starts their M2L, which then runs while the
  /// caller exchanges the LET; start() completes the calculation. Returns whether it began one;
  /// by default an engine does not (false), and start() does everything. After true, the
  /// calculation goes on with start() for the same tree, theta and expansion, with sources that
  /// begin with the tree's cells and multipoles (SourceCells::ofTree, then the LET's), or ends
  /// with abandon(); offerLattice() may come between, buildTree() may not. The tree must stay
  /// unchanged until finish(); start()'s summary counts both calls' seconds. Not collective.
  virtual bool startLocal(const FmmTree& tree, double theta, const MultiIndexSet& expansion) {
    (void)tree, (void)theta, (void)expansion;
    return false;
  }
  /// Traverses targets = the cells of `tree` against `sources` and starts the far field into phi and
  /// gradient (one entry per particle of the tree, key order), which hold it once finish() returns.
  /// With `overlap` the far field may go on after the call returns (the caller then runs other
  /// work until finish()); the arguments must then stay unchanged until finish(). p2p_to_host:
  /// whether the P2P lists come back in the summary; false leaves them on the engine's device for
  /// a near field there (grove/fmm/device_near_field.hpp), and an engine without a device refuses
  /// it (grove::Error). Not collective.
  virtual TraversalSummary start(const FmmTree& tree, const SourceCells& sources, double theta,
                                 const MultiIndexSet& expansion, std::span<double> phi, std::span<Vec3d> gradient,
                                 bool overlap, bool p2p_to_host) = 0;
  /// Waits for the far field. Returns how long each part ran (the far field's own time, overlapped
  /// or not).
  virtual FarFieldSeconds finish() = 0;
  /// Waits for a started far field and drops it, if there is one: for a caller unwinding from an
  /// exception between start() and finish() (or between startLocal() and start()), so that
  /// nothing writes into its arrays afterwards.
  virtual void abandon() noexcept = 0;
};

/// Abandons the engine's far field unless finish() was reached (release()): start() and finish()
/// bracket the caller's near field, which may throw.
class FarFieldInFlight {
 public:
  /// Guards `engine`, which must outlive the guard; on destruction it calls engine.abandon()
  /// unless release() was called.
  explicit FarFieldInFlight(FarFieldEngine& engine) : engine_(&engine) {}
  FarFieldInFlight(const FarFieldInFlight&) = delete;
  FarFieldInFlight& operator=(const FarFieldInFlight&) = delete;
  ~FarFieldInFlight() {
    if (engine_) engine_->abandon();
  }
  /// Disarms the guard (call it once finish() has returned).
  void release() { engine_ = nullptr; }

 private:
  FarFieldEngine* engine_;
};

/// The host's traversal and far field (grove/fmm/dual_traversal.hpp, grove/fmm/far_field.hpp). With
/// overlap the far field runs on a thread of its own (an OpenMP team of its own) while the caller
/// works, as when a device runs the near field.
class HostFarField final : public FarFieldEngine {
 public:
  /// Waits for a far field still running (abandon()).
  ~HostFarField() override { abandon(); }
  /// "host".
  const char* name() const override { return "host"; }
  /// false: without `overlap` the far field runs inside finish().
  bool asynchronous() const override { return false; }
  /// The traversal on the calling thread; the far field then on a thread of its own with
  /// `overlap`, else deferred to finish(). Throws grove::Error for p2p_to_host false (the lists
  /// are the host's), while a far field started earlier was neither finished nor abandoned, and
  /// as traverse() does.
  TraversalSummary start(const FmmTree& tree, const SourceCells& sources, double theta, const MultiIndexSet& expansion,
                         std::span<double> phi, std::span<Vec3d> gradient, bool overlap, bool p2p_to_host) override {
    require(p2p_to_host, "fmm::HostFarField::start",
            "the host engine has no device to keep its P2P lists on: use fmm::DeviceFarField");
    require(!running_.valid(), "fmm::HostFarField::start",
            "a far field is still running: an engine serves one calculation at a time");
    const double begin = wallSeconds();
    lists_ = traverse(sources, static_cast<int>(tree.cells().size()), theta);
    const std::int64_t pairs = lists_.p2p.size();
    TraversalSummary summary{std::move(lists_.p2p), pairs, lists_.m2l.size(), lists_.m2p.size(), wallSeconds() - begin};
    // The far field reads only the M2L and M2P lists, kept here until finish().
    auto evaluate = [this, &tree, &sources, &expansion, phi, gradient] {
      return evaluateFarField(tree, sources, lists_, expansion, phi, gradient);
    };
    running_ = std::async(overlap ? std::launch::async : std::launch::deferred, evaluate);
    return summary;
  }
  /// Runs or waits for the far field and returns its seconds. Throws grove::Error when none was
  /// started, and passes on the far field's own exceptions (checkFarField()).
  FarFieldSeconds finish() override {
    require(running_.valid(), "fmm::HostFarField::finish", "no far field was started");
    return running_.get();
  }
  /// Drops a far field not begun (without overlap) or waits for a running one.
  void abandon() noexcept override {
    if (!running_.valid()) return;
    // A deferred far field has not begun: dropping it is enough. A running one is waited for.
    if (running_.wait_for(std::chrono::seconds(0)) != std::future_status::deferred) running_.wait();
    running_ = {};
  }

 private:
  InteractionLists lists_;
  std::future<FarFieldSeconds> running_;
};

}  // namespace grove::fmm
