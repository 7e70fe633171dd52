#pragma once
/// @file
/// Particle exchange for device-resident particles (nvcc only): the grove::Gpu form of
/// ParticleSystem::exchangeParticle. Destinations are found on the device against the ranks'
/// domain boxes, the particles are reordered there (stayers first, in their order, then the
/// leavers bucketed by destination rank). Each rank tells only the ranks it sends to how many
/// follow (a sparse exchange: no all-to-all of counts), and the leavers travel device to device
/// (grove/gpu/device_transport.hpp: CUDA IPC within a node, CUDA-aware MPI, or pinned staging).
/// Arrivals are appended after the stayers in rank order, as on the host.
/// @code
///   grove::gpu::ExchangeScratch scratch;                     // kept across steps
///   grove::gpu::exchangeParticles(bodies, dinfo, scratch);   // collective, like bodies.exchangeParticle(dinfo)
/// @endcode
/// A particle that no rank can own (non-finite position, outside a fixed root domain) makes every
/// rank throw grove::Error naming it, with nothing moved.
#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <cub/device/device_histogram.cuh>
#include <cub/device/device_radix_sort.cuh>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "grove/comm/comm.hpp"
#include "grove/domain/domain_info.hpp"
#include "grove/gpu/cuda_resources.hpp"
#include "grove/gpu/device_transport.hpp"
#include "grove/gpu/device_particle_system.hpp"
#include "grove/gpu/device_primitives.cuh"
#include "grove/particles/exchange.hpp"

namespace grove::gpu {

namespace kernel {

// Bucket of each particle: 0 stays, 1 + r leaves for rank r; the lowest index that no box holds
// (or whose position is not finite, or outside the root) into *first_bad.
template <class FP>
__global__ void destinationBuckets(const FP* __restrict__ particles, std::size_t n, const Boxd* __restrict__ boxes,
                                   int ranks, int me, Boxd root, bool root_fixed, std::uint32_t* __restrict__ bucket,
                                   std::uint32_t* __restrict__ index, unsigned long long* __restrict__ first_bad) {
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const Vec3d x = positionOf(particles[i]);
  int owner = -1;
  const bool finite = isfinite(x.x) && isfinite(x.y) && isfinite(x.z);
  if (finite && (!root_fixed || root.contains(x)))
    for (int r = 0; r < ranks && owner < 0; ++r)
      if (boxes[r].contains(x)) owner = r;
  if (owner < 0) atomicMin(first_bad, static_cast<unsigned long long>(i));
  bucket[i] = owner < 0 || owner == me ? 0u : static_cast<std::uint32_t>(owner + 1);
  index[i] = static_cast<std::uint32_t>(i);
}

}  // namespace kernel

/// What exchangeParticles keeps between calls: its device buffers and the transport between
/// ranks (set up collectively by the first exchange over a communicator, with CUDA IPC handles
/// exchanged). Keep one per DeviceParticleSystem across a time loop; a fresh one per call
/// allocates and sets the transport up again. Only transport_choice is the caller's to set.
struct ExchangeScratch {
  DeviceVector<Boxd> boxes;                ///< every rank's domain box
  DeviceVector<std::uint32_t> bucket;      ///< each particle's bucket: 0 stays, 1 + r leaves for rank r
  DeviceVector<std::uint32_t> bucket_alt;  ///< the radix sort's second buffer for bucket
  DeviceVector<std::uint32_t> index;       ///< the gather order (stayers, then leavers by rank)
  DeviceVector<std::uint32_t> index_alt;   ///< the radix sort's second buffer for index
  DeviceVector<int> histogram;             ///< particles per bucket
  DeviceVector<unsigned long long> first_bad;  ///< the first particle no rank can own, if any
  CubScratch cub;                          ///< CUB's temporary storage
  TransportChoice transport_choice = TransportChoice::kAuto;  ///< how payloads travel; read when the transport is made
  std::unique_ptr<DeviceTransport> transport;  ///< made by the first exchange over a communicator
  std::optional<Comm> transport_comm;          ///< the communicator the transport was made for
  std::optional<Event> packed;  ///< "leavers packed": made with the transport, on the device in use then
};

/// Moves each particle of psys to the rank whose domain (dinfo.getPosDomain) holds it, from
/// device memory: the device form of ParticleSystem::exchangeParticle. Collective over
/// dinfo.comm().
///
/// Needs: dinfo decomposed (every rank the same domains); fewer than 2^32 particles on a rank.
/// Promises: afterwards every particle of every rank lies in its rank's domain, none lost or
/// duplicated; the stayers keep their order and the arrivals follow in rank order; on several
/// ranks psys.orderGeneration() is incremented (one rank: only the check, nothing moves). A
/// particle no rank can own (non-finite, outside a fixed root) makes every rank throw
/// grove::Error naming it, with nothing moved.
template <class FP>
void exchangeParticles(DeviceParticleSystem<FP>& psys, const DomainInfo& dinfo, ExchangeScratch& scratch) {
  const Comm& comm = dinfo.comm();
  const int ranks = comm.size(), me = comm.rank();
  cudaStream_t stream = psys.stream();
  const std::size_t n = psys.size();
  require(n < (std::size_t{1} << 32), "exchangeParticles", "{} particles exceed the 2^32 an exchange indexes", n);

  // 1. Destinations on the device, against every rank's domain box.
  std::vector<Boxd> boxes(static_cast<std::size_t>(ranks));
  for (int r = 0; r < ranks; ++r) boxes[static_cast<std::size_t>(r)] = dinfo.getPosDomain(r);
  scratch.boxes.assign(boxes.data(), boxes.size(), stream);
  scratch.bucket.resize(n);
  scratch.index.resize(n);
  const unsigned long long none = ~0ull;
  scratch.first_bad.assign(&none, 1, stream);
  if (n > 0) {
    kernel::destinationBuckets<<<blocksFor(n, 256), 256, 0, stream>>>(
        psys.data(), n, scratch.boxes.data(), ranks, me, dinfo.getPosRootDomain(), dinfo.isRootDomainFixed(),
        scratch.bucket.data(), scratch.index.data(), scratch.first_bad.data());
    check(cudaGetLastError(), "destinationBuckets kernel launch");
  }
  const unsigned long long bad = scratch.first_bad.elementToHost(0, stream);
  std::optional<std::string> problem;
  if (bad != none) {
    FP particle;
    check(cudaMemcpyAsync(&particle, psys.data() + bad, sizeof(FP), cudaMemcpyDeviceToHost, stream),
          "cudaMemcpyAsync (unownable particle)");
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize (unownable particle)");
    problem = dinfo.positionProblem(positionOf(particle), static_cast<std::size_t>(bad));
    if (!problem) problem = fmt::format("particle {} lies in no rank's domain box", bad);
  }
  comm.throwIfAnyFailed(problem, "exchangeParticles (device)");
  if (ranks == 1) return;

  // 2. Stable sort by bucket: stayers first in their order, then leavers by destination rank.
  int bits = 1;
  while ((1 << bits) < ranks + 1) ++bits;
  scratch.bucket_alt.resize(n);
  scratch.index_alt.resize(n);
  cub::DoubleBuffer<std::uint32_t> keys(scratch.bucket.data(), scratch.bucket_alt.data());
  cub::DoubleBuffer<std::uint32_t> values(scratch.index.data(), scratch.index_alt.data());
  std::size_t temp_bytes = 0;
  check(cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, keys, values, static_cast<std::int64_t>(n), 0, bits,
                                        stream),
        "cub::DeviceRadixSort::SortPairs (size)");
  check(cub::DeviceRadixSort::SortPairs(scratch.cub.get(temp_bytes), temp_bytes, keys, values,
                                        static_cast<std::int64_t>(n), 0, bits, stream),
        "cub::DeviceRadixSort::SortPairs (buckets)");
  // Bucket counts (0: stayers, 1 + r: to rank r).
  scratch.histogram.resize(static_cast<std::size_t>(ranks) + 1);
  temp_bytes = 0;
  check(cub::DeviceHistogram::HistogramEven(nullptr, temp_bytes, keys.Current(), scratch.histogram.data(), ranks + 2,
                                            0u, static_cast<std::uint32_t>(ranks + 1), static_cast<std::int64_t>(n),
                                            stream),
        "cub::DeviceHistogram::HistogramEven (size)");
  check(cub::DeviceHistogram::HistogramEven(scratch.cub.get(temp_bytes), temp_bytes, keys.Current(),
                                            scratch.histogram.data(), ranks + 2, 0u,
                                            static_cast<std::uint32_t>(ranks + 1), static_cast<std::int64_t>(n), stream),
        "cub::DeviceHistogram::HistogramEven (buckets)");
  psys.reorder(values.Current());  // stayers first, then leavers by destination
  const std::vector<int> histogram = scratch.histogram.toHost(stream);
  const auto staying = static_cast<std::size_t>(histogram[0]);
  std::vector<int> send_counts(static_cast<std::size_t>(ranks), 0);
  for (int r = 0; r < ranks; ++r) send_counts[static_cast<std::size_t>(r)] = histogram[static_cast<std::size_t>(r) + 1];
  const std::vector<int> recv_counts = receiveCounts(comm, send_counts);
  const std::size_t leaving = n - staying;
  std::size_t arriving = 0;
  for (int c : recv_counts) arriving += static_cast<std::size_t>(c);

  // 3. Only the leavers travel, device to device where the transport can.
  if (!scratch.transport || &scratch.transport_comm->handle() != &comm.handle()) {
    scratch.transport = std::make_unique<DeviceTransport>(comm, scratch.transport_choice);
    scratch.transport_comm = comm;
    scratch.packed.emplace();
  }
  std::byte* arena = scratch.transport->sendArena(leaving * sizeof(FP));
  if (leaving > 0)
    check(cudaMemcpyAsync(arena, psys.data() + staying, leaving * sizeof(FP), cudaMemcpyDeviceToDevice, stream),
          "cudaMemcpyAsync (leavers)");
  scratch.packed->record(stream);
  // The leavers must be out of the particle array before arrivals may land on their places (a
  // CUDA-aware MPI receives into it as soon as start() posts; start() would wait for this anyway).
  scratch.packed->synchronize();
  psys.resizeKeep(staying + arriving);
  std::vector<SendBlock> sends;
  std::vector<ReceiveBlock> receives;
  std::size_t out_at = 0, in_at = staying;
  for (int r = 0; r < ranks; ++r) {
    const auto out = static_cast<std::size_t>(send_counts[static_cast<std::size_t>(r)]);
    const auto in = static_cast<std::size_t>(recv_counts[static_cast<std::size_t>(r)]);
    if (out > 0) sends.push_back({r, out_at * sizeof(FP), out * sizeof(FP)});
    if (in > 0) receives.push_back({r, psys.data() + in_at, in * sizeof(FP)});
    out_at += out, in_at += in;
  }
  scratch.transport->start(sends, receives, stream, scratch.packed->get());
  scratch.transport->finish(stream);
}

/// exchangeParticles with a scratch of its own: allocates, and on several ranks sets the
/// transport up, at every call (see ExchangeScratch).
template <class FP>
void exchangeParticles(DeviceParticleSystem<FP>& psys, const DomainInfo& dinfo) {
  ExchangeScratch scratch;
  exchangeParticles(psys, dinfo, scratch);
}

}  // namespace grove::gpu
