#pragma once
// grove::fmm::DeviceFarField: the fast multipole method's traversal and far field on a GPU, for
// FmmForce::setFarFieldEngine (link grove::gpu). Declarations only: no CUDA header, so ordinary
// translation units include it.
//
// - Traversal (Goude & Engblom's scheme): the dual tree traversal breadth first, a generation of
//   cell pairs at a time, each pair classified by one device thread (M2L, P2P, M2P or split into
//   the next generation's pairs, placed by a prefix sum), then every list sorted by (target,
//   source). It follows the host's rules (grove/fmm/dual_traversal.hpp) decision for decision, and
//   rounds the acceptance test as the host does (no fused multiply-add; the host built without
//   -ffast-math, as grove is), so its lists are the host's, item for item.
// - Far field: M2L batched per target cell (a block per target, sources across its threads),
//   L2L a generation at a time, then L2P and M2P per particle.
// - Overlap: start() returns once the P2P lists are on the host, with the far field queued on a
//   stream of its own; the caller runs the near field (host threads, or the GPU through the
//   multiwalk hooks), and finish() waits for phi and its gradient.
//
// The tree and its multipoles are built on the host (grove/fmm/fmm_tree.hpp) and uploaded each call.
#include <memory>

#include "grove/fmm/far_field_engine.hpp"

namespace grove::fmm {

class DeviceFarField final : public FarFieldEngine {
 public:
  // On the CUDA device current at construction (every call uses it). Throws grove::Error where
  // there is none.
  DeviceFarField();
  ~DeviceFarField() override;
  DeviceFarField(const DeviceFarField&) = delete;
  DeviceFarField& operator=(const DeviceFarField&) = delete;

  const char* name() const override { return "device"; }
  bool asynchronous() const override { return true; }
  TraversalSummary start(const FmmTree& tree, const SourceCells& sources, double theta, const MultiIndexSet& expansion,
                         std::span<double> phi, std::span<Vec3d> gradient, bool overlap) override;
  FarFieldSeconds finish() override;
  void abandon() noexcept override;

  // The last traversal's lists, downloaded (for tests against the host's traversal).
  InteractionLists lists() const;
  // Device memory held (bytes).
  std::size_t deviceBytes() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace grove::fmm
