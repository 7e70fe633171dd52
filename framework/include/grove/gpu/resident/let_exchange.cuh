#pragma once
// The LET payloads of the GPU-resident tree across ranks (nvcc only).
//
// ResidentTreeLong::selectLet picks, for every other rank's particle box, the particles of the
// leaves it opens and the cells whose superparticles stand in for the rest. Here those are packed
// on the device in rank order, only they cross PCIe (through pinned buffers), the ranks swap them
// point to point (grove::swapBuckets, which the particle exchanges also use), and what arrives
// is uploaded in rank order, the order the host's exchangeLet delivers. A rank far from another
// sends it its root cell's superparticle alone: the selection yields exactly that (the LET walk
// does not force the root open), where the host's point-to-point mode puts the allgathered root,
// so the received arrays equal the host's.
//
// A step that reuses its lists resends fresh payloads along the same selections (exchange()
// again, without setCounts()).
#include <cuda_runtime.h>

#include <array>
#include <cstddef>
#include <span>
#include <vector>

#include "grove/comm/comm.hpp"
#include "grove/core/error.hpp"
#include "grove/core/execution.hpp"
#include "grove/gpu/cuda_resources.hpp"
#include "grove/gpu/resident/device_vector.hpp"
#include "grove/gpu/resident/tree_build.cuh"
#include "grove/particles/exchange.hpp"

namespace grove::gpu {

namespace kernel {

template <class T, class Index>
__global__ void gatherSelected(const T* __restrict__ items, const Index* __restrict__ index, std::size_t n,
                               T* __restrict__ out) {
  const std::size_t k = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (k < n) out[k] = items[index[k]];
}

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

template <class EPJ, class SPJ>
class DeviceLetExchange {
 public:
  // Collective. This rank sends send_ep[r] particles and send_sp[r] superparticles to rank r
  // (none to itself); learns how many arrive from each rank.
  void setCounts(const Comm& comm, const std::vector<int>& send_ep, const std::vector<int>& send_sp) {
    const auto ranks = static_cast<std::size_t>(comm.size());
    require(send_ep.size() == ranks && send_sp.size() == ranks, "DeviceLetExchange",
            "one count per rank expected ({} ranks; got {} and {})", ranks, send_ep.size(), send_sp.size());
    std::vector<std::array<int, 2>> send(ranks);
    for (std::size_t r = 0; r < ranks; ++r) send[r] = {send_ep[r], send_sp[r]};
    const std::vector<std::array<int, 2>> recv = comm.alltoall(std::span<const std::array<int, 2>>(send));
    send_ep_ = send_ep, send_sp_ = send_sp;
    recv_ep_.resize(ranks), recv_sp_.resize(ranks);
    for (std::size_t r = 0; r < ranks; ++r) recv_ep_[r] = recv[r][0], recv_sp_[r] = recv[r][1];
  }

  // Collective. Packs epj[particles[k]] and the superparticles of moments[cells[k]] for every
  // selection (the counts of setCounts, in rank order), swaps them, and writes what arrives to
  // the device arrays epj_out (receivedEp() of them) and spj_out (receivedSp()), in rank order.
  template <class Moment>
  void exchange(const Comm& comm, Gpu policy, const EPJ* epj, const Moment* moments, const int* particles,
                const int* cells, EPJ* epj_out, SPJ* spj_out) {
    cudaStream_t stream = policy.stream;
    const std::size_t ne = sentEp(), ns = sentSp();
    send_epj_.resize(ne);
    send_spj_.resize(ns);
    if (ne > 0) {
      kernel::gatherSelected<<<blocksFor(ne, 256), 256, 0, stream>>>(epj, particles, ne, send_epj_.data());
      check(cudaGetLastError(), "gatherSelected kernel launch");
    }
    if (ns > 0) {
      kernel::superparticlesOf<SPJ, Moment><<<blocksFor(ns, 256), 256, 0, stream>>>(moments, cells, ns,
                                                                                     send_spj_.data());
      check(cudaGetLastError(), "superparticlesOf kernel launch");
    }
    host_send_epj_.reserve(ne);
    host_send_spj_.reserve(ns);
    host_recv_epj_.reserve(receivedEp());
    host_recv_spj_.reserve(receivedSp());
    send_epj_.copyTo(host_send_epj_.data(), stream);
    send_spj_.copyTo(host_send_spj_.data(), stream);
    swapBuckets(comm, host_send_epj_.data(), std::span<const int>(send_ep_), host_recv_epj_.data(),
                std::span<const int>(recv_ep_));
    swapBuckets(comm, host_send_spj_.data(), std::span<const int>(send_sp_), host_recv_spj_.data(),
                std::span<const int>(recv_sp_));
    upload(epj_out, host_recv_epj_.data(), receivedEp(), stream);
    upload(spj_out, host_recv_spj_.data(), receivedSp(), stream);
  }

  std::size_t sentEp() const { return total(send_ep_); }
  std::size_t sentSp() const { return total(send_sp_); }
  std::size_t receivedEp() const { return total(recv_ep_); }
  std::size_t receivedSp() const { return total(recv_sp_); }
  std::size_t deviceBytes() const { return send_epj_.bytes() + send_spj_.bytes(); }

 private:
  static std::size_t total(const std::vector<int>& counts) {
    std::size_t sum = 0;
    for (int c : counts) sum += static_cast<std::size_t>(c);
    return sum;
  }
  template <class T>
  static void upload(T* device, const T* host, std::size_t n, cudaStream_t stream) {
    if (n == 0) return;
    check(cudaMemcpyAsync(device, host, n * sizeof(T), cudaMemcpyHostToDevice, stream), "cudaMemcpyAsync (LET upload)");
    // The pinned buffer is reused by the next exchange: the copy must be done by then.
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize (LET upload)");
  }

  std::vector<int> send_ep_, send_sp_, recv_ep_, recv_sp_;
  DeviceVector<EPJ> send_epj_;
  DeviceVector<SPJ> send_spj_;
  PinnedArray<EPJ> host_send_epj_, host_recv_epj_;
  PinnedArray<SPJ> host_send_spj_, host_recv_spj_;
};

}  // namespace grove::gpu
