#pragma once
/// @file
/// grove::gpu::DeviceLetExchange: the LET payloads of the GPU-resident tree across ranks (nvcc only).
/// @verbatim
/// ResidentTreeLong decides which ranks are its peers (the ranks whose particle boxes its tree
/// must be opened for, and those whose trees it must open: both sides decide alike from
/// allgathered boxes and root moments) and selects, for each target, the particles of the leaves
/// it opens and the cells whose superparticles stand in for the rest. Here:
///
///   setCounts()  the selections' sizes go to the targets, point to point (a message per peer
///                pair, no all-to-all): each side then knows every block it sends and receives;
///   start()      the payloads are packed on the device, in target order, straight into the
///                transport's send arena, and the exchange is posted (grove/gpu/device_transport.hpp:
///                device to device within a node, CUDA-aware MPI, or pinned staging);
///   finish()     what arrives lies in device memory, EPJs and SPJs each in source-rank order,
///                for the work enqueued after it on the tree's stream.
///
/// Between start() and finish() the device is free for other work: the resident tree walks its
/// local groups against its local tree meanwhile. A step that reuses its lists resends fresh
/// payloads along the same counts (start() and finish() again, without setCounts()).
/// @endverbatim
#include <cuda_runtime.h>

#include <array>
#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "grove/comm/comm.hpp"
#include "grove/core/error.hpp"
#include "grove/core/execution.hpp"
#include "grove/gpu/cuda_resources.hpp"
#include "grove/gpu/device_transport.hpp"
#include "grove/gpu/device_vector.hpp"
#include "grove/tree/tree_build_gpu.cuh"

namespace grove::gpu {

namespace kernel {

template <class SPJ, class Moment>
__global__ void superparticlesOf(const Moment* __restrict__ moments, const int* __restrict__ cells, std::size_t n,
                                 SPJ* __restrict__ out) {
  const std::size_t k = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (k >= n) return;
  SPJ s;
  s.copyFromMoment(moments[cells[k]]);
  out[k] = s;
}

}  // namespace kernel

/// The LET payloads that one GPU-resident long-range tree (ResidentTreeLong) sends to and
/// receives from its peer ranks: EPJs and superparticles (SPJ), packed on the device and moved
/// device to device by a DeviceTransport (see the top of this file for the order of calls).
/// Needs: EPJ and SPJ trivially copyable (they travel as bytes); SPJ default-constructible with a
/// device-callable copyFromMoment(const Moment&). Throws grove::Error when CUDA or the transport
/// fails.
template <class EPJ, class SPJ>
class DeviceLetExchange {
 public:
  /// Collective over comm. This rank sends to each of `targets` (ascending, not itself)
  /// send_ep[t] particles and send_sp[t] superparticles, and receives from each of `sources`
  /// (ascending): the counts travel between these pairs only, so the pairs must agree (r lists t
  /// as a target exactly when t lists r as a source). Returns once the counts have arrived.
  /// `choice` picks the transport when it is first made (by the first call, or one on another
  /// communicator; it is kept while comm stays the same). Throws grove::Error unless send_ep and
  /// send_sp hold one count per target.
  void setCounts(const Comm& comm, std::span<const int> targets, std::span<const int> send_ep,
                 std::span<const int> send_sp, std::span<const int> sources,
                 TransportChoice choice = TransportChoice::kAuto) {
    require(send_ep.size() == targets.size() && send_sp.size() == targets.size(), "DeviceLetExchange",
            "one count per target expected ({} targets; got {} and {})", targets.size(), send_ep.size(),
            send_sp.size());
    if (!transport_ || &transport_comm_->handle() != &comm.handle()) {
      transport_ = std::make_unique<DeviceTransport>(comm, choice);
      transport_comm_ = comm;
    }
    targets_.assign(targets.begin(), targets.end());
    sources_.assign(sources.begin(), sources.end());
    send_ep_.assign(send_ep.begin(), send_ep.end());
    send_sp_.assign(send_sp.begin(), send_sp.end());
    std::vector<std::array<int, 2>> out(targets.size()), in(sources.size(), {0, 0});
    std::vector<Request> requests;
    constexpr int kCountTag = 0x6705;
    for (std::size_t s = 0; s < sources.size(); ++s)
      requests.push_back(comm.irecv(std::span<std::array<int, 2>>(&in[s], 1), sources[s], kCountTag));
    for (std::size_t t = 0; t < targets.size(); ++t) {
      out[t] = {send_ep[t], send_sp[t]};
      requests.push_back(comm.isend(std::span<const std::array<int, 2>>(&out[t], 1), targets[t], kCountTag));
    }
    waitAll(requests);
    recv_ep_.resize(sources.size());
    recv_sp_.resize(sources.size());
    for (std::size_t s = 0; s < sources.size(); ++s) recv_ep_[s] = in[s][0], recv_sp_[s] = in[s][1];
  }

  /// Collective over the communicator of setCounts(). Packs epj[particles[k]] and the
  /// superparticles of moments[cells[k]] of every selection (target order, the counts of
  /// setCounts: particles holds sentEp() indices, cells sentSp()) on the policy's stream and posts
  /// the exchange; the received EPJs go to epj_out (receivedEp() of them) and the SPJs to spj_out
  /// (receivedSp()), each in source-rank order, by finish(). All pointers are device memory and
  /// must stay valid until finish(); the previous exchange must be finished. Throws grove::Error
  /// when no counts were set.
  template <class Moment>
  void start(Gpu policy, const EPJ* epj, const Moment* moments, const int* particles, const int* cells, EPJ* epj_out,
             SPJ* spj_out) {
    require(transport_ != nullptr, "DeviceLetExchange::start", "no counts were set");
    cudaStream_t stream = policy.stream;
    const std::size_t ne = sentEp(), ns = sentSp();
    const std::size_t sp_at = alignedBytes(ne * sizeof(EPJ));
    std::byte* arena = transport_->sendArena(sp_at + ns * sizeof(SPJ));
    if (ne > 0) {
      kernel::gatherSelected<<<blocksFor(ne, 256), 256, 0, stream>>>(epj, particles, ne,
                                                                     reinterpret_cast<EPJ*>(arena));
      check(cudaGetLastError(), "gatherSelected kernel launch");
    }
    if (ns > 0) {
      kernel::superparticlesOf<SPJ, Moment>
          <<<blocksFor(ns, 256), 256, 0, stream>>>(moments, cells, ns, reinterpret_cast<SPJ*>(arena + sp_at));
      check(cudaGetLastError(), "superparticlesOf kernel launch");
    }
    packed_.record(stream);
    // A pair's blocks in the same order on both sides: its particles, then its superparticles.
    sends_.clear();
    std::size_t e = 0, s = 0;
    for (std::size_t t = 0; t < targets_.size(); ++t) {
      const auto n_e = static_cast<std::size_t>(send_ep_[t]), n_s = static_cast<std::size_t>(send_sp_[t]);
      sends_.push_back({targets_[t], e * sizeof(EPJ), n_e * sizeof(EPJ)});
      sends_.push_back({targets_[t], sp_at + s * sizeof(SPJ), n_s * sizeof(SPJ)});
      e += n_e, s += n_s;
    }
    receives_.clear();
    e = 0, s = 0;
    for (std::size_t k = 0; k < sources_.size(); ++k) {
      const auto n_e = static_cast<std::size_t>(recv_ep_[k]), n_s = static_cast<std::size_t>(recv_sp_[k]);
      receives_.push_back({sources_[k], epj_out + e, n_e * sizeof(EPJ)});
      receives_.push_back({sources_[k], spj_out + s, n_s * sizeof(SPJ)});
      e += n_e, s += n_s;
    }
    transport_->start(sends_, receives_, stream, packed_.get());
  }

  /// Waits for the exchange that start() posted; what arrived is in device memory for work
  /// enqueued on policy.stream after this call. Needs a start() before it.
  void finish(Gpu policy) { transport_->finish(policy.stream); }

  /// Particles this rank sends, over all targets (the last setCounts()).
  std::size_t sentEp() const { return total(send_ep_); }
  /// Superparticles this rank sends, over all targets (the last setCounts()).
  std::size_t sentSp() const { return total(send_sp_); }
  /// Particles this rank receives, over all sources (the last setCounts()).
  std::size_t receivedEp() const { return total(recv_ep_); }
  /// Superparticles this rank receives, over all sources (the last setCounts()).
  std::size_t receivedSp() const { return total(recv_sp_); }
  /// The ranks this rank sends to (ascending; the last setCounts()).
  const std::vector<int>& targets() const { return targets_; }
  /// The ranks this rank receives from (ascending; the last setCounts()).
  const std::vector<int>& sources() const { return sources_; }
  /// The transport (null before the first setCounts()).
  const DeviceTransport* transport() const { return transport_.get(); }
  /// Device memory held by this object: 0 (the send arena is the transport's).
  std::size_t deviceBytes() const { return 0; }  // the send arena is the transport's

 private:
  static std::size_t alignedBytes(std::size_t bytes) { return (bytes + 255) / 256 * 256; }
  static std::size_t total(const std::vector<int>& counts) {
    std::size_t sum = 0;
    for (int c : counts) sum += static_cast<std::size_t>(c);
    return sum;
  }

  std::unique_ptr<DeviceTransport> transport_;
  std::optional<Comm> transport_comm_;
  std::vector<int> targets_, sources_, send_ep_, send_sp_, recv_ep_, recv_sp_;
  std::vector<SendBlock> sends_;
  std::vector<ReceiveBlock> receives_;
  Event packed_;
};

}  // namespace grove::gpu
