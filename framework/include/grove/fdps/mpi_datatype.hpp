#pragma once
/// @file
/// PS::GetDataType<T>(): the MPI datatype of T, for FDPS programs that call MPI themselves
/// (`MPI_Allreduce(&e, &e_sum, 1, PS::GetDataType<PS::F64>(), MPI_SUM, MPI_COMM_WORLD)`).
/// Only compiled where the program defines PARTICLE_SIMULATOR_MPI_PARALLEL, as in FDPS: grove's
/// own headers never include mpi.h (grove/fdps.hpp brings this file in).
#include <mpi.h>

#include <type_traits>

namespace grove::fdps {

namespace detail {
// A type MPI has no name for travels as sizeof(T) bytes: one contiguous type per T, committed
// on first use and kept until MPI_Finalize (which frees it), as FDPS does.
template <class T>
MPI_Datatype contiguousBytesType() {
  static const MPI_Datatype type = [] {
    MPI_Datatype t;
    MPI_Type_contiguous(static_cast<int>(sizeof(T)), MPI_BYTE, &t);
    MPI_Type_commit(&t);
    return t;
  }();
  return type;
}
}  // namespace detail

/// The MPI datatype of T (cv-qualifiers ignored): MPI's own name for the standard arithmetic
/// types (char, short, int, long, long long and their unsigned forms, float, double,
/// long double, bool); any other T travels as sizeof(T) bytes, a contiguous type made and
/// committed on the first call for that T (MPI must be running: after PS::Initialize) and kept
/// until MPI_Finalize. T must be trivially copyable (a compile error otherwise).
template <class T>
MPI_Datatype GetDataType() {
  static_assert(std::is_trivially_copyable_v<T>, "PS::GetDataType<T>: T must be trivially copyable");
  using U = std::remove_cv_t<T>;
  if constexpr (std::is_same_v<U, char>) return MPI_CHAR;
  else if constexpr (std::is_same_v<U, signed char>) return MPI_SIGNED_CHAR;
  else if constexpr (std::is_same_v<U, unsigned char>) return MPI_UNSIGNED_CHAR;
  else if constexpr (std::is_same_v<U, short>) return MPI_SHORT;
  else if constexpr (std::is_same_v<U, unsigned short>) return MPI_UNSIGNED_SHORT;
  else if constexpr (std::is_same_v<U, int>) return MPI_INT;
  else if constexpr (std::is_same_v<U, unsigned int>) return MPI_UNSIGNED;
  else if constexpr (std::is_same_v<U, long>) return MPI_LONG;
  else if constexpr (std::is_same_v<U, unsigned long>) return MPI_UNSIGNED_LONG;
  else if constexpr (std::is_same_v<U, long long>) return MPI_LONG_LONG_INT;
  else if constexpr (std::is_same_v<U, unsigned long long>) return MPI_UNSIGNED_LONG_LONG;
  else if constexpr (std::is_same_v<U, float>) return MPI_FLOAT;
  else if constexpr (std::is_same_v<U, double>) return MPI_DOUBLE;
  else if constexpr (std::is_same_v<U, long double>) return MPI_LONG_DOUBLE;
  else if constexpr (std::is_same_v<U, bool>) return MPI_CXX_BOOL;
  else return detail::contiguousBytesType<U>();
}

/// The (value, index) pair types of MPI_MINLOC / MPI_MAXLOC: MPI_FLOAT_INT for (float, int),
/// MPI_DOUBLE_INT for (double, int); other pairs are a compile error.
template <class Tfloat, class Tint>
MPI_Datatype GetDataType() {
  static_assert(std::is_same_v<Tint, int> && (std::is_same_v<Tfloat, float> || std::is_same_v<Tfloat, double>),
                "PS::GetDataType<Tfloat, Tint>: MPI has pair types for (float, int) and (double, int)");
  if constexpr (std::is_same_v<Tfloat, float>) return MPI_FLOAT_INT;
  else return MPI_DOUBLE_INT;
}

/// A pending nonblocking operation, as FDPS names it (MPI_Request).
using MpiRequest = MPI_Request;

/// FDPS's second spelling: the MPI datatype of the object's type, GetDataType<T>().
template <class T>
MPI_Datatype GetDataType(const T&) {
  return GetDataType<T>();
}

}  // namespace grove::fdps
