#pragma once
/// @file
/// grove::gpu::DeviceShortRangeLet: the short-range LET of the GPU-resident pipeline across ranks
/// (nvcc only), for grove::gpu::ResidentTreeShort on several ranks.
/// @verbatim
/// Every rank allgathers three boxes of every other (ShortRangeReach): its particles' positions,
/// the union of its i-particles' search boxes (GATHER, SYMMETRY) and of its j-particles' (SCATTER,
/// SYMMETRY). A local particle j goes to rank t, as the image x_j + s (s: a shift by whole periods
/// on the periodic axes, 0 included), when
///   GATHER    x_j + s lies in t's i-search box                 (some i of t may reach it)
///   SCATTER   the box x_j + s +- r_j meets t's position box    (it may reach some i of t)
///   SYMMETRY  either,
/// closed tests, so a superset of what t's exact search will keep. Images a rank needs of its own
/// particles (s != 0) are selected the same way and never leave the device. The selections are
/// made on the device in one pass for all of them (each particle counts, then writes, the
/// (selection, particle) pairs it belongs to; a stable sort by selection groups them, each in
/// particle order), so the host waits twice per step whatever the number of (rank, shift)
/// selections (periodic boxes give up to 27 per peer); the payloads are packed there with the
/// shift applied, each rank tells only the ranks it sends to how many follow (a sparse exchange,
/// no all-to-all of counts), and the payloads travel device to device
/// (grove/gpu/device_transport.hpp: CUDA IPC within a node, CUDA-aware MPI, or pinned staging).
/// What arrives is, with the own images, the j-side beyond the local
/// particles: the tree's global j-tree is built from both. Periodic search on several ranks
/// therefore uses explicit images, not the one-rank search's nearest-image arithmetic.
///
/// A step that reuses its lists resends fresh payloads along the same selections (exchange()
/// again, without select()).
/// @endverbatim
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <cub/device/device_histogram.cuh>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <span>
#include <vector>

#include "grove/comm/comm.hpp"
#include "grove/core/box.hpp"
#include "grove/core/error.hpp"
#include "grove/core/execution.hpp"
#include "grove/gpu/cuda_resources.hpp"
#include "grove/gpu/device_transport.hpp"
#include "grove/gpu/device_vector.hpp"
#include "grove/particles/exchange.hpp"
#include "grove/tree/tree_build_gpu.cuh"
#include "grove/walk/neighbour_search_gpu.cuh"

namespace grove::gpu {

/// What one rank's particles occupy and reach (empty boxes where a mode needs none), as
/// DeviceShortRangeLet::select allgathers it. With a skin, the radii include it.
struct ShortRangeReach {
  Boxd positions = Boxd::empty();  ///< the box of the rank's particles' positions (empty: none)
  Boxd i_reach = Boxd::empty();  ///< union of [x_i - r_i, x_i + r_i] (GATHER, SYMMETRY)
  Boxd j_reach = Boxd::empty();  ///< union of [x_j - r_j, x_j + r_j] (SCATTER, SYMMETRY)
};

namespace kernel {

// One selection to make: another rank's (or this one's) reach, and the image shift.
struct LetSelectionTarget {
  ShortRangeReach reach;
  Vec3d shift;
};

// Whether rank `target` needs particle p as its image x_p + shift (see the top of this file).
template <SearchMode M, class EPJ>
__device__ bool neededAsImage(const EPJ& p, const LetSelectionTarget& target, double skin) {
  const Vec3d x = positionOf(p) + target.shift;
  bool need = false;
  if constexpr (M != SearchMode::SCATTER) need = target.reach.i_reach.containsClosed(x);
  if constexpr (M != SearchMode::GATHER) {
    const double r = search::radiusOf(p) + skin;
    need = need || overlapsClosed(Boxd{x - Vec3d(r), x + Vec3d(r)}, target.reach.positions);
  }
  return need;
}

// Pass 1 (offsets null): how many selections each particle belongs to. Pass 2: its
// (selection, particle) pairs at its offset, selections in their order.
template <SearchMode M, class EPJ>
__global__ void letSelectionPairs(const EPJ* __restrict__ epj, std::size_t n,
                                  const LetSelectionTarget* __restrict__ targets, int n_targets, double skin,
                                  int* __restrict__ counts, const std::int64_t* __restrict__ offsets,
                                  std::uint32_t* __restrict__ selection, int* __restrict__ particle) {
  const std::size_t k = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (k >= n) return;
  const EPJ p = epj[k];
  std::int64_t at = offsets ? offsets[k] : 0;
  int count = 0;
  for (int s = 0; s < n_targets; ++s) {
    if (!neededAsImage<M>(p, targets[s], skin)) continue;
    if (offsets) {
      selection[at] = static_cast<std::uint32_t>(s);
      particle[at] = static_cast<int>(k);
      ++at;
    }
    ++count;
  }
  if (!offsets) counts[k] = count;
}

// out[k] = epj[index[k]] moved by shift (the image the receiver needs).
template <class EPJ>
__global__ void packShifted(const EPJ* __restrict__ epj, const int* __restrict__ index, std::size_t n, Vec3d shift,
                            EPJ* __restrict__ out) {
  const std::size_t k = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (k >= n) return;
  EPJ p = epj[index[k]];
  if (shift.x != 0.0 || shift.y != 0.0 || shift.z != 0.0) {
    if constexpr (HasSetPos<EPJ>) p.setPos(positionOf(p) + shift);
  }
  out[k] = p;
}

}  // namespace kernel

/// The j-particles that a GPU-resident short-range tree (ResidentTreeShort) on several ranks
/// sends to the others, and its own periodic images, for search mode M (see the top of this
/// file): select() once per list build, exchange() every step. Needs: EPJ trivially copyable
/// (it travels as bytes), with device-callable getPos (and getRSearch for SCATTER and SYMMETRY;
/// setPos for periodic axes). Throws grove::Error when CUDA or the transport fails.
template <class EPJ, SearchMode M>
class DeviceShortRangeLet {
 public:
  /// Collective over comm. Allgathers every rank's reach (`mine`: this rank's, computed with the
  /// same skin), then selects on the device, for every rank t and image shift s (whole periods,
  /// -1, 0 or +1 on each periodic axis), the local particles (epj[0, n), device memory) that t
  /// needs as x + s; periods: each axis's period (0: open). With a skin, every radius is taken
  /// that much larger (the reaches too: the tree computes them so). Work runs on policy.stream;
  /// the host waits for it at most twice. The first call on a communicator makes the transport. Throws
  /// grove::Error for periodic axes when EPJ has no setPos(const Vec3d&).
  void select(const Comm& comm, Gpu policy, const EPJ* epj, std::size_t n, const ShortRangeReach& mine,
              const Periods& periods, double skin = 0.0) {
    require(!periods.any() || HasSetPos<EPJ>, "ResidentTreeShort (several ranks)",
            "periodic boundaries need `setPos(const Vec3d&)` in the EPJ type (images are sent)");
    const std::vector<ShortRangeReach> reaches = comm.allgather(mine);
    const int me = comm.rank();
    cudaStream_t stream = policy.stream;
    // The candidate (rank, shift) selections, in payload order: own images first, then the other
    // ranks in rank order; the boxes of all of this rank's particles rule out most of them.
    std::vector<kernel::LetSelectionTarget> candidates;
    std::vector<int> candidate_rank;
    std::vector<int> order;
    order.push_back(me);
    for (int t = 0; t < comm.size(); ++t)
      if (t != me) order.push_back(t);
    for (int t : order) {
      const ShortRangeReach& target = reaches[static_cast<std::size_t>(t)];
      for (const Vec3d& shift : shiftsOf(periods)) {
        if (t == me && shift.x == 0.0 && shift.y == 0.0 && shift.z == 0.0) continue;
        if (n == 0 || !mayReach(mine, target, shift)) continue;
        candidates.push_back({target, shift});
        candidate_rank.push_back(t);
      }
    }
    selections_.clear();
    send_counts_.assign(static_cast<std::size_t>(comm.size()), 0);
    self_count_ = 0;
    indices_.resize(0);
    if (!candidates.empty()) {
      const auto n_sel = static_cast<int>(candidates.size());
      targets_.assign(candidates.data(), candidates.size(), stream);
      counts_.resize(n + 1);
      offsets_.resize(n + 1);
      kernel::letSelectionPairs<M, EPJ><<<blocksFor(n, 256), 256, 0, stream>>>(
          epj, n, targets_.data(), n_sel, skin, counts_.data(), nullptr, nullptr, nullptr);
      check(cudaGetLastError(), "letSelectionPairs (count) kernel launch");
      check(cudaMemsetAsync(counts_.data() + n, 0, sizeof(int), stream), "cudaMemsetAsync (pair count)");
      exclusiveSum(cub_, counts_.data(), offsets_.data(), static_cast<std::int64_t>(n) + 1, stream,
                   "cub::DeviceScan::ExclusiveSum (LET pairs)");
      const auto pairs = static_cast<std::size_t>(offsets_.elementToHost(n, stream));
      pair_selection_.resize(pairs);
      pair_selection_alt_.resize(pairs);
      indices_.resize(pairs);
      index_scratch_.resize(pairs);
      if (pairs > 0) {
        kernel::letSelectionPairs<M, EPJ><<<blocksFor(n, 256), 256, 0, stream>>>(
            epj, n, targets_.data(), n_sel, skin, nullptr, offsets_.data(), pair_selection_.data(),
            index_scratch_.data());
        check(cudaGetLastError(), "letSelectionPairs (write) kernel launch");
        // Stable: within a selection the particles stay in index order.
        int bits = 1;
        while ((1 << bits) < n_sel) ++bits;
        cub::DoubleBuffer<std::uint32_t> keys(pair_selection_.data(), pair_selection_alt_.data());
        cub::DoubleBuffer<int> values(index_scratch_.data(), indices_.data());
        std::size_t temp_bytes = 0;
        check(cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, keys, values, static_cast<std::int64_t>(pairs), 0,
                                              bits, stream),
              "cub::DeviceRadixSort::SortPairs (size)");
        check(cub::DeviceRadixSort::SortPairs(cub_.get(temp_bytes), temp_bytes, keys, values,
                                              static_cast<std::int64_t>(pairs), 0, bits, stream),
              "cub::DeviceRadixSort::SortPairs (LET pairs)");
        if (values.Current() != indices_.data()) indices_.swap(index_scratch_);
        // Pairs per selection.
        selection_counts_.resize(static_cast<std::size_t>(n_sel));
        temp_bytes = 0;
        check(cub::DeviceHistogram::HistogramEven(nullptr, temp_bytes, keys.Current(), selection_counts_.data(),
                                                  n_sel + 1, 0u, static_cast<std::uint32_t>(n_sel),
                                                  static_cast<std::int64_t>(pairs), stream),
              "cub::DeviceHistogram::HistogramEven (size)");
        check(cub::DeviceHistogram::HistogramEven(cub_.get(temp_bytes), temp_bytes, keys.Current(),
                                                  selection_counts_.data(), n_sel + 1, 0u,
                                                  static_cast<std::uint32_t>(n_sel), static_cast<std::int64_t>(pairs),
                                                  stream),
              "cub::DeviceHistogram::HistogramEven (LET pairs)");
        const std::vector<int> per_selection = selection_counts_.toHost(stream);
        std::size_t first = 0;
        for (int s = 0; s < n_sel; ++s) {
          const auto count = static_cast<std::size_t>(per_selection[static_cast<std::size_t>(s)]);
          if (count == 0) continue;
          const int t = candidate_rank[static_cast<std::size_t>(s)];
          selections_.push_back({t, candidates[static_cast<std::size_t>(s)].shift, first, count});
          first += count;
          if (t == me) self_count_ += count;
          else send_counts_[static_cast<std::size_t>(t)] += static_cast<int>(count);
        }
      }
    }
    recv_counts_ = receiveCounts(comm, send_counts_);
    if (!transport_ || &transport_comm_->handle() != &comm.handle()) {
      transport_ = std::make_unique<DeviceTransport>(comm);
      transport_comm_ = comm;
    }
  }

  /// Collective over the communicator of select(), which must come first. Packs the selections
  /// of epj (the same n particles in the same order as at select(); fresh values along the kept
  /// selections on a reuse step), swaps them, and writes [own images, then what arrives in rank
  /// order] to out from `offset` on (out is resized to hold them, what lies before `offset` kept).
  /// Returns how many were written (ownImages() + received()), in device memory for work
  /// enqueued on policy.stream after the call.
  std::size_t exchange(const Comm& comm, Gpu policy, const EPJ* epj, DeviceVector<EPJ>& out, std::size_t offset) {
    cudaStream_t stream = policy.stream;
    const std::size_t sent = total(send_counts_), received = total(recv_counts_);
    out.resizeKeep(offset + self_count_ + received, stream);
    auto* send = reinterpret_cast<EPJ*>(transport_->sendArena(sent * sizeof(EPJ)));
    std::size_t self_at = offset, send_at = 0;
    for (const Selection& s : selections_) {
      EPJ* into = s.rank == comm.rank() ? out.data() + self_at : send + send_at;
      kernel::packShifted<<<blocksFor(s.count, 256), 256, 0, stream>>>(epj, indices_.data() + s.first, s.count,
                                                                        s.shift, into);
      check(cudaGetLastError(), "packShifted kernel launch");
      (s.rank == comm.rank() ? self_at : send_at) += s.count;
    }
    packed_.record(stream);
    // One block per peer each way, in rank order (the selections of a rank are adjacent).
    std::vector<SendBlock> sends;
    std::vector<ReceiveBlock> receives;
    std::size_t at = 0;
    for (int r = 0; r < comm.size(); ++r) {
      const auto c = static_cast<std::size_t>(send_counts_[static_cast<std::size_t>(r)]);
      if (c > 0) sends.push_back({r, at * sizeof(EPJ), c * sizeof(EPJ)});
      at += c;
    }
    at = offset + self_count_;
    for (int r = 0; r < comm.size(); ++r) {
      const auto c = static_cast<std::size_t>(recv_counts_[static_cast<std::size_t>(r)]);
      if (c > 0) receives.push_back({r, out.data() + at, c * sizeof(EPJ)});
      at += c;
    }
    transport_->start(sends, receives, stream, packed_.get());
    transport_->finish(stream);
    return self_count_ + received;
  }

  /// Particles this rank sends to the other ranks per exchange() (the last select()).
  std::size_t sent() const { return total(send_counts_); }
  /// Particles this rank receives from the other ranks per exchange() (the last select()).
  std::size_t received() const { return total(recv_counts_); }
  /// Periodic images of its own particles this rank keeps (the last select()).
  std::size_t ownImages() const { return self_count_; }
  /// Device memory held by the selections and their scratch (bytes; the send arena is the
  /// transport's).
  std::size_t deviceBytes() const {
    return targets_.bytes() + counts_.bytes() + offsets_.bytes() + pair_selection_.bytes() +
           pair_selection_alt_.bytes() + selection_counts_.bytes() + index_scratch_.bytes() + indices_.bytes() +
           cub_.bytes();
  }

 private:
  struct Selection {
    int rank;
    Vec3d shift;
    std::size_t first, count;
  };

  static std::size_t total(const std::vector<int>& counts) {
    std::size_t sum = 0;
    for (int c : counts) sum += static_cast<std::size_t>(c);
    return sum;
  }

  // Whole-period shifts of the periodic axes (0 included, first).
  static std::vector<Vec3d> shiftsOf(const Periods& p) {
    std::vector<Vec3d> shifts;
    const auto options = [&](int a) {
      return p.length[a] > 0.0 ? std::vector<double>{0.0, -p.length[a], p.length[a]} : std::vector<double>{0.0};
    };
    for (double x : options(0))
      for (double y : options(1))
        for (double z : options(2)) shifts.push_back({x, y, z});
    return shifts;
  }

  // Whether any of my particles, moved by shift, may be needed by target (the per-particle test
  // on the boxes of all of them).
  static bool mayReach(const ShortRangeReach& mine, const ShortRangeReach& target, const Vec3d& shift) {
    if (mine.positions.isEmpty()) return false;
    bool may = false;
    if constexpr (M != SearchMode::SCATTER)
      may = !target.i_reach.isEmpty() && overlapsClosed(shifted(mine.positions, shift), target.i_reach);
    if constexpr (M != SearchMode::GATHER)
      may = may || (!target.positions.isEmpty() && overlapsClosed(shifted(mine.j_reach, shift), target.positions));
    return may;
  }

  std::vector<Selection> selections_;
  std::vector<int> send_counts_, recv_counts_;
  std::size_t self_count_ = 0;
  DeviceVector<kernel::LetSelectionTarget> targets_;
  DeviceVector<int> counts_, selection_counts_, index_scratch_, indices_;
  DeviceVector<std::int64_t> offsets_;
  DeviceVector<std::uint32_t> pair_selection_, pair_selection_alt_;
  std::unique_ptr<DeviceTransport> transport_;  // made by the first select() on a communicator
  std::optional<Comm> transport_comm_;
  Event packed_;
  CubScratch cub_;
};

}  // namespace grove::gpu
