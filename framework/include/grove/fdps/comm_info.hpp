#pragma once
/// @file
/// PS::CommInfo: FDPS's communicator object. It holds a grove::Comm and offers FDPS's collective
/// calls over it; PS::Comm's static calls are CommInfo's over the world. With
/// PARTICLE_SIMULATOR_MPI_PARALLEL it also converts from and to an MPI_Comm (grove/fdps.hpp has
/// included mpi.h by then). DomainInfo::setCommInfo and ParticleSystem::setCommInfo take one.
#include <climits>
#include <optional>
#include <span>
#include <type_traits>
#include <vector>

#include "grove/comm/comm.hpp"
#include "grove/comm/reduction.hpp"
#include "grove/core/error.hpp"

namespace grove::fdps {

/// FDPS's communicator object over a grove::Comm, or empty (isNull()). Every call but isNull()
/// needs a communicator (groveComm() throws grove::Error otherwise). The collective calls
/// (reductions, broadcast, barrier, create, split) must be made by every rank of the
/// communicator, in the same order.
class CommInfo {
 public:
#if defined(PARTICLE_SIMULATOR_MPI_PARALLEL)
  /// Over comm; MPI_COMM_NULL (FDPS's default) gives an empty CommInfo: set a communicator
  /// before use.
  CommInfo(const MPI_Comm& comm = MPI_COMM_NULL) {  // NOLINT: implicit, as in FDPS
    if (comm != MPI_COMM_NULL) setCommunicator(comm);
  }
  /// Makes this CommInfo use comm (MPI_COMM_WORLD by default). The communicator itself is the
  /// caller's to keep alive (and free). Throws grove::Error for MPI_COMM_NULL.
  void setCommunicator(const MPI_Comm& comm = MPI_COMM_WORLD) { comm_ = ::grove::Comm::fromNative(&comm); }
  /// The MPI communicator this CommInfo uses.
  MPI_Comm getCommunicator() const {
    return *static_cast<const MPI_Comm*>(::grove::detail::nativeComm(groveComm().handle()));
  }
#else
  /// Over the world communicator (a build without PARTICLE_SIMULATOR_MPI_PARALLEL).
  CommInfo() : comm_(::grove::Comm::world()) {}
#endif
  /// Over a grove::Comm.
  explicit CommInfo(::grove::Comm comm) : comm_(std::move(comm)) {}
  /// Over the world communicator (all ranks of the run).
  static CommInfo world() { return CommInfo(::grove::Comm::world()); }

  /// Collective: the n ranks listed (ranks of this communicator, in that order) as a new
  /// communicator; an empty CommInfo on the other ranks. Throws grove::Error for a rank outside
  /// [0, getNumberOfProc()).
  CommInfo create(const int n, const int rank[]) const {
    CommInfo out(Empty{});
    out.comm_ = groveComm().subset(std::span<const int>(rank, static_cast<std::size_t>(n)));
    return out;
  }
  /// Collective: ranks of equal colour together, ordered by key (then by rank). Throws
  /// grove::Error for a negative colour (FDPS's MPI_UNDEFINED is not offered).
  CommInfo split(int color, int key) const { return CommInfo(groveComm().split(color, key)); }

  /// True when this CommInfo holds no communicator (MPI_COMM_NULL, or a rank left out by create).
  bool isNull() const { return !comm_.has_value(); }
  /// This process's rank in the communicator.
  int getRank() const { return groveComm().rank(); }
  /// The number of ranks in the communicator.
  int getNumberOfProc() const { return groveComm().size(); }
  /// Collective: returns when every rank has called it.
  void barrier() const { groveComm().barrier(); }

  /// Collective: true on every rank when local is true on every rank.
  bool synchronizeConditionalBranchAND(const bool local) const { return groveComm().allreduceMin(local ? 1 : 0) == 1; }
  /// Collective: true on every rank when local is true on any rank.
  bool synchronizeConditionalBranchOR(const bool local) const { return groveComm().allreduceMax(local ? 1 : 0) == 1; }

  // Reductions of arithmetic types, F32vec/F64vec, F32mat/F64mat.
  /// Collective: the sum of value over all ranks, on every rank. T is arithmetic, F32vec/F64vec,
  /// F32mat/F64mat or has a grove::ReductionLayout (vectors and matrices element by element);
  /// another T is a compile error.
  template <class T>
  T getSum(const T& value) const {
    checkReducible<T>();
    return groveComm().allreduceSum(value);
  }
  /// Collective: the smallest value over all ranks (element by element), on every rank; T as
  /// for getSum.
  template <class T>
  T getMinValue(const T& value) const {
    checkReducible<T>();
    return groveComm().allreduceMin(value);
  }
  /// Collective: the largest value over all ranks (element by element), on every rank; T as
  /// for getSum.
  template <class T>
  T getMaxValue(const T& value) const {
    checkReducible<T>();
    return groveComm().allreduceMax(value);
  }
  /// Collective MPI_MINLOC: f_out is the smallest f_in of all ranks and i_out the i_in that
  /// came with it (the smallest such i_in on a tie), on every rank. Typically i_in is the rank.
  /// Tfloat must be floating point and Tint integral (a compile error otherwise).
  template <class Tfloat, class Tint>
  void getMinValue(const Tfloat& f_in, const Tint& i_in, Tfloat& f_out, Tint& i_out) const {
    locate(f_in, i_in, f_out, i_out, false);
  }
  /// Collective MPI_MAXLOC, likewise: the largest f_in and its i_in (the smallest on a tie).
  template <class Tfloat, class Tint>
  void getMaxValue(const Tfloat& f_in, const Tint& i_in, Tfloat& f_out, Tint& i_out) const {
    locate(f_in, i_in, f_out, i_out, true);
  }

  /// Collective: rank src's n values arrive in values on every rank. T must be trivially
  /// copyable (a compile error otherwise); every rank passes the same n and src. Throws
  /// grove::Error on a rank whose n differs from src's.
  template <class T>
  void broadcast(T* values, const int n, const int src = 0) const {
    static_assert(Transferable<T>, "PS::Comm: the value type must be trivially copyable");
    std::vector<T> buffer;
    if (getRank() == src) buffer.assign(values, values + n);
    groveComm().broadcast(buffer, src);
    require(static_cast<int>(buffer.size()) == n, "PS::Comm::broadcast",
            "rank {} broadcast {} values, this rank asked for {}", src, buffer.size(), n);
    std::copy(buffer.begin(), buffer.end(), values);
  }

  /// Grove's communicator (DomainInfo::setCommInfo and ParticleSystem::setCommInfo read it).
  /// Throws grove::Error when this CommInfo is empty (isNull()).
  const ::grove::Comm& groveComm() const {
    require(comm_.has_value(), "PS::CommInfo",
            "this CommInfo holds no communicator (MPI_COMM_NULL, or a rank left out by create)");
    return *comm_;
  }

 private:
  struct Empty {};
  explicit CommInfo(Empty) {}

  template <class T>
  static constexpr void checkReducible() {
    static_assert(Reducible<T>,
                  "PS::Comm reductions take arithmetic types, F32vec/F64vec or F32mat/F64mat (or a type with a "
                  "grove::ReductionLayout)");
  }
  template <class Tfloat, class Tint>
  void locate(const Tfloat& f_in, const Tint& i_in, Tfloat& f_out, Tint& i_out, bool largest) const {
    static_assert(std::is_floating_point_v<Tfloat> && std::is_integral_v<Tint>,
                  "PS::Comm::getMinValue/getMaxValue(f, i, f_out, i_out): f floating point, i integral");
    const ::grove::Comm& comm = groveComm();
    const Tfloat best = largest ? comm.allreduceMax(f_in) : comm.allreduceMin(f_in);
    i_out = comm.allreduceMin(f_in == best ? i_in : std::numeric_limits<Tint>::max());
    f_out = best;
  }

  std::optional<::grove::Comm> comm_;
};

}  // namespace grove::fdps
