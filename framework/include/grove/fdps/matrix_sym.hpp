#pragma once
/// @file
/// FDPS 7.1's MatrixSym3 (PS::F64mat): the symmetric 3x3 matrix with FDPS's members, convertible to
/// grove::SymMat3, and its element-wise reduction. Part of grove/fdps.hpp.
#include <cstddef>
#include <ostream>

#include "grove/comm/reduction.hpp"
#include "grove/core/sym_mat3.hpp"
#include "grove/fdps/vectors.hpp"

namespace grove::fdps {

// ---- MatrixSym3: FDPS's symmetric 3x3 matrix -----------------------------------------------------------
/// A type with the six public components xx, yy, zz, xy, xz, yz of a symmetric matrix, each
/// convertible to T (grove::SymMat3, another MatrixSym3, a user's matrix).
template <class M, class T>
concept SymmetricMatrixLike = requires(const M& m) {
  { m.xx } -> std::convertible_to<T>;
  { m.yy } -> std::convertible_to<T>;
  { m.zz } -> std::convertible_to<T>;
  { m.xy } -> std::convertible_to<T>;
  { m.xz } -> std::convertible_to<T>;
  { m.yz } -> std::convertible_to<T>;
};

/// FDPS's symmetric 3x3 matrix: FDPS's members (getTrace, a scalar constructor, - and /) over
/// the six components. It converts from any type with the same six members and to
/// grove::SymMat3 (the tree's quadrupoles), so either can be assigned to the other; arithmetic
/// mixing the two needs one of them converted.
template <std::floating_point T>
struct MatrixSym3 {
  /// The xx component; the six independent components are zero unless set (xy = yx, xz = zx,
  /// yz = zy).
  T xx{}, yy{}, zz{}, xy{}, xz{}, yz{};
  /// @var MatrixSym3::yy
  /// The yy component.
  /// @var MatrixSym3::zz
  /// The zz component.
  /// @var MatrixSym3::xy
  /// The xy (= yx) component.
  /// @var MatrixSym3::xz
  /// The xz (= zx) component.
  /// @var MatrixSym3::yz
  /// The yz (= zy) component.

  /// The zero matrix.
  constexpr MatrixSym3() = default;
  /// The matrix of the six given components.
  constexpr MatrixSym3(T xx_, T yy_, T zz_, T xy_, T xz_, T yz_)
      : xx(xx_), yy(yy_), zz(zz_), xy(xy_), xz(xz_), yz(yz_) {}
  /// Every component (diagonal and off-diagonal) set to s. Implicit, as in FDPS:
  /// `F64mat quad = 0.0;`.
  constexpr MatrixSym3(T s) : xx(s), yy(s), zz(s), xy(s), xz(s), yz(s) {}
  /// Implicit from any SymmetricMatrixLike type (grove::SymMat3, the other precision): each
  /// component is converted to T.
  template <class M>
    requires(!std::same_as<M, MatrixSym3> && SymmetricMatrixLike<M, T>)
  constexpr MatrixSym3(const M& m)
      : xx(static_cast<T>(m.xx)), yy(static_cast<T>(m.yy)), zz(static_cast<T>(m.zz)), xy(static_cast<T>(m.xy)),
        xz(static_cast<T>(m.xz)), yz(static_cast<T>(m.yz)) {}

  /// Implicit to grove::SymMat3 of the same precision.
  constexpr operator SymMat3<T>() const { return {xx, yy, zz, xy, xz, yz}; }

  /// Adds o component by component.
  constexpr MatrixSym3& operator+=(const MatrixSym3& o) {
    xx += o.xx; yy += o.yy; zz += o.zz; xy += o.xy; xz += o.xz; yz += o.yz;
    return *this;
  }
  /// Subtracts o component by component.
  constexpr MatrixSym3& operator-=(const MatrixSym3& o) {
    xx -= o.xx; yy -= o.yy; zz -= o.zz; xy -= o.xy; xz -= o.xz; yz -= o.yz;
    return *this;
  }
  /// Multiplies every component by s.
  constexpr MatrixSym3& operator*=(T s) {
    xx *= s; yy *= s; zz *= s; xy *= s; xz *= s; yz *= s;
    return *this;
  }
  /// Multiplies every component by 1 / s (s = 0 gives infinities or NaNs, unchecked).
  constexpr MatrixSym3& operator/=(T s) { return *this *= T(1) / s; }
  /// Component-wise sum.
  friend constexpr MatrixSym3 operator+(MatrixSym3 a, const MatrixSym3& b) { return a += b; }
  /// Component-wise difference.
  friend constexpr MatrixSym3 operator-(MatrixSym3 a, const MatrixSym3& b) { return a -= b; }
  /// The negated matrix.
  friend constexpr MatrixSym3 operator-(MatrixSym3 a) { return a *= T(-1); }
  /// Every component times s.
  friend constexpr MatrixSym3 operator*(MatrixSym3 a, T s) { return a *= s; }
  /// Every component times s.
  friend constexpr MatrixSym3 operator*(T s, MatrixSym3 a) { return a *= s; }
  /// Every component times 1 / s.
  friend constexpr MatrixSym3 operator/(MatrixSym3 a, T s) { return a /= s; }
  /// Exact equality of all six components.
  friend constexpr bool operator==(const MatrixSym3&, const MatrixSym3&) = default;
  /// The matrix times a vector.
  constexpr Vec3<T> operator*(const Vec3<T>& v) const {
    return {xx * v.x + xy * v.y + xz * v.z, xy * v.x + yy * v.y + yz * v.z, xz * v.x + yz * v.y + zz * v.z};
  }
  /// xx + yy + zz.
  constexpr T getTrace() const { return xx + yy + zz; }

  /// Writes the full 3x3 matrix, one row a line (three lines, each ending in a newline).
  friend std::ostream& operator<<(std::ostream& os, const MatrixSym3& m) {
    os << m.xx << "   " << m.xy << "    " << m.xz << '\n';
    os << m.xy << "   " << m.yy << "    " << m.yz << '\n';
    return os << m.xz << "   " << m.yz << "    " << m.zz << '\n';
  }
};

using F32mat = MatrixSym3<F32>;  ///< FDPS's single-precision symmetric matrix.
using F64mat = MatrixSym3<F64>;  ///< FDPS's double-precision symmetric matrix.
using F32mat3 = F32mat;  ///< FDPS's 3-D spelling of F32mat.
using F64mat3 = F64mat;  ///< FDPS's 3-D spelling of F64mat.
using FSPmat = MatrixSym3<FSP>;  ///< Symmetric matrix of superparticle moment precision (FSP).

}  // namespace grove::fdps

/// Symmetric matrices reduce element by element (PS::Comm::getSum of a quadrupole).
template <class T>
struct grove::ReductionLayout<grove::fdps::MatrixSym3<T>> {
  using Scalar = T;                        ///< The component type.
  static constexpr std::size_t count = 6;  ///< Six components.
};
