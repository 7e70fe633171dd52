#pragma once
/// @file
/// grove::fmm::DeviceFarField: the fast multipole method's traversal and far field on a GPU, for
/// FmmForce::setFarFieldEngine (link grove::gpu). Declarations only: no CUDA header, so ordinary
/// translation units include it.
///
/// - Traversal (Goude & Engblom's scheme): the dual tree traversal breadth first, a generation of
///   cell pairs at a time, each pair classified by one device thread (M2L, P2P, M2P or split into
///   the next generation's pairs, placed by a prefix sum), then every list sorted by (target,
///   source). It follows the host's rules (grove/fmm/dual_traversal.hpp) decision for decision, and
///   rounds the acceptance test as the host does (no fused multiply-add; the host built without
///   -ffast-math, as grove is), so its lists are the host's, item for item.
/// - Far field: M2L batched per target cell (a block per target, sources across its threads),
///   L2L a generation at a time, then L2P per particle, M2P per leaf's tile of 16 particles and run
///   of at most 32 sources (each source's Taylor coefficients in shared memory; the runs' sums
///   added in order), and for periodic boxes the lattice's field per particle (offerLattice).
/// - Overlap: start() returns once the P2P lists are on the host, with the far field queued on a
///   stream of its own; the caller runs the near field (host threads, the GPU through the
///   multiwalk hooks, or grove/fmm/device_near_field.cuh straight from the lists left on the
///   device), and finish() waits for phi and its gradient. The traversal's stream has the device's
///   highest priority and the far field's the next, above the near field's default one, so the
///   far field's kernels run beside a near-field kernel launched after them rather than queue
///   behind it. With several ranks (or periodic images) startLocal() traverses the
///   tree's own cells and starts their M2L before the LET, which the caller then exchanges while
///   the device works; start() adds the received trees.
///
/// - Tree: buildTree() builds the FmmTree on the device (keys, sort, split, centres, radii, P2M and
///   M2M), cell for cell and bit for bit the host's FmmTree::build, keeps its key-ordered positions
///   and multipoles there for the next start() and gives the host the tree (cells, order,
///   multipoles: the LET and the near field read them). A tree built on the host is uploaded.
#include <cstdint>
#include <memory>

#include "grove/fmm/far_field_engine.hpp"

struct CUstream_st;

namespace grove::fmm {

/// The last traversal's P2P lists as they lie on the device (DeviceFarField::deviceP2p()), for a
/// near field computed there: CSR over the target cells (the local tree's, [0, target_count);
/// a non-leaf has none), items indexing `cells` (SourceCells::cells: the local cells, then the
/// received). Valid until the next startLocal() or start(); complete in the order of `stream`.
struct DeviceP2pLists {
  const FmmCell* cells = nullptr;         ///< device: SourceCells::cells
  const std::int64_t* offsets = nullptr;  ///< device: target_count + 1 entries
  const int* items = nullptr;             ///< device: the source cells, target by target
  int target_count = 0;                   ///< the local tree's cells
  std::int64_t pairs = 0;                 ///< the items, (target leaf, source leaf) pairs
  std::int64_t target_particles = 0;      ///< the local tree's particles (the targets' ranges)
  std::int64_t source_particles = 0;      ///< one past the largest source cell's end (the EPJ needed)
  int device = -1;                        ///< the CUDA device holding them
  CUstream_st* stream = nullptr;          ///< the traversal's stream (a cudaStream_t)
};

/// The FMM's traversal and far field on a CUDA device (see the top of this file), a
/// FarFieldEngine for FmmForce::setFarFieldEngine. One calculation at a time; not copyable.
class DeviceFarField final : public FarFieldEngine {
 public:
  /// On the CUDA device current at construction (every call uses it). Throws grove::Error where
  /// there is none.
  DeviceFarField();
  /// Waits for a far field still running (abandon()) and frees the device memory.
  ~DeviceFarField() override;
  DeviceFarField(const DeviceFarField&) = delete;
  DeviceFarField& operator=(const DeviceFarField&) = delete;

  /// "device".
  const char* name() const override { return "device"; }
  /// true: the far field always runs on the device beside the caller's work, `overlap` or not.
  bool asynchronous() const override { return true; }
  /// Builds `tree` on the device (see the top of this file): the same tree as FmmTree::build, bit
  /// for bit (the host's bounding box, then keys, a stable sort, the split a generation at a time,
  /// and the moments from the deepest generation up, each sum in the host's order). Waits for the
  /// device. Throws grove::Error as FmmTree::build does, while a far field is running (or a
  /// calculation startLocal() began), and when CUDA fails.
  void buildTree(std::span<const Vec3d> positions, std::span<const double> charges, int n_leaf,
                 const MultiIndexSet& expansion, FmmTree& tree) override;
  /// Where buildTree() builds: on the device (true, the default), or on the host's threads as the
  /// host engine does (false: less device memory; start() then uploads the tree).
  void setTreeOnDevice(bool on) { tree_on_device_ = on; }
  /// Whether buildTree() builds on the device.
  bool treeOnDevice() const { return tree_on_device_; }
  /// The traversal of the tree's own cells (from the pair root-root) on the device, then their
  /// M2L queued on the far field's stream: it runs while the caller exchanges the LET, and start()
  /// traverses only the received trees (see FarFieldEngine::startLocal). The lists, and the far
  /// field to rounding, are those of start() alone. Returns true. Throws grove::Error while a far
  /// field is running, for theta outside (0, 1), for a tree of another expansion's multipoles, and
  /// when CUDA fails.
  bool startLocal(const FmmTree& tree, double theta, const MultiIndexSet& expansion) override;
  /// The traversal on the device; returns once its P2P lists are on the host (in the summary;
  /// with p2p_to_host false they stay on the device only, for deviceP2p()), with the far field
  /// queued on a stream of its own, whatever `overlap` says (it is ignored):
  /// tree, sources, phi and gradient must stay unchanged until finish() (or abandon()). After
  /// startLocal() it completes that calculation (the summary counts both parts, and its seconds
  /// both calls' wall time). Not collective. Throws grove::Error while a far field started earlier
  /// was neither finished nor abandoned; and, abandoning a calculation startLocal() began, for
  /// inconsistent arguments (as the host engine checks them), for another tree, theta or expansion
  /// than startLocal()'s, and when CUDA fails.
  TraversalSummary start(const FmmTree& tree, const SourceCells& sources, double theta, const MultiIndexSet& expansion,
                         std::span<double> phi, std::span<Vec3d> gradient, bool overlap,
                         bool p2p_to_host) override;
  /// Takes the periodic lattice's field (FarFieldEngine::offerLattice) for the next calculation:
  /// start() uploads its arrays (LatticeField, some 0.3 MB at order 8) and adds it at every
  /// particle after the L2P and M2P; finish() or abandon() forgets it (the next calculation needs
  /// its own offer). Returns lattice != nullptr. Throws grove::Error while a far field is running.
  bool offerLattice(const PeriodicLattice* lattice) override;
  /// Waits for the far field of the last start() and copies phi and its gradient into the spans
  /// given to it. Returns the device time of M2L and of the rest (L2L, L2P, M2P). Throws
  /// grove::Error when no far field was started.
  FarFieldSeconds finish() override;
  /// Waits for a started far field and drops it, if there is one (nothing is copied into phi or
  /// the gradient); does nothing otherwise.
  void abandon() noexcept override;
  /// Where the last start()'s P2P lists lie on the device (every start() leaves them there, also
  /// when it copies them to the host). Throws grove::Error before the first start(), and between
  /// a startLocal() and the start() that completes it.
  DeviceP2pLists deviceP2p() const;
  /// Between startLocal() and the start() that completes its calculation: the P2P lists of the
  /// tree's own leaf pairs alone (items index the local cells; sources: the local particles),
  /// complete in the order of their `stream`, valid until the next startLocal(). A near field can
  /// start on them before the LET (DeviceNearField::startLocal) and add the received pairs after
  /// start(). Throws grove::Error when no calculation begun by startLocal() is under way.
  DeviceP2pLists deviceLocalP2p() const;
  /// After a start() that completed a calculation startLocal() began: the P2P lists of the
  /// received leaves alone (received cells and periodic images; deviceP2p() is both parts, target
  /// by target the local sources first). Throws grove::Error after any other start().
  DeviceP2pLists deviceReceivedP2p() const;
  /// The M2P's work unit: a leaf's list of received contents-less cells is cut into tasks of at
  /// most `sources` cells, which the M2P kernel's blocks take a tile of 16 particles at a time,
  /// and whose sums are added in task order (the default, 32, keeps a leaf on a domain's border,
  /// which meets thousands of them, from running alone long after the rest). Throws grove::Error
  /// for sources < 1 and while a far field is running.
  void setM2pSourcesPerTask(int sources);
  /// The M2P's task size (setM2pSourcesPerTask).
  int m2pSourcesPerTask() const;
  /// Whether the last start() completed a calculation startLocal() began (its M2L then ran in two
  /// parts, the local cells' before the received ones').
  bool completedLocalStart() const;

  /// The last traversal's lists (M2L, P2P, M2P), downloaded (for tests against the host's
  /// traversal); after startLocal(), the M2L's two parts merged as one traversal lists them.
  /// Throws grove::Error between a startLocal() and the start() that completes it.
  InteractionLists lists() const;
  /// Device memory held (bytes).
  std::size_t deviceBytes() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
  bool tree_on_device_ = true;
};

}  // namespace grove::fmm
