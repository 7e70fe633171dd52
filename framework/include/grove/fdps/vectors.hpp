#pragma once
// FDPS 7.1's scalar and vector names over grove's types (PS::F64, PS::F64vec, ...), its vector
// algebra on grove::Vec3 (a * b, a ^ b, mixed precision), its constants, and FDPS's printing of
// vectors and boxes. Part of grove/fdps.hpp.
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

template <class T>
constexpr T operator*(const Vec3<T>& a, const Vec3<T>& b) {
  return dot(a, b);
}
template <class T>
constexpr Vec3<T> operator^(const Vec3<T>& a, const Vec3<T>& b) {
  return cross(a, b);
}
// FDPS's mixed-precision forms: Vector3's operators are members taking the left operand's type,
// so `f32 + f64` is an F32vec and `f64 * f32` an F64 (the right operand converts). Compound
// assignment (`f32 -= f64`) needs nothing here: grove::Vec3 converts implicitly, as Vector3 does.
template <class T, class U>
  requires(!std::same_as<T, U>)
constexpr Vec3<T> operator+(const Vec3<T>& a, const Vec3<U>& b) {
  return a + Vec3<T>(b);
}
template <class T, class U>
  requires(!std::same_as<T, U>)
constexpr Vec3<T> operator-(const Vec3<T>& a, const Vec3<U>& b) {
  return a - Vec3<T>(b);
}
template <class T, class U>
  requires(!std::same_as<T, U>)
constexpr T operator*(const Vec3<T>& a, const Vec3<U>& b) {
  return dot(a, Vec3<T>(b));
}
template <class T, class U>
  requires(!std::same_as<T, U>)
constexpr Vec3<T> operator^(const Vec3<T>& a, const Vec3<U>& b) {
  return cross(a, Vec3<T>(b));
}
template <class T>
std::ostream& operator<<(std::ostream& os, const Vec3<T>& v) {
  return os << v.x << "   " << v.y << "    " << v.z;
}
template <class T>
std::istream& operator>>(std::istream& is, Vec3<T>& v) {
  return is >> v.x >> v.y >> v.z;
}
// DomainInfo's boxes print as FDPS's F64ort does (low, then high), for programs that print them.
template <class T>
std::ostream& operator<<(std::ostream& os, const Box<T>& b) {
  return os << std::setprecision(15) << b.low << "   " << b.high;
}

}  // namespace grove

namespace grove::fdps {

// ---- scalars -----------------------------------------------------------------------------------------
using S32 = int;
using U32 = unsigned int;
using S64 = long long int;
using U64 = unsigned long long int;
using F32 = float;
using F64 = double;
using CountT = U64;
using Count_t = CountT;
// Superparticle moment precision (FDPS's PARTICLE_SIMULATOR_SPMOM_F32 selects single).
#if defined(PARTICLE_SIMULATOR_SPMOM_F32)
using SSP = S32;
using FSP = F32;
#else
using SSP = S64;
using FSP = F64;
#endif

// ---- vectors -----------------------------------------------------------------------------------------
// FDPS's class template name; Vector3<T> is grove::Vec3<T> (T float or double).
template <class T>
using Vector3 = Vec3<T>;
using F32vec = Vec3<F32>;
using F64vec = Vec3<F64>;
using F32vec3 = F32vec;
using F64vec3 = F64vec;
using FSPvec = Vec3<FSP>;

inline constexpr S32 DIMENSION = 3;
inline constexpr S32 DIMENSION_LIMIT = 3;
inline constexpr S32 N_CHILDREN = 8;
inline constexpr S32 TREE_LEVEL_LIMIT = 21;  // 63-bit Morton keys, as FDPS's
inline constexpr F64 LARGE_DOUBLE = std::numeric_limits<F64>::max() * 0.0625;
inline constexpr F64 LARGE_FLOAT = std::numeric_limits<F32>::max() * 0.0625;
inline constexpr S64 LARGE_INT = static_cast<S64>(std::numeric_limits<S32>::max() * 0.0625);

}  // namespace grove::fdps
