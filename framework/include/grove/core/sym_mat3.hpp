#pragma once
// A symmetric 3x3 matrix (FDPS's F64mat): six independent components.
#include <concepts>

#include "grove/core/vec3.hpp"

namespace grove {

template <std::floating_point T>
struct SymMat3 {
  T xx{}, yy{}, zz{}, xy{}, xz{}, yz{};

  constexpr SymMat3& operator+=(const SymMat3& o) {
    xx += o.xx; yy += o.yy; zz += o.zz; xy += o.xy; xz += o.xz; yz += o.yz;
    return *this;
  }
  constexpr SymMat3& operator*=(T s) {
    xx *= s; yy *= s; zz *= s; xy *= s; xz *= s; yz *= s;
    return *this;
  }
  friend constexpr SymMat3 operator+(SymMat3 a, const SymMat3& b) { return a += b; }
  friend constexpr SymMat3 operator*(T s, SymMat3 a) { return a *= s; }
  friend constexpr bool operator==(const SymMat3&, const SymMat3&) = default;
  constexpr T trace() const { return xx + yy + zz; }
  // The matrix times a vector.
  constexpr Vec3<T> operator*(const Vec3<T>& v) const {
    return {xx * v.x + xy * v.y + xz * v.z, xy * v.x + yy * v.y + yz * v.z, xz * v.x + yz * v.y + zz * v.z};
  }
};

using SymMat3d = SymMat3<double>;
using SymMat3f = SymMat3<float>;

// w * (a b^T + b a^T) / 2: the symmetric part of an outer product.
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
