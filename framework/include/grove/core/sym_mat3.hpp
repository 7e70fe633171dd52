#pragma once
/// @file
/// grove::SymMat3<T>, a symmetric 3x3 matrix (the tree's quadrupoles; FDPS's F64mat converts to it).
#include <concepts>

#include "grove/core/vec3.hpp"

namespace grove {

/// A symmetric 3x3 matrix (FDPS's F64mat converts to it): six independent components, zero by
/// default.
template <std::floating_point T>
struct SymMat3 {
  /// The components: xx, yy, zz on the diagonal, xy, xz, yz off it (each stands for both
  /// symmetric entries).
  T xx{}, yy{}, zz{}, xy{}, xz{}, yz{};
  /// @var yy
  /// the yy component (diagonal)

  /// @var zz
  /// the zz component (diagonal)

  /// @var xy
  /// the xy = yx component

  /// @var xz
  /// the xz = zx component

  /// @var yz
  /// the yz = zy component


  /// Adds o component by component.
  constexpr SymMat3& operator+=(const SymMat3& o) {
    xx += o.xx; yy += o.yy; zz += o.zz; xy += o.xy; xz += o.xz; yz += o.yz;
    return *this;
  }
  /// Multiplies every component by s.
  constexpr SymMat3& operator*=(T s) {
    xx *= s; yy *= s; zz *= s; xy *= s; xz *= s; yz *= s;
    return *this;
  }
  /// Component-wise sum.
  friend constexpr SymMat3 operator+(SymMat3 a, const SymMat3& b) { return a += b; }
  /// Every component times s.
  friend constexpr SymMat3 operator*(T s, SymMat3 a) { return a *= s; }
  /// Equal components.
  friend constexpr bool operator==(const SymMat3&, const SymMat3&) = default;
  /// xx + yy + zz.
  constexpr T trace() const { return xx + yy + zz; }
  /// The matrix times a vector.
  constexpr Vec3<T> operator*(const Vec3<T>& v) const {
    return {xx * v.x + xy * v.y + xz * v.z, xy * v.x + yy * v.y + yz * v.z, xz * v.x + yz * v.y + zz * v.z};
  }
};

using SymMat3d = SymMat3<double>;  ///< a symmetric matrix of doubles
using SymMat3f = SymMat3<float>;   ///< a symmetric matrix of floats

/// w * (a b^T + b a^T) / 2: the symmetric part of an outer product.
template <class T>
constexpr SymMat3<T> symmetricOuter(const Vec3<T>& a, const Vec3<T>& b, T w = 1) {
  return {w * a.x * b.x,
          w * a.y * b.y,
          w * a.z * b.z,
          w * T(0.5) * (a.x * b.y + a.y * b.x),
          w * T(0.5) * (a.x * b.z + a.z * b.x),
          w * T(0.5) * (a.y * b.z + a.z * b.y)};
}

}  // namespace grove
