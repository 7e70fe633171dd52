#pragma once
/// @file
/// FDPS 7.1's static class PS::Comm over the world grove::Comm (ranks, threads, reductions,
/// broadcasts, gathers). Part of grove/fdps.hpp, which opens mpi.h for programs built with
/// PARTICLE_SIMULATOR_MPI_PARALLEL.
#include <vector>

#if defined(_OPENMP)
#include <omp.h>
#endif

#include "grove/comm/comm.hpp"
#include "grove/comm/reduction.hpp"
#include "grove/fdps/comm_info.hpp"
#include "grove/fdps/initialize.hpp"
#include "grove/fdps/matrix_sym.hpp"
#include "grove/fdps/orthotope.hpp"
#include "grove/fdps/vectors.hpp"

namespace grove::fdps {

// ---- Comm: FDPS's static communication class, over the world grove::Comm -------------------------------
/// FDPS's static communication class, over the world grove::Comm (all ranks of the run). Needs
/// a started runtime (PS::Initialize). The collective calls must be made by every rank, in the
/// same order, with the same root (src / dst), from the master thread (grove::Runtime asks MPI
/// for MPI_THREAD_FUNNELED).
/// Buffers are raw pointers sized by the caller, as in FDPS; the value types of the data calls
/// must be trivially copyable.
class Comm {
 public:
  Comm() = delete;

  /// This process's rank in the world (0 without MPI).
  static S32 getRank() { return world().rank(); }
  /// The number of ranks in the world (1 without MPI).
  static S32 getNumberOfProc() { return world().size(); }
  /// OpenMP threads per rank (omp_get_max_threads; 1 without OpenMP).
  static S32 getNumberOfThread() {
#if defined(_OPENMP)
    return omp_get_max_threads();
#else
    return 1;
#endif
  }
  /// Threads in the current parallel region (1 outside one, or without OpenMP).
  static S32 getNumThreads() {
#if defined(_OPENMP)
    return omp_get_num_threads();
#else
    return 1;
#endif
  }
  /// This thread's number in the current parallel region (0 outside one, or without OpenMP).
  static S32 getThreadNum() {
#if defined(_OPENMP)
    return omp_get_thread_num();
#else
    return 0;
#endif
  }

  /// Collective: returns when every rank has called it.
  static void barrier() { world().barrier(); }
#if defined(PARTICLE_SIMULATOR_MPI_PARALLEL)
  /// The communicator the PS::Comm calls use (MPI_COMM_WORLD, as in FDPS). Only with
  /// PARTICLE_SIMULATOR_MPI_PARALLEL.
  static MPI_Comm getCommunicator() {
    return *static_cast<const MPI_Comm*>(::grove::detail::nativeComm(world().handle()));
  }
#endif
  /// Collective: true on every rank when local is true on every rank.
  static bool synchronizeConditionalBranchAND(const bool& local) { return info().synchronizeConditionalBranchAND(local); }
  /// Collective: true on every rank when local is true on any rank.
  static bool synchronizeConditionalBranchOR(const bool& local) { return info().synchronizeConditionalBranchOR(local); }

  // ---- reductions: arithmetic types, F32vec/F64vec, F32mat/F64mat (CommInfo's, over the world) ----
  /// Collective: the sum of value over all ranks, on every rank (CommInfo::getSum: arithmetic
  /// types, F32vec/F64vec and F32mat/F64mat element by element).
  template <class T>
  static T getSum(const T& value) {
    return info().getSum(value);
  }
  /// Collective: the smallest value over all ranks (element by element), on every rank.
  template <class T>
  static T getMinValue(const T& value) {
    return info().getMinValue(value);
  }
  /// Collective: the largest value over all ranks (element by element), on every rank.
  template <class T>
  static T getMaxValue(const T& value) {
    return info().getMaxValue(value);
  }
  /// Collective MPI_MINLOC: f_out is the smallest f_in of all ranks and i_out the i_in that came
  /// with it (the smallest such i_in on a tie), on every rank. Typically i_in is the rank. Tfloat
  /// floating point, Tint integral.
  template <class Tfloat, class Tint>
  static void getMinValue(const Tfloat& f_in, const Tint& i_in, Tfloat& f_out, Tint& i_out) {
    info().getMinValue(f_in, i_in, f_out, i_out);
  }
  /// Collective MPI_MAXLOC: the largest f_in of all ranks and its i_in (the smallest on a tie).
  template <class Tfloat, class Tint>
  static void getMaxValue(const Tfloat& f_in, const Tint& i_in, Tfloat& f_out, Tint& i_out) {
    info().getMaxValue(f_in, i_in, f_out, i_out);
  }

  // ---- broadcast, gather, scatter, all-to-all (T trivially copyable) ------------------------------
  /// Collective: rank src's n values arrive in values on every rank (every rank passes the same
  /// n). Throws grove::Error on a rank whose n differs from src's.
  template <class T>
  static void broadcast(T* values, const int n, const int src = 0) {
    info().broadcast(values, n, src);
  }
  /// Collective: n values from every rank, in rank order, at recv on dst (room for all of them
  /// there; recv is not touched elsewhere).
  template <class T>
  static void gather(const T* send, const int n, T* recv, const int dst = 0) {
    std::vector<int> counts;
    const auto all = world().gatherv(std::span<const T>(send, static_cast<std::size_t>(n)), dst, &counts);
    if (getRank() == dst) std::copy(all.begin(), all.end(), recv);
  }
  /// Collective: n_send values from every rank; on dst, rank r's land at recv + n_recv_disp[r]
  /// (n_recv[r] of them). recv, n_recv and n_recv_disp are read only on dst, which throws
  /// grove::Error when a rank's n_send differs from its n_recv entry.
  template <class T>
  static void gatherV(const T* send, const int n_send, T* recv, const int* n_recv, const int* n_recv_disp,
                      const int dst = 0) {
    std::vector<int> counts;
    const auto all = world().gatherv(std::span<const T>(send, static_cast<std::size_t>(n_send)), dst, &counts);
    if (getRank() == dst) unpack(all, counts, recv, n_recv, n_recv_disp, "PS::Comm::gatherV");
  }
  /// Collective: n values from every rank, in rank order, at recv on every rank (room for all).
  template <class T>
  static void allGather(const T* send, const int n, T* recv) {
    const auto all = world().allgatherv(std::span<const T>(send, static_cast<std::size_t>(n)));
    std::copy(all.begin(), all.end(), recv);
  }
  /// Collective: n_send values from every rank; on every rank, rank r's land at
  /// recv + n_recv_disp[r] (n_recv[r] of them). Throws grove::Error when a rank's n_send differs
  /// from its n_recv entry.
  template <class T>
  static void allGatherV(const T* send, const int n_send, T* recv, const int* n_recv, const int* n_recv_disp) {
    std::vector<int> counts;
    const auto all = world().allgatherv(std::span<const T>(send, static_cast<std::size_t>(n_send)), &counts);
    unpack(all, counts, recv, n_recv, n_recv_disp, "PS::Comm::allGatherV");
  }
  /// Collective: src sends n values to each rank (rank r gets send[r n, (r+1) n) at recv). send
  /// (n times the rank count values) and n are read only on src.
  template <class T>
  static void scatter(const T* send, const int n, T* recv, const int src = 0) {
    const int ranks = getNumberOfProc();
    std::vector<int> counts(static_cast<std::size_t>(ranks), getRank() == src ? n : 0);
    std::vector<T> out(send, send + (getRank() == src ? static_cast<std::size_t>(n) * ranks : 0));
    const auto mine = toEachRank(out, counts, src);
    std::copy(mine.begin(), mine.end(), recv);
  }
  /// Collective: src sends n_send[r] values from send + n_send_disp[r] to rank r; each receives
  /// n_recv at recv. send, n_send and n_send_disp are read only on src; a rank that receives
  /// another number than n_recv throws grove::Error.
  template <class T>
  static void scatterV(const T* send, const int* n_send, const int* n_send_disp, T* recv, const int n_recv,
                       const int src = 0) {
    const int ranks = getNumberOfProc();
    std::vector<int> counts(static_cast<std::size_t>(ranks), 0);
    std::vector<T> out;
    if (getRank() == src) {
      for (int r = 0; r < ranks; ++r) {
        counts[static_cast<std::size_t>(r)] = n_send[r];
        out.insert(out.end(), send + n_send_disp[r], send + n_send_disp[r] + n_send[r]);
      }
    }
    const auto mine = toEachRank(out, counts, src);
    require(static_cast<int>(mine.size()) == n_recv, "PS::Comm::scatterV", "received {} values, expected {}",
            mine.size(), n_recv);
    std::copy(mine.begin(), mine.end(), recv);
  }
  /// Collective: n values to every rank: send[r n, (r+1) n) goes to rank r; recv gets n from
  /// each rank, in rank order (n times the rank count values).
  template <class T>
  static void allToAll(const T* send, const int n, T* recv) {
    const int ranks = getNumberOfProc();
    const std::vector<int> counts(static_cast<std::size_t>(ranks), n);
    const auto all = world().alltoallv(std::span<const T>(send, static_cast<std::size_t>(n) * ranks),
                                       std::span<const int>(counts));
    std::copy(all.begin(), all.end(), recv);
  }
  /// Collective: n_send[r] values from send + n_send_disp[r] go to rank r; rank r's arrive at
  /// recv + n_recv_disp[r]. Throws grove::Error when a rank sent a number other than the
  /// receiver's n_recv entry for it.
  template <class T>
  static void allToAllV(const T* send, const int* n_send, const int* n_send_disp, T* recv, const int* n_recv,
                        const int* n_recv_disp) {
    const int ranks = getNumberOfProc();
    std::vector<T> packed;
    std::vector<int> counts(static_cast<std::size_t>(ranks));
    for (int r = 0; r < ranks; ++r) {
      counts[static_cast<std::size_t>(r)] = n_send[r];
      packed.insert(packed.end(), send + n_send_disp[r], send + n_send_disp[r] + n_send[r]);
    }
    std::vector<int> got;
    const auto all = world().alltoallv(std::span<const T>(packed), std::span<const int>(counts), &got);
    unpack(all, got, recv, n_recv, n_recv_disp, "PS::Comm::allToAllV");
  }

  // ---- point to point (blocking) --------------------------------------------------------------
  /// Blocking send of n values to rank dst with tag; returns 0 when values may be reused (which
  /// may wait for the matching recv).
  template <class T>
  static int send(const T* values, const int n, const int dst = 0, const int tag = 0) {
    world().isend(std::span<const T>(values, static_cast<std::size_t>(n)), dst, tag).wait();
    return 0;
  }
  /// Blocking receive of a message of at most n values from rank src with tag into values;
  /// returns 0 once it has arrived.
  template <class T>
  static int recv(T* values, const int n, const int src = 0, const int tag = 0) {
    world().irecv(std::span<T>(values, static_cast<std::size_t>(n)), src, tag).wait();
    return 0;
  }

 private:
  static ::grove::Comm world() { return ::grove::Comm::world(); }
  static CommInfo info() { return CommInfo::world(); }

  template <class T>
  static std::vector<T> toEachRank(const std::vector<T>& out, const std::vector<int>& counts, int /*src*/) {
    return world().alltoallv(std::span<const T>(out), std::span<const int>(counts));
  }
  // Places each rank's block (blocks back to back in `all`, lengths `counts`) at its displacement.
  template <class T>
  static void unpack(const std::vector<T>& all, const std::vector<int>& counts, T* recv, const int* n_recv,
                     const int* n_recv_disp, const char* what) {
    std::size_t offset = 0;
    for (std::size_t r = 0; r < counts.size(); ++r) {
      require(counts[r] == n_recv[r], what, "rank {} sent {} values, but n_recv[{}] = {}", r, counts[r], r, n_recv[r]);
      std::copy(all.begin() + static_cast<std::ptrdiff_t>(offset),
                all.begin() + static_cast<std::ptrdiff_t>(offset) + counts[r], recv + n_recv_disp[r]);
      offset += static_cast<std::size_t>(counts[r]);
    }
  }
};

}  // namespace grove::fdps
