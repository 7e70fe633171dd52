#pragma once
/// @file
/// Particle exchange on the host: every particle moves to the rank whose domain box holds it. A
/// rank tells each rank it sends to how many particles follow (a sparse exchange: no message
/// between ranks with nothing for each other, no all-to-all of counts), then payloads travel
/// point-to-point. Particles that stay keep their order; arrivals follow in rank order.
/// ParticleSystem::exchangeParticle calls exchangeParticles; the device form is in
/// grove/particles/exchange_gpu.cuh.
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "grove/comm/comm.hpp"
#include "grove/domain/domain_info.hpp"
#include "grove/core/host_loop.hpp"
#include "grove/core/particle_traits.hpp"

namespace grove {

namespace detail {

inline constexpr int kExchangeTag = 0x6701;

// Destination of each particle (none kept when there is one rank: every particle stays), and how
// many go to each rank; the first unownable particle (lowest index) is reported.
template <class FP>
std::vector<int> destinationRanks(std::span<const FP> particles, const DomainInfo& dinfo, std::vector<int>& counts,
                                  std::optional<std::string>& problem) {
  const int ranks = dinfo.comm().size();
  const bool one_rank = ranks == 1;
  std::vector<int> dest(one_rank ? 0 : particles.size());
  counts.assign(static_cast<std::size_t>(ranks), 0);
  int* count = counts.data();
  const std::int64_t n = static_cast<std::int64_t>(particles.size());
  std::int64_t first_bad = n;
  const auto place = [&](std::int64_t i, std::int64_t& bad, int* per_rank) {
    const Vec3d pos = positionOf(particles[static_cast<std::size_t>(i)]);
    if (!dinfo.canOwn(pos)) {
      bad = std::min(bad, i);
      if (!one_rank) dest[static_cast<std::size_t>(i)] = -1;
    } else if (!one_rank) {
      const int d = dinfo.whichRank(pos);
      dest[static_cast<std::size_t>(i)] = d;
      ++per_rank[d];
    }
  };
  if (hostLoopsShareThreads()) {
#pragma omp parallel for reduction(min : first_bad) reduction(+ : count[:ranks]) schedule(static)
    for (std::int64_t i = 0; i < n; ++i) place(i, first_bad, count);
  } else {
    for (std::int64_t i = 0; i < n; ++i) place(i, first_bad, count);
  }
  if (one_rank) counts[0] = static_cast<int>(n);
  if (first_bad < n) {
    const auto i = static_cast<std::size_t>(first_bad);
    problem = *dinfo.positionProblem(positionOf(particles[i]), i);
  }
  return dest;
}

}  // namespace detail

/// Collective over comm: how many items each rank sends this one (result[r]), given how many this
/// rank sends each (send_counts[r]): one message per non-empty pair (Comm::exchangeSparse), not
/// an all-to-all.
///
/// Needs: send_counts.size() == comm.size(); send_counts[comm.rank()] is ignored (result[me] is 0).
/// Promises: a vector of comm.size() counts.
inline std::vector<int> receiveCounts(const Comm& comm, std::span<const int> send_counts) {
  std::vector<SparseMessage<int>> to;
  for (std::size_t r = 0; r < send_counts.size(); ++r)
    if (send_counts[r] > 0 && static_cast<int>(r) != comm.rank()) to.push_back({static_cast<int>(r), send_counts[r]});
  std::vector<int> counts(static_cast<std::size_t>(comm.size()), 0);
  for (const SparseMessage<int>& m : comm.exchangeSparse(to)) counts[static_cast<std::size_t>(m.rank)] += m.value;
  return counts;
}

/// Collective over comm: sends bucket r of `send` (send_counts[r] items, buckets in rank order,
/// none for this rank) to rank r, and receives recv_counts[r] items from each rank r into `into`,
/// in rank order. Point-to-point between the ranks that have something for each other; returns
/// when every send and receive has completed. The host exchange below and the device one
/// (grove/particles/exchange_gpu.cuh, through pinned buffers) share it.
///
/// Needs: send_counts and recv_counts of comm.size() entries each, recv_counts as returned by
/// receiveCounts for these send_counts; `send` holding the sum of send_counts items and `into`
/// room for the sum of recv_counts; T trivially copyable.
template <class T>
void swapBuckets(const Comm& comm, const T* send, std::span<const int> send_counts, T* into,
                 std::span<const int> recv_counts) {
  const int ranks = comm.size();
  std::vector<Request> requests;
  std::size_t recv_offset = 0;
  for (int r = 0; r < ranks; ++r) {
    const auto c = static_cast<std::size_t>(recv_counts[static_cast<std::size_t>(r)]);
    if (c == 0) continue;
    requests.push_back(comm.irecv(std::span<T>(into + recv_offset, c), r, detail::kExchangeTag));
    recv_offset += c;
  }
  std::size_t send_offset = 0;
  for (int r = 0; r < ranks; ++r) {
    const auto c = static_cast<std::size_t>(send_counts[static_cast<std::size_t>(r)]);
    if (c == 0) continue;
    requests.push_back(comm.isend(std::span<const T>(send + send_offset, c), r, detail::kExchangeTag));
    send_offset += c;
  }
  waitAll(requests);
}

/// Collective over dinfo.comm(). On return every particle of every rank lies in its rank's
/// domain, and the union of particles is unchanged: particles that stay keep their order, arrivals
/// follow in rank order. Throws grove::Error on every rank, with nothing moved, when any rank holds
/// a particle that no rank can own (non-finite position, outside a fixed root domain).
///
/// Needs: FP trivially copyable, with a position (grove/core/particle_traits.hpp); every rank
/// calling with the same decomposition (as after DomainInfo::decomposeDomainAll).
template <class FP, class Alloc>
void exchangeParticles(std::vector<FP, Alloc>& particles, const DomainInfo& dinfo) {
  static_assert(std::is_trivially_copyable_v<FP>,
                "grove::exchangeParticle: the particle type must be trivially copyable to travel between ranks");
  const Comm& comm = dinfo.comm();
  const int ranks = comm.size(), me = comm.rank();

  std::optional<std::string> problem;
  std::vector<int> send_counts;
  const std::vector<int> dest = detail::destinationRanks<FP>(particles, dinfo, send_counts, problem);
  comm.throwIfAnyFailed(problem, "exchangeParticle");
  if (ranks == 1) return;  // checked; every particle stays where it is

  // Bucket the leaving particles by destination (counting sort) and compact the staying ones.
  const std::size_t staying = static_cast<std::size_t>(send_counts[static_cast<std::size_t>(me)]);
  send_counts[static_cast<std::size_t>(me)] = 0;
  std::vector<std::size_t> send_offsets(static_cast<std::size_t>(ranks) + 1, 0);
  for (int r = 0; r < ranks; ++r)
    send_offsets[static_cast<std::size_t>(r) + 1] =
        send_offsets[static_cast<std::size_t>(r)] + static_cast<std::size_t>(send_counts[static_cast<std::size_t>(r)]);
  std::vector<FP> send_buffer(send_offsets.back());
  if (send_offsets.back() > 0) {  // usually most particles stay: move only what must move
    std::vector<std::size_t> cursor(send_offsets.begin(), send_offsets.end() - 1);
    std::size_t kept = 0;
    for (std::size_t i = 0; i < particles.size(); ++i) {
      const auto d = static_cast<std::size_t>(dest[i]);
      if (dest[i] != me) {
        send_buffer[cursor[d]++] = particles[i];
      } else {
        if (kept != i) particles[kept] = particles[i];
        ++kept;
      }
    }
  }

  const std::vector<int> recv_counts = receiveCounts(comm, send_counts);
  std::size_t arriving = 0;
  for (int c : recv_counts) arriving += static_cast<std::size_t>(c);
  particles.resize(staying + arriving);

  swapBuckets(comm, send_buffer.data(), std::span<const int>(send_counts), particles.data() + staying,
              std::span<const int>(recv_counts));
}

}  // namespace grove
