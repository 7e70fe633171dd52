#pragma once
// The short-range LET of the GPU-resident pipeline across ranks (nvcc only), for
// grove::gpu::ResidentTreeShort on several ranks.
//
// Every rank allgathers three boxes of every other (ShortRangeReach): its particles' positions,
// the union of its i-particles' search boxes (GATHER, SYMMETRY) and of its j-particles' (SCATTER,
// SYMMETRY). A local particle j goes to rank t, as the image x_j + s (s: a shift by whole periods
// on the periodic axes, 0 included), when
//   GATHER    x_j + s lies in t's i-search box                 (some i of t may reach it)
//   SCATTER   the box x_j + s +- r_j meets t's position box    (it may reach some i of t)
//   SYMMETRY  either,
// closed tests, so a superset of what t's exact search will keep. Images a rank needs of its own
// particles (s != 0) are selected the same way and never leave the device. The selections are
// made on the device (a flag per particle, CUB select); the payloads are packed there with the
// shift applied, each rank tells only the ranks it sends to how many follow (a sparse exchange,
// no all-to-all of counts), and the payloads travel device to device
// (grove/gpu/device_transport.hpp: CUDA IPC within a node, CUDA-aware MPI, or pinned staging).
// What arrives is, with the own images, the j-side beyond the local
// particles: the tree's global j-tree is built from both. Periodic search on several ranks
// therefore uses explicit images, not the one-rank search's nearest-image arithmetic.
//
// A step that reuses its lists resends fresh payloads along the same selections (exchange()
// again, without select()).
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <cub/device/device_select.cuh>
#include <span>
#include <thrust/iterator/counting_iterator.h>
#include <vector>

#include "grove/comm/comm.hpp"
#include "grove/core/box.hpp"
#include "grove/core/error.hpp"
#include "grove/core/execution.hpp"
#include "grove/gpu/cuda_resources.hpp"
#include "grove/gpu/device_transport.hpp"
#include "grove/gpu/resident/device_vector.hpp"
#include "grove/gpu/resident/neighbour_search.cuh"
#include "grove/gpu/resident/tree_build.cuh"
#include "grove/particles/exchange.hpp"

namespace grove::gpu {

// What one rank's particles occupy and reach (empty boxes where a mode needs none).
struct ShortRangeReach {
  Boxd positions = Boxd::empty();
  Boxd i_reach = Boxd::empty();  // union of [x_i - r_i, x_i + r_i] (GATHER, SYMMETRY)
  Boxd j_reach = Boxd::empty();  // union of [x_j - r_j, x_j + r_j] (SCATTER, SYMMETRY)
};

namespace kernel {

template <SearchMode M, class EPJ>
__global__ void flagShortRangeLet(const EPJ* __restrict__ epj, std::size_t n, Vec3d shift, ShortRangeReach target,
                                  double skin, std::uint8_t* __restrict__ flags) {
  const std::size_t k = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (k >= n) return;
  const Vec3d x = positionOf(epj[k]) + shift;
  bool need = false;
  if constexpr (M != SearchMode::SCATTER) need = target.i_reach.containsClosed(x);
  if constexpr (M != SearchMode::GATHER) {
    const double r = search::radiusOf(epj[k]) + skin;
    need = need || overlapsClosed(Boxd{x - Vec3d(r), x + Vec3d(r)}, target.positions);
  }
  flags[k] = need ? 1 : 0;
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

template <class EPJ, SearchMode M>
class DeviceShortRangeLet {
 public:
  // Collective. Allgathers every rank's reach, then selects on the device, for every rank t and
  // image shift s, the local particles (epj[0, n)) that t needs as x + s; periods: each axis's
  // period (0: open). With a skin, every radius is taken that much larger (the reaches too: the
  // tree computes them so).
  void select(const Comm& comm, Gpu policy, const EPJ* epj, std::size_t n, const ShortRangeReach& mine,
              const Periods& periods, double skin = 0.0) {
    require(!periods.any() || HasSetPos<EPJ>, "ResidentTreeShort (several ranks)",
            "periodic boundaries need `setPos(const Vec3d&)` in the EPJ type (images are sent)");
    const std::vector<ShortRangeReach> reaches = comm.allgather(mine);
    const int me = comm.rank();
    cudaStream_t stream = policy.stream;
    selections_.clear();
    send_counts_.assign(static_cast<std::size_t>(comm.size()), 0);
    self_count_ = 0;
    std::vector<int> chosen;  // host copy of the indices, appended per selection
    std::size_t total = 0;
    flags_.resize(n);
    found_.resize(1);
    index_scratch_.resize(n);
    indices_.resize(0);
    // Own images first, then the other ranks in rank order: the order of the payloads.
    std::vector<int> order;
    order.push_back(me);
    for (int t = 0; t < comm.size(); ++t)
      if (t != me) order.push_back(t);
    for (int t : order) {
      const ShortRangeReach& target = reaches[static_cast<std::size_t>(t)];
      for (const Vec3d& shift : shiftsOf(periods)) {
        if (t == me && shift.x == 0.0 && shift.y == 0.0 && shift.z == 0.0) continue;
        if (n == 0 || !mayReach(mine, target, shift)) continue;
        kernel::flagShortRangeLet<M, EPJ><<<blocksFor(n, 256), 256, 0, stream>>>(epj, n, shift, target, skin,
                                                                                      flags_.data());
        check(cudaGetLastError(), "flagShortRangeLet kernel launch");
        std::size_t temp_bytes = 0;
        thrust::counting_iterator<int> ids(0);
        check(cub::DeviceSelect::Flagged(nullptr, temp_bytes, ids, flags_.data(), index_scratch_.data(),
                                         found_.data(), static_cast<std::int64_t>(n), stream),
              "cub::DeviceSelect::Flagged (size)");
        check(cub::DeviceSelect::Flagged(cub_.get(temp_bytes), temp_bytes, ids, flags_.data(), index_scratch_.data(),
                                         found_.data(), static_cast<std::int64_t>(n), stream),
              "cub::DeviceSelect::Flagged (LET selection)");
        const auto count = static_cast<std::size_t>(found_.elementToHost(0, stream));
        if (count == 0) continue;
        indices_.resizeKeep(total + count, stream);
        check(cudaMemcpyAsync(indices_.data() + total, index_scratch_.data(), count * sizeof(int),
                              cudaMemcpyDeviceToDevice, stream),
              "cudaMemcpyAsync (LET selection)");
        selections_.push_back({t, shift, total, count});
        total += count;
        if (t == me) self_count_ += count;
        else send_counts_[static_cast<std::size_t>(t)] += static_cast<int>(count);
      }
    }
    recv_counts_ = receiveCounts(comm, send_counts_);
    if (!transport_ || &transport_comm_->handle() != &comm.handle()) {
      transport_ = std::make_unique<DeviceTransport>(comm);
      transport_comm_ = comm;
    }
  }

  // Collective. Packs the selections of epj (fresh values along the kept selections on a reuse
  // step), swaps them, and writes [own images, then what arrives in rank order] to out from
  // `offset` on (out grows to hold them). Returns how many were written.
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

  std::size_t sent() const { return total(send_counts_); }
  std::size_t received() const { return total(recv_counts_); }
  std::size_t ownImages() const { return self_count_; }
  std::size_t deviceBytes() const {
    return flags_.bytes() + found_.bytes() + index_scratch_.bytes() + indices_.bytes() + cub_.bytes();
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
  DeviceVector<std::uint8_t> flags_;
  DeviceVector<int> found_, index_scratch_, indices_;
  std::unique_ptr<DeviceTransport> transport_;  // made by the first select() on a communicator
  std::optional<Comm> transport_comm_;
  Event packed_;
  CubScratch cub_;
};

}  // namespace grove::gpu
