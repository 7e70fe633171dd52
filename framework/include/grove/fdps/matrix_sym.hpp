#pragma once
// FDPS 7.1's MatrixSym3 (PS::F64mat): the symmetric 3x3 matrix with FDPS's members, convertible to
// grove::SymMat3, and its element-wise reduction. Part of grove/fdps.hpp.
#include <cstddef>
#include <ostream>

#include "grove/comm/reduction.hpp"
#include "grove/core/sym_mat3.hpp"
#include "grove/fdps/vectors.hpp"

namespace grove::fdps {

// ---- MatrixSym3: FDPS's symmetric 3x3 matrix -----------------------------------------------------------
// FDPS's members (getTrace, a scalar constructor, - and /) over the six components. It converts
// from any type with the same six members and to grove::SymMat3 (the tree's quadrupoles), so
// either can be assigned to the other; arithmetic mixing the two needs one of them converted.
template <class M, class T>
concept SymmetricMatrixLike = requires(const M& m) {
  { m.xx } -> std::convertible_to<T>;
  { m.yy } -> std::convertible_to<T>;
  { m.zz } -> std::convertible_to<T>;
  { m.xy } -> std::convertible_to<T>;
  { m.xz } -> std::convertible_to<T>;
  { m.yz } -> std::convertible_to<T>;
};

template <std::floating_point T>
struct MatrixSym3 {
  T xx{}, yy{}, zz{}, xy{}, xz{}, yz{};

  constexpr MatrixSym3() = default;
  constexpr MatrixSym3(T xx_, T yy_, T zz_, T xy_, T xz_, T yz_)
      : xx(xx_), yy(yy_), zz(zz_), xy(xy_), xz(xz_), yz(yz_) {}
  // Implicit, as in FDPS: `F64mat quad = 0.0;`.
  constexpr MatrixSym3(T s) : xx(s), yy(s), zz(s), xy(s), xz(s), yz(s) {}
  template <class M>
    requires(!std::same_as<M, MatrixSym3> && SymmetricMatrixLike<M, T>)
  constexpr MatrixSym3(const M& m)
      : xx(static_cast<T>(m.xx)), yy(static_cast<T>(m.yy)), zz(static_cast<T>(m.zz)), xy(static_cast<T>(m.xy)),
        xz(static_cast<T>(m.xz)), yz(static_cast<T>(m.yz)) {}

  constexpr operator SymMat3<T>() const { return {xx, yy, zz, xy, xz, yz}; }

  constexpr MatrixSym3& operator+=(const MatrixSym3& o) {
    xx += o.xx; yy += o.yy; zz += o.zz; xy += o.xy; xz += o.xz; yz += o.yz;
    return *this;
  }
  constexpr MatrixSym3& operator-=(const MatrixSym3& o) {
    xx -= o.xx; yy -= o.yy; zz -= o.zz; xy -= o.xy; xz -= o.xz; yz -= o.yz;
    return *this;
  }
  constexpr MatrixSym3& operator*=(T s) {
    xx *= s; yy *= s; zz *= s; xy *= s; xz *= s; yz *= s;
    return *this;
  }
  constexpr MatrixSym3& operator/=(T s) { return *this *= T(1) / s; }
  friend constexpr MatrixSym3 operator+(MatrixSym3 a, const MatrixSym3& b) { return a += b; }
  friend constexpr MatrixSym3 operator-(MatrixSym3 a, const MatrixSym3& b) { return a -= b; }
  friend constexpr MatrixSym3 operator-(MatrixSym3 a) { return a *= T(-1); }
  friend constexpr MatrixSym3 operator*(MatrixSym3 a, T s) { return a *= s; }
  friend constexpr MatrixSym3 operator*(T s, MatrixSym3 a) { return a *= s; }
  friend constexpr MatrixSym3 operator/(MatrixSym3 a, T s) { return a /= s; }
  friend constexpr bool operator==(const MatrixSym3&, const MatrixSym3&) = default;
  // The matrix times a vector.
  constexpr Vec3<T> operator*(const Vec3<T>& v) const {
    return {xx * v.x + xy * v.y + xz * v.z, xy * v.x + yy * v.y + yz * v.z, xz * v.x + yz * v.y + zz * v.z};
  }
  constexpr T getTrace() const { return xx + yy + zz; }

  friend std::ostream& operator<<(std::ostream& os, const MatrixSym3& m) {
    os << m.xx << "   " << m.xy << "    " << m.xz << '\n';
    os << m.xy << "   " << m.yy << "    " << m.yz << '\n';
    return os << m.xz << "   " << m.yz << "    " << m.zz << '\n';
  }
};

using F32mat = MatrixSym3<F32>;
using F64mat = MatrixSym3<F64>;
using F32mat3 = F32mat;
using F64mat3 = F64mat;
using FSPmat = MatrixSym3<FSP>;

}  // namespace grove::fdps

// Symmetric matrices reduce element by element (PS::Comm::getSum of a quadrupole).
template <class T>
struct grove::ReductionLayout<grove::fdps::MatrixSym3<T>> {
  using Scalar = T;
  static constexpr std::size_t count = 6;
};
