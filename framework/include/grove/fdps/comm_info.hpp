#pragma once
// PS::CommInfo: FDPS's communicator object. It holds a grove::Comm and offers FDPS's collective
// calls over it; PS::Comm's static calls are CommInfo's over the world. With
// PARTICLE_SIMULATOR_MPI_PARALLEL it also converts from and to an MPI_Comm (grove/fdps.hpp has
// included mpi.h by then). DomainInfo::setCommInfo and ParticleSystem::setCommInfo take one.
#include <climits>
#include <optional>
#include <span>
#include <type_traits>
#include <vector>

#include "grove/comm/comm.hpp"
#include "grove/comm/reduction.hpp"
#include "grove/core/error.hpp"

namespace grove::fdps {

class CommInfo {
 public:
#if defined(PARTICLE_SIMULATOR_MPI_PARALLEL)
  // MPI_COMM_NULL (FDPS's default) gives an empty CommInfo: set a communicator before use.
  CommInfo(const MPI_Comm& comm = MPI_COMM_NULL) {  // NOLINT: implicit, as in FDPS
    if (comm != MPI_COMM_NULL) setCommunicator(comm);
  }
  // The communicator itself is the caller's to keep alive (and free).
  void setCommunicator(const MPI_Comm& comm = MPI_COMM_WORLD) { comm_ = ::grove::Comm::fromNative(&comm); }
  MPI_Comm getCommunicator() const {
    return *static_cast<const MPI_Comm*>(::grove::detail::nativeComm(groveComm().handle()));
  }
#else
  CommInfo() : comm_(::grove::Comm::world()) {}
#endif
  explicit CommInfo(::grove::Comm comm) : comm_(std::move(comm)) {}
  static CommInfo world() { return CommInfo(::grove::Comm::world()); }

  // Collective: the n ranks listed as a new communicator (empty on the other ranks).
  CommInfo create(const int n, const int rank[]) const {
    CommInfo out(Empty{});
    out.comm_ = groveComm().subset(std::span<const int>(rank, static_cast<std::size_t>(n)));
    return out;
  }
  // Collective: ranks of equal colour (>= 0) together, ordered by key.
  CommInfo split(int color, int key) const { return CommInfo(groveComm().split(color, key)); }

  bool isNull() const { return !comm_.has_value(); }
  int getRank() const { return groveComm().rank(); }
  int getNumberOfProc() const { return groveComm().size(); }
  void barrier() const { groveComm().barrier(); }

  bool synchronizeConditionalBranchAND(const bool local) const { return groveComm().allreduceMin(local ? 1 : 0) == 1; }
  bool synchronizeConditionalBranchOR(const bool local) const { return groveComm().allreduceMax(local ? 1 : 0) == 1; }

  // Reductions of arithmetic types, F32vec/F64vec, F32mat/F64mat.
  template <class T>
  T getSum(const T& value) const {
    checkReducible<T>();
    return groveComm().allreduceSum(value);
  }
  template <class T>
  T getMinValue(const T& value) const {
    checkReducible<T>();
    return groveComm().allreduceMin(value);
  }
  template <class T>
  T getMaxValue(const T& value) const {
    checkReducible<T>();
    return groveComm().allreduceMax(value);
  }
  // MPI_MINLOC: f_out is the smallest f_in of all ranks and i_out the i_in that came with it
  // (the smallest such i_in on a tie). Typically i_in is the rank.
  template <class Tfloat, class Tint>
  void getMinValue(const Tfloat& f_in, const Tint& i_in, Tfloat& f_out, Tint& i_out) const {
    locate(f_in, i_in, f_out, i_out, false);
  }
  // MPI_MAXLOC, likewise.
  template <class Tfloat, class Tint>
  void getMaxValue(const Tfloat& f_in, const Tint& i_in, Tfloat& f_out, Tint& i_out) const {
    locate(f_in, i_in, f_out, i_out, true);
  }

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

  // Grove's communicator (DomainInfo::setCommInfo and ParticleSystem::setCommInfo read it).
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
