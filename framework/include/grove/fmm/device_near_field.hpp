#pragma once
/// @file
/// grove::fmm::NearFieldOnDevice: the FMM's near field (P2P) computed on the device that ran its
/// traversal, straight from the lists the traversal left there: FmmForce::calcForceAllOnDevice
/// and calcForceAllAndWriteBackOnDevice take one. Host-only (no CUDA header), so ordinary
/// translation units include it; the implementation (grove::fmm::DeviceNearField, made by
/// makeDeviceNearField in grove/fmm/device_near_field.cuh) is compiled by nvcc in the user's own
/// .cu file, where the user's pairwise interaction is instantiated, and handed over through this
/// interface, as grove::gpu::Multiwalk is.
#include <cstddef>
#include <cstdint>
#include <span>

#include "grove/fmm/far_field_engine.hpp"

namespace grove::fmm {

/// The window of source particles of a device near field's task unless its maker says otherwise
/// (DeviceNearField, grove/fmm/device_near_field.cuh; doc/fmm.md measures 4096 against it).
inline constexpr long long kDefaultNearFieldWindow = 8192;

/// A near field on the far-field engine's device (see the top of this file). FmmForce calls
/// evaluate() once per force calculation, after the engine's start() (with p2p_to_host
/// false) and before its finish(), while the far field runs beside it; where a LET is
/// exchanged, startLocal() before it.
template <class Force, class EPI, class EPJ>
class NearFieldOnDevice {
 public:
  virtual ~NearFieldOnDevice() = default;
  /// The far-field engine whose lists it reads: FmmForce refuses another one than its own.
  virtual const FarFieldEngine& engine() const = 0;
  /// Adds the P2P interactions of the engine's last traversal to forces[k] (one per target
  /// particle, the tree's key order): forces[k] gains interaction(epi[k], epj[j], .) for every j of
  /// every source leaf of k's leaf. epj: the local particles in key order, then the received (the
  /// cells' [begin, end) index it). With `forces_cleared` the forces are known to be cleared, and
  /// their values need not travel to the device. Returns the particle pairs evaluated (i = j
  /// included). Returns once the forces are on the host. Throws grove::Error when the arrays do
  /// not match the engine's last traversal (epi and forces: its targets' particles; epj: every
  /// particle its source cells index) and when CUDA fails.
  virtual std::int64_t evaluate(std::span<const EPI> epi, std::span<const EPJ> epj, std::span<Force> forces,
                                bool forces_cleared) = 0;
  /// Optional. FmmForce calls it where the engine began on the local cells before the LET
  /// (FarFieldEngine::startLocal) and there are several ranks, before the LET is exchanged: it
  /// may start the P2P of the tree's own leaf pairs there, beside the LET's exchange. epi: the
  /// targets (key order); local_epj: the local particles in key order (the epj that evaluate()
  /// gets begins with them); forces: their start unless forces_cleared.
  /// Returns whether it started them; evaluate() then completes the calculation, adding the
  /// received leaves' pairs (its epi and forces must be these, and its forces_cleared is not
  /// read). This default starts nothing: evaluate() does every pair.
  virtual bool startLocal(std::span<const EPI> /*epi*/, std::span<const EPJ> /*local_epj*/,
                          std::span<const Force> /*forces*/, bool /*forces_cleared*/) {
    return false;
  }
  /// Waits for anything startLocal() queued and drops it: FmmForce calls it when a calculation
  /// fails between startLocal() and evaluate(), before the engine's lists are made again.
  virtual void abandon() noexcept {}
  /// The last calculation's kernels on the device (seconds): the near field and the sums of its
  /// cut lists, startLocal()'s launch included; the transfers and the tasks' set-up left out. 0
  /// before the first.
  virtual double kernelSeconds() const = 0;
  /// Device memory it holds between calls (bytes).
  virtual std::size_t deviceBytes() const = 0;
};

}  // namespace grove::fmm
