#pragma once
// The multiwalk hooks that grove's trees call to compute forces on an accelerator (FDPS 7.1's
// dispatch/retrieve; Accelerated FDPS, Iwasawa et al. 2020, Figs. 2-4), as one abstract class
// with the callables the trees take. Host-only: no CUDA header, so ordinary translation units
// include it; the implementations (grove::gpu::MultiwalkEngine in multiwalk_engine.cuh, the
// hand-written gravity template in user_templates/cuda/) are compiled by nvcc and handed over
// through this interface.
//
// How grove calls them, per step (FDPS 7.1's sequence, grove/walk/multiwalk_driver.hpp): the index form
// first sends the whole arrays in a call of their own (tag 0, n_walk 0, null walk arrays,
// send_flag true); then, for batches k = 0, 1, ...: dispatch(tag = k % tag_max, batch k,
// send_flag false), and retrieve(batch k - 1) after batch k's lists are built, so the device
// computes batch k - 1 while the host builds batch k's lists; then retrieve(last batch). With
// tag_max > 1 up to tag_max batches are in flight, one per tag, and retrieve takes the oldest
// pending batch of its tag. An implementation also accepts walks in a send_flag call (a caller
// other than grove may combine them).
//
//   plain form   dispatch(tag, n_walk, epi, n_epi, epj, n_epj, spj, n_spj)
//                each walk's EPJ and SPJ lists are arrays of their own
//   index form   dispatch(tag, n_walk, epi, n_epi, id_epj, n_epj, id_spj, n_spj,
//                         epj, n_epj_total, spj, n_spj_total, send_flag [, lists_unchanged])
//                the whole EPJ/SPJ arrays come once per step (send_flag: the step's first call,
//                which carries no walks when grove calls)
//                and each walk's lists index them. lists_unchanged (grove's extension) says that
//                the lists, call by call, are those of the preceding MAKE_LIST_FOR_REUSE step,
//                so lists kept on the device need not be sent again.
//   retrieve     retrieve(tag, n_walk, n_epi, force): ADDS the walk's forces to force[w][i].
// Short-range forms drop every SPJ argument; here SPJ = grove::gpu::NoSPJ selects them.
#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace grove::gpu {

/// The SPJ type of a short-range multiwalk: there are no superparticles.
struct NoSPJ {};

/// retrieve adds the device's forces to the caller's with addForce(into, add). The default uses
/// Force's +=; for a Force without one, write addForce(Force&, const Force&) in Force's own
/// namespace (found by argument-dependent lookup), next to the Force type.
template <class Force>
  requires requires(Force& a, const Force& b) { a += b; }
void addForce(Force& into, const Force& add) {
  into += add;
}

template <class Force>
concept AddableForce = requires(Force& a, const Force& b) { addForce(a, b); };

/// The options of a MultiwalkEngine.
struct MultiwalkOptions {
  /// The device to run on; -1: the device current for the thread that makes the engine
  /// (see selectDeviceForRank in device_gpu.h).
  int device = -1;
  /// Bytes of device memory the engine may hold: the resident EPJ/SPJ arrays of the index form,
  /// index lists kept for reuse, and each stream's working buffers. 0: 80% of the device's free
  /// memory when the engine is made. A step that does not fit runs in blocks of walks; a single
  /// walk that does not fit is an error (grove::Error naming the sizes).
  std::size_t device_memory_budget = 0;
  /// The share of the budget the whole EPJ/SPJ arrays (index form) may take. When they need more,
  /// the engine gathers each walk's sources on the host and sends them with the walk instead.
  double resident_fraction = 0.5;
  /// Keep each call's index lists on the device, so that a lists_unchanged dispatch sends none.
  bool keep_lists_on_device = true;
  /// CUDA streams, each with its own device working buffers; a batch with tag t runs on stream
  /// t % streams, so up to this many batches compute at once.
  int streams = 2;
  /// The most device memory one kernel launch's block of walks may use; 0: the stream's share of
  /// the budget. Smaller blocks bound each launch's working set (tests use it to force blocks).
  std::size_t max_block_bytes = 0;
};

/// What an implementation did, summed since it was made (or since resetStats()).
struct MultiwalkStats {
  std::int64_t batches = 0;           ///< dispatch calls
  std::int64_t blocks = 0;            ///< kernel launches: a batch that does not fit runs in several
  std::int64_t walks = 0;             ///< walks dispatched
  std::int64_t interactions = 0;      ///< sum over walks of n_i * (n_j + n_sp)
  std::int64_t bytes_to_device = 0;   ///< EPJ/SPJ arrays, lists, EPI, walk tables
  std::int64_t bytes_from_device = 0; ///< forces
  /// of bytes_to_device: copied by DMA straight from the caller's page-locked arrays (grove's
  /// trees' EPI and EPJ arrays, see grove::gpu::enablePageLockedTransfers), with no packing or
  /// staging
  std::int64_t bytes_direct = 0;
  std::int64_t lists_kept = 0;        ///< index batches whose lists were stored on the device
  std::int64_t lists_reused = 0;      ///< batches that ran on stored lists (lists_unchanged)
  std::int64_t gathered_batches = 0;  ///< index batches whose sources were gathered on the host
  /// device time the force kernels kept the GPU busy (CUDA events; kernels overlapping on several
  /// streams count once)
  double kernel_seconds = 0.0;
  /// index form, summed over steps: device time from the start of a step's EPJ/SPJ upload to its
  /// first kernel (what the first kernel waits for; where an implementation measures it, else 0)
  double startup_seconds = 0.0;
};

/// The interface. Implementations override the three *Walks functions; users hand the callables
/// dispatch(), dispatchPlain() and retrieve() to a tree:
///   tree.calcForceAllAndWriteBackMultiWalkIndex(mw.dispatch(), mw.retrieve(), tag_max, psys,
///                                               dinfo, n_walk_limit, true, list_mode);
///   tree.calcForceAllAndWriteBackMultiWalk(mw.dispatchPlain(), mw.retrieve(), tag_max, psys,
///                                          dinfo, n_walk_limit, true);
/// The callables hold a pointer to this object, which must outlive them. Not thread-safe: one
/// host thread dispatches and retrieves (grove calls them from its master thread).
template <class EPI, class EPJ, class SPJ, class Force>
class Multiwalk {
 public:
  static constexpr bool kLongRange = !std::is_same_v<SPJ, NoSPJ>;  ///< false for SPJ = NoSPJ (short range)

  Multiwalk() = default;
  Multiwalk(const Multiwalk&) = delete;
  Multiwalk& operator=(const Multiwalk&) = delete;
  virtual ~Multiwalk() = default;

  /// Plain form. Short range passes spj = n_spj = nullptr.
  virtual int dispatchPlainWalks(int tag, int n_walk, const EPI** epi, const int* n_epi, const EPJ** epj,
                                 const int* n_epj, const SPJ** spj, const int* n_spj) = 0;
  /// Index form. Short range passes id_spj = n_spj = spj = nullptr and n_spj_total = 0.
  virtual int dispatchIndexWalks(int tag, int n_walk, const EPI** epi, const int* n_epi, const int** id_epj,
                                 const int* n_epj, const int** id_spj, const int* n_spj, const EPJ* epj,
                                 int n_epj_total, const SPJ* spj, int n_spj_total, bool send_flag,
                                 bool lists_unchanged) = 0;
  /// Adds the forces of the oldest pending batch dispatched with this tag to force[w][0, n_epi[w]).
  virtual int retrieveWalks(int tag, int n_walk, const int* n_epi, Force** force) = 0;

  /// What it did since it was made or since resetStats().
  const MultiwalkStats& stats() const { return stats_; }
  /// Zeroes stats().
  void resetStats() { stats_ = {}; }

  // ---- the callables, in FDPS's signatures --------------------------------------------------------

  /// FDPS's index-form dispatch callable (what calcForceAllAndWriteBackMultiWalkIndex takes).
  class IndexDispatch {
   public:
    /// Calls m's dispatchIndexWalks; m must outlive it.
    explicit IndexDispatch(Multiwalk* m) : m_(m) {}
    /// Long range: FDPS's signature, with grove's lists_unchanged last.
    int operator()(int tag, int n_walk, const EPI** epi, const int* n_epi, const int** id_epj, const int* n_epj,
                   const int** id_spj, const int* n_spj, const EPJ* epj, int n_epj_total, const SPJ* spj,
                   int n_spj_total, bool send_flag, bool lists_unchanged = false) const
      requires kLongRange
    {
      return m_->dispatchIndexWalks(tag, n_walk, epi, n_epi, id_epj, n_epj, id_spj, n_spj, epj, n_epj_total, spj,
                                    n_spj_total, send_flag, lists_unchanged);
    }
    /// Short range: FDPS's signature without superparticles, with grove's lists_unchanged last.
    int operator()(int tag, int n_walk, const EPI** epi, const int* n_epi, const int** id_epj, const int* n_epj,
                   const EPJ* epj, int n_epj_total, bool send_flag, bool lists_unchanged = false) const
      requires(!kLongRange)
    {
      return m_->dispatchIndexWalks(tag, n_walk, epi, n_epi, id_epj, n_epj, nullptr, nullptr, epj, n_epj_total,
                                    nullptr, 0, send_flag, lists_unchanged);
    }

   private:
    Multiwalk* m_;
  };

  /// FDPS's plain-form dispatch callable (what calcForceAllAndWriteBackMultiWalk takes).
  class PlainDispatch {
   public:
    /// Calls m's dispatchPlainWalks; m must outlive it.
    explicit PlainDispatch(Multiwalk* m) : m_(m) {}
    /// Long range: FDPS's signature.
    int operator()(int tag, int n_walk, const EPI** epi, const int* n_epi, const EPJ** epj, const int* n_epj,
                   const SPJ** spj, const int* n_spj) const
      requires kLongRange
    {
      return m_->dispatchPlainWalks(tag, n_walk, epi, n_epi, epj, n_epj, spj, n_spj);
    }
    /// Short range: FDPS's signature without superparticles.
    int operator()(int tag, int n_walk, const EPI** epi, const int* n_epi, const EPJ** epj, const int* n_epj) const
      requires(!kLongRange)
    {
      return m_->dispatchPlainWalks(tag, n_walk, epi, n_epi, epj, n_epj, nullptr, nullptr);
    }

   private:
    Multiwalk* m_;
  };

  /// FDPS's retrieve callable.
  class Retrieve {
   public:
    /// Calls m's retrieveWalks; m must outlive it.
    explicit Retrieve(Multiwalk* m) : m_(m) {}
    /// FDPS's signature.
    int operator()(int tag, int n_walk, const int* n_epi, Force** force) const {
      return m_->retrieveWalks(tag, n_walk, n_epi, force);
    }

   private:
    Multiwalk* m_;
  };

  /// The index-form dispatch callable for this object.
  IndexDispatch dispatch() { return IndexDispatch(this); }
  /// The plain-form dispatch callable for this object.
  PlainDispatch dispatchPlain() { return PlainDispatch(this); }
  /// The retrieve callable for this object.
  Retrieve retrieve() { return Retrieve(this); }

 protected:
  MultiwalkStats stats_;  ///< implementations add to it
};

}  // namespace grove::gpu
