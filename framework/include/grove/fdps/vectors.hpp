#pragma once
/// @file
/// FDPS 7.1's scalar and vector names over grove's types (PS::F64, PS::F64vec, ...), its vector
/// algebra on grove::Vec3 (a * b, a ^ b, mixed precision), its constants, and FDPS's printing of
/// vectors and boxes. Part of grove/fdps.hpp.
#include <iomanip>
#include <limits>
#include <ostream>

#include "grove/core/box.hpp"
#include "grove/core/vec3.hpp"

// ---- FDPS's vector algebra on grove::Vec3 -----------------------------------------------------------
// In namespace grove so that argument-dependent lookup finds them wherever FDPS code multiplies
// two F64vecs. grove itself spells these dot() and cross(); FDPS programs write a * b for the
// inner product and a ^ b for the outer one (mind that ^ binds more loosely than + and *).
namespace grove {

/// FDPS's inner product: dot(a, b).
template <class T>
constexpr T operator*(const Vec3<T>& a, const Vec3<T>& b) {
  return dot(a, b);
}
/// FDPS's outer product: cross(a, b). ^ binds more loosely than + and *: parenthesise it.
template <class T>
constexpr Vec3<T> operator^(const Vec3<T>& a, const Vec3<T>& b) {
  return cross(a, b);
}
// FDPS's mixed-precision forms: Vector3's operators are members taking the left operand's type,
// so `f32 + f64` is an F32vec and `f64 * f32` an F64 (the right operand converts). Compound
// assignment (`f32 -= f64`) needs nothing here: grove::Vec3 converts implicitly, as Vector3 does.
/// Mixed-precision sum, as FDPS's: b is converted to a's precision, so the result has a's type
/// (`f32 + f64` is an F32vec).
template <class T, class U>
  requires(!std::same_as<T, U>)
constexpr Vec3<T> operator+(const Vec3<T>& a, const Vec3<U>& b) {
  return a + Vec3<T>(b);
}
/// Mixed-precision difference: b is converted to a's precision, the result has a's type.
template <class T, class U>
  requires(!std::same_as<T, U>)
constexpr Vec3<T> operator-(const Vec3<T>& a, const Vec3<U>& b) {
  return a - Vec3<T>(b);
}
/// Mixed-precision inner product: b is converted to a's precision (`f64 * f32` is an F64).
template <class T, class U>
  requires(!std::same_as<T, U>)
constexpr T operator*(const Vec3<T>& a, const Vec3<U>& b) {
  return dot(a, Vec3<T>(b));
}
/// Mixed-precision outer product: b is converted to a's precision, the result has a's type.
template <class T, class U>
  requires(!std::same_as<T, U>)
constexpr Vec3<T> operator^(const Vec3<T>& a, const Vec3<U>& b) {
  return cross(a, Vec3<T>(b));
}
/// Writes x, y and z separated by spaces, as FDPS's Vector3 prints (the stream's own precision).
template <class T>
std::ostream& operator<<(std::ostream& os, const Vec3<T>& v) {
  return os << v.x << "   " << v.y << "    " << v.z;
}
/// Reads x, y and z, whitespace-separated (the form operator<< writes).
template <class T>
std::istream& operator>>(std::istream& is, Vec3<T>& v) {
  return is >> v.x >> v.y >> v.z;
}
/// DomainInfo's boxes print as FDPS's F64ort does (low, then high), for programs that print them.
/// Sets the stream's precision to 15 digits, which stays set afterwards.
template <class T>
std::ostream& operator<<(std::ostream& os, const Box<T>& b) {
  return os << std::setprecision(15) << b.low << "   " << b.high;
}

}  // namespace grove

namespace grove::fdps {

// ---- scalars -----------------------------------------------------------------------------------------
using S32 = int;  ///< FDPS's 32-bit signed integer.
using U32 = unsigned int;  ///< FDPS's 32-bit unsigned integer.
using S64 = long long int;  ///< FDPS's 64-bit signed integer.
using U64 = unsigned long long int;  ///< FDPS's 64-bit unsigned integer.
using F32 = float;  ///< FDPS's single precision.
using F64 = double;  ///< FDPS's double precision.
using CountT = U64;  ///< FDPS's type of particle counts.
using Count_t = CountT;  ///< FDPS's older name of CountT.
// Superparticle moment precision (FDPS's PARTICLE_SIMULATOR_SPMOM_F32 selects single).
#if defined(PARTICLE_SIMULATOR_SPMOM_F32)
using SSP = S32;  ///< Superparticle moment integer (S32 with PARTICLE_SIMULATOR_SPMOM_F32, else S64).
using FSP = F32;  ///< Superparticle moment precision (F32 with PARTICLE_SIMULATOR_SPMOM_F32, else F64).
#else
using SSP = S64;  ///< Superparticle moment integer (S32 with PARTICLE_SIMULATOR_SPMOM_F32, else S64).
using FSP = F64;  ///< Superparticle moment precision (F32 with PARTICLE_SIMULATOR_SPMOM_F32, else F64).
#endif

// ---- vectors -----------------------------------------------------------------------------------------
/// FDPS's class template name; Vector3<T> is grove::Vec3<T> (T float or double).
template <class T>
using Vector3 = Vec3<T>;
using F32vec = Vec3<F32>;  ///< FDPS's single-precision vector: grove::Vec3<float>.
using F64vec = Vec3<F64>;  ///< FDPS's double-precision vector: grove::Vec3<double>.
using F32vec3 = F32vec;  ///< FDPS's 3-D spelling of F32vec.
using F64vec3 = F64vec;  ///< FDPS's 3-D spelling of F64vec.
using FSPvec = Vec3<FSP>;  ///< Vector of superparticle moment precision (FSP).

inline constexpr S32 DIMENSION = 3;  ///< Number of spatial dimensions (grove is 3-D only).
inline constexpr S32 DIMENSION_LIMIT = 3;  ///< Largest number of dimensions supported: 3.
inline constexpr S32 N_CHILDREN = 8;  ///< Children of a tree cell (an octree).
inline constexpr S32 TREE_LEVEL_LIMIT = 21;  ///< Deepest tree level: 63-bit Morton keys, as FDPS's.
inline constexpr F64 LARGE_DOUBLE = std::numeric_limits<F64>::max() * 0.0625;  ///< A large double: one sixteenth of the largest F64, as FDPS's.
inline constexpr F64 LARGE_FLOAT = std::numeric_limits<F32>::max() * 0.0625;  ///< A large float: one sixteenth of the largest F32, as FDPS's.
inline constexpr S64 LARGE_INT = static_cast<S64>(std::numeric_limits<S32>::max() * 0.0625);  ///< A large integer: one sixteenth of the largest S32, as FDPS's.

}  // namespace grove::fdps
